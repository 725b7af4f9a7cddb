#pragma once
/// @file
/// sdf.hpp against independent references:
/// - texel centres: every texel of a baked grid against the signed distance d of collision.hpp
///   computed by brute force in double (the nearest of all centreline segments in the xy plane,
///   the lateral offset along the interpolated normal at that foot, d = min(wl - n, n + wr)), on
///   generated tracks; the grid covers the borders with its margin;
/// - boxes: random boxes over the grid against the exact backend (collide_box, full search), on
///   generated tracks and on the closed-form stadium of collision_cases.hpp (asymmetric and
///   varying half-widths): out-of-bounds flags agree on >= 99.5 % of boxes, and the clearance
///   is within one cell diagonal (scaled by the half-width slope where it varies);
/// - masked and listed bakes: after a masked regeneration, a masked bake makes the regenerated
///   envs bit-identical to a full bake of the new tracks and leaves every other env's header and
///   texels bit-identical to before; a list bake the same;
/// - course::attach_sdf: baked at attach, then a masked regenerate re-bakes exactly its envs
///   (CUDA: also recorded into a graph and replayed);
/// - bad parameters throw std::invalid_argument naming the parameter and its range; invalid boxes
///   give the invalid bit; sdf_ref is trivially copyable.
/// Templated over the backend policy; applied in sdf_test.cpp (host) and .cu (CUDA).

#include "collision/grid_copy.hpp"
#include "progress/collision_cases.hpp"

#include <track_gen/sdf.hpp>

#include <cstring>
#include <type_traits>

