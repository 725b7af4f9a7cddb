"""The heightfield from Python (C++ heightfield.hpp, issue 15 item 5): ``Course.attach_heightfield``,
``heightfield()`` / ``heightfield_headers()`` and ``sample_height``, against a brute force
(every texel: the height of the nearest centreline cross-section in the xy plane, over every
segment in float64 on the CPU, with torch: the tests need no numpy) and a float64 bilinear
interpolation. The C++ tests (tests/collision/heightfield_cases.hpp) check the
same on both backends; here the binding's shapes, views, regeneration and errors."""
import pytest

from track_gen.pipeline import presets


def _brute_heights(points, x, y, tie=1e-4):
    """The nearest cross-sections of the closed centreline ``points`` ([N, 3] float64 CPU tensor)
    at the planar points (x[m], y[m]) ([M] float64), by brute force over every segment:
    (z [M, N], the height at each segment's foot; near [M, N], the segments within ``tie`` of the
    least planar distance: any of them is a right answer at a point equidistant from two parts)."""
    import torch
    a = points
    b = torch.roll(points, -1, dims=0)
    d = (b - a)[:, :2]
    len2 = (d * d).sum(-1)
    p = torch.stack([x, y], -1)
    rel = p[:, None, :] - a[None, :, :2]
    safe = torch.where(len2 > 0, len2, torch.ones_like(len2))
    t = torch.where(len2 > 0, ((rel * d).sum(-1) / safe).clamp(0.0, 1.0), torch.zeros_like(rel[..., 0]))
    foot = a[None, :, :2] + t[..., None] * d[None]
    dist = (p[:, None, :] - foot).norm(dim=-1)
    z = a[None, :, 2] + t * (b - a)[None, :, 2]
    near = dist <= dist.min(dim=1, keepdim=True).values + tie
    return z, near


def _bilinear(heights, header, x, y):
    """Reference of sample_height for one env, in float64: heights [R, R], header (x0, y0, cell,
    inv_cell), points x, y of any one shape; clamped to the square of the texel centres."""
    r = heights.shape[0]
    x0, y0, cell = float(header[0]), float(header[1]), float(header[2])
    u = ((x - x0) / cell - 0.5).clamp(0.0, r - 1.0)
    v = ((y - y0) / cell - 0.5).clamp(0.0, r - 1.0)
    i = u.floor().long().clamp(max=r - 2)
    j = v.floor().long().clamp(max=r - 2)
    fx, fy = u - i, v - j
    h00, h10 = heights[j, i], heights[j, i + 1]
    h01, h11 = heights[j + 1, i], heights[j + 1, i + 1]
    return (1 - fy) * ((1 - fx) * h00 + fx * h10) + fy * ((1 - fx) * h01 + fx * h11)


def _courses():
    from track_gen.course import Course
    yield "random_walk", Course.track(presets.elevated_drone_track(3, device="cuda:0", seed=4, z_profile="random_walk"))
    yield "harmonics", Course.track(presets.elevated_drone_track(3, device="cuda:0", seed=5, z_profile="harmonics"))
    yield "gate_course", Course.gates(presets.gate_course(3, device="cuda:0", seed=6))


@pytest.mark.gpu
def test_every_texel_is_the_nearest_cross_sections_height():
    import torch
    for name, course in _courses():
        course.attach_heightfield(resolution=20, margin=1.5)
        torch.cuda.synchronize()
        heights = course.heightfield()
        headers = course.heightfield_headers()
        assert heights.shape == (course.num_envs, 20, 20) and heights.dtype == torch.float32
        assert headers.shape == (course.num_envs, 4)
        h = heights.cpu().double()
        hd = headers.cpu()  # float32, as the bake computes the centres
        pos = course.tracks.position.cpu().double()
        borders = torch.cat([course.tracks.border_left, course.tracks.border_right], dim=1).cpu().double()
        assert float(h.max() - h.min()) > 0.3, name  # the tracks climb
        idx = torch.arange(20, dtype=torch.float32)
        for e in range(course.num_envs):
            x0, y0, cell = hd[e, 0], hd[e, 1], hd[e, 2]
            xy = borders[e, :, :2]
            side = float((xy.max(dim=0).values - xy.min(dim=0).values).max()) + 2 * 1.5
            assert float(cell) * 20 == pytest.approx(side, rel=1e-5), name
            xs = (x0 + (idx + 0.5) * cell).double()  # the centres in float32, as the bake
            ys = (y0 + (idx + 0.5) * cell).double()
            gy, gx = torch.meshgrid(ys, xs, indexing="ij")  # [j, i]
            z, near = _brute_heights(pos[e], gx.reshape(-1), gy.reshape(-1))
            got = h[e].reshape(-1)
            diff = (z - got[:, None]).abs().masked_fill(~near, float("inf")).min(dim=1).values
            tol = 2e-5 + 2e-6 * got.abs()
            bad = (diff > tol).nonzero().flatten().tolist()
            assert not bad, (name, e, bad[:5], got[bad[:5]].tolist())


