// Host instantiation of repulsive_lists_tests.hpp, and the stage alone: on the hull family's
// control polygons (host context), stages::repulsive_listed and the reference give the same polygon bit
// for bit, over cases that ran past a rebuild of the lists (the points moved more than half the
// skin in all) and cases with points whose candidates overflowed a list.
#include "repulsive_lists_tests.hpp"

#include <track_gen/detail/host/block_context.hpp>

#include <utility>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(repulsive_lists_tracks, std::tuple<track_gen::host_policy>);

/// One hull control polygon relaxed by stages::repulsive_listed and by the reference (host context).
struct relaxed_pair {
  std::vector<float3> lists, plain;
  reference_repulsive::record record;
  int overflowed = 0;  ///< points whose last list overflowed
};

inline relaxed_pair relax_both(const track_gen::track_params& p, std::uint32_t env) {
  namespace tg = track_gen;
  using family = tg::stages::hull_corners;
  const int capacity = family::max_control_points(p);
  const auto layout = tg::detail::scratch_layout::make(static_cast<std::size_t>(capacity),
                                                      static_cast<std::size_t>(family::max_dense_samples(p)),
                                                      static_cast<std::size_t>(p.num_samples));
  relaxed_pair out;
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<unsigned char> memory(layout.bytes + 16, 0);
    tg::detail::workspace ws{};
    ws.bind_scratch(memory.data(), layout);
    ws.seed = p.seed;
    ws.global_env = env;
    ws.episode = 0;
    ws.attempt = 0;
    ws.source = tg::detail::track_source::random;
    ws.num_samples = p.num_samples;
    ws.relax_neighbours = 2;
    const tg::detail::host_block_context ctx;
    family::run(ctx, ws, p);
    if (pass == 0) {
      tg::stages::repulsive_listed::run(ctx, ws, p);
      out.lists.assign(ws.control, ws.control + ws.num_control);
      for (int i = 0; i < ws.num_control; ++i)
        out.overflowed += ws.repulsive_lists()[i].count == tg::detail::repulsive_list_overflow ? 1 : 0;
    } else {
      reference_repulsive::relax(ctx, ws, p, out.record);
      out.plain.assign(ws.control, ws.control + ws.num_control);
    }
  }
  return out;
}

TEST_CASE("repulsive: the stage alone against the reference, past list rebuilds and overflows") {
  namespace tg = track_gen;
  int past_rebuild = 0, with_overflow = 0, polygons = 0;
  // The hull defaults (one Chaikin pass: about 40 points), a wider clearance, and three passes
  // (about 100 points a few tenths of a metre apart: more candidates than a list holds).
  const std::pair<int, float> cases[] = {{1, 1.5f}, {1, 3.0f}, {3, 1.5f}, {3, 3.0f}};
  for (const auto& [passes, clearance] : cases) {
    tg::track_params p = tg::presets::track(1);
    p.generator.family = tg::generator_family::hull;
    p.seed = 21;
    p.hull.chaikin_passes = passes;
    p.repulsive.clearance = clearance;
    const double half_skin = 0.5 * tg::detail::repulsive_skin * clearance;
    for (std::uint32_t env = 0; env < static_cast<std::uint32_t>(scaled(200, 10, 4)); ++env) {
      CAPTURE(passes);
      CAPTURE(clearance);
      CAPTURE(env);
      const relaxed_pair r = relax_both(p, env);
      REQUIRE(r.lists.size() == r.plain.size());
      CHECK(std::memcmp(r.lists.data(), r.plain.data(), r.lists.size() * sizeof(float3)) == 0);
      ++polygons;
      past_rebuild += r.record.moves >= 2 && r.record.moved > 2.0 * half_skin ? 1 : 0;
      with_overflow += r.overflowed > 0 ? 1 : 0;
    }
  }
  CHECK(polygons > 0);
  // The fast paths are not all this test sees: lists were rebuilt, and some overflowed.
  CHECK(past_rebuild > polygons / 4);
  CHECK(with_overflow > 0);
}

}  // namespace tg_test
