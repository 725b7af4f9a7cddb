// CUDA instantiation of elevation_tests.hpp, and the elevated pipeline on CUDA against host.
#include "elevation_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(elevation_sweep, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(elevation_flat, std::tuple<track_gen::cuda_policy>);

TEST_CASE("CUDA and host backends build the same elevated tracks") { elevation_cuda_vs_host(); }
}  // namespace tg_test
