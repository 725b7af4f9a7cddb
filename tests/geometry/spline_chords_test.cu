// CUDA instantiation of spline_chords_tests.hpp: the chords-only spline's tracks equal the
// stored samples' bit for bit on the CUDA backend too (the chord of sample k is evaluated by
// sample k's thread with the operations of sample k + 1's).
#include "spline_chords_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(spline_chords_tracks, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
