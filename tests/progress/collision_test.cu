// Collision of boxes with the road band and with discs on the CUDA backend, in kernels (test
// bodies: collision_cases.hpp).
#include "collision_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::collision_stadium, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::collision_footprint, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::collision_discs, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::collision_invalid, std::tuple<track_gen::cuda_policy>);
