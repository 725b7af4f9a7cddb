#pragma once
/// @file
/// Cones and wall pieces along the road edges (props.hpp) against independent references, on
/// a circle and the stadium, both edges, three spacings: the count is the nearest whole number
/// to the edge's length over the spacing (lengths summed here in double from the stored
/// edges), every cone lies on the edge polyline at arc length i * length / count (measured here
/// by projecting it onto the polyline), the last gap equals the others (no seam), a cut output
/// writes nothing past its capacity and still reports the full count, and each wall piece joins
/// two consecutive cones. Templated over the backend; applied in props_test.cpp and .cu.

#include "progress_harness.hpp"

#include <track_gen/props.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace progress_test {

/// What one run of border_cones / border_walls gave: the count and the first `capacity` outputs.
struct props_run {
  int cones_count = 0, walls_count = 0;
  std::vector<float3> cones;
  std::vector<tg::wall_piece> walls;
};

#if defined(__CUDACC__)
__global__ void props_kernel(const tg::course_ref view, int e, tg::border_side side, float spacing, int capacity,
                             float3* cones, float3* scratch, tg::wall_piece* walls, int* counts) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  counts[0] = tg::border_cones(view.track(e), side, spacing, cones, capacity);
  counts[1] = tg::border_walls(view.track(e), side, spacing, scratch, walls, capacity);
}
#endif

/// border_cones and border_walls of env e on the rig's backend, `capacity` outputs each (plus
/// one canary element after them, which must stay untouched).
template <class Policy>
props_run run_props(rig<Policy>& r, int e, tg::border_side side, float spacing, int capacity) {
  using cones_buffer = typename rig<Policy>::template buffer<float3>;
  using walls_buffer = typename rig<Policy>::template buffer<tg::wall_piece>;
  const std::size_t cap = static_cast<std::size_t>(capacity);
  const float3 canary = v3(-12345.0, 0, 0);
  cones_buffer cones(cap + 1), scratch(cap + 1);
  walls_buffer walls(cap + 1);
  typename rig<Policy>::template buffer<int> counts(2);
  std::vector<float3> fill(cap + 1, canary);
  cones.upload(fill, r.stream());
  std::vector<tg::wall_piece> wall_fill(cap + 1, tg::wall_piece{canary, 0.0f, -1.0f});
  walls.upload(wall_fill, r.stream());
  const tg::course_ref view = r.course().view();
  props_run out;
  if constexpr (std::is_same_v<typename Policy::backend_type, tg::backend::host>) {
    out.cones_count = tg::border_cones(view.track(e), side, spacing, cones.data(), capacity);
    out.walls_count = tg::border_walls(view.track(e), side, spacing, scratch.data(), walls.data(), capacity);
  } else {
#if defined(__CUDACC__)
    props_kernel<<<1, 32, 0, r.stream().raw()>>>(view, e, side, spacing, capacity, cones.data(), scratch.data(),
                                                 walls.data(), counts.data());
    check_cuda(cudaGetLastError(), "props_kernel");
    const std::vector<int> c = counts.download(r.stream());
    out.cones_count = c[0];
    out.walls_count = c[1];
#endif
  }
  out.cones = cones.download(r.stream());
  out.walls = walls.download(r.stream());
  CHECK(out.cones[cap].x == canary.x);  // nothing written past the capacity
  CHECK(out.walls[cap].length == -1.0f);
  out.cones.resize(cap);
  out.walls.resize(cap);
  return out;
}

