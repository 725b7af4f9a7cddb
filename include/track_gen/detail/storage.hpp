#pragma once
/// @file
/// The single allocation that holds every track and progress array of a course, and its layout.

#include <track_gen/course_ref.hpp>

#include <cstddef>

namespace track_gen::detail {

/// The buffers of a masked regeneration's compaction (backend::cuda): the selected envs
/// `ids[0, *count)`, the grid's work counter (the next index of `ids` to take), cub::DeviceSelect's
/// temporary storage, and the blocks of the grid that rebuilds them.
struct env_selection {
  int* ids;
  int* count;
  int* next;
  void* temp;
  std::size_t temp_bytes;
  unsigned blocks;
};

/// Byte offsets of the structure-of-arrays storage (env-major), 256-byte aligned arrays.
struct course_layout {
  int num_envs = 0, num_samples = 0, max_gates = 0;
  std::size_t position, tangent, normal, half_width, curvature;
  std::size_t gate_centre, gate_normal, gate_half_width, gate_arc_length;
  std::size_t length, num_gates, status, episode;
  std::size_t next_gate, laps, gates_passed, lap_progress, lateral, hint, last_position, flags;
  std::size_t launch_count;  ///< unsigned long long: generation launches that ran
  std::size_t any_flag;      ///< int: any-of-mask flag of conditional regeneration
  std::size_t env_count;     ///< int: how many envs the mask selected (masked regeneration)
  std::size_t env_next;      ///< int: the list kernel's work counter (zeroed before each launch)
  std::size_t env_list;      ///< int [E]: the selected envs, in env order
  std::size_t bytes = 0;

  static course_layout make(int e, int n, int g) {
    course_layout l;
    l.num_envs = e;
    l.num_samples = n;
    l.max_gates = g;
    std::size_t at = 0;
    const std::size_t es = static_cast<std::size_t>(e);
    auto take = [&at](std::size_t bytes) {
      const std::size_t off = at;
      at = (at + bytes + 255u) & ~std::size_t{255u};
      return off;
    };
    const std::size_t samples = es * static_cast<std::size_t>(n);
    const std::size_t gates = es * static_cast<std::size_t>(g);
    l.position = take(samples * sizeof(float3));
    l.tangent = take(samples * sizeof(float3));
    l.normal = take(samples * sizeof(float3));
    l.half_width = take(samples * sizeof(float));
    l.curvature = take(samples * sizeof(float));
    l.gate_centre = take(gates * sizeof(float3));
    l.gate_normal = take(gates * sizeof(float3));
    l.gate_half_width = take(gates * sizeof(float));
    l.gate_arc_length = take(gates * sizeof(float));
    l.length = take(es * sizeof(float));
    l.num_gates = take(es * sizeof(int));
    l.status = take(es * sizeof(std::uint32_t));
    l.episode = take(es * sizeof(std::uint32_t));
    l.next_gate = take(es * sizeof(int));
    l.laps = take(es * sizeof(int));
    l.gates_passed = take(es * sizeof(int));
    l.lap_progress = take(es * sizeof(float));
    l.lateral = take(es * sizeof(float));
    l.hint = take(es * sizeof(int));
    l.last_position = take(es * sizeof(float3));
    l.flags = take(es * sizeof(std::uint32_t));
    l.launch_count = take(sizeof(unsigned long long));
    l.any_flag = take(sizeof(int));
    l.env_count = take(sizeof(int));
    l.env_next = take(sizeof(int));
    l.env_list = take(es * sizeof(int));
    l.bytes = at;
    return l;
  }

  template <class T>
  static T* at(unsigned char* base, std::size_t off) {
    return reinterpret_cast<T*>(base + off);
  }

  track_arrays tracks(unsigned char* b) const {
    track_arrays a;
    a.position = at<float3>(b, position);
    a.tangent = at<float3>(b, tangent);
    a.normal = at<float3>(b, normal);
    a.half_width = at<float>(b, half_width);
    a.curvature = at<float>(b, curvature);
    a.gate_centre = at<float3>(b, gate_centre);
    a.gate_normal = at<float3>(b, gate_normal);
    a.gate_half_width = at<float>(b, gate_half_width);
    a.gate_arc_length = at<float>(b, gate_arc_length);
    a.length = at<float>(b, length);
    a.num_gates = at<int>(b, num_gates);
    a.status = at<std::uint32_t>(b, status);
    a.episode = at<std::uint32_t>(b, episode);
    return a;
  }

  progress_arrays progress(unsigned char* b) const {
    progress_arrays a;
    a.next_gate = at<int>(b, next_gate);
    a.laps = at<int>(b, laps);
    a.gates_passed = at<int>(b, gates_passed);
    a.lap_progress = at<float>(b, lap_progress);
    a.lateral = at<float>(b, lateral);
    a.hint = at<int>(b, hint);
    a.last_position = at<float3>(b, last_position);
    a.flags = at<std::uint32_t>(b, flags);
    return a;
  }
};

}  // namespace track_gen::detail
