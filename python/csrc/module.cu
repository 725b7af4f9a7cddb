// track_gen._C, CUDA build (nvcc): CUDA courses as `Course`, CPU courses as `HostCourse`, gate
// sequences as `GateSequences` (CUDA) and `HostGateSequences` (CPU), and the capture helpers.
// The bindings are shared with the CPU-only build (module_cpu.cpp): bindings.hpp; the course
// types are compiled in units of their own (course_holder.hpp). CMakeLists.txt defines
// TRACK_GEN_PYTHON_CUDA for every unit of this build.
#include "bindings.hpp"

namespace tp = track_gen_python;

PYBIND11_MODULE(_C, m) {
  namespace py = pybind11;
  namespace tg = track_gen;
  m.doc() = "track_gen's C++ courses for track_gen.course.Course (CUDA and CPU backends); see track_gen/interop/torch.hpp";
  tp::bind_common(m);
  tp::bind_course<tg::backend::cuda>(m, "Course", "A course on a CUDA device (backend::cuda, the default policies)");
  tp::bind_course<tg::backend::host>(m, "HostCourse", "A course on the CPU (backend::host)");
  tp::bind_gate_sequences<tg::backend::cuda>(m, "GateSequences",
                                             "Gate sequences on a CUDA device (gate_sequences<policy>, backend::cuda)");
  tp::bind_gate_sequences<tg::backend::host>(m, "HostGateSequences", "Gate sequences on the CPU (backend::host)");
  m.attr("backends") = py::make_tuple("cuda", "cpu");
  m.def("release_deferred", &tg::release_deferred,
        "Frees now the course memory that released graphs left in the deferred list (not inside a capture)");
  m.def(
      "capture_info",
      [](std::uintptr_t stream) {
        return tp::python_errors([&] {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        unsigned long long id = 0;
        const cudaError_t code =
            cudaStreamGetCaptureInfo(reinterpret_cast<cudaStream_t>(stream), &status, &id, nullptr, nullptr, nullptr, nullptr);
        tg::detail::throw_on_cuda_error(code, "cudaStreamGetCaptureInfo");
        return py::make_tuple(static_cast<int>(status), id);
        });
      },
      py::arg("stream"),
      "(status, id) of a stream's capture: status 0 none, 1 active, 2 invalidated (cudaStreamCaptureStatus)");
}
