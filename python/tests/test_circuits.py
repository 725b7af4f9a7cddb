"""Real circuits in Python (track_gen.circuits): exact round trips in the three formats, the same
points from hand-written files in each, the C++ writer's layout read back, errors naming the file,
line and fault, export_track on a course-like object, and what the reader accepts (line ends,
UTF-8, JSON depth, float32's range) checked on the files tests/io/circuits_test.cpp reads too. Pure Python (runs without torch), except
the last test, a GPU test that imports torch inside."""
from __future__ import annotations

import math
import random
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from track_gen import circuits as tc


def _wobbly(count, seed=3):
    """A closed wobbly ellipse with widths, every coordinate a full-precision double."""
    rng = random.Random(seed)
    pts, widths = [], []
    for i in range(count):
        a = 2 * math.pi * i / count
        r = 1 + 0.05 * math.sin(3 * a) + rng.uniform(-1e-3, 1e-3)
        pts.append((35 * r * math.cos(a), 25 * r * math.sin(a), rng.uniform(-1, 1)))
        widths.append((1.1 + 0.3 * math.sin(a / 3), 0.9 + rng.random()))
    return pts, widths


@pytest.mark.parametrize("name,fmt,widths,z", [
    ("c.json", None, True, True),
    ("c.json", None, False, True),
    ("c.txt", "plain_csv", False, True),
    ("c.csv", None, True, False),   # TUM: no z
])
def test_round_trip_is_exact(tmp_path, name, fmt, widths, z):
    pts, w = _wobbly(41)
    if not z:
        pts = [(x, y, 0.0) for x, y, _ in pts]
    path = tmp_path / name
    tc.save_circuit(path, pts, w if widths else None, format=fmt)
    c = tc.load_circuit(path)
    assert c.points == pts  # exact: repr writes the shortest text that reads back as the same double
    assert c.half_widths == (w if widths else None)


def test_extreme_values_round_trip(tmp_path):
    # The largest magnitudes the readers take (they round to finite float32s) and the smallest double.
    pts = [(5e-324, -3.4028234663852886e38, 0.0), (-0.0, 1.0, 0.0), (0.1, 0.2, 0.0)]
    w = [(0.0, 3.4028235e38), (1.0, 2.0), (3.0, 4.0)]
    tc.save_circuit(tmp_path / "x.csv", pts, w)
    c = tc.load_circuit(tmp_path / "x.csv")
    assert c.points == pts and math.copysign(1, c.points[1][0]) == -1
    assert c.half_widths == w


def test_hand_written_files_agree(tmp_path):
    files = {
        "tum.csv": "# x_m,y_m,w_tr_right_m,w_tr_left_m\r\n  12.5 , -3.25,\t1.5, 2\r\n\n# a comment\n"
                   "20, 4.125e1, 1.25, 2.5\n-7.75,+0.5,1,3\n",
        "swapped.csv": "# w_tr_left_m, x_m, w_tr_right_m, y_m\n2, 12.5, 1.5, -3.25\n2.5, 20, 1.25, 41.25\n3, -7.75, 1, 0.5\n",
        "headless.csv": "12.5,-3.25,1.5,2\n20,41.25,1.25,2.5\n-7.75,0.5,1,3\n",
        "bom.csv": "\ufeff# x_m,y_m,w_tr_right_m,w_tr_left_m\n12.5,-3.25,1.5,2\n20,41.25,1.25,2.5\n-7.75,0.5,1,3\n",
        "c.json": '{"name": "test", "closed": true,\n "points": [[12.5, -3.25], [20, 41.25, 0], [-7.75, 0.5]],\n'
                  ' "half_widths": [[2, 1.5], [2.5, 1.25], [3, 1]]}\n',
        "plain.csv": "# exported by hand\nx, y\n12.5, -3.25\n20, 41.25\n-7.75, 0.5\n",
        "plain3.txt": "12.5,-3.25,0\n20,41.25,0\n-7.75,0.5,0\n",
    }
    want_points = [(12.5, -3.25, 0.0), (20.0, 41.25, 0.0), (-7.75, 0.5, 0.0)]
    want_widths = [(2.0, 1.5), (2.5, 1.25), (3.0, 1.0)]
    for name, text in files.items():
        (tmp_path / name).write_text(text, newline="")
        c = tc.load_circuit(tmp_path / name)
        assert c.points == want_points, name
        assert c.half_widths == (None if name.startswith("plain") else want_widths), name
    # The layouts the writers produce (TUM: right width before left), the same as the C++ writer's.
    assert tc.format_circuit(want_points, want_widths, "tum_csv") == \
        "# x_m,y_m,w_tr_right_m,w_tr_left_m\n12.5,-3.25,1.5,2.0\n20.0,41.25,1.25,2.5\n-7.75,0.5,1.0,3.0\n"
    # What the C++ writer prints (tests/io/circuits_test.cpp) reads back in Python.
    cpp = "x,y,z\n12.5,-3.25,0\n20,41.25,0\n-7.75,0.5,0\n"
    assert tc.parse_circuit(cpp, "plain_csv").points == want_points


