#pragma once
/// @file
/// The batch queries (queries.hpp) against the per-env device functions they wrap, called
/// directly in a host loop over a host copy of the tracks (the reference: each scalar function
/// is tested against closed forms in its own test). On a course of generated tracks (256 envs;
/// 64 under TRACK_GEN_TEST_SCALE=small), with inputs drawn around each env's centreline: near
/// and stale hints, off-road positions, NaN positions, and bad boxes (NaN quaternion, zero and
/// negative extents, an infinite centre) in some envs, whose neighbours' results must still
/// equal the reference. On the host backend the results must be identical bit for bit; on CUDA
/// (fused multiply-adds) within float tolerances, a hint allowed to differ by one segment where
/// the foot sits on a shared vertex. Also: the spawn's progress against progress_tracker_ref::spawn
/// run on host copies of the arrays, and the host-side argument checks.
/// Templated over the backend policy; applied in queries_test.cpp (host) and .cu (CUDA).

#include "collision/grid_copy.hpp"
#include "progress_harness.hpp"

#include <track_gen/queries.hpp>
#include <track_gen/sdf.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace progress_test {

/// A host track_batch_ref over the arrays of a snapshot (the reference's input).
inline tg::track_batch_ref host_batch(tg::track_snapshot& s) {
  return tg::track_batch_ref(host_arrays(s), s.num_envs, s.num_samples, s.max_gates);
}

/// A host progress_arrays over the vectors of a progress snapshot.
inline tg::progress_arrays host_progress(tg::progress_snapshot& s) {
  tg::progress_arrays a;
#define TRACK_GEN_HOST_ARRAY(name, type, ext, doc) a.name = s.name.data();
  TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_HOST_ARRAY)
#undef TRACK_GEN_HOST_ARRAY
  return a;
}

/// Compares batch results with the reference: bit for bit on the host backend, within `tol`
/// (absolute) on CUDA; NaN matches NaN only.
struct comparer {
  bool exact;
  int failures = 0;
  void operator()(float got, float want, double tol, const char* what, int e) {
    const bool ok = exact ? same_bits(got, want)
                          : (std::isnan(got) ? std::isnan(want) : (!std::isnan(want) && std::fabs(double(got) - want) <= tol));
    if (!ok && ++failures <= 10) FAIL_CHECK(what << " of env " << e << ": batch " << got << ", reference " << want);
  }
  void operator()(float3 got, float3 want, double tol, const char* what, int e) {
    (*this)(got.x, want.x, tol, what, e);
    (*this)(got.y, want.y, tol, what, e);
    (*this)(got.z, want.z, tol, what, e);
  }
  void angle(float got, float want, double tol, const char* what, int e) {
    if (!exact && std::isfinite(got) && std::isfinite(want)) {  // +-pi are the same heading
      (*this)(static_cast<float>(wrap_angle(double(got) - want)), 0.0f, tol, what, e);
      return;
    }
    (*this)(got, want, tol, what, e);
  }
  void integer(long long got, long long want, const char* what, int e) {
    if (got != want && ++failures <= 10) FAIL_CHECK(what << " of env " << e << ": batch " << got << ", reference " << want);
  }
  /// A segment index: equal, or (CUDA) the neighbour sharing the foot's vertex.
  void segment(int got, int want, int n, const char* what, int e) {
    const int d = ((got - want) % n + n) % n;
    if (got == want || (!exact && (d == 1 || d == n - 1))) return;
    integer(got, want, what, e);
  }
};

/// The fixture: a course of generated tracks and the host copy of its tracks.
template <class Policy>
struct query_fixture {
  static constexpr bool on_host = std::is_same_v<typename Policy::backend_type, tg::backend::host>;
  using backend_type = typename Policy::backend_type;
  template <class T>
  using buffer = typename rig<Policy>::template buffer<T>;

  int num_envs;
  rig<Policy> r;
  tg::track_snapshot tracks;
  tg::track_batch_ref ref;  ///< host view of `tracks`

  static tg::track_params params(int num_envs) {
    tg::track_params p = tg::presets::track(num_envs);
    p.seed = 29;
    return p;
  }
  explicit query_fixture(int e) : num_envs(e), r(params(e), 0.6f), tracks(r.tracks()), ref(host_batch(tracks)) {}

  template <class T>
  buffer<T> upload(const std::vector<T>& h) {
    buffer<T> b(h.size());
    b.upload(h, r.stream());
    return b;
  }
  /// A point `left` metres left of env e's centreline polygon at arc length u, `up` above it.
  float3 near_track(int e, double u, double left, double up) const {
    const polygon_point q = polygon_at(tracks, e, u);
    return v3(q.x + left * q.nx, q.y + left * q.ny, q.z + left * q.nz + up);
  }
  double length(int e) const { return tracks.length[static_cast<std::size_t>(e)]; }
  double half_width(int e) const { return tracks.half_widths[tracks.sample_index(e, 0)].x; }
};

inline int query_envs() { return small_scale() ? 64 : 256; }

