// The second host translation unit of core_translation_units_test (translation_units_tests.hpp).
#include "translation_units_tests.hpp"

namespace tg_test {
unit_digest second_unit_digest(track_gen::host_policy) { return build_digest<track_gen::host_policy>(unit_seed); }
}  // namespace tg_test
