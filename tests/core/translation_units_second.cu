// The second CUDA translation unit of core_translation_units_test_cuda (translation_units_tests.hpp).
#include "translation_units_tests.hpp"

namespace tg_test {
unit_digest second_unit_digest(track_gen::cuda_policy) { return build_digest<track_gen::cuda_policy>(unit_seed); }
}  // namespace tg_test
