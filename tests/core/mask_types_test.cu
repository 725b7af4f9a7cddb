// CUDA instantiation of mask_types_tests.hpp.
#include "mask_types_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(mask_types, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(recording_choices, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
