// Progress tracking fused into a user kernel on the CUDA backend (test bodies: fused_view_cases.hpp).
#include "fused_view_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::fused_view_step, std::tuple<track_gen::cuda_policy>);
