#pragma once
// The torch extension's bindings, shared by its two builds: module.cu (nvcc; CUDA courses as
// `Course`, CPU courses as `HostCourse`) and module_cpu.cpp (a plain C++ compiler; `HostCourse`
// only). csrc/CMakeLists.txt defines TRACK_GEN_PYTHON_CUDA for the CUDA build.
//
// One py_course<Backend> serves both backends: backend_traits<Backend> says where its tensors
// live, which stream a call runs on and how the step's 0/1 columns are filled. Each course picks
// its course type from its parameters (the track pipeline; a family's own pipeline with the
// elevation stages for a batch of one family; the family pipeline with elevation for mixes; the
// any-family one when they draw the repulsive family; the relaxed one when they turn the
// centreline relaxation on: make_course; the gate-course pipeline), each compiled in a unit of
// its own (course_holder.hpp), all with
// ownership::anchored so that the tensors handed to Python keep the memory alive. What the
// Python layer decides at run time (inside track_gen.interop.torch.registered: conditional
// recording, the capture mode of the library's own captures) is passed per regenerate call and
// applied with course::set_recording; a CPU course ignores it (no graphs).
//
// Gate sequences (gate_sequence.hpp, the seed system's GateGenerator) are bound the same way, as
// py_gate_sequences<Backend>: `GateSequences` (CUDA) and `HostGateSequences` (CPU), with each
// gate's quaternion and posts computed beside the library's centres and forwards (gate_frames.hpp).
#include <torch/extension.h>

#include <pybind11/stl.h>

#include <track_gen/interop/torch_tensors.hpp>
#include <track_gen/track_gen.hpp>

#ifdef TRACK_GEN_PYTHON_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <track_gen/graph.hpp>
#include <track_gen/interop/torch.hpp>

#include "kernels.cuh"
#endif

