"""``track_gen.envs.CarRacingVecEnv`` (Gymnasium VectorEnv on torch tensors) and its kinematic
bicycle model: spaces, same-step autoreset, rewards against an independent progress computation,
the car model against its closed form (a circle of radius L / tan(delta)), determinism, and on a
GPU the captured CUDA graph against eager steps. Tests taking ``device`` run on the CPU and, on a
GPU machine, on cuda:0 too."""
import math
import os

import pytest
import torch

try:
    import gymnasium
except ImportError as err:  # CI installs it (scripts/python-cpu-check): there a missing one is an error
    if os.environ.get("TRACK_GEN_REQUIRE_CPU") == "1" or os.environ.get("TRACK_GEN_REQUIRE_GPU") == "1":
        raise
    pytest.skip(f"gymnasium is not installed ({err}): pip install gymnasium", allow_module_level=True)

from track_gen.envs import BicycleConfig, CarRacingConfig, CarRacingVecEnv, bicycle_step
from track_gen.envs import pure_pursuit as drive


def make_env(num_envs=8, device="cpu", **kw):
    kw.setdefault("seed", 3)
    return CarRacingVecEnv(CarRacingConfig(num_envs=num_envs, device=device, **kw))


def pure_pursuit(env, obs):
    return drive(env.config, obs)


def project(points, arc, length, xy):
    """Independent arc length of the nearest point of each closed centreline polyline (float64):
    points [E, N, 2], arc [E, N] (arc length of each sample along the spline), length [E],
    xy [E, 2] -> s [E]. The foot at parameter t of segment k -> k + 1 has the arc length
    interpolated between its samples' (the library's documented convention, localizer.hpp: the
    samples' spline arc lengths, not the chords)."""
    a = points
    b = torch.roll(points, -1, dims=1)
    ab = b - a
    t = (((xy[:, None] - a) * ab).sum(-1) / (ab * ab).sum(-1)).clamp(0, 1)
    foot = a + t[..., None] * ab
    k = ((xy[:, None] - foot) ** 2).sum(-1).argmin(1)[:, None]
    arc_next = torch.cat([arc[:, 1:], length[:, None]], 1)
    a0, a1 = arc.gather(1, k)[:, 0], arc_next.gather(1, k)[:, 0]
    s = a0 + t.gather(1, k)[:, 0] * (a1 - a0)
    return torch.remainder(s, length)


def wrap_delta(s0, s1, length):
    return torch.remainder(s1 - s0 + length / 2, length) - length / 2


# ---- the car model -----------------------------------------------------------------------------


@pytest.mark.cpu
@pytest.mark.parametrize("steer", [0.3, -0.8, 1.0])
def test_constant_steer_and_speed_drive_a_circle_of_radius_wheelbase_over_tan_delta(steer):
    car = BicycleConfig(wheelbase=0.26, max_steer=0.55, dt=0.05)
    E, v0, n = 1, 1.2, 137
    x, y, yaw = (torch.zeros(E, dtype=torch.float64) for _ in range(3))
    speed = torch.full((E,), v0, dtype=torch.float64)
    st, th = torch.full((E,), steer, dtype=torch.float64), torch.zeros(E, dtype=torch.float64)
    delta = steer * car.max_steer
    R = car.wheelbase / math.tan(delta)          # signed: the centre is at (0, R), left for R > 0
    for i in range(1, n + 1):
        bicycle_step(x, y, yaw, speed, st, th, car)
        theta = v0 * car.dt * i / R              # heading after i steps (closed form)
        want = (R * math.sin(theta), R * (1 - math.cos(theta)))
        assert abs(x.item() - want[0]) < 1e-9 and abs(y.item() - want[1]) < 1e-9, i
        assert abs(math.remainder(yaw.item() - theta, 2 * math.pi)) < 1e-9
    assert speed.item() == v0


@pytest.mark.cpu
def test_accelerating_and_braking_stay_on_the_circle_and_within_the_speed_limits():
    car = BicycleConfig()
    x, y, yaw, speed = (torch.zeros(3, dtype=torch.float64) for _ in range(4))
    st = torch.tensor([0.5, 0.5, 0.0], dtype=torch.float64)
    th = torch.ones(3, dtype=torch.float64)
    R = car.wheelbase / math.tan(0.5 * car.max_steer)
    distance = torch.zeros(3, dtype=torch.float64)
    for i in range(60):
        v_before = speed.clone()
        bicycle_step(x, y, yaw, speed, st, th, car)
        want_v = min(v_before[0].item() + car.max_accel * car.dt, car.max_speed)
        assert speed[0].item() == pytest.approx(want_v, abs=1e-12)
        distance += (v_before + speed) / 2 * car.dt
    assert speed.max().item() == car.max_speed
    # Whatever the speed did, the steered cars are on the circle of centre (0, R); the straight
    # one travelled the trapezoid-rule distance along +x.
    r = torch.hypot(x[:2], y[:2] - R)
    assert torch.allclose(r, torch.full_like(r, R), atol=1e-9)
    assert x[2].item() == pytest.approx(distance[2].item(), abs=1e-9) and y[2].item() == 0
    # Braking at -1: max_brake per second down to min_speed (no reverse).
    th.fill_(-1.0)
    for _ in range(20):
        v_before = speed.clone()
        bicycle_step(x, y, yaw, speed, st, th, car)
        assert torch.allclose(speed, (v_before - car.max_brake * car.dt).clamp_min(0.0), atol=1e-12)
    assert (speed == 0).all()


