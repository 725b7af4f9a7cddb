"""What works without torch, a GPU or the compiled extension (CI runs these): retain, the
argument checks of registered() made before any CUDA query, CaptureError, the presets' checks,
the per-thread registration stack, and importing the package without torch."""
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import track_gen.interop.torch as tt
from track_gen.exec import recording
from track_gen.exec.errors import CaptureError
from track_gen.pipeline import presets


class FakeGraph:
    """Stands for torch.cuda.CUDAGraph: any object with a __dict__."""


class Owner:
    pass


def test_retain_stores_strong_references_on_the_graph_once_per_object():
    g = FakeGraph()
    a, b = Owner(), Owner()
    tt.retain(g, a, None, b, a)
    tt.retain(g, b, None)
    assert g._track_gen_owners == [a, b]
    assert g._track_gen_owners[0] is a and g._track_gen_owners[1] is b


def test_retain_identity_not_equality():
    g = FakeGraph()
    x, y = [1], [1]  # equal, distinct
    tt.retain(g, x, y)
    assert len(g._track_gen_owners) == 2


def test_retain_keeps_owners_alive_until_the_graph_goes():
    import gc
    import weakref
    g = FakeGraph()
    o = Owner()
    ref = weakref.ref(o)
    tt.retain(g, o)
    del o
    gc.collect()
    assert ref() is not None
    del g
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("target", [object(), 3, (1, 2), "graph"])
def test_retain_on_an_object_without_dict_raises_type_error(target):
    with pytest.raises(TypeError, match="no __dict__"):
        tt.retain(target, Owner())


@pytest.mark.parametrize("bad", ["GLOBAL", "thread-local", "", 0, 1.0, "strict"])
def test_registered_rejects_a_bad_capture_mode_before_any_cuda_query(bad):
    # No torch needed: the mode is checked before torch or the extension is imported.
    with pytest.raises(ValueError, match="capture_mode must be None or one of"):
        with tt.registered(capture_mode=bad):
            pass
    assert recording.current() is None


def test_registered_rejects_a_non_bool_conditional():
    with pytest.raises(TypeError, match="conditional must be a bool"):
        with tt.registered(conditional=1):
            pass


def test_registered_rejects_a_stream_that_is_not_one():
    with pytest.raises(TypeError, match="stream must be"):
        with tt.registered(stream="cuda:0"):
            pass


def test_capture_error_is_a_runtime_error_and_exported():
    import track_gen.exec as ex
    assert ex.CaptureError is CaptureError
    assert issubclass(CaptureError, RuntimeError)


def test_presets_record_overrides_flattened_and_check_types():
    p = presets.track(num_envs=64, device="cuda:1", seed=7, half_width=0.4,
                      polar={"radius_min": 5.0}, validate__max_attempts=3)
    assert p.preset == "track" and p.num_envs == 64 and p.device == "cuda:1" and p.device_index == 1
    assert dict(p.overrides) == {"half_width": 0.4, "polar.radius_min": 5.0, "validate.max_attempts": 3, "seed": 7}
    q = p.replace(polar__radius_max=9.0)
    assert q.overrides["polar.radius_max"] == 9.0 and "polar.radius_max" not in p.overrides
    assert presets.drone_track(4, device=0).preset == "drone_track"
    assert presets.track(4, device="cuda").device == "cuda:0"
    cpu = presets.track(4, device="cpu")
    assert cpu.device == "cpu" and cpu.is_cpu and cpu.device_index == -1 and not p.is_cpu


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(num_envs=0), ValueError, "num_envs must be >= 1"),
    (dict(num_envs=2.0), TypeError, "num_envs must be an int"),
    (dict(num_envs=4, device="tpu"), ValueError, r"CUDA device \('cuda' or 'cuda:N'\) or 'cpu'"),
    (dict(num_envs=4, device=-1), ValueError, "device index"),
    (dict(num_envs=4, seed=-1), ValueError, r"'seed' must be in \[0, 18446744073709551616\)"),
    (dict(num_envs=4, seed=1.5), TypeError, "'seed' must be an int"),
    (dict(num_envs=4, half_width=True), TypeError, "'half_width' must be a number"),
    (dict(num_envs=4, polar={"radius_min": "5"}), TypeError, "'polar.radius_min' must be a number"),
    (dict(num_envs=4, env_offset=2 ** 32), ValueError, "'env_offset' must be in"),
])
def test_presets_reject_bad_arguments_with_named_errors(kwargs, error, text):
    with pytest.raises(error, match=text):
        presets.track(**kwargs)


