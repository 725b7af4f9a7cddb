"""The extension's name tables follow the C++ headers: every status bit of ``status.hpp`` and
every progress flag reaches Python's ``status_bits()`` / ``progress_flag_bits()`` (module.cu lists
them by name). Read from the sources, so it runs without torch or the extension."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _constants(namespace: str) -> list:
    text = (ROOT / "include/track_gen/status.hpp").read_text()
    body = re.search(r"namespace %s \{(.*?)\}  // namespace %s" % (namespace, namespace), text, re.S).group(1)
    return re.findall(r"inline constexpr std::uint32_t (\w+) =", body)


def _bound(macro: str) -> set:
    return set(re.findall(macro + r"\((\w+)\)", (ROOT / "python/csrc/module.cu").read_text()))


def test_every_status_bit_is_bound():
    masks = {"attempts_mask"}  # a field of the word, not a bit (status::attempts reads it)
    missing = [n for n in _constants("status") if n not in masks and n not in _bound("TG_STATUS")]
    assert not missing, f"status.hpp bits missing from module.cu's status_bits: {missing}"


def test_every_progress_flag_is_bound():
    masks = {"step_events"}  # a mask of several flags
    missing = [n for n in _constants("progress_flags") if n not in masks and n not in _bound("TG_FLAG")]
    assert not missing, f"progress_flags missing from module.cu's progress_flag_bits: {missing}"


def _module_bindings() -> tuple:
    """(Course's methods and properties, module functions) that module.cu binds."""
    text = (ROOT / "python/csrc/module.cu").read_text()
    start = text.index('py::class_<py_course>(m, "Course")')
    end = text.index("\n  m.def(", start)  # the class's chain ends before the first module function
    course = set(re.findall(r'\.def(?:_property_readonly)?\(\s*"(\w+)"', text[start:end]))
    functions = set(re.findall(r'\bm\.def\(\s*"(\w+)"', text))
    return course, functions


def _stub_names() -> tuple:
    import ast  # noqa: PLC0415
    tree = ast.parse((ROOT / "python/track_gen/_C.pyi").read_text())
    course = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Course")
    methods = {f.name for f in course.body if isinstance(f, ast.FunctionDef) and f.name != "__init__"}
    functions = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    return methods, functions


def test_the_type_stubs_name_every_binding_and_nothing_else():
    bound_course, bound_functions = _module_bindings()
    stub_course, stub_functions = _stub_names()
    assert len(bound_course) > 20 and len(bound_functions) > 5  # the parse found the bindings
    assert stub_course == bound_course, (sorted(bound_course - stub_course), sorted(stub_course - bound_course))
    assert stub_functions == bound_functions, (sorted(bound_functions - stub_functions),
                                               sorted(stub_functions - bound_functions))