@pytest.mark.cpu
def test_config_errors_name_the_field():
    with pytest.raises(ValueError, match="wheelbase"):
        BicycleConfig(wheelbase=0.0)
    with pytest.raises(ValueError, match="max_steer"):
        BicycleConfig(max_steer=2.0)
    with pytest.raises(ValueError, match="laps_to_finish"):
        CarRacingConfig(laps_to_finish=0)
    with pytest.raises(ValueError, match="num_envs"):
        CarRacingConfig(num_envs=0)
    # Each bad value is blamed on its own field, strings and bools included (a trial found
    # comparison TypeErrors, and a NaN min_speed blamed on max_speed).
    with pytest.raises(ValueError, match=r"BicycleConfig.min_speed = nan: expected a finite number"):
        BicycleConfig(min_speed=float("nan"))
    with pytest.raises(ValueError, match=r"BicycleConfig.dt = '0.05': expected a finite number"):
        BicycleConfig(dt="0.05")
    for name, value in (("look_ahead_spacing", "0.4"), ("off_road_timeout", "1"), ("spawn_lateral", True),
                        ("checkpoint_spacing", None)):
        with pytest.raises(ValueError, match=rf"CarRacingConfig.{name} = .*: expected a number"):
            CarRacingConfig(**{name: value})
    with pytest.raises(ValueError, match="CarRacingConfig.look_ahead_points = True: expected an int, not a bool"):
        CarRacingConfig(look_ahead_points=True)
    for key in ("num_envs", "seed", "device"):
        with pytest.raises(ValueError, match=rf"\['{key}'\] are CarRacingConfig's own fields"):
            CarRacingConfig(track_overrides={key: 3})
    assert CarRacingConfig(track_overrides={"num_samples": 128}).track_overrides == {"num_samples": 128}


# ---- the vector environment --------------------------------------------------------------------


def test_spaces_shapes_and_dtypes_follow_gymnasium(device):
    env = make_env(6, device)
    cfg = env.config
    D = 2 * cfg.look_ahead_points + 5
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert env.single_observation_space.shape == (D,) and env.single_observation_space.dtype == "float32"
    assert env.observation_space == gymnasium.vector.utils.batch_space(env.single_observation_space, 6)
    assert env.action_space == gymnasium.vector.utils.batch_space(env.single_action_space, 6)
    obs, infos = env.reset()
    assert obs.shape == (6, D) and obs.dtype == torch.float32 and obs.device == torch.device(device)
    assert env.observation_space.contains(obs.cpu().numpy())
    env.action_space.seed(0)
    for _ in range(30):
        obs, rew, term, trunc, infos = env.step(env.action_space.sample())  # NumPy actions are accepted
        assert rew.shape == (6,) and rew.dtype == torch.float32
        assert term.dtype == torch.bool and trunc.dtype == torch.bool and term.shape == trunc.shape == (6,)
        assert infos["final_obs"].shape == (6, D) and infos["_final_obs"].dtype == torch.bool
        for i in range(6):
            assert env.single_observation_space.contains(obs[i].cpu().numpy())
        assert torch.isfinite(obs).all() and torch.isfinite(rew).all()
    with pytest.raises(ValueError, match="shape"):
        env.step(torch.zeros(5, 2))
    with pytest.raises(ValueError, match="unknown options"):
        env.reset(options={"foo": 1})


class _SingleView(gymnasium.Env):
    """One env of a CarRacingVecEnv as a plain Gymnasium Env with NumPy values (copies), so that
    Gymnasium's own checker (made for single envs) can run on it."""
    metadata = {"render_modes": []}

    def __init__(self):
        self.vec = make_env(1, seed=0)
        self.observation_space = self.vec.single_observation_space
        self.action_space = self.vec.single_action_space

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        obs, _ = self.vec.reset(seed=seed, options=options)
        return obs[0].numpy().copy(), {}

    def step(self, action):
        obs, rew, term, trunc, _ = self.vec.step(torch.as_tensor(action, dtype=torch.float32)[None])
        return obs[0].numpy().copy(), float(rew[0]), bool(term[0]), bool(trunc[0]), {}


