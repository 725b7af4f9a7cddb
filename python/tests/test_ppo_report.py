"""scripts/ppo_report.py: the figures docs/envs.md quotes from a PPO run, checked against
hand-written progress rows and evaluation (no torch needed)."""
import importlib.util
import math
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ppo_report.py"
_spec = importlib.util.spec_from_file_location("ppo_report", _SCRIPT)
ppo_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ppo_report)


def _row(iteration, env_steps, laps, collect, learn):
    return {"iteration": str(iteration), "env_steps": str(env_steps), "mean_laps": str(laps),
            "collect_s": str(collect), "learn_s": str(learn)}


EVAL = {"train_s": 2.0, "env_steps": 3000,
        "policy": {"episodes": 8, "seeds": [5], "mean_laps": 1.5, "total_laps": 12, "finished_share": 0.25},
        "pure_pursuit": {"episodes": 8, "seeds": [5], "mean_laps": 1.0, "total_laps": 8, "finished_share": 0.0}}


def test_the_first_laps_are_those_of_the_first_row_with_laps_and_the_time_adds_up_to_it():
    rows = [_row(0, 1000, math.nan, 0.1, 0.2), _row(1, 2000, 0.0, 0.3, 0.1), _row(2, 3000, 0.5, 0.2, 0.4),
            _row(3, 4000, 2.0, 9.0, 9.0)]
    s = ppo_report.summarize(rows, EVAL)
    assert s["iterations"] == 4
    assert s["env_steps_per_s"] == pytest.approx(1500.0)
    assert s["first_laps"]["iteration"] == 2 and s["first_laps"]["env_steps"] == 3000
    assert s["first_laps"]["elapsed_s"] == pytest.approx(0.1 + 0.2 + 0.3 + 0.1 + 0.2 + 0.4)
    assert s["collect_s_median"] == pytest.approx(0.25) and s["learn_s_median"] == pytest.approx(0.3)
    text = ppo_report.markdown(s, "abc1234")
    assert "`abc1234`" in text
    assert "3,000 env steps in 2.0 s of training: 1,500 env steps/s" in text
    assert "first laps at iteration 2 (3,000 env steps, 1.3 s of rollout + update): 0.50 laps" in text
    assert "policy (mean action): 1.500 laps per episode, 12 laps in 8 episodes, 25.0 % finished" in text
    assert "pure pursuit: 1.000 laps per episode, 8 laps in 8 episodes, 0.0 % finished" in text


def test_a_run_without_laps_says_so_and_an_empty_log_is_refused():
    s = ppo_report.summarize([_row(0, 1000, math.nan, 0.1, 0.1), _row(1, 2000, 0.0, 0.1, 0.1)], {"train_s": 1.0, "env_steps": 2000})
    assert s["first_laps"] is None
    assert "no ended episode completed a lap" in ppo_report.markdown(s)
    with pytest.raises(ValueError, match="no rows"):
        ppo_report.summarize([], EVAL)
