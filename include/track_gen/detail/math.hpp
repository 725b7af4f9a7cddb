#pragma once
/// @file
/// Small float3 vector helpers shared by both backends (host and device).

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/param_ranges.hpp>

#include <cmath>

namespace track_gen::detail {

TRACK_GEN_HD inline float3 f3(float x, float y, float z) {
  float3 r;
  r.x = x;
  r.y = y;
  r.z = z;
  return r;
}
TRACK_GEN_HD inline float2 f2(float x, float y) {
  float2 r;
  r.x = x;
  r.y = y;
  return r;
}
TRACK_GEN_HD inline float3 operator+(float3 a, float3 b) { return f3(a.x + b.x, a.y + b.y, a.z + b.z); }
TRACK_GEN_HD inline float3 operator-(float3 a, float3 b) { return f3(a.x - b.x, a.y - b.y, a.z - b.z); }
TRACK_GEN_HD inline float3 operator*(float3 a, float s) { return f3(a.x * s, a.y * s, a.z * s); }
TRACK_GEN_HD inline float3 operator*(float s, float3 a) { return a * s; }
TRACK_GEN_HD inline float dot(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
TRACK_GEN_HD inline float3 cross(float3 a, float3 b) {
  return f3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
TRACK_GEN_HD inline float length(float3 a) { return std::sqrt(dot(a, a)); }
TRACK_GEN_HD inline float3 lerp(float3 a, float3 b, float t) { return a + (b - a) * t; }
TRACK_GEN_HD inline float lerp(float a, float b, float t) { return a + (b - a) * t; }
/// a * b rounded on its own, never fused with an add that uses it. nvcc fuses a product into a
/// multiply-add where it is used, and for a product used more than once that choice depends on
/// the kernel the code is inlined into: two pipelines would then build different bits from the
/// same stage code. Stages write such products with mul_rn / mul_add.
TRACK_GEN_HD inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
/// mul_rn in double.
TRACK_GEN_HD inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
/// a * b + c as one fused multiply-add on the device (what nvcc makes of a single-use product),
/// a * b + c as the host compiler evaluates it.
TRACK_GEN_HD inline float mul_add(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return a * b + c;
#endif
}

/// float3 products with every product rounded on its own (mul_rn): the same bits on the host and
/// the device, whatever kernel the code is inlined into.
TRACK_GEN_HD inline float dot_rn(float3 a, float3 b) { return mul_rn(a.x, b.x) + mul_rn(a.y, b.y) + mul_rn(a.z, b.z); }
TRACK_GEN_HD inline float3 scale_rn(float3 a, float s) { return f3(mul_rn(a.x, s), mul_rn(a.y, s), mul_rn(a.z, s)); }
TRACK_GEN_HD inline float3 cross_rn(float3 a, float3 b) {
  return f3(mul_rn(a.y, b.z) - mul_rn(a.z, b.y), mul_rn(a.z, b.x) - mul_rn(a.x, b.z), mul_rn(a.x, b.y) - mul_rn(a.y, b.x));
}
TRACK_GEN_HD inline bool is_finite(float v) { return std::isfinite(v); }
TRACK_GEN_HD inline bool is_finite(float3 a) { return is_finite(a.x) && is_finite(a.y) && is_finite(a.z); }
/// Every coordinate of `p` within [-max_position, max_position] (param_ranges.hpp): false for NaN
/// and Inf as for finite coordinates beyond the bound. The cost of is_finite (an isfinite is a
/// compare of |x| against Inf), and no branch (bitwise &).
TRACK_GEN_HD inline bool is_position(float3 p) {
  constexpr float bound = static_cast<float>(max_position);
  return (std::fabs(p.x) <= bound) & (std::fabs(p.y) <= bound) & (std::fabs(p.z) <= bound);
}
TRACK_GEN_HD inline float min_f(float a, float b) { return a < b ? a : b; }
TRACK_GEN_HD inline float max_f(float a, float b) { return a > b ? a : b; }
TRACK_GEN_HD inline float clamp_f(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }
/// Unit vector along `a`, or `fallback` when `a` is (nearly) zero.
TRACK_GEN_HD inline float3 normalize_or(float3 a, float3 fallback) {
  const float n = length(a);
  return n > 1e-20f ? a * (1.0f / n) : fallback;
}
/// The frame of a centreline sample: unit tangent and horizontal unit left normal.
struct sample_frame {
  float3 tangent, left;
};
/// The frame of the sample between `before` and `after` (its neighbours along the centreline):
/// the tangent by central difference, the left normal level, 90 degrees counter-clockwise of
/// it. stages::frames stores it per sample, and track_ref::projection_at recomputes it from the
/// samples instead of loading it: one formula, the same bits.
TRACK_GEN_HD inline sample_frame frame_between(float3 before, float3 after) {
  const float3 t = normalize_or(after - before, f3(1.0f, 0.0f, 0.0f));
  return {t, normalize_or(f3(-t.y, t.x, 0.0f), f3(0.0f, 1.0f, 0.0f))};
}
/// Index `i` wrapped into [0, n) for any integer `i` (closed curves).
TRACK_GEN_HD inline int wrap(int i, int n) {
  const int r = i % n;
  return r < 0 ? r + n : r;
}

/// Where element i of key[0, n) lands in a stable ascending sort: the number of elements of
/// smaller key, and of equal key and lower index (the order a stable insertion sort leaves; keys
/// not NaN). A block sorts n small arrays by scattering each element to its rank.
TRACK_GEN_HD inline int stable_rank(const float* key, int n, int i) {
  const float a = key[i];
  int place = 0;
  for (int j = 0; j < n; ++j) place += key[j] < a || (key[j] == a && j < i) ? 1 : 0;
  return place;
}

/// Closest point on segment [a, b] to p, as the parameter t in [0, 1].
TRACK_GEN_HD inline float closest_parameter(float3 p, float3 a, float3 b) {
  const float3 ab = b - a;
  const float den = dot(ab, ab);
  if (!(den > 0.0f)) return 0.0f;
  return clamp_f(dot(p - a, ab) / den, 0.0f, 1.0f);
}

constexpr float pi = 3.14159265358979323846f;

}  // namespace track_gen::detail
