// CUDA instantiation of track_fields_tests.hpp.
#include "track_fields_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(circle_fields, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
