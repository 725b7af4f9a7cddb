#pragma once
/// @file
/// Helpers for LibTorch / ATen users of the CUDA backend: PyTorch's current stream as the
/// library's stream, `at::Tensor` arguments checked and borrowed as course inputs (no copy),
/// the course's arrays and a field's grids as tensors (no copy), and `retain` for a PyTorch
/// CUDA graph.
///
/// Needs LibTorch's headers (ATen, c10/cuda) and a translation unit compiled by nvcc when a
/// `course` of `backend::cuda` is used in it (a torch extension's `.cu` file). Nothing here
/// allocates or synchronises except `retain`'s user object (a small host allocation).
///
/// Errors: a tensor of the wrong dtype, shape, device or layout throws `std::invalid_argument`
/// whose message names the argument and what it must be (pybind11 raises it as `ValueError`);
/// `retain` on a graph it cannot reach throws `track_gen::capture_error`.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/require_cuda_runtime.hpp>

#include <track_gen/course_ref.hpp>
#include <track_gen/detail/fields.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/errors.hpp>
#include <track_gen/graph.hpp>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace track_gen::interop::torch {

/// PyTorch's current CUDA stream on `device` (-1: the current device) as the library's stream.
/// Inside `torch.cuda.graph(g)` this is the capture stream, so library calls made on it are
/// recorded into `g`.
inline ::cuda::stream_ref current_stream(c10::DeviceIndex device = -1) {
  return ::cuda::stream_ref(c10::cuda::getCurrentCUDAStream(device).stream());
}

namespace detail {
/// "float32 [64, 3] on cuda:0 (contiguous)" for the messages.
inline std::string describe(const at::Tensor& t) {
  if (!t.defined()) return "an undefined tensor";
  // Built without iostreams (see detail::format_number in host_checks.hpp for why).
  std::string s = std::string(c10::toString(t.scalar_type())) + " [";
  for (std::int64_t i = 0; i < t.dim(); ++i) s += (i > 0 ? ", " : "") + std::to_string(t.size(i));
  return s + "] on " + t.device().str() + (t.is_contiguous() ? "" : " (not contiguous)");
}

/// Throws std::invalid_argument unless `t` is a defined, contiguous CUDA tensor on `device`.
inline void require_on_device(const at::Tensor& t, c10::DeviceIndex device, const char* name, const std::string& wanted) {
  const bool ok = t.defined() && t.is_cuda() && t.device().index() == device && t.is_contiguous();
  if (!ok) {
    throw std::invalid_argument(std::string("track_gen: ") + name + " must be " + wanted + " on cuda:" +
                                std::to_string(device) + ", contiguous; got " + describe(t));
  }
}
}  // namespace detail

/// Checks `positions` and borrows it as the course's positions (`course::bind`): a float32
/// tensor of shape `[num_envs, 3]` [m, env-local frames], contiguous, on CUDA device `device`.
/// The pointer stays valid while the tensor's storage does: keep the tensor alive and write
/// into it in place (`copy_`, slicing assignment), never rebind it to new storage.
/// @throws std::invalid_argument naming `name` and the expected dtype, shape and device.
inline const float3* positions(const at::Tensor& t, std::int64_t num_envs, c10::DeviceIndex device,
                               const char* name = "position") {
  const std::string wanted = "a float32 tensor of shape [" + std::to_string(num_envs) + ", 3]";
  detail::require_on_device(t, device, name, wanted);
  if (t.scalar_type() != at::kFloat || t.dim() != 2 || t.size(0) != num_envs || t.size(1) != 3) {
    throw std::invalid_argument(std::string("track_gen: ") + name + " must be " + wanted + "; got " + detail::describe(t));
  }
  return reinterpret_cast<const float3*>(t.data_ptr<float>());
}

/// Checks `mask` and borrows it as an env_mask for `course::regenerate`: a tensor of shape
/// `[num_envs]` of dtype int32, bool or uint8 (nonzero: regenerate), contiguous, on CUDA device
/// `device`. An undefined tensor means every env. Never copies.
/// @throws std::invalid_argument naming `name` and the expected dtypes, shape and device.
inline env_mask mask(const at::Tensor& t, std::int64_t num_envs, c10::DeviceIndex device, const char* name = "mask") {
  if (!t.defined()) return env_mask{};
  const std::string wanted = "an int32, bool or uint8 tensor of shape [" + std::to_string(num_envs) + "]";
  detail::require_on_device(t, device, name, wanted);
  const at::ScalarType type = t.scalar_type();
  if (t.dim() != 1 || t.size(0) != num_envs || (type != at::kInt && type != at::kBool && type != at::kByte)) {
    throw std::invalid_argument(std::string("track_gen: ") + name + " must be " + wanted + "; got " + detail::describe(t));
  }
  if (type == at::kInt) return env_mask(static_cast<const std::int32_t*>(t.data_ptr()));
  return env_mask(static_cast<const std::uint8_t*>(t.data_ptr()));
}