#include "course_holder.hpp"
#include "gate_frames.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// Hidden like pybind11's own namespace (a class_ of a visible type warns otherwise).
namespace track_gen_python __attribute__((visibility("hidden"))) {

namespace py = pybind11;
namespace tg = track_gen;
namespace tt = track_gen::interop::torch;

// ---- backends -----------------------------------------------------------------------------------

template <class Backend>
struct backend_traits;

/// CPU courses: host memory, CPU tensors, every call runs to completion on the calling thread.
/// skip::unconditional (no graphs to skip in), ownership::anchored (tensors keep the memory).
template <>
struct backend_traits<tg::backend::host> : backend_types<tg::backend::host> {
  /// Nothing to select on the CPU.
  struct guard {
    explicit guard(c10::DeviceIndex) {}
  };
  static at::Device device(c10::DeviceIndex) { return at::Device(at::kCPU); }
  /// The calling thread; a stream handle is an error (std::invalid_argument), not ignored.
  static stream_type stream_of(const std::optional<std::uintptr_t>& handle, c10::DeviceIndex) {
    if (handle.has_value())
      throw std::invalid_argument("track_gen: stream: a CPU course runs on the calling thread and takes no stream; "
                                  "pass stream=None");
    return {};
  }
  /// passed[e], wrong_way[e] (and oob[e] when not null): the flag bits as 0/1, host arrays [n].
  static void step_bits(const std::uint32_t* flags, const std::uint32_t* contact_flags, std::int32_t* passed,
                        std::int32_t* wrong_way, std::int32_t* oob, int n, stream_type) {
    for (int e = 0; e < n; ++e) {
      passed[e] = (flags[e] & tg::progress_flags::gate_passed) != 0u ? 1 : 0;
      wrong_way[e] = (flags[e] & tg::progress_flags::wrong_way) != 0u ? 1 : 0;
      if (oob != nullptr) oob[e] = (contact_flags[e] & tg::contact_flags::out_of_bounds) != 0u ? 1 : 0;
    }
  }
  /// Each gate's quaternion and posts for the envs `mask` selects (gate_frames.hpp), now.
  static void gate_frames(const tg::gate_sequence_ref& s, tg::env_mask mask, const gate_frame_outputs& out, stream_type) {
    gate_frames_host(s, mask, out);
  }
};

#ifdef TRACK_GEN_PYTHON_CUDA
/// CUDA courses: the library's default policies (global capture mode, conditional skipping,
/// anchored ownership); calls run on PyTorch's current stream of the course's device unless a
/// stream handle is given.
template <>
struct backend_traits<tg::backend::cuda> : backend_types<tg::backend::cuda> {
  using guard = c10::cuda::CUDAGuard;
  static at::Device device(c10::DeviceIndex index) { return at::Device(at::kCUDA, index); }
  /// `handle` (a cudaStream_t as an int, e.g. torch.cuda.Stream.cuda_stream) or, when absent,
  /// PyTorch's current stream on `device`.
  static stream_type stream_of(const std::optional<std::uintptr_t>& handle, c10::DeviceIndex device) {
    if (handle.has_value()) return ::cuda::stream_ref(reinterpret_cast<cudaStream_t>(*handle));
    return tt::current_stream(device);
  }
  /// One launch of kernels.cuh's step_bits_kernel on `stream`.
  static void step_bits(const std::uint32_t* flags, const std::uint32_t* contact_flags, std::int32_t* passed,
                        std::int32_t* wrong_way, std::int32_t* oob, int n, stream_type stream) {
    launch_step_bits(flags, contact_flags, passed, wrong_way, oob, n, stream.get());
  }
  /// One launch of gate_frames.hpp's gate_frames_kernel on `stream`.
  static void gate_frames(const tg::gate_sequence_ref& s, tg::env_mask mask, const gate_frame_outputs& out,
                          stream_type stream) {
    launch_gate_frames(s, mask, out, stream.get());
  }
};
#endif

/// The family that every env of `params` draws when `generator.family` selects it (no weights),
/// the centreline relaxation is off and the family has a pipeline of its own (polar:
/// track_pipeline, elevated_track_pipeline, polar_gate_course_pipeline; bezier, hull, voronoi,
/// checkpoint: one_family_pipeline with a flat elevation profile, elevated_one_family_pipeline
/// otherwise), else -1. Those pipelines build the family
/// pipelines' tracks, bit for bit on the host, in kernels without the other families' code
/// (docs/performance-log.md, entries 26, 40 and 42). relaxation.max_iterations > 0 needs
/// stages::centreline_relaxation, which only the relaxed pipeline holds.
inline int own_pipeline_family(const tg::track_params& params) {
  if (params.relaxation.max_iterations > 0) return -1;
  for (float w : params.generator.weights)
    if (w > 0.0f) return -1;
  return params.generator.family == tg::generator_family::repulsive ? -1 : static_cast<int>(params.generator.family);
}

/// True when `params` draws every env from polar with a flat elevation profile and the
/// centreline relaxation off: what presets::track_pipeline builds, bit for bit, as
/// elevated_family_pipeline would, from a kernel 1.16x faster than the family kernel on the same
/// polar tracks (docs/performance-log.md, entries 24 and 38).
inline bool track_pipeline_suffices(const tg::track_params& params) {
  return own_pipeline_family(params) == static_cast<int>(tg::generator_family::polar) &&
         params.elevation.profile == tg::elevation_kind::flat;
}

/// A course of `Backend` for `request` with the pipeline its parameters need; the variants (when
/// given) must fit a pipeline too for it to be chosen. Course.pipeline is the pipeline's name in
/// presets.hpp.
template <class Backend>
std::unique_ptr<any_course<Backend>> make_course(const course_request<Backend>& request) {
  const tg::track_params& params = request.params;
  bool suffices = track_pipeline_suffices(params);
  // Flat everywhere: a one-family batch needs no elevation stage, and the family's own pipeline
  // keeps only the spline's chords (stages::catmull_rom_chords: a smaller scratch, the same tracks).
  bool flat = params.elevation.profile == tg::elevation_kind::flat;
  bool growth = tg::detail::family_in_use(params.generator, tg::generator_family::repulsive);
  bool relaxes = params.relaxation.max_iterations > 0;
  int family = own_pipeline_family(params);
  if (request.variants != nullptr)
    for (const tg::track_params& v : request.variants->variants) {
      suffices = suffices && track_pipeline_suffices(v);
      flat = flat && v.elevation.profile == tg::elevation_kind::flat;
      growth = growth || tg::detail::family_in_use(v.generator, tg::generator_family::repulsive);
      relaxes = relaxes || v.relaxation.max_iterations > 0;
      if (own_pipeline_family(v) != family) family = -1;
    }
  if (suffices) return TRACK_GEN_PYTHON_BUILD(Backend, track_pipeline, request);
  // stages::centreline_relaxation (relaxation.max_iterations > 0, of the batch or of any
  // variant) is a stage of the relaxed pipelines only (every family, the repulsive one included).
  if (relaxes) return TRACK_GEN_PYTHON_BUILD(Backend, elevated_relaxed_family_pipeline, request);
  // The repulsive family's flow has a kernel of its own (stages::basic_random_family says why).
  if (growth) return TRACK_GEN_PYTHON_BUILD(Backend, elevated_any_family_pipeline, request);
  switch (family) {
    case static_cast<int>(tg::generator_family::polar): return TRACK_GEN_PYTHON_BUILD(Backend, elevated_track_pipeline, request);
    case static_cast<int>(tg::generator_family::bezier):
      return flat ? TRACK_GEN_PYTHON_BUILD(Backend, bezier_pipeline, request)
                  : TRACK_GEN_PYTHON_BUILD(Backend, elevated_bezier_pipeline, request);
    case static_cast<int>(tg::generator_family::hull):
      return flat ? TRACK_GEN_PYTHON_BUILD(Backend, hull_pipeline, request)
                  : TRACK_GEN_PYTHON_BUILD(Backend, elevated_hull_pipeline, request);
    case static_cast<int>(tg::generator_family::voronoi):
      return flat ? TRACK_GEN_PYTHON_BUILD(Backend, voronoi_pipeline, request)
                  : TRACK_GEN_PYTHON_BUILD(Backend, elevated_voronoi_pipeline, request);
    case static_cast<int>(tg::generator_family::checkpoint):
      return flat ? TRACK_GEN_PYTHON_BUILD(Backend, checkpoint_pipeline, request)
                  : TRACK_GEN_PYTHON_BUILD(Backend, elevated_checkpoint_pipeline, request);
    default: return TRACK_GEN_PYTHON_BUILD(Backend, elevated_family_pipeline, request);
  }
}

// ---- parameters -------------------------------------------------------------------------------

/// One field of track_params: its Python name ("half_width", "polar.radius_min"), a setter and a
/// getter.
template <class T>
struct field {
  const char* name;
  void (*set)(tg::track_params&, T);
  T (*get)(const tg::track_params&);
};
#define TG_FIELD(T, path) \
  field<T> { #path, [](tg::track_params& p, T v) { p.path = v; }, [](const tg::track_params& p) -> T { return p.path; } }

inline const std::vector<field<int>>& int_fields() {
  static const std::vector<field<int>> f = {
      TG_FIELD(int, num_samples),          TG_FIELD(int, polar.control_points),
      TG_FIELD(int, polygon_separation.max_iterations), TG_FIELD(int, spline.samples_per_segment),
      TG_FIELD(int, validate.max_attempts),
      TG_FIELD(int, voronoi.control_points), TG_FIELD(int, voronoi.chaikin_rounds),
      TG_FIELD(int, checkpoint.checkpoints), TG_FIELD(int, checkpoint.max_steps), TG_FIELD(int, checkpoint.candidates),
      TG_FIELD(int, bezier.corners_min), TG_FIELD(int, bezier.corners_max), TG_FIELD(int, bezier.layout),
      TG_FIELD(int, bezier.samples_per_piece), TG_FIELD(int, hull.corners_min), TG_FIELD(int, hull.corners_max),
      TG_FIELD(int, hull.layout), TG_FIELD(int, hull.convex), TG_FIELD(int, hull.chaikin_passes),
      TG_FIELD(int, repulsive_growth.obstacles_min), TG_FIELD(int, repulsive_growth.obstacles_max),
      TG_FIELD(int, repulsive_growth.points), TG_FIELD(int, repulsive_growth.levels),
      TG_FIELD(int, repulsive_growth.settle_iterations), TG_FIELD(int, repulsive_growth.resample_every),
      TG_FIELD(int, repulsive_growth.stall_window), TG_FIELD(int, repulsive_growth.deactivate_obstacles),
      TG_FIELD(int, elevation.knots), TG_FIELD(int, elevation.harmonics),
      TG_FIELD(int, gates.ordering), TG_FIELD(int, gates.min_gates), TG_FIELD(int, gates.max_gates),
      TG_FIELD(int, gates.spacing_iterations), TG_FIELD(int, gates.align),
      TG_FIELD(int, relaxation.max_iterations), TG_FIELD(int, relaxation.chebyshev_start),
      TG_FIELD(int, relaxation.smoothing_passes),
  };
  return f;
}

inline const std::vector<field<float>>& float_fields() {
  static const std::vector<field<float>> f = {
      TG_FIELD(float, half_width),         TG_FIELD(float, gate_half_height),
      TG_FIELD(float, polar.radius_min),   TG_FIELD(float, polar.radius_max),
      TG_FIELD(float, polar.angle_jitter), TG_FIELD(float, polar.lobe_amplitude_min),
      TG_FIELD(float, polar.lobe_amplitude_max), TG_FIELD(float, polar.elevation_min),
      TG_FIELD(float, polar.elevation_max), TG_FIELD(float, polygon_separation.clearance),
      TG_FIELD(float, polygon_separation.smoothing), TG_FIELD(float, polygon_separation.tolerance),
      TG_FIELD(float, validate.length_min), TG_FIELD(float, validate.length_max),
      TG_FIELD(float, validate.turn_radius_min), TG_FIELD(float, validate.clearance_margin),
      TG_FIELD(float, budget.operations_per_track), TG_FIELD(float, budget.bytes_per_env),
      TG_FIELD(float, voronoi.radius_min), TG_FIELD(float, voronoi.radius_max),
      TG_FIELD(float, voronoi.angle_jitter), TG_FIELD(float, voronoi.site_spacing),
      TG_FIELD(float, voronoi.site_jitter), TG_FIELD(float, voronoi.min_angle_gap),
      TG_FIELD(float, checkpoint.radius_min), TG_FIELD(float, checkpoint.radius_max),
      TG_FIELD(float, checkpoint.angle_jitter), TG_FIELD(float, checkpoint.step_length),
      TG_FIELD(float, checkpoint.max_turn_rate), TG_FIELD(float, checkpoint.steer_gain),
      TG_FIELD(float, checkpoint.closure_boost), TG_FIELD(float, checkpoint.control_spacing),
      TG_FIELD(float, checkpoint.closure_tolerance),
      TG_FIELD(float, bezier.extent), TG_FIELD(float, bezier.min_corner_distance), TG_FIELD(float, bezier.max_turn),
      TG_FIELD(float, bezier.rad), TG_FIELD(float, bezier.edgy), TG_FIELD(float, bezier.handle_clamp),
      TG_FIELD(float, hull.extent), TG_FIELD(float, hull.min_corner_distance), TG_FIELD(float, hull.max_turn),
      TG_FIELD(float, hull.displacement),
      TG_FIELD(float, repulsive_growth.domain_radius), TG_FIELD(float, repulsive_growth.init_ratio),
      TG_FIELD(float, repulsive_growth.grow_mult_min), TG_FIELD(float, repulsive_growth.grow_mult_max),
      TG_FIELD(float, repulsive_growth.obstacle_radius_min), TG_FIELD(float, repulsive_growth.obstacle_radius_max),
      TG_FIELD(float, repulsive_growth.ratchet_rate), TG_FIELD(float, repulsive_growth.alpha),
      TG_FIELD(float, repulsive_growth.beta), TG_FIELD(float, repulsive_growth.tau),
      TG_FIELD(float, repulsive_growth.length_weight), TG_FIELD(float, repulsive_growth.stall_area_tolerance),
      TG_FIELD(float, elevation.z_min), TG_FIELD(float, elevation.z_max), TG_FIELD(float, elevation.max_grade),
      TG_FIELD(float, gates.min_spacing),
      TG_FIELD(float, relaxation.margin), TG_FIELD(float, relaxation.separation_weight),
      TG_FIELD(float, relaxation.spacing_weight), TG_FIELD(float, relaxation.bending_weight),
      TG_FIELD(float, relaxation.chebyshev_rho), TG_FIELD(float, relaxation.chebyshev_gamma),
  };
  return f;
}
#undef TG_FIELD

inline std::string valid_names() {
  std::string s = "env_offset, seed, generator, generator_weights, elevation.profile";
  for (const auto& f : int_fields()) s += std::string(", ") + f.name;
  for (const auto& f : float_fields()) s += std::string(", ") + f.name;
  return s;
}

/// The generator family called `name` (tg::generator_family_names); `what` names the argument.
inline tg::generator_family family_of(const std::string& name, const char* what) {
  std::string valid;
  for (int f = 0; f < tg::num_generator_families; ++f) {
    if (name == tg::generator_family_names[f]) return static_cast<tg::generator_family>(f);
    valid += std::string(f == 0 ? "" : ", ") + "'" + tg::generator_family_names[f] + "'";
  }
  throw std::invalid_argument(std::string("track_gen: ") + what + " '" + name + "' is not a generator family; expected one of " + valid);
}

/// The elevation profile called `name` (tg::elevation_kind_names).
inline tg::elevation_kind elevation_kind_of(const std::string& name) {
  for (int k = 0; k < tg::num_elevation_kinds; ++k)
    if (name == tg::elevation_kind_names[k]) return static_cast<tg::elevation_kind>(k);
  throw std::invalid_argument("track_gen: elevation.profile '" + name +
                              "' is not an elevation profile; expected one of 'flat', 'uniform', 'random_walk', 'harmonics'");
}

inline void apply_overrides(tg::track_params& p, const py::dict& overrides);

/// `value` as an int, or std::invalid_argument naming parameter `name` (a Python int beyond 32
/// bits would otherwise wrap or fail to cast without a name).
inline int checked_int(const std::string& name, long long value) {
  if (value < INT32_MIN || value > INT32_MAX)
    throw std::invalid_argument("track_gen: track parameter '" + name + "' = " +
                                (value == INT64_MAX ? std::string("a huge int") : std::to_string(value)) +
                                " does not fit a 32-bit int (docs/parameters.md has its range)");
  return static_cast<int>(value);
}

/// track_params of `preset` ("track", "drone_track", "elevated_drone_track" or "gate_course") for `num_envs`, then `overrides`
/// ({"name": value}, names as above). The library checks the ranges at construction.
inline tg::track_params make_params(const std::string& preset, int num_envs, const py::dict& overrides) {
  tg::track_params p;
  if (preset == "track") {
    p = tg::presets::track(num_envs);
  } else if (preset == "drone_track") {
    p = tg::presets::drone_track(num_envs);
  } else if (preset == "elevated_drone_track") {
    p = tg::presets::elevated_drone_track(num_envs);
  } else if (preset == "gate_course") {
    p = tg::presets::gate_course(num_envs);
  } else {
    throw std::invalid_argument("track_gen: unknown preset '" + preset +
                                "'; expected 'track', 'drone_track', 'elevated_drone_track' or 'gate_course'");
  }
  apply_overrides(p, overrides);
  return p;
}

/// `overrides` ({"name": value}, names as make_params) applied to `p`.
inline void apply_overrides(tg::track_params& p, const py::dict& overrides) {
  for (const auto& item : overrides) {
    const std::string name = py::cast<std::string>(item.first);
    const py::handle value = item.second;
    if (name == "seed") {
      p.seed = py::cast<std::uint64_t>(value);
      continue;
    }
    if (name == "env_offset") {
      p.env_offset = py::cast<std::uint32_t>(value);
      continue;
    }
    if (name == "generator") {
      p.generator.family = family_of(py::cast<std::string>(value), "generator");
      continue;
    }
    if (name == "elevation.profile") {
      p.elevation.profile = elevation_kind_of(py::cast<std::string>(value));
      continue;
    }
    if (name.rfind("generator.weights.", 0) == 0) {
      const std::string family = name.substr(std::string("generator.weights.").size());
      p.generator.weights[static_cast<int>(family_of(family, "generator_weights key"))] = py::cast<float>(value);
      continue;
    }
    bool found = false;
    for (const auto& f : int_fields()) {
      if (name != f.name) continue;
      // pybind11 would cast 128.0 to nothing and say so without naming the parameter.
      if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
        throw py::type_error("track_gen: track parameter '" + name + "' must be an int, got " +
                             std::string(py::str(py::repr(value))));
      long long wide = 0;
      try {
        wide = py::cast<long long>(value);
      } catch (const py::cast_error&) {
        wide = INT64_MAX;  // beyond 64 bits: reported as not fitting 32
      }
      f.set(p, checked_int(name, wide));
      found = true;
    }
    for (const auto& f : float_fields()) {
      if (name != f.name) continue;
      f.set(p, py::cast<float>(value));
      found = true;
    }
    if (!found) throw std::invalid_argument("track_gen: unknown track parameter '" + name + "'; valid: " + valid_names());
  }
}

/// Current values of every parameter (for TrackParams.resolved()).
inline py::dict params_dict(const tg::track_params& p) {
  py::dict d;
  d["num_envs"] = p.num_envs;
  d["env_offset"] = p.env_offset;
  d["seed"] = p.seed;
  d["generator"] = tg::generator_family_names[static_cast<int>(p.generator.family)];
  py::dict weights;
  for (int f = 0; f < tg::num_generator_families; ++f) weights[tg::generator_family_names[f]] = p.generator.weights[f];
  d["generator_weights"] = weights;
  d["elevation.profile"] = tg::elevation_kind_names[static_cast<int>(p.elevation.profile)];
  for (const auto& f : int_fields()) d[f.name] = f.get(p);
  for (const auto& f : float_fields()) d[f.name] = f.get(p);
  return d;
}

// ---- the course ---------------------------------------------------------------------------------

/// tg::user_tracks from float32 [P, 3] CPU tensors (checked again here for C++ callers).
inline tg::user_tracks user_tracks_of(const std::vector<at::Tensor>& points, const std::string& kind, bool recentre) {
  tg::user_tracks t;
  if (kind == "control_points") {
    t.type = tg::user_tracks::kind::control_points;
  } else if (kind == "centreline") {
    t.type = tg::user_tracks::kind::centreline;
  } else {
    throw std::invalid_argument("track_gen: kind = '" + kind + "'; expected 'control_points' or 'centreline'");
  }
  t.recentre = recentre;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const at::Tensor& p = points[i];
    if (p.device().is_cuda() || p.scalar_type() != at::kFloat || p.dim() != 2 || p.size(1) != 3 || !p.is_contiguous())
      throw std::invalid_argument("track_gen: tracks[" + std::to_string(i) + "] must be a contiguous float32 [P, 3] CPU tensor");
    const float* d = p.data_ptr<float>();
    std::vector<float3> pts(static_cast<std::size_t>(p.size(0)));
    for (std::size_t k = 0; k < pts.size(); ++k) pts[k] = float3{d[3 * k], d[3 * k + 1], d[3 * k + 2]};
    t.tracks.push_back(std::move(pts));
  }
  return t;
}


// ---- batch queries (queries.hpp) ----------------------------------------------------------------

/// `t`'s data as T* after checking it is a contiguous tensor of `type` and `shape` on `device`
/// (std::invalid_argument naming `name` otherwise).
template <class T>
T* query_tensor(const at::Tensor& t, at::ScalarType type, const std::vector<std::int64_t>& shape, const at::Device& device,
                const char* name) {
  std::string wanted = std::string("a ") + c10::toString(type) + " tensor of shape [";
  for (std::size_t i = 0; i < shape.size(); ++i) wanted += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  wanted += "]";
  tt::detail::require_on_device(t, device, name, wanted);
  if (t.scalar_type() != type || t.sizes().vec() != shape)
    throw std::invalid_argument(std::string("track_gen: ") + name + " must be " + wanted + "; got " + tt::detail::describe(t));
  return reinterpret_cast<T*>(t.data_ptr());
}

// ---- sharding -----------------------------------------------------------------------------------

/// `value` as an int for shard_of, or std::invalid_argument naming it: Python ints arrive as
/// int64 so that a rank of -2**40 is reported as such, not wrapped into range by a narrowing cast.
inline int shard_int(std::int64_t value, const char* name) {
  if (value < INT32_MIN || value > INT32_MAX)
    throw std::invalid_argument(std::string("track_gen: shard_of: ") + name + " = " + std::to_string(value) +
                                ", expected a 32-bit int");
  return static_cast<int>(value);
}

/// tg::shard_of with Python's argument types: (first, num_envs).
inline py::tuple shard_tuple(std::int64_t total_envs, std::int64_t world_size, std::int64_t rank, std::int64_t base) {
  if (base < 0 || base > static_cast<std::int64_t>(UINT32_MAX))
    throw std::invalid_argument("track_gen: shard_of: base = " + std::to_string(base) +
                                ", expected in [0, 4294967295] (global env ids are uint32)");
  const tg::shard s = tg::shard_of(total_envs, shard_int(world_size, "world_size"), shard_int(rank, "rank"),
                                   static_cast<std::uint32_t>(base));
  return py::make_tuple(s.first, s.num_envs);
}

/// track_gen.exec.errors.CaptureError (imported at module initialisation).
inline py::handle& capture_error_type() {
  static py::handle type;
  return type;
}

[[noreturn]] inline void raise_python(PyObject* type, const char* what) {
  PyErr_SetString(type, what);
  throw py::error_already_set();
}

/// Calls `f` and turns the library's exceptions into Python ones right here: capture_error ->
/// CaptureError, std::invalid_argument -> ValueError, std::out_of_range -> IndexError, other
/// std::logic_error / std::runtime_error -> RuntimeError. The error is set before the C++
/// exception leaves, so pybind11 only sees error_already_set. (It was written while a
/// std::invalid_argument crashed the interpreter on the H200 machine; that crash came from
/// messages built with a std::ostringstream, fixed in d37500b, not from the translation.)
/// c10::Error passes to torch's translator.
template <class F>
decltype(auto) python_errors(F&& f) {
  try {
    return f();
  } catch (const py::builtin_exception&) {
    throw;  // py::type_error and its kin: pybind11 raises them as their Python types
  } catch (const tg::capture_error& e) {
    raise_python(capture_error_type().ptr(), e.what());
  } catch (const std::invalid_argument& e) {
    raise_python(PyExc_ValueError, e.what());
  } catch (const std::out_of_range& e) {
    raise_python(PyExc_IndexError, e.what());
  } catch (const std::logic_error& e) {
    raise_python(PyExc_RuntimeError, e.what());
  } catch (const std::runtime_error& e) {
    raise_python(PyExc_RuntimeError, e.what());
  }
}


/// A per-env grid field (heightfield, SDF) attached to a Python course: the field, its texels and
/// headers as tensors (each holding the field's memory), and its name for the messages.
template <class Field>
struct attached_field {
  const char* name;    ///< "heightfield", "SDF"
  const char* attach;  ///< the Python method that attaches one
  std::unique_ptr<Field> field;
  tt::grid_tensors tensors;

