#pragma once
/// @file
/// heightfield.hpp against independent references:
/// - texels: every texel of baked grids equals the height of the nearest centreline
///   cross-section, found by brute force in double (the nearest of all segments in the xy plane;
///   z interpolated along that segment at the foot; a point equidistant from two parts of the
///   track may take either), on elevated tracks (random_walk and harmonics profiles,
///   presets::elevated_track_pipeline) and drone gate courses (presets::gate_course_pipeline);
///   the grid covers the borders' bounding box plus the margin;
/// - sample: at texel centres it equals the texels; between them it equals a double-precision
///   bilinear interpolation of the downloaded texels and lies within the range of the four; off
///   the grid it equals the sample at the clamped point (edge texels extend); its gradient is
///   the interpolant's (0 along a clamped axis); NaN for a non-finite point; run on the backend
///   (a host loop, or a CUDA kernel as a user's);
/// - the batch query sample_heights (queries.hpp): K points per env, equal to sample's answers
///   bit for bit, and to the double bilinear reference; bad arguments named;
/// - masked and listed bakes: the masked envs bit-identical to a full bake of the new tracks,
///   every other env's header and texels bit-identical to before; a list bake the same;
/// - course::attach_heightfield: baked at attach, then a masked regenerate re-bakes exactly its
///   envs (CUDA: also recorded into a graph, under the conditional node's policy, and replayed);
/// - bad parameters throw std::invalid_argument naming the parameter and its range;
///   heightfield_ref is trivially copyable.
/// Templated over the backend policy; applied in heightfield_test.cpp (host) and .cu (CUDA).

#include "collision/grid_copy.hpp"
#include "progress/progress_harness.hpp"

#include <track_gen/course.hpp>
#include <track_gen/heightfield.hpp>
#include <track_gen/queries.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace heightfield_test {

using namespace progress_test;

static_assert(std::is_trivially_copyable_v<tg::heightfield_ref>, "heightfield_ref is passed to kernels by value");
static_assert(std::is_trivially_copyable_v<tg::heightfield_header>);
static_assert(!std::is_copy_constructible_v<tg::heightfield<tg::host_policy>>, "the owner is move-only");
static_assert(std::is_nothrow_move_constructible_v<tg::heightfield<tg::host_policy>>);

/// A course of `Pipeline` on `Policy`'s backend with its stream (the stream first: the course's
/// constructor uses it).
template <class Pipeline, class Policy>
struct course_rig {
  using support = backend_support<typename Policy::backend_type>;
  template <class T>
  using buffer = typename support::template buffer<T>;

  typename support::stream stream;
  tg::course<Pipeline, Policy> course;

  course_rig(const tg::track_params& p, float spacing) : course(p, spacing, stream.get()) {}
  tg::track_snapshot tracks() const { return course.copy_tracks(stream.get()); }
  /// Regenerates the envs with a nonzero mask entry (the mask in the backend's memory).
  void regenerate(const std::vector<std::int32_t>& mask, bool advance) {
    buffer<std::int32_t> m(mask.size());
    m.upload(mask, stream);
    course.regenerate(m.data(), advance, stream.get());
    stream.synchronize();
  }
};

/// A field's headers and texels, copied to the host.
using field_copy = grid_test::grid_copy;

template <class Policy, class Stream>
field_copy download(const tg::heightfield<Policy>& f, const Stream& stream) {
  return grid_test::download_grid(f, stream);
}

/// The heights of the nearest cross-sections of env e at the planar point (x, y), by brute
/// force in double: every segment whose planar distance is within `tie` of the least gives a
/// candidate, z of the centreline interpolated along it at the foot.
inline std::vector<double> brute_heights(const tg::track_snapshot& t, int e, double x, double y, double tie) {
  const int n = t.num_samples;
  std::vector<double> dist(static_cast<std::size_t>(n)), height(static_cast<std::size_t>(n));
  double best = 1e300;
  for (int k = 0; k < n; ++k) {
    const float3 a = t.position[t.sample_index(e, k)], b = t.position[t.sample_index(e, (k + 1) % n)];
    const double dx = double(b.x) - a.x, dy = double(b.y) - a.y, len2 = dx * dx + dy * dy;
    const double u = len2 > 0 ? std::clamp(((x - a.x) * dx + (y - a.y) * dy) / len2, 0.0, 1.0) : 0.0;
    dist[static_cast<std::size_t>(k)] = std::hypot(x - (a.x + u * dx), y - (a.y + u * dy));
    height[static_cast<std::size_t>(k)] = a.z + u * (double(b.z) - a.z);
    best = std::min(best, dist[static_cast<std::size_t>(k)]);
  }
  std::vector<double> out;
  for (int k = 0; k < n; ++k)
    if (dist[static_cast<std::size_t>(k)] <= best + tie) out.push_back(height[static_cast<std::size_t>(k)]);
  return out;
}