namespace sdf_test {

using namespace progress_test;

static_assert(std::is_trivially_copyable_v<tg::sdf_ref>, "sdf_ref is passed to kernels by value");
static_assert(std::is_trivially_copyable_v<tg::sdf_header>);

/// A field's headers and texels, copied to the host.
using field_copy = grid_test::grid_copy;

template <class Policy>
field_copy download(const tg::sdf_field<Policy>& f, rig<Policy>& r) {
  return grid_test::download_grid(f, r.stream());
}

/// collision.hpp's d at the planar point (x, y) of env e by brute force in double: every segment
/// whose distance is within `tie` of the least gives a candidate (a point equidistant from two
/// parts of the track may take its foot on either); returns the candidates' d.
inline std::vector<double> brute_d(const tg::track_snapshot& t, int e, double x, double y, double tie) {
  const int n = t.num_samples;
  std::vector<double> dist(static_cast<std::size_t>(n)), tt(static_cast<std::size_t>(n));
  double best = 1e300;
  for (int k = 0; k < n; ++k) {
    const float3 a = t.position[t.sample_index(e, k)], b = t.position[t.sample_index(e, (k + 1) % n)];
    const double dx = double(b.x) - a.x, dy = double(b.y) - a.y, len2 = dx * dx + dy * dy;
    const double u = len2 > 0 ? std::clamp(((x - a.x) * dx + (y - a.y) * dy) / len2, 0.0, 1.0) : 0.0;
    dist[static_cast<std::size_t>(k)] = std::hypot(x - (a.x + u * dx), y - (a.y + u * dy));
    tt[static_cast<std::size_t>(k)] = u;
    best = std::min(best, dist[static_cast<std::size_t>(k)]);
  }
  std::vector<double> out;
  for (int k = 0; k < n; ++k) {
    if (dist[static_cast<std::size_t>(k)] > best + tie) continue;
    const double u = tt[static_cast<std::size_t>(k)];
    const std::size_t i0 = t.sample_index(e, k), i1 = t.sample_index(e, (k + 1) % n);
    auto mix = [u](double a, double b) { return a + u * (b - a); };
    const double fx = mix(t.position[i0].x, t.position[i1].x), fy = mix(t.position[i0].y, t.position[i1].y);
    double nx = mix(t.normal[i0].x, t.normal[i1].x), ny = mix(t.normal[i0].y, t.normal[i1].y);
    const double nz = mix(t.normal[i0].z, t.normal[i1].z), len = std::sqrt(nx * nx + ny * ny + nz * nz);
    nx /= len;
    ny /= len;
    const double lateral = (x - fx) * nx + (y - fy) * ny;
    const double wl = mix(t.half_widths[i0].x, t.half_widths[i1].x), wr = mix(t.half_widths[i0].y, t.half_widths[i1].y);
    out.push_back(std::min(wl - lateral, lateral + wr));
  }
  return out;
}

/// Generated tracks (presets::track) of a rig.
inline tg::track_params generated_params(int num_envs, std::uint64_t seed) {
  tg::track_params p = tg::presets::track(num_envs);
  p.seed = seed;
  return p;
}

struct sdf_box_fn {
  tg::sdf_ref field;
  TRACK_GEN_HD tg::box_contact operator()(const tg::course_ref&, const box_query& q) const {
    return field.collide_box(q.env, q.b);
  }
};

/// Random boxes over env e's grid (every corner within its texel centres' square, the field's
/// domain), 64 yaws, car-like extents scaled by `scale`.
inline void random_boxes(const tg::sdf_header& h, int resolution, int e, double scale, int count, lcg& rng,
                         std::vector<box_query>& queries) {
  const double lo_x = h.x0 + 0.5 * h.cell, lo_y = h.y0 + 0.5 * h.cell, span = h.cell * (resolution - 1);
  for (int i = 0; i < count;) {
    const double yaw = 2.0 * pi * (i % 64) / 64.0;
    const double hx = scale * (0.5 + 1.7 * rng.next()), hy = scale * (0.3 + 0.7 * rng.next());
    const double cx = lo_x + rng.next() * span, cy = lo_y + rng.next() * span;
    const corners_ref c = corners_of(cx, cy, yaw, hx, hy);
    bool inside = true;
    for (int k = 0; k < 4; ++k)
      inside = inside && c.x[k] > lo_x && c.x[k] < lo_x + span && c.y[k] > lo_y && c.y[k] < lo_y + span;
    if (!inside) continue;
    queries.push_back({e, make_box(v3(cx, cy, 0.0), yaw, hx, hy), 0, 0});
    ++i;
  }
}

/// Random boxes centred on or near env e's band: a random point of the centreline polygon moved
/// along its normal by an offset in [-wr - margin, wl + margin].
inline void band_boxes(const tg::track_snapshot& t, int e, double scale, double margin, int count, lcg& rng,
                       std::vector<box_query>& queries) {
  for (int i = 0; i < count; ++i) {
    const polygon_point q = polygon_at(t, e, rng.next() * t.length[static_cast<std::size_t>(e)]);
    const std::size_t k = t.sample_index(e, q.segment);
    const double wl = t.half_widths[k].x, wr = t.half_widths[k].y;
    const double lateral = -wr - margin + rng.next() * (wl + wr + 2.0 * margin);
    const float3 c = v3(q.x + q.nx * lateral, q.y + q.ny * lateral, 0.0);
    queries.push_back({e, make_box(c, 2.0 * pi * rng.next(), scale * (0.5 + 1.7 * rng.next()), scale * (0.3 + 0.7 * rng.next())), 0, 0});
  }
}

/// Compares the field's contacts with the exact ones: returns the fraction of agreeing
/// out-of-bounds flags; checks every clearance against `bound` (one cell diagonal, scaled).
inline double compare_contacts(const std::vector<tg::box_contact>& field, const std::vector<tg::box_contact>& exact,
                               const std::vector<box_query>& queries, const field_copy& fc,
                               const std::vector<double>& slope) {
  int agree = 0, inside = 0, outside = 0;
  double worst = 0.0;
  for (std::size_t u = 0; u < queries.size(); ++u) {
    const tg::box_contact& f = field[u];
    const tg::box_contact& x = exact[u];
    const int e = queries[u].env;
    const double cell = fc.headers[static_cast<std::size_t>(e)].cell;
    const double bound = std::sqrt(2.0) * cell * std::sqrt(1.0 + slope[static_cast<std::size_t>(e)] * slope[static_cast<std::size_t>(e)]) + 1e-3;
    INFO("box " << u << " env " << e << " at (" << queries[u].b.centre.x << ", " << queries[u].b.centre.y
                << "): field clearance " << f.clearance << ", exact " << x.clearance << ", cell " << cell);
    CHECK((f.flags & tg::contact_flags::invalid) == 0u);
    CHECK(std::fabs(double(f.clearance) - x.clearance) <= bound);
    worst = std::max(worst, std::fabs(double(f.clearance) - x.clearance) / cell);
    CHECK(((f.flags & tg::contact_flags::out_of_bounds) != 0u) == (f.clearance < 0.0f));
    CHECK(std::fabs(std::hypot(f.normal.x, f.normal.y) - 1.0) < 1e-4);
    // nearest = corner - normal * clearance.
    agree += ((f.flags ^ x.flags) & tg::contact_flags::out_of_bounds) == 0u ? 1 : 0;
    inside += x.clearance > 0.0f ? 1 : 0;
    outside += x.clearance < 0.0f ? 1 : 0;
  }
  MESSAGE("worst clearance error " << worst << " cells; out-of-bounds agreement " << agree << " / " << queries.size()
                                   << " (" << inside << " boxes on the road, " << outside << " off it)");
  CHECK(inside > static_cast<int>(queries.size()) / 50);  // both kinds of box are tested
  CHECK(outside > static_cast<int>(queries.size()) / 50);
  return static_cast<double>(agree) / static_cast<double>(queries.size());
}

// ---------------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE_DEFINE("sdf texel centres equal the exact d (brute force in double) on generated tracks", Policy,
                          sdf_texels) {
  const int num_envs = 3, resolution = small_scale() ? 32 : 64;
  rig<Policy> r(generated_params(num_envs, 41), 0.6f);
  const tg::track_snapshot t = r.tracks();
  tg::sdf_field<Policy> field(num_envs, resolution, r.stream().get());
  field.bake(r.course().view().batch(), r.stream().get());
  const field_copy fc = download(field, r);
  for (int e = 0; e < num_envs; ++e) {
    REQUIRE(has(t.status[static_cast<std::size_t>(e)], tg::status::valid));
    const tg::sdf_header h = fc.headers[static_cast<std::size_t>(e)];
    // The grid covers both borders with at least 1.5 cells to spare on every side (2 by design).
    double lo_x = 1e300, lo_y = 1e300, hi_x = -1e300, hi_y = -1e300;
    for (int k = 0; k < t.num_samples; ++k) {
      for (const float3 p : {t.border_left[t.sample_index(e, k)], t.border_right[t.sample_index(e, k)]}) {
        lo_x = std::min(lo_x, double(p.x)), hi_x = std::max(hi_x, double(p.x));
        lo_y = std::min(lo_y, double(p.y)), hi_y = std::max(hi_y, double(p.y));
      }
    }
    const double extent = h.cell * resolution;
    CHECK(h.cell > 0.0f);
    CHECK(h.inv_cell == doctest::Approx(1.0 / h.cell));
    CHECK(h.x0 <= lo_x - 1.5 * h.cell);
    CHECK(h.y0 <= lo_y - 1.5 * h.cell);
    CHECK(h.x0 + extent >= hi_x + 1.5 * h.cell);
    CHECK(h.y0 + extent >= hi_y + 1.5 * h.cell);
    CHECK(std::max(hi_x - lo_x, hi_y - lo_y) == doctest::Approx(h.cell * (resolution - 4)).epsilon(1e-4));
    int on_road = 0, mismatches = 0;
    for (int j = 0; j < resolution; ++j) {
      for (int i = 0; i < resolution; ++i) {
        const float x = h.x0 + (static_cast<float>(i) + 0.5f) * h.cell, y = h.y0 + (static_cast<float>(j) + 0.5f) * h.cell;
        const std::vector<double> ref = brute_d(t, e, x, y, 1e-4);
        const float got = fc.texel(e, i, j);
        // float32: coordinates of tens of metres carry ~4e-6 m; the foot's parameter and normal add a little.
        const double tol = 5e-5 + 2e-6 * std::fabs(ref.front());
        bool ok = false;
        for (const double d : ref) ok = ok || std::fabs(got - d) <= tol;
        INFO("env " << e << " texel (" << i << ", " << j << ") at (" << x << ", " << y << "): " << got << ", reference "
                    << ref.front() << " (" << ref.size() << " candidate feet)");
        CHECK(ok);
        mismatches += ok ? 0 : 1;
        on_road += got > 0.0f ? 1 : 0;
      }
    }
    CHECK(on_road > resolution);  // the road crosses the grid
    CHECK(mismatches == 0);
  }
}

