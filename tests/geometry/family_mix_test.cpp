// stages::random_family on the host backend (test bodies: family_mix_tests.hpp).
#include "family_mix_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(family_single, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(family_mix, std::tuple<track_gen::host_policy>);
}  // namespace tg_test