/// The bilinear interpolation of the downloaded texels at (x, y), in double, clamped to the square
/// of the texel centres as heightfield_ref::sample documents; `gradient` as sample's.
inline double reference_sample(const field_copy& fc, int e, double x, double y, double* gx = nullptr, double* gy = nullptr) {
  const tg::heightfield_header& h = fc.header(e);
  const int r = fc.resolution;
  const double u = (x - h.x0) / h.cell - 0.5, v = (y - h.y0) / h.cell - 0.5;
  const double uc = std::clamp(u, 0.0, r - 1.0), vc = std::clamp(v, 0.0, r - 1.0);
  const int i = std::min(static_cast<int>(std::floor(uc)), r - 2), j = std::min(static_cast<int>(std::floor(vc)), r - 2);
  const double fx = uc - i, fy = vc - j;
  const double a = fc.texel(e, i, j), b = fc.texel(e, i + 1, j), c = fc.texel(e, i, j + 1), d = fc.texel(e, i + 1, j + 1);
  if (gx != nullptr) *gx = u == uc ? ((1 - fy) * (b - a) + fy * (d - c)) / h.cell : 0.0;
  if (gy != nullptr) *gy = v == vc ? ((1 - fx) * (c - a) + fx * (d - b)) / h.cell : 0.0;
  return (1 - fy) * ((1 - fx) * a + fx * b) + fy * ((1 - fx) * c + fx * d);
}

/// One sample query and its answer.
struct sample_query {
  int env;
  float x, y;
};
struct sample_answer {
  float z;
  float2 gradient;
};

#if defined(__CUDACC__)
/// A user's kernel: one thread per query samples the field.
__global__ void sample_kernel(const tg::heightfield_ref field, const sample_query* q, sample_answer* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  sample_answer a;
  a.z = field.sample(q[i].env, q[i].x, q[i].y, &a.gradient);
  out[i] = a;
}
#endif

/// heightfield_ref::sample of every query, run on the backend (a host loop, or sample_kernel).
template <class Policy, class Stream>
std::vector<sample_answer> sample_on_backend(const tg::heightfield<Policy>& field, const std::vector<sample_query>& queries,
                                             const Stream& stream) {
  using support = backend_support<typename Policy::backend_type>;
  const int n = static_cast<int>(queries.size());
  typename support::template buffer<sample_query> in(queries.size());
  typename support::template buffer<sample_answer> out(queries.size());
  in.upload(queries, stream);
  const tg::heightfield_ref view = field.view();
  if constexpr (std::is_same_v<typename Policy::backend_type, tg::backend::host>) {
    for (int i = 0; i < n; ++i) {
      sample_answer a;
      a.z = view.sample(queries[static_cast<std::size_t>(i)].env, queries[static_cast<std::size_t>(i)].x,
                        queries[static_cast<std::size_t>(i)].y, &a.gradient);
      out.data()[i] = a;
    }
  } else {
#if defined(__CUDACC__)
    if (n > 0) sample_kernel<<<static_cast<unsigned>((n + 127) / 128), 128, 0, stream.raw()>>>(view, in.data(), out.data(), n);
    check_cuda(cudaGetLastError(), "launching sample_kernel");
#endif
  }
  return out.download(stream);
}

/// The elevated cases: a random_walk and a harmonics profile on elevated tracks, and gate courses.
enum class elevated_case { random_walk, harmonics, gate_course };

inline const char* case_name(elevated_case c) {
  return c == elevated_case::random_walk ? "random_walk" : c == elevated_case::harmonics ? "harmonics" : "gate_course";
}