TEST_CASE_TEMPLATE_DEFINE("batch localize, track_ahead and progress_delta equal the per-env functions", Policy,
                          queries_localize_observe) {
  query_fixture<Policy> f(query_envs());
  const int E = f.num_envs, N = f.tracks.num_samples;
  const int window = 8;
  lcg rng{101u};
  std::vector<float3> pos(E);
  std::vector<int> hints(E);
  std::vector<float> yaw(E);
  for (int e = 0; e < E; ++e) {
    const double u = rng.next() * f.length(e);
    const double left = (rng.next() * 2.0 - 1.0) * 1.3 * f.half_width(e);  // some off the road
    pos[e] = f.near_track(e, u, left, (rng.next() - 0.5) * 0.1 * f.half_width(e));
    const int foot = static_cast<int>(u / f.length(e) * N);
    // Most hints near the foot; one env in 5 stale (half a lap away: lost); one in 7 a wild int.
    hints[e] = e % 5 == 2 ? foot + N / 2 : (e % 7 == 4 ? -123457 * (e + 1) : foot + (e % 3) - 1);
    yaw[e] = static_cast<float>((rng.next() * 2.0 - 1.0) * pi);
    if (e % 31 == 17) pos[e].y = NAN;  // a NaN position: its own outputs only
  }
  // The reference: the scalar functions in a host loop over the host copy.
  std::vector<tg::localization> want(E);
  for (int e = 0; e < E; ++e) {
    want[e] = tg::localize(f.ref.track(e), pos[e], hints[e], window);
    if (std::isnan(pos[e].y)) {  // the batch flags an invalid position: NaN, lost, hint unchanged
      want[e].s = want[e].n = want[e].vertical = want[e].curvature = want[e].heading = NAN;
      want[e].lost = true;
      want[e].hint = hints[e];
    }
  }

  auto positions = f.upload(pos);
  auto hint_buf = f.upload(hints);
  typename query_fixture<Policy>::template buffer<float> s(E), n(E), vertical(E), curvature(E), heading(E);
  typename query_fixture<Policy>::template buffer<std::uint8_t> lost(E);
  const tg::course_ref view = f.r.course().view();
  tg::localize_outputs out;
  out.s = s.data(), out.n = n.data(), out.vertical = vertical.data(), out.curvature = curvature.data();
  out.heading = heading.data(), out.lost = lost.data();
  tg::localize<typename Policy::backend_type>(view.batch(), positions.data(), hint_buf.data(), window, out,
                                              f.r.stream().get());
  const auto got_s = s.download(f.r.stream()), got_n = n.download(f.r.stream());
  const auto got_v = vertical.download(f.r.stream()), got_c = curvature.download(f.r.stream());
  const auto got_h = heading.download(f.r.stream());
  const auto got_lost = lost.download(f.r.stream());
  const auto got_hint = hint_buf.download(f.r.stream());
  comparer cmp{query_fixture<Policy>::on_host};
  int lost_count = 0;
  for (int e = 0; e < E; ++e) {
    const tg::localization& w = want[e];
    // s near L may wrap to ~0 on one side and not the other: compare around the loop.
    const float ds = static_cast<float>(arc_distance(got_s[e], w.s, f.length(e)));
    if (cmp.exact) {
      cmp(got_s[e], w.s, 0.0, "s", e);
    } else {
      cmp(std::isnan(got_s[e]) || std::isnan(w.s) ? got_s[e] : ds, std::isnan(got_s[e]) || std::isnan(w.s) ? w.s : 0.0f,
          2e-3, "s", e);
    }
    cmp(got_n[e], w.n, 1e-3, "n", e);
    cmp(got_v[e], w.vertical, 1e-3, "vertical", e);
    cmp(got_c[e], w.curvature, 1e-4, "curvature", e);
    cmp.angle(got_h[e], w.heading, 1e-4, "heading", e);
    cmp.integer(got_lost[e], w.lost ? 1 : 0, "lost", e);
    if (std::isnan(pos[e].y)) {
      cmp.integer(got_hint[e], w.hint, "hint of an invalid position (unchanged)", e);
    } else {
      cmp.segment(got_hint[e], w.hint, N, "hint", e);
    }
    lost_count += w.lost ? 1 : 0;
  }
  // The inputs exercise both searches.
  CHECK(lost_count > E / 10);
  CHECK(lost_count < E * 3 / 4);

  // track_ahead from the batch's s, both directions.
  for (const float spacing : {2.5f, -1.5f}) {
    const int K = 6;
    std::vector<float3> want_ahead(static_cast<std::size_t>(E) * K);
    for (int e = 0; e < E; ++e) tg::track_ahead(f.ref.track(e), got_s[e], pos[e], yaw[e], K, spacing, &want_ahead[e * K]);
    auto s_in = f.upload(got_s);
    auto yaw_in = f.upload(yaw);
    typename query_fixture<Policy>::template buffer<float3> ahead(static_cast<std::size_t>(E) * K);
    tg::track_ahead<typename Policy::backend_type>(view.batch(), s_in.data(), positions.data(), yaw_in.data(), K, spacing,
                                                   ahead.data(), f.r.stream().get());
    const auto got = ahead.download(f.r.stream());
    for (int e = 0; e < E; ++e)
      for (int i = 0; i < K; ++i) cmp(got[e * K + i], want_ahead[e * K + i], 2e-3, "track_ahead point", e);
  }

  // progress_delta: against the scalar function and the known step (closed form).
  std::vector<float> s_prev(E), s_now(E), step(E);
  for (int e = 0; e < E; ++e) {
    s_prev[e] = static_cast<float>(rng.next() * f.length(e));
    step[e] = static_cast<float>((rng.next() * 2.0 - 1.0) * 0.4 * f.length(e));  // within L/2
    if (e % 4 == 0) s_prev[e] = static_cast<float>(f.length(e) * (1.0 - 0.01 * rng.next()));  // across the start line
    s_now[e] = static_cast<float>(wrap_arc(double(s_prev[e]) + step[e], f.length(e)));
  }
  auto prev_in = f.upload(s_prev);
  auto now_in = f.upload(s_now);
  typename query_fixture<Policy>::template buffer<float> delta(E);
  tg::progress_delta<typename Policy::backend_type>(view.batch(), prev_in.data(), now_in.data(), delta.data(),
                                                    f.r.stream().get());
  const auto got_delta = delta.download(f.r.stream());
  for (int e = 0; e < E; ++e) {
    cmp(got_delta[e], tg::progress_delta(s_prev[e], s_now[e], f.tracks.length[static_cast<std::size_t>(e)]), 0.0,
        "progress_delta", e);
    CHECK(std::fabs(double(got_delta[e]) - step[e]) < 1e-3);
  }
  CHECK(cmp.failures == 0);
}