  std::shared_ptr<const void> owner() const { return field != nullptr ? field->owner() : nullptr; }
  /// The field, or std::logic_error naming `fn` when none is attached.
  const Field& require(const char* fn) const {
    if (field == nullptr)
      throw std::logic_error(std::string("track_gen: ") + fn + ": no " + name + " is attached (call " + attach + " first)");
    return *field;
  }
  /// {texels_name: float32 [E, R, R], "headers": float32 [E, 4] (x0, y0, cell, inv_cell)}.
  py::dict as_dict(const char* fn, const char* texels_name) const {
    require(fn);
    py::dict d;
    d[texels_name] = tensors.texels;
    d["headers"] = tensors.headers;
    return d;
  }
};

template <class Backend>
class py_course {
  using traits = backend_traits<Backend>;
  using stream_type = typename traits::stream_type;
  using policy_type = typename traits::policy;
  using field_type = tg::heightfield<policy_type>;
  using sdf_type = tg::sdf_field<policy_type>;

 public:
  /// Random tracks when `user_points` is empty; otherwise user tracks: one float32 [P, 3] CPU
  /// tensor per track (course.py converts and checks them), `user_kind` "control_points" or
  /// "centreline", `recentre` as user_tracks::recentre. `variants` (random tracks only): per-env
  /// parameter sets (track_variants), each the batch's parameters with its own overrides on top;
  /// env e uses variants[env_variant[e]].
  py_course(const std::string& preset, int num_envs, const py::dict& overrides, float spacing, int device,
            const std::vector<at::Tensor>& user_points, const std::string& user_kind, bool recentre,
            const std::vector<py::dict>& variants, const std::vector<int>& env_variant)
      : device_(static_cast<c10::DeviceIndex>(device)), where_(traits::device(device_)) {
    const tg::track_params params = make_params(preset, num_envs, overrides);
    if (variants.empty() != env_variant.empty())
      throw std::invalid_argument("track_gen: variants and env_variant go together: give both or neither");
    if (!variants.empty() && (preset == "gate_course" || !user_points.empty()))
      throw std::invalid_argument("track_gen: variants are per-env parameters of random tracks (not of user tracks "
                                  "or gate courses)");
    tg::track_variants per_env;
    for (const py::dict& v : variants) {
      tg::track_params p = params;
      apply_overrides(p, v);
      per_env.variants.push_back(p);
    }
    per_env.env_variant = env_variant;
    typename traits::guard guard(device_);
    const stream_type stream = traits::stream_of(std::nullopt, device_);
    if (preset == "gate_course") {
      // Gates sit at the anchors, not every `spacing` metres: the spacing only sizes the gate
      // storage, which gate_course_spacing makes room for gates.max_gates gates.
      if (!user_points.empty())
        throw std::invalid_argument("track_gen: the gate_course preset builds random gate courses; user tracks "
                                    "take the 'track' preset");
      if (spacing != 0.0f)
        throw std::invalid_argument("track_gen: gate courses place their gates at the anchors (gates.min_gates to "
                                    "gates.max_gates per env): build them with Course.gates(params), which takes no "
                                    "checkpoint_spacing");
      const course_request<Backend> request{params, tg::presets::gate_course_spacing(params), nullptr, nullptr, stream};
      // Polar anchors (the preset's) have a kernel without the other families' code.
      if (own_pipeline_family(params) == static_cast<int>(tg::generator_family::polar))
        course_ = TRACK_GEN_PYTHON_BUILD(Backend, polar_gate_course_pipeline, request);
      else
        course_ = TRACK_GEN_PYTHON_BUILD(Backend, gate_course_pipeline, request);
    } else if (!variants.empty()) {
      course_ = make_course<Backend>({params, spacing, &per_env, nullptr, stream});
    } else if (user_points.empty()) {
      course_ = make_course<Backend>({params, spacing, nullptr, nullptr, stream});
    } else {
      const tg::user_tracks tracks = user_tracks_of(user_points, user_kind, recentre);
      course_ = make_course<Backend>({params, spacing, nullptr, &tracks, stream});
    }
    tensors_ = course_->tensors(where_);
  }