def test_numpy_scalars_are_numbers_as_pythons_own():
    np = pytest.importorskip("numpy")
    p = presets.track(np.int64(4), seed=np.uint64(7), num_samples=np.int32(64), half_width=np.float32(0.25),
                      polar={"radius_min": np.float64(4.5)})
    q = presets.track(4, seed=7, num_samples=64, half_width=0.25, polar={"radius_min": 4.5})
    assert p.num_envs == 4 and type(p.num_envs) is int
    assert p.overrides == q.overrides and all(type(p.overrides[k]) is type(q.overrides[k]) for k in q.overrides)
    with pytest.raises(TypeError, match="'half_width' must be a number"):
        presets.track(4, half_width=np.bool_(True))
    with pytest.raises(TypeError, match="'seed' must be an int"):
        presets.track(4, seed=np.float64(1.0))


def test_track_params_env_offset_is_zero_unless_overridden():
    assert presets.track(4).env_offset == 0
    p = presets.track(4, env_offset=7)
    assert p.env_offset == 7 and p.replace(env_offset=9).env_offset == 9 and p.env_offset == 7


@pytest.mark.parametrize("args, name", [
    ((10.0, 2, 0), "total_envs"), ((10, True, 0), "world_size"), ((10, 2, "0"), "rank"), ((10, 2, 0, None), "base"),
])
def test_shard_of_refuses_non_ints_before_loading_the_extension(args, name):
    import track_gen
    with pytest.raises(TypeError, match=f"shard_of: {name} must be an int"):
        track_gen.shard_of(*args)


def test_shard_params_refuses_what_is_not_a_track_params():
    import track_gen
    with pytest.raises(TypeError, match="params must be a TrackParams"):
        track_gen.shard_params({"num_envs": 4}, 4, 2, 0)


def test_registration_stack_is_per_thread_and_notes_courses_once():
    reg = recording.Registration(capture_id=5, conditional=True, capture_mode=2)
    seen = []
    recording.push(reg)
    try:
        c = Owner()
        reg.note(c)
        reg.note(c)
        assert recording.current() is reg and reg.courses == [c]
        t = threading.Thread(target=lambda: seen.append(recording.current()))
        t.start()
        t.join()
    finally:
        recording.pop(reg)
    assert seen == [None]
    assert recording.current() is None
    with pytest.raises(RuntimeError, match="order"):
        recording.pop(reg)


def test_importing_the_package_imports_neither_torch_nor_the_extension():
    code = ("import sys, track_gen, track_gen.course, track_gen.interop.torch, track_gen.pipeline.presets; "
            "print('torch' in sys.modules, 'track_gen._C' in sys.modules)")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_elevation_overrides_take_our_names_and_the_seed_systems():
    p = presets.elevated_drone_track(8, seed=3, elevation={"profile": "uniform", "knots": 6}, z_max=4.0,
                                     z_valid_grade=0.4, z_profile="noise", z_noise_harmonics=2)
    assert p.preset == "elevated_drone_track"
    assert dict(p.overrides) == {"elevation.profile": "harmonics", "elevation.knots": 6, "elevation.z_max": 4.0,
                                 "elevation.max_grade": 0.4, "elevation.harmonics": 2, "seed": 3}
    assert presets.track(4, elevation__z_min=-1.0, z_control_points=12).overrides["elevation.knots"] == 12
    q = presets.track(4, polar_num_knots=16)
    assert q.overrides["polar.control_points"] == 16 and q.given_as == {"polar.control_points": "polar_num_knots"}
    with pytest.raises(TypeError, match="'elevation.profile' must be a profile name"):
        presets.track(4, z_profile=2)
