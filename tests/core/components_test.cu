// CUDA instantiation of components_tests.hpp.
#include "components_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(standalone_parts, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(generator_target_shape, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(generator_with_reset_hook, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