  /// Checks and borrows `position` ([E, 3] float32 on the course's device, contiguous) and,
  /// when given, the boxes: `orientation` [E, 4] (x, y, z, w) and `half_extents` [E, 2] (course.py
  /// reorders (w, x, y, z)); course::bind checks their contents (copy + sync on `stream`).
  void bind(const at::Tensor& position, const std::optional<at::Tensor>& orientation,
            const std::optional<at::Tensor>& half_extents, std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const std::int64_t e = course_->num_envs();
    const float3* p = tt::positions(position, e, where_, "position");
    if (!orientation.has_value() && !half_extents.has_value()) return course_->bind(p);
    const float4* q = orientation.has_value() ? query_tensor<float4>(*orientation, at::kFloat, {e, 4}, where_, "orientation") : nullptr;
    const float2* h = half_extents.has_value() ? query_tensor<float2>(*half_extents, at::kFloat, {e, 2}, where_, "half_extents") : nullptr;
    course_->bind(p, q, h, traits::stream_of(stream, device_));
  }

  /// The course's step, then, when `passed` is given, the 0/1 columns of Course.step()'s
  /// outputs from the bit fields in one launch: `passed` and `wrong_way` [E] int32 (progress
  /// flags gate_passed / wrong_way), and with boxes bound `oob` [E] int32 (contact flag
  /// out_of_bounds); the same stream, so a capture records both.
  void step(std::optional<std::uintptr_t> stream, const std::optional<at::Tensor>& passed,
            const std::optional<at::Tensor>& wrong_way, const std::optional<at::Tensor>& oob) {
    typename traits::guard guard(device_);
    const stream_type s = traits::stream_of(stream, device_);
    course_->step(s);
    if (!passed.has_value()) return;
    if (!wrong_way.has_value()) throw std::invalid_argument("track_gen: step: passed given without wrong_way");
    const std::int64_t e = course_->num_envs();
    std::int32_t* p = query_tensor<std::int32_t>(*passed, at::kInt, {e}, where_, "passed");
    std::int32_t* w = query_tensor<std::int32_t>(*wrong_way, at::kInt, {e}, where_, "wrong_way");
    std::int32_t* o = oob.has_value() ? query_tensor<std::int32_t>(*oob, at::kInt, {e}, where_, "oob") : nullptr;
    const tg::course_ref view = course_->view();
    traits::step_bits(view.progress_data().flags, view.contacts().contact_flags, p, w, o, static_cast<int>(e), s);
  }

  /// `mask`: None (every env) or [E] int32/bool/uint8; `conditional` / `capture_mode`: how to
  /// record when the stream is capturing (what track_gen.interop.torch.registered chose).
  void regenerate(const std::optional<at::Tensor>& mask, bool advance, std::optional<std::uintptr_t> stream,
                  bool conditional, int capture_mode) {
    typename traits::guard guard(device_);
    const tg::env_mask m = mask.has_value() ? tt::mask(*mask, course_->num_envs(), where_, "mask") : tg::env_mask{};
    course_->set_recording({conditional, capture_mode});
    course_->regenerate(m, advance, traits::stream_of(stream, device_));
  }

  std::uint64_t generation_launches(std::optional<std::uintptr_t> stream) const {
    typename traits::guard guard(device_);
    return course_->generation_launches(traits::stream_of(stream, device_));
  }