@pytest.mark.cpu
def test_gymnasiums_env_checker_passes_on_one_env():
    # check_env: spaces, reset(seed=) determinism, step return types, observations in the space.
    import warnings
    from gymnasium.utils.env_checker import check_env
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(_SingleView(), skip_render_check=True)
    # Only the expected notes on the unbounded look-ahead points and lateral offset.
    messages = [str(w.message) for w in caught]
    assert all("infinity" in m for m in messages), messages


def _centreline_at(tracks, s):
    """Independent reference of the centreline point at arc length s [E] (linear between the
    samples, on their stored arc lengths, wrapping at the start line)."""
    a, p, L = tracks.arc_length, tracks.position, tracks.length
    s = torch.remainder(s, L)
    k = (torch.searchsorted(a, s.unsqueeze(1), right=True).squeeze(1) - 1).clamp(0, a.shape[1] - 1)
    k1 = torch.where(k + 1 == a.shape[1], torch.zeros_like(k), k + 1)
    rows = torch.arange(a.shape[0], device=a.device)
    a0 = a[rows, k]
    a1 = torch.where(k + 1 == a.shape[1], L, a[rows, k1])
    t = ((s - a0) / (a1 - a0)).clamp(0, 1).unsqueeze(1)
    return p[rows, k] + t * (p[rows, k1] - p[rows, k])


def test_a_first_observation_is_a_standing_car_on_the_centreline_heading_along_it(device):
    # 512 envs: spawns all around the loops (the spawn draws differ between CPU and CUDA).
    env = make_env(512, device, spawn_lateral=0.0)
    K, spacing = env.config.look_ahead_points, env.config.look_ahead_spacing
    obs, _ = env.reset()
    assert (obs[:, 2 * K] == 0).all() and (obs[:, 2 * K + 3:] == 0).all()   # speed, previous action
    assert obs[:, 2 * K + 1].abs().max() < 1e-3                            # on the centreline
    assert obs[:, 2 * K + 2].abs().max() < 1e-3                            # heading along it
    # The look-ahead points are the centreline at s + spacing (i + 1) in the car's frame.
    tracks, s = env.course.tracks, env._frame.s
    c, sn = torch.cos(env.yaw), torch.sin(env.yaw)
    for i in range(K):
        d = _centreline_at(tracks, s + spacing * (i + 1))[:, :2] - env.position[:, :2]
        expected = torch.stack([c * d[:, 0] + sn * d[:, 1], -sn * d[:, 0] + c * d[:, 1]], dim=1)
        torch.testing.assert_close(obs[:, 2 * i: 2 * i + 2], expected, atol=2e-5, rtol=0)
    # The first point is about look_ahead_spacing straight ahead: the samples' chords differ from
    # their stored arc lengths by under 1 % (the resampled spline), so chord ~ arc within 1 %.
    first = obs[:, :2]
    d = first.norm(dim=1)
    assert ((d <= 1.01 * spacing) & (d > 0.9 * spacing)).all()
    assert (first[:, 0] > 0).all()


def test_same_step_autoreset_gives_the_new_episode_and_leaves_other_envs_untouched(device):
    # Twin envs (same seed): in A env 0 drives off the road at full steer and throttle, in B it
    # stands still like every other env. A's env 0 ends (off-road timeout); the others must
    # match B bit for bit, step by step.
    kw = dict(num_envs=6, device=device, off_road_timeout=0.2, spawn_lateral=0.0)
    a, b = make_env(**kw), make_env(**kw)
    oa, _ = a.reset()
    ob, _ = b.reset()
    K = a.config.look_ahead_points
    act_a = torch.zeros(6, 2)
    act_a[0] = torch.tensor([1.0, 1.0])
    act_b = torch.zeros(6, 2)
    track0 = a.course.tracks.position[0].clone()
    ended = None
    for step in range(200):
        before = oa[0].clone()
        oa, ra, ta, ua, ia = a.step(act_a)
        ob, rb, tb, ub, ib = b.step(act_b)
        others = slice(1, None)
        assert torch.equal(oa[others], ob[others]) and torch.equal(ra[others], rb[others])
        assert not ta[others].any() and not ua[others].any()
        if ta[0]:
            ended = step
            break
        assert not ia["_final_obs"][0]
    assert ended is not None, "env 0 never left the road"
    assert ia["_final_obs"].tolist() == [True] + [False] * 5 and not ua[0]
    # infos["final_obs"] is the end of the old episode: moving, previous action (1, 1), off the road.
    final = ia["final_obs"][0]
    assert final[2 * K] > 0 and final[2 * K + 3:].tolist() == [1.0, 1.0] and final[2 * K + 1].abs() > 1
    assert not torch.equal(final, before)
    # The returned observation is the new episode's first: standing, on the centreline, no action.
    new = oa[0]
    assert new[2 * K] == 0 and (new[2 * K + 3:] == 0).all() and new[2 * K + 1].abs() < 1e-3
    # ... on a new track (episode 1), with its bookkeeping cleared; the other tracks untouched.
    assert ia["episode"].tolist() == [1, 0, 0, 0, 0, 0]
    assert not torch.equal(a.course.tracks.position[0], track0)
    assert torch.equal(a.course.tracks.position[1:], b.course.tracks.position[1:])
    assert a.episode_length_buf[0] == 0 and a.off_road_time[0] == 0
    fi = ia["final_info"]
    assert fi["length"][0] == ended + 1 and fi["laps"][0] == 0
    # A termination is reported once: the next step of env 0 continues its new episode.
    oa, ra, ta, ua, ia = a.step(torch.zeros(6, 2))
    assert not ta[0] and not ia["_final_obs"][0] and a.episode_length_buf[0] == 1


