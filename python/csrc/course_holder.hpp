#pragma once
// The extension's course types behind one interface: any_course<Backend>, implemented by
// course_holder<Backend, course<Pipeline, policy>> for each pipeline a Python course can run.
// build_course<Backend, Pipeline> is only declared here; build_course.hpp defines it, and the
// translation units that csrc/CMakeLists.txt generates, one per pipeline, instantiate it, so
// that nvcc compiles the pipelines' kernels in parallel instead of in one unit.
#include <track_gen/interop/torch_tensors.hpp>
#include <track_gen/track_gen.hpp>

#ifdef TRACK_GEN_PYTHON_CUDA
#include <cuda/stream_ref>
#endif

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

// Hidden like pybind11's own namespace (a class_ of a visible type warns otherwise).
namespace track_gen_python __attribute__((visibility("hidden"))) {

namespace tg = track_gen;
namespace tt = track_gen::interop::torch;

/// The policy and the stream type of a backend's courses (bindings.hpp's backend_traits adds
/// the tensors' device, the stream lookup and the extension's own kernels).
template <class Backend>
struct backend_types;

/// CPU courses: skip::unconditional (no graphs to skip in), ownership::anchored (tensors keep
/// the memory); calls run on the calling thread.
template <>
struct backend_types<tg::backend::host> {
  using policy = tg::policy<tg::capture::global, tg::skip::unconditional, tg::ownership::anchored, tg::backend::host>;
  using stream_type = tg::host_stream;
};

#ifdef TRACK_GEN_PYTHON_CUDA
/// CUDA courses: the library's default policies (global capture mode, conditional skipping),
/// anchored ownership.
template <>
struct backend_types<tg::backend::cuda> {
  using policy = tg::policy<tg::capture::global, tg::skip::conditional, tg::ownership::anchored, tg::backend::cuda>;
  using stream_type = ::cuda::stream_ref;
};
#endif

/// The course's operations that do not depend on its pipeline, behind one interface so that
/// py_course holds any course type of its backend.
template <class Backend>
class any_course {
 public:
  using stream_type = typename backend_types<Backend>::stream_type;
  using field_type = tg::heightfield<typename backend_types<Backend>::policy>;
  using sdf_type = tg::sdf_field<typename backend_types<Backend>::policy>;
  virtual ~any_course() = default;
  virtual const char* pipeline_name() const = 0;
  virtual void bind(const float3* position) = 0;
  virtual void bind(const float3* position, const float4* orientation, const float2* half_extents, stream_type stream) = 0;
  virtual void step(stream_type stream) = 0;
  virtual void set_recording(const tg::recording_options& options) = 0;
  virtual void regenerate(const tg::env_mask& mask, bool advance, stream_type stream) = 0;
  virtual std::uint64_t generation_launches(stream_type stream) const = 0;
  /// course::enable_ahead, ahead_enabled, ahead_refill_at, ahead_statistics (tracks built ahead).
  virtual void enable_ahead(const tg::ahead_options& options, stream_type stream) = 0;
  virtual bool ahead_enabled() const = 0;
  virtual int ahead_refill_at() const = 0;
  virtual tg::ahead_counts ahead_statistics(stream_type stream) const = 0;
  virtual tg::course_ref view() const = 0;
  virtual std::shared_ptr<const void> owner() const = 0;
  virtual const tg::track_params& params() const = 0;
  virtual int max_gates() const = 0;
  virtual float checkpoint_spacing() const = 0;
  virtual tt::course_tensors tensors(const at::Device& device) const = 0;
  /// course::attach_heightfield (null detaches).
  virtual void attach_heightfield(const field_type* field, stream_type stream) = 0;
  /// course::attach_sdf (null detaches).
  virtual void attach_sdf(const sdf_type* field, stream_type stream) = 0;
  int num_envs() const { return params().num_envs; }
  int num_samples() const { return params().num_samples; }
};

template <class Backend, class Course>
class course_holder final : public any_course<Backend> {
  using base = any_course<Backend>;
  using typename base::field_type;
  using typename base::sdf_type;
  using typename base::stream_type;
  static_assert(std::is_same_v<typename Course::stream_type, stream_type>, "A course must take its backend's stream type.");

 public:
  template <class... Args>
  explicit course_holder(const char* name, Args&&... args) : name_(name), course_(std::forward<Args>(args)...) {}
  const char* pipeline_name() const override { return name_; }
  void bind(const float3* position) override { course_.bind(position); }
  void bind(const float3* position, const float4* orientation, const float2* half_extents, stream_type stream) override {
    course_.bind(position, orientation, half_extents, stream);
  }
  void step(stream_type stream) override { course_.step(stream); }
  void set_recording(const tg::recording_options& options) override { course_.set_recording(options); }
  void regenerate(const tg::env_mask& mask, bool advance, stream_type stream) override {
    course_.regenerate(mask, advance, stream);
  }
  std::uint64_t generation_launches(stream_type stream) const override { return course_.generation_launches(stream); }
  void enable_ahead(const tg::ahead_options& options, stream_type stream) override {
    course_.enable_ahead(options, stream);
  }
  bool ahead_enabled() const override { return course_.ahead_enabled(); }
  int ahead_refill_at() const override { return course_.ahead_refill_at(); }
  tg::ahead_counts ahead_statistics(stream_type stream) const override { return course_.ahead_statistics(stream); }
  tg::course_ref view() const override { return course_.view(); }
  std::shared_ptr<const void> owner() const override { return course_.owner(); }
  const tg::track_params& params() const override { return course_.params(); }
  int max_gates() const override { return course_.max_gates(); }
  float checkpoint_spacing() const override { return course_.checkpoint_spacing(); }
  tt::course_tensors tensors(const at::Device& device) const override { return tt::tensors(course_, device); }
  void attach_heightfield(const field_type* field, stream_type stream) override {
    course_.attach_heightfield(field, stream);
  }
  void attach_sdf(const sdf_type* field, stream_type stream) override { course_.attach_sdf(field, stream); }

 private:
  const char* name_;
  Course course_;
};

/// A course's constructor arguments: `params` and `spacing` always, then either the per-env
/// variants, or the user tracks, or neither (random tracks), and the stream.
template <class Backend>
struct course_request {
  const tg::track_params& params;
  float spacing;
  const tg::track_variants* variants;  ///< null: one parameter set for every env
  const tg::user_tracks* tracks;       ///< null: random tracks
  typename backend_types<Backend>::stream_type stream;
};

/// A course<Pipeline> of `Backend` built from `request`, named `name` (Course.pipeline).
/// Defined in build_course.hpp; instantiated by the generated unit of `Pipeline`.
/// @throws what course's constructor throws.
template <class Backend, class Pipeline>
std::unique_ptr<any_course<Backend>> build_course(const char* name, const course_request<Backend>& request);

}  // namespace track_gen_python

/// build_course of presets::`pipeline` named after it. csrc/CMakeLists.txt generates a unit for
/// each pipeline that bindings.hpp names this way (it reads them from there), so the list of
/// the extension's pipelines is written once: where they are chosen.
#define TRACK_GEN_PYTHON_BUILD(Backend, pipeline, request) \
  ::track_gen_python::build_course<Backend, ::track_gen::presets::pipeline>(#pipeline, request)