/// One box per env around its centreline (some off the road, quaternions of non-unit norm within
/// is_valid_box's range) with hints near and stale, and bad boxes in the envs e with e % 17 in
/// {3, 7, 11, 13, 15} (bad_box).
struct box_inputs {
  std::vector<float3> centres;
  std::vector<float4> quats;
  std::vector<float2> extents;
  std::vector<int> hints;
  static bool bad_box(int e) { return e % 17 == 3 || e % 17 == 7 || e % 17 == 11 || e % 17 == 13 || e % 17 == 15; }
  tg::box at(int e) const { return tg::box{centres[e], quats[e], extents[e]}; }
};

template <class Policy>
box_inputs random_boxes(const query_fixture<Policy>& f) {
  const int E = f.num_envs, N = f.tracks.num_samples;
  lcg rng{202u};
  box_inputs in;
  in.centres.resize(E), in.quats.resize(E), in.extents.resize(E), in.hints.resize(E);
  for (int e = 0; e < E; ++e) {
    const double u = rng.next() * f.length(e);
    const double hw = f.half_width(e);
    const double left = (rng.next() * 2.0 - 1.0) * 1.2 * hw;
    in.centres[e] = f.near_track(e, u, left, 0.1 * hw);
    const double yaw = (rng.next() * 2.0 - 1.0) * pi, pitch = (rng.next() - 0.5) * 0.2;
    const double scale = e % 6 == 1 ? 1.3 : 1.0;  // non-unit norms within is_valid_box's [0.5, 2]
    const float4 q = euler_quaternion(yaw, pitch, 0.05);
    in.quats[e] = q4(q.x * scale, q.y * scale, q.z * scale, q.w * scale);
    in.extents[e] = f2d(hw * (0.2 + 0.3 * rng.next()), hw * (0.1 + 0.15 * rng.next()));
    in.hints[e] = e % 9 == 5 ? N / 2 + static_cast<int>(u / f.length(e) * N) : static_cast<int>(u / f.length(e) * N);
    switch (e % 17) {  // bad boxes
      case 3: in.quats[e].y = NAN; break;
      case 7: in.extents[e].x = 0.0f; break;
      case 11: in.extents[e].y = -0.5f; break;
      case 13: in.centres[e].x = INFINITY; break;
      case 15: in.quats[e] = q4(0.0, 0.0, 0.0, 0.0); break;
      default: break;
    }
  }
  return in;
}