@pytest.mark.parametrize("name,text,parts", [
    ("missing.csv", "# x_m,y_m,w_tr_right_m\n1,2,3\n", ["missing.csv:1:", "w_tr_left_m missing"]),
    ("word.csv", "# x_m,y_m,w_tr_right_m,w_tr_left_m\n1,2,3,4\n1,abc,3,4\n", ["word.csv:3:", "y_m", "'abc'"]),
    ("neg.csv", "# x_m,y_m,w_tr_right_m,w_tr_left_m\n1,2,3,4\n2,2,3,4\n3,4,-0.5,4\n",
     ["neg.csv:4:", "w_tr_right_m", "negative half-width"]),
    ("few.csv", "x,y\n1,2\n3,4\n", ["few.csv", "2 points", "at least 3"]),
    ("ragged.csv", "1,2,3\n4,5,6\n7,8\n", ["ragged.csv:3:", "2 columns", "line 1 has 3"]),
    ("inf.csv", "1,2\n4,inf\n7,8\n", ["inf.csv:2:", "column y", "not a finite number"]),
    ("under.csv", "1,2\n4,1_000\n7,8\n", ["under.csv:2:", "not a finite number"]),
    ("short.csv", "# x_m,y_m,w_tr_right_m,w_tr_left_m\n1,2,3,4\n1,2,3\n", ["short.csv:3:", "3 columns, expected 4"]),
    ("syntax.json", '{\n "points": [[1, 2],\n [3, 4]\n [5, 6]]}\n', ["syntax.json:4:", "not valid JSON"]),
    ("neg.json", '{"points": [[0,0],[1,0],[0,1]], "half_widths": [[1,1],[1,-2],[1,1]]}',
     ["neg.json", "half_widths[1]", "negative half-width"]),
    ("str.json", '{"points": [[0,0],[1,"a"],[0,1]]}', ["str.json", "points[1][1]", "not a number"]),
    ("open.json", '{"points": [[0,0],[1,0],[0,1]], "closed": false}', ["open.json", "closed", "only closed"]),
    ("none.json", '{"pts": []}', ["none.json", '"points" missing']),
    ("big.json", '{"points": [[0,0],[1,1' + "0" * 400 + '],[0,1]]}', ["big.json", "points[1][1]", "outside float32's range"]),
])
def test_bad_files_name_file_line_and_fault(tmp_path, name, text, parts):
    (tmp_path / name).write_text(text)
    with pytest.raises(ValueError) as err:
        tc.load_circuit(tmp_path / name)
    for p in parts:
        assert p in str(err.value)


def test_write_errors_and_missing_file(tmp_path):
    with pytest.raises(OSError):
        tc.load_circuit(tmp_path / "absent.csv")
    pts, w = _wobbly(5)
    with pytest.raises(ValueError, match="TUM format has no z"):
        tc.save_circuit(tmp_path / "z.csv", pts, w)
    with pytest.raises(ValueError, match=r"half_widths\[2\]"):
        tc.save_circuit(tmp_path / "w.json", pts, w[:2] + [(1.0, -1.0)] + w[3:])
    with pytest.raises(ValueError, match="4 half-widths for 5 points"):
        tc.save_circuit(tmp_path / "w.json", pts, w[:4])
    with pytest.raises(ValueError, match="at least 3"):
        tc.save_circuit(tmp_path / "p.csv", pts[:2])
    with pytest.raises(ValueError, match=r"circuits\[1\] has no half-widths"):
        tc.narrowest_half_width([tc.Circuit(pts, w), tc.Circuit(pts, None)])
    assert tc.narrowest_half_width([tc.Circuit(pts, w)]) == min(min(a, b) for a, b in w)