/// A tensor over `sizes` elements of `dtype` at `data` (device memory of CUDA device `device`),
/// without a copy. The tensor holds `owner` (e.g. `course::owner()`) until its storage is
/// released, so the memory outlives the course as long as the tensor lives. With a null owner
/// (a course that is not ownership::anchored) the tensor must not outlive the course.
inline at::Tensor borrow(void* data, at::IntArrayRef sizes, at::ScalarType dtype, c10::DeviceIndex device,
                         std::shared_ptr<const void> owner) {
  const at::Device where(at::kCUDA, device);
  return at::from_blob(
      data, sizes, [owner = std::move(owner)](void*) mutable { owner.reset(); },
      at::TensorOptions().dtype(dtype).device(where), where);
}

/// Every array of a course as a tensor over the course's memory (no copy), one member per
/// field of the field tables (detail/fields.hpp), named as the field: `samples` fields
/// `[E, N]`, `gates` fields `[E, G]` (G = course::max_gates(); slots at and beyond
/// `num_gates[e]` are unused), `env` fields `[E]`; float3 fields get a trailing dimension of 3
/// (float32); uint32 fields (status, episode, flags) are int32 tensors of the same bits.
/// Written by `step` / `regenerate` in stream order: read them on (or after) the stream the
/// course runs on.
struct course_tensors {
#define TRACK_GEN_TENSOR(name, type, ext, doc) at::Tensor name;
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_TENSOR)
  TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_TENSOR)
  TRACK_GEN_CONTACT_FIELDS(TRACK_GEN_TENSOR)
#undef TRACK_GEN_TENSOR

  /// (name, tensor) of every member, track fields first, then progress, then contact fields,
  /// in table order.
  std::vector<std::pair<const char*, at::Tensor>> named() const {
    return {
#define TRACK_GEN_NAMED(name, type, ext, doc) {#name, name},
        TRACK_GEN_TRACK_FIELDS(TRACK_GEN_NAMED) TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_NAMED)
        TRACK_GEN_CONTACT_FIELDS(TRACK_GEN_NAMED)
#undef TRACK_GEN_NAMED
    };
  }
};

namespace detail {
/// The tensor shape of a field for E envs, N samples, G gate slots.
inline std::vector<std::int64_t> field_shape(const track_gen::detail::field_info& f, std::int64_t e, std::int64_t n,
                                             std::int64_t g) {
  std::vector<std::int64_t> shape{e};
  if (f.per_env == track_gen::detail::extent::samples) shape.push_back(n);
  if (f.per_env == track_gen::detail::extent::gates) shape.push_back(g);
  if (f.components > 1) shape.push_back(f.components);
  return shape;
}
inline at::ScalarType field_dtype(const track_gen::detail::field_info& f) {
  return f.kind == track_gen::detail::scalar::float32 ? at::kFloat : at::kInt;
}
}  // namespace detail

/// The arrays of `course` (any CUDA course) as tensors on CUDA device `device` (the device the
/// course was built on), each holding `course.owner()`.
template <class Course>
course_tensors tensors(const Course& course, c10::DeviceIndex device) {
  const course_ref v = course.view();
  const track_arrays& t = v.tracks();
  const progress_arrays& p = v.progress_data();
  const std::int64_t e = v.num_envs(), n = v.num_samples(), g = v.max_gates();
  const std::shared_ptr<const void> owner = course.owner();
  auto make = [&](const void* data, const track_gen::detail::field_info& f) {
    return borrow(const_cast<void*>(data), detail::field_shape(f, e, n, g), detail::field_dtype(f), device, owner);
  };
  course_tensors r;
  std::size_t i = 0;
#define TRACK_GEN_MAKE(name, type, ext, doc) r.name = make(t.name, track_gen::detail::track_fields[i++]);
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_MAKE)
#undef TRACK_GEN_MAKE
  i = 0;