TEST_CASE_TEMPLATE_DEFINE("cones and wall pieces close each road edge at an even spacing", Policy, border_props) {
  const circle c{40.0};
  const stadium st{75.0, 10.0};
  rig<Policy> r(user_track_params(2), 10.0f, centreline({c.polyline(2000), st.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int n = t.num_samples;
  for (int e = 0; e < 2; ++e) {
    for (const tg::border_side side : {tg::border_side::left, tg::border_side::right}) {
      // The edge polyline in double, and its cumulative arc length.
      std::vector<double> x(n + 1), y(n + 1), z(n + 1), arc(n + 1, 0.0);
      for (int k = 0; k <= n; ++k) {
        const float3 b = side == tg::border_side::left ? t.border_left[t.sample_index(e, k % n)]
                                                       : t.border_right[t.sample_index(e, k % n)];
        x[k] = b.x, y[k] = b.y, z[k] = b.z;
        if (k > 0) arc[k] = arc[k - 1] + std::sqrt((x[k] - x[k - 1]) * (x[k] - x[k - 1]) + (y[k] - y[k - 1]) * (y[k] - y[k - 1]) + (z[k] - z[k - 1]) * (z[k] - z[k - 1]));
      }
      const double total = arc[n];
      for (const float spacing : {1.0f, 2.5f, 7.0f}) {
        CAPTURE(e);
        CAPTURE(static_cast<int>(side));
        CAPTURE(spacing);
        const int expected = std::max(3, static_cast<int>(std::lround(total / spacing)));
        const props_run all = run_props(r, e, side, spacing, expected + 8);
        CHECK(all.cones_count == expected);
        CHECK(all.walls_count == expected);
        const double step = total / expected;
        double worst_off = 0, worst_arc = 0;
        for (int i = 0; i < expected; ++i) {
          // Project cone i on the polyline: its distance and its arc coordinate.
          const float3 p = all.cones[static_cast<std::size_t>(i)];
          double best = 1e30, best_arc = 0;
          for (int k = 0; k < n; ++k) {
            const double dx = x[k + 1] - x[k], dy = y[k + 1] - y[k], dz = z[k + 1] - z[k];
            const double len2 = dx * dx + dy * dy + dz * dz;
            double u = len2 > 0 ? ((p.x - x[k]) * dx + (p.y - y[k]) * dy + (p.z - z[k]) * dz) / len2 : 0;
            u = std::clamp(u, 0.0, 1.0);
            const double ex = p.x - (x[k] + u * dx), ey = p.y - (y[k] + u * dy), ez = p.z - (z[k] + u * dz);
            const double d = std::sqrt(ex * ex + ey * ey + ez * ez);
            if (d < best) best = d, best_arc = arc[k] + u * std::sqrt(len2);
          }
          worst_off = std::max(worst_off, best);
          worst_arc = std::max(worst_arc, std::fabs(best_arc - i * step));
        }
        CHECK(worst_off < 1e-3);               // on the edge (float rounding)
        CHECK(worst_arc < 2e-5 * total + 1e-3);  // at i * length / count: even, no seam
        // Wall pieces join consecutive cones, the last one back to cone 0.
        for (int i = 0; i < expected; ++i) {
          const float3 a = all.cones[static_cast<std::size_t>(i)];
          const float3 b = all.cones[static_cast<std::size_t>((i + 1) % expected)];
          const tg::wall_piece& w = all.walls[static_cast<std::size_t>(i)];
          const double dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
          CHECK(std::fabs(w.length - std::sqrt(dx * dx + dy * dy + dz * dz)) < 1e-4);
          CHECK(std::fabs(w.position.x - 0.5 * (a.x + b.x)) < 1e-4);
          CHECK(std::fabs(w.position.y - 0.5 * (a.y + b.y)) < 1e-4);
          double dyaw = std::fabs(w.yaw - std::atan2(dy, dx));
          dyaw = std::min(dyaw, 2 * pi - dyaw);
          CHECK(dyaw < 1e-4);
        }
        // A cut output: the full count, the first `capacity` entries the same, nothing past them
        // (run_props checks the canary), and the last piece still joins cone 4 to cone 5.
        const props_run cut = run_props(r, e, side, spacing, 5);
        CHECK(cut.cones_count == expected);
        CHECK(cut.walls_count == expected);
        for (std::size_t i = 0; i < 5; ++i) {
          CHECK(std::memcmp(&cut.cones[i], &all.cones[i], sizeof(float3)) == 0);
          CHECK(std::memcmp(&cut.walls[i], &all.walls[i], sizeof(tg::wall_piece)) == 0);
        }
      }
    }
  }
  CHECK(tg::prop_count(10.0f, 100.0f) == 3);  // at least 3
  CHECK(tg::prop_count(10.0f, 0.0f) == 3);    // spacing 0: unusable, not a division by zero
}

}  // namespace progress_test
