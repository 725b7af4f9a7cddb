// Host instantiation of polygon_separation_lists_tests.hpp, and the stage alone: on hull and polar control
// polygons (host context), stages::polygon_separation_listed and the reference give the same polygon bit
// for bit, over cases whose list schedule (followed by the reference) rebuilt lists after the
// first build and used overflowed lists between rebuilds; the group boxes of its full scans
// against the segment boxes they stand for; and the plain stage's segment spheres against the
// pushes they must not skip.
#include "polygon_separation_lists_tests.hpp"

#include <track_gen/detail/host/block_context.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(polygon_separation_lists_tracks, std::tuple<track_gen::host_policy>);

/// A block context of 64 threads, for the compile-time choice below (only its size is read).
struct wide_block_context {
  static constexpr int size() { return 64; }
};
// Hull and voronoi relax with the lists on one-thread blocks only (the CUDA backend's relaxations
// test every segment: docs/performance-log.md, entries 52 and 53).
static_assert(std::is_same_v<track_gen::presets::hull_pipeline,
                             track_gen::pipeline<track_gen::stages::hull_corners,
                                                 track_gen::stages::polygon_separation_listed_on_host,
                                                 track_gen::stages::catmull_rom_chords, track_gen::stages::resample,
                                                 track_gen::stages::frames, track_gen::stages::checkpoints,
                                                 track_gen::stages::validate>>,
              "hull_pipeline relaxes with the lists on one-thread blocks only");
static_assert(std::is_same_v<track_gen::presets::voronoi_pipeline,
                             track_gen::pipeline<track_gen::stages::voronoi_sites,
                                                 track_gen::stages::polygon_separation_listed_on_host,
                                                 track_gen::stages::catmull_rom_chords, track_gen::stages::resample,
                                                 track_gen::stages::frames, track_gen::stages::checkpoints,
                                                 track_gen::stages::validate>>,
              "voronoi_pipeline relaxes with the lists on one-thread blocks only");
static_assert(track_gen::stages::polygon_separation_listed::uses_lists<wide_block_context> &&
                  track_gen::stages::polygon_separation_listed::uses_lists<const track_gen::detail::host_block_context>,
              "the listed stage uses its lists in every block");
static_assert(!track_gen::stages::polygon_separation_listed_on_host::uses_lists<wide_block_context> &&
                  track_gen::stages::polygon_separation_listed_on_host::uses_lists<const track_gen::detail::host_block_context>,
              "the host-listed stage uses its lists on one-thread blocks only");
static_assert(!track_gen::stages::polygon_separation::uses_lists<const track_gen::detail::host_block_context>,
              "the plain stage never uses lists");

/// One control polygon of `Family` relaxed by stages::polygon_separation_listed and by the reference
/// (host context), with what the reference's list schedule saw.
struct relaxed_pair {
  std::vector<float3> listed, plain;
  reference_repulsive::record record;
  int stale_lists = 0;  ///< points whose list, at the stage's end, is not the one the schedule built last
};

template <class Family>
relaxed_pair relax_both(const track_gen::track_params& p, std::uint32_t env) {
  namespace tg = track_gen;
  const int capacity = Family::max_control_points(p);
  const auto layout = tg::detail::scratch_layout::make(static_cast<std::size_t>(capacity),
                                                      static_cast<std::size_t>(capacity) * 32u,
                                                      static_cast<std::size_t>(p.num_samples));
  relaxed_pair out;
  out.record.follow_lists = true;
  std::vector<int> candidates(static_cast<std::size_t>(capacity), 0);
  std::vector<std::uint16_t> counts;  // the stage's lists' counts at its end
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
    ws.num_control = 0;
    const tg::detail::host_block_context ctx;
    Family::run(ctx, ws, p);
    if (pass == 0) {
      tg::stages::polygon_separation_listed::run(ctx, ws, p);
      out.listed.assign(ws.control, ws.control + ws.num_control);
      for (int i = 0; i < ws.num_control; ++i) counts.push_back(ws.separation_lists()[i].count);
    } else {
      reference_repulsive::relax(ctx, ws, p, out.record, candidates.data());
      out.plain.assign(ws.control, ws.control + ws.num_control);
      // A stage that rebuilt at other iterations (more often, say) would end with other lists.
      for (int i = 0; out.record.built && i < ws.num_control; ++i) {
        const int c = candidates[static_cast<std::size_t>(i)];
        const int want = c > tg::detail::separation_list_capacity ? tg::detail::separation_list_overflow : c;
        out.stale_lists += counts[static_cast<std::size_t>(i)] != want ? 1 : 0;
      }
    }
  }
  return out;
}