def test_export_track_from_course_like_object(tmp_path):
    # The shape of Course.tracks: position [E, N, 3], half_widths [E, N, 2], origin [E, 3].
    pts, w = _wobbly(16)
    course = SimpleNamespace(tracks=SimpleNamespace(
        position=[[[0.0, 0.0, 0.0]] * 16, [list(p) for p in pts]],
        half_widths=[[[1.0, 1.0]] * 16, [list(x) for x in w]],
        origin=[[0.0, 0.0, 0.0], [1000.0, -2000.0, 0.0]]))
    out = tc.export_track(course, 1, tmp_path / "e.json")
    want = [(x + 1000.0, y - 2000.0, z) for x, y, z in pts]
    assert out.points == want
    c = tc.load_circuit(tmp_path / "e.json")
    assert c.points == want and c.half_widths == w
    local = tc.export_track(course, 1, tmp_path / "e.txt", format="plain_csv", add_origin=False)
    assert tc.load_circuit(tmp_path / "e.txt").points == local.points == pts
    with pytest.raises(IndexError, match="outside"):
        tc.export_track(course, 2, tmp_path / "x.json")
    # Any integer index (what operator.index takes: NumPy's too); bools, floats and strings are not.
    class Index:
        def __index__(self):
            return 1
    assert tc.export_track(course, Index(), tmp_path / "i.json").points == want
    for bad in (True, 1.0, "1"):
        with pytest.raises(IndexError, match="an int index"):
            tc.export_track(course, bad, tmp_path / "x.json")


def test_writers_refuse_what_the_readers_would_not_read_back(tmp_path):
    """A bool or a string coordinate was written as 1.0 (the JSON reader refuses `true`), an int
    beyond double's range raised a bare OverflowError; a JSON string with a lone surrogate escape
    loaded in Python while C++ (nlohmann-json) refuses it."""
    pts, _ = _wobbly(8)
    for bad, what in ((True, "is not a number"), ("1", "is not a number"), (10**400, "float32's range")):
        rows = [list(p) for p in pts]
        rows[2][1] = bad
        with pytest.raises(ValueError, match=re.escape("points[2]") + ".*" + re.escape(what)):
            tc.format_circuit(rows, format="json")
    doc = '{"name": "\\ud800", "points": [[0, 0], [1, 0], [0, 1]]}'
    with pytest.raises(ValueError, match="lone UTF-16 surrogate"):
        tc.parse_circuit(doc, "json", "s.json")
    assert tc.parse_circuit(doc.replace("\\ud800", "\\ud83d\\ude00"), "json", "s.json").points[1] == (1.0, 0.0, 0.0)


def test_a_0d_bool_tensor_is_not_a_coordinate():
    """A 0-d bool tensor has __float__ and a type name without "bool": it was written as 1.0."""
    torch = pytest.importorskip("torch")
    pts, _ = _wobbly(8)
    rows = [list(p) for p in pts]
    rows[2][0] = torch.tensor(True)
    with pytest.raises(ValueError, match=re.escape("points[2]") + ".*is not a number"):
        tc.format_circuit(rows, format="json")
    rows[2][0] = torch.tensor(1.5)  # a 0-d float tensor is a number
    assert "1.5" in tc.format_circuit(rows, format="json")


# The bytes tests/io/circuits_test.cpp reads: both readers are held to the same answers.
_ROOT = Path(__file__).resolve().parents[2]
_SHARED = _ROOT / "tests" / "io" / "circuit_files"
_HAND_POINTS = [(12.5, -3.25, 0.0), (20.0, 41.25, 0.0), (-7.75, 0.5, 0.0)]
_HAND_WIDTHS = [(2.0, 1.5), (2.5, 1.25), (3.0, 1.0)]


def _load_error(path) -> str:
    with pytest.raises(ValueError) as err:
        tc.load_circuit(path)
    return str(err.value)


def test_line_ends_lf_crlf_and_lone_cr_read_alike():
    assert tc.load_circuit(_SHARED / "cr_only.csv") == tc.Circuit(_HAND_POINTS, _HAND_WIDTHS)
    assert tc.load_circuit(_SHARED / "cr_only_plain.csv") == tc.Circuit(_HAND_POINTS, None)
    assert tc.load_circuit(_SHARED / "cr_only.json") == tc.Circuit(_HAND_POINTS, _HAND_WIDTHS)
    assert tc.detect_format("cr_only.csv", (_SHARED / "cr_only.csv").read_bytes().decode()) == "tum_csv"
    msg = _load_error(_SHARED / "cr_bad_row.csv")
    assert "cr_bad_row.csv:4:" in msg and "column y" in msg and "'abc'" in msg
    msg = _load_error(_SHARED / "cr_syntax.json")
    assert "cr_syntax.json:4:" in msg and "not valid JSON" in msg
    # parse_circuit (text, not a file) counts lone CRs too, and splits at nothing else (C++ does not).
    with pytest.raises(ValueError, match=r"t\.csv:4: column y"):
        tc.parse_circuit("1,2\r3,4\r\n\r5,x\n", "plain_csv", "t.csv")
    with pytest.raises(ValueError, match=r"t\.csv:2: column y: '2\\x0c3' is not a finite number"):
        tc.parse_circuit("0,0\n1,2\x0c3\n5,6\n", "plain_csv", "t.csv")
    # A byte order mark before a comment does not hide a headerless TUM file from the detection.
    assert tc.detect_format("b.csv", "\ufeff# by hand\n12.5,-3.25,1.5,2\n") == "tum_csv"