  /// Tracks built ahead (course::enable_ahead): `refill_at` 0 (automatic) or in [1, E]. Fills
  /// every slot now, asynchronously on the stream; allocates: not while capturing.
  void enable_ahead(int refill_at, std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    tg::ahead_options options;
    options.refill_at = refill_at;
    course_->enable_ahead(options, traits::stream_of(stream, device_));
  }
  bool ahead_enabled() const { return course_->ahead_enabled(); }
  int ahead_refill_at() const { return course_->ahead_refill_at(); }
  /// {"served", "missed", "refilled"}: course::ahead_statistics (zeros when not enabled).
  /// Synchronises the stream.
  py::dict ahead_statistics(std::optional<std::uintptr_t> stream) const {
    typename traits::guard guard(device_);
    const tg::ahead_counts c = course_->ahead_statistics(traits::stream_of(stream, device_));
    py::dict d;
    d["served"] = c.served;
    d["missed"] = c.missed;
    d["refilled"] = c.refilled;
    return d;
  }

  py::dict tensors() const {
    py::dict d;
    for (const auto& [name, tensor] : tensors_.named()) d[name] = tensor;
    return d;
  }

  /// References to the course's memory: the course, its tensors' deleters, and every graph
  /// (user object) that holds it. For tests of lifetimes.
  long owner_use_count() const { return course_->owner().use_count() - 1; }  // minus the temporary

#ifdef TRACK_GEN_PYTHON_CUDA
  /// Ties the course's memory (and the attached heightfield's and SDF's: a recorded regenerate
  /// bakes them) to the graph `stream` is capturing into (retain_capture).
  void retain_capture(std::optional<std::uintptr_t> stream) const {
    typename traits::guard guard(device_);
    tt::retain_capture(traits::stream_of(stream, device_), course_->owner(), heights_owner(), sdf_owner());
  }

  /// Ties the course's memory (and the attached fields') to a
  /// torch.cuda.CUDAGraph(keep_graph=True) (interop::torch::retain).
  void retain_graph(at::cuda::CUDAGraph& graph) const {
    tt::retain(graph, course_->owner(), heights_owner(), sdf_owner());
  }
#endif

  // ---- heightfield (heightfield.hpp) ----

  /// Allocates a heightfield of the course's E envs (`resolution` texels per side, `margin`
  /// metres around each track's borders), attaches it to the course (baked now for every env on
  /// the stream, then by each regenerate for the envs it regenerates) and replaces the one
  /// attached before (whose tensors keep its memory alive while they live). Allocates: not
  /// while capturing (capture_error).
  void attach_heightfield(int resolution, float margin, std::optional<std::uintptr_t> stream) {
    attach(heights_, &any_course<Backend>::attach_heightfield, stream, resolution, margin);
  }

  /// {"heights": float32 [E, R, R] (heights[e, j, i]: row j along +y), "headers": float32
  /// [E, 4] (x0, y0, cell, inv_cell)}, over the field's memory. std::logic_error when none is
  /// attached.
  py::dict heightfield_tensors() const { return heights_.as_dict("heightfield_tensors", "heights"); }

  /// tg::sample_heights: `x`, `y`, `out` float32 [E] or [E, K] (one shape), on the device.
  void sample_heights(const at::Tensor& x, const at::Tensor& y, const at::Tensor& out, std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const field_type& heights = heights_.require("sample_heights");
    const std::int64_t e = course_->num_envs();
    const std::vector<std::int64_t> shape = x.sizes().vec();
    if (shape.empty() || shape.size() > 2 || shape[0] != e || (shape.size() == 2 && (shape[1] < 1 || shape[1] > INT32_MAX)))
      throw std::invalid_argument("track_gen: sample_heights: x must be a float32 tensor of shape [" + std::to_string(e) +
                                  "] or [" + std::to_string(e) + ", K] with K >= 1; got " + tt::detail::describe(x));
    const int k = shape.size() == 2 ? static_cast<int>(shape[1]) : 1;
    tg::sample_heights<Backend>(heights.view(), query_tensor<float>(x, at::kFloat, shape, where_, "x"),
                                          query_tensor<float>(y, at::kFloat, shape, where_, "y"), k,
                                          query_tensor<float>(out, at::kFloat, shape, where_, "out"), nullptr,
                                          traits::stream_of(stream, device_));
  }

  int num_envs() const { return course_->num_envs(); }
  int num_samples() const { return course_->num_samples(); }
  int max_gates() const { return course_->max_gates(); }
  float checkpoint_spacing() const { return course_->checkpoint_spacing(); }
  int device() const { return device_; }
  /// The name in presets.hpp of the pipeline make_course (or the gate-course branch) chose.
  std::string pipeline() const { return course_->pipeline_name(); }
  py::dict params() const { return params_dict(course_->params()); }

  // Batch queries (queries.hpp): course.py preallocates the outputs and checks every tensor;
  // checked again here for C++ callers. Asynchronous on the stream; nothing allocated.
  void localize(const at::Tensor& position, const at::Tensor& hints, int window, const at::Tensor& s, const at::Tensor& n,
                const at::Tensor& vertical, const at::Tensor& curvature, const at::Tensor& heading, const at::Tensor& lost,
                std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const std::int64_t e = course_->num_envs();
    tg::localize_outputs out;
    out.s = query_tensor<float>(s, at::kFloat, {e}, where_, "s");
    out.n = query_tensor<float>(n, at::kFloat, {e}, where_, "n");
    out.vertical = query_tensor<float>(vertical, at::kFloat, {e}, where_, "vertical");
    out.curvature = query_tensor<float>(curvature, at::kFloat, {e}, where_, "curvature");
    out.heading = query_tensor<float>(heading, at::kFloat, {e}, where_, "heading");
    out.lost = query_tensor<std::uint8_t>(lost, at::kByte, {e}, where_, "lost");
    tg::localize<Backend>(course_->view().batch(), tt::positions(position, e, where_, "position"),
                                    query_tensor<int>(hints, at::kInt, {e}, where_, "hints"), window, out,
                                    traits::stream_of(stream, device_));
  }

  void track_ahead(const at::Tensor& s, const at::Tensor& position, const at::Tensor& yaw, int count, float spacing,
                   const at::Tensor& out, std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const std::int64_t e = course_->num_envs();
    tg::track_ahead<Backend>(course_->view().batch(), query_tensor<float>(s, at::kFloat, {e}, where_, "s"),
                                       tt::positions(position, e, where_, "position"),
                                       query_tensor<float>(yaw, at::kFloat, {e}, where_, "yaw"), count, spacing,
                                       query_tensor<float3>(out, at::kFloat, {e, count, 3}, where_, "out"),
                                       traits::stream_of(stream, device_));
  }

  void progress_delta(const at::Tensor& s_prev, const at::Tensor& s_now, const at::Tensor& out,
                      std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const std::int64_t e = course_->num_envs();
    tg::progress_delta<Backend>(course_->view().batch(), query_tensor<float>(s_prev, at::kFloat, {e}, where_, "s_prev"),
                                          query_tensor<float>(s_now, at::kFloat, {e}, where_, "s_now"),
                                          query_tensor<float>(out, at::kFloat, {e}, where_, "out"), traits::stream_of(stream, device_));
  }

  /// `mask`, `lateral`: None allowed (every env; on the centreline).
  void spawn(const std::optional<at::Tensor>& mask, const at::Tensor& s, const std::optional<at::Tensor>& lateral,
             const at::Tensor& position, const at::Tensor& yaw, std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const std::int64_t e = course_->num_envs();
    const tg::env_mask m = mask.has_value() ? tt::mask(*mask, e, where_, "mask") : tg::env_mask{};
    const float* lat = lateral.has_value() ? query_tensor<float>(*lateral, at::kFloat, {e}, where_, "lateral") : nullptr;
    tg::spawn<Backend>(course_->view(), m, query_tensor<float>(s, at::kFloat, {e}, where_, "s"), lat,
                                 query_tensor<float3>(position, at::kFloat, {e, 3}, where_, "position"),
                                 query_tensor<float>(yaw, at::kFloat, {e}, where_, "yaw"), traits::stream_of(stream, device_));
  }

  /// `orientation`: (x, y, z, w) here (course.py reorders Isaac Lab's (w, x, y, z)).
  void collide(const at::Tensor& position, const at::Tensor& orientation, const at::Tensor& half_extents,
               const at::Tensor& hints, int window, const at::Tensor& flags, const at::Tensor& clearance,
               const at::Tensor& nearest, const at::Tensor& normal, const at::Tensor& side,
               std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const std::int64_t e = course_->num_envs();
    tg::box_contact_outputs out;
    out.flags = query_tensor<std::uint32_t>(flags, at::kInt, {e}, where_, "flags");
    out.clearance = query_tensor<float>(clearance, at::kFloat, {e}, where_, "clearance");
    out.nearest = query_tensor<float3>(nearest, at::kFloat, {e, 3}, where_, "nearest");
    out.normal = query_tensor<float3>(normal, at::kFloat, {e, 3}, where_, "normal");
    out.side = query_tensor<int>(side, at::kInt, {e}, where_, "side");
    tg::collide_boxes<Backend>(course_->view().batch(), tt::positions(position, e, where_, "position"),
                                         query_tensor<float4>(orientation, at::kFloat, {e, 4}, where_, "orientation"),
                                         query_tensor<float2>(half_extents, at::kFloat, {e, 2}, where_, "half_extents"),
                                         query_tensor<int>(hints, at::kInt, {e}, where_, "hints"), window, out,
                                         traits::stream_of(stream, device_));
  }

