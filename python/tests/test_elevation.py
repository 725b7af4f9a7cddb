"""Elevation profiles from Python (issue 15, item 4): the ``elevation`` parameters (and the seed
system's ``z_*`` names) reach stages::elevation_profile and stages::validate_grade. The C++ tests
check the profiles against independent references (tests/geometry/elevation_tests.hpp); here
the names and the contract on the returned tensors."""
import pytest

from track_gen.pipeline import presets


@pytest.mark.gpu
@pytest.mark.parametrize("profile", ["uniform", "random_walk", "harmonics"])
def test_profiles_keep_their_band_and_grade(profile):
    import torch
    from track_gen.course import Course, status_bits
    params = presets.elevated_drone_track(256, device="cuda:0", seed=9, z_profile=profile, z_valid_grade=0.6)
    course = Course.track(params)
    torch.cuda.synchronize()
    bits = status_bits()
    status = course.tracks.status.long()
    random = ((status & bits["valid"]) != 0) & ((status & bits["fallback"]) == 0)
    assert random.float().mean() > 0.9
    p = course.tracks.position[random].double()  # [E', N, 3]
    assert p[..., 2].min() >= 0.5 - 1e-5 and p[..., 2].max() <= 2.5 + 1e-5
    step = torch.roll(p, -1, dims=1) - p  # the closing pair included
    grade = step[..., 2].abs() / step[..., :2].norm(dim=-1)
    assert grade.max() <= 0.6 * (1 + 1e-5)
    assert course.params.resolved()["elevation.profile"] == profile


@pytest.mark.gpu
def test_flat_profile_is_the_default_and_bad_names_are_named():
    from track_gen.course import Course
    assert presets.track(4).resolved()["elevation.profile"] == "flat"
    with pytest.raises(ValueError, match="'spiral' is not an elevation profile"):
        Course.track(presets.track(4, device="cuda:0", z_profile="spiral"))
    with pytest.raises(ValueError, match=r"track_params.elevation.knots = 2 is out of range"):
        Course.track(presets.track(4, device="cuda:0", z_control_points=2))
