#pragma once
/// @file
/// Gate sequences: the gates of a drone course without its course line, one thread (or a group
/// of lanes) per env (issue 15 item 1; the seed system's GateGenerator and GateSequence).
/// `gate_sequences<Policy>` owns E sequences of up to G_max gates and builds them;
/// `gate_sequence_ref` is its trivially copyable view, read in your kernels or on the host. When
/// you also need the course line (the spline through the gates, for progress, the localizer and
/// observations), use the gate-course pipeline instead (presets::gate_course_pipeline): the same
/// parameters and gate steps (run on the spline through the anchors), plus the line, resampled
/// and validated as a track, at about 30x the cost (docs/drones.md).
///
/// What one env's sequence is, from its track_params p (the gate-course pipeline's stages,
/// on the family's anchors instead of the spline through them):
/// 1. Anchors: the env's family (generator.family, or drawn from generator.weights as
///    stages::random_family draws it) gives its control polygon from the same random streams as
///    its generate stage: polar, its polar.control_points points; bezier, its corners; hull, its
///    corners and displaced edge midpoints (before Chaikin). voronoi and checkpoint build their
///    polygon from a walk or a site field, repulsive from a curve flow, and are refused (use the
///    pipeline).
/// 2. Ordering and count: gates.ordering (as generated or angle-sorted about the centroid);
///    a count G drawn uniformly in [gates.min_gates, gates.max_gates], anchor floor(j M / G) kept
///    as gate j when the family drew M > G (stages::gate_anchors).
/// 3. Altitude: unless elevation.profile is flat, z of gate i is the profile (knots, monotone
///    cubic: stages::elevation_profile) at its plan-view arc length fraction along the closed
///    polygon through the gates; flat keeps the anchors' z.
/// 4. Spacing: gates.spacing_iterations Jacobi rounds push every pair closer than
///    gates.min_spacing apart in 3D (stages::gate_spacing's solve, the same sums), each move's
///    z kept within [elevation.z_min, elevation.z_max] unless the profile is flat (the
///    pipeline's stage does not clamp: its gates may leave the band by half a deficit).
/// 5. Frame: forward is the tangent at the gate of the closed centripetal Catmull-Rom spline
///    through the gates (horizontal for gates.align yaw_only), so a course line drawn through
///    them crosses each gate straight; the gate's axes are track_gen::gate_axes(forward), its
///    quaternion gate_orientation, its posts gate_posts (gate_course.hpp), its opening
///    2 half_width wide and 2 gate_half_height high.
/// 6. Test: G in [min_gates, max_gates] and <= G_max; every pair of centres >= min_spacing
///    apart; no two gates' bars crossing; finite, unit, level-defined frames (status::fail_gates);
///    and, unless the profile is flat, consecutive gates (the closing pair too) rising at most
///    elevation.max_grade times their plan-view distance (status::fail_grade). Attempts:
///    up to validate.max_attempts, each from fresh draws (attempt index in the random stream);
///    the first that passes is kept (status::valid), else the last one, without status::valid
///    and with the failed tests' bits. No fallback. Bits 8..15: the attempts made.
///
/// Read only: num_envs, env_offset, seed, half_width, gate_half_height, generator, polar,
/// bezier, hull, elevation, gates and validate.max_attempts. The spline, validate's track
/// tests and the other families' parameters do not apply (every field must still be within its
/// range: the whole track_params is checked, as for a course).
///
/// Against the gate-course pipeline with the same parameters: polar sequences take the same
/// anchors (the pipeline's control points); bezier and hull ones take the family's corners
/// (and hull's edge midpoints), where the pipeline thins samples of the family's curve.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/gate_sequence/build.hpp>
#include <track_gen/detail/host_checks.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/detail/ops.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/gate_course.hpp>
#include <track_gen/params.hpp>
#include <track_gen/policy.hpp>
#include <track_gen/track_ref.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace track_gen {

