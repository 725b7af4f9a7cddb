// Sharding on the CUDA backend (test body: sharding_tests.hpp).
#include "sharding_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(sharded_courses, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
