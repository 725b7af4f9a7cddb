// CUDA instantiation of random_geometry_tests.hpp.
#include "random_geometry_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(random_geometry, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(checker_self_test, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
