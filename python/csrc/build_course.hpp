#pragma once
// build_course's definition, for the generated units only (csrc/CMakeLists.txt: one per
// pipeline, course_unit.cpp.in): a unit that includes this header and instantiates
// build_course<Backend, Pipeline> compiles that pipeline's course, its kernels included.
#include "course_holder.hpp"

namespace track_gen_python __attribute__((visibility("hidden"))) {

template <class Backend, class Pipeline>
std::unique_ptr<any_course<Backend>> build_course(const char* name, const course_request<Backend>& request) {
  using holder = course_holder<Backend, tg::course<Pipeline, typename backend_types<Backend>::policy>>;
  if (request.variants != nullptr)
    return std::make_unique<holder>(name, request.params, request.spacing, *request.variants, request.stream);
  if (request.tracks != nullptr)
    return std::make_unique<holder>(name, request.params, request.spacing, *request.tracks, request.stream);
  return std::make_unique<holder>(name, request.params, request.spacing, request.stream);
}

}  // namespace track_gen_python

/// The explicit instantiations of one generated unit: `pipeline` (a name in track_gen::presets)
/// on the host backend, and on the CUDA backend in the CUDA build.
#ifdef TRACK_GEN_PYTHON_CUDA
#define TRACK_GEN_PYTHON_COURSE_UNIT(pipeline)                                                                        \
  namespace track_gen_python {                                                                                      \
  template std::unique_ptr<any_course<tg::backend::host>> build_course<tg::backend::host, tg::presets::pipeline>(   \
      const char*, const course_request<tg::backend::host>&);                                                       \
  template std::unique_ptr<any_course<tg::backend::cuda>> build_course<tg::backend::cuda, tg::presets::pipeline>(   \
      const char*, const course_request<tg::backend::cuda>&);                                                       \
  }
#else
#define TRACK_GEN_PYTHON_COURSE_UNIT(pipeline)                                                                        \
  namespace track_gen_python {                                                                                      \
  template std::unique_ptr<any_course<tg::backend::host>> build_course<tg::backend::host, tg::presets::pipeline>(   \
      const char*, const course_request<tg::backend::host>&);                                                       \
  }
#endif
