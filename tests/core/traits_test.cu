// CUDA instantiation of traits_tests.hpp.
#include "traits_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(move_only_course, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
