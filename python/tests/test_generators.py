"""Generator families from Python (issue 13): ``generator=`` picks one family for the batch,
``generator_weights=`` a mix drawn per env and episode; the ``family`` field of ``course.tracks``
says which one each env got. The C++ tests compare the families' tracks bit for bit with their own
pipelines (tests/geometry/family_mix_tests.hpp); here the Python names reach them."""
import pytest

from track_gen.pipeline import presets

FAMILIES = {"polar": 0, "bezier": 1, "hull": 2, "voronoi": 3, "checkpoint": 4, "repulsive": 5}


def test_generator_names_flatten_without_the_extension():
    p = presets.track(4, generator="voronoi", generator_weights={"polar": 1.0, "checkpoint": 2})
    assert p.overrides["generator"] == "voronoi"
    assert p.overrides["generator.weights.polar"] == 1.0
    assert p.overrides["generator.weights.checkpoint"] == 2
    # The repulsive family's parameters, under the seed system's names without their prefix.
    p = presets.track(4, generator="repulsive", repulsive_growth={"grow_mult_max": 5.0, "points": 128})
    assert p.overrides["repulsive_growth.grow_mult_max"] == 5.0
    assert p.overrides["repulsive_growth.points"] == 128
    p = presets.track(4, generator="repulsive", repulsive_w_len=10.0, repulsive_obstacle_count_max=6)
    assert p.overrides["repulsive_growth.length_weight"] == 10.0
    assert p.overrides["repulsive_growth.obstacles_max"] == 6
    assert presets.track(4, repulsive_deactivate_obstacles=False).overrides["repulsive_growth.deactivate_obstacles"] == 0
    with pytest.raises(ValueError, match="repulsive_growth.points"):
        presets.track(4, repulsive_stages=(64, 128, 256))
    with pytest.raises(TypeError, match="'generator' must be a family name"):
        presets.track(4, generator=3)
    with pytest.raises(TypeError, match="generator_weights"):
        presets.track(4, generator_weights=[1.0, 2.0])
    with pytest.raises(TypeError, match="must be a number"):
        presets.track(4, generator_weights={"hull": "a lot"})


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["polar", "voronoi", "checkpoint", "repulsive"])
def test_one_family_for_the_batch(name):
    import torch
    from track_gen.course import Course
    course = Course.track(presets.track(64, device="cuda:0", seed=4, generator=name))
    torch.cuda.synchronize()
    assert (course.tracks.family == FAMILIES[name]).all()
    assert course.params.resolved()["generator"] == name


@pytest.mark.gpu
def test_a_mix_draws_only_families_of_positive_weight_and_redraws_per_episode():
    import torch
    from track_gen.course import Course
    E = 1024
    course = Course.track(presets.track(E, device="cuda:0", seed=5,
                                        generator_weights={"polar": 1.0, "checkpoint": 3.0}))
    torch.cuda.synchronize()
    first = course.tracks.family.clone()
    counts = torch.bincount(first.long(), minlength=6).tolist()
    assert counts[1] == counts[2] == counts[3] == counts[5] == 0
    # 3/4 checkpoint: within 5 standard deviations of the binomial mean.
    sigma = (E * 0.75 * 0.25) ** 0.5
    assert abs(counts[4] - 0.75 * E) < 5 * sigma
    course.regenerate(advance=True)
    torch.cuda.synchronize()
    assert (course.tracks.family != first).any()
    weights = course.params.resolved()["generator_weights"]
    assert weights["checkpoint"] == 3.0 and weights["hull"] == 0.0


@pytest.mark.gpu
def test_bad_generator_names_and_weights_are_named():
    from track_gen.course import Course
    with pytest.raises(ValueError, match="'spiral' is not a generator family"):
        Course.track(presets.track(4, device="cuda:0", generator="spiral"))
    with pytest.raises(ValueError, match="generator_weights key 'spiral'"):
        Course.track(presets.track(4, device="cuda:0", generator_weights={"spiral": 1.0}))
    with pytest.raises(ValueError, match="track_params.generator.weights"):
        Course.track(presets.track(4, device="cuda:0", generator_weights={"hull": -1.0}))


@pytest.mark.gpu
def test_polar_courses_take_the_track_pipeline_and_build_the_family_pipelines_tracks():
    """The default course runs presets::track_pipeline; weights that draw polar for every env
    force elevated_family_pipeline, whose polar tracks must be the same bit for bit."""
    import torch
    from track_gen.course import Course
    fast = Course.track(presets.track(256, device="cuda:0", seed=9))
    family = Course.track(presets.track(256, device="cuda:0", seed=9, generator_weights={"polar": 1.0}))
    lifted = Course.track(presets.track(8, device="cuda:0", seed=9, elevation={"profile": "uniform"}))
    assert fast.pipeline == "track_pipeline"
    assert family.pipeline == "elevated_family_pipeline"
    assert lifted.pipeline == "elevated_family_pipeline"
    assert Course.track(presets.track(8, device="cuda:0", generator="hull")).pipeline == "elevated_family_pipeline"
    assert Course.track(presets.track(8, device="cuda:0", generator="repulsive")).pipeline == "elevated_any_family_pipeline"
    for _ in range(2):  # the first episode and the next
        torch.cuda.synchronize()
        assert torch.equal(fast.tracks.position, family.tracks.position)
        assert torch.equal(fast.tracks.status, family.tracks.status)
        assert torch.equal(fast.tracks.gate_centre, family.tracks.gate_centre)
        fast.regenerate(advance=True)
        family.regenerate(advance=True)
