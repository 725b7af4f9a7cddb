#!/usr/bin/env python3
"""PPO (rsl-rl-lib) on ``track_gen.envs.CarRacingVecEnv``: cars learn to race on generated tracks.

    python examples/train_ppo.py                                  # 4096 envs on cuda:0, one CUDA graph per step
    python examples/train_ppo.py --device cpu --envs 64 --iterations 5     # a smoke run on the CPU
    python examples/train_ppo.py ... --plot                       # also writes <out>/learning.png, trajectories.png

Needs torch, the compiled extension (``pip install --no-build-isolation ./python``) and, from
PyPI, ``rsl-rl-lib gymnasium tqdm`` (``matplotlib`` for ``--plot``). Writes to ``--out``
(default ``build-ppo/``): ``progress.csv`` and ``progress.json`` (per iteration: env steps so far,
episodes ended, mean progress [m] and laps per ended episode, mean return and length, losses,
steps per second; progress is what the reward credits, capped at the next gate in order, raw
progress the foot's uncapped), ``eval.json`` (the evaluation) and ``model.pt`` (rsl-rl's checkpoint; its
``infos`` hold what ``examples/plot_trajectories.py`` needs to rebuild the actor and the env).

Evaluation: the trained policy (its mean action, no sampling) drives one episode per env on
tracks of seeds the training never saw (``--eval-seeds``, each a fresh course of
``--eval-envs`` envs); reported are laps completed per episode, the share of episodes that
finished (``laps_to_finish`` laps), and, on the same tracks, a scripted pure-pursuit driver
for reference.

PPO: Schulman et al., "Proximal Policy Optimization Algorithms", arXiv:1707.06347 (2017), as
implemented by rsl-rl (Rudin et al., "Learning to Walk in Minutes Using Massively Parallel
Deep Reinforcement Learning", CoRL 2021).
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path

import torch



def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda:0", help="cuda:N or cpu (default cuda:0)")
    p.add_argument("--envs", type=int, default=4096, help="parallel environments (default 4096)")
    p.add_argument("--iterations", type=int, default=300, help="PPO iterations (default 300)")
    p.add_argument("--steps-per-env", type=int, default=24, help="rollout length per iteration (default 24)")
    p.add_argument("--seed", type=int, default=0, help="seed of the training tracks, spawns and the policy")
    p.add_argument("--laps", type=int, default=2, help="laps to finish an episode (default 2)")
    p.add_argument("--max-episode-steps", type=int, default=1000, help="truncation limit (default 1000 = 50 s)")
    p.add_argument("--hidden", type=int, nargs="+", default=[128, 128], help="MLP hidden sizes (default 128 128)")
    p.add_argument("--no-graph", action="store_true", help="CUDA: step eagerly instead of replaying a CUDA graph")
    p.add_argument("--eval-seeds", type=int, nargs="*", default=[1_000_001, 1_000_002, 1_000_003],
                   help="held-out track seeds of the evaluation (none: skip it)")
    p.add_argument("--eval-envs", type=int, default=256, help="envs (episodes) per evaluation seed (default 256)")
    p.add_argument("--out", default="build-ppo", help="output directory (default build-ppo)")
    p.add_argument("--plot", nargs="?", const="", default=None,
                   help="write the learning curves as a PNG (default path <out>/learning.png; the docs' figure is "
                        "docs/learning.png: name it to replace it), and the policy on held-out tracks as "
                        "trajectories.png (examples/plot_trajectories.py) in the same folder")
    p.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads (default 0: torch's choice; 1 is much faster on a busy machine)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.envs < 1 or args.iterations < 1 or args.steps_per_env < 1:
        p.error("--envs, --iterations and --steps-per-env must be >= 1")
    # The evaluation's arguments are used after the training: checked now, not when it is done.
    if args.eval_seeds and args.eval_envs < 1:
        p.error(f"--eval-envs must be >= 1 when --eval-seeds are given, got {args.eval_envs}")
    if any(not 0 <= s < 2**63 for s in args.eval_seeds or []):
        p.error(f"--eval-seeds must be in [0, 2**63), got {args.eval_seeds}")
    return args


class RslRlCarRacing:
    """CarRacingVecEnv behind rsl-rl's VecEnv interface (``get_observations``, ``step`` ->
    (obs TensorDict, rewards, dones, extras)). Observations are cloned: rsl-rl keeps the previous
    observation past the next step, and the env overwrites its buffers in place."""

    def __init__(self, env):
        from rsl_rl.env import VecEnv  # noqa: PLC0415 - needs rsl-rl-lib
        VecEnv.register(type(self))
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = 2
        self.max_episode_length = env.config.max_episode_steps
        self.device = env.device
        self.cfg = {"env": "CarRacingVecEnv"}
        self._obs = env.obs

    @property
    def episode_length_buf(self):
        return self.env.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value):
        self.env.episode_length_buf.copy_(value)

    def _td(self, obs):
        from tensordict import TensorDict  # noqa: PLC0415
        return TensorDict({"policy": obs.clone()}, batch_size=[self.num_envs])

    def get_observations(self):
        return self._td(self._obs)

    def step(self, actions):
        obs, reward, terminated, truncated, infos = self.env.step(actions)
        self._obs = obs
        extras = {"time_outs": truncated, "final_info": infos["final_info"], "done": infos["_final_obs"]}
        return self._td(obs), reward, infos["_final_obs"], extras


def train_cfg(args) -> dict:
    """rsl-rl's OnPolicyRunner configuration (its documented keys; values of the usual PPO
    settings for massively parallel envs)."""
    return {
        "num_steps_per_env": args.steps_per_env,
        "save_interval": 10**9,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {"class_name": "MLPModel", "hidden_dims": list(args.hidden), "activation": "elu",
                  "obs_normalization": True,
                  "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 0.5}},
        "critic": {"class_name": "MLPModel", "hidden_dims": list(args.hidden), "activation": "elu",
                   "obs_normalization": True},
        "algorithm": {"class_name": "PPO", "num_learning_epochs": 5, "num_mini_batches": 4, "clip_param": 0.2,
                      "gamma": 0.99, "lam": 0.95, "value_loss_coef": 1.0, "entropy_coef": 0.005,
                      "learning_rate": 1e-3, "max_grad_norm": 1.0, "schedule": "adaptive", "desired_kl": 0.01},
        "check_for_nan": False,
        "logger": "tensorboard",
    }


def car_racing_env(num_envs: int, seed: int, device: str, laps: int, max_episode_steps: int):
    """The env of training and evaluation: ``num_envs`` tracks of ``seed`` (episode 0 of each)."""
    from track_gen.envs import CarRacingConfig, CarRacingVecEnv  # noqa: PLC0415

    return CarRacingVecEnv(CarRacingConfig(num_envs=num_envs, device=device, seed=seed, laps_to_finish=laps,
                                           max_episode_steps=max_episode_steps))


def make_actor(actor_cfg: dict, observation_size: int, device: str):
    """rsl-rl's actor as ``OnPolicyRunner`` builds it (``PPO.construct_algorithm``: the class of
    ``actor_cfg["class_name"]``, observation group "policy", 2 actions), untrained."""
    from rsl_rl.utils import resolve_class  # noqa: PLC0415
    from tensordict import TensorDict  # noqa: PLC0415

    actor_class, kwargs = resolve_class(actor_cfg)
    example = TensorDict({"policy": torch.zeros(1, observation_size)}, batch_size=[1])
    return actor_class(example, {"actor": ["policy"]}, "actor", 2, **kwargs).to(device)


def mean_action(policy):
    """A driver ``obs [E, D] -> actions [E, 2]`` from rsl-rl's actor: its mean action (no sampling)."""
    from tensordict import TensorDict  # noqa: PLC0415

    def drive(obs):
        return policy(TensorDict({"policy": obs}, batch_size=[obs.shape[0]]))
    return drive


