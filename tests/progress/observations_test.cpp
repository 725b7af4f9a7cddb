// track_ahead, progress_delta and distance_to_gate on the host backend (test bodies: observations_cases.hpp).
#include "observations_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::observations_track_ahead_known, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::observations_track_ahead_generated, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::observations_progress_delta, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::observations_distance_to_gate, std::tuple<track_gen::host_policy>);