inline tg::track_params case_params(elevated_case c, int num_envs, std::uint64_t seed) {
  tg::track_params p = c == elevated_case::gate_course ? tg::presets::gate_course(num_envs) : tg::presets::elevated_drone_track(num_envs);
  p.seed = seed;
  if (c == elevated_case::harmonics) {
    p.elevation.profile = tg::elevation_kind::harmonics;
    p.elevation.harmonics = 4;
  }
  return p;
}

/// Checks every texel of `fc` (baked from `t` with `margin`) against brute_heights, and the
/// grid's placement; returns the spread of the texels (max - min) over all envs.
inline double check_texels(const tg::track_snapshot& t, const field_copy& fc, float margin) {
  const int resolution = fc.resolution;
  double lo_z = 1e300, hi_z = -1e300;
  for (int e = 0; e < t.num_envs; ++e) {
    const tg::heightfield_header h = fc.header(e);
    double lo_x = 1e300, lo_y = 1e300, hi_x = -1e300, hi_y = -1e300;
    for (int k = 0; k < t.num_samples; ++k) {
      for (const float3 p : {t.border_left[t.sample_index(e, k)], t.border_right[t.sample_index(e, k)]}) {
        lo_x = std::min(lo_x, double(p.x)), hi_x = std::max(hi_x, double(p.x));
        lo_y = std::min(lo_y, double(p.y)), hi_y = std::max(hi_y, double(p.y));
      }
    }
    // The grid: the borders' box plus the margin on its longer side, centred, R square cells.
    const double side = std::max(hi_x - lo_x, hi_y - lo_y) + 2.0 * margin, extent = double(h.cell) * resolution;
    CHECK(h.cell > 0.0f);
    CHECK(h.inv_cell == doctest::Approx(1.0 / h.cell));
    CHECK(extent == doctest::Approx(side).epsilon(1e-5));
    CHECK(h.x0 + 0.5 * extent == doctest::Approx(0.5 * (lo_x + hi_x)).epsilon(1e-5).scale(side));
    CHECK(h.y0 + 0.5 * extent == doctest::Approx(0.5 * (lo_y + hi_y)).epsilon(1e-5).scale(side));
    CHECK(h.x0 <= lo_x - margin + 1e-4 * side);
    CHECK(h.y0 <= lo_y - margin + 1e-4 * side);
    CHECK(h.x0 + extent >= hi_x + margin - 1e-4 * side);
    CHECK(h.y0 + extent >= hi_y + margin - 1e-4 * side);
    int mismatches = 0;
    for (int j = 0; j < resolution; ++j) {
      for (int i = 0; i < resolution; ++i) {
        // The centre as the bake computes it (float), then everything in double.
        const float x = h.x0 + (static_cast<float>(i) + 0.5f) * h.cell, y = h.y0 + (static_cast<float>(j) + 0.5f) * h.cell;
        const std::vector<double> ref = brute_heights(t, e, x, y, 1e-4);
        const float got = fc.texel(e, i, j);
        // float32: the foot's parameter carries ~1e-5 of a segment at these coordinates; a
        // segment climbs at most its grade times its length (a few cm).
        const double tol = 2e-5 + 2e-6 * std::fabs(ref.front());
        bool ok = false;
        for (const double z : ref) ok = ok || std::fabs(got - z) <= tol;
        if (!ok) {
          INFO("env " << e << " texel (" << i << ", " << j << ") at (" << x << ", " << y << "): " << got << ", reference "
                      << ref.front() << " (" << ref.size() << " candidate feet)");
          CHECK(ok);
          ++mismatches;
        }
        lo_z = std::min(lo_z, double(got));
        hi_z = std::max(hi_z, double(got));
      }
    }
    CHECK(mismatches == 0);
  }
  return hi_z - lo_z;
}

