// Host instantiation of impossible_params_tests.hpp.
#include "impossible_params_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(impossible_params_all, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(impossible_params_half, std::tuple<track_gen::host_policy>);
}  // namespace tg_test
