"""examples/plot_trajectories.py's recorder against the env itself: a twin env (same seed, so the
same tracks and spawns) whose episodes never end (no lap limit, no off-road timeout, a longer
step limit) is driven by the same driver; up to each recorded episode's end its cars must be
where the recorder put them, including the last step, which the recorder computes itself
because the env resets a car within the step that ends its episode. CPU, a few seconds."""
import dataclasses
import importlib.util
import math
import os
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NEEDED = ("gymnasium", "rsl_rl", "tensordict", "matplotlib")


def _modules():
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("TRACK_GEN_REQUIRE_CPU") == "1":   # CI installs them (scripts/python-cpu-check)
            pytest.fail(f"missing Python packages {missing}")
        pytest.skip(f"missing Python packages {missing}: pip install gymnasium rsl-rl-lib matplotlib")
    sys.path.insert(0, str(EXAMPLES))
    import plot_trajectories
    import train_ppo
    return plot_trajectories, train_ppo


def _untrained_actor(train_ppo, observation_size):
    import torch
    torch.manual_seed(3)
    cfg = train_ppo.train_cfg(train_ppo.parse_args(["--device", "cpu"]))
    return train_ppo.make_actor(cfg["actor"], observation_size, "cpu").eval()


@pytest.mark.cpu
@pytest.mark.parametrize("who", ["untrained_actor", "pure_pursuit"])
def test_recorded_episodes_follow_the_env(who):
    import torch
    plot_trajectories, train_ppo = _modules()
    from track_gen.envs import CarRacingVecEnv, pure_pursuit

    # The untrained actor leaves the road (off-road terminations; the envs that end early restart
    # and must not be counted on); pure pursuit at 1.5 m/s completes a lap of these 10-60 m
    # tracks within 40 s (finishes).
    E, T, laps = (6, 200, 2) if who == "untrained_actor" else (4, 800, 1)
    env = train_ppo.car_racing_env(E, 11, "cpu", laps, T)
    cfg = env.config
    if who == "untrained_actor":
        driver = train_ppo.mean_action(_untrained_actor(train_ppo, cfg.observation_size))
    else:
        driver = lambda o: pure_pursuit(cfg, o)  # noqa: E731
    rec = plot_trajectories.record_episodes(env, driver)
    length, xy = rec["length"], rec["xy"]
    assert rec["xy"].shape == (E, T + 1, 2) and bool((length >= 1).all()) and bool((length <= T).all())

    twin = CarRacingVecEnv(dataclasses.replace(cfg, laps_to_finish=1000, off_road_timeout=1e9,
                                               max_episode_steps=T + 10))
    obs, _ = twin.reset()
    assert torch.equal(xy[:, 0], torch.stack([twin.x, twin.y], 1))               # the spawn
    assert torch.equal(rec["centre"], twin.course.tracks.position[..., :2])       # the tracks drawn
    off_road = torch.zeros(E, dtype=torch.long)
    with torch.inference_mode():
        for k in range(1, int(length.max()) + 1):
            obs, _, _, _, infos = twin.step(driver(obs))
            live = k <= length
            off_road += (infos["off_road"] & live).long()
            here = torch.stack([twin.x, twin.y], 1)
            torch.testing.assert_close(xy[live, k], here[live], rtol=0, atol=1e-6)
            torch.testing.assert_close(rec["speed"][live, k], twin.speed[live], rtol=0, atol=1e-6)
            for e in torch.nonzero(k == length).flatten().tolist():   # the episode's last step
                assert int(rec["laps"][e]) == int(infos["laps"][e])
                if int(rec["laps"][e]) >= laps:
                    assert bool(rec["terminated"][e])
                elif bool(rec["terminated"][e]):
                    assert float(twin.off_road_time[e]) > cfg.off_road_timeout   # the off-road timeout
                else:
                    assert k == T                                               # truncated at the limit
    assert torch.equal(off_road, rec["off_road_steps"])
    # Steps are at most max_speed * dt long; nothing is recorded after an episode's end.
    steps = torch.arange(T + 1).unsqueeze(0)
    inside = steps <= length.unsqueeze(1)
    assert bool(torch.isfinite(xy[inside]).all()) and bool(torch.isnan(xy[~inside]).all())
    hop = (xy[:, 1:] - xy[:, :-1]).norm(dim=-1)[inside[:, 1:]]
    assert float(hop.max()) <= cfg.car.max_speed * cfg.car.dt + 1e-5
    rows = plot_trajectories.summaries(rec, cfg)
    assert [r["laps"] for r in rows] == rec["laps"].tolist()
    assert all(math.isclose(r["time_s"], int(n) * cfg.car.dt) for r, n in zip(rows, length))
    # The case covers what it is meant to (not an empty check).
    if who == "pure_pursuit":
        assert any(r["ended"] == "finished" for r in rows)
    else:
        assert any(r["ended"] == "off road" for r in rows)


@pytest.mark.cpu
@pytest.mark.parametrize("with_infos", [True, False])
def test_load_policy_rebuilds_the_saved_actor(tmp_path, with_infos):
    """model.pt as train_ppo.py writes it (rsl-rl's actor_state_dict and infos), or as its earlier
    version did (no infos: the settings come from progress.json beside it): the rebuilt actor's
    mean actions equal the saved actor's."""
    import json

    import torch
    _, train_ppo = _modules()
    from track_gen.envs import CarRacingConfig

    args = train_ppo.parse_args(["--device", "cpu", "--hidden", "32", "16", "--laps", "1"])
    D = CarRacingConfig().observation_size
    actor = train_ppo.make_actor(train_ppo.train_cfg(args)["actor"], D, "cpu")
    with torch.no_grad():   # non-trivial normaliser statistics (updated in train mode only): loaded too
        actor.train()
        actor.update_normalization({"policy": torch.randn(64, D) * 3 + 1})
        actor.eval()
    assert int(actor.state_dict()["obs_normalizer.count"]) == 64
    infos = {"actor_cfg": train_ppo.train_cfg(args)["actor"], "observation_size": D, "laps": 1,
             "max_episode_steps": 1000, "seed": 0, "envs": 4096, "iterations": 300, "device": "cpu"}
    torch.save({"actor_state_dict": actor.state_dict(), "infos": infos if with_infos else None},
               tmp_path / "model.pt")
    if not with_infos:
        (tmp_path / "progress.json").write_text(json.dumps({"args": vars(args)}))
    loaded, got = train_ppo.load_policy(tmp_path / "model.pt", "cpu")
    assert got["laps"] == 1 and got["observation_size"] == D and got["actor_cfg"]["hidden_dims"] == [32, 16]
    obs = torch.randn(10, D)
    with torch.inference_mode():
        torch.testing.assert_close(train_ppo.mean_action(loaded)(obs), train_ppo.mean_action(actor)(obs),
                                   rtol=0, atol=0)
        assert not torch.equal(train_ppo.mean_action(loaded)(obs), train_ppo.mean_action(
            train_ppo.make_actor(infos["actor_cfg"], D, "cpu").eval())(obs))   # not any actor of that shape