# Well-formed and ill-formed UTF-8 (Unicode's table 3-7), the list tests/io/circuits_test.cpp
# checks its validator against.
_GOOD_UTF8 = [b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xf0\x90\x80\x80",
              b"\xf4\x8f\xbf\xbf"]
_BAD_UTF8 = [b"\x80", b"\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xc3", b"\xc3A", b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xe2\x82",
             b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff"]


def test_not_utf8_is_refused_naming_line_and_byte(tmp_path):
    msg = _load_error(_SHARED / "latin1.csv")
    assert "latin1.csv:2:" in msg and "byte 38 (0xfc) is not UTF-8" in msg and "circuit files are UTF-8" in msg
    assert "surrogate.csv:1:" in _load_error(_SHARED / "surrogate.csv")
    assert "byte 2 (0xed)" in _load_error(_SHARED / "surrogate.csv")
    msg = _load_error(_SHARED / "latin1.json")
    assert "latin1.json:1:" in msg and "byte 11 (0xfc)" in msg
    (tmp_path / "b.csv").write_bytes(b"\xef\xbb\xbf# \xfc\n")  # the offset counts the byte order mark
    msg = _load_error(tmp_path / "b.csv")
    assert "b.csv:1:" in msg and "byte 5 (0xfc)" in msg
    (tmp_path / "u.csv").write_bytes("# Nürburgring \U0001f3c1\n12.5,-3.25,1.5,2\n20,41.25,1.25,2.5\n-7.75,0.5,1,3\n".encode())
    assert tc.load_circuit(tmp_path / "u.csv") == tc.Circuit(_HAND_POINTS, _HAND_WIDTHS)
    for good in _GOOD_UTF8:
        (b"a" + good + b"b").decode("utf-8")
    for bad in _BAD_UTF8:
        with pytest.raises(UnicodeDecodeError) as err:
            (b"a" + bad + b"b").decode("utf-8")
        assert err.value.start == 1, bad
        (tmp_path / "x.csv").write_bytes(b"a" + bad + b"b")
        assert f"x.csv:1: byte 1 (0x{bad[0]:02x}) is not UTF-8" in _load_error(tmp_path / "x.csv")


def _nested_json(depth, key="meta"):
    """A JSON circuit with a value nested so that the whole file is ``depth`` levels deep."""
    return '{"points": [[0,0],[1,0],[0,1]], "' + key + '": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def test_json_deeper_than_64_levels_is_refused_before_parsing():
    hpp = (_ROOT / "include" / "track_gen" / "circuits.hpp").read_text()
    assert int(re.search(r"max_json_depth = (\d+);", hpp).group(1)) == tc._MAX_JSON_DEPTH == 64
    assert len(tc.parse_circuit(_nested_json(64), "json").points) == 3
    with pytest.raises(ValueError, match=r"deep\.json:1: JSON nested deeper than 64 levels"):
        tc.parse_circuit(_nested_json(65), "json", "deep.json")
    # Brackets in strings do not count (an escaped quote does not end the string).
    assert len(tc.parse_circuit('{"points": [[0,0],[1,0],[0,1]], "s": "\\"' + "[" * 100 + '"}', "json").points) == 3
    # Deep enough for json.loads to raise RecursionError: refused first, with the line.
    deep = '{"points": [[0,0],[1,0],[0,1]],\n"closed": ' + "[" * 1000000 + "]" * 1000000 + "}"
    with pytest.raises(ValueError, match=r"deeper\.json:2: JSON nested deeper"):
        tc.parse_circuit(deep, "json", "deeper.json")


def test_numbers_must_round_to_finite_float32_on_both_sides():
    big = 3.4028234663852886e38  # the largest float32
    assert tc.load_circuit(_SHARED / "float32_edges.csv").points[0] == (3.4028235e38, -1e-50, 1e-45)
    msg = _load_error(_SHARED / "beyond_float32.csv")
    assert "beyond_float32.csv:3:" in msg and "column x" in msg and "1e39 is outside float32's range" in msg
    assert "3.40282347e+38" in msg
    msg = _load_error(_SHARED / "beyond_float32.json")
    assert "points[1][1]" in msg and "outside float32's range" in msg
    for word in ("NaN", "Infinity", "-Infinity"):  # Python's json takes them, JSON and C++ do not
        with pytest.raises(ValueError, match=f"c.json: not valid JSON: {word} is no JSON number"):
            tc.parse_circuit('{"points": [[0, 0], [' + word + ', 0], [0, 1]]}', "json", "c.json")
    # The files tests/io/circuits_test.cpp reads as what Python wrote: they are this writer's output.
    pts = [(3.4028235e38, -1e-50, 5e-324), (-0.0, 0.1, 1 / 3), (1e-45, -big, 2.5)]
    w = [(0.0, 1e-40), (1.5, 3.4028235e38), (2.0, 0.25)]
    assert (_SHARED / "python_written.json").read_text() == tc.format_circuit(pts, w, "json")
    assert (_SHARED / "python_written.txt").read_text() == tc.format_circuit(pts, None, "plain_csv")
    assert tc.load_circuit(_SHARED / "python_written.json") == tc.Circuit(pts, w)
    # The writer refuses what the readers refuse, naming the value.
    with pytest.raises(ValueError, match=r"points\[1\]\[0\]: 1e\+308 is outside float32's range.*could not be read back"):
        tc.format_circuit([(0, 0), (1e308, 0), (0, 1)])
    with pytest.raises(ValueError, match=r"half_widths\[2\]\[1\]: 3\.5e\+38 is outside float32's range"):
        tc.format_circuit(pts, w[:2] + [(1.0, 3.5e38)], "json")
    with pytest.raises(ValueError, match=r"points\[0\]\[2\]: -3\.402823567797337e\+38"):
        tc.format_circuit([(0, 0, -3.402823567797337e38), (1, 0), (0, 1)])  # 2^128 - 2^103: rounds to infinity
    # The spellings the C++ test reads: below float32's subnormals (C++ reads +-0; Python keeps the
    # double), beyond its largest value, or no number.
    for tiny in ("1e-400", "-0.001e-44", "1000e-50", "0.000000000001e-34", "+7e-46", "-1e-99999999999999999999999"):
        assert tc.parse_circuit(tiny + ",0\n1,2\n3,4\n", "plain_csv").points[0][0] == float(tiny)
    for over in ("1e400", "-3.4028236e38", "100000e34", "0.00001e44", "1e99999999999999999999999"):
        with pytest.raises(ValueError, match=r"o\.csv:2: .*outside float32's range"):
            tc.parse_circuit("1,2\n" + over + ",0\n3,4\n", "plain_csv", "o.csv")
    for word in ("+-1", "1_000", "\u0661\u0662", "1\xa0", "0x10", "1e", "."):
        with pytest.raises(ValueError, match="is not a finite number"):
            tc.parse_circuit("1,2\n" + word + ",4\n5,6\n", "plain_csv", "pm.csv")


@pytest.mark.gpu
def test_course_from_circuits_follows_the_polyline(tmp_path):
    import torch  # noqa: PLC0415 - GPU test only
    from track_gen.pipeline import presets  # noqa: PLC0415

    pts, w = _wobbly(180)
    pts = [(x, y, 0.0) for x, y, _ in pts]
    tc.save_circuit(tmp_path / "c.csv", pts, w)
    c = tc.load_circuit(tmp_path / "c.csv")
    params = presets.track(2, validate={"length_max": 400.0})
    course = tc.course_from_circuits(params, [c], half_width="narrowest", checkpoint_spacing=2.0)
    torch.cuda.synchronize()
    assert torch.all(course.tracks.half_widths == torch.tensor(tc.narrowest_half_width([c]), dtype=torch.float32))
    p = torch.tensor(pts, dtype=torch.float64)
    a, b = p, torch.roll(p, -1, 0)
    q = course.tracks.position.double().cpu().reshape(-1, 1, 3)
    t = (((q - a) * (b - a)).sum(-1) / ((b - a) ** 2).sum(-1)).clamp(0, 1)
    dist = (a + t[..., None] * (b - a) - q).norm(dim=-1).amin(dim=1)
    assert float(dist.max()) <= 1e-4
    out = tc.export_track(course, 1, tmp_path / "out.json")
    assert tc.load_circuit(tmp_path / "out.json").points == out.points
