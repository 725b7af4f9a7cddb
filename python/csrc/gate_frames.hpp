#pragma once
// Each gate's quaternion and posts (gate_course.hpp's gate_orientation and gate_posts) for the
// Python gate sequences (bindings.hpp, py_gate_sequences): the C++ gate_sequences store centres
// and forward directions only, the seed system's GateSequence also has orientation, left and
// right. One thread (CUDA) or one loop iteration (host) per gate slot, for the envs a mask
// selects; slots at and past an env's count get NaN, as its centres and forwards do.
#include <track_gen/env_mask.hpp>
#include <track_gen/gate_course.hpp>
#include <track_gen/gate_sequence.hpp>

#include <cmath>
#include <cstdint>

#if TRACK_GEN_CUDA_COMPILER
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#endif

namespace track_gen_python {

/// Where the frames go, [E * G_max] each (slot e * G_max + g), in the sequences' memory space.
struct gate_frame_outputs {
  track_gen::gate_quaternion* orientation;  ///< (x, y, z, w), world from gate axes
  float3* left;                             ///< left post [m]: centre + half_width * left axis
  float3* right;                            ///< right post [m]: centre - half_width * left axis
};

/// Slot `slot` of the batch `s`: the quaternion and posts of its gate, or NaN past the env's count.
TRACK_GEN_HD inline void write_gate_frame(const track_gen::gate_sequence_ref& s, std::int64_t slot,
                                          const gate_frame_outputs& out) {
  const int e = static_cast<int>(slot / s.max_gates()), g = static_cast<int>(slot % s.max_gates());
  if (g >= s.count(e)) {
    const float nan = NAN;
    out.orientation[slot] = {nan, nan, nan, nan};
    out.left[slot] = float3{nan, nan, nan};
    out.right[slot] = float3{nan, nan, nan};
    return;
  }
  const track_gen::gate gate = s.at(e, g);
  out.orientation[slot] = track_gen::gate_orientation(gate);
  const track_gen::gate_posts_t posts = track_gen::gate_posts(gate);
  out.left[slot] = posts.left;
  out.right[slot] = posts.right;
}

/// The frames of every slot of the envs `mask` selects, on the calling thread (host memory).
inline void gate_frames_host(const track_gen::gate_sequence_ref& s, track_gen::env_mask mask, const gate_frame_outputs& out) {
  const std::int64_t slots = static_cast<std::int64_t>(s.num_envs()) * s.max_gates();
  for (std::int64_t k = 0; k < slots; ++k)
    if (mask[static_cast<int>(k / s.max_gates())]) write_gate_frame(s, k, out);
}

#if TRACK_GEN_CUDA_COMPILER
/// Thread k writes slot k when its env is selected.
__global__ void gate_frames_kernel(const track_gen::gate_sequence_ref s, const track_gen::env_mask mask,
                                   const gate_frame_outputs out, std::int64_t slots) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= slots || !mask[static_cast<int>(k / s.max_gates())]) return;
  write_gate_frame(s, k, out);
}

/// One launch of gate_frames_kernel on `stream` (asynchronous; recorded when it is capturing).
/// @throws std::runtime_error the launch failed.
inline void launch_gate_frames(const track_gen::gate_sequence_ref& s, track_gen::env_mask mask,
                               const gate_frame_outputs& out, cudaStream_t stream) {
  const std::int64_t slots = static_cast<std::int64_t>(s.num_envs()) * s.max_gates();
  if (slots <= 0) return;
  constexpr int threads = 256;
  gate_frames_kernel<<<static_cast<unsigned>((slots + threads - 1) / threads), threads, 0, stream>>>(s, mask, out, slots);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("track_gen: launching the gate frames kernel: ") + cudaGetErrorString(err));
}
#endif

}  // namespace track_gen_python
