// CUDA instantiation of polygon_separation_lists_tests.hpp: stages::polygon_separation_listed, stages::polygon_separation and
// the reference stage run in the generation kernel (64-thread blocks), the same tracks bit for bit.
#include "polygon_separation_lists_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(polygon_separation_lists_tracks, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test