TEST_CASE_TEMPLATE_DEFINE("batch collide_boxes equals collide_box; bad boxes flag only their own env", Policy,
                          queries_collide) {
  query_fixture<Policy> f(query_envs());
  const int E = f.num_envs, N = f.tracks.num_samples;
  const int window = 8;
  const box_inputs in = random_boxes(f);
  const std::vector<float3>& centres = in.centres;
  const std::vector<float4>& quats = in.quats;
  const std::vector<float2>& extents = in.extents;
  const std::vector<int>& hints = in.hints;
  std::vector<tg::box_contact> want(E);
  for (int e = 0; e < E; ++e) want[e] = tg::collide_box(f.ref.track(e), tg::box{centres[e], quats[e], extents[e]}, hints[e], window);

  auto c_in = f.upload(centres);
  auto q_in = f.upload(quats);
  auto x_in = f.upload(extents);
  auto h_in = f.upload(hints);
  typename query_fixture<Policy>::template buffer<std::uint32_t> flags(E);
  typename query_fixture<Policy>::template buffer<float> clearance(E);
  typename query_fixture<Policy>::template buffer<float3> nearest(E), normal(E);
  typename query_fixture<Policy>::template buffer<int> side(E);
  tg::box_contact_outputs out;
  out.flags = flags.data(), out.clearance = clearance.data(), out.nearest = nearest.data(), out.normal = normal.data();
  out.side = side.data();
  tg::collide_boxes<typename Policy::backend_type>(f.r.course().view().batch(), c_in.data(), q_in.data(), x_in.data(),
                                                   h_in.data(), window, out, f.r.stream().get());
  const auto got_flags = flags.download(f.r.stream());
  const auto got_clear = clearance.download(f.r.stream());
  const auto got_near = nearest.download(f.r.stream()), got_normal = normal.download(f.r.stream());
  const auto got_side = side.download(f.r.stream());
  const auto got_hint = h_in.download(f.r.stream());
  comparer cmp{query_fixture<Policy>::on_host};
  int invalid = 0, out_of_bounds = 0;
  for (int e = 0; e < E; ++e) {
    const tg::box_contact& w = want[e];
    const bool bad = box_inputs::bad_box(e);
    // The reference agrees with the construction: exactly the bad boxes are invalid.
    CHECK_MESSAGE(has(w.flags, tg::contact_flags::invalid) == bad, "env " << e);
    cmp.integer(got_flags[e], w.flags, "flags", e);
    cmp(got_clear[e], w.clearance, 1e-3, "clearance", e);
    cmp(got_near[e], w.nearest, 2e-3, "nearest", e);
    cmp(got_normal[e], w.normal, 1e-3, "normal", e);
    cmp.integer(got_side[e], static_cast<int>(w.border), "side", e);
    if (bad) {
      cmp.integer(got_hint[e], hints[e], "hint of an invalid box (unchanged)", e);
    } else {
      cmp.segment(got_hint[e], w.hint, N, "hint", e);
    }
    invalid += bad ? 1 : 0;
    out_of_bounds += has(w.flags, tg::contact_flags::out_of_bounds) ? 1 : 0;
  }
  CHECK(invalid > 0);
  CHECK(out_of_bounds > E / 20);
  CHECK(out_of_bounds < E / 2);
  CHECK(cmp.failures == 0);
}

TEST_CASE_TEMPLATE_DEFINE("batch collide_boxes_sdf and collide_box_discs equal sdf_ref::collide_box and collide_discs",
                          Policy, queries_sdf_discs) {
  query_fixture<Policy> f(query_envs());
  const int E = f.num_envs, K = 5, R = 64;
  const float radius = 0.15f;
  const box_inputs in = random_boxes(f);
  tg::sdf_field<Policy> field(E, R, f.r.stream().get());
  field.bake(f.r.course().view().batch(), f.r.stream().get());
  // The reference reads a host copy of the baked grid (the bake itself: sdf_test).
  grid_test::grid_copy grid = grid_test::download_grid(field, f.r.stream());
  const tg::sdf_ref host_field(grid.texels.data(), grid.headers.data(), E, R);
  // K discs per env around its box: two near its centre (inside or touching), one at 1 m, one far
  // away, one NaN (border_cones' padding, skipped).
  lcg rng{303u};
  std::vector<float3> discs(static_cast<std::size_t>(E) * K);
  for (int e = 0; e < E; ++e) {
    const float3 c = std::isfinite(in.centres[e].x) ? in.centres[e] : v3(0.0, 0.0, 0.0);
    float3* d = discs.data() + static_cast<std::size_t>(e) * K;
    const double a = rng.next() * 2.0 * pi;
    d[0] = v3(c.x + 0.3 * std::cos(a), c.y + 0.3 * std::sin(a), c.z);
    d[1] = v3(c.x + 0.05 * rng.next(), c.y - 0.05 * rng.next(), c.z + 0.3);
    d[2] = v3(c.x + 1.0 * std::cos(a + 1.0), c.y + 1.0 * std::sin(a + 1.0), c.z);
    d[3] = v3(c.x + 50.0, c.y, c.z);
    d[4] = v3(NAN, NAN, NAN);
    if (e % 4 == 2) std::swap(d[0], d[4]);  // padding first: skipped wherever it is
  }
  std::vector<tg::box_contact> want_sdf(E);
  std::vector<tg::disc_hit> want_disc(E);
  for (int e = 0; e < E; ++e) {
    want_sdf[e] = host_field.collide_box(e, in.at(e));
    want_disc[e] = tg::collide_discs(in.at(e), discs.data() + static_cast<std::size_t>(e) * K, K, radius);
  }

  auto c_in = f.upload(in.centres);
  auto q_in = f.upload(in.quats);
  auto x_in = f.upload(in.extents);
  auto d_in = f.upload(discs);
  using fixture = query_fixture<Policy>;
  typename fixture::template buffer<std::uint32_t> flags(E), disc_flags(E);
  typename fixture::template buffer<float> clearance(E), depth(E);
  typename fixture::template buffer<float3> nearest(E), normal(E), point(E), disc_normal(E);
  typename fixture::template buffer<int> side(E), disc(E);
  tg::box_contact_outputs out;
  out.flags = flags.data(), out.clearance = clearance.data(), out.nearest = nearest.data(), out.normal = normal.data();
  out.side = side.data();
  tg::collide_boxes_sdf<typename Policy::backend_type>(field.view(), c_in.data(), q_in.data(), x_in.data(), out,
                                                       f.r.stream().get());
  tg::disc_hit_outputs hits;
  hits.flags = disc_flags.data(), hits.depth = depth.data(), hits.point = point.data(), hits.normal = disc_normal.data();
  hits.disc = disc.data();
  tg::collide_box_discs<typename Policy::backend_type>(E, c_in.data(), q_in.data(), x_in.data(), d_in.data(), K, radius,
                                                       hits, f.r.stream().get());
  const auto got_flags = flags.download(f.r.stream()), got_disc_flags = disc_flags.download(f.r.stream());
  const auto got_clear = clearance.download(f.r.stream()), got_depth = depth.download(f.r.stream());
  const auto got_near = nearest.download(f.r.stream()), got_normal = normal.download(f.r.stream());
  const auto got_point = point.download(f.r.stream()), got_disc_normal = disc_normal.download(f.r.stream());
  const auto got_side = side.download(f.r.stream()), got_disc = disc.download(f.r.stream());
  comparer cmp{fixture::on_host};
  int hit = 0, valid = 0, out_of_bounds = 0;
  for (int e = 0; e < E; ++e) {
    const tg::box_contact& w = want_sdf[e];
    CHECK_MESSAGE(has(w.flags, tg::contact_flags::invalid) == box_inputs::bad_box(e), "env " << e);
    cmp.integer(got_flags[e], w.flags, "sdf flags", e);
    cmp(got_clear[e], w.clearance, 1e-3, "sdf clearance", e);
    cmp(got_near[e], w.nearest, 2e-3, "sdf nearest", e);
    cmp(got_normal[e], w.normal, 1e-3, "sdf normal", e);
    cmp.integer(got_side[e], static_cast<int>(w.border), "sdf side", e);
    const tg::disc_hit& h = want_disc[e];
    CHECK_MESSAGE(has(h.flags, tg::contact_flags::invalid) == box_inputs::bad_box(e), "env " << e);
    cmp.integer(got_disc_flags[e], h.flags, "disc flags", e);
    cmp(got_depth[e], h.depth, 1e-4, "disc depth", e);
    cmp(got_point[e], h.point, 1e-4, "disc point", e);
    cmp(got_disc_normal[e], h.normal, 1e-4, "disc normal", e);
    cmp.integer(got_disc[e], h.disc, "disc index", e);
    if (!box_inputs::bad_box(e)) {
      const int padding = e % 4 == 2 ? 0 : 4;  // where the NaN disc went
      CHECK_MESSAGE(h.disc != padding, "env " << e << ": the NaN padding was taken");
      hit += has(h.flags, tg::contact_flags::hit) ? 1 : 0;
      ++valid;
    }
    out_of_bounds += has(w.flags, tg::contact_flags::out_of_bounds) ? 1 : 0;
  }
  CHECK(hit == valid);  // disc 1's centre is within 0.071 m of the box's, less than its radius
  CHECK(out_of_bounds > E / 20);
  CHECK(cmp.failures == 0);
}