def test_a_step_limit_of_one_resets_every_env_every_step(device):
    env = make_env(5, device, max_episode_steps=1)
    K = env.config.look_ahead_points
    env.reset()
    act = torch.tensor([[0.5, 1.0]], device=device).repeat(5, 1)
    for i in range(1, 4):
        obs, rew, term, trunc, infos = env.step(act)
        assert trunc.all() and not term.any() and infos["_final_obs"].all()
        assert (infos["final_obs"][:, 2 * K + 3:] == act).all()       # the ended episode saw the action
        assert (obs[:, 2 * K] == 0).all() and (obs[:, 2 * K + 3:] == 0).all()  # each a first observation
        assert infos["episode"].tolist() == [i] * 5 and (infos["final_info"]["length"] == 1).all()


def test_reward_is_the_signed_progress_along_the_centreline(device):
    # No penalty or bonus: the reward is the progress of the car's foot on the centreline,
    # checked against an independent float64 projection on the centreline polyline. The cars
    # stay on the road, where the nearest point is well defined (far off the road, near a
    # curve's centre, many segments are nearly equidistant and float32 may pick another foot).
    env = make_env(8, device, off_road_penalty=0.0, lap_bonus=0.0, progress_weight=1.0, spawn_lateral=0.05)
    obs, _ = env.reset()
    K = env.config.look_ahead_points
    env.yaw[:4] = torch.remainder(env.yaw[:4], 2 * math.pi) - math.pi    # half of them face backwards
    t = env.course.tracks
    pts, arc, length = t.position[..., :2].double(), t.arc_length.double(), t.length.double()
    xy = torch.stack([env.x, env.y], 1).double()
    s0 = project(pts, arc, length, xy)
    total = torch.zeros(8, dtype=torch.float64, device=device)
    for i in range(80):
        act = pure_pursuit(env, obs)
        act[:4] = torch.tensor([0.0, 0.3 if i < 8 else -1.0], device=device)   # backwards a little, then brake
        obs, rew, term, trunc, infos = env.step(act)
        assert not (term | trunc).any() and (obs[:, 2 * K + 1].abs() < 1).all()   # on the road
        xy = torch.stack([env.x, env.y], 1).double()
        s1 = project(pts, arc, length, xy)
        want = wrap_delta(s0, s1, length)
        assert torch.allclose(rew.double(), want, atol=1e-4), (i, (rew.double() - want).abs().max())
        total += want
        s0 = s1
    assert (total[:4] < -0.02).all()   # backwards: negative progress
    assert (total[4:] > 3).all()       # the pure-pursuit cars moved forward several metres
    assert torch.allclose(env.episode_progress.double(), total, atol=1e-3)


