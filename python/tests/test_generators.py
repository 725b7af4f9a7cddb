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
    # The control polygon's push was `repulsive` before it was renamed: its old names say the new one.
    assert presets.track(4, polygon_separation={"clearance": 2.0}).overrides["polygon_separation.clearance"] == 2.0
    with pytest.raises(ValueError, match="now 'polygon_separation.clearance'"):
        presets.track(4, repulsive__clearance=2.0)
    with pytest.raises(ValueError, match="now 'polygon_separation'"):
        presets.track(4, repulsive={"max_iterations": 0})
    with pytest.raises(TypeError, match="'generator' must be a family name"):
        presets.track(4, generator=3)
    with pytest.raises(TypeError, match="generator_weights"):
        presets.track(4, generator_weights=[1.0, 2.0])
    with pytest.raises(TypeError, match="must be a number"):
        presets.track(4, generator_weights={"hull": "a lot"})


def test_relaxation_names_flatten_without_the_extension():
    """The centreline relaxation's parameters under our names and the seed system's relax_*
    names; its switches (relax_enable, relax_accel, relax_solver) and the names with no
    counterpart here."""
    p = presets.track(4, relaxation={"max_iterations": 20, "margin": 0.1})
    assert p.overrides["relaxation.max_iterations"] == 20 and p.overrides["relaxation.margin"] == 0.1
    assert presets.track(4, relaxation__bending_weight=2.0).overrides["relaxation.bending_weight"] == 2.0
    seed = {"relax_iters": ("max_iterations", 40), "relax_margin": ("margin", 0.2),
            "relax_sep_relax": ("separation_weight", 0.8), "relax_spc_relax": ("spacing_weight", 0.7),
            "relax_bend_relax": ("bending_weight", 1.2), "relax_cheby_rho": ("chebyshev_rho", 0.95),
            "relax_cheby_gamma": ("chebyshev_gamma", 0.8), "relax_cheby_start": ("chebyshev_start", 4),
            "relax_smooth_passes": ("smoothing_passes", 3)}
    p = presets.track(4, **{name: value for name, (_, value) in seed.items()})
    for name, (field, value) in seed.items():
        assert p.overrides[f"relaxation.{field}"] == value, name
        assert p.given_as[f"relaxation.{field}"] == name  # an error names what the caller wrote
    assert "relax_iters" not in p.overrides
    # relax_enable: True turns on the seed system's 50 sweeps unless their number is given too;
    # False turns the stage off, whatever relax_iters says.
    p = presets.track(4, relax_enable=True)
    assert p.overrides["relaxation.max_iterations"] == 50 and "relax_enable" not in p.overrides
    assert p.given_as["relaxation.max_iterations"] == "relax_enable"
    for given in ({"relax_iters": 80}, {"relaxation": {"max_iterations": 80}}, {"relaxation__max_iterations": 80}):
        assert presets.track(4, relax_enable=True, **given).overrides["relaxation.max_iterations"] == 80, given
        assert presets.track(4, **given, relax_enable=True).overrides["relaxation.max_iterations"] == 80, given
    assert presets.track(4, relax_enable=True, relax_iters=80).given_as["relaxation.max_iterations"] == "relax_iters"
    assert presets.track(4, relax_enable=False).overrides["relaxation.max_iterations"] == 0
    p = presets.track(4, relax_iters=80, relax_enable=False)
    assert p.overrides["relaxation.max_iterations"] == 0
    assert p.given_as["relaxation.max_iterations"] == "relax_enable"
    assert presets.gate_course(4, relax_enable=False).overrides["relaxation.max_iterations"] == 0
    with pytest.raises(TypeError, match="'relax_enable'.*must be a bool"):
        presets.track(4, relax_enable=1)
    with pytest.raises(TypeError, match="'relax_enable'.*must be a bool"):
        presets.track(4, relax_enable="yes")
    # relax_accel: "chebyshev" (the C++ defaults) sets nothing; "none" is plain Jacobi sweeps,
    # rho 0 and gamma 1, whatever relax_cheby_* say.
    assert dict(presets.track(4, relax_accel="chebyshev").overrides) == {"seed": 0}
    p = presets.track(4, relax_accel="none", relax_iters=10)
    assert p.overrides["relaxation.chebyshev_rho"] == 0.0 and p.overrides["relaxation.chebyshev_gamma"] == 1.0
    assert p.given_as["relaxation.chebyshev_rho"] == "relax_accel"
    for clash in ({"relax_cheby_rho": 0.9}, {"relaxation": {"chebyshev_gamma": 0.5}}):
        with pytest.raises(ValueError, match="'relax_accel' = 'none'.*contradicts"):
            presets.track(4, relax_accel="none", **clash)
    assert presets.track(4, relax_iters=10, relax_accel="chebyshev",
                         relax_cheby_rho=0.9).overrides["relaxation.chebyshev_rho"] == 0.9
    # replace(): "chebyshev" drops an earlier "none"'s values (not values the caller set);
    # relax_enable=True keeps an earlier count; a field written by our name forgets its alias.
    p = presets.track(4, relax_accel="none", relax_iters=30).replace(relax_accel="chebyshev", relax_enable=True)
    assert dict(p.overrides) == {"relaxation.max_iterations": 30, "seed": 0}
    assert p.given_as["relaxation.max_iterations"] == "relax_iters"
    p = presets.track(4, relax_iters=10, relax_cheby_rho=0.5).replace(relax_accel="chebyshev")
    assert p.overrides["relaxation.chebyshev_rho"] == 0.5
    p = presets.track(4, relax_iters=10, relax_margin=0.5).replace(relaxation={"margin": 0.7})
    assert p.overrides["relaxation.margin"] == 0.7 and "relaxation.margin" not in p.given_as
    # Tuning the relaxation without turning it on (the seed system's is on by default) warns.
    with pytest.warns(UserWarning, match="relax_margin tunes the centreline relaxation, which is off"):
        presets.track(4, relax_margin=0.3)
    # A type error names the seed system's name the caller wrote.
    with pytest.raises(TypeError, match=r"'relaxation.margin' \(given as relax_margin\) must be a number"):
        presets.track(4, relax_iters=10, relax_margin="wide")
    for accel in ("anderson", "Chebyshev", None, 0):
        with pytest.raises(ValueError, match="'relax_accel'.*'chebyshev'.*'none'"):
            presets.track(4, relax_accel=accel)
    # relax_solver: only the seed system's default, XPBD, exists here.
    assert dict(presets.track(4, relax_solver="xpbd").overrides) == {"seed": 0}
    for solver in ("energy", "tp_sobolev", None):
        with pytest.raises(ValueError, match="'relax_solver'.*only 'xpbd' exists"):
            presets.track(4, relax_solver=solver)
    # The seed system's names with no counterpart, each refused with the reason.
    refused = {"relax_band": r"validation's own: pi \* max\(validate.turn_radius_min, c / 2\) of arc.*not settable",
               "relax_tol": "validation's thresholds are exact.*validate.clearance_margin and validate.turn_radius_min",
               "relax_sep_every": "no candidate cache.*exact chord bound",
               "relax_sep_cache_slots": "no candidate cache.*exact chord bound",
               "relax_sep_cache_skin": "no candidate cache.*exact chord bound",
               "relax_smooth_spacing_iters": "resampled at uniform arc length, so no spacing polish"}
    for name, reason in refused.items():
        with pytest.raises(ValueError, match=f"'{name}' \\(a seed-system name\\) has no counterpart.*{reason}"):
            presets.track(4, **{name: 3})
    # numpy's bool is a bool (last: the pure-Python wheel's check may lack numpy).
    np = pytest.importorskip("numpy")
    assert presets.track(4, relax_enable=np.bool_(True)).overrides["relaxation.max_iterations"] == 50