  /// The agents as spheres against the gate frames near their targets (tg::collide_gate_frames):
  /// `scope` 0 the next and previous gate, 1 every gate; flags, member and gate int32 [E], depth
  /// and distance float32 [E], point and normal float32 [E, 3]. course.py checks the tensors.
  void gate_frame_collision(const at::Tensor& position, float radius, float half_thickness, float half_depth, int scope,
                            const at::Tensor& flags, const at::Tensor& depth, const at::Tensor& distance,
                            const at::Tensor& point, const at::Tensor& normal, const at::Tensor& member,
                            const at::Tensor& gate, std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const std::int64_t e = course_->num_envs();
    tg::gate_frame_outputs out;
    out.flags = query_tensor<std::uint32_t>(flags, at::kInt, {e}, where_, "flags");
    out.depth = query_tensor<float>(depth, at::kFloat, {e}, where_, "depth");
    out.distance = query_tensor<float>(distance, at::kFloat, {e}, where_, "distance");
    out.point = query_tensor<float3>(point, at::kFloat, {e, 3}, where_, "point");
    out.normal = query_tensor<float3>(normal, at::kFloat, {e, 3}, where_, "normal");
    out.member = query_tensor<int>(member, at::kInt, {e}, where_, "member");
    out.gate = query_tensor<int>(gate, at::kInt, {e}, where_, "gate");
    tg::collide_gate_frames<Backend>(course_->view(), tt::positions(position, e, where_, "position"), radius,
                                               tg::gate_frame{half_thickness, half_depth},
                                               static_cast<tg::gate_scope>(scope), out, traits::stream_of(stream, device_));
  }

  void speed_profile(float a_lat_max, float a_accel, float a_brake, float v_cap, const at::Tensor& out,
                     std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    tg::speed_profile<Backend>(
        course_->view().batch(), tg::speed_limits{a_lat_max, a_accel, a_brake, v_cap},
        query_tensor<float>(out, at::kFloat, {course_->num_envs(), course_->num_samples()}, where_, "out"),
        traits::stream_of(stream, device_));
  }

  // ---- SDF collision (sdf.hpp) and discs ----

  /// Allocates an SDF collision field of the course's E envs (`resolution` texels per side),
  /// attaches it (baked now for every env, then by each regenerate for its envs) and replaces
  /// the one attached before (whose tensors keep its memory alive while they live). Allocates:
  /// not while capturing.
  void attach_sdf(int resolution, std::optional<std::uintptr_t> stream) {
    attach(sdf_, &any_course<Backend>::attach_sdf, stream, resolution);
  }

  /// {"distances": float32 [E, R, R] [m] (signed distance, + on the road), "headers": float32
  /// [E, 4] (x0, y0, cell, inv_cell)}. std::logic_error when none is attached.
  py::dict sdf_tensors() const { return sdf_.as_dict("sdf_tensors", "distances"); }

  /// tg::collide_boxes_sdf over the attached field; tensors as collide's (no hints).
  void collide_sdf(const at::Tensor& position, const at::Tensor& orientation, const at::Tensor& half_extents,
                   const at::Tensor& flags, const at::Tensor& clearance, const at::Tensor& nearest, const at::Tensor& normal,
                   const at::Tensor& side, std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const sdf_type& field = sdf_.require("collide_sdf");
    const std::int64_t e = course_->num_envs();
    tg::box_contact_outputs out;
    out.flags = query_tensor<std::uint32_t>(flags, at::kInt, {e}, where_, "flags");
    out.clearance = query_tensor<float>(clearance, at::kFloat, {e}, where_, "clearance");
    out.nearest = query_tensor<float3>(nearest, at::kFloat, {e, 3}, where_, "nearest");
    out.normal = query_tensor<float3>(normal, at::kFloat, {e, 3}, where_, "normal");
    out.side = query_tensor<int>(side, at::kInt, {e}, where_, "side");
    tg::collide_boxes_sdf<Backend>(field.view(), tt::positions(position, e, where_, "position"),
                                   query_tensor<float4>(orientation, at::kFloat, {e, 4}, where_, "orientation"),
                                   query_tensor<float2>(half_extents, at::kFloat, {e, 2}, where_, "half_extents"), out,
                                   traits::stream_of(stream, device_));
  }

  /// tg::collide_box_discs: `discs` float32 [E, K, 3]; flags, disc int32 [E], depth float32 [E],
  /// point, normal float32 [E, 3].
  void collide_discs(const at::Tensor& position, const at::Tensor& orientation, const at::Tensor& half_extents,
                     const at::Tensor& discs, float radius, const at::Tensor& flags, const at::Tensor& depth,
                     const at::Tensor& point, const at::Tensor& normal, const at::Tensor& disc,
                     std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const std::int64_t e = course_->num_envs();
    const std::int64_t k = discs.dim() == 3 ? discs.size(1) : 0;
    if (discs.dim() != 3 || k < 1 || k > INT32_MAX || discs.size(0) != e || discs.size(2) != 3)
      throw std::invalid_argument("track_gen: collide_discs: discs must be a float32 tensor of shape [" + std::to_string(e) +
                                  ", K, 3] with K >= 1; got " + tt::detail::describe(discs));
    tg::disc_hit_outputs out;
    out.flags = query_tensor<std::uint32_t>(flags, at::kInt, {e}, where_, "flags");
    out.depth = query_tensor<float>(depth, at::kFloat, {e}, where_, "depth");
    out.point = query_tensor<float3>(point, at::kFloat, {e, 3}, where_, "point");
    out.normal = query_tensor<float3>(normal, at::kFloat, {e, 3}, where_, "normal");
    out.disc = query_tensor<int>(disc, at::kInt, {e}, where_, "disc");
    tg::collide_box_discs<Backend>(static_cast<int>(e), tt::positions(position, e, where_, "position"),
                                   query_tensor<float4>(orientation, at::kFloat, {e, 4}, where_, "orientation"),
                                   query_tensor<float2>(half_extents, at::kFloat, {e, 2}, where_, "half_extents"),
                                   query_tensor<float3>(discs, at::kFloat, {e, k, 3}, where_, "discs"),
                                   static_cast<int>(k), radius, out, traits::stream_of(stream, device_));
  }

  /// tg::border_walls: `side` 0 left, 1 right; `scratch` float32 [E, C + 1, 3], `out` float32
  /// [E, C, 5] (x, y, z, yaw, length per piece), `count` int32 [E].
  void walls(int side, float spacing, int capacity, const at::Tensor& scratch, const at::Tensor& out,
             const at::Tensor& count, std::optional<std::uintptr_t> stream) {
    static_assert(sizeof(tg::wall_piece) == 5 * sizeof(float), "a wall piece is five floats: x, y, z, yaw, length");
    typename traits::guard guard(device_);
    const std::int64_t e = course_->num_envs();
    tg::border_walls<Backend>(course_->view().batch(), static_cast<tg::border_side>(side), spacing, capacity,
                              query_tensor<float3>(scratch, at::kFloat, {e, capacity + std::int64_t{1}, 3}, where_, "scratch"),
                              query_tensor<tg::wall_piece>(out, at::kFloat, {e, capacity, 5}, where_, "out"),
                              query_tensor<int>(count, at::kInt, {e}, where_, "count"), traits::stream_of(stream, device_));
  }

  /// `side`: 0 left, 1 right.
  void cones(int side, float spacing, int capacity, const at::Tensor& out, const at::Tensor& count,
             std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const std::int64_t e = course_->num_envs();
    tg::border_cones<Backend>(course_->view().batch(), static_cast<tg::border_side>(side), spacing, capacity,
                                        query_tensor<float3>(out, at::kFloat, {e, capacity, 3}, where_, "out"),
                                        query_tensor<int>(count, at::kInt, {e}, where_, "count"), traits::stream_of(stream, device_));
  }

 private:
  std::shared_ptr<const void> heights_owner() const { return heights_.owner(); }
  std::shared_ptr<const void> sdf_owner() const { return sdf_.owner(); }

  /// A new Field(E, args..., stream) attached through `attach_to` (baked now), replacing `slot`'s.
  template <class Field, class... Args>
  void attach(attached_field<Field>& slot, void (any_course<Backend>::*attach_to)(const Field*, stream_type),
              std::optional<std::uintptr_t> stream, Args... args) {
    typename traits::guard guard(device_);
    const stream_type s = traits::stream_of(stream, device_);
    auto field = std::make_unique<Field>(course_->num_envs(), args..., s);
    ((*course_).*attach_to)(field.get(), s);
    slot.tensors = tt::grid_tensors_of(*field, where_);
    slot.field = std::move(field);
  }