@pytest.mark.parametrize("cap", [True, False])
def test_a_jump_ahead_is_credited_only_up_to_the_next_gate(device, cap):
    # A car moved 5 m ahead along its track (what cutting across the infield does to its foot on
    # the centreline) without passing the gates in between: uncapped, the reward pays
    # the jump; capped, only up to half a gate spacing past the first gate ahead of the spawn,
    # and nothing more until the skipped gate is passed (driving on from there earns 0).
    env = make_env(4, device, spawn_lateral=0.0, off_road_penalty=0.0, progress_cap=cap)
    obs, _ = env.reset()
    t = env.course.tracks
    L, G = t.length[0].double().item(), int(t.num_gates[0])
    spacing = L / G
    s0 = env.s_prev[0].double().item()
    arc = t.arc_length[0].double()
    k = int(torch.argmin((arc - math.fmod(s0 + 5.0, L)).abs()))
    jump = math.remainder(arc[k].item() - s0, L)
    # Over the gates, 5 m up (outside their openings: the course credits none of them), then down.
    env.position[0, 2] = 5.0
    env.step(torch.zeros(4, 2))
    env.x[0], env.y[0] = t.position[0, k, 0], t.position[0, k, 1]
    # Facing along the track there, as after the cut: with the spawn's heading kept, a bend
    # between the two places points the car across or against the track, and driving on loses
    # progress for a few steps (5 of 40 seeds on cpu; the spawn draws differ by device).
    env.yaw[0] = torch.atan2(t.tangent[0, k, 1], t.tangent[0, k, 0])
    obs, rew, term, trunc, infos = env.step(torch.zeros(4, 2))
    assert env.course.gates_passed[0] == 0
    env.position[0, 2] = t.position[0, k, 2]
    d0 = math.ceil(s0 / spacing) * spacing - s0          # to the first gate ahead (gates at i L / G)
    want = min(jump, d0 + 0.5 * spacing) if cap else jump
    assert abs(jump - 5.0) < 0.2 and rew[0].item() == pytest.approx(want, abs=2e-3)
    assert (rew[1:] == 0).all()                           # the others stand still
    for _ in range(10):
        obs, rew, term, trunc, infos = env.step(pure_pursuit(env, obs))
        assert not (term | trunc).any()
        if cap:
            assert rew[0].item() == 0.0
        else:
            assert rew[0].item() > 0.0


def test_a_scripted_driver_completes_laps_and_earns_the_lap_bonus(device):
    env = make_env(6, device, laps_to_finish=1, lap_bonus=10.0, off_road_penalty=0.0)
    obs, _ = env.reset()
    lengths = env.course.tracks.length.clone()
    done = torch.zeros(6, dtype=torch.bool, device=device)
    returns = torch.zeros(6, device=device)
    for _ in range(900):
        obs, rew, term, trunc, infos = env.step(pure_pursuit(env, obs))
        new = infos["_final_obs"] & ~done
        if new.any():
            assert term[new].all() and not trunc[new].any()
            assert (infos["final_info"]["laps"][new] == 1).all()
            returns[new] = infos["final_info"]["return"][new]
            # One lap from a random spawn: about a track length of progress, plus the bonus.
            progress = infos["final_info"]["progress"][new]
            assert torch.allclose(progress, lengths[new], rtol=0.02)
            assert torch.allclose(returns[new], progress + 10.0, atol=1e-3)
            done |= new
        if done.all():
            break
    assert done.all(), f"only {done.sum().item()} of 6 envs completed a lap"


def test_off_road_timeout_terminates_after_the_stated_time(device):
    env = make_env(4, device, off_road_timeout=0.3, off_road_penalty=2.0, progress_weight=0.0)
    env.reset()
    dt = env.config.car.dt
    off_steps = torch.zeros(4, dtype=torch.int64, device=device)
    act = torch.tensor([[1.0, 1.0], [-1.0, 1.0], [1.0, 1.0], [-1.0, 1.0]])
    ended = torch.zeros(4, dtype=torch.bool, device=device)
    for _ in range(300):
        obs, rew, term, trunc, infos = env.step(act)
        # Independent of the env's timer: count consecutive off-road steps from the reward
        # (the penalty is its only term here) and the off_road info.
        penalised = rew < 0
        assert torch.equal(penalised, infos["off_road"])
        assert ((rew[penalised] + 2.0 * dt).abs() < 1e-6).all()
        off_steps = torch.where(penalised, off_steps + 1, torch.zeros_like(off_steps))
        want = (off_steps * dt > 0.3 + 1e-6) & ~ended
        assert torch.equal(term & ~ended, want)
        ended |= term
        off_steps.masked_fill_(term, 0)
        if ended.all():
            break
    assert ended.all()


def test_the_same_seed_gives_the_same_episodes(device):
    def run(seed):
        env = make_env(8, device, max_episode_steps=40, off_road_timeout=0.2)
        obs, _ = env.reset(seed=seed)
        g = torch.Generator().manual_seed(1)
        rows = []
        for _ in range(120):
            obs, rew, term, trunc, infos = env.step(torch.rand(8, 2, generator=g) * 2 - 1)
            rows.append(torch.cat([obs.flatten(), rew, term.float(), trunc.float(), infos["episode"].float()]))
        return torch.stack(rows), env
    a, env_a = run(21)
    b, _ = run(21)
    c, _ = run(22)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    assert env_a.course.tracks.episode.min() >= 2   # resets happened along the way
    # reset(seed=) rebuilds the same tracks: episode 0 of the seed again.
    first = env_a.course.tracks.position.clone()
    env_a.reset(seed=21)
    again = make_env(8, device)
    again.reset(seed=21)
    assert torch.equal(env_a.course.tracks.position, again.course.tracks.position)
    assert (env_a.course.tracks.episode == 0).all() and not torch.equal(first, again.course.tracks.position)


