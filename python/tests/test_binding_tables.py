"""The extension's name tables follow the C++ headers: every status bit of ``status.hpp`` and
every progress flag reaches Python's ``status_bits()`` / ``progress_flag_bits()`` (bindings.hpp
lists them by name), and the type stubs name every binding. Read from the sources, so it runs without torch or the extension."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _constants(namespace: str) -> list:
    text = (ROOT / "include/track_gen/status.hpp").read_text()
    body = re.search(r"namespace %s \{(.*?)\}  // namespace %s" % (namespace, namespace), text, re.S).group(1)
    return re.findall(r"inline constexpr std::uint32_t (\w+) =", body)


CSRC = ROOT / "python/csrc"


def _bound(macro: str) -> set:
    return set(re.findall(macro + r"\((\w+)\)", (CSRC / "bindings.hpp").read_text()))


def test_every_status_bit_is_bound():
    missing = [n for n in _constants("status") if n not in _bound("TG_STATUS")]
    assert not missing, f"status.hpp bits missing from bindings.hpp's status_bits: {missing}"


def test_every_progress_flag_is_bound():
    masks = {"step_events"}  # a mask of several flags
    missing = [n for n in _constants("progress_flags") if n not in masks and n not in _bound("TG_FLAG")]
    assert not missing, f"progress_flags missing from bindings.hpp's progress_flag_bits: {missing}"


def _module_bindings() -> tuple:
    """(methods and properties of both course types, the CUDA course's own, module functions of
    the CUDA build, of the CPU-only build) that the bindings define."""
    text = (CSRC / "bindings.hpp").read_text()
    start = text.index("py::class_<course_type> cls(m, name, doc);")
    cuda_start = text.index("#ifdef TRACK_GEN_PYTHON_CUDA", start)   # the graph methods follow
    cuda_end = text.index("#endif", cuda_start)
    methods = re.compile(r'\.def(?:_property_readonly)?\(\s*"(\w+)"')
    both, cuda_only = set(methods.findall(text[start:cuda_start])), set(methods.findall(text[cuda_start:cuda_end]))
    function = re.compile(r'\bm\.def\(\s*"(\w+)"')
    common = set(function.findall(text))
    cuda_functions = common | set(function.findall((CSRC / "module.cu").read_text()))
    cpu_functions = common | set(function.findall((CSRC / "module_cpu.cpp").read_text()))
    return both, cuda_only, cuda_functions, cpu_functions


def _stub_names() -> tuple:
    import ast  # noqa: PLC0415
    tree = ast.parse((ROOT / "python/track_gen/_C.pyi").read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def methods(name):
        return {f.name for f in classes[name].body if isinstance(f, ast.FunctionDef) and f.name != "__init__"}

    functions = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    return methods("_CourseBase"), methods("Course"), methods("HostCourse"), functions


def test_the_type_stubs_name_every_binding_and_nothing_else():
    both, cuda_only, cuda_functions, cpu_functions = _module_bindings()
    stub_both, stub_course, stub_host, stub_functions = _stub_names()
    assert len(both) > 20 and cuda_only == {"retain_capture", "retain_graph"}  # the parse found the bindings
    assert stub_both == both, (sorted(both - stub_both), sorted(stub_both - both))
    assert stub_course == cuda_only and not stub_host, (stub_course, stub_host)
    assert stub_functions == cuda_functions, (sorted(cuda_functions - stub_functions),
                                              sorted(stub_functions - cuda_functions))
    assert cpu_functions == cuda_functions - {"capture_info"}, sorted(cuda_functions ^ cpu_functions)


def test_status_bits_docstring_gives_the_headers_attempts_field():
    """``status_bits()["attempts_mask"]`` is bound from status.hpp (above); the shift and the
    bits its docstring gives are the header's."""
    from track_gen import course  # noqa: PLC0415 - pure Python at import
    text = (ROOT / "include/track_gen/status.hpp").read_text()
    shift = int(re.search(r"inline constexpr int attempts_shift = (\d+);", text).group(1))
    width = re.search(r"inline constexpr std::uint32_t attempts_mask = 0x([0-9a-f]+)u << attempts_shift;",
                      text).group(1)
    assert int(width, 16) << shift == 0xff00
    assert f">> {shift}" in course.status_bits.__doc__ and f"bits {shift}-{shift + 7}" in course.status_bits.__doc__
    assert "0xff00" in course.status_bits.__doc__


def test_the_type_stubs_name_every_gate_sequence_binding():
    """The gate sequences (``GateSequences`` / ``HostGateSequences``, bindings.hpp's
    bind_gate_sequences): the stubs' base class names every method and property bound, and
    each build registers the types it should."""
    import ast  # noqa: PLC0415
    text = (CSRC / "bindings.hpp").read_text()
    start = text.index("py::class_<seq_type>(m, name, doc)")
    end = text.index("\n}\n", start)
    bound = set(re.findall(r'\.def(?:_property_readonly)?\(\s*"(\w+)"', text[start:end]))
    tree = ast.parse((ROOT / "python/track_gen/_C.pyi").read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def methods(name):
        return {f.name for f in classes[name].body if isinstance(f, ast.FunctionDef) and f.name != "__init__"}

    assert {"generate", "tensors", "num_envs", "max_gates"} <= bound   # the parse found the bindings
    assert methods("_GateSequencesBase") == bound, sorted(bound ^ methods("_GateSequencesBase"))
    assert not methods("GateSequences") and not methods("HostGateSequences")
    registered = re.compile(r'bind_gate_sequences<tg::backend::(\w+)>\(\s*m,\s*"(\w+)"')
    assert set(registered.findall((CSRC / "module.cu").read_text())) == {("cuda", "GateSequences"),
                                                                         ("host", "HostGateSequences")}
    assert set(registered.findall((CSRC / "module_cpu.cpp").read_text())) == {("host", "HostGateSequences")}
