#!/usr/bin/env python3
"""Draws a policy trained by ``examples/train_ppo.py`` driving on held-out tracks.

    python examples/plot_trajectories.py --model build-ppo/model.pt --out build-ppo/trajectories.png
    python examples/plot_trajectories.py --model build-ppo/model.pt --seeds 1000001 1000002 --envs 3

Rebuilds the actor from the checkpoint (``train_ppo.load_policy``: rsl-rl's actor as training
built it, the settings saved with it), makes a fresh ``CarRacingVecEnv`` of ``--envs`` tracks for
each of ``--seeds`` (track seeds the training never saw; training used ``--seed``, default 0),
runs one episode per env with the policy's mean action (no sampling) and records each car's
position and speed every step (:func:`record_episodes`). One panel per env: the road, its centre
line, the start line (gate 0) and the other gates, the car's path coloured by speed [m/s], its
spawn (circle) and end (cross); the title gives the seed and env, the laps completed, whether the
episode finished (``laps_to_finish`` laps) and how it ended otherwise, its duration and the time
spent off the road, all taken from the run. The scripted ``pure_pursuit`` driver's path from the
same spawn is drawn thin and grey for reference (``--no-reference`` leaves it out). Also writes
the numbers of every panel as JSON next to the picture (``.json`` instead of ``.png``).

Needs torch, the extension, rsl-rl-lib, gymnasium and matplotlib.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # train_ppo, when imported from elsewhere

import train_ppo  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="model.pt written by examples/train_ppo.py")
    p.add_argument("--out", default=None, help="PNG to write (default: trajectories.png next to the model)")
    p.add_argument("--seeds", type=int, nargs="+", default=[1_000_001],
                   help="held-out track seeds (default 1000001, the first evaluation seed of train_ppo.py)")
    p.add_argument("--envs", type=int, default=6, help="envs (panels) per seed (default 6)")
    p.add_argument("--columns", type=int, default=3, help="panels per row (default 3)")
    p.add_argument("--device", default="cpu", help="cpu or cuda:N (default cpu)")
    p.add_argument("--no-reference", action="store_true", help="leave out the pure-pursuit driver's paths")
    args = p.parse_args(argv)
    if args.envs < 1 or args.columns < 1:
        p.error("--envs and --columns must be >= 1")
    return args


def record_episodes(env, driver) -> dict:
    """Runs the first episode of every env of ``env`` (after ``env.reset()``) with ``driver``
    (``obs [E, D] -> actions [E, 2]``) and records it.

    The env resets a car within the step that ends its episode (same-step autoreset), so the
    position at the end of that step is not in the env afterwards: every step the car's state is
    also advanced here with the env's own physics (``bicycle_step`` on a copy, same action), and
    that copy is recorded for the cars whose episode ended in the step. The tracks are copied
    after the reset, before a reset replaces them.

    Returns a dict of CPU tensors (E envs, T = ``max_episode_steps``):
        ``xy`` float32 [E, T + 1, 2] [m]: positions in each track's frame, spawn first, NaN after
        the episode's end; ``speed`` float32 [E, T + 1] [m/s] likewise; ``length`` int64 [E]
        steps; ``laps`` int64 [E] (``final_info["laps"]``); ``terminated`` bool [E] (laps or
        off-road timeout; False: truncated at T steps); ``off_road_steps`` int64 [E] (steps
        ending off the road, ``infos["off_road"]``); and the tracks: ``centre``, ``left``,
        ``right`` float32 [E, N, 2], ``gate_centre``, ``gate_normal`` [E, G, 2],
        ``gate_half_width`` [E, G], ``num_gates`` int64 [E].
    """
    from track_gen.envs import bicycle_step  # noqa: PLC0415

    cfg = env.config
    E, T = env.num_envs, cfg.max_episode_steps
    obs, _ = env.reset()
    t = env.course.tracks
    rec = {"centre": t.position[..., :2].cpu().clone(), "left": t.border_left[..., :2].cpu().clone(),
           "right": t.border_right[..., :2].cpu().clone(), "gate_centre": t.gate_centre[..., :2].cpu().clone(),
           "gate_normal": t.gate_normal[..., :2].cpu().clone(), "gate_half_width": t.gate_half_width.cpu().clone(),
           "num_gates": t.num_gates.cpu().long()}
    dev = env.device
    xy = torch.full((E, T + 1, 2), math.nan, device=dev)
    speed = torch.full((E, T + 1), math.nan, device=dev)
    xy[:, 0, 0], xy[:, 0, 1], speed[:, 0] = env.x, env.y, env.speed
    active = torch.ones(E, dtype=torch.bool, device=dev)
    length = torch.zeros(E, dtype=torch.long, device=dev)
    laps = torch.zeros(E, dtype=torch.long, device=dev)
    terminated = torch.zeros(E, dtype=torch.bool, device=dev)
    off_road_steps = torch.zeros(E, dtype=torch.long, device=dev)
    with torch.inference_mode():
        for step in range(1, T + 2):    # every episode ends within T steps (truncation)
            actions = torch.as_tensor(driver(obs), device=dev).float()
            a = torch.nan_to_num(actions, nan=0.0).clamp(-1.0, 1.0)     # what the env does to them
            x, y, yaw, v = env.x.clone(), env.y.clone(), env.yaw.clone(), env.speed.clone()
            bicycle_step(x, y, yaw, v, a[:, 0], a[:, 1], cfg.car)
            obs, _, term, _, infos = env.step(actions)
            done = infos["_final_obs"]
            col = active.unsqueeze(1)
            here = torch.stack([torch.where(done, x, env.x), torch.where(done, y, env.y)], 1)
            xy[:, step] = torch.where(col, here, xy[:, step])
            speed[:, step] = torch.where(active, torch.where(done, v, env.speed), speed[:, step])
            off_road_steps += (infos["off_road"] & active).long()
            ended = done & active
            laps = torch.where(ended, infos["final_info"]["laps"].long(), laps)
            length = torch.where(ended, infos["final_info"]["length"].long(), length)
            terminated |= ended & term
            active &= ~done
            if not bool(active.any()):
                break
    rec.update(xy=xy.cpu(), speed=speed.cpu(), length=length.cpu(), laps=laps.cpu(), terminated=terminated.cpu(),
               off_road_steps=off_road_steps.cpu())
    return rec


def summaries(rec: dict, config) -> list:
    """Per env: laps, finished, how it ended, duration [s], off-road time [s], top speed [m/s]."""
    rows = []
    for e in range(rec["xy"].shape[0]):
        laps, n = int(rec["laps"][e]), int(rec["length"][e])
        finished = laps >= config.laps_to_finish
        ended = "finished" if finished else ("off road" if bool(rec["terminated"][e]) else "time limit")
        rows.append({"env": e, "laps": laps, "finished": finished, "ended": ended, "steps": n,
                     "time_s": n * config.car.dt, "off_road_s": int(rec["off_road_steps"][e]) * config.car.dt,
                     "max_speed_mps": float(rec["speed"][e, : n + 1].max())})
    return rows


def draw(panels, path: Path, config, title: str, columns: int = 3) -> None:
    """One panel per entry of ``panels`` (dicts: ``rec``, ``env``, ``seed``, ``summary`` and
    optionally ``reference``, a pure-pursuit record of the same env, and ``reference_summary``)."""
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.collections import LineCollection  # noqa: PLC0415
    from matplotlib.lines import Line2D  # noqa: PLC0415
    from mpl_toolkits.axes_grid1.anchored_artists import AnchoredSizeBar  # noqa: PLC0415
    from matplotlib.path import Path as MplPath  # noqa: PLC0415
    from matplotlib.patches import PathPatch  # noqa: PLC0415

    rows_n = math.ceil(len(panels) / columns)
    cols_n = min(columns, len(panels))
    fig, axes = plt.subplots(rows_n, cols_n, figsize=(3.6 * cols_n, 3.75 * rows_n + 0.8), squeeze=False)
    norm = plt.Normalize(0.0, config.car.max_speed)
    cmap = plt.get_cmap("turbo")     # its fast end (dark red) stands out on the grey road
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, p in zip(axes.flat, panels):
        rec, e, s = p["rec"], p["env"], p["summary"]
        left, right, centre = rec["left"][e].numpy(), rec["right"][e].numpy(), rec["centre"][e].numpy()
        # The road: the ring between the two borders (the right border reversed makes the hole).
        verts = list(left) + [left[0]] + list(right[::-1]) + [right[-1]]
        codes = ([MplPath.MOVETO] + [MplPath.LINETO] * (len(left) - 1) + [MplPath.CLOSEPOLY]) * 2
        ax.add_patch(PathPatch(MplPath(verts, codes), facecolor="0.88", edgecolor="none", zorder=0))
        for border in (left, right):
            ax.plot(*border[list(range(len(border))) + [0]].T, color="0.35", lw=0.7, zorder=1)
        ax.plot(*centre[list(range(len(centre))) + [0]].T, color="0.55", lw=0.5, ls=(0, (4, 3)), zorder=1)
        # Gates across the road: the start line (gate 0) bold, the others as faint ticks.
        g = int(rec["num_gates"][e])
        gc, gn, gw = rec["gate_centre"][e, :g].numpy(), rec["gate_normal"][e, :g].numpy(), \
            rec["gate_half_width"][e, :g].numpy()
        across = gn[:, ::-1] * [-1.0, 1.0] * gw[:, None]          # the normal turned 90 degrees, half-width long
        ticks = [[c - d, c + d] for c, d in zip(gc, across)]
        ax.add_collection(LineCollection(ticks[1:], colors="0.6", linewidths=0.4, zorder=1))
        ax.plot(*zip(*ticks[0]), color="k", lw=2.2, solid_capstyle="butt", zorder=3)
        if "reference" in p:
            ref = p["reference"]["xy"][e]
            # On top of the policy's path, thin and dashed: visible where the two paths coincide.
            ax.plot(*ref[~ref[:, 0].isnan()].numpy().T, color="0.2", lw=0.5, ls=(0, (3, 2)), zorder=4.5)
        trail = rec["xy"][e, : s["steps"] + 1].numpy()
        v = rec["speed"][e, : s["steps"] + 1].numpy()
        seg = LineCollection(list(zip(trail[:-1], trail[1:])), cmap=cmap, norm=norm, linewidths=1.4, zorder=4)
        seg.set_array(0.5 * (v[:-1] + v[1:]))
        ax.add_collection(seg)
        ax.plot(*trail[0], "o", ms=5, mfc="white", mec="k", zorder=5)
        ax.plot(*trail[-1], "x", ms=6, mew=1.6, color="k", zorder=5)
        ax.set_aspect("equal")
        ax.autoscale_view()
        ax.set_xticks([])
        ax.set_yticks([])
        ax.add_artist(AnchoredSizeBar(ax.transData, 5.0, "5 m", "lower left", frameon=False, label_top=True,
                                      pad=0.3, fontproperties={"size": 7}))
        head = f"seed {p['seed']} env {e}: {s['laps']} lap{'s' if s['laps'] != 1 else ''}, {s['ended']}"
        line2 = f"{s['time_s']:.1f} s, off road {s['off_road_s']:.2f} s"
        if "reference_summary" in p:
            n = p["reference_summary"]["laps"]
            line2 += f"; pure pursuit {n} lap{'s' if n != 1 else ''}"
        ax.set_title(f"{head}\n{line2}", fontsize=8.5)
    fig.suptitle(title, fontsize=10)
    bottom = 0.9 / fig.get_figheight()           # room for the legend and the colour bar [figure fraction]
    fig.tight_layout(rect=(0, bottom, 1, 1), h_pad=2.0)
    key = [Line2D([], [], ls="", marker="o", mfc="white", mec="k", label="spawn"),
           Line2D([], [], ls="", marker="x", mew=1.6, color="k", label="episode end"),
           Line2D([], [], color="k", lw=2.2, label="start line (gate 0)"),
           Line2D([], [], color="0.6", lw=0.6, label="gates"),
           Line2D([], [], color="0.2", lw=0.5, ls=(0, (3, 2)), label="pure pursuit (reference)")]
    fig.legend(handles=key, loc="lower left", bbox_to_anchor=(0.01, 0.0), ncol=3, fontsize=7.5, frameon=False)
    cax = fig.add_axes((0.62, 0.45 * bottom, 0.33, 0.2 * bottom))
    bar = fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), cax=cax, orientation="horizontal")
    bar.set_label("policy speed [m/s]", fontsize=8)
    bar.ax.tick_params(labelsize=7.5)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    args = parse_args(argv)
    from track_gen.envs import pure_pursuit  # noqa: PLC0415

    policy, infos = train_ppo.load_policy(args.model, args.device)
    drive = train_ppo.mean_action(policy)
    out = Path(args.out) if args.out else Path(args.model).with_name("trajectories.png")
    panels, numbers = [], []
    config = None
    for seed in args.seeds:
        # The same seed gives the same tracks and spawns: the reference drives the policy's env's twin.
        env = train_ppo.car_racing_env(args.envs, seed, args.device, infos["laps"], infos["max_episode_steps"])
        config = env.config
        rec = record_episodes(env, drive)
        sums = summaries(rec, config)
        ref = ref_sums = None
        if not args.no_reference:
            twin = train_ppo.car_racing_env(args.envs, seed, args.device, infos["laps"], infos["max_episode_steps"])
            ref = record_episodes(twin, lambda o: pure_pursuit(config, o))
            ref_sums = summaries(ref, config)
        for e in range(args.envs):
            panel = {"rec": rec, "env": e, "seed": seed, "summary": sums[e]}
            if ref is not None:
                panel.update(reference=ref, reference_summary=ref_sums[e])
            panels.append(panel)
            numbers.append({"seed": seed, **sums[e], "pure_pursuit": ref_sums[e] if ref_sums else None})
    title = (f"PPO policy (mean action) on held-out tracks, trained on {infos['envs']} envs x "
             f"{infos['iterations']} iterations ({infos['device']}); {infos['laps']} laps finish")
    draw(panels, out, config, title, args.columns)
    out.with_suffix(".json").write_text(json.dumps({"model": str(args.model), "panels": numbers}, indent=1))
    print(f"plot_trajectories: wrote {out} and {out.with_suffix('.json')}")
    for n in numbers:
        print(f"  seed {n['seed']} env {n['env']}: {n['laps']} laps, {n['ended']}, {n['time_s']:.1f} s, "
              f"off road {n['off_road_s']:.2f} s" + (f"; pure pursuit {n['pure_pursuit']['laps']} laps"
                                                     if n["pure_pursuit"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