TEST_CASE_TEMPLATE_DEFINE("sdf collide_box against the exact backend: generated tracks and the closed-form stadium",
                          Policy, sdf_boxes) {
  const int count = scaled(4000, 400);
  lcg rng{99u};
  SUBCASE("generated tracks, R = 256") {
    const int num_envs = 3, resolution = 256;
    rig<Policy> r(generated_params(num_envs, 7), 0.6f);
    tg::sdf_field<Policy> field(num_envs, resolution, r.stream().get());
    const tg::track_batch_ref batch = r.course().view().batch();
    field.bake(batch, r.stream().get());
    const field_copy fc = download(field, r);
    const tg::track_snapshot t = r.tracks();
    std::vector<box_query> queries;
    // Boxes of the road's scale (half-width 0.3 m): 0.12-0.55 m long halves; over the grid, and
    // as many on or near the band.
    for (int e = 0; e < num_envs; ++e) {
      random_boxes(fc.headers[static_cast<std::size_t>(e)], resolution, e, 0.25, count, rng, queries);
      band_boxes(t, e, 0.25, 0.4, count, rng, queries);
    }
    const std::vector<tg::box_contact> got = map_on_backend(r, sdf_box_fn{field.view()}, queries);
    const std::vector<tg::box_contact> exact =
        map_on_backend(r, collide_box_fn{batch.arrays(), batch.num_samples(), batch.max_gates()}, queries);
    const double agreement = compare_contacts(got, exact, queries, fc, std::vector<double>(num_envs, 0.0));
    CHECK(agreement >= 0.995);
  }
  SUBCASE("stadium with asymmetric (env 0) and varying (env 1) half-widths, R = 128") {
    stadium_rig<Policy> sr;
    const int resolution = 128;
    const tg::track_batch_ref batch(sr.copy->arrays, sr.t.num_envs, sr.t.num_samples, sr.t.max_gates);
    tg::sdf_field<Policy> field(sr.t.num_envs, resolution, sr.r.stream().get());
    field.bake(batch, sr.r.stream().get());
    const field_copy fc = download(field, sr.r);
    std::vector<box_query> queries;
    for (int e = 0; e < 2; ++e) random_boxes(fc.headers[static_cast<std::size_t>(e)], resolution, e, 1.0, count, rng, queries);
    // Half of them again, centred on the band (most random centres of a stadium's box lie off it).
    for (int u = 0; u < count; ++u) {
      const int e = u % 2;
      const double s = rng.next() * sr.band.st.length();
      const double lateral = -sr.band.right(e, s) - 1.0 + rng.next() * (sr.band.left(e, s) + sr.band.right(e, s) + 2.0);
      queries.push_back({e, make_box(sr.band.st.at(s, lateral), 2.0 * pi * rng.next(), 0.4 + rng.next(), 0.3 + 0.3 * rng.next()), 0, 0});
    }
    const std::vector<tg::box_contact> got = map_on_backend(sr.r, sdf_box_fn{field.view()}, queries);
    const std::vector<tg::box_contact> exact = map_on_backend(sr.r, sr.collide(), queries);
    const double agreement = compare_contacts(got, exact, queries, fc, {sr.band.slope(0), sr.band.slope(1)});
    CHECK(agreement >= 0.995);
    // On the band, the field's normal points along the exact one (the cell is 0.6 m, the band 3 m
    // wide: where the critical corner is a cell from the centreline and the medial axis, the
    // bilinear gradient is the exact one's direction).
    int aligned = 0, compared = 0;
    for (std::size_t u = 2 * static_cast<std::size_t>(count); u < queries.size(); ++u) {
      if (got[u].corner != exact[u].corner || std::fabs(exact[u].clearance) > 1.0f) continue;
      ++compared;
      aligned += got[u].normal.x * exact[u].normal.x + got[u].normal.y * exact[u].normal.y > 0.9f ? 1 : 0;
    }
    MESSAGE("normals within 26 degrees of the exact: " << aligned << " / " << compared);
    CHECK(aligned >= 0.9 * compared);
  }
}