  c10::DeviceIndex device_;
  at::Device where_;  ///< the course's device: cuda:device_, or the CPU
  std::unique_ptr<any_course<Backend>> course_;
  tt::course_tensors tensors_;
  attached_field<field_type> heights_{"heightfield", "attach_heightfield", nullptr, {}};  ///< attach_heightfield's
  attached_field<sdf_type> sdf_{"SDF", "attach_sdf", nullptr, {}};                       ///< attach_sdf's
};


// ---- gate sequences (gate_sequence.hpp) ---------------------------------------------------------

/// E gate sequences (tg::gate_sequences of the backend's policy) for
/// track_gen.generator.GateGenerator: the library's arrays as tensors over its memory (no copy,
/// each holding it), plus each gate's quaternion and posts (the seed system's GateSequence has
/// them; the library stores centres and forwards only), in tensors this object allocates and
/// rewrites after each generate, on the same stream, for the envs that generate touched.
template <class Backend>
class py_gate_sequences {
  using traits = backend_traits<Backend>;
  using stream_type = typename traits::stream_type;
  using sequences_type = tg::gate_sequences<typename traits::policy>;

 public:
  /// The sequences of `preset`'s parameters with `overrides` (make_params) for `num_envs` envs
  /// on CUDA device `device` (ignored on the CPU), zeroed (count 0, status 0: frames NaN) on
  /// torch's current stream; nothing is built until generate.
  /// @throws std::invalid_argument a parameter out of range, or a family the sequences do not
  ///         build (voronoi, checkpoint, repulsive). @throws capture_error the stream is capturing.
  py_gate_sequences(const std::string& preset, int num_envs, const py::dict& overrides, int device)
      : device_(static_cast<c10::DeviceIndex>(device)), where_(traits::device(device_)),
        sequences_(build(make_params(preset, num_envs, overrides), device_)) {
    typename traits::guard guard(device_);
    const tg::gate_sequence_ref v = sequences_.view();
    const tg::detail::gate_sequence_out& a = v.arrays();
    const std::int64_t e = v.num_envs(), g = v.max_gates();
    const std::shared_ptr<const void> owner = sequences_.owner();
    centre_ = tt::borrow(a.centre, {e, g, 3}, at::kFloat, where_, owner);
    forward_ = tt::borrow(a.forward, {e, g, 3}, at::kFloat, where_, owner);
    // uint32 words as int32 tensors of the same bits, as the course's status and episode.
    count_ = tt::borrow(a.count, {e}, at::kInt, where_, owner);
    status_ = tt::borrow(a.status, {e}, at::kInt, where_, owner);
    episode_ = tt::borrow(a.episode, {e}, at::kInt, where_, owner);
    const at::TensorOptions f32 = at::TensorOptions().dtype(at::kFloat).device(where_);
    orientation_ = at::empty({e, g, 4}, f32);
    left_ = at::empty({e, g, 3}, f32);
    right_ = at::empty({e, g, 3}, f32);
    write_frames(tg::env_mask{}, traits::stream_of(std::nullopt, device_));
  }

  /// Builds the sequences of the envs `mask` selects (None: every env; [E] int32/bool/uint8 on
  /// the device), `advance`: their next episode first, then their frames. Asynchronous on
  /// `stream` (torch's current stream when None); recorded when it is capturing.
  void generate(const std::optional<at::Tensor>& mask, bool advance, std::optional<std::uintptr_t> stream) {
    typename traits::guard guard(device_);
    const tg::env_mask m = mask.has_value() ? tt::mask(*mask, num_envs(), where_, "mask") : tg::env_mask{};
    const stream_type s = traits::stream_of(stream, device_);
    sequences_.generate(m, advance, s);
    write_frames(m, s);
  }

  /// {"centre", "forward", "left", "right": float32 [E, G, 3] [m]; "orientation": float32
  /// [E, G, 4] (x, y, z, w); "count", "status", "episode": int32 [E]}.
  py::dict tensors() const {
    py::dict d;
    d["centre"] = centre_;
    d["forward"] = forward_;
    d["orientation"] = orientation_;
    d["left"] = left_;
    d["right"] = right_;
    d["count"] = count_;
    d["status"] = status_;
    d["episode"] = episode_;
    return d;
  }

  /// References to the sequences' memory (the owner and its tensors' deleters), for lifetime tests.
  long owner_use_count() const { return sequences_.owner().use_count() - 1; }  // minus the temporary
  int num_envs() const { return sequences_.num_envs(); }
  int max_gates() const { return sequences_.max_gates(); }
  int device() const { return device_; }
  float half_width() const { return sequences_.view().half_width(); }
  float half_height() const { return sequences_.view().half_height(); }
  py::dict params() const { return params_dict(sequences_.params()); }

 private:
  static sequences_type build(const tg::track_params& params, c10::DeviceIndex device) {
    typename traits::guard guard(device);
    return sequences_type(params, traits::stream_of(std::nullopt, device));
  }
  void write_frames(tg::env_mask mask, stream_type stream) {
    const gate_frame_outputs out{reinterpret_cast<tg::gate_quaternion*>(orientation_.data_ptr<float>()),
                                 reinterpret_cast<float3*>(left_.data_ptr<float>()),
                                 reinterpret_cast<float3*>(right_.data_ptr<float>())};
    traits::gate_frames(sequences_.view(), mask, out, stream);
  }

