#pragma once
/// @file
/// Helpers for LibTorch / ATen users of either backend: `at::Tensor` arguments checked and
/// borrowed as course inputs (no copy), and the course's arrays and a field's grids as tensors
/// over the course's memory (no copy). `device` is where the course lives: a CUDA device with
/// its index for backend::cuda, `at::kCPU` for backend::host. Needs no CUDA toolkit; the CUDA
/// parts (current stream, graphs) are in interop/torch.hpp, which includes this header.
///
/// Nothing here allocates or synchronises.
///
/// Errors: a tensor of the wrong dtype, shape, device or layout throws `std::invalid_argument`
/// whose message names the argument and what it must be (pybind11 raises it as `ValueError`).

#include <track_gen/detail/config.hpp>

#include <track_gen/course_ref.hpp>
#include <track_gen/detail/fields.hpp>
#include <track_gen/env_mask.hpp>

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace track_gen::interop::torch {

namespace detail {
/// "float32 [64, 3] on cuda:0 (contiguous)" for the messages.
inline std::string describe(const at::Tensor& t) {
  if (!t.defined()) return "an undefined tensor";
  // Built without iostreams (see detail::format_number in host_checks.hpp for why).
  std::string s = std::string(c10::toString(t.scalar_type())) + " [";
  for (std::int64_t i = 0; i < t.dim(); ++i) s += (i > 0 ? ", " : "") + std::to_string(t.size(i));
  return s + "] on " + t.device().str() + (t.is_contiguous() ? "" : " (not contiguous)");
}

/// Throws std::invalid_argument unless `t` is a defined, contiguous tensor on `device` (a CUDA
/// device with its index, or the CPU).
inline void require_on_device(const at::Tensor& t, const at::Device& device, const char* name, const std::string& wanted) {
  const bool ok = t.defined() && t.device() == device && t.is_contiguous();
  if (!ok) {
    throw std::invalid_argument(std::string("track_gen: ") + name + " must be " + wanted + " on " + device.str() +
                                ", contiguous; got " + describe(t));
  }
}
}  // namespace detail

/// Checks `positions` and borrows it as the course's positions (`course::bind`): a float32
/// tensor of shape `[num_envs, 3]` [m, env-local frames], contiguous, on `device` (the
/// course's: a CUDA device, or the CPU for backend::host).
/// The pointer stays valid while the tensor's storage does: keep the tensor alive and write
/// into it in place (`copy_`, slicing assignment), never rebind it to new storage.
/// @throws std::invalid_argument naming `name` and the expected dtype, shape and device.
inline const float3* positions(const at::Tensor& t, std::int64_t num_envs, const at::Device& device,
                               const char* name = "position") {
  const std::string wanted = "a float32 tensor of shape [" + std::to_string(num_envs) + ", 3]";
  detail::require_on_device(t, device, name, wanted);
  if (t.scalar_type() != at::kFloat || t.dim() != 2 || t.size(0) != num_envs || t.size(1) != 3) {
    throw std::invalid_argument(std::string("track_gen: ") + name + " must be " + wanted + "; got " + detail::describe(t));
  }
  return reinterpret_cast<const float3*>(t.data_ptr<float>());
}

/// Checks `mask` and borrows it as an env_mask for `course::regenerate`: a tensor of shape
/// `[num_envs]` of dtype int32, bool or uint8 (nonzero: regenerate), contiguous, on `device`. An undefined tensor means every env. Never copies.
/// @throws std::invalid_argument naming `name` and the expected dtypes, shape and device.
inline env_mask mask(const at::Tensor& t, std::int64_t num_envs, const at::Device& device, const char* name = "mask") {
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

/// A tensor over `sizes` elements of `dtype` at `data` (memory on `device`),
/// without a copy. The tensor holds `owner` (e.g. `course::owner()`) until its storage is
/// released, so the memory outlives the course as long as the tensor lives. With a null owner
/// (a course that is not ownership::anchored) the tensor must not outlive the course.
inline at::Tensor borrow(void* data, at::IntArrayRef sizes, at::ScalarType dtype, const at::Device& device,
                         std::shared_ptr<const void> owner) {
  return at::from_blob(
      data, sizes, [owner = std::move(owner)](void*) mutable { owner.reset(); },
      at::TensorOptions().dtype(dtype).device(device), device);
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

/// The arrays of `course` (either backend) as tensors on `device` (the device the
/// course was built on), each holding `course.owner()`.
template <class Course>
course_tensors tensors(const Course& course, const at::Device& device) {
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

/// The grids of `field` (any field with a view of `texels(env)`, `header(env)` of four floats,
/// `num_envs()`, `resolution()`, and an `owner()`) as tensors on `device` (the field's).
template <class Field>
grid_tensors grid_tensors_of(const Field& field, const at::Device& device) {
  auto v = field.view();
  static_assert(sizeof(v.header(0)) == 4 * sizeof(float), "a grid header is four floats: x0, y0, cell, inv_cell");
  const std::int64_t e = v.num_envs(), r = v.resolution();
  const std::shared_ptr<const void> owner = field.owner();
  grid_tensors g;
  g.texels = borrow(v.texels(0), {e, r, r}, at::kFloat, device, owner);
  g.headers = borrow(static_cast<void*>(&v.header(0)), {e, 4}, at::kFloat, device, owner);
  return g;
}

}  // namespace track_gen::interop::torch
