#pragma once
/// @file
/// What the step reads in place of scattered track arrays must be the same numbers:
/// - the frames that track_ref::projection_at recomputes from the samples (detail::frame_between)
///   equal the tangent and normal arrays that stages::frames stored, bit for bit, and a
///   projection equals one interpolated from those arrays; the arc lengths that centreline_at
///   and localize compute (track_ref::sample_arc_length) equal the stored arc_length field;
/// - the gate the progress state holds (held_gate and its centre and normal) is, after every
///   step, the track's next gate, also after a regenerate replaced the track under the same
///   next gate index.
/// Test bodies templated over the policy; applied in step_inputs_test.cpp and step_inputs_test.cu.

#include "progress_harness.hpp"

#include <cstring>
#include <sstream>

namespace progress_test {

/// Sample k of env e.
struct sample_query {
  int env, k;
};

/// What the step and the queries compute in place of sample k's stored fields.
struct recomputed_sample {
  tg::detail::sample_frame frame;  ///< detail::frame_between of its neighbours
  float arc_length;                ///< track_ref::sample_arc_length
};

/// recomputed_sample of sample k, run where user kernels run it.
struct recomputed_frame_fn {
  TRACK_GEN_HD recomputed_sample operator()(const tg::course_ref& v, const sample_query& q) const {
    const tg::track_ref t = v.track(q.env);
    const int n = t.num_samples();
    return {tg::detail::frame_between(t.position(q.k == 0 ? n - 1 : q.k - 1), t.position(q.k + 1 == n ? 0 : q.k + 1)),
            t.sample_arc_length(q.k)};
  }
};

/// The frame interpolated at fraction `t` of segment k from the stored tangent and normal arrays
/// (what projection_at and centreline_at computed before they recomputed the samples' frames).
TRACK_GEN_HD inline tg::detail::sample_frame stored_frame_at(const tg::track_ref& tr, int k, float t) {
  using namespace tg::detail;
  const int k1 = k + 1 == tr.num_samples() ? 0 : k + 1;
  return {normalize_or(lerp(tr.tangent(k), tr.tangent(k1), t), tr.tangent(k)),
          normalize_or(lerp(tr.normal(k), tr.normal(k1), t), tr.normal(k))};
}

/// A projection by track_ref::project, and its tangent and lateral offset interpolated from the
/// stored tangent and normal arrays at the segment and fraction it found.
struct projection_pair {
  tg::projection projected;
  float3 stored_tangent;
  float stored_lateral;
};
struct project_with_arrays_fn {
  TRACK_GEN_HD projection_pair operator()(const tg::course_ref& v, const localize_query& q) const {
    const tg::track_ref t = v.track(q.env);
    const tg::projection pr = t.project(q.p, q.hint, q.window);
    const tg::detail::sample_frame f = stored_frame_at(t, pr.segment, pr.t);
    using namespace tg::detail;
    return {pr, f.tangent, dot(q.p - pr.point, f.left)};
  }
};

inline bool same_bits(float3 a, float3 b) { return same_bits(a.x, b.x) && same_bits(a.y, b.y) && same_bits(a.z, b.z); }

/// Requires `same(i)` for every i in [0, count): reports the first five that fail with
/// `describe(i)` (a string), and how many failed.
template <class Same, class Describe>
void check_each(std::size_t count, const Same& same, const Describe& describe) {
  int mismatches = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (!same(i) && ++mismatches <= 5) CHECK_MESSAGE(false, describe(i));
  CHECK(mismatches == 0);
}

/// Every sample of every env of the rig: recomputed frame == stored frame, computed arc length ==
/// stored arc_length.
template <class Policy, class Pipeline>
void check_recomputed_frames(rig<Policy, Pipeline>& r, const char* what, bool elevated) {
  const tg::track_snapshot t = r.tracks();
  std::vector<sample_query> queries;
  for (int e = 0; e < t.num_envs; ++e)
    for (int k = 0; k < t.num_samples; ++k) queries.push_back({e, k});
  const std::vector<recomputed_sample> computed = map_on_backend(r, recomputed_frame_fn{}, queries);
  const auto stored = [&](std::size_t i) { return t.sample_index(queries[i].env, queries[i].k); };
  INFO(std::string(what));
  check_each(
      queries.size(),
      [&](std::size_t i) {
        return same_bits(computed[i].frame.tangent, t.tangent[stored(i)]) &&
               same_bits(computed[i].frame.left, t.normal[stored(i)]) &&
               same_bits(computed[i].arc_length, t.arc_length[stored(i)]);
      },
      [&](std::size_t i) {
        std::ostringstream m;
        m << "env " << queries[i].env << " sample " << queries[i].k;
        return m.str();
      });
  double tilt = 0.0;  // the largest |tangent.z|: the elevated tracks exercise z, the flat ones not
  for (std::size_t i = 0; i < queries.size(); ++i) tilt = std::max(tilt, std::fabs(static_cast<double>(t.tangent[stored(i)].z)));
  CHECK((tilt > 0.05) == elevated);
  MESSAGE(std::string(what) << ": " << queries.size() << " samples, largest |tangent.z| " << tilt);
}

TEST_CASE_TEMPLATE_DEFINE("the frames projection_at recomputes are the stored ones, bit for bit", Policy,
                          recomputed_frames) {
  const int envs = scaled(96, 24);
  SUBCASE("generated flat tracks") {
    rig<Policy> r(tg::presets::track(envs), 1.0f);
    check_recomputed_frames(r, "track preset", false);
  }
  SUBCASE("generated flat tracks, N = 300 (L / N not exact: k L / N must be k times L / N)") {
    tg::track_params p = tg::presets::track(envs);
    p.num_samples = 300;
    rig<Policy> r(p, 1.0f);
    check_recomputed_frames(r, "track preset, N = 300", false);
  }
  SUBCASE("generated elevated tracks") {
    // Control points at elevations in [0.5, 2.5] m: tangents with a z component.
    rig<Policy, tg::presets::elevated_track_pipeline> r(tg::presets::drone_track(envs), 1.0f);
    check_recomputed_frames(r, "drone_track preset, elevated pipeline", true);
  }
  SUBCASE("user tracks") {
    rig<Policy> r(user_track_params(4), 5.0f, centreline({circle{40.0}.polyline(900), circle{25.0}.polyline(700),
                                                          circle{40.0}.polyline(900), circle{30.0}.polyline(800)}));
    check_recomputed_frames(r, "user circles", false);
  }
}

TEST_CASE_TEMPLATE_DEFINE("a projection equals one interpolated from the stored tangent and normal arrays", Policy,
                          projection_from_arrays) {
  const int envs = scaled(64, 16);
  rig<Policy> r(tg::presets::track(envs), 1.0f);
  const tg::track_snapshot t = r.tracks();
  lcg rng{12345};
  std::vector<localize_query> queries;
  for (int e = 0; e < envs; ++e) {
    for (int i = 0; i < 40; ++i) {
      const int k = static_cast<int>(rng.next() * t.num_samples) % t.num_samples;
      const float3 c = t.position[t.sample_index(e, k)], left = t.normal[t.sample_index(e, k)];
      // Up to 1.5 half-widths either side (off the road too), a stale hint or none (O(N) search).
      const float off = static_cast<float>((rng.next() * 2.0 - 1.0) * 1.5 * t.half_widths[t.sample_index(e, k)].x);
      const int hint = i % 3 == 0 ? 0 : k + (i % 5) - 2;
      queries.push_back({e, v3(c.x + off * left.x, c.y + off * left.y, c.z + 0.01 * (i % 4)), hint, i % 3 == 0 ? 0 : 8});
    }
  }
  const std::vector<projection_pair> out = map_on_backend(r, project_with_arrays_fn{}, queries);
  check_each(
      out.size(),
      [&](std::size_t i) {
        return same_bits(out[i].projected.tangent, out[i].stored_tangent) &&
               same_bits(out[i].projected.lateral, out[i].stored_lateral);
      },
      [&](std::size_t i) {
        std::ostringstream m;
        m << "query " << i << " env " << queries[i].env << " segment " << out[i].projected.segment << " lateral "
          << out[i].projected.lateral << " vs " << out[i].stored_lateral;
        return m.str();
      });
}

/// centreline_at, and its tangent and normal interpolated from the stored arrays at the segment
/// and fraction it found.
struct centreline_pair {
  tg::centreline_point point;
  float3 stored_tangent, stored_normal;
};
struct arc_query {
  int env;
  float s;
};
struct centreline_with_arrays_fn {
  TRACK_GEN_HD centreline_pair operator()(const tg::course_ref& v, const arc_query& q) const {
    const tg::centreline_point c = tg::centreline_at(v.track(q.env), q.s);
    const tg::detail::sample_frame f = stored_frame_at(v.track(q.env), c.segment, c.t);
    return {c, f.tangent, f.left};
  }
};

TEST_CASE_TEMPLATE_DEFINE("centreline_at's frame equals one interpolated from the stored arrays", Policy,
                          centreline_from_arrays) {
  const int envs = scaled(64, 16);
  rig<Policy, tg::presets::elevated_track_pipeline> r(tg::presets::drone_track(envs), 1.0f);
  const tg::track_snapshot t = r.tracks();
  lcg rng{777};
  std::vector<arc_query> queries;
  for (int e = 0; e < envs; ++e) {
    const float length = t.length[static_cast<std::size_t>(e)];
    for (int i = 0; i < 40; ++i) queries.push_back({e, static_cast<float>((rng.next() * 1.2 - 0.1) * length)});
    queries.push_back({e, 0.0f});
    queries.push_back({e, std::nextafter(length, 0.0f)});  // on the closing segment
  }
  const std::vector<centreline_pair> out = map_on_backend(r, centreline_with_arrays_fn{}, queries);
  check_each(
      out.size(),
      [&](std::size_t i) {
        return same_bits(out[i].point.tangent, out[i].stored_tangent) && same_bits(out[i].point.normal, out[i].stored_normal);
      },
      [&](std::size_t i) {
        std::ostringstream m;
        m << "query " << i << " env " << queries[i].env << " s " << queries[i].s << " segment " << out[i].point.segment;
        return m.str();
      });
}

/// Agents of a rig driven along their centrelines: env e's agent at sample `start[e] + v[e] i` at
/// step i (v = 1 or 2 samples a step; gates every few samples are passed every few steps).
template <class Policy>
struct driven_rig {
  rig<Policy> r;
  std::vector<int> start, speed;
  explicit driven_rig(const tg::track_params& params, float spacing)
      : r(params, spacing), start(static_cast<std::size_t>(params.num_envs), 0),
        speed(static_cast<std::size_t>(params.num_envs)) {
    for (int e = 0; e < params.num_envs; ++e) speed[static_cast<std::size_t>(e)] = 1 + e % 2;
  }
  void step(int i) {
    const tg::track_snapshot t = r.tracks();
    for (int e = 0; e < t.num_envs; ++e) {
      const auto u = static_cast<std::size_t>(e);
      const int k = (start[u] + speed[u] * i) % t.num_samples;
      r.positions[u] = t.position[t.sample_index(e, k)];
    }
    r.step();
  }
};

/// After a step, every env with a last position and a usable gate state holds its next gate: the
/// index, and the centre and normal of its track's gate there, bit for bit. Returns how many
/// envs were checked.
inline int check_held_gates(const tg::track_snapshot& t, const tg::progress_snapshot& p, int step) {
  int checked = 0;
  for (int e = 0; e < t.num_envs; ++e) {
    const auto u = static_cast<std::size_t>(e);
    if (!has(p.flags[u], tg::progress_flags::has_last) || has(p.flags[u], tg::progress_flags::invalid_state)) continue;
    const int g = p.next_gate[u];
    INFO("step " << step << " env " << e << " next gate " << g << " held " << p.held_gate[u]);
    REQUIRE(p.held_gate[u] == g);
    CHECK(same_bits(p.held_gate_centre[u], t.gate_centre[t.gate_index(e, g)]));
    CHECK(same_bits(p.held_gate_normal[u], t.gate_normal[t.gate_index(e, g)]));
    ++checked;
  }
  return checked;
}

TEST_CASE_TEMPLATE_DEFINE("the held gate is the track's next gate after every step, regenerated tracks included",
                          Policy, held_gate) {
  const int envs = scaled(64, 16);
  driven_rig<Policy> d(tg::presets::track(envs), 1.0f);
  int passes = 0, checked = 0;
  const auto run = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      d.step(i);
      const tg::progress_snapshot p = d.r.progress();
      for (int e = 0; e < envs; ++e) passes += has(p.flags[static_cast<std::size_t>(e)], tg::progress_flags::gate_passed);
      if (i > from) checked += check_held_gates(d.r.tracks(), p, i);
    }
  };
  run(0, 4);  // gates about 7 samples apart: each agent is still before gate 1
  // Regenerate every other env while its agent holds gate 1, the index a reset makes next: a
  // copy kept across the new track would pass for the new gate 1.
  const tg::progress_snapshot before = d.r.progress();
  std::vector<std::int32_t> mask(static_cast<std::size_t>(envs), 0);
  int stale_candidates = 0;
  for (int e = 0; e < envs; e += 2) {
    mask[static_cast<std::size_t>(e)] = 1;
    stale_candidates += before.held_gate[static_cast<std::size_t>(e)] == 1;
  }
  d.r.regenerate(mask, true);
  const tg::progress_snapshot reset = d.r.progress();
  for (int e = 0; e < envs; e += 2) CHECK(reset.held_gate[static_cast<std::size_t>(e)] == -1);
  for (int e = 0; e < envs; ++e) d.start[static_cast<std::size_t>(e)] = mask[static_cast<std::size_t>(e)] != 0 ? -4 * d.speed[static_cast<std::size_t>(e)] : 0;
  run(4, 40);
  INFO("gate passes " << passes << ", envs checked " << checked << ", regenerated envs holding gate 1 " << stale_candidates);
  CHECK(passes > envs);           // the copies were refreshed many times
  CHECK(stale_candidates > 0);    // the case a forgotten copy would get wrong was there
}

}  // namespace progress_test