  c10::DeviceIndex device_;
  at::Device where_;  ///< cuda:device_, or the CPU
  sequences_type sequences_;
  at::Tensor centre_, forward_, count_, status_, episode_;  ///< over sequences_' memory
  at::Tensor orientation_, left_, right_;                   ///< this object's, written by write_frames
};

/// A pybind11-ready callable for member function `f` of a Python course: the call inside
/// python_errors, with f's own parameter types (so pybind11 sees the real signature).
template <class C, class R, class... A>
auto guarded(R (C::*f)(A...)) {
  return [f](C& c, A... a) -> R { return python_errors([&]() -> R { return (c.*f)(std::forward<A>(a)...); }); };
}
template <class C, class R, class... A>
auto guarded(R (C::*f)(A...) const) {
  return [f](const C& c, A... a) -> R { return python_errors([&]() -> R { return (c.*f)(std::forward<A>(a)...); }); };
}

/// Binds py_course<Backend> as `name` in `m`: the same methods for both backends (retain_capture
/// and retain_graph for CUDA only: a CPU course has no graphs).
template <class Backend>
void bind_course(py::module_& m, const char* name, const char* doc) {
  using course_type = py_course<Backend>;
  using opt_stream = std::optional<std::uintptr_t>;
  py::class_<course_type> cls(m, name, doc);
  cls
      .def(py::init([](const std::string& preset, int num_envs, const py::dict& overrides, float spacing, int device,
                       const std::vector<at::Tensor>& tracks, const std::string& kind, bool recentre,
                       const std::vector<py::dict>& variants, const std::vector<int>& env_variant) {
             return python_errors([&] {
               return std::make_unique<course_type>(preset, num_envs, overrides, spacing, device, tracks, kind, recentre,
                                                    variants, env_variant);
             });
           }),
           py::arg("preset"), py::arg("num_envs"), py::arg("overrides"), py::arg("checkpoint_spacing"), py::arg("device"),
           py::arg("tracks") = std::vector<at::Tensor>{}, py::arg("kind") = "control_points", py::arg("recentre") = false,
           py::arg("variants") = std::vector<py::dict>{}, py::arg("env_variant") = std::vector<int>{})
      .def("bind", guarded(&course_type::bind),
           py::arg("position"), py::arg("orientation") = py::none(), py::arg("half_extents") = py::none(),
           py::arg("stream") = py::none())
      .def("step", guarded(&course_type::step),
           py::arg("stream") = py::none(), py::arg("passed") = py::none(), py::arg("wrong_way") = py::none(),
           py::arg("oob") = py::none())
      .def("regenerate", guarded(&course_type::regenerate),
           py::arg("mask"), py::arg("advance"), py::arg("stream"), py::arg("conditional"), py::arg("capture_mode"))
      .def("generation_launches", guarded(&course_type::generation_launches), py::arg("stream") = py::none())
      .def("enable_ahead", guarded(&course_type::enable_ahead), py::arg("refill_at") = 0, py::arg("stream") = py::none())
      .def_property_readonly("ahead_enabled", &course_type::ahead_enabled)
      .def_property_readonly("ahead_refill_at", &course_type::ahead_refill_at)
      .def("ahead_statistics", guarded(&course_type::ahead_statistics), py::arg("stream") = py::none())
      .def("tensors", guarded(&course_type::tensors))
      .def("owner_use_count", &course_type::owner_use_count)
      .def_property_readonly("num_envs", &course_type::num_envs)
      .def_property_readonly("num_samples", &course_type::num_samples)
      .def_property_readonly("max_gates", &course_type::max_gates)
      .def_property_readonly("checkpoint_spacing", &course_type::checkpoint_spacing)
      .def_property_readonly("device", &course_type::device)
      .def("params", &course_type::params)
      .def_property_readonly("pipeline", &course_type::pipeline)
      .def("localize", guarded(&course_type::localize),
           py::arg("position"), py::arg("hints"), py::arg("window"), py::arg("s"), py::arg("n"), py::arg("vertical"),
           py::arg("curvature"), py::arg("heading"), py::arg("lost"), py::arg("stream") = py::none())
      .def("track_ahead", guarded(&course_type::track_ahead),
           py::arg("s"), py::arg("position"), py::arg("yaw"), py::arg("count"), py::arg("spacing"), py::arg("out"),
           py::arg("stream") = py::none())
      .def("progress_delta", guarded(&course_type::progress_delta),
           py::arg("s_prev"), py::arg("s_now"), py::arg("out"), py::arg("stream") = py::none())
      .def("spawn", guarded(&course_type::spawn),
           py::arg("mask"), py::arg("s"), py::arg("lateral"), py::arg("position"), py::arg("yaw"), py::arg("stream") = py::none())
      .def("collide", guarded(&course_type::collide),
           py::arg("position"), py::arg("orientation"), py::arg("half_extents"), py::arg("hints"), py::arg("window"),
           py::arg("flags"), py::arg("clearance"), py::arg("nearest"), py::arg("normal"), py::arg("side"),
           py::arg("stream") = py::none())
      .def("gate_frame_collision", guarded(&course_type::gate_frame_collision),
           py::arg("position"), py::arg("radius"), py::arg("half_thickness"), py::arg("half_depth"), py::arg("scope"),
           py::arg("flags"), py::arg("depth"), py::arg("distance"), py::arg("point"), py::arg("normal"),
           py::arg("member"), py::arg("gate"), py::arg("stream") = py::none())
      .def("speed_profile", guarded(&course_type::speed_profile),
           py::arg("a_lat_max"), py::arg("a_accel"), py::arg("a_brake"), py::arg("v_cap"), py::arg("out"),
           py::arg("stream") = py::none())
      .def("cones", guarded(&course_type::cones),
           py::arg("side"), py::arg("spacing"), py::arg("capacity"), py::arg("out"), py::arg("count"),
           py::arg("stream") = py::none())
      .def("walls", guarded(&course_type::walls),
           py::arg("side"), py::arg("spacing"), py::arg("capacity"), py::arg("scratch"), py::arg("out"), py::arg("count"),
           py::arg("stream") = py::none())
      .def("attach_heightfield", guarded(&course_type::attach_heightfield),
           py::arg("resolution"), py::arg("margin"), py::arg("stream") = py::none())
      .def("heightfield_tensors", guarded(&course_type::heightfield_tensors))
      .def("sample_heights", guarded(&course_type::sample_heights),
           py::arg("x"), py::arg("y"), py::arg("out"), py::arg("stream") = py::none())
      .def("attach_sdf", guarded(&course_type::attach_sdf), py::arg("resolution"), py::arg("stream") = py::none())
      .def("sdf_tensors", guarded(&course_type::sdf_tensors))
      .def("collide_sdf", guarded(&course_type::collide_sdf),
           py::arg("position"), py::arg("orientation"), py::arg("half_extents"), py::arg("flags"), py::arg("clearance"),
           py::arg("nearest"), py::arg("normal"), py::arg("side"), py::arg("stream") = py::none())
      .def("collide_discs", guarded(&course_type::collide_discs),
           py::arg("position"), py::arg("orientation"), py::arg("half_extents"), py::arg("discs"), py::arg("radius"),
           py::arg("flags"), py::arg("depth"), py::arg("point"), py::arg("normal"), py::arg("disc"),
           py::arg("stream") = py::none());
#ifdef TRACK_GEN_PYTHON_CUDA
  if constexpr (std::is_same_v<Backend, tg::backend::cuda>) {
    cls.def("retain_capture", guarded(&course_type::retain_capture), py::arg("stream") = py::none())
        .def("retain_graph", guarded(&course_type::retain_graph), py::arg("graph"));
  }
#endif
}

/// Binds py_gate_sequences<Backend> as `name` in `m` (the same methods for both backends).
template <class Backend>
void bind_gate_sequences(py::module_& m, const char* name, const char* doc) {
  using seq_type = py_gate_sequences<Backend>;
  py::class_<seq_type>(m, name, doc)
      .def(py::init([](const std::string& preset, int num_envs, const py::dict& overrides, int device) {
             return python_errors([&] { return std::make_unique<seq_type>(preset, num_envs, overrides, device); });
           }),
           py::arg("preset"), py::arg("num_envs"), py::arg("overrides"), py::arg("device"))
      .def("generate", guarded(&seq_type::generate), py::arg("mask") = py::none(), py::arg("advance") = false,
           py::arg("stream") = py::none())
      .def("tensors", guarded(&seq_type::tensors))
      .def("owner_use_count", &seq_type::owner_use_count)
      .def_property_readonly("num_envs", &seq_type::num_envs)
      .def_property_readonly("max_gates", &seq_type::max_gates)
      .def_property_readonly("device", &seq_type::device)
      .def_property_readonly("half_width", &seq_type::half_width)
      .def_property_readonly("half_height", &seq_type::half_height)
      .def("params", &seq_type::params);
}

/// The module's functions that do not depend on the backend (field tables, bit names, sharding,
/// preset parameters), and the CaptureError translation.
inline void bind_common(py::module_& m) {
  // tg::capture_error -> track_gen.exec.errors.CaptureError (the Python class, so that one
  // `except CaptureError` catches both the Python and the C++ checks); see python_errors.
  capture_error_type() = py::object(py::module_::import("track_gen.exec.errors").attr("CaptureError")).release();

  // The field tables (detail/fields.hpp): the Python names of Course.tracks and Course.progress.
  auto fields = [](const auto& table) {
    py::list out;
    for (const tg::detail::field_info& f : table) out.append(py::make_tuple(f.name, f.description));
    return out;
  };
  m.def("track_fields", [fields] { return fields(tg::detail::track_fields); },
        "(name, description) of every track array, in table order (Course.tracks)");
  m.def("progress_fields", [fields] { return fields(tg::detail::progress_fields); },
        "(name, description) of every progress array, in table order (Course.progress)");
  m.def("contact_fields", [fields] { return fields(tg::detail::contact_fields); },
        "(name, description) of every box contact array, in table order (Course.step().contacts)");
  m.def("status_bits", [] {
    py::dict d;
#define TG_STATUS(name) d[#name] = tg::status::name;
    TG_STATUS(valid) TG_STATUS(fallback) TG_STATUS(invalid_input) TG_STATUS(user_track) TG_STATUS(fail_not_finite)
    TG_STATUS(fail_length) TG_STATUS(fail_curvature) TG_STATUS(fail_clearance) TG_STATUS(fail_spacing)
    TG_STATUS(relaxed) TG_STATUS(relax_rejected) TG_STATUS(far_from_origin) TG_STATUS(fail_grade) TG_STATUS(fail_gates)
    TG_STATUS(attempts_mask)  // a field, not a flag: bits 8-15 count the generation attempts
#undef TG_STATUS
    return d;
  }, "The status bits of tracks.status (status.hpp), by name");
  m.attr("min_prop_spacing") = tg::min_prop_spacing;  // border_cones / border_walls' smallest spacing [m]
  m.def("progress_flag_bits", [] {
    py::dict d;
#define TG_FLAG(name) d[#name] = tg::progress_flags::name;
    TG_FLAG(has_last) TG_FLAG(off_track) TG_FLAG(wrong_way) TG_FLAG(gate_passed) TG_FLAG(lap_completed)
    TG_FLAG(full_search) TG_FLAG(invalid_position) TG_FLAG(invalid_state)
#undef TG_FLAG
    return d;
  }, "The bits of progress.flags (status.hpp progress_flags), by name");
  m.def(
      "shard_of",
      [](std::int64_t total_envs, std::int64_t world_size, std::int64_t rank, std::int64_t base) {
        return python_errors([&] { return shard_tuple(total_envs, world_size, rank, base); });
      },
      py::arg("total_envs"), py::arg("world_size"), py::arg("rank"), py::arg("base") = 0,
      "(first, num_envs) of rank `rank`'s shard (track_gen::shard_of, shard.hpp); ValueError with the C++ "
      "message on bad arguments. Host only.");
  m.def(
      "preset_params",
      [](const std::string& preset, int num_envs, const py::dict& overrides) {
        return python_errors([&] { return params_dict(make_params(preset, num_envs, overrides)); });
      },
      py::arg("preset"), py::arg("num_envs"), py::arg("overrides"),
      "Every parameter of a preset with overrides applied (no range check: construction checks)");
}

}  // namespace track_gen_python
