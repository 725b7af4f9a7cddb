// stages::random_family on the CUDA backend (test bodies: family_mix_tests.hpp).
#include "family_mix_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(family_single, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(family_mix, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
