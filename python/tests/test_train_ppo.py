"""examples/train_ppo.py (PPO with rsl-rl-lib on CarRacingVecEnv) as a command: a tiny CPU run
(16 envs, 2 iterations of 8 steps, one held-out seed; about 15 s here, most of it imports)
writes its CSV/JSON logs, the checkpoint, the evaluation, the learning curves and the
trajectories picture (examples/plot_trajectories.py on the checkpoint it wrote)."""
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_ppo.py"
NEEDED = ("gymnasium", "rsl_rl", "tensordict", "tqdm", "matplotlib")


@pytest.mark.cpu
def test_the_ppo_example_runs_a_tiny_cpu_training(tmp_path):
    import importlib.util
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("TRACK_GEN_REQUIRE_CPU") == "1":   # CI installs them (scripts/python-cpu-check)
            pytest.fail(f"missing Python packages {missing}")
        pytest.skip(f"missing Python packages {missing}: pip install gymnasium rsl-rl-lib tqdm matplotlib")
    import track_gen
    here = str(Path(track_gen.__file__).resolve().parents[1])   # before what PYTHONPATH had (e.g. carried wheels)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])), MPLBACKEND="Agg")
    out, png = tmp_path / "run", tmp_path / "learning.png"
    cmd = [sys.executable, str(EXAMPLE), "--device", "cpu", "--envs", "16", "--iterations", "2",
           "--steps-per-env", "8", "--threads", "1", "--eval-envs", "8", "--eval-seeds", "5",
           "--max-episode-steps", "100", "--out", str(out), "--plot", str(png), "--quiet"]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rows = list(csv.DictReader(open(out / "progress.csv")))
    assert [int(r["env_steps"]) for r in rows] == [16 * 8, 2 * 16 * 8]
    assert all(float(r["steps_per_s"]) > 0 for r in rows)
    result = json.loads((out / "eval.json").read_text())
    for who in ("policy", "pure_pursuit"):
        assert result[who]["episodes"] == 8 and result[who]["seeds"] == [5]
        assert 0 <= result[who]["mean_laps"] <= 2 and 0 < result[who]["mean_length_steps"] <= 100
    assert (out / "model.pt").stat().st_size > 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The trajectories of the policy reloaded from model.pt, next to the learning curves.
    assert (tmp_path / "trajectories.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    panels = json.loads((tmp_path / "trajectories.json").read_text())["panels"]
    assert [(p["seed"], p["env"]) for p in panels] == [(5, e) for e in range(6)]
    for p in panels:
        assert 0 <= p["laps"] <= 2 and 1 <= p["steps"] <= 100 and p["finished"] == (p["laps"] >= 2)
        assert 0 <= p["off_road_s"] <= p["time_s"] and p["pure_pursuit"]["steps"] <= 100


@pytest.mark.cpu
def test_a_missing_package_stops_the_example_before_training_with_the_pip_command(tmp_path, monkeypatch):
    """Found by a fresh-user trial: without rsl-rl-lib the example failed with "No module named
    'rsl_rl'" (not the PyPI name), and a --plot run without matplotlib would have trained first and
    failed at the end. None in sys.modules makes an import of that name fail, as when missing."""
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    import train_ppo
    out = tmp_path / "run"
    monkeypatch.setitem(sys.modules, "rsl_rl", None)
    with pytest.raises(SystemExit, match=r"missing Python packages: rsl-rl-lib.*; pip install rsl-rl-lib"):
        train_ppo.main(["--device", "cpu", "--envs", "4", "--iterations", "1", "--out", str(out)])
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(SystemExit, match=r"pip install .*matplotlib"):
        train_ppo.main(["--device", "cpu", "--envs", "4", "--iterations", "1", "--out", str(out), "--plot"])
    assert not out.exists()          # stopped before anything was written


@pytest.mark.cpu
@pytest.mark.parametrize("args, message", [
    (["--eval-envs", "0"], "--eval-envs must be >= 1"),
    (["--eval-seeds", "5", "-1"], r"--eval-seeds must be in \[0, 2\*\*63\)"),
])
def test_evaluation_arguments_are_refused_before_the_training(args, message, monkeypatch, capsys):
    """Found by a fresh-user trial: --eval-envs 0 trained first, then failed in the evaluation
    (CarRacingConfig.num_envs = 0). --eval-envs 0 without eval seeds stays allowed."""
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    import train_ppo
    with pytest.raises(SystemExit) as exit_info:
        train_ppo.parse_args(["--device", "cpu"] + args)
    assert exit_info.value.code == 2
    assert re.search(message, capsys.readouterr().err)
    assert train_ppo.parse_args(["--eval-envs", "0", "--eval-seeds"]).eval_seeds == []