/// One parameter set of the stage-alone case.
struct stage_case {
  const char* name;
  bool polar;           ///< random_polar's polygon, else hull_corners'
  int chaikin_passes;   ///< hull
  float clearance;
};

TEST_CASE("repulsive: the stage alone against the reference, past list rebuilds and overflows") {
  namespace tg = track_gen;
  // The hull defaults (one Chaikin pass: about 40 points), a wider clearance, three passes
  // (about 100 points a few tenths of a metre apart: lists rebuilt nearly every iteration), and
  // polar polygons of 40 points spread over 6 m of height with a 4 m clearance: lists that
  // overflow and stay in use between rebuilds (the path where a point scans every segment).
  const stage_case cases[] = {{"hull", false, 1, 1.5f},
                              {"hull, clearance 3 m", false, 1, 3.0f},
                              {"hull, three Chaikin passes", false, 3, 1.5f},
                              {"polar, 40 points, clearance 4 m", true, 0, 4.0f}};
  int polygons = 0, later_rebuilds = 0, overflow_scans = 0;
  for (const stage_case& c : cases) {
    tg::track_params p = tg::presets::track(1);
    p.seed = 21;
    p.polygon_separation.clearance = c.clearance;
    if (c.polar) {
      p.polar.control_points = 40;
      p.polar.elevation_max = 6.0f;
    } else {
      p.generator.family = tg::generator_family::hull;
      p.hull.chaikin_passes = c.chaikin_passes;
    }
    for (std::uint32_t env = 0; env < static_cast<std::uint32_t>(scaled(200, 10, 4)); ++env) {
      const std::string name = c.name;
      CAPTURE(name);
      CAPTURE(env);
      const relaxed_pair r = c.polar ? relax_both<tg::stages::random_polar>(p, env)
                                     : relax_both<tg::stages::hull_corners>(p, env);
      REQUIRE(r.listed.size() == r.plain.size());
      REQUIRE(!r.listed.empty());
      CHECK(std::memcmp(r.listed.data(), r.plain.data(), r.listed.size() * sizeof(float3)) == 0);
      CHECK(r.stale_lists == 0);
      ++polygons;
      later_rebuilds += r.record.later_rebuilds;
      overflow_scans += r.record.overflow_scans;
    }
  }
  MESSAGE(polygons << " polygons: " << later_rebuilds << " rebuilds after the first, " << overflow_scans
                   << " point-iterations on the overflow path");
  // The listed stage's every path ran: lists used and rebuilt, and overflowed lists in use.
  CHECK(later_rebuilds > polygons);
  CHECK(overflow_scans > polygons);
}

