// Host instantiation of translation_units_tests.hpp (linked with translation_units_second.cpp).
#include "translation_units_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(translation_units, std::tuple<track_gen::host_policy>);
}  // namespace tg_test
