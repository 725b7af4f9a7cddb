// Over/under crossings of a lifted figure-eight on the host backend (test bodies: over_under_cases.hpp).
#include "over_under_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::over_under_localize_at_crossing, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::over_under_flown, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::over_under_clearance, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::over_under_gate_course, std::tuple<track_gen::host_policy>);