TEST_CASE_TEMPLATE_DEFINE("batch speed_profile, border_cones and border_walls equal the per-env functions", Policy,
                          queries_profile_props) {
  query_fixture<Policy> f(query_envs());
  const int E = f.num_envs, N = f.tracks.num_samples;
  const tg::course_ref view = f.r.course().view();
  comparer cmp{query_fixture<Policy>::on_host};

  const tg::speed_limits limits{4.0f, 2.5f, 6.0f, 25.0f};
  typename query_fixture<Policy>::template buffer<float> speed(static_cast<std::size_t>(E) * N);
  tg::speed_profile<typename Policy::backend_type>(view.batch(), limits, speed.data(), f.r.stream().get());
  const auto got_speed = speed.download(f.r.stream());
  std::vector<float> want_speed(N);
  for (int e = 0; e < E; ++e) {
    tg::speed_profile(f.ref.track(e), limits, want_speed.data());
    for (int k = 0; k < N; ++k) cmp(got_speed[e * N + k], want_speed[k], 1e-3 * limits.max_speed, "speed", e);
  }

  // A capacity between the shortest and the longest border's count: some rows are cut.
  const float spacing = 4.0f;
  for (const tg::border_side side : {tg::border_side::left, tg::border_side::right}) {
    std::vector<int> counts(E);
    for (int e = 0; e < E; ++e) counts[e] = tg::prop_count(tg::border_length(f.ref.track(e), side), spacing);
    std::vector<int> sorted = counts;
    std::sort(sorted.begin(), sorted.end());
    const int capacity = sorted[static_cast<std::size_t>(E) / 2];
    REQUIRE(sorted.front() < capacity);
    REQUIRE(sorted.back() > capacity);
    typename query_fixture<Policy>::template buffer<float3> cones(static_cast<std::size_t>(E) * capacity);
    typename query_fixture<Policy>::template buffer<int> count(E);
    tg::border_cones<typename Policy::backend_type>(view.batch(), side, spacing, capacity, cones.data(), count.data(),
                                                    f.r.stream().get());
    const auto got = cones.download(f.r.stream());
    const auto got_count = count.download(f.r.stream());
    std::vector<float3> want(static_cast<std::size_t>(capacity));
    for (int e = 0; e < E; ++e) {
      const int total = tg::border_cones(f.ref.track(e), side, spacing, want.data(), capacity);
      cmp.integer(got_count[e], total, "cone count", e);
      for (int i = 0; i < capacity; ++i) {
        const float3 w = i < total ? want[i] : v3(NAN, NAN, NAN);  // padding
        cmp(got[static_cast<std::size_t>(e) * capacity + i], w, 2e-3, "cone", e);
      }
    }
    // Walls between the same cones: border_walls with a scratch row of C + 1 cones per env.
    typename query_fixture<Policy>::template buffer<float3> scratch(static_cast<std::size_t>(E) * (capacity + 1));
    typename query_fixture<Policy>::template buffer<tg::wall_piece> walls(static_cast<std::size_t>(E) * capacity);
    tg::border_walls<typename Policy::backend_type>(view.batch(), side, spacing, capacity, scratch.data(), walls.data(),
                                                    count.data(), f.r.stream().get());
    const auto got_walls = walls.download(f.r.stream());
    const auto got_wall_count = count.download(f.r.stream());
    std::vector<float3> want_scratch(static_cast<std::size_t>(capacity) + 1);
    std::vector<tg::wall_piece> want_walls(static_cast<std::size_t>(capacity));
    for (int e = 0; e < E; ++e) {
      const int total = tg::border_walls(f.ref.track(e), side, spacing, want_scratch.data(), want_walls.data(), capacity);
      cmp.integer(got_wall_count[e], total, "wall count", e);
      for (int i = 0; i < capacity; ++i) {
        const tg::wall_piece& g = got_walls[static_cast<std::size_t>(e) * capacity + i];
        const tg::wall_piece w = i < total ? want_walls[i] : tg::wall_piece{v3(NAN, NAN, NAN), NAN, NAN};
        cmp(g.position, w.position, 2e-3, "wall position", e);
        cmp.angle(g.yaw, w.yaw, 1e-3, "wall yaw", e);
        cmp(g.length, w.length, 2e-3, "wall length", e);
      }
    }
  }
  CHECK(cmp.failures == 0);
}