/// Trivially copyable view of E gate sequences: pass it by value to kernels. Valid while the
/// owner lives. Pointers in the owner's memory space (device memory for backend::cuda).
/// Gate g of env e is stored at e * max_gates() + g; slots g >= count(e) hold NaN once the env
/// was generated (before its first generate: count 0, status 0 and zeros).
class gate_sequence_ref {
 public:
  gate_sequence_ref() = default;
  explicit gate_sequence_ref(const detail::gate_sequence_out& o, float half_width, float half_height)
      : out_(o), half_width_(half_width), half_height_(half_height) {}

  TRACK_GEN_HD int num_envs() const { return out_.num_envs; }
  /// G_max: gate slots per env (gates.max_gates).
  TRACK_GEN_HD int max_gates() const { return out_.max_gates; }
  /// Gates of env e, in [0, G_max] (fewer than gates.min_gates only when the sequence is not valid).
  TRACK_GEN_HD int count(int env) const { return out_.count[env]; }
  /// Status word of env e (status.hpp): status::valid, or the failed tests' bits; attempts in bits 8..15.
  TRACK_GEN_HD std::uint32_t status(int env) const { return out_.status[env]; }
  TRACK_GEN_HD bool valid(int env) const { return (out_.status[env] & status::valid) != 0u; }
  /// Episode of env e: 0 after construction, +1 at each advancing generate of the env.
  TRACK_GEN_HD std::uint32_t episode(int env) const { return out_.episode[env]; }
  /// Centre of gate g of env e [m] (g < count(e)).
  TRACK_GEN_HD float3 centre(int env, int g) const { return out_.centre[slot(env, g)]; }
  /// Unit forward direction of gate g of env e: the crossing direction, the gate plane's normal.
  TRACK_GEN_HD float3 forward(int env, int g) const { return out_.forward[slot(env, g)]; }
  /// Gate g of env e as progress tracking and gate_collision read it (arc_length 0: a
  /// sequence has no course line).
  TRACK_GEN_HD gate at(int env, int g) const { return gate{centre(env, g), forward(env, g), half_width_, 0.0f}; }
  /// Half-width [m] and half-height [m] of every opening (track_params::half_width, gate_half_height).
  TRACK_GEN_HD float half_width() const { return half_width_; }
  TRACK_GEN_HD float half_height() const { return half_height_; }
  /// The raw arrays (centre and forward [E * G_max] float3, count [E] int, status and episode [E] uint32).
  TRACK_GEN_HD const detail::gate_sequence_out& arrays() const { return out_; }

 private:
  TRACK_GEN_HD std::size_t slot(int env, int g) const {
    return static_cast<std::size_t>(env) * static_cast<std::size_t>(out_.max_gates) + static_cast<std::size_t>(g);
  }
  detail::gate_sequence_out out_{};
  float half_width_ = 0.0f;
  float half_height_ = 0.0f;
};

