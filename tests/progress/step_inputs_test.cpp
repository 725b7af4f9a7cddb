// What the step reads instead of scattered track arrays, on the host backend (test bodies: step_inputs_cases.hpp).
#include "step_inputs_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::recomputed_frames, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::projection_from_arrays, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::centreline_from_arrays, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::held_gate, std::tuple<track_gen::host_policy>);
