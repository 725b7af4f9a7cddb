// Props along the road edges on the host backend (test bodies: props_cases.hpp).
#include "props_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::border_props, std::tuple<track_gen::host_policy>);