@pytest.mark.cpu
def test_relaxation_repairs_failing_attempts_and_leaves_passing_ones_bit_for_bit():
    """bezier at seed 3 relaxes about a quarter of its envs; every track is valid, and an env
    whose first attempt passes without the relaxation is the same track, bit for bit, with it."""
    import torch
    from track_gen.course import Course, status_bits
    bits = status_bits()
    on = Course.track(presets.track(64, device="cpu", seed=3, generator="bezier", relax_iters=50))
    off = Course.track(presets.track(64, device="cpu", seed=3, generator="bezier", relax_enable=False))
    assert on.pipeline == "elevated_relaxed_family_pipeline" and off.pipeline == "bezier_pipeline"
    assert on.params.resolved()["relaxation.max_iterations"] == 50
    assert off.params.resolved()["relaxation.max_iterations"] == 0
    status_on, status_off = on.tracks.status, off.tracks.status
    assert ((status_on & bits["valid"]) != 0).all()
    relaxed = (status_on & bits["relaxed"]) != 0
    assert relaxed.any()
    assert not ((status_off & bits["relaxed"]) != 0).any()
    first = ((status_off & bits["attempts_mask"]) >> 8) == 1
    assert first.any()
    assert not relaxed[first].any()
    assert torch.equal(on.tracks.position[first], off.tracks.position[first])
    assert torch.equal(status_on[first], status_off[first])


