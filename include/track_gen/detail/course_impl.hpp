#pragma once
/// @file
/// Definitions of `course`'s construction (course.hpp holds the API and its documentation):
/// one allocation, then the batch, the progress tracker and the generator over its ranges, then
/// the first generation.

#include <track_gen/course.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace track_gen {

template <class Pipeline, class Policy>
struct course<Pipeline, Policy>::parts {
  detail::generator_inputs inputs;
  std::shared_ptr<unsigned char> storage;
  std::size_t batch_bytes = 0, progress_bytes = 0, contact_bytes = 0, bytes = 0;
  float contact_trust_margin = 0.0f;  ///< course_contacts_op::trust_margin
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
                                            Pipeline::family_rule, detail::sizes_of<Pipeline>(),
                                            ops::select_temp_bytes(params.num_envs),
                                            sizeof(detail::generate_args<detail::progress_reset_hook>));
  // The box contacts trust their local searches up to half the least clearance margin the
  // tracks were validated with (every variant's own, when there are variants).
  float margin = params.validate.clearance_margin;
  if (variants != nullptr)
    for (const track_params& v : variants->variants) margin = std::min(margin, v.validate.clearance_margin);
  p.contact_trust_margin = 0.5f * std::max(margin, 0.0f);
  p.batch_bytes = batch_type::required_bytes(params.num_envs, params.num_samples, p.inputs.plan.max_gates);
  p.progress_bytes = tracker_type::required_bytes(params.num_envs);
  p.contact_bytes = detail::plan_contacts(params.num_envs).bytes;
  p.bytes = p.batch_bytes + p.progress_bytes + p.inputs.plan.bytes + p.contact_bytes;
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
                                     Pipeline::family_rule, detail::sizes_of<Pipeline>(),
                                     ops::select_temp_bytes(params.num_envs),
                                     sizeof(detail::generate_args<detail::progress_reset_hook>));
  const std::size_t bytes = batch_type::required_bytes(params.num_envs, params.num_samples, in.plan.max_gates) +
                            tracker_type::required_bytes(params.num_envs) + in.plan.bytes +
                            detail::plan_contacts(params.num_envs).bytes;
  detail::check_course_bytes(bytes, params.num_envs, in.plan.max_gates);
  return bytes;
}

template <class Pipeline, class Policy>
course<Pipeline, Policy>::course(parts p, stream_type stream)
    : storage_(p.storage),
      batch_(p.inputs.params.num_envs, p.inputs.params.num_samples, p.inputs.plan.max_gates,
             std::shared_ptr<unsigned char>(storage_, storage_.get()), stream),
      tracker_(batch_.view(), p.inputs.params.gate_half_height,
               Pipeline::gates_evenly_spaced ? gate_layout::even : gate_layout::anchored,
               std::shared_ptr<unsigned char>(storage_, storage_.get() + p.batch_bytes), nullptr, stream),
      generator_(std::move(p.inputs), batch_.view(), tracker_.reset_hook(),
                 std::shared_ptr<unsigned char>(storage_, storage_.get() + p.batch_bytes + p.progress_bytes), nullptr,
                 stream) {
  using ops = typename detail::backend_ops<backend_type>::type;
  unsigned char* contacts = storage_.get() + p.bytes - p.contact_bytes;
  contacts_ = contact_arrays::at(contacts, detail::plan_contacts(p.inputs.params.num_envs));
  contact_trust_margin_ = p.contact_trust_margin;
  ops::zero(contacts, p.contact_bytes, stream);
  generator_.generate(env_mask{}, false, stream);  // episode 0 of every env; resets its progress
}

template <class Pipeline, class Policy>
void course<Pipeline, Policy>::bind(const float3* positions, const float4* orientations, const float2* half_extents,
                                    stream_type stream) {
  using ops = typename detail::backend_ops<backend_type>::type;
  if ((orientations == nullptr) != (half_extents == nullptr))
    throw std::invalid_argument(std::string("track_gen: bind: ") + (orientations == nullptr ? "orientations" : "half_extents") +
                                " is null but " + (orientations == nullptr ? "half_extents" : "orientations") +
                                " is not: give both (boxes) or neither (positions only)");
  if (orientations == nullptr) {
    bind(positions);
    return;
  }
  if (positions == nullptr) throw std::invalid_argument("track_gen: bind: positions is null");
  ops::require_device_pointer(positions, "bind: positions");
  ops::require_device_pointer(orientations, "bind: orientations");
  ops::require_device_pointer(half_extents, "bind: half_extents");
  if (storage_ == nullptr) throw std::logic_error("track_gen: this course was moved from");
  const std::size_t e = static_cast<std::size_t>(num_envs());
  if constexpr (is_cuda) {
    ops::require_not_capturing(stream, "bind with boxes (it copies them to the host to check them)");
    std::vector<float4> q(e);
    std::vector<float2> h(e);
    ops::copy_to_host_async(q.data(), orientations, e * sizeof(float4), stream);
    ops::copy_to_host_async(h.data(), half_extents, e * sizeof(float2), stream);
    ops::synchronize(stream, recording().capture_mode);
    detail::check_bound_boxes(q.data(), h.data(), num_envs());
  } else {
    (void)stream;
    detail::check_bound_boxes(orientations, half_extents, num_envs());
  }
  tracker_.bind(positions);
  positions_ = positions;
  orientations_ = orientations;
  half_extents_ = half_extents;
}

template <class Pipeline, class Policy>
void course<Pipeline, Policy>::step(stream_type stream) {
  tracker_.step(stream);  // checks that the course is alive and positions are bound
  if (orientations_ == nullptr) return;
  const progress_tracker_ref& progress = tracker_.view();
  detail::run_query<backend_type>(num_envs(),
                                  detail::course_contacts_op{progress.tracks(), progress.arrays().hint, positions_,
                                                             orientations_, half_extents_, progress.window(), contacts_,
                                                             contact_trust_margin_},
                                  stream);
}

template <class Pipeline, class Policy>
contact_snapshot course<Pipeline, Policy>::copy_contacts(stream_type stream) const {
  using ops = typename detail::backend_ops<backend_type>::type;
  if (storage_ == nullptr) throw std::logic_error("track_gen: this course was moved from");
  ops::require_not_capturing(stream, "copy_contacts");
  const std::size_t e = static_cast<std::size_t>(num_envs());
  contact_snapshot s;
#define TRACK_GEN_COPY(name, type, ext, doc) \
  s.name.resize(e);                         \
  ops::copy_to_host_async(s.name.data(), contacts_.name, e * sizeof(type), stream);
  TRACK_GEN_CONTACT_FIELDS(TRACK_GEN_COPY)
#undef TRACK_GEN_COPY
  ops::synchronize(stream, recording().capture_mode);
  return s;
}

}  // namespace track_gen