TEST_CASE_TEMPLATE_DEFINE("sdf bake of a mask or a list of envs: the others' bits untouched", Policy, sdf_subset) {
  const int num_envs = 6, resolution = 32;
  rig<Policy> r(generated_params(num_envs, 5), 0.6f);
  const tg::track_batch_ref batch = r.course().view().batch();
  tg::sdf_field<Policy> field(num_envs, resolution, r.stream().get());
  field.bake(batch, r.stream().get());
  const field_copy before = download(field, r);
  const std::vector<std::int32_t> mask = {0, 1, 0, 0, 1, 1};
  r.regenerate(mask, true);  // new tracks for envs 1, 4, 5
  typename rig<Policy>::template buffer<std::int32_t> mask_buffer(mask.size());
  mask_buffer.upload(mask, r.stream());
  field.bake(batch, mask_buffer.data(), r.stream().get());
  const field_copy after = download(field, r);
  tg::sdf_field<Policy> fresh(num_envs, resolution, r.stream().get());
  fresh.bake(batch, r.stream().get());
  const field_copy full = download(fresh, r);
  const std::size_t per = static_cast<std::size_t>(resolution) * resolution;
  auto same = [&](const field_copy& a, const field_copy& b, int e) {
    return std::memcmp(&a.headers[static_cast<std::size_t>(e)], &b.headers[static_cast<std::size_t>(e)], sizeof(tg::sdf_header)) == 0 &&
           std::memcmp(a.texels.data() + e * per, b.texels.data() + e * per, per * sizeof(float)) == 0;
  };
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e << " mask " << mask[static_cast<std::size_t>(e)]);
    if (mask[static_cast<std::size_t>(e)] != 0) {
      CHECK(same(after, full, e));     // re-baked from the new track
      CHECK_FALSE(same(after, before, e));  // which differs from the old one
    } else {
      CHECK(same(after, before, e));  // untouched
      CHECK(same(full, before, e));   // (its track did not change)
    }
  }
  // A list: envs 3 and 0 (and an id out of range, skipped) into a zeroed field; the rest stay zero.
  tg::sdf_field<Policy> listed(num_envs, resolution, r.stream().get());
  const std::vector<int> ids = {3, -1, 0, num_envs};
  typename rig<Policy>::template buffer<int> id_buffer(ids.size());
  id_buffer.upload(ids, r.stream());
  listed.bake(batch, id_buffer.data(), static_cast<int>(ids.size()), r.stream().get());
  const field_copy got = download(listed, r);
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e);
    if (e == 0 || e == 3) {
      CHECK(same(got, full, e));
    } else {
      CHECK(got.headers[static_cast<std::size_t>(e)].cell == 0.0f);
      CHECK(std::all_of(got.texels.begin() + e * per, got.texels.begin() + (e + 1) * per, [](float v) { return v == 0.0f; }));
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("course::attach_sdf: baked at once, then only the regenerated envs at each regenerate",
                          Policy, sdf_course) {
  const int num_envs = 5, resolution = 24;
  rig<Policy> r(generated_params(num_envs, 23), 0.6f);
  const tg::track_batch_ref batch = r.course().view().batch();
  tg::sdf_field<Policy> attached(num_envs, resolution, r.stream().get());
  r.course().attach_sdf(&attached, r.stream().get());
  CHECK(r.course().sdf().texels(0) == attached.view().texels(0));
  tg::sdf_field<Policy> reference(num_envs, resolution, r.stream().get());
  reference.bake(batch, r.stream().get());
  const field_copy first = download(attached, r);
  CHECK(first.texels == download(reference, r).texels);  // every env baked at attach
  const std::vector<std::int32_t> mask = {1, 0, 0, 1, 0};
  r.regenerate(mask, true);
  reference.bake(batch, r.stream().get());
  const field_copy after = download(attached, r), expected = download(reference, r);
  const std::size_t per = static_cast<std::size_t>(resolution) * resolution;
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e);
    const bool same_as_expected = std::equal(after.texels.begin() + e * per, after.texels.begin() + (e + 1) * per,
                                             expected.texels.begin() + e * per);
    const bool same_as_first = std::equal(after.texels.begin() + e * per, after.texels.begin() + (e + 1) * per,
                                          first.texels.begin() + e * per);
    CHECK(same_as_expected);  // re-baked envs follow their new track; the others never changed
    CHECK(same_as_first == (mask[static_cast<std::size_t>(e)] == 0));
  }
