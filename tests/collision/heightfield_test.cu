// The heightfield on the CUDA backend, baked by one block per env and sampled in kernels (test bodies: heightfield_cases.hpp).
#include "heightfield_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(heightfield_test::heightfield_texels, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(heightfield_test::heightfield_sampling, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(heightfield_test::heightfield_batch_sample, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(heightfield_test::heightfield_subset, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(heightfield_test::heightfield_course, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(heightfield_test::heightfield_invalid, std::tuple<track_gen::cuda_policy>);
