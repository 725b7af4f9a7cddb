"""Bad input raises a clear error naming the argument and what it must be; outputs are views of
the course's memory (no copies); registered() outside a capture raises CaptureError."""
import pytest
import torch

import track_gen.interop.torch as tt
from track_gen.course import Course
from track_gen.exec.errors import CaptureError
from track_gen.pipeline import presets

from helpers import DEVICE, make_course

pytestmark = pytest.mark.gpu

E = 8


@pytest.fixture(scope="module")
def course():
    return make_course(E, seed=1)


@pytest.mark.parametrize("make", [
    lambda: torch.zeros(E, 3, dtype=torch.float64, device=DEVICE),
    lambda: torch.zeros(E, 2, device=DEVICE),
    lambda: torch.zeros(E + 1, 3, device=DEVICE),
    lambda: torch.zeros(E * 3, device=DEVICE),
    lambda: torch.zeros(3, E, device=DEVICE).t(),   # not contiguous
    lambda: torch.zeros(E, 3),                       # host memory
])
def test_bind_rejects_a_bad_position_tensor(course, make):
    with pytest.raises(ValueError, match=r"position must be a float32 tensor of shape \[8, 3\]"):
        course.bind(position=make())


@pytest.mark.parametrize("make", [
    lambda: torch.zeros(E, dtype=torch.float32, device=DEVICE),
    lambda: torch.zeros(E, dtype=torch.int64, device=DEVICE),
    lambda: torch.zeros(E + 1, dtype=torch.int32, device=DEVICE),
    lambda: torch.zeros(E, 1, dtype=torch.int32, device=DEVICE),
    lambda: torch.zeros(2 * E, dtype=torch.int32, device=DEVICE)[::2],  # not contiguous
    lambda: torch.zeros(E, dtype=torch.bool),                            # host memory
])
def test_regenerate_rejects_a_bad_mask(course, make):
    with pytest.raises(ValueError, match=r"mask must be an int32, bool or uint8 tensor of shape \[8\]"):
        course.regenerate(mask=make(), advance=True)


def test_other_argument_errors(course):
    with pytest.raises(TypeError, match="advance must be a bool"):
        course.regenerate(mask=None, advance=1)
    with pytest.raises(TypeError, match="TrackParams"):
        Course({"num_envs": 4})
    with pytest.raises(ValueError, match="num_samples"):
        Course.track(presets.track(num_envs=4, device=DEVICE, num_samples=4))
    with pytest.raises(ValueError, match="unknown track parameter 'radius'"):
        Course.track(presets.track(num_envs=4, device=DEVICE, radius=3.0))
    unbound = Course.track(presets.track(num_envs=4, device=DEVICE))
    with pytest.raises(RuntimeError, match="no positions bound"):
        unbound.step()


def test_registered_outside_a_capture_raises_capture_error():
    with pytest.raises(CaptureError, match=r"inside torch.cuda.graph"):
        with tt.registered():
            pass
    with pytest.raises(CaptureError):
        with tt.registered(stream=torch.cuda.Stream()):
            pass


def test_building_a_course_inside_a_capture_raises_capture_error():
    g = torch.cuda.CUDAGraph()
    with pytest.raises(CaptureError, match="capturing"):
        with torch.cuda.graph(g):
            Course.track(presets.track(num_envs=4, device=DEVICE))


def test_outputs_are_views_of_the_course_memory_updated_in_place(course):
    laps, episode, position = course.laps, course.tracks.episode, course.tracks.position
    assert position.shape == (E, course.num_samples, 3) and position.dtype == torch.float32
    assert course.tracks.gate_centre.shape == (E, course.max_gates, 3)
    assert laps.shape == (E,) and laps.dtype == torch.int32 and laps.device == torch.device(DEVICE)
    before = position.clone()
    pointer = position.data_ptr()
    mask = torch.zeros(E, dtype=torch.bool, device=DEVICE)
    mask[2] = True
    first = int(episode[2])
    course.regenerate(mask=mask, advance=True)
    torch.cuda.synchronize()
    assert position.data_ptr() == pointer and course.tracks.position.data_ptr() == pointer
    assert int(episode[2]) == first + 1                       # seen through the same tensor
    assert not torch.equal(position[2], before[2])            # env 2 got a new track
    assert torch.equal(position[:2], before[:2]) and torch.equal(position[3:], before[3:])
    assert bool(((course.tracks.status & 1) == 1).all())      # status::valid


class ForeignArray:
    """An array of another library as torch sees it: only the DLPack protocol (what Warp, JAX and
    CuPy arrays expose), over a tensor the test keeps to write into."""

    def __init__(self, tensor):
        self._t = tensor

    def __dlpack__(self, stream=None, **kwargs):
        return self._t.__dlpack__(stream=stream) if stream is not None else self._t.__dlpack__()

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()


def test_dlpack_arrays_are_taken_without_copies():
    # A course over DLPack arrays (bind, regenerate's mask, a query) behaves as over the tensors
    # they wrap: the bound positions are shared, so writes by their owner reach the next step.
    a, b = make_course(E, seed=3), make_course(E, seed=3)
    pa = a.tracks.position[:, 0, :].contiguous()   # each env at its first sample
    pb = pa.clone()
    a.bind(position=ForeignArray(pa))
    b.bind(position=pb)
    a.step(), b.step()
    for k in (3, 7):                                 # move along the tracks, written in place
        pa.copy_(a.tracks.position[:, k, :])
        pb.copy_(b.tracks.position[:, k, :])
        ea, eb = a.step().events, b.step().events
        assert torch.equal(a.progress.lap_progress, b.progress.lap_progress)
        assert torch.equal(ea.flags, eb.flags)
    assert float(a.progress.lap_progress.min()) > 0.0     # the moves were seen
    mask = torch.zeros(E, dtype=torch.int32, device=DEVICE)
    mask[1] = 1
    a.regenerate(ForeignArray(mask))
    b.regenerate(mask)
    assert torch.equal(a.tracks.position, b.tracks.position)
    fa = a.localize(ForeignArray(pa))
    fb = b.localize(pb)
    assert torch.equal(fa.s, fb.s) and torch.equal(fa.n, fb.n)
    with pytest.raises(ValueError, match="position must be a float32 tensor"):
        a.bind(position=ForeignArray(torch.zeros(E, 3, dtype=torch.float64, device=DEVICE)))
