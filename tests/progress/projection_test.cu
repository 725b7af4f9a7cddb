// Projection, lateral offset and off-track on the CUDA backend (test bodies: projection_cases.hpp).
#include "projection_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::projection_lateral_and_off_track, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::projection_window_vs_full, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::projection_jump_in_step, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::projection_reset_step_ties, std::tuple<track_gen::cuda_policy>);