@pytest.mark.gpu
def test_sample_height_is_the_clamped_bilinear_interpolation():
    import torch
    from track_gen.course import Course
    course = Course.track(presets.elevated_drone_track(4, device="cuda:0", seed=7, z_profile="harmonics"))
    course.attach_heightfield(resolution=12, margin=0.5)
    torch.cuda.synchronize()
    h = course.heightfield().cpu().double()
    hd = course.heightfield_headers().cpu().double()
    gen = torch.Generator().manual_seed(0)
    extent = (hd[:, 2] * 12).float()
    lo = hd[:, :2].float()
    # Points over the grid and up to a grid width beyond it: K = 64 per env, and one per env.
    for k in (64, None):
        shape = (course.num_envs, k) if k else (course.num_envs,)
        ux = torch.rand(shape, generator=gen) * 3 - 1
        uy = torch.rand(shape, generator=gen) * 3 - 1
        ext = extent if k is None else extent[:, None]
        x = (lo[:, 0] if k is None else lo[:, :1]) + ux * ext
        y = (lo[:, 1] if k is None else lo[:, 1:]) + uy * ext
        out = course.sample_height(x.cuda().contiguous(), y.cuda().contiguous())
        assert out.shape == shape and out.dtype == torch.float32
        got = out.cpu().double().reshape(course.num_envs, -1)
        xs, ys = x.double().reshape(course.num_envs, -1), y.double().reshape(course.num_envs, -1)
        for e in range(course.num_envs):
            ref = _bilinear(h[e], hd[e], xs[e], ys[e])
            torch.testing.assert_close(got[e], ref, rtol=1e-5, atol=1e-5)
    nan = course.sample_height(torch.full((course.num_envs,), float("nan"), device="cuda:0"),
                               torch.zeros(course.num_envs, device="cuda:0"))
    assert torch.isnan(nan).all()


@pytest.mark.gpu
def test_regenerate_rebakes_only_the_masked_envs():
    import torch
    from track_gen.course import Course
    course = Course.track(presets.elevated_drone_track(6, device="cuda:0", seed=8, z_profile="random_walk"))
    course.attach_heightfield(resolution=16)
    before = course.heightfield().clone()
    mask = torch.tensor([0, 1, 0, 0, 1, 0], dtype=torch.int32, device="cuda:0")
    course.regenerate(mask=mask, advance=True)
    torch.cuda.synchronize()
    after = course.heightfield()  # the same view, updated in place
    for e in range(6):
        same = torch.equal(after[e], before[e])
        assert same == (mask[e].item() == 0), e
    # A fresh field of the new tracks equals the re-baked one.
    course.attach_heightfield(resolution=16)
    torch.cuda.synchronize()
    assert torch.equal(course.heightfield(), after)


@pytest.mark.gpu
def test_heightfield_errors_name_the_parameter():
    import torch
    from track_gen.course import Course
    course = Course.track(presets.elevated_drone_track(2, device="cuda:0", seed=1))
    with pytest.raises(RuntimeError, match="no heightfield is attached"):
        course.heightfield()
    with pytest.raises(RuntimeError, match="no heightfield is attached"):
        course.sample_height(torch.zeros(2, device="cuda:0"), torch.zeros(2, device="cuda:0"))
    with pytest.raises(ValueError, match=r"heightfield.resolution = 1 is out of range"):
        course.attach_heightfield(resolution=1)
    with pytest.raises(ValueError, match=r"heightfield.resolution = 513 is out of range"):
        course.attach_heightfield(resolution=513)
    with pytest.raises(ValueError, match=r"heightfield.margin"):
        course.attach_heightfield(resolution=8, margin=-1.0)
    with pytest.raises(TypeError):
        course.attach_heightfield(resolution=8.0)
    course.attach_heightfield(resolution=8)
    with pytest.raises(ValueError, match="x must be"):
        course.sample_height(torch.zeros(3, device="cuda:0"), torch.zeros(3, device="cuda:0"))
    with pytest.raises(ValueError, match="y must be"):
        course.sample_height(torch.zeros(2, 4, device="cuda:0"), torch.zeros(2, 5, device="cuda:0"))