TEST_CASE_TEMPLATE_DEFINE("batch spawn: the masked envs' progress as course_ref::spawn, the pose as spawn_pose", Policy,
                          queries_spawn) {
  query_fixture<Policy> f(query_envs());
  const int E = f.num_envs;
  lcg rng{303u};
  std::vector<std::uint8_t> mask(E);
  std::vector<float> s(E), lateral(E);
  for (int e = 0; e < E; ++e) {
    mask[e] = e % 3 != 1 ? 1 : 0;
    s[e] = static_cast<float>((rng.next() * 1.4 - 0.2) * f.length(e));  // outside [0, L) too
    lateral[e] = static_cast<float>((rng.next() * 2.0 - 1.0) * 0.5 * f.half_width(e));
    if (e % 29 == 5) s[e] = NAN;  // resets to the start line, invalid_input
    if (e % 37 == 11) lateral[e] = e % 2 == 0 ? INFINITY : NAN;  // the same
  }
  // Drive every env a little first, so that a spawn and an untouched env differ from a reset.
  for (int e = 0; e < E; ++e) f.r.positions[e] = f.near_track(e, 1.0, 0.0, 0.0);
  f.r.step();
  for (int e = 0; e < E; ++e) f.r.positions[e] = f.near_track(e, 3.0, 0.1, 0.0);
  f.r.step();

  // The reference: course_ref::spawn over host copies of the tracks and the progress.
  const tg::progress_snapshot before = f.r.progress();
  tg::progress_snapshot want = before;
  tg::track_snapshot want_tracks = f.r.tracks();
  const tg::course_ref host_view(tg::progress_tracker_ref(host_batch(want_tracks), host_progress(want), 8, 1.0f));
  std::vector<float3> want_pos(E, v3(-7, -7, -7));
  std::vector<float> want_yaw(E, -7.0f);
  for (int e = 0; e < E; ++e) {
    if (!mask[e]) continue;
    host_view.spawn(e, s[e], lateral[e]);
    const tg::track_pose p = tg::spawn_pose(host_view.track(e), s[e], lateral[e]);
    want_pos[e] = p.position;
    want_yaw[e] = p.yaw;
  }

  auto mask_in = f.upload(mask);
  auto s_in = f.upload(s);
  auto lat_in = f.upload(lateral);
  auto pos_out = f.upload(std::vector<float3>(E, v3(-7, -7, -7)));  // unmasked entries keep this
  auto yaw_out = f.upload(std::vector<float>(E, -7.0f));
  tg::spawn<typename Policy::backend_type>(f.r.course().view(), mask_in.data(), s_in.data(), lat_in.data(), pos_out.data(),
                                           yaw_out.data(), f.r.stream().get());
  const auto got_pos = pos_out.download(f.r.stream());
  const auto got_yaw = yaw_out.download(f.r.stream());
  const tg::progress_snapshot got = f.r.progress();
  const tg::track_snapshot got_tracks = f.r.tracks();
  comparer cmp{query_fixture<Policy>::on_host};
  for (int e = 0; e < E; ++e) {
    cmp(got_pos[e], want_pos[e], 2e-3, "spawn position", e);
    cmp.angle(got_yaw[e], want_yaw[e], 1e-4, "spawn yaw", e);
    const progress_entry g = entry(got, e), w = entry(want, e);
    // Integers exactly (the gates: a spawn within float rounding of a gate is not drawn here).
    cmp.integer(g.next_gate, w.next_gate, "next_gate", e);
    cmp.integer(got.gates_to_lap[e], want.gates_to_lap[e], "gates_to_lap", e);
    cmp.integer(g.laps, w.laps, "laps", e);
    cmp.integer(g.gates_passed, w.gates_passed, "gates_passed", e);
    cmp.integer(g.flags, w.flags, "progress flags", e);
    cmp.segment(g.hint, w.hint, f.tracks.num_samples, "progress hint", e);
    cmp(g.lap_progress, w.lap_progress, 2e-3, "lap_progress", e);
    cmp(g.lateral, w.lateral, 0.0, "lateral", e);
    cmp(g.last_position, w.last_position, 2e-3, "last_position", e);
    cmp.integer(got_tracks.status[e], want_tracks.status[e], "track status", e);
    if (!mask[e]) CHECK_MESSAGE(same_bits(g, entry(before, e)), "unmasked env " << e << " changed");
  }
  // Spawned envs start their count afresh; the NaN ones are flagged.
  CHECK(has(got_tracks.status[5], tg::status::invalid_input) == (mask[5] != 0));
  CHECK(cmp.failures == 0);
  // A non-finite s or lateral: the pose of a reset, the first centreline sample (s = 0) facing
  // along its tangent, never a NaN position.
  int non_finite = 0;
  for (int e = 0; e < E; ++e) {
    if (!mask[e] || (std::isfinite(s[e]) && std::isfinite(lateral[e]))) continue;
    ++non_finite;
    const std::size_t k = f.tracks.sample_index(e, 0);
    const float3 start = f.tracks.position[k], t = f.tracks.tangent[k];
    CHECK_MESSAGE(has(got_tracks.status[e], tg::status::invalid_input), "env " << e);
    CHECK_MESSAGE(std::fabs(got_pos[e].x - start.x) + std::fabs(got_pos[e].y - start.y) + std::fabs(got_pos[e].z - start.z) < 1e-3,
                  "env " << e << ": the spawn pose of a non-finite input is not the start line");
    CHECK_MESSAGE(std::fabs(std::remainder(got_yaw[e] - std::atan2(t.y, t.x), 6.283185307179586)) < 1e-3, "env " << e);
  }
  CHECK(non_finite >= (small_scale() ? 2 : 8));

  // A null mask spawns every env, and lateral may be null (the centreline).
  tg::spawn<typename Policy::backend_type>(f.r.course().view(), nullptr, s_in.data(), nullptr, pos_out.data(), nullptr,
                                           f.r.stream().get());
  const auto all_pos = pos_out.download(f.r.stream());
  for (int e = 0; e < E; ++e) cmp(all_pos[e], tg::spawn_pose(f.ref.track(e), s[e], 0.0f).position, 2e-3, "centre spawn", e);
  CHECK(cmp.failures == 0);
}