def load_policy(path, device: str):
    """The actor of a ``model.pt`` written by this script, in eval mode on ``device``, and the
    training settings saved with it (``infos``: ``actor_cfg``, ``observation_size``, ``laps``,
    ``max_episode_steps``, ``seed``, ``envs``, ``iterations``, ``device``). A checkpoint of an
    earlier version of this script (no infos) takes them from the ``progress.json`` beside it.
    Raises KeyError when neither has them (a checkpoint of another script)."""
    from track_gen.envs import CarRacingConfig  # noqa: PLC0415

    saved = torch.load(path, map_location=device, weights_only=False)
    infos = saved.get("infos") or {}
    progress = Path(path).with_name("progress.json")
    if "actor_cfg" not in infos and progress.is_file():
        a = json.loads(progress.read_text())["args"]
        infos = {"actor_cfg": train_cfg(argparse.Namespace(**a))["actor"],
                 "observation_size": CarRacingConfig().observation_size,   # the script never changed it
                 **{k: a[k] for k in ("laps", "max_episode_steps", "seed", "envs", "iterations", "device")}}
    if "actor_cfg" not in infos:
        raise KeyError(f"{path}: no 'actor_cfg' in the checkpoint's infos and no progress.json beside it "
                       "(not written by examples/train_ppo.py?)")
    actor = make_actor(infos["actor_cfg"], infos["observation_size"], device)
    actor.load_state_dict(saved["actor_state_dict"])
    actor.eval()
    return actor, infos