namespace detail {

/// Runs the builds of a mask's envs on `Backend` (primary: the host loop; the CUDA
/// specialisation, one thread per env, is in detail/gate_sequence/kernels.cuh).
template <class Backend>
struct gate_sequence_builder {
  static_assert(std::is_same_v<Backend, backend::host>,
                "backend::cuda needs a translation unit compiled by nvcc (a .cu file); use backend::host in plain C++.");
  static void prepare(std::size_t) {}
  static std::size_t shared_bytes(int) { return 0; }
  static void run(const track_params& p, const gate_sequence_out& out, env_mask mask, bool advance, int, host_stream) {
    for (int e = 0; e < out.num_envs; ++e)
      if (mask[e]) build_gate_sequence(p, e, advance, out);
  }
};

/// Throws std::invalid_argument unless every family `g` can draw has anchors a gate sequence
/// builds from (polar, bezier, hull) and polar's count fits the thread's arrays.
inline void check_gate_sequence_params(const track_params& p) {
  check_params(p, 1.0f);  // the checkpoint spacing is not read by gate sequences
  for (int f = 0; f < num_generator_families; ++f) {
    const auto family = static_cast<generator_family>(f);
    if (!family_in_use(p.generator, family)) continue;
    // Only these three have anchors here (build_gate_sequence would draw polar ones for any other).
    if (family != generator_family::polar && family != generator_family::bezier && family != generator_family::hull)
      throw std::invalid_argument(std::string("track_gen: gate_sequences: track_params.generator selects the '") +
                                  generator_family_names[f] +
                                  "' family, whose anchors gate sequences do not build (polar, bezier and hull only): " +
                                  (family == generator_family::repulsive
                                       ? std::string("no gate course draws it (presets::gate_course_pipeline leaves it out too): drop its "
                                                     "weight or choose another family")
                                       : std::string("use presets::gate_course_pipeline for it")));
  }
  if (p.relaxation.max_iterations > 0)
    throw std::invalid_argument("track_gen: gate_sequences: track_params.relaxation.max_iterations = " +
                                std::to_string(p.relaxation.max_iterations) +
                                " turns the centreline relaxation on, which gate sequences do not run (they build "
                                "no road to relax): set it to 0");
  if (family_in_use(p.generator, generator_family::polar) && p.polar.control_points > gate_sequence_max_anchors)
    throw std::invalid_argument("track_gen: gate_sequences: track_params.polar.control_points = " +
                                std::to_string(p.polar.control_points) + " is out of range: expected [4, " +
                                std::to_string(gate_sequence_max_anchors) + "] for gate sequences");
}

/// Float3 slots a group of lanes needs in each of its two arrays for `p` (the CUDA group
/// kernel's shared memory): the anchors any family in use draws before the thinning (polar: all
/// its points when angle-sorted, else at most gates.max_gates; bezier: corners_max; hull: twice
/// its corners_max), at least gates.max_gates, and 2 elevation.knots floats for the knots.
inline int gate_sequence_capacity(const track_params& p) {
  int cap = p.gates.max_gates;
  auto at_least = [&cap](int v) { cap = v > cap ? v : cap; };
  if (family_in_use(p.generator, generator_family::polar))
    at_least(p.gates.ordering == static_cast<int>(gate_ordering::angle_sorted) ? p.polar.control_points
                                                                               : std::min(p.polar.control_points, p.gates.max_gates));
  if (family_in_use(p.generator, generator_family::bezier)) at_least(p.bezier.corners_max);
  if (family_in_use(p.generator, generator_family::hull)) at_least(2 * p.hull.corners_max);
  if (p.elevation.profile != elevation_kind::flat) at_least((2 * p.elevation.knots + 2) / 3);
  return cap;
}

}  // namespace detail

/// E gate sequences of up to gates.max_gates gates each (file comment), built by `generate`.
/// Sized at construction; nothing allocates afterwards. Move-only.
///
/// Memory: E (24 G_max + 12) bytes, in one allocation (E = 1M, G_max = 12: 315 MB).
///
/// @tparam Policy backend (policy.hpp): device memory of the current device for backend::cuda
///         (a .cu translation unit), host memory for backend::host.
template <class Policy = policy<>>
class gate_sequences {
  using backend_type = typename Policy::backend_type;
  using ops = typename detail::backend_ops<backend_type>::type;
  using builder = detail::gate_sequence_builder<backend_type>;

 public:
  using stream_type = typename backend_type::stream_type;

  /// Bytes of the one allocation for `params` (256-byte aligned parts).
  /// @throws std::invalid_argument as the constructor.
  static std::size_t required_bytes(const track_params& params) {
    detail::check_gate_sequence_params(params);
    return layout(params.num_envs, params.gates.max_gates).total;
  }

