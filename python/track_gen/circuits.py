"""Real circuits: closed centrelines with per-point road half-widths, read from and written to the
TUM racetrack-database CSV, a plain ``x, y[, z]`` CSV and JSON; export of a generated track to the
same files; a course from loaded circuits. Pure Python (no torch, no extension) except
:func:`course_from_circuits`, which builds a :class:`~track_gen.course.Course`::

    from track_gen.circuits import load_circuit, save_circuit, export_track, course_from_circuits
    c = load_circuit("Monza.csv")                 # TUM: x_m, y_m, w_tr_right_m, w_tr_left_m
    params = presets.track(64, num_samples=4096, validate={"length_max": 7000.0})
    course = course_from_circuits(params, [c], half_width="narrowest", checkpoint_spacing=10.0)
    export_track(course, 0, "env0.json")

The formats are those of the C++ header ``track_gen/circuits.hpp`` (docs/circuits.md):

- **TUM CSV**: a header comment ``# x_m,y_m,w_tr_right_m,w_tr_left_m`` (columns found by name, in
  any order; without it the four columns in that order), then one row per point [m]; no z.
- **plain CSV**: ``x, y[, z]`` rows [m] (z = 0 when absent, every row the same count), an optional
  header line (a first non-comment line starting with a letter), no widths.
- **JSON**: ``{"points": [[x, y, z], ...], "half_widths": [[left, right], ...], "closed": true}``;
  ``points`` required ([x, y] rows allowed), ``half_widths`` optional, ``closed`` optional and
  true; other keys ignored.

``#`` starts a comment line, fields are comma separated with optional spaces or tabs, blank
lines are skipped, lines end with LF, CRLF or a lone CR (old Mac OS). Files are UTF-8 (a byte that
is not raises ``ValueError`` naming its line and offset); JSON nested deeper than 64 levels is
refused. A number must round to a finite float32, as C++ reads it (magnitude below 2^128 - 2^103;
the largest float32 is 3.40282347e+38), and the writers refuse one that does not; Python keeps
the double read (C++ reads a number below float32's subnormals as +-0). Half-widths are
``(left, right)`` of the direction of travel, as ``tracks.half_widths``. Numbers are written
with ``repr`` (the shortest text that reads back as the same double), so ``save_circuit`` then
``load_circuit`` gives the same floats exactly.

Widths and the generated track: the pipeline has one half-width per batch
(``params.half_width``), so per-point widths are loaded and exported but do not reach a generated
track; ``course_from_circuits(..., half_width="narrowest")`` sets ``half_width`` to the smallest
half-width of the circuits (a road inside the real one everywhere).

Errors: ``ValueError`` naming the file, the line (for JSON the line of a syntax error, else the
JSON path such as ``points[4][1]``) and what is wrong; ``OSError`` when a file cannot be opened.
"""
from __future__ import annotations

import json
import math
import numbers
import operator
import os
import re
from itertools import accumulate
from typing import List, NamedTuple, Optional, Sequence, Tuple

__all__ = ["FORMATS", "Circuit", "course_from_circuits", "detect_format", "export_track", "format_circuit",
           "load_circuit", "narrowest_half_width", "parse_circuit", "save_circuit"]