def evaluate(make_env, driver, seeds, num_envs) -> dict:
    """One episode per env on the tracks of each held-out seed (the first episode of every env,
    episode 0 of its track): laps completed, finished share, progress [m], length [steps]."""
    laps, progress, length, finished = [], [], [], []
    for seed in seeds:
        env = make_env(num_envs, seed)
        obs, _ = env.reset()                     # episode 0 of the seed's tracks
        ended = torch.zeros(num_envs, dtype=torch.bool, device=env.device)
        rows = {k: torch.zeros(num_envs, device=env.device) for k in ("laps", "progress", "length", "finished")}
        with torch.inference_mode():
            for _ in range(env.config.max_episode_steps + 1):
                obs, _, term, trunc, infos = env.step(driver(obs))
                new = infos["_final_obs"] & ~ended
                fi = infos["final_info"]
                for k, v in (("laps", fi["laps"]), ("progress", fi["progress"]), ("length", fi["length"]),
                             ("finished", fi["laps"] >= env.config.laps_to_finish)):
                    rows[k] = torch.where(new, v.float(), rows[k])
                ended |= new
                if bool(ended.all()):
                    break
        laps.append(rows["laps"].cpu())
        progress.append(rows["progress"].cpu())
        length.append(rows["length"].cpu())
        finished.append(rows["finished"].cpu())
    laps, progress, length, finished = (torch.cat(x) for x in (laps, progress, length, finished))
    return {"episodes": int(laps.numel()), "seeds": list(seeds), "mean_laps": float(laps.mean()),
            "total_laps": int(laps.sum()), "finished_share": float(finished.mean()),
            "mean_progress_m": float(progress.mean()), "mean_length_steps": float(length.mean())}


def plot(rows, path: Path, title: str) -> None:
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    # One point per iteration in which episodes ended (the mean over those episodes).
    ended = [r for r in rows if r["episodes"] > 0]
    steps = [r["env_steps"] for r in ended]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    axes[0].plot(steps, [r["mean_raw_progress_m"] for r in ended], ".--", lw=0.8, ms=3, color="0.6",
                 label="raw (uncapped)")
    axes[0].plot(steps, [r["mean_progress_m"] for r in ended], ".-", lw=1.2, ms=3, label="credited by the reward")
    axes[0].legend(fontsize=8)
    axes[1].plot(steps, [r["mean_laps"] for r in ended], ".-", lw=1.2, ms=3)
    for ax, label in ((axes[0], "progress per ended episode [m]"), (axes[1], "laps per ended episode")):
        ax.set_xlabel("env steps")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


