#pragma once
/// @file
/// stages::polygon_separation_listed's candidate lists (Verlet lists) change no result, and
/// stages::polygon_separation, which tests every segment, gives the same. Reference: the scheme
/// as documented, written here without lists and without the bounding-box skip: every
/// iteration tests every segment outside the neighbour band of every point, and adds each
/// point's pushes chunk by chunk in segment order (the one per-pair formula,
/// detail::separation_push, is shared: what is under test is which segments each pass visits).
/// - Whole tracks: hull, bezier and voronoi courses at their defaults, the polar family with a
///   clearance that keeps it relaxing, and hull with two Chaikin passes (more control points
///   than a CUDA block has threads), each
///   built with either stage and with the reference stage in its place: every
///   env's samples and status equal, bit for bit, on the backend under test.
/// Templated over the backend policy; instantiated in polygon_separation_lists_test.cpp (host, with a
/// case of the stage alone) and polygon_separation_lists_test.cu (CUDA).

#include "backend_support.hpp"

#include <track_gen/detail/stages/families/bezier.hpp>
#include <track_gen/detail/stages/families/hull.hpp>
#include <track_gen/detail/stages/families/voronoi.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/stages.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace tg_test {

/// The relaxation as documented, without lists or skips: iteration by iteration, each point's
/// push over every segment outside its band, in chunk order, until the largest overlap is
/// below the tolerance. On request (host runs) it also follows the list schedule that
/// stages::polygon_separation_listed documents (build in the first iteration, rebuild whenever twice the
/// summed largest moves exceed the skin; a point overflows when more than the capacity of its
/// segments lie within the reach plus the skin at a rebuild), to count what the listed stage's
/// paths see (the rebuilds after the first, the iterations in which an overflowed point scans
/// every segment between rebuilds) and to keep each point's candidate count at the last
/// rebuild, which the stage's lists must hold when it ends.
struct reference_repulsive {
  static constexpr track_gen::detail::stage_role role = track_gen::detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 2;

  /// What the schedule saw (filled when `follow_lists`).
  struct record {
    bool follow_lists = false;
    bool built = false;       ///< the relaxation ran its first iteration (lists were built)
    int later_rebuilds = 0;   ///< rebuilds after the first iteration's build
    int overflow_scans = 0;   ///< (point, iteration) pairs on the overflow path between rebuilds
  };

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, track_gen::detail::workspace& ws, const track_gen::track_params& p) {
    record r;
    relax(ctx, ws, p, r, nullptr);
  }

  /// `candidates`: one count per control point, at the last rebuild (host runs that follow
  /// the lists), else null.
  template <class Ctx>
  TRACK_GEN_HD static void relax(Ctx& ctx, track_gen::detail::workspace& ws, const track_gen::track_params& p,
                                 record& r, int* candidates) {
    using namespace track_gen::detail;
    const int m = ws.num_control;
    const int chunks = separation_chunks(m);
    const float clearance = p.polygon_separation.clearance;
    const float skin = separation_skin * clearance;
    float moved = 0.0f;
    auto outside_band = [&](int i, int j) {
      const int ahead = (j - i + m) % m;  // segment j is `ahead` segments after point i
      return ahead >= ws.relax_neighbours && ahead < m - ws.relax_neighbours;
    };
    for (int iteration = 0; iteration < p.polygon_separation.max_iterations; ++iteration) {
      if (r.follow_lists) {
        const bool rebuild = iteration == 0 || !(2.0f * moved <= skin);
        if (rebuild) {
          moved = 0.0f;
          r.built = true;
          r.later_rebuilds += iteration > 0 ? 1 : 0;
          for (int i = 0; i < m; ++i) {
            int count = 0;
            const float reach = separation_reach(clearance, ws.control[i]) + skin;
            for (int j = 0; j < m; ++j)
              count += outside_band(i, j) &&
                            within_segment_box(ws.control[i], ws.control[j], ws.control[(j + 1) % m], reach);
            candidates[i] = count;
          }
        } else {
          for (int i = 0; i < m; ++i) r.overflow_scans += candidates[i] > separation_list_capacity ? 1 : 0;
        }
      }
      float overlap = 0.0f;
      float largest_move = 0.0f;
      for (int i = ctx.rank(); i < m; i += ctx.size()) {
        const float3 pi_ = ws.control[i];
        float3 push = f3(0.0f, 0.0f, 0.0f);
        for (int chunk = 0; chunk < chunks; ++chunk) {
          float3 part = f3(0.0f, 0.0f, 0.0f);
          for (int j = chunk * m / chunks; j < (chunk + 1) * m / chunks; ++j)
            if (outside_band(i, j)) separation_push(part, overlap, pi_, ws.control[j], ws.control[(j + 1) % m], clearance);
          push = push + part;
        }
        const float3 mid = (ws.control[(i + m - 1) % m] + ws.control[(i + 1) % m]) * 0.5f;
        ws.control_next[i] = pi_ + push + (mid - pi_) * p.polygon_separation.smoothing;
        largest_move = max_f(largest_move, length(ws.control_next[i] - pi_));
      }
      if (ctx.reduce_max(overlap) < p.polygon_separation.tolerance) break;
      moved += ctx.reduce_max(largest_move) * 1.001f + 1e-6f;
      for (int i = ctx.rank(); i < m; i += ctx.size()) ws.control[i] = ws.control_next[i];
      ctx.sync();
    }
  }
};