FORMATS = ("tum_csv", "plain_csv", "json")
_TUM_COLUMNS = ("x_m", "y_m", "w_tr_right_m", "w_tr_left_m")
# Half-way between the largest float32 (2^128 - 2^104) and 2^128: a double from here up rounds to
# infinity as a float32 (ties to even), one below it to a finite float (IEEE 754 binary32).
_FLOAT32_INFINITE_FROM = 2.0 ** 128 - 2.0 ** 103
# What std::from_chars reads at the start of a field that starts with a letter (a header is not).
_WORD_NUMBER = re.compile(r"(?i)inf|nan")
# The same limit as detail::circuits::max_json_depth in include/track_gen/circuits.hpp: a circuit
# needs 3 levels; json.loads recurses once per level (RecursionError near 1000).
_MAX_JSON_DEPTH = 64
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)
_JSON_BRACKETS = re.compile(_JSON_STRING.pattern + r"|[\[\]{}]", re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class Circuit(NamedTuple):
    """A closed centreline [m]: ``points`` ``[(x, y, z)] * P`` (P >= 3), ``half_widths``
    ``[(left, right)] * P`` (>= 0) or ``None`` when the file has none."""
    points: List[Tuple[float, float, float]]
    half_widths: Optional[List[Tuple[float, float]]] = None


def _fail(name: str, line: int, what: str):
    where = f"{name}:{line}" if line else name
    raise ValueError(f"track_gen: {where}: {what}")


def _fits_float32(v: float) -> bool:
    """Whether ``v`` rounds to a finite float32 (False for infinities and NaN too)."""
    return abs(v) < _FLOAT32_INFINITE_FROM


def _beyond_float32(value: str) -> str:
    """The message for a number that rounds to infinity as a float32: the same words in C++."""
    return f"{value} is outside float32's range (it rounds to infinity; the largest float32 is 3.40282347e+38)"


def _number(field: str, name: str, line: int, column: str) -> float:
    # float() also takes '1_000', 'inf', 'nan', Unicode digits and spaces around the number; the C++
    # reader (std::from_chars) none of these. Without them the two agree (fuzzed against C++).
    try:
        if (not field or not field.isascii() or "_" in field or "n" in field or "N" in field or field[0].isspace()
                or field[-1].isspace()):
            raise ValueError
        v = float(field)
    except ValueError:
        _fail(name, line, f"column {column}: {field!r} is not a finite number")
    if not abs(v) < _FLOAT32_INFINITE_FROM:  # _fits_float32, inlined: one call per field
        _fail(name, line, f"column {column}: {_beyond_float32(field)}")
    return v


def _width(field: str, name: str, line: int, column: str) -> float:
    w = _number(field, name, line, column)
    if w < 0:
        _fail(name, line, f"column {column}: negative half-width {field} (must be >= 0 m)")
    return w


def _lines(text: str) -> str:
    """``text`` with every line end (CRLF, a lone CR) as LF: the ends the C++ reader takes."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _rows(text: str):
    """(line number, stripped line) of every non-blank line. Lines end at LF, CRLF or CR only
    (splitlines would also split at form feeds and Unicode separators); spaces and tabs are
    stripped, as in C++."""
    for number, raw in enumerate(_lines(text).split("\n"), start=1):
        t = raw.strip(" \t")
        if t:
            yield number, t


def _split(t: str) -> List[str]:
    return [f.strip(" \t") for f in t.split(",")]


def _check_count(points, name: str) -> None:
    if len(points) < 3:
        _fail(name, 0, f"{len(points)} points; a closed circuit needs at least 3")


def _parse_tum(text: str, name: str) -> Circuit:
    col = {c: k for k, c in enumerate(_TUM_COLUMNS)}  # standard order unless a header names them
    points, widths, seen_data = [], [], False
    for line, t in _rows(text):
        if t.startswith("#"):
            names = _split(t[1:])
            if seen_data or "x_m" not in names:
                continue  # a plain comment
            for c in _TUM_COLUMNS:
                if c not in names:
                    _fail(name, line, f"column {c} missing from the header {t!r}")
                col[c] = names.index(c)
            continue
        seen_data = True
        f = _split(t)
        needed = max(col.values()) + 1
        if len(f) < needed:
            _fail(name, line, f"{len(f)} columns, expected {needed} (x_m, y_m, w_tr_right_m, w_tr_left_m)")
        x, y = (_number(f[col[c]], name, line, c) for c in _TUM_COLUMNS[:2])
        right, left = (_width(f[col[c]], name, line, c) for c in _TUM_COLUMNS[2:])
        points.append((x, y, 0.0))
        widths.append((left, right))
    _check_count(points, name)
    return Circuit(points, widths)


def _parse_plain(text: str, name: str) -> Circuit:
    points, columns, first_line, first = [], 0, 0, True
    for line, t in _rows(text):
        if t.startswith("#"):
            continue
        f = _split(t)
        if first and f[0][:1].isascii() and f[0][:1].isalpha() and not _WORD_NUMBER.match(f[0]):
            first = False  # the optional header line (x,y,z); a row of bad numbers fails below
            continue
        first = False
        if len(f) not in (2, 3):
            _fail(name, line, f"{len(f)} columns, expected x, y or x, y, z")
        if not columns:
            columns, first_line = len(f), line
        elif len(f) != columns:
            _fail(name, line, f"{len(f)} columns, but line {first_line} has {columns}")
        x = _number(f[0], name, line, "x")
        y = _number(f[1], name, line, "y")
        z = _number(f[2], name, line, "z") if columns == 3 else 0.0
        points.append((x, y, z))
    _check_count(points, name)
    return Circuit(points, None)


def _check_json_depth(text: str, name: str) -> None:
    """Refuses JSON nested deeper than _MAX_JSON_DEPTH (brackets outside strings), naming the line."""
    brackets = _JSON_STRING.sub("", text).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    if max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0) <= _MAX_JSON_DEPTH:
        return  # the common case, without a Python loop; else find the line
    depth = 0
    for m in _JSON_BRACKETS.finditer(text):
        b = m.group()
        if b in "[{":
            depth += 1
            if depth > _MAX_JSON_DEPTH:
                _fail(name, text.count("\n", 0, m.start()) + 1, f"JSON nested deeper than {_MAX_JSON_DEPTH} levels "
                      '(a circuit needs 3: the object, "points", a point)')
        elif b in "]}":
            depth -= 1


def _parse_json(text: str, name: str) -> Circuit:
    text = _lines(text)  # json counts lines at LF only
    _check_json_depth(text, name)
    def constant(word):  # json takes NaN and Infinity, JSON (RFC 8259) and nlohmann (C++) do not
        _fail(name, 0, f"not valid JSON: {word} is no JSON number")

    try:
        doc = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as err:
        _fail(name, err.lineno, f"not valid JSON: {err.msg} (column {err.colno})")
    _check_strings(doc, name)
    if not isinstance(doc, dict):
        _fail(name, 0, 'the top level must be an object with a "points" array')

    def num(v, path):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            _fail(name, 0, f"{path}: {json.dumps(v)} is not a number")
        try:
            f = float(v)
        except OverflowError:  # an integer beyond the double range
            f = math.inf
        if not abs(f) < _FLOAT32_INFINITE_FROM:  # _fits_float32, inlined: one call per value
            _fail(name, 0, f"{path}: {_beyond_float32(json.dumps(v))}")
        return f

    if "closed" in doc and doc["closed"] is not True:
        _fail(name, 0, f'"closed" is {json.dumps(doc["closed"])}; only closed circuits (true) are supported')
    pts = doc.get("points")
    if not isinstance(pts, list):
        _fail(name, 0, '"points" missing or not an array of [x, y(, z)]')
    points = []
    for i, p in enumerate(pts):
        path = f"points[{i}]"
        if not isinstance(p, list) or len(p) not in (2, 3):
            _fail(name, 0, f"{path}: expected [x, y] or [x, y, z]")
        points.append((num(p[0], path + "[0]"), num(p[1], path + "[1]"),
                       num(p[2], path + "[2]") if len(p) == 3 else 0.0))
    widths = None
    hw = doc.get("half_widths")
    if hw is not None:
        if not isinstance(hw, list) or len(hw) != len(pts):
            _fail(name, 0, f'"half_widths" must be an array of one [left, right] pair per point ({len(pts)})')
        widths = []
        for i, w in enumerate(hw):
            path = f"half_widths[{i}]"
            if not isinstance(w, list) or len(w) != 2:
                _fail(name, 0, f"{path}: expected [left, right]")
            left, right = num(w[0], path + "[0]"), num(w[1], path + "[1]")
            if left < 0 or right < 0:
                _fail(name, 0, f"{path}: negative half-width (must be >= 0 m)")
            widths.append((left, right))
    _check_count(points, name)
    return Circuit(points, widths)


def detect_format(path: str, text: str) -> str:
    """``json`` for a ``.json`` file; otherwise ``tum_csv`` when a header comment names
    ``w_tr_right_m`` or the first data row has 4 columns, else ``plain_csv``."""
    if os.fspath(path).lower().endswith(".json"):
        return "json"
    for _, t in _rows(text.removeprefix("\ufeff")):
        if t.startswith("#"):
            if "w_tr_right_m" in t:
                return "tum_csv"
            continue
        return "tum_csv" if len(_split(t)) == 4 else "plain_csv"
    return "plain_csv"


def parse_circuit(text: str, format: str, name: str = "<circuit>") -> Circuit:
    """A circuit from ``text`` in ``format`` (one of ``FORMATS``); ``name`` goes into errors.

    Raises:
        ValueError: bad content (the message names ``name``, the line and the fault) or an
            unknown format.
    """
    parsers = {"tum_csv": _parse_tum, "plain_csv": _parse_plain, "json": _parse_json}
    if format not in parsers:
        raise ValueError(f"track_gen: format must be one of {FORMATS}, got {format!r}")
    return parsers[format](text.removeprefix("\ufeff"), name)  # a UTF-8 byte order mark, as some editors write


def load_circuit(path, format: Optional[str] = None) -> Circuit:
    """Reads the circuit file at ``path`` (format from :func:`detect_format` unless given).

    Raises:
        OSError: the file cannot be read.
        ValueError: bad content: bytes that are not UTF-8, a missing column, a non-number or one
            beyond float32's range, a negative width, fewer than 3 points, JSON nested deeper
            than 64 levels... (the message names the file and the line).
    """
    with open(path, "rb") as f:
        data = f.read()
    name = os.fspath(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        at = err.start
        before = data[:at]  # lines end at LF, CRLF or CR, as in _rows
        line = 1 + before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n")
        _fail(name, line, f"byte {at} (0x{data[at]:02x}) is not UTF-8: circuit files are UTF-8 text")
    return parse_circuit(text, format or detect_format(name, text), name)


def _check_strings(doc, name: str) -> None:
    """Refuses a JSON string (key or value) holding a lone UTF-16 surrogate escape ("\\ud800"):
    json.loads takes it, the C++ reader (nlohmann-json) does not, and it has no UTF-8 form."""
    stack = [doc]
    while stack:
        v = stack.pop()
        items = list(v.items()) if isinstance(v, dict) else [(None, x) for x in v] if isinstance(v, list) else []
        for key, x in items:
            for text in (key, x):
                if isinstance(text, str):
                    try:
                        text.encode("utf-8")
                    except UnicodeEncodeError:
                        _fail(name, 0, f"not valid JSON: the string {json.dumps(text)} holds a lone UTF-16 surrogate")
            if isinstance(x, (dict, list)):
                stack.append(x)


def _coordinate(v, where: str, name: str) -> float:
    """A number the readers could read back: a real (numbers.Real, NumPy and 0-d tensor values
    included), not a bool (Python's, NumPy's or a tensor's dtype) or a string, within double's
    range."""
    if (isinstance(v, (bool, str, bytes)) or "bool" in type(v).__name__ or "bool" in str(getattr(v, "dtype", ""))
            or not isinstance(v, numbers.Real) and not hasattr(v, "__float__")):
        _fail(name, 0, f"{where}: {v!r} is not a number")
    try:
        return float(v)
    except (OverflowError, TypeError, ValueError):
        _fail(name, 0, f"{where}: {v!r} is not a finite number within float32's range")


def _checked(points, half_widths, name: str):
    """Points as (x, y, z) float tuples and widths as (left, right) ones, checked as the reader
    would check them."""
    pts = []
    for i, p in enumerate(points):
        p = [_coordinate(v, f"points[{i}]", name) for v in p]
        if len(p) not in (2, 3):
            _fail(name, 0, f"points[{i}]: expected (x, y) or (x, y, z)")
        if not all(math.isfinite(v) for v in p):
            _fail(name, 0, f"points[{i}] is not finite")
        _check_float32(p, f"points[{i}]", name)
        pts.append((p[0], p[1], p[2] if len(p) == 3 else 0.0))
    _check_count(pts, name)
    if half_widths is None:
        return pts, None
    widths = [tuple(_coordinate(v, f"half_widths[{i}]", name) for v in w) for i, w in enumerate(half_widths)]
    if len(widths) != len(pts):
        _fail(name, 0, f"{len(widths)} half-widths for {len(pts)} points (give one (left, right) pair per point, or none)")
    for i, w in enumerate(widths):
        if len(w) != 2 or not all(math.isfinite(v) and v >= 0 for v in w):
            _fail(name, 0, f"half_widths[{i}] must be (left, right), finite and >= 0 m")
        _check_float32(w, f"half_widths[{i}]", name)
    return pts, widths


def _check_float32(values, path: str, name: str) -> None:
    """Refuses what the readers (C++'s float32 ones, and so Python's) would refuse."""
    for k, v in enumerate(values):
        if not _fits_float32(v):
            _fail(name, 0, f"{path}[{k}]: {_beyond_float32(repr(v))}, so it could not be read back")


def format_circuit(points, half_widths=None, format: str = "plain_csv", name: str = "<circuit>") -> str:
    """The text of a circuit in ``format``. ``points``: ``[P, 2]`` or ``[P, 3]`` numbers [m];
    ``half_widths``: ``[P, 2]`` (left, right) [m] or ``None``. TUM needs widths and z = 0; plain CSV
    drops the widths.

    Raises:
        ValueError: what could not be read back (fewer than 3 points, non-finite values or ones
            that round to infinity as a float32, negative widths, a length mismatch; TUM without
            widths or with z != 0), naming the value (``points[i][k]``), or an unknown format.
    """
    pts, widths = _checked(points, half_widths, name)
    r = repr
    if format == "tum_csv":
        if widths is None:
            _fail(name, 0, "the TUM format needs half-widths; none given")
        lines = ["# " + ",".join(_TUM_COLUMNS)]
        for i, ((x, y, z), (left, right)) in enumerate(zip(pts, widths)):
            if z != 0:
                _fail(name, 0, f"points[{i}].z is not 0: the TUM format has no z (use plain CSV or JSON)")
            lines.append(f"{r(x)},{r(y)},{r(right)},{r(left)}")
        return "\n".join(lines) + "\n"
    if format == "plain_csv":
        return "x,y,z\n" + "".join(f"{r(x)},{r(y)},{r(z)}\n" for x, y, z in pts)
    if format == "json":
        body = ",\n    ".join(f"[{r(x)}, {r(y)}, {r(z)}]" for x, y, z in pts)
        text = '{\n  "closed": true,\n  "points": [\n    ' + body + "\n  ]"
        if widths is not None:
            text += ',\n  "half_widths": [\n    ' + ",\n    ".join(f"[{r(a)}, {r(b)}]" for a, b in widths) + "\n  ]"
        return text + "\n}\n"
    raise ValueError(f"track_gen: format must be one of {FORMATS}, got {format!r}")


def save_circuit(path, points, half_widths=None, format: Optional[str] = None) -> None:
    """Writes a circuit to ``path`` (replacing it). ``format`` defaults to ``json`` for a
    ``.json`` path, else ``tum_csv`` when ``half_widths`` are given and ``plain_csv`` when not.
    See :func:`format_circuit` for the arguments and errors; ``OSError`` when it cannot write."""
    name = os.fspath(path)
    if format is None:
        format = "json" if name.lower().endswith(".json") else ("plain_csv" if half_widths is None else "tum_csv")
    text = format_circuit(points, half_widths, format, name)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def _as_list(x):
    """Nested Python lists from a tensor (any device), a NumPy array or nested sequences."""
    if hasattr(x, "detach"):
        x = x.detach().cpu()
    return x.tolist() if hasattr(x, "tolist") else [list(v) if isinstance(v, (list, tuple)) else v for v in x]


def export_track(course, env: int, path, format: Optional[str] = None, add_origin: bool = True) -> Circuit:
    """Writes env ``env``'s generated centreline (``course.tracks.position[env]``, ``[N, 3]``) and
    half-widths (``course.tracks.half_widths[env]``, ``[N, 2]``) to ``path`` (see
    :func:`save_circuit`; a ``.csv`` becomes TUM, which needs z = 0: use ``.json`` or
    ``format="plain_csv"`` for 3D tracks). With ``add_origin`` the env's ``tracks.origin`` is
    added (the user's frame for re-centred user tracks). Copies the tensors to the host
    (synchronises their stream). Returns what it wrote.

    Raises:
        IndexError: ``env`` outside ``[0, course.num_envs)``. ValueError, OSError: as save_circuit.
    """
    tracks = course.tracks
    num_envs = len(tracks.position)
    try:
        index = None if isinstance(env, bool) else operator.index(env)  # ints, NumPy integers
    except TypeError:
        index = None
    if index is None or not 0 <= index < num_envs:
        raise IndexError(f"track_gen: export_track: env = {env!r} outside [0, {num_envs}) (an int index)")
    env = index
    points = _as_list(tracks.position[env])
    widths = [tuple(w) for w in _as_list(tracks.half_widths[env])]
    if add_origin:
        o = _as_list(tracks.origin[env])
        points = [(p[0] + o[0], p[1] + o[1], p[2] + o[2]) for p in points]
    points = [tuple(p) for p in points]
    save_circuit(path, points, widths, format)
    return Circuit(points, widths)


def narrowest_half_width(circuits: Sequence[Circuit]) -> float:
    """The smallest half-width of the circuits over every point and both sides [m].

    Raises:
        ValueError: no circuits, or ``circuits[i]`` has no widths."""
    if not circuits:
        raise ValueError("track_gen: narrowest_half_width: no circuits")
    for i, c in enumerate(circuits):
        if not c.half_widths:
            raise ValueError(f"track_gen: narrowest_half_width: circuits[{i}] has no half-widths")
    return min(min(w) for c in circuits for w in c.half_widths)


def course_from_circuits(params, circuits: Sequence[Circuit], kind: str = "centreline", recentre: bool = False,
                         checkpoint_spacing: float = 0.6, half_width: Optional[str] = None):
    """A :class:`~track_gen.course.Course` of loaded circuits (``Course.from_tracks``): one per env,
    or one shared by every env. ``kind="centreline"`` takes the points as the centreline (dense
    TUM data); ``"control_points"`` fits a spline through sparse points. ``half_width=None`` keeps
    ``params.half_width``; ``"narrowest"`` replaces it with :func:`narrowest_half_width`. Real
    circuits are longer than the ``track`` preset's 10-60 m: raise ``validate.length_max`` (and
    ``num_samples``) in ``params`` or the tracks are flagged invalid. Needs torch and the extension.

    Raises:
        ValueError: ``half_width`` is neither None nor ``"narrowest"``, and as ``Course.from_tracks``.
    """
    if half_width not in (None, "narrowest"):
        raise ValueError(f"track_gen: half_width must be None or 'narrowest', got {half_width!r}")
    if half_width == "narrowest":
        params = params.replace(half_width=narrowest_half_width(circuits))
    from .course import Course  # noqa: PLC0415 - lazy: the course needs torch and the extension
    return Course.from_tracks(params, [c.points for c in circuits], kind=kind, recentre=recentre,
                              checkpoint_spacing=checkpoint_spacing)