# (module, PyPI package) that a run needs; matplotlib only with --plot.
_NEEDED = (("rsl_rl", "rsl-rl-lib"), ("tensordict", "rsl-rl-lib"), ("gymnasium", "gymnasium"), ("tqdm", "tqdm"))


def require_packages(plot: bool) -> None:
    """Exits with the pip command when a package the run needs is missing: before the training,
    not after it (matplotlib was imported by the plot at the end of a --plot run), and naming
    the PyPI package (the module rsl_rl comes from rsl-rl-lib)."""
    import importlib  # noqa: PLC0415

    missing = []
    for module, package in _NEEDED + ((("matplotlib", "matplotlib"),) if plot else ()):
        try:
            importlib.import_module(module)
        except ImportError:
            if package not in missing:
                missing.append(package)
    if missing:
        raise SystemExit(f"train_ppo.py: missing Python packages: {', '.join(missing)}; "
                         f"pip install {' '.join(missing)}")


def main(argv=None) -> int:
    args = parse_args(argv)
    require_packages(plot=args.plot is not None)
    from rsl_rl.runners import OnPolicyRunner  # noqa: PLC0415 - after argument errors
    from tqdm import tqdm  # noqa: PLC0415

    from track_gen.envs import pure_pursuit  # noqa: PLC0415

    torch.manual_seed(args.seed)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def make_env(num_envs, seed):
        return car_racing_env(num_envs, seed, args.device, args.laps, args.max_episode_steps)

    t0 = time.perf_counter()
    env = make_env(args.envs, args.seed)
    env.reset()
    graph = False
    if env.device.type == "cuda" and not args.no_graph:
        graph = env.capture()               # one eager warm-up step, then a CUDA graph per step
    wrapped = RslRlCarRacing(env)
    runner = OnPolicyRunner(wrapped, train_cfg(args), log_dir=None, device=args.device)
    alg = runner.alg
    setup_s = time.perf_counter() - t0
    print(f"train_ppo: {args.envs} envs on {args.device}, graph={graph}, setup {setup_s:.1f} s", flush=True)

    rows = []
    E, T = args.envs, args.steps_per_env
    csv_path = out / "progress.csv"
    fields = ["iteration", "env_steps", "episodes", "mean_progress_m", "mean_raw_progress_m", "mean_laps",
              "mean_return", "mean_length_steps", "mean_step_reward", "steps_per_s", "collect_s", "learn_s",
              "value_loss", "surrogate_loss", "entropy", "learning_rate", "action_std"]
    obs = wrapped.get_observations().to(args.device)
    alg.train_mode()
    dev = env.device
    bar = tqdm(range(args.iterations), disable=args.quiet, unit="it", dynamic_ncols=True)
    env_steps = 0
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for it in bar:
            # Episode statistics stay on the device during the rollout (no per-step sync).
            episodes = torch.zeros((), device=dev)
            sums = {k: torch.zeros((), device=dev) for k in ("progress", "raw_progress", "laps", "return", "length")}
            reward_sum = torch.zeros((), device=dev)
            start = time.perf_counter()
            with torch.inference_mode():
                for _ in range(T):
                    actions = alg.act(obs)
                    obs, rewards, dones, extras = wrapped.step(actions.to(dev))
                    alg.process_env_step(obs, rewards, dones, extras)
                    done = extras["done"]
                    fi = extras["final_info"]
                    episodes += done.sum()
                    for k in sums:
                        sums[k] += torch.where(done, fi[k].float(), 0.0).sum()
                    reward_sum += rewards.sum()
                alg.compute_returns(obs)
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            collect_s = time.perf_counter() - start
            start = time.perf_counter()
            losses = alg.update()
            learn_s = time.perf_counter() - start
            env_steps += E * T
            n = float(episodes)
            row = {"iteration": it, "env_steps": env_steps, "episodes": int(n),
                   "mean_progress_m": float(sums["progress"]) / n if n else math.nan,
                   "mean_raw_progress_m": float(sums["raw_progress"]) / n if n else math.nan,
                   "mean_laps": float(sums["laps"]) / n if n else math.nan,
                   "mean_return": float(sums["return"]) / n if n else math.nan,
                   "mean_length_steps": float(sums["length"]) / n if n else math.nan,
                   "mean_step_reward": float(reward_sum) / (E * T),
                   "steps_per_s": E * T / collect_s, "collect_s": collect_s, "learn_s": learn_s,
                   "value_loss": float(losses.get("value", losses.get("value_function", math.nan))),
                   "surrogate_loss": float(losses.get("surrogate", math.nan)),
                   "entropy": float(losses.get("entropy", math.nan)),
                   "learning_rate": float(alg.learning_rate),
                   "action_std": float(alg.get_policy().output_std.detach().mean())}
            rows.append(row)
            writer.writerow(row)
            f.flush()
            bar.set_postfix(progress=f"{row['mean_progress_m']:.1f}m", laps=f"{row['mean_laps']:.2f}",
                            sps=f"{row['steps_per_s']:.0f}")
            if args.quiet or not sys.stderr.isatty():
                print(f"it {it:4d} env_steps {env_steps:9d} episodes {int(n):6d} progress/ep "
                      f"{row['mean_progress_m']:7.2f} m laps/ep {row['mean_laps']:.3f} "
                      f"steps/s {row['steps_per_s']:9.0f} collect {collect_s:.2f} s learn {learn_s:.2f} s", flush=True)
    train_s = time.perf_counter() - t0
    (out / "progress.json").write_text(json.dumps({"args": vars(args), "graph": graph, "rows": rows,
                                                   "train_s": train_s}, indent=1))
    # What plot_trajectories.py needs to rebuild the actor and its env from the checkpoint alone.
    runner.save(str(out / "model.pt"), infos={
        "actor_cfg": train_cfg(args)["actor"], "observation_size": env.config.observation_size,
        "laps": args.laps, "max_episode_steps": args.max_episode_steps, "seed": args.seed, "envs": args.envs,
        "iterations": args.iterations, "device": args.device})

    result = {"train_s": train_s, "env_steps": env_steps}
    if args.eval_seeds:
        alg.eval_mode()
        learned = mean_action(alg.get_policy())
        cfg = env.config
        start = time.perf_counter()
        result["policy"] = evaluate(make_env, learned, args.eval_seeds, args.eval_envs)
        result["pure_pursuit"] = evaluate(make_env, lambda o: pure_pursuit(cfg, o), args.eval_seeds, args.eval_envs)
        result["eval_s"] = time.perf_counter() - start
        print(f"eval on held-out seeds {args.eval_seeds} ({result['policy']['episodes']} episodes): policy "
              f"{result['policy']['mean_laps']:.3f} laps/episode ({result['policy']['total_laps']} laps, "
              f"{100 * result['policy']['finished_share']:.1f} % finished); pure pursuit "
              f"{result['pure_pursuit']['mean_laps']:.3f} laps/episode", flush=True)
    (out / "eval.json").write_text(json.dumps(result, indent=1))
    if args.plot is not None:
        args.plot = args.plot or str(Path(args.out) / "learning.png")
        plot(rows, Path(args.plot), f"PPO on CarRacingVecEnv: {args.envs} envs on {args.device}, "
                                    f"{args.iterations} iterations x {T} steps")
        print(f"train_ppo: wrote {args.plot}")
        # The trained policy on held-out tracks, drawn from the checkpoint just written.
        import plot_trajectories  # noqa: PLC0415 - next to this script
        plot_trajectories.main(["--model", str(out / "model.pt"), "--out", str(Path(args.plot).with_name(
            "trajectories.png")), "--device", args.device, "--seeds", str((args.eval_seeds or [1_000_001])[0])])
    print(f"train_ppo: {args.iterations} iterations, {env_steps} env steps in {train_s:.1f} s; wrote {out}/",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
