#pragma once
/// @file
/// Definitions of `course`'s construction (course.hpp holds the API and its documentation):
/// one allocation, then the batch, the progress tracker and the generator over its ranges, then
/// the first generation.

#include <track_gen/course.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace track_gen {

template <class Pipeline, class Policy>
struct course<Pipeline, Policy>::parts {
  detail::generator_inputs inputs;
  std::shared_ptr<unsigned char> storage;
  std::size_t batch_bytes = 0, progress_bytes = 0, bytes = 0;
};

template <class Pipeline, class Policy>
typename course<Pipeline, Policy>::parts course<Pipeline, Policy>::plan(const track_params& params, float checkpoint_spacing,
                                                                        const user_tracks* tracks,
                                                                        const track_variants* variants,
                                                                        borrowed_storage borrowed, stream_type stream) {
  using ops = typename detail::backend_ops<backend_type>::type;
  // First: every CUDA call below (even the compaction's size query) may invalidate a capture.
  ops::require_not_capturing(stream, "course construction");
  // The policy's capture mode for every capture-unsafe call of the construction (another
  // thread's global-mode capture must survive a capture::relaxed / thread_local_ course).
  typename ops::mode_guard guard(Policy::capture_mode::value);
  if constexpr (is_borrowed) {
    if (tracks != nullptr || variants != nullptr)
      throw std::invalid_argument("track_gen: ownership::borrowed supports random tracks only (no user_tracks or track_variants)");
  }
  parts p;
  p.inputs = detail::generator_inputs::make(params, checkpoint_spacing, tracks, variants, Pipeline::has_grid,
                                            Pipeline::accepts_families, &Pipeline::max_control_points,
                                            ops::select_temp_bytes(params.num_envs),
                                            sizeof(detail::generate_args<detail::progress_reset_hook>));
  p.batch_bytes = batch_type::required_bytes(params.num_envs, params.num_samples, p.inputs.plan.max_gates);
  p.progress_bytes = tracker_type::required_bytes(params.num_envs);
  p.bytes = p.batch_bytes + p.progress_bytes + p.inputs.plan.bytes;
  detail::check_course_bytes(p.bytes, params.num_envs, p.inputs.plan.max_gates);
  if constexpr (is_borrowed) {
    if (borrowed.data == nullptr) throw std::invalid_argument("track_gen: borrowed_storage.data is null");
    if (borrowed.bytes < p.bytes)
      throw std::invalid_argument("track_gen: borrowed_storage.bytes = " + std::to_string(borrowed.bytes) +
                                  " is too small: expected at least required_bytes() = " + std::to_string(p.bytes));
    if (reinterpret_cast<std::uintptr_t>(borrowed.data) % 256u != 0)
      throw std::invalid_argument("track_gen: borrowed_storage.data must be 256-byte aligned");
    ops::require_device_pointer(borrowed.data, "borrowed_storage.data");
    p.storage = std::shared_ptr<unsigned char>(static_cast<unsigned char*>(borrowed.data), [](unsigned char*) {});
  } else {
    (void)borrowed;
    ops::drain_deferred();
    p.storage = ops::allocate_shared(p.bytes);
  }
  return p;
}

template <class Pipeline, class Policy>
std::size_t course<Pipeline, Policy>::required_bytes(const track_params& params, float checkpoint_spacing) {
  using ops = typename detail::backend_ops<backend_type>::type;
  const detail::generator_inputs in =
      detail::generator_inputs::make(params, checkpoint_spacing, nullptr, nullptr, Pipeline::has_grid,
                                     Pipeline::accepts_families, &Pipeline::max_control_points,
                                     ops::select_temp_bytes(params.num_envs),
                                     sizeof(detail::generate_args<detail::progress_reset_hook>));
  const std::size_t bytes = batch_type::required_bytes(params.num_envs, params.num_samples, in.plan.max_gates) +
                            tracker_type::required_bytes(params.num_envs) + in.plan.bytes;
  detail::check_course_bytes(bytes, params.num_envs, in.plan.max_gates);
  return bytes;
}

template <class Pipeline, class Policy>
course<Pipeline, Policy>::course(parts p, stream_type stream)
    : storage_(p.storage),
      batch_(p.inputs.params.num_envs, p.inputs.params.num_samples, p.inputs.plan.max_gates,
             std::shared_ptr<unsigned char>(storage_, storage_.get()), stream),
      tracker_(batch_.view(), p.inputs.params.gate_half_height,
               std::shared_ptr<unsigned char>(storage_, storage_.get() + p.batch_bytes), nullptr, stream),
      generator_(std::move(p.inputs), batch_.view(), tracker_.reset_hook(),
                 std::shared_ptr<unsigned char>(storage_, storage_.get() + p.batch_bytes + p.progress_bytes), nullptr,
                 stream) {
  generator_.generate(env_mask{}, false, stream);  // episode 0 of every env; resets its progress
}

}  // namespace track_gen
