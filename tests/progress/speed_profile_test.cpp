// speed_profile on the host backend (test bodies: speed_profile_cases.hpp).
#include "speed_profile_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::speed_profile_cases, std::tuple<track_gen::host_policy>);