#if defined(__CUDACC__)
  if constexpr (!std::is_same_v<typename Policy::backend_type, tg::backend::host>) {
    // Recorded into a CUDA graph (regenerate + its bake): a replay regenerates and re-bakes the
    // same envs as the eager calls, bit for bit.
    const std::vector<std::int32_t> again = {0, 1, 0, 0, 1};
    typename rig<Policy>::template buffer<std::int32_t> again_buffer(again.size());
    again_buffer.upload(again, r.stream());
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    check_cuda(cudaStreamBeginCapture(r.stream().raw(), cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    r.course().regenerate(again_buffer.data(), true, r.stream().get());
    check_cuda(cudaStreamEndCapture(r.stream().raw(), &graph), "cudaStreamEndCapture");
    check_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    check_cuda(cudaGraphLaunch(exec, r.stream().raw()), "cudaGraphLaunch");
    r.stream().synchronize();
    reference.bake(batch, r.stream().get());
    const field_copy replayed = download(attached, r);
    CHECK(replayed.texels == download(reference, r).texels);
    CHECK_FALSE(replayed.texels == after.texels);  // envs 1 and 4 changed
    (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
  }
#endif
  tg::sdf_field<Policy> wrong(num_envs + 1, resolution, r.stream().get());
  CHECK_THROWS_WITH_AS(r.course().attach_sdf(&wrong, r.stream().get()), doctest::Contains("num_envs = 6"), std::invalid_argument);
  r.course().attach_sdf(static_cast<const tg::sdf_field<Policy>*>(nullptr), r.stream().get());
  CHECK(r.course().sdf().texels(0) == nullptr);
}

TEST_CASE_TEMPLATE_DEFINE("sdf bad parameters name themselves; invalid boxes set the invalid bit", Policy, sdf_invalid) {
  using field_type = tg::sdf_field<Policy>;
  rig<Policy> r(generated_params(2, 3), 0.6f);
  for (const int bad : {7, 513, 0, -4}) {
    INFO("resolution " << bad);
    CHECK_THROWS_WITH_AS(field_type(2, bad, r.stream().get()), doctest::Contains("sdf_field.resolution"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(field_type::required_bytes(2, bad), doctest::Contains("expected [8, 512]"), std::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(field_type(0, 64, r.stream().get()), doctest::Contains("sdf_field.num_envs"), std::invalid_argument);
  CHECK(field_type::required_bytes(8192, 128) == 8192u * 16u + 8192u * 128u * 128u * 4u);  // 16-byte headers, 256-aligned
  field_type field(2, 8, r.stream().get());
  field_type wide(3, 512, r.stream().get());
  CHECK(wide.resolution() == 512);
  const tg::track_batch_ref batch = r.course().view().batch();
  CHECK_THROWS_WITH_AS(wide.bake(batch, r.stream().get()), doctest::Contains("tracks.num_envs() = 2"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(field.bake(batch, nullptr, 1, r.stream().get()), doctest::Contains("envs is null"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(field.bake(batch, nullptr, -1, r.stream().get()), doctest::Contains("count = -1"), std::invalid_argument);
  field.bake(batch, r.stream().get());
  tg::box b = make_box(v3(0, 0, 0), 0.0, 1.0, 0.5);
  b.half_extents.x = -1.0f;
  std::vector<box_query> queries = {{0, b, 0, 0}};
  const tg::box_contact c = map_on_backend(r, sdf_box_fn{field.view()}, queries).front();
  CHECK(c.flags == tg::contact_flags::invalid);
  CHECK(std::isnan(c.clearance));
  field_type moved = std::move(field);
  CHECK_THROWS_AS((void)field.view(), std::logic_error);
  CHECK(moved.view().resolution() == 8);
}

}  // namespace sdf_test