/// Runs `f` and checks that it throws std::invalid_argument whose message contains `needle`.
inline void check_rejects(const std::function<void()>& f, const std::string& needle) {
  bool thrown = false;
  try {
    f();
  } catch (const std::invalid_argument& e) {
    thrown = true;
    CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, e.what() << " lacks '" << needle << "'");
  }
  CHECK_MESSAGE(thrown, "no std::invalid_argument for '" << needle << "'");
}

TEST_CASE_TEMPLATE_DEFINE("batch queries reject bad arguments on the host, naming them", Policy, queries_arguments) {
  using B = typename Policy::backend_type;
  query_fixture<Policy> f(4);
  const int E = f.num_envs;
  const tg::course_ref view = f.r.course().view();
  const auto st = f.r.stream().get();
  auto pos = f.upload(std::vector<float3>(E, v3(0, 0, 0)));
  auto flt = f.upload(std::vector<float>(E, 0.0f));
  auto ints = f.upload(std::vector<int>(E, 0));
  auto quats = f.upload(std::vector<float4>(E, q4(0, 0, 0, 1)));
  auto ext = f.upload(std::vector<float2>(E, f2d(1, 1)));
  typename query_fixture<Policy>::template buffer<float3> out3(static_cast<std::size_t>(E) * 8);
  const tg::track_batch_ref b = view.batch();

  check_rejects([&] { tg::localize<B>(b, nullptr, ints.data(), 8, {}, st); }, "localize: positions is null");
  check_rejects([&] { tg::localize<B>(b, pos.data(), nullptr, 8, {}, st); }, "localize: hints is null");
  check_rejects([&] { tg::track_ahead<B>(b, flt.data(), pos.data(), flt.data(), 0, 1.0f, out3.data(), st); }, "count = 0");
  check_rejects([&] { tg::track_ahead<B>(b, flt.data(), pos.data(), flt.data(), 4, 0.0f, out3.data(), st); }, "spacing");
  check_rejects([&] { tg::track_ahead<B>(b, flt.data(), pos.data(), flt.data(), 4, NAN, out3.data(), st); }, "spacing");
  check_rejects([&] { tg::track_ahead<B>(b, flt.data(), pos.data(), nullptr, 4, 1.0f, out3.data(), st); }, "yaw is null");
  check_rejects([&] { tg::progress_delta<B>(b, flt.data(), nullptr, flt.data(), st); }, "s_now is null");
  check_rejects([&] { tg::spawn<B>(view, nullptr, nullptr, nullptr, pos.data(), flt.data(), st); }, "spawn: s is null");
  check_rejects([&] { tg::collide_boxes<B>(b, pos.data(), nullptr, ext.data(), ints.data(), 8, {}, st); },
                "orientations is null");
  check_rejects([&] { tg::collide_boxes<B>(b, pos.data(), quats.data(), ext.data(), nullptr, 8, {}, st); }, "hints is null");
  check_rejects([&] { tg::speed_profile<B>(b, tg::speed_limits{0.0f, 1.0f, 1.0f, 10.0f}, flt.data(), st); },
                "lateral_acceleration");
  check_rejects([&] { tg::speed_profile<B>(b, tg::speed_limits{1.0f, 1.0f, 1.0f, 10.0f}, nullptr, st); }, "out is null");
  check_rejects([&] { tg::border_cones<B>(b, tg::border_side::left, -1.0f, 8, out3.data(), nullptr, st); }, "spacing");
  // Below min_prop_spacing the count border length / spacing passed prop_count's cut-off (3 props).
  check_rejects([&] { tg::border_cones<B>(b, tg::border_side::left, 1e-12f, 8, out3.data(), nullptr, st); },
                "expected a finite value >= 0.001 m");
  check_rejects([&] { tg::border_cones<B>(b, tg::border_side::left, 1.0f, 0, out3.data(), nullptr, st); }, "capacity = 0");
  check_rejects([&] { tg::border_cones<B>(b, static_cast<tg::border_side>(2), 1.0f, 8, out3.data(), nullptr, st); }, "side");
  check_rejects([&] { tg::border_cones<B>(b, tg::border_side::right, 1.0f, 8, nullptr, nullptr, st); }, "out is null");
  if constexpr (!query_fixture<Policy>::on_host) {
    // A host pointer given to the CUDA backend is refused before any launch.
    std::vector<int> host_hints(E, 0);
    check_rejects([&] { tg::localize<B>(b, pos.data(), host_hints.data(), 8, {}, st); }, "localize: hints");
  }
}

