// The SDF collision backend on the CUDA backend, baked by one block per env and sampled in kernels (test bodies: sdf_cases.hpp).
#include "sdf_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(sdf_test::sdf_texels, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(sdf_test::sdf_boxes, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(sdf_test::sdf_subset, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(sdf_test::sdf_course, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(sdf_test::sdf_invalid, std::tuple<track_gen::cuda_policy>);