@pytest.mark.cpu
@pytest.mark.parametrize("name, elevation", [("bezier", None), ("hull", None), ("voronoi", "random_walk"),
                                             ("checkpoint", None), ("polar", "harmonics")])
def test_a_batch_of_one_family_takes_its_own_pipeline_and_the_family_pipelines_tracks(name, elevation):
    """generator=<family> runs that family's own kernel (<family>_pipeline, which keeps only the
    spline's chords, when the elevation is flat; elevated_<family>_pipeline otherwise; polar with
    an elevation profile: elevated_track_pipeline); a weight on that family alone keeps the family
    pipeline (it stores the dense samples), whose tracks must be the same, bit for bit, on the CPU
    (two episodes)."""
    import torch
    from track_gen.course import Course
    extra = {} if elevation is None else {"elevation": {"profile": elevation, "knots": 10, "z_min": 0.5, "z_max": 2.0,
                                                        "max_grade": 0.5}}
    own = Course.track(presets.track(64, device="cpu", seed=31, generator=name, **extra))
    family = Course.track(presets.track(64, device="cpu", seed=31, generator_weights={name: 1.0}, **extra))
    assert own.pipeline == ("elevated_track_pipeline" if name == "polar"
                            else f"{name}_pipeline" if elevation is None else f"elevated_{name}_pipeline")
    assert family.pipeline == "elevated_family_pipeline"
    for _ in range(2):  # the first episode and the next
        assert torch.equal(own.tracks.family, torch.full_like(own.tracks.family, FAMILIES[name]))
        assert torch.equal(own.tracks.family, family.tracks.family)
        assert torch.equal(own.tracks.status, family.tracks.status)
        assert torch.equal(own.tracks.position, family.tracks.position)
        assert torch.equal(own.tracks.gate_centre, family.tracks.gate_centre)
        if elevation is not None:
            assert own.tracks.position[..., 2].std() > 0.05   # lifted
        own.regenerate(advance=True)
        family.regenerate(advance=True)


@pytest.mark.cpu
def test_gate_courses_refuse_the_relaxation():
    """The gate-course pipeline has no stages::centreline_relaxation: turning it on is an error
    at construction (C++ check_no_relaxation), naming the seed system's name the caller wrote."""
    from track_gen.course import Course
    with pytest.raises(ValueError, match=r"track_params\.relaxation\.max_iterations = 50 turns the centreline "
                                         r"relaxation on.*given as relax_iters"):
        Course.gates(presets.gate_course(4, device="cpu", relax_iters=50))
    Course.gates(presets.gate_course(4, device="cpu", relax_enable=False))  # off: accepted


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
    assert lifted.pipeline == "elevated_track_pipeline"   # polar with an elevation profile
    assert Course.track(presets.track(8, device="cuda:0", generator="hull")).pipeline == "hull_pipeline"
    assert Course.track(presets.track(8, device="cuda:0", generator="hull",
                                      elevation={"profile": "uniform"})).pipeline == "elevated_hull_pipeline"
    assert Course.track(presets.track(8, device="cuda:0", generator="repulsive")).pipeline == "elevated_any_family_pipeline"
    for _ in range(2):  # the first episode and the next
        torch.cuda.synchronize()
        assert torch.equal(fast.tracks.position, family.tracks.position)
        assert torch.equal(fast.tracks.status, family.tracks.status)
        assert torch.equal(fast.tracks.gate_centre, family.tracks.gate_centre)
        fast.regenerate(advance=True)
        family.regenerate(advance=True)
