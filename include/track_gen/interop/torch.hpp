#pragma once
/// @file
/// Helpers for LibTorch / ATen users of the CUDA backend: PyTorch's current stream as the
/// library's stream, `retain` for a PyTorch CUDA graph, and the checks and tensor views of
/// interop/torch_tensors.hpp (included) for a course on a CUDA device given by its index.
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

#include <track_gen/errors.hpp>
#include <track_gen/graph.hpp>
#include <track_gen/interop/torch_tensors.hpp>

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

/// The CUDA device `device` (-1: the current one) as an `at::Device`, for the overloads below.
inline at::Device cuda_device(c10::DeviceIndex device) { return at::Device(at::kCUDA, device); }

// The checks and views of interop/torch_tensors.hpp for a course on CUDA device `device`.

/// `positions(t, num_envs, at::Device(at::kCUDA, device), name)`.
inline const float3* positions(const at::Tensor& t, std::int64_t num_envs, c10::DeviceIndex device,
                               const char* name = "position") {
  return positions(t, num_envs, cuda_device(device), name);
}
/// `mask(t, num_envs, at::Device(at::kCUDA, device), name)`.
inline env_mask mask(const at::Tensor& t, std::int64_t num_envs, c10::DeviceIndex device, const char* name = "mask") {
  return mask(t, num_envs, cuda_device(device), name);
}
/// `tensors(course, at::Device(at::kCUDA, device))`.
template <class Course>
course_tensors tensors(const Course& course, c10::DeviceIndex device) {
  return tensors(course, cuda_device(device));
}
/// `grid_tensors_of(field, at::Device(at::kCUDA, device))`.
template <class Field>
grid_tensors grid_tensors_of(const Field& field, c10::DeviceIndex device) {
  return grid_tensors_of(field, cuda_device(device));
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