def test_partial_reset_and_reset_idx_touch_only_the_chosen_envs(device):
    env = make_env(6, device)
    obs, _ = env.reset()
    act = torch.tensor([[0.2, 1.0]]).repeat(6, 1)
    for _ in range(5):
        obs, *_ = env.step(act)
    kept = obs.clone()
    mask = torch.tensor([False, True, False, False, True, False], device=device)
    obs, infos = env.reset(options={"reset_mask": mask})
    assert infos["episode"].tolist() == [0, 1, 0, 0, 1, 0]
    assert torch.equal(obs[~mask], kept[~mask])
    assert (obs[mask, 2 * env.config.look_ahead_points] == 0).all()
    env._reset_idx([0, 5])
    assert env.course.tracks.episode.tolist() == [1, 1, 0, 0, 1, 1]
    assert env.speed[0] == 0 and env.speed[2] > 0
    # A full reset without a seed: every env's next track.
    env.reset()
    assert env.course.tracks.episode.tolist() == [2, 2, 1, 1, 2, 2]


@pytest.mark.cpu
def test_capture_is_a_no_op_on_the_cpu():
    env = make_env(2)
    env.reset()
    assert env.capture() is False
    obs, *_ = env.step(torch.zeros(2, 2))
    assert obs.shape == (2, env.config.observation_size)


# ---- the GPU: one CUDA graph per step ----------------------------------------------------------


def _actions(steps, num_envs, seed=4):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(num_envs, 2, generator=g) * 2 - 1) for _ in range(steps)]


@pytest.mark.gpu
def test_eager_cuda_steps_allocate_nothing_and_never_synchronise():
    env = make_env(256, device="cuda:0", max_episode_steps=20, off_road_timeout=0.2)
    env.reset(seed=1)
    acts = [a.cuda() for a in _actions(40, 256)]
    env.step(acts[0])                  # the first step makes the course's query buffers
    torch.cuda.synchronize()
    allocated = torch.cuda.memory_stats()["allocation.all.allocated"]
    torch.cuda.set_sync_debug_mode("error")
    try:
        for a in acts[1:]:
            env.step(a)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    assert torch.cuda.memory_stats()["allocation.all.allocated"] == allocated
    assert env.course.tracks.episode.min().item() >= 1   # every env was reset at least once


@pytest.mark.gpu
def test_graph_replay_equals_eager_steps_bit_for_bit():
    # Replays of the captured step and eager steps run the same kernels on the same inputs, and
    # the spawn generator is registered with the graph (its Philox offsets advance per replay as
    # eager draws do): the results are expected equal bit for bit, including resets.
    E, steps = 512, 120
    cfg = dict(max_episode_steps=40, off_road_timeout=0.2)
    acts = [a.cuda() for a in _actions(steps + 1, E)]
    for i in range(30):
        acts[i].zero_()         # standing still: steps without a done env (the regeneration skipped)
    eager, graphed = make_env(E, "cuda:0", **cfg), make_env(E, "cuda:0", **cfg)
    eager.reset(seed=9)
    graphed.reset(seed=9)
    eager.step(acts[0])
    graphed.actions.copy_(acts[0])
    assert graphed.capture() is True            # its warm-up step is the eager env's first step
    launches_before = graphed.course.generation_launches()
    skipped = 0
    for i in range(1, steps + 1):
        out_e = [t.clone() for t in eager.step(acts[i])[:4]] + [eager.final_obs.clone()]
        out_g = [t.clone() for t in graphed.step(acts[i])[:4]] + [graphed.final_obs.clone()]
        for x, y, name in zip(out_e, out_g, ("obs", "reward", "terminated", "truncated", "final_obs")):
            assert torch.equal(x, y), f"step {i}: {name} differs"
        skipped += int(not out_e[2].any() and not out_e[3].any())
    assert torch.equal(eager.course.tracks.episode, graphed.course.tracks.episode)
    assert torch.equal(eager.course.tracks.position, graphed.course.tracks.position)
    assert graphed.course.tracks.episode.min().item() >= 2
    # Replays with no done env skipped the regeneration (the conditional node): one generation
    # launch per replay with a done env, none for the others.
    assert 0 < skipped < steps
    assert graphed.course.generation_launches() - launches_before == steps - skipped


@pytest.mark.cpu
def test_steps_after_the_first_allocate_no_tensor():
    # torch's profiler reports the bytes each op allocates; a step (resets included: a step limit
    # of 3) may allocate only the 0-dim CPU tensors torch wraps Python scalars in (<= 8 bytes),
    # never a tensor of E elements. The positive control shows that one would be seen.
    from torch.profiler import ProfilerActivity, profile
    env = make_env(64, max_episode_steps=3)
    env.reset()
    act = torch.rand(64, 2, generator=torch.Generator().manual_seed(0)) * 2 - 1
    env.step(act)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        for _ in range(4):
            env.step(act)
    big = sorted({(e.name, e.cpu_memory_usage) for e in prof.events() if e.cpu_memory_usage > 8})
    assert big == [], big
    assert env.course.tracks.episode.min() >= 1
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        env.step(act)
        _ = env.reward + 1.0        # the control: one float32 [64] tensor, 256 bytes
    assert max(e.cpu_memory_usage for e in prof.events()) >= 256