  /// Allocates the sequences and zeroes them (every env: count 0, status 0, episode 0) on
  /// `stream`, asynchronously, and loads the kernel. Nothing is built yet: call generate().
  /// @throws std::invalid_argument a parameter out of range (the message names it and its
  ///         range), or a family whose anchors are not built here (voronoi, checkpoint,
  ///         repulsive), polar.control_points > 256, or relaxation.max_iterations > 0.
  /// @throws capture_error `stream` is capturing (this allocates). @throws cuda_error a CUDA call
  ///         failed.
  explicit gate_sequences(const track_params& params, stream_type stream = {}) : params_(params) {
    detail::check_gate_sequence_params(params);
    const parts l = layout(params.num_envs, params.gates.max_gates);
    ops::require_not_capturing(stream, "gate_sequences construction");
    memory_ = ops::allocate_shared(l.total);
    ops::zero(memory_.get(), l.total, stream);
    capacity_ = detail::gate_sequence_capacity(params);
    builder::prepare(builder::shared_bytes(capacity_));
    unsigned char* base = memory_.get();
    detail::gate_sequence_out o;
    o.centre = reinterpret_cast<float3*>(base + l.centre);
    o.forward = reinterpret_cast<float3*>(base + l.forward);
    o.count = reinterpret_cast<int*>(base + l.count);
    o.status = reinterpret_cast<std::uint32_t*>(base + l.status);
    o.episode = reinterpret_cast<std::uint32_t*>(base + l.episode);
    o.num_envs = params.num_envs;
    o.max_gates = params.gates.max_gates;
    view_ = gate_sequence_ref(o, params.half_width, params.gate_half_height);
  }

  gate_sequences(gate_sequences&&) noexcept = default;
  gate_sequences& operator=(gate_sequences&&) noexcept = default;
  gate_sequences(const gate_sequences&) = delete;
  gate_sequences& operator=(const gate_sequences&) = delete;

  /// Builds the sequences of the envs with `mask[e] != 0` (env_mask{}: every env); `advance`
  /// moves them to their next episode first (new gates), otherwise the episode's sequence is
  /// built again, bit for bit. Other envs are untouched.
  /// @param mask [E] in the backend's memory (int32, bool or uint8), read on the device, never copied.
  /// Asynchronous on `stream`: one kernel, one thread per env, or, for E <= 2^18, a group of 8
  /// lanes per env (detail/gate_sequence/kernels.cuh; the same sequences); allocates and synchronises nothing; recorded into the capture when
  /// `stream` is capturing (any capture).
  /// @throws std::invalid_argument `mask` is a host pointer with backend::cuda.
  /// @throws std::logic_error the owner was moved from.
  void generate(env_mask mask, bool advance, stream_type stream = {}) {
    if (!mask.all()) ops::require_device_pointer(mask.data, "gate_sequences::generate: mask");
    builder::run(params_, checked_view().arrays(), mask, advance, capacity_, stream);
  }
  /// Every env, the current episode. As above.
  void generate(stream_type stream = {}) { generate(env_mask{}, false, stream); }

  /// The view for kernels and host code. @throws std::logic_error the owner was moved from.
  gate_sequence_ref view() const { return checked_view(); }
  const track_params& params() const { return params_; }
  int num_envs() const { return params_.num_envs; }
  int max_gates() const { return params_.gates.max_gates; }
  /// The shared owner of the memory (keep it alive in what records a generate).
  std::shared_ptr<const void> owner() const { return memory_; }

 private:
  struct parts {
    std::size_t centre, forward, count, status, episode, total;
  };
  static parts layout(int num_envs, int max_gates) {
    auto round = [](std::size_t b) { return (b + 255u) / 256u * 256u; };
    const std::size_t e = static_cast<std::size_t>(num_envs), slots = e * static_cast<std::size_t>(max_gates);
    parts l{};
    l.centre = 0;
    l.forward = round(slots * sizeof(float3));
    l.count = l.forward + round(slots * sizeof(float3));
    l.status = l.count + round(e * sizeof(int));
    l.episode = l.status + round(e * sizeof(std::uint32_t));
    l.total = l.episode + round(e * sizeof(std::uint32_t));
    return l;
  }
  const gate_sequence_ref& checked_view() const {
    if (memory_ == nullptr) throw std::logic_error("track_gen: this gate_sequences was moved from");
    return view_;
  }

  track_params params_;
  int capacity_ = 0;  // detail::gate_sequence_capacity(params_)
  std::shared_ptr<unsigned char> memory_;
  gate_sequence_ref view_;
};

}  // namespace track_gen

#if TRACK_GEN_CUDA_COMPILER
#include <track_gen/detail/gate_sequence/kernels.cuh>
#endif
