// CUDA instantiation of families_bezier_hull_tests.hpp, and the CUDA backend against the host
// reference for both families (backend_comparison.hpp): the same status per env, positions
// and gates within 1e-4 L, with the documented float-rounding exceptions counted (the stages
// use atan2, sqrt, sin and cos, and nvcc contracts multiply-adds, so the bits may differ:
// cuda_vs_host_test.cu says why). Two episodes each.
#include "backend_comparison.hpp"
#include "families_bezier_hull_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(bezier_family_sweep, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(hull_family_sweep, std::tuple<track_gen::cuda_policy>);

template <class Family>
void compare_backends(const char* family, std::uint64_t seed) {
  namespace tg = track_gen;
  backend<tg::cuda_policy>::stream_holder stream;
  tg::track_params p = family_params<Family>(scaled(4096, 16));
  p.seed = seed;
  const float spacing = 0.6f;
  tg::course<family_pipeline<Family>, tg::host_policy> h(p, spacing);
  tg::course<family_pipeline<Family>, tg::cuda_policy> c(p, spacing, stream.get());
  REQUIRE(h.max_gates() == c.max_gates());
  for (int episode = 0; episode < 2; ++episode) {
    CAPTURE(episode);
    const comparison r = compare(h.copy_tracks({}), c.copy_tracks(stream.get()), p, spacing, h.max_gates(), true);
    report(family, r);
    CHECK(r.failures == 0);
    CHECK(r.same_status >= r.envs * 99 / 100);  // differences stay exceptions
    h.regenerate(nullptr, true, {});
    c.regenerate(nullptr, true, stream.get());
  }
}

TEST_CASE("CUDA and host backends build the same bezier tracks") {
  compare_backends<track_gen::stages::bezier_corners>("bezier", 17);
}

TEST_CASE("CUDA and host backends build the same hull tracks") {
  compare_backends<track_gen::stages::hull_corners>("hull", 18);
}
}  // namespace tg_test