#define TRACK_GEN_MAKE(name, type, ext, doc) r.name = make(p.name, track_gen::detail::progress_fields[i++]);
  TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_MAKE)
#undef TRACK_GEN_MAKE
  const contact_arrays& c = v.contacts();
  i = 0;
#define TRACK_GEN_MAKE(name, type, ext, doc) r.name = make(c.name, track_gen::detail::contact_fields[i++]);
  TRACK_GEN_CONTACT_FIELDS(TRACK_GEN_MAKE)
#undef TRACK_GEN_MAKE
  return r;
}

/// A per-env grid (heightfield.hpp's `heightfield`, sdf.hpp's `sdf_field`) as tensors over the
/// field's memory (no copy), each holding `field.owner()`: `texels` float32 [E, R, R]
/// (texels[e, j, i]: row j along +y, column i along +x, the value at that texel's centre) and
/// `headers` float32 [E, 4] (each env's x0, y0, cell, inv_cell [m, 1/m]). Written by the field's
/// bakes in stream order.
struct grid_tensors {
  at::Tensor texels;
  at::Tensor headers;
};

/// The grids of `field` (any CUDA field with a view of `texels(env)`, `header(env)` of four
/// floats, `num_envs()`, `resolution()`, and an `owner()`) as tensors on CUDA device `device`.
template <class Field>
grid_tensors grid_tensors_of(const Field& field, c10::DeviceIndex device) {
  auto v = field.view();
  static_assert(sizeof(v.header(0)) == 4 * sizeof(float), "a grid header is four floats: x0, y0, cell, inv_cell");
  const std::int64_t e = v.num_envs(), r = v.resolution();
  const std::shared_ptr<const void> owner = field.owner();
  grid_tensors g;
  g.texels = borrow(v.texels(0), {e, r, r}, at::kFloat, device, owner);
  g.headers = borrow(static_cast<void*>(&v.header(0)), {e, 4}, at::kFloat, device, owner);
  return g;
}

/// Ties `owners` (shared owners, e.g. `course.owner()`) to the graph that `stream` is capturing
/// into (inside `torch.cuda.graph(g)`: torch's capture stream, `current_stream()`): the graph,
/// and every executable graph instantiated from it, keeps them alive. Works whether or not `g`
/// keeps its cudaGraph_t. Idempotent per owner; null owners ignored.
/// @throws capture_error `stream` is not capturing. @throws cuda_error on failure.
template <class... Owners>
void retain_capture(::cuda::stream_ref stream, const Owners&... owners) {
  const track_gen::detail::capture_info info = track_gen::detail::query_capture(stream.get());
  if (!info.active()) {
    throw capture_error(
        "track_gen: interop::torch::retain_capture: the stream is not capturing; call it inside torch.cuda.graph(...) "
        "on its capture stream, or use retain(graph, ...) on a CUDAGraph built with keep_graph=true");
  }
  track_gen::retain(info.graph, owners...);
}

/// Ties `owners` to a captured `at::cuda::CUDAGraph` built with `keep_graph = true`, before it
/// is instantiated (`instantiate()` or its first `replay()`): CUDA copies a graph's user objects
/// into each executable graph at instantiation. Idempotent per owner; null owners ignored.
/// (Without keep_graph, call retain_capture during the capture instead.)
/// @throws capture_error the graph does not keep its cudaGraph_t (keep_graph = false, or not
///         captured yet) or is already instantiated. @throws cuda_error on failure.
template <class... Owners>
void retain(at::cuda::CUDAGraph& graph, const Owners&... owners) {
  cudaGraph_t raw = nullptr;
  try {
    raw = graph.raw_cuda_graph();
  } catch (const c10::Error&) {
    raw = nullptr;
  }
  if (raw == nullptr) {
    throw capture_error(
        "track_gen: interop::torch::retain: this CUDAGraph holds no cudaGraph_t (build it with keep_graph=true and call "
        "retain after the capture ends), or call retain_capture inside the capture");
  }
  bool instantiated = true;
  try {
    (void)graph.raw_cuda_graph_exec();
  } catch (const c10::Error&) {
    instantiated = false;
  }
  if (instantiated) {
    throw capture_error(
        "track_gen: interop::torch::retain: the CUDAGraph is already instantiated, and its executable graph would not "
        "hold the owners; call retain before instantiate() / the first replay(), or retain_capture during the capture");
  }
  track_gen::retain(raw, owners...);
}

}  // namespace track_gen::interop::torch