@pytest.mark.cpu
def test_misuse_is_refused_with_a_message():
    """What a fresh-user trial found: each raises, names the problem, and leaves the env usable."""
    env = make_env(4)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(torch.zeros(4, 2))                                   # before reset: cars not placed
    obs, _ = env.reset(seed=3)
    policy = torch.nn.Linear(obs.shape[1], 2)
    env.step(policy(obs))                                             # actions carrying autograd
    assert not env.actions.requires_grad
    env.step(torch.zeros(4, 2))                                       # and the env still steps
    state = [t.clone() for t in (env.obs, env.actions, env.x, env.y, env.yaw, env.speed, env.episode_length_buf)]
    for bad in (None, "steer", [[0.1, 0.2], [0.3]], torch.ones(4, 2, dtype=torch.bool)):
        with pytest.raises(TypeError, match=r"actions must be a float tensor or array of shape \[4, 2\]"):
            env.step(bad)                                             # torch's own message named neither
    after = (env.obs, env.actions, env.x, env.y, env.yaw, env.speed, env.episode_length_buf)
    assert all(torch.equal(a, b) for a, b in zip(after, state))      # a refused step changes nothing
    with pytest.raises(TypeError, match="int indices"):
        env._reset_idx(torch.tensor([True, False, True, False]))      # a mask is not a list of ids
    with pytest.raises(TypeError, match="int indices"):
        env._reset_idx([0.7, 2.2])
    with pytest.raises(ValueError, match="bool tensor"):
        env.reset(options={"reset_mask": torch.tensor([0, 3, 1, 2])})
    for name in ("progress_weight", "off_road_penalty", "lap_bonus"):
        with pytest.raises(ValueError, match=name):
            CarRacingConfig(num_envs=4, **{name: float("nan")})
    with pytest.raises(ValueError, match=r"CarRacingConfig.device = 'mps'.*'cpu'"):
        CarRacingConfig(num_envs=4, device="mps")


@pytest.mark.cpu
def test_reset_idx_takes_an_empty_list_and_refuses_ids_out_of_range():
    env = make_env(4)
    env._reset_idx([])                                                # before the first reset: none, as documented
    env._reset_idx(torch.tensor([], dtype=torch.long))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(torch.zeros(4, 2))                                   # still no car placed
    env.reset(seed=2)
    before = env.course.lap_progress.clone(), env.x.clone()
    env._reset_idx([])
    assert torch.equal(env.course.lap_progress, before[0]) and torch.equal(env.x, before[1])
    for ids, bad in (([-1], "-1"), ([0, 4], "4"), (torch.tensor([2, 9]), "9")):
        with pytest.raises(ValueError, match=rf"env_ids must be in \[0, 4\), got {bad}"):
            env._reset_idx(ids)
    assert torch.equal(env.x, before[1])                              # nothing reset by a refused call


@pytest.mark.cpu
def test_a_closed_env_releases_its_course_and_refuses_every_call():
    env = make_env(4)
    env.reset(seed=1)
    env.step(torch.zeros(4, 2))
    env.close()
    assert env.closed and env.course is None                          # the tracks' memory is released
    for call in (lambda: env.step(torch.zeros(4, 2)), lambda: env.reset(), lambda: env.reset(seed=2),
                 lambda: env._reset_idx([0]), env.capture):
        with pytest.raises(gymnasium.error.ClosedEnvironmentError, match="closed"):
            call()
    env.close()                                                       # closing twice is harmless


@pytest.mark.cpu
def test_a_reset_that_changes_every_track_refuses_a_partial_mask():
    """A partial reset_mask on the first reset, or with a seed that rebuilds the course, would
    leave the other envs' cars (and their progress) on tracks that are no longer there: found by
    a fresh-user trial (after reset(seed=1, options={"reset_mask": m}) the unmasked cars were off
    the new roads, with rewards of -1.4 to -5.2 in the next step)."""
    part = torch.tensor([True, False, True, False])
    env = make_env(4)
    with pytest.raises(ValueError, match="reset_mask must select every env on the first reset"):
        env.reset(options={"reset_mask": part})
    with pytest.raises(RuntimeError, match="reset"):
        env.step(torch.zeros(4, 2))                       # refused before anything changed
    env.reset(seed=3, options={"reset_mask": torch.ones(4, dtype=torch.bool)})   # a full mask is a reset
    for _ in range(5):
        env.step(torch.tensor([[0.0, 1.0]]).repeat(4, 1))
    pos = env.position.clone()
    tracks = env.course.tracks.position.clone()
    with pytest.raises(ValueError, match="reset_mask must select every env with seed = 11"):
        env.reset(seed=11, options={"reset_mask": part})
    assert torch.equal(env.position, pos) and torch.equal(env.course.tracks.position, tracks)   # untouched
    # A partial reset without a seed (the masked envs' next tracks) is still allowed.
    obs, infos = env.reset(options={"reset_mask": part})
    assert infos["episode"].tolist() == [1, 0, 1, 0]