#if defined(__CUDACC__)
TEST_CASE("batch queries recorded into a CUDA graph replay bit for bit as the eager calls") {
  query_fixture<tg::cuda_policy> f(query_envs());
  const int E = f.num_envs, N = f.tracks.num_samples;
  lcg rng{404u};
  std::vector<float3> pos(E);
  std::vector<int> hints(E);
  for (int e = 0; e < E; ++e) {
    const double u = rng.next() * f.length(e);
    pos[e] = f.near_track(e, u, (rng.next() - 0.5) * f.half_width(e), 0.0);
    hints[e] = static_cast<int>(u / f.length(e) * N) + (e % 5 == 0 ? N / 2 : 0);
  }
  auto positions = f.upload(pos);
  auto hint_buf = f.upload(hints);
  query_fixture<tg::cuda_policy>::buffer<float> s(E), n(E), ahead_yaw(E);
  query_fixture<tg::cuda_policy>::buffer<float3> ahead(static_cast<std::size_t>(E) * 4);
  ahead_yaw.upload(std::vector<float>(E, 0.3f), f.r.stream());
  tg::localize_outputs out;
  out.s = s.data(), out.n = n.data();
  const tg::track_batch_ref b = f.r.course().view().batch();
  auto run = [&](::cuda::stream_ref st) {
    tg::localize<tg::backend::cuda>(b, positions.data(), hint_buf.data(), 8, out, st);
    tg::track_ahead<tg::backend::cuda>(b, s.data(), positions.data(), ahead_yaw.data(), 4, 1.5f, ahead.data(), st);
  };
  run(f.r.stream().get());
  const auto eager_s = s.download(f.r.stream()), eager_n = n.download(f.r.stream());
  const auto eager_ahead = ahead.download(f.r.stream());
  const auto eager_hints = hint_buf.download(f.r.stream());
  hint_buf.upload(hints, f.r.stream());
  s.upload(std::vector<float>(E, -1.0f), f.r.stream());

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check_cuda(cudaStreamBeginCapture(f.r.stream().raw(), cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  run(f.r.stream().get());
  check_cuda(cudaStreamEndCapture(f.r.stream().raw(), &graph), "cudaStreamEndCapture");
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  std::size_t nodes = 0;
  check_cuda(cudaGraphGetNodes(graph, nullptr, &nodes), "cudaGraphGetNodes");
  CHECK(nodes == 2);  // one kernel per query, nothing else
  check_cuda(cudaGraphLaunch(exec, f.r.stream().raw()), "cudaGraphLaunch");
  const auto got_s = s.download(f.r.stream()), got_n = n.download(f.r.stream());
  const auto got_ahead = ahead.download(f.r.stream());
  const auto got_hints = hint_buf.download(f.r.stream());
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  for (int e = 0; e < E; ++e) {
    CHECK(same_bits(got_s[e], eager_s[e]));
    CHECK(same_bits(got_n[e], eager_n[e]));
    CHECK(got_hints[e] == eager_hints[e]);
    for (int i = 0; i < 4; ++i) {
      CHECK(same_bits(got_ahead[e * 4 + i].x, eager_ahead[e * 4 + i].x));
      CHECK(same_bits(got_ahead[e * 4 + i].y, eager_ahead[e * 4 + i].y));
    }
  }
}
#endif

}  // namespace progress_test