TEST_CASE("repulsive: the stage alone against the reference with a NaN or infinite control point") {
  // A NaN move must rebuild the lists (the block maxima would drop it for a later finite move),
  // and a NaN or infinite point must leave the listed stage's polygon the reference's, bit for
  // bit (NaN payloads included: both compute the same operations on the same values).
  namespace tg = track_gen;
  const float specials[] = {std::nanf(""), INFINITY, -INFINITY};
  int polygons = 0;
  for (std::uint32_t env = 0; env < static_cast<std::uint32_t>(scaled(300, 10, 6)); ++env) {
    tg::track_params p = tg::presets::track(1);
    p.seed = 5;
    p.generator.family = tg::generator_family::hull;
    p.polygon_separation.max_iterations = 12 + static_cast<int>(env % 20);
    const float special = specials[env % 3];
    const int axis = static_cast<int>(env / 3 % 3);
    // One control point corrupted after the family stage, before the relaxation.
    const auto relax = [&](auto stage_tag) {
      using stage = decltype(stage_tag);
      const int capacity = tg::stages::hull_corners::max_control_points(p);
      const auto layout = tg::detail::scratch_layout::make(static_cast<std::size_t>(capacity),
                                                          static_cast<std::size_t>(capacity) * 32u,
                                                          static_cast<std::size_t>(p.num_samples));
      std::vector<unsigned char> memory(layout.bytes + 16, 0);
      tg::detail::workspace ws{};
      ws.bind_scratch(memory.data(), layout);
      ws.seed = p.seed;
      ws.global_env = env;
      ws.source = tg::detail::track_source::random;
      ws.num_samples = p.num_samples;
      ws.relax_neighbours = 2;
      const tg::detail::host_block_context ctx;
      tg::stages::hull_corners::run(ctx, ws, p);
      float3& q = ws.control[ws.num_control / 2];
      (axis == 0 ? q.x : axis == 1 ? q.y : q.z) = special;
      stage::run(ctx, ws, p);
      return std::vector<float3>(ws.control, ws.control + ws.num_control);
    };
    const std::vector<float3> listed = relax(tg::stages::polygon_separation_listed{});
    const std::vector<float3> plain = relax(tg::stages::polygon_separation{});
    CAPTURE(env);
    REQUIRE(listed.size() == plain.size());
    CHECK(std::memcmp(listed.data(), plain.data(), listed.size() * sizeof(float3)) == 0);
    ++polygons;
  }
  CHECK(polygons > 0);
}

TEST_CASE("repulsive: a group's box is within reach of every point that one of its segment boxes is") {
  // The listed stage's full scans skip a group of segments when the point is out of reach of the
  // group's box: that must never skip a segment whose own box test (within_segment_box) passes,
  // or a list would miss it. Random polygons with the reach at the edges of the boxes, points
  // on the boxes' faces, and NaN and infinite coordinates.
  namespace tg = track_gen;
  using tg::detail::separation_group;
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto uniform = [&state](float lo, float hi) {  // splitmix64 (Steele, Lea & Flood, OOPSLA 2014)
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return lo + (hi - lo) * static_cast<float>(z >> 40) / 16777216.0f;
  };
  const float specials[] = {std::nanf(""), INFINITY, -INFINITY};
  long long tested = 0, passed_segment = 0;
  int skipped_groups = 0;
  for (int polygon = 0; polygon < scaled(400, 40, 10); ++polygon) {
    const int m = 3 + polygon % 61;
    std::vector<float3> points(static_cast<std::size_t>(m));
    for (float3& q : points) q = float3{uniform(-8.0f, 8.0f), uniform(-8.0f, 8.0f), uniform(-1.0f, 1.0f)};
    if (polygon % 5 == 4) {  // one coordinate NaN or infinite
      float3& q = points[static_cast<std::size_t>(polygon % m)];
      (polygon % 3 == 0 ? q.x : polygon % 3 == 1 ? q.y : q.z) = specials[(polygon / 5) % 3];
    }
    std::vector<tg::detail::separation_box> boxes(static_cast<std::size_t>(tg::detail::separation_groups(m)));
    for (int g = 0; g < static_cast<int>(boxes.size()); ++g) boxes[static_cast<std::size_t>(g)] = tg::detail::segment_group_box(points.data(), m, g);
    for (int k = 0; k < 64; ++k) {
      const float reach = k % 4 == 0 ? 0.0f : uniform(0.0f, 3.0f);
      const int j0 = static_cast<int>(uniform(0.0f, static_cast<float>(m) - 0.5f));
      const float3 a = points[static_cast<std::size_t>(j0)], b = points[static_cast<std::size_t>(j0 + 1 < m ? j0 + 1 : 0)];
      // Points on the segment box's faces pushed out by exactly the reach, and points anywhere.
      float3 p = k % 2 == 0 ? float3{std::fmin(a.x, b.x) - reach, std::fmax(a.y, b.y) + reach, std::fmin(a.z, b.z) - reach}
                            : float3{uniform(-10.0f, 10.0f), uniform(-10.0f, 10.0f), uniform(-2.0f, 2.0f)};
      if (k == 63) p.x = specials[polygon % 3];
      for (int j = 0; j < m; ++j) {
        const float3 sa = points[static_cast<std::size_t>(j)], sb = points[static_cast<std::size_t>(j + 1 < m ? j + 1 : 0)];
        const bool segment = tg::detail::within_segment_box(p, sa, sb, reach);
        const bool group = tg::detail::within_group_box(p, boxes[static_cast<std::size_t>(j / separation_group)], reach);
        ++tested;
        passed_segment += segment ? 1 : 0;
        skipped_groups += group ? 0 : 1;
        if (segment && !group) {
          CAPTURE(polygon);
          CAPTURE(j);
          CAPTURE(reach);
          FAIL_CHECK("a segment within reach of the point lies in a group whose box is not");
        }
      }
    }
  }
  MESSAGE(tested << " segment tests, " << passed_segment << " within reach, " << skipped_groups << " out of their group's reach");
  // Both answers occurred, so the implication was tested, and the boxes skip something.
  CHECK(passed_segment > 0);
  CHECK(skipped_groups > 0);
}

