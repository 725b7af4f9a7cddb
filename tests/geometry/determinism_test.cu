// CUDA instantiation of determinism_tests.hpp.
#include "determinism_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(determinism_batch, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(determinism_masked, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(determinism_shapes, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