/// `Family`'s pipeline with `Relax` as its relaxation stage.
template <class Family, class Relax>
using relax_pipeline = track_gen::pipeline<Family, Relax, track_gen::stages::catmull_rom, track_gen::stages::resample,
                                           track_gen::stages::frames, track_gen::stages::checkpoints,
                                           track_gen::stages::validate>;

/// Envs whose status or samples differ between two snapshots of the same batch (the first
/// three reported).
inline int differing_envs(const track_gen::track_snapshot& a, const track_gen::track_snapshot& b, const char* what) {
  REQUIRE(a.num_envs == b.num_envs);
  REQUIRE(a.position.size() == b.position.size());
  int differing = 0;
  for (int e = 0; e < a.num_envs; ++e) {
    const std::size_t u = static_cast<std::size_t>(e), n = static_cast<std::size_t>(a.num_samples);
    const bool same = a.status[u] == b.status[u] &&
                      std::memcmp(&a.position[u * n], &b.position[u * n], n * sizeof(float3)) == 0;
    if (!same && differing++ < 3) FAIL_CHECK(std::string(what) << ": env " << e << " differs");
  }
  return differing;
}

/// Builds `p`'s tracks with stages::polygon_separation_listed, stages::polygon_separation and the reference; every
/// env's samples and status must be equal, bit for bit. Returns how many envs got a track of the
/// generator (valid, not the fallback ellipse): the envs whose comparison says something.
template <class Family, class Policy>
int same_tracks(const track_gen::track_params& p) {
  namespace tg = track_gen;
  typename backend<Policy>::stream_holder stream;
  tg::course<relax_pipeline<Family, tg::stages::polygon_separation_listed>, Policy> listed(p, 1.0f, stream.get());
  tg::course<relax_pipeline<Family, tg::stages::polygon_separation>, Policy> every(p, 1.0f, stream.get());
  tg::course<relax_pipeline<Family, reference_repulsive>, Policy> plain(p, 1.0f, stream.get());
  const tg::track_snapshot r = plain.copy_tracks(stream.get());
  CHECK(differing_envs(listed.copy_tracks(stream.get()), r, "polygon_separation_listed") == 0);
  CHECK(differing_envs(every.copy_tracks(stream.get()), r, "repulsive") == 0);
  int generated = 0;
  for (std::uint32_t st : r.status)
    generated += (st & tg::status::valid) != 0u && (st & tg::status::fallback) == 0u ? 1 : 0;
  return generated;
}

TEST_CASE_TEMPLATE_DEFINE("repulsive: the candidate lists give the tracks of testing every segment", Policy,
                          polygon_separation_lists_tracks) {
  namespace tg = track_gen;
  const int envs = scaled(256, 16, 16);
  auto params = [&](tg::generator_family f, std::uint64_t seed) {
    tg::track_params p = tg::presets::track(envs);
    p.generator.family = f;
    p.seed = seed;
    return p;
  };
  // Most envs must get a track of the generator: the fallback ellipse would compare equal
  // whatever the relaxation did.
  SUBCASE("hull") { CHECK(same_tracks<tg::stages::hull_corners, Policy>(params(tg::generator_family::hull, 5)) > envs * 9 / 10); }
  SUBCASE("bezier") {
    CHECK(same_tracks<tg::stages::bezier_corners, Policy>(params(tg::generator_family::bezier, 6)) > envs * 9 / 10);
  }
  SUBCASE("voronoi") {
    CHECK(same_tracks<tg::stages::voronoi_sites, Policy>(params(tg::generator_family::voronoi, 7)) > envs * 9 / 10);
  }
  SUBCASE("polar, kept relaxing by a wide clearance") {
    tg::track_params p = params(tg::generator_family::polar, 8);
    p.polygon_separation.clearance = 4.0f;
    CHECK(same_tracks<tg::stages::random_polar, Policy>(p) > envs / 2);
  }
  SUBCASE("hull, more control points than a block has threads") {
    // Two Chaikin passes: 80-112 points, so that some CUDA threads own two of them (and their
    // lists); the clearance lowered as hull_params::chaikin_passes advises.
    tg::track_params p = params(tg::generator_family::hull, 9);
    p.num_envs = scaled(64, 8, 8);
    p.hull.chaikin_passes = 2;
    p.polygon_separation.clearance = 0.75f;
    CHECK(same_tracks<tg::stages::hull_corners, Policy>(p) > p.num_envs / 2);
  }
}

}  // namespace tg_test