TEST_CASE("repulsive: a segment's sphere passes every point that the segment pushes") {
  // stages::polygon_separation skips a segment whose sphere (detail::segment_sphere) is beyond
  // separation_reach of the point: that must never skip a segment that separation_push would push
  // the point away from (computed distance below the clearance), or the plain stage would differ
  // from the reference. Points placed just inside the clearance of a segment (beside it and
  // beyond its ends), segments from 0 to 10 km long, coordinates up to 1e6 m, clearances from
  // 0 to 1e3 m, and points anywhere.
  namespace tg = track_gen;
  std::uint64_t state = 0x2545f4914f6cdd1dull;
  auto uniform = [&state](float lo, float hi) {  // splitmix64, as above
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return lo + (hi - lo) * static_cast<float>(z >> 40) / 16777216.0f;
  };
  const float offsets[] = {0.0f, 30.0f, 1e3f, 1e5f, 1e6f};
  const float lengths[] = {0.0f, 1e-3f, 1.0f, 5.0f, 100.0f, 1e4f};
  const float clearances[] = {0.0f, 1e-6f, 0.05f, 1.5f, 10.0f, 1e3f};
  long long pushing = 0, rejected = 0;
  for (int k = 0; k < scaled(200000, 20000, 4000); ++k) {
    const float offset = offsets[k % 5];
    const float half = lengths[(k / 5) % 6] * 0.5f;
    const float clearance = clearances[(k / 30) % 6];
    const float3 c{offset * uniform(-1.0f, 1.0f), offset * uniform(-1.0f, 1.0f), offset * uniform(-0.1f, 0.1f)};
    const float angle = uniform(0.0f, 6.2831853f);
    const float3 u{std::cos(angle), std::sin(angle), uniform(-0.2f, 0.2f)};
    float3 a{c.x - half * u.x, c.y - half * u.y, c.z - half * u.z};
    float3 b{c.x + half * u.x, c.y + half * u.y, c.z + half * u.z};
    float3 p;
    // The placement drawn, not taken from k, so that every (offset, length, clearance) meets each.
    const int placement = static_cast<int>(uniform(0.0f, 8.0f));
    const int direction = static_cast<int>(uniform(0.0f, 3.0f));
    if (k % 7 == 6) {
      // A long segment from near the origin, its midpoint far from it, and a point just beyond its
      // end there, where the sphere is tightest: the point's small coordinates give
      // separation_reach almost no margin, the sphere's raise must.
      const float before = uniform(0.0f, 1e-3f), after = uniform(1e3f, 1e4f);
      a = float3{-before * u.x, -before * u.y, 0.0f};
      b = float3{after * u.x, after * u.y, 0.0f};
      const float out = clearance * (1.0f - uniform(0.0f, 1e-6f));
      p = float3{a.x - u.x * out, a.y - u.y * out, 0.0f};
    } else if (placement % 4 == 3) {  // anywhere around the segment
      const float r = 2.0f * (half + clearance) + 1.0f;
      p = float3{c.x + uniform(-r, r), c.y + uniform(-r, r), c.z + uniform(-r, r) * 0.1f};
    } else {
      // A point of the segment (or an end), then out from it by a fraction of the clearance up to
      // just below it: sideways, or along the segment beyond an end.
      const float t = placement % 4 == 0 ? uniform(0.0f, 1.0f) : (placement % 4 == 1 ? 0.0f : 1.0f);
      const float3 q{a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z)};
      const float out = clearance * (placement < 4 ? 1.0f - uniform(0.0f, 1e-6f) : uniform(0.0f, 1.0f));
      const float side = uniform(0.0f, 6.2831853f);
      float3 dir = placement % 4 == 0 ? float3{-u.y, u.x, 0.0f} : float3{t == 0.0f ? -u.x : u.x, t == 0.0f ? -u.y : u.y, 0.0f};
      if (direction == 0) dir = float3{std::cos(side), std::sin(side), 0.0f};
      p = float3{q.x + out * dir.x, q.y + out * dir.y, q.z + out * dir.z};
    }
    float3 push{0.0f, 0.0f, 0.0f};
    float overlap = 0.0f;
    tg::detail::separation_push(push, overlap, p, a, b, clearance);
    const bool pass = tg::detail::within_segment_sphere(p, tg::detail::segment_sphere(a, b),
                                                        tg::detail::separation_reach(clearance, p));
    pushing += overlap > 0.0f ? 1 : 0;
    rejected += pass ? 0 : 1;
    if (overlap > 0.0f && !pass) {
      CAPTURE(k);
      CAPTURE(offset);
      CAPTURE(half);
      CAPTURE(clearance);
      FAIL_CHECK("a segment that pushes the point lies beyond its sphere's reach");
    }
  }
  // NaN: no push, and the sphere test is false for a NaN point or segment.
  const float3 a{0.0f, 0.0f, 0.0f}, b{1.0f, 0.0f, 0.0f};
  CHECK_FALSE(tg::detail::within_segment_sphere(float3{std::nanf(""), 0.0f, 0.0f}, tg::detail::segment_sphere(a, b), 1.0f));
  CHECK_FALSE(tg::detail::within_segment_sphere(float3{0.5f, 0.1f, 0.0f}, tg::detail::segment_sphere(a, float3{std::nanf(""), 0.0f, 0.0f}), 1.0f));
  MESSAGE(pushing << " pushing pairs, " << rejected << " pairs outside their sphere's reach");
  // Both answers occurred, so the implication was tested and the spheres skip something.
  CHECK(pushing > 1000);
  CHECK(rejected > 100);
}

