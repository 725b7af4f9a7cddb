"""Real circuits in Python (track_gen.circuits): exact round trips in the three formats, the same
points from hand-written files in each, the C++ writer's layout read back, errors naming the file,
line and fault, and export_track on a course-like object. Pure Python (runs without torch), except
the last test, a GPU test that imports torch inside."""
from __future__ import annotations

import math
import random
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
    pts = [(5e-324, -1.7976931348623157e308, 0.0), (-0.0, 1.0, 0.0), (0.1, 0.2, 0.0)]
    w = [(0.0, 1e300), (1.0, 2.0), (3.0, 4.0)]
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
    ("big.json", '{"points": [[0,0],[1,1' + "0" * 400 + '],[0,1]]}', ["big.json", "points[1][1]", "not finite"]),
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
