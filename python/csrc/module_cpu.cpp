// track_gen._C, CPU-only build (a plain C++ compiler, no CUDA toolkit): CPU courses as
// `HostCourse` (backend::host), the same methods as the CUDA build's `Course`, and CPU gate
// sequences as `HostGateSequences`; csrc/CMakeLists.txt builds this when torch has no CUDA or
// nvcc is missing (build_config.py decides). The bindings: bindings.hpp.
#include "bindings.hpp"

namespace tp = track_gen_python;

PYBIND11_MODULE(_C, m) {
  namespace py = pybind11;
  namespace tg = track_gen;
  m.doc() = "track_gen's C++ course for track_gen.course.Course (CPU backend only: built without CUDA)";
  tp::bind_common(m);
  tp::bind_course<tg::backend::host>(m, "HostCourse", "A course on the CPU (backend::host)");
  tp::bind_gate_sequences<tg::backend::host>(m, "HostGateSequences", "Gate sequences on the CPU (backend::host)");
  m.attr("backends") = py::make_tuple("cpu");
  m.def("release_deferred", [] {}, "Nothing to free: a CPU-only build has no graphs");
}
