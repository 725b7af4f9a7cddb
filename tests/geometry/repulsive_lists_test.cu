// CUDA instantiation of repulsive_lists_tests.hpp: stages::repulsive_listed, stages::repulsive and
// the reference stage run in the generation kernel (64-thread blocks), the same tracks bit for bit.
#include "repulsive_lists_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(repulsive_lists_tracks, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