@pytest.mark.cpu
def test_config_refuses_num_envs_past_the_course_range_and_seeds_reset_would_refuse():
    """Found by a fresh-user trial: num_envs = 2**31 failed with numpy's MemoryError (200 GiB for
    the batched observation space) instead of naming num_envs, and seed = 1.5 (truncated to 1),
    True or 2**63 + 5 were taken by the config while reset(seed=config.seed) refused them."""
    with pytest.raises(ValueError, match=r"CarRacingConfig.num_envs = 2147483648: expected an int in \[1, 2\*\*30\]"):
        CarRacingConfig(num_envs=2**31)
    assert CarRacingConfig(num_envs=2**30).num_envs == 2**30   # the bound itself (nothing allocated yet)
    for seed in (1.5, True, -1, 2**63 + 5):
        with pytest.raises(ValueError, match=r"CarRacingConfig.seed = .*expected an int in \[0, 2\*\*63\)"):
            CarRacingConfig(num_envs=2, seed=seed)
    env = make_env(2, seed=2**63 - 1)                          # the largest seed, which reset takes too
    env.reset(seed=env.config.seed)
    with pytest.raises(TypeError, match="options must be a dict"):
        env.reset(options=[("reset_mask", None)])


@pytest.mark.cpu
def test_reset_idx_of_every_env_before_the_first_reset_places_the_cars_as_reset_does():
    """Its docstring says "call reset or step next"; a fresh-user trial found step refusing it
    ("call reset() first") after _reset_idx(None) on a new env. Now it equals reset() (the same
    tracks kept, the same spawns drawn) but for the observation, which the next step writes."""
    a, b = make_env(4), make_env(4)
    with pytest.raises(ValueError, match="cover every env before the first reset"):
        a._reset_idx([0, 2])
    a._reset_idx(None)
    b.reset()
    assert a.course.tracks.episode.tolist() == [0, 0, 0, 0]
    assert torch.equal(a.position, b.position) and torch.equal(a.yaw, b.yaw)
    act = torch.tensor([[0.1, 0.8]]).repeat(4, 1)
    for _ in range(3):
        oa, ra, *_ = a.step(act)
        ob, rb, *_ = b.step(act)
        assert torch.equal(oa, ob) and torch.equal(ra, rb)


@pytest.mark.cpu
def test_the_env_runs_under_a_float64_default_dtype():
    """torch.set_default_dtype(torch.float64) made reset fail in course.spawn (its output buffers
    took the default dtype); found by a fresh-user trial. Same episodes as under float32."""
    act = torch.tensor([[0.2, 0.7]], dtype=torch.float32).repeat(4, 1)
    ref = make_env(4)
    ref.reset(seed=5)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        env = make_env(4)
        env.reset(seed=5)
        for _ in range(20):
            obs, reward, *_ = env.step(act)
            obs_ref, reward_ref, *_ = ref.step(act)
            assert obs.dtype == torch.float32 and torch.equal(obs, obs_ref) and torch.equal(reward, reward_ref)
    finally:
        torch.set_default_dtype(old)


def test_a_gate_state_written_out_of_range_does_not_stop_the_other_cars(device):
    """A next_gate beyond the gates (or a num_gates of 0) written into the env's course: every car
    still steps (the progress cap's gather and division were out of range / NaN for all), the
    rewards stay finite, and the untouched cars match a twin env bit for bit."""
    env, twin = make_env(4, device), make_env(4, device)
    env.reset(seed=3)
    twin.reset(seed=3)
    act = torch.tensor([[0.1, 1.0]], device=device).repeat(4, 1)
    for _ in range(3):
        env.step(act)
        twin.step(act)
    env.course.progress.next_gate[1] = 10**6
    env.course.tracks.num_gates[2] = 0
    for _ in range(20):
        obs, reward, *_ = env.step(act)
        obs_t, reward_t, *_ = twin.step(act)
        assert torch.isfinite(reward).all() and torch.isfinite(obs).all()
        for e in (0, 3):
            assert torch.equal(obs[e], obs_t[e]) and torch.equal(reward[e], reward_t[e]), e