TEST_CASE("repulsive: the plain stage's loop bounds visit exactly the segments outside the band, in order") {
  // for_segments_outside_band against separation_near, exhaustively: every polygon size up to 70,
  // every band width (0 to past half the polygon), every point, every chunk of every chunk count.
  namespace tg = track_gen;
  long long visited = 0;
  for (int m = 1; m <= 70; ++m)
    for (int near = 0; near <= m / 2 + 2; ++near)
      for (int i = 0; i < m; ++i)
        for (int chunks = 1; chunks <= 8; ++chunks)
          for (int chunk = 0; chunk < chunks; ++chunk) {
            const int j_begin = chunk * m / chunks, j_end = (chunk + 1) * m / chunks;
            std::vector<int> want, got;
            for (int j = j_begin; j < j_end; ++j)
              if (!tg::detail::separation_near(i, j, m, near)) want.push_back(j);
            tg::detail::for_segments_outside_band(i, near, m, j_begin, j_end, [&](int j) { got.push_back(j); });
            visited += static_cast<long long>(got.size());
            if (got != want) {
              CAPTURE(m);
              CAPTURE(near);
              CAPTURE(i);
              CAPTURE(chunk);
              CAPTURE(chunks);
              FAIL_CHECK("the loop bounds visit other segments than separation_near leaves");
            }
          }
  CHECK(visited > 0);
}

}  // namespace tg_test
