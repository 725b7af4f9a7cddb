// User tracks far from the origin on the CUDA backend (test bodies: far_from_origin_cases.hpp).
#include "far_from_origin_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::far_from_origin, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::far_threshold, std::tuple<track_gen::cuda_policy>);
