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