// ---------------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE_DEFINE("heightfield texels equal the nearest cross-section's height (brute force in double)", Policy,
                          heightfield_texels) {
  const int num_envs = 3, resolution = scaled(64, 24);
  for (const elevated_case c : {elevated_case::random_walk, elevated_case::harmonics, elevated_case::gate_course}) {
    for (const float margin : {0.0f, 3.0f}) {
      CAPTURE(case_name(c));
      CAPTURE(margin);
      const tg::track_params p = case_params(c, num_envs, 11);
      double spread = 0.0;
      if (c == elevated_case::gate_course) {
        course_rig<tg::presets::gate_course_pipeline, Policy> r(p, tg::presets::gate_course_spacing(p));
        tg::heightfield<Policy> field(num_envs, resolution, margin, r.stream.get());
        field.bake(r.course.view().batch(), r.stream.get());
        spread = check_texels(r.tracks(), download(field, r.stream), margin);
      } else {
        course_rig<tg::presets::elevated_track_pipeline, Policy> r(p, 0.6f);
        tg::heightfield<Policy> field(num_envs, resolution, margin, r.stream.get());
        field.bake(r.course.view().batch(), r.stream.get());
        spread = check_texels(r.tracks(), download(field, r.stream), margin);
      }
      // The tracks climb: the texels are not one constant (a flat bake would fail the references).
      CHECK(spread > 0.3);
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("heightfield sample: texels at their centres, bilinear between them, clamped outside", Policy,
                          heightfield_sampling) {
  const int num_envs = 2, resolution = 16;
  const tg::track_params p = case_params(elevated_case::random_walk, num_envs, 4);
  course_rig<tg::presets::elevated_track_pipeline, Policy> r(p, 0.6f);
  tg::heightfield<Policy> field(num_envs, resolution, 1.0f, r.stream.get());
  field.bake(r.course.view().batch(), r.stream.get());
  const field_copy fc = download(field, r.stream);
  std::vector<sample_query> centres, between, outside;
  lcg rng{17u};
  for (int e = 0; e < num_envs; ++e) {
    const tg::heightfield_header h = fc.header(e);
    for (int j = 0; j < resolution; ++j)
      for (int i = 0; i < resolution; ++i)
        centres.push_back({e, h.x0 + (static_cast<float>(i) + 0.5f) * h.cell, h.y0 + (static_cast<float>(j) + 0.5f) * h.cell});
    const double lo = 0.5 * h.cell, span = (resolution - 1) * double(h.cell);
    for (int k = 0; k < 2000; ++k)
      between.push_back({e, static_cast<float>(h.x0 + lo + rng.next() * span), static_cast<float>(h.y0 + lo + rng.next() * span)});
    // Off the grid: beyond each side and corner by up to 10 grid widths (and inside along the other axis).
    for (int k = 0; k < 400; ++k) {
      const double out = span * (0.05 + 10.0 * rng.next()), along = lo + rng.next() * span;
      const double sx = k % 4 == 0 ? -out : k % 4 == 1 ? span + out : along, sy = k % 4 == 2 ? -out : k % 4 == 3 ? span + out : along;
      outside.push_back({e, static_cast<float>(h.x0 + lo + sx), static_cast<float>(h.y0 + lo + sy)});
      outside.push_back({e, static_cast<float>(h.x0 + lo + (k % 2 == 0 ? -out : span + out)),
                         static_cast<float>(h.y0 + lo + (k % 3 == 0 ? -out : span + out))});
    }
  }
  const std::vector<sample_answer> at_centres = sample_on_backend(field, centres, r.stream);
  for (std::size_t q = 0; q < centres.size(); ++q) {
    const int e = centres[q].env, i = static_cast<int>(q % (resolution * resolution)) % resolution,
              j = static_cast<int>(q % (resolution * resolution)) / resolution;
    // The centre computed in float sits within ~1e-5 of a texel step of the true centre.
    double spread = 0.0;
    for (int dj = -1; dj <= 1; ++dj)
      for (int di = -1; di <= 1; ++di) {
        const int a = std::clamp(i + di, 0, resolution - 1), b = std::clamp(j + dj, 0, resolution - 1);
        spread = std::max(spread, std::fabs(double(fc.texel(e, a, b)) - fc.texel(e, i, j)));
      }
    INFO("env " << e << " texel (" << i << ", " << j << ")");
    CHECK(std::fabs(double(at_centres[q].z) - fc.texel(e, i, j)) <= 1e-4 * spread + 1e-6);
  }
  const std::vector<sample_answer> got = sample_on_backend(field, between, r.stream);
  double worst = 0.0;
  int interior_differs = 0;
  for (std::size_t q = 0; q < between.size(); ++q) {
    const sample_query& s = between[q];
    const tg::heightfield_header h = fc.header(s.env);
    double gx = 0, gy = 0;
    const double ref = reference_sample(fc, s.env, s.x, s.y, &gx, &gy);
    const double u = std::clamp((double(s.x) - h.x0) / h.cell - 0.5, 0.0, resolution - 1.0);
    const double v = std::clamp((double(s.y) - h.y0) / h.cell - 0.5, 0.0, resolution - 1.0);
    const int i = std::min(static_cast<int>(u), resolution - 2), j = std::min(static_cast<int>(v), resolution - 2);
    const double four[4] = {fc.texel(s.env, i, j), fc.texel(s.env, i + 1, j), fc.texel(s.env, i, j + 1), fc.texel(s.env, i + 1, j + 1)};
    const double lo4 = *std::min_element(four, four + 4), hi4 = *std::max_element(four, four + 4);
    INFO("query " << q << " env " << s.env << " at (" << s.x << ", " << s.y << "): " << got[q].z << ", reference " << ref);
    // float32 interpolation: a few ulps of the heights plus the point's rounding in texel steps.
    CHECK(std::fabs(got[q].z - ref) <= 1e-5 * (hi4 - lo4) + 4e-6 * (1.0 + std::fabs(ref)));
    CHECK(got[q].z >= lo4 - 4e-6 * (1.0 + std::fabs(lo4)));
    CHECK(got[q].z <= hi4 + 4e-6 * (1.0 + std::fabs(hi4)));
    CHECK(got[q].gradient.x == doctest::Approx(gx).epsilon(1e-3).scale(1e-3 + (hi4 - lo4) / h.cell));
    CHECK(got[q].gradient.y == doctest::Approx(gy).epsilon(1e-3).scale(1e-3 + (hi4 - lo4) / h.cell));
    worst = std::max(worst, std::fabs(got[q].z - ref));
    interior_differs += hi4 - lo4 > 1e-3 ? 1 : 0;
  }
  MESSAGE("worst |sample - double bilinear| " << worst << " m");
  CHECK(interior_differs > static_cast<int>(between.size()) / 10);  // the interpolation is exercised
  const std::vector<sample_answer> off = sample_on_backend(field, outside, r.stream);
  for (std::size_t q = 0; q < outside.size(); ++q) {
    const sample_query& s = outside[q];
    const tg::heightfield_header h = fc.header(s.env);
    double gx = 0, gy = 0;
    const double ref = reference_sample(fc, s.env, s.x, s.y, &gx, &gy);
    INFO("query " << q << " env " << s.env << " at (" << s.x << ", " << s.y << "): " << off[q].z << ", reference " << ref);
    CHECK(std::fabs(off[q].z - ref) <= 1e-5 * (1.0 + std::fabs(ref)));
    // Along a clamped axis the field is constant: the gradient's component there is 0.
    const bool x_clamped = s.x < h.x0 + 0.5f * h.cell || s.x > h.x0 + (resolution - 0.5f) * h.cell;
    const bool y_clamped = s.y < h.y0 + 0.5f * h.cell || s.y > h.y0 + (resolution - 0.5f) * h.cell;
    if (x_clamped) CHECK(off[q].gradient.x == 0.0f);
    if (y_clamped) CHECK(off[q].gradient.y == 0.0f);
    CHECK((x_clamped || y_clamped));
  }
  // Non-finite points: NaN height and gradient.
  const std::vector<sample_query> bad = {{0, NAN, 0.0f}, {1, 0.0f, INFINITY}, {0, -INFINITY, NAN}};
  for (const sample_answer& a : sample_on_backend(field, bad, r.stream)) {
    CHECK(std::isnan(a.z));
    CHECK(std::isnan(a.gradient.x));
    CHECK(std::isnan(a.gradient.y));
  }
}

TEST_CASE_TEMPLATE_DEFINE("batch sample_heights equals heightfield_ref::sample at K points per env", Policy,
                          heightfield_batch_sample) {
  using backend_type = typename Policy::backend_type;
  const int num_envs = 3, resolution = 12, per_env = 5;
  const tg::track_params p = case_params(elevated_case::harmonics, num_envs, 8);
  course_rig<tg::presets::elevated_track_pipeline, Policy> r(p, 0.6f);
  tg::heightfield<Policy> field(num_envs, resolution, 0.5f, r.stream.get());
  field.bake(r.course.view().batch(), r.stream.get());
  const field_copy fc = download(field, r.stream);
  lcg rng{3u};
  std::vector<sample_query> queries;
  std::vector<float> x, y;
  for (int e = 0; e < num_envs; ++e) {
    const tg::heightfield_header h = fc.header(e);
    for (int k = 0; k < per_env; ++k) {
      // Over the grid and a grid width beyond it on every side.
      const double span = double(h.cell) * resolution;
      queries.push_back({e, static_cast<float>(h.x0 - span + 3.0 * span * rng.next()), static_cast<float>(h.y0 - span + 3.0 * span * rng.next())});
      x.push_back(queries.back().x);
      y.push_back(queries.back().y);
    }
  }
  const std::vector<sample_answer> expected = sample_on_backend(field, queries, r.stream);
  using buffers = course_rig<tg::presets::elevated_track_pipeline, Policy>;
  typename buffers::template buffer<float> bx(x.size()), by(y.size()), out(x.size());
  typename buffers::template buffer<float2> gradient(x.size());
  bx.upload(x, r.stream);
  by.upload(y, r.stream);
  tg::sample_heights<backend_type>(field.view(), bx.data(), by.data(), per_env, out.data(), gradient.data(), r.stream.get());
  const std::vector<float> got = out.download(r.stream);
  const std::vector<float2> got_gradient = gradient.download(r.stream);
  for (std::size_t i = 0; i < queries.size(); ++i) {
    INFO("point " << i << " env " << queries[i].env);
    CHECK(same_bits(got[i], expected[i].z));
    CHECK(same_bits(got_gradient[i].x, expected[i].gradient.x));
    CHECK(same_bits(got_gradient[i].y, expected[i].gradient.y));
    CHECK(std::fabs(got[i] - reference_sample(fc, queries[i].env, queries[i].x, queries[i].y)) <= 1e-5 * (1.0 + std::fabs(got[i])));
  }
  // Without the gradient: the same heights.
  tg::sample_heights<backend_type>(field.view(), bx.data(), by.data(), per_env, out.data(), nullptr, r.stream.get());
  CHECK(out.download(r.stream) == got);
  CHECK_THROWS_WITH_AS(tg::sample_heights<backend_type>(field.view(), bx.data(), by.data(), 0, out.data(), nullptr, r.stream.get()),
                       doctest::Contains("points_per_env = 0"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(tg::sample_heights<backend_type>(field.view(), bx.data(), nullptr, per_env, out.data(), nullptr, r.stream.get()),
                       doctest::Contains("sample_heights: y is null"), std::invalid_argument);
}

TEST_CASE_TEMPLATE_DEFINE("heightfield bake of a mask or a list of envs: the others' bits untouched", Policy,
                          heightfield_subset) {
  const int num_envs = 6, resolution = 20;
  const tg::track_params p = case_params(elevated_case::harmonics, num_envs, 5);
  course_rig<tg::presets::elevated_track_pipeline, Policy> r(p, 0.6f);
  const tg::track_batch_ref batch = r.course.view().batch();
  tg::heightfield<Policy> field(num_envs, resolution, 2.0f, r.stream.get());
  field.bake(batch, r.stream.get());
  const field_copy before = download(field, r.stream);
  const std::vector<std::int32_t> mask = {0, 1, 0, 0, 1, 1};
  r.regenerate(mask, true);  // new tracks for envs 1, 4, 5
  typename course_rig<tg::presets::elevated_track_pipeline, Policy>::template buffer<std::int32_t> mask_buffer(mask.size());
  mask_buffer.upload(mask, r.stream);
  field.bake(batch, mask_buffer.data(), r.stream.get());
  const field_copy after = download(field, r.stream);
  tg::heightfield<Policy> fresh(num_envs, resolution, 2.0f, r.stream.get());
  fresh.bake(batch, r.stream.get());
  const field_copy full = download(fresh, r.stream);
  const std::size_t per = static_cast<std::size_t>(resolution) * resolution;
  auto same = [&](const field_copy& a, const field_copy& b, int e) {
    return std::memcmp(&a.header(e), &b.header(e), sizeof(tg::heightfield_header)) == 0 &&
           std::memcmp(a.texels.data() + e * per, b.texels.data() + e * per, per * sizeof(float)) == 0;
  };
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e << " mask " << mask[static_cast<std::size_t>(e)]);
    if (mask[static_cast<std::size_t>(e)] != 0) {
      CHECK(same(after, full, e));          // re-baked from the new track
      CHECK_FALSE(same(after, before, e));  // which differs from the old one
    } else {
      CHECK(same(after, before, e));  // untouched
      CHECK(same(full, before, e));   // (its track did not change)
    }
  }
  // A list: envs 3 and 0 (and ids out of range, skipped) into a zeroed field; the rest stay zero.
  tg::heightfield<Policy> listed(num_envs, resolution, 2.0f, r.stream.get());
  const std::vector<int> ids = {3, -1, 0, num_envs};
  typename course_rig<tg::presets::elevated_track_pipeline, Policy>::template buffer<int> id_buffer(ids.size());
  id_buffer.upload(ids, r.stream);
  listed.bake(batch, id_buffer.data(), static_cast<int>(ids.size()), r.stream.get());
  const field_copy got = download(listed, r.stream);
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e);
    if (e == 0 || e == 3) {
      CHECK(same(got, full, e));
    } else {
      CHECK(got.header(e).cell == 0.0f);
      CHECK(std::all_of(got.texels.begin() + e * per, got.texels.begin() + (e + 1) * per, [](float v) { return v == 0.0f; }));
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("course::attach_heightfield: baked at once, then only the regenerated envs at each regenerate",
                          Policy, heightfield_course) {
  const int num_envs = 5, resolution = 24;
  const tg::track_params p = case_params(elevated_case::gate_course, num_envs, 23);
  course_rig<tg::presets::gate_course_pipeline, Policy> r(p, tg::presets::gate_course_spacing(p));
  const tg::track_batch_ref batch = r.course.view().batch();
  tg::heightfield<Policy> attached(num_envs, resolution, 1.5f, r.stream.get());
  CHECK(r.course.heights().texels(0) == nullptr);
  r.course.attach_heightfield(&attached, r.stream.get());
  CHECK(r.course.heights().texels(0) == attached.view().texels(0));
  // An SDF attached too: both bake in each regenerate, the heightfield after it.
  tg::sdf_field<Policy> sdf(num_envs, 16, r.stream.get());
  r.course.attach_sdf(&sdf, r.stream.get());
  tg::heightfield<Policy> reference(num_envs, resolution, 1.5f, r.stream.get());
  reference.bake(batch, r.stream.get());
  const field_copy first = download(attached, r.stream);
  CHECK(first.texels == download(reference, r.stream).texels);  // every env baked at attach
  const std::vector<std::int32_t> mask = {1, 0, 0, 1, 0};
  r.regenerate(mask, true);
  reference.bake(batch, r.stream.get());
  const field_copy after = download(attached, r.stream), expected = download(reference, r.stream);
  const std::size_t per = static_cast<std::size_t>(resolution) * resolution;
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e);
    const bool same_as_expected =
        std::equal(after.texels.begin() + e * per, after.texels.begin() + (e + 1) * per, expected.texels.begin() + e * per);
    const bool same_as_first =
        std::equal(after.texels.begin() + e * per, after.texels.begin() + (e + 1) * per, first.texels.begin() + e * per);
    CHECK(same_as_expected);  // re-baked envs follow their new track; the others never changed
    CHECK(same_as_first == (mask[static_cast<std::size_t>(e)] == 0));
  }
#if defined(__CUDACC__)
  if constexpr (!std::is_same_v<typename Policy::backend_type, tg::backend::host>) {
    // Recorded into a CUDA graph (regenerate under the policy's conditional node, then the
    // SDF's and the heightfield's bakes after it): a replay regenerates and re-bakes the same
    // envs as the eager calls, bit for bit; a replay with an all-zero mask changes nothing.
    std::vector<std::int32_t> again = {0, 1, 0, 0, 1};
    typename course_rig<tg::presets::gate_course_pipeline, Policy>::template buffer<std::int32_t> again_buffer(again.size());
    again_buffer.upload(again, r.stream);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    check_cuda(cudaStreamBeginCapture(r.stream.raw(), cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    r.course.regenerate(again_buffer.data(), true, r.stream.get());
    check_cuda(cudaStreamEndCapture(r.stream.raw(), &graph), "cudaStreamEndCapture");
    check_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    check_cuda(cudaGraphLaunch(exec, r.stream.raw()), "cudaGraphLaunch");
    r.stream.synchronize();
    reference.bake(batch, r.stream.get());
    const field_copy replayed = download(attached, r.stream);
    CHECK(replayed.texels == download(reference, r.stream).texels);
    CHECK_FALSE(replayed.texels == after.texels);  // envs 1 and 4 changed
    std::fill(again.begin(), again.end(), 0);
    again_buffer.upload(again, r.stream);
    check_cuda(cudaGraphLaunch(exec, r.stream.raw()), "cudaGraphLaunch");
    r.stream.synchronize();
    CHECK(download(attached, r.stream).texels == replayed.texels);
    (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
  }
#endif
  tg::heightfield<Policy> wrong(num_envs + 1, resolution, 0.0f, r.stream.get());
  CHECK_THROWS_WITH_AS(r.course.attach_heightfield(&wrong, r.stream.get()), doctest::Contains("num_envs = 6"),
                       std::invalid_argument);
  r.course.attach_heightfield(static_cast<const tg::heightfield<Policy>*>(nullptr), r.stream.get());
  CHECK(r.course.heights().texels(0) == nullptr);
}

TEST_CASE_TEMPLATE_DEFINE("heightfield bad parameters name themselves and their range", Policy, heightfield_invalid) {
  using field_type = tg::heightfield<Policy>;
  course_rig<tg::presets::elevated_track_pipeline, Policy> r(case_params(elevated_case::random_walk, 2, 3), 0.6f);
  for (const int bad : {1, 513, 0, -4}) {
    INFO("resolution " << bad);
    CHECK_THROWS_WITH_AS(field_type(2, bad, 0.0f, r.stream.get()), doctest::Contains("heightfield.resolution"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(field_type(2, bad, 0.0f, r.stream.get()), doctest::Contains("expected [2, 512]"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(field_type::required_bytes(2, bad), doctest::Contains("heightfield.resolution"), std::invalid_argument);
  }
  for (const float bad : {-0.5f, 1.5e6f, NAN, INFINITY}) {
    INFO("margin " << bad);
    CHECK_THROWS_WITH_AS(field_type(2, 8, bad, r.stream.get()), doctest::Contains("heightfield.margin"), std::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(field_type(0, 64, 0.0f, r.stream.get()), doctest::Contains("heightfield.num_envs"), std::invalid_argument);
  CHECK(field_type::required_bytes(8192, 64) == 8192u * 16u + 8192u * 64u * 64u * 4u);  // 16-byte headers, 256-aligned
  field_type field(2, 2, 0.0f, r.stream.get());  // the bounds themselves are accepted
  field_type wide(3, 512, 1e6f, r.stream.get());
  CHECK(wide.resolution() == 512);
  CHECK(wide.margin() == 1e6f);
  const tg::track_batch_ref batch = r.course.view().batch();
  CHECK_THROWS_WITH_AS(wide.bake(batch, r.stream.get()), doctest::Contains("tracks.num_envs() = 2"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(field.bake(batch, nullptr, 1, r.stream.get()), doctest::Contains("envs is null"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(field.bake(batch, nullptr, -1, r.stream.get()), doctest::Contains("count = -1"), std::invalid_argument);
  // R = 2: one bilinear cell; its four texels are the heights at the four centres (brute force).
  field.bake(batch, r.stream.get());
  const field_copy fc = download(field, r.stream);
  const tg::track_snapshot t = r.tracks();
  for (int e = 0; e < 2; ++e)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) {
        const tg::heightfield_header h = fc.header(e);
        const std::vector<double> ref = brute_heights(t, e, h.x0 + (i + 0.5f) * h.cell, h.y0 + (j + 0.5f) * h.cell, 1e-4);
        bool ok = false;
        for (const double z : ref) ok = ok || std::fabs(fc.texel(e, i, j) - z) <= 2e-5 + 2e-6 * std::fabs(z);
        CHECK(ok);
      }
  field_type moved = std::move(field);
  CHECK_THROWS_AS((void)field.view(), std::logic_error);
  CHECK(moved.view().resolution() == 2);
}

}  // namespace heightfield_test
