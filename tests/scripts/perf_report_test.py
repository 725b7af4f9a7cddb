#!/usr/bin/env python3
"""scripts/perf-report's tables of issues 13-15 (generator families, gate courses, per-step
utilities, the replayed graph with boxes, and their targets) against small hand-written JSON
documents: every number checked here is computed in this file from the inputs written here, not
read back from the report's own code. Standard library only; run directly or through ctest
(scripts.perf_report)."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "scripts", "perf-report")
M = 1048576
K64 = 65536


def rows_doc(peer, rows, **extra):
    return {"peer": peer, "device": "hand-written", "command": f"{peer} (test)", "rows": rows, "errors": [], **extra}


def ours(scenario, e, median_ms, **fields):
    """One of our rows as track_gen_bench writes it (the rate from E and the median)."""
    row = {"scenario": scenario, "E": e, "N": 256, "repeats": 20, "median_ms": median_ms, "p10_ms": median_ms,
           "p90_ms": median_ms, "min_ms": median_ms, "max_ms": median_ms}
    row.update(fields)
    return row


def family(name, e, median_ms, valid=1.0, fallback=0.0, attempts=1.0):
    return ours(f"generate_{name}", e, median_ms, tracks_per_s=e / (median_ms * 1e-3), generator=name,
                stats={"valid_fraction": valid, "fallback_fraction": fallback, "mean_attempts": attempts,
                       "mean_gates": 8.0})


def seed(scenario, e, median_ms, **fields):
    row = {"scenario": scenario, "E": e, "N": 256, "repeats": 20, "median_ms": median_ms, "p10_ms": median_ms,
           "p90_ms": median_ms, "mode": "graph"}
    row.update(fields)
    return row


# The inputs, in ms (medians). Ours:
GEN_TRACK_65K = 1.0           # `generate` (track pipeline) at 65,536, the generation part
GEN_TRACK_65K_AGAIN = 2.0     # the same row repeated by the families part: must not be shown
BEZIER = {K64: 20.0, M: 350.0}
CHECKPOINT_65K = 160.0
# hull through its own pipeline (judged) and through the dispatch pipeline (shown, not judged:
# slow enough that it would be the worst family if it were)
HULL_OWN_65K, HULL_DISPATCH_65K = 30.0, 300.0
REPULSIVE_OWN_4K, SEED_REPULSIVE_4K = 200.0, 925.0
MIX_65K = 140.0
GATES_65K = 5.0
GATE_SEQUENCES_65K = 0.3
STEP_1M, BOXES_1M, COLLIDE_1M, LOCALIZE_1M, UTILITIES_1M = 0.25, 2.0, 0.5, 0.1, 0.2
SDF_QUERY_1M_R64 = 0.04
SDF_MASKED_US_R128 = 3.0      # us per baked env at 65,536
SDF_WHOLE_65K_R128 = 200.0    # the whole-batch bake at 65,536
PHYSICS, BASELINE_BOXES, FOUR_DONE_BOXES, BASELINE_PLAIN = 0.005, 0.2, 0.25, 0.015
# The seed library's:
SEED_BEZIER_65K, SEED_POLAR_65K, SEED_CHECKPOINT_65K, SEED_HULL_65K = 61.7, 49.5, 91.3, 66.2
SEED_GATES_65K = 400.0
SEED_COLLISION_1M, SEED_STEP_1M, SEED_PROGRESS_1M, SEED_LOCALIZE_1M = 6.47, 6.73, 0.26, 0.22
SEED_SDF_QUERY_1M_R32 = 0.27
SEED_SDF_BAKE_65K_R128 = 488.5
# Shape metrics (shape_metrics_report) and host_bench, both documents of peer "track_gen_host":
TRACK_COMPACTNESS, BEZIER_COMPACTNESS = 0.862, 0.61
HOST_RATE = 23006.0
BEZIER_RELAXED_65K = 9.5


def write_inputs(folder):
    os.makedirs(os.path.join(folder, "peers"))
    docs = {
        "track_gen_generate.json": rows_doc("track_gen", [
            ours("generate", K64, GEN_TRACK_65K, tracks_per_s=K64 / (GEN_TRACK_65K * 1e-3), bytes_written_per_track=0,
                 stats={"valid_fraction": 1.0})], gate_spacing_m=1),
        "track_gen_families.json": rows_doc("track_gen", [
            ours("generate", K64, GEN_TRACK_65K_AGAIN, tracks_per_s=K64 / (GEN_TRACK_65K_AGAIN * 1e-3),
                 bytes_written_per_track=0, stats={"valid_fraction": 1.0}),
            family("bezier", K64, BEZIER[K64], valid=0.999, fallback=0.001, attempts=1.05),
            family("checkpoint", K64, CHECKPOINT_65K), family("mix", K64, MIX_65K),
            family("hull", K64, HULL_DISPATCH_65K), family("hull_own", K64, HULL_OWN_65K),
            family("repulsive_own", 4096, REPULSIVE_OWN_4K), family("bezier_relaxed", K64, BEZIER_RELAXED_65K),
            family("gate_course", K64, GATES_65K), family("gate_sequence_bezier", K64, GATE_SEQUENCES_65K)],
            gate_spacing_m=1),
        "track_gen_families_1m.json": rows_doc("track_gen", [family("bezier", M, BEZIER[M])], gate_spacing_m=1),
        "track_gen_step.json": rows_doc("track_gen", [
            ours("step", M, STEP_1M, env_steps_per_s=M / (STEP_1M * 1e-3), bytes_per_env=212, sector_bytes_per_env=380,
                 window=8),
            ours("step_with_boxes", M, BOXES_1M, env_steps_per_s=M / (BOXES_1M * 1e-3))], gate_spacing_m=1),
        "track_gen_utilities.json": rows_doc("track_gen", [
            ours("localize", M, LOCALIZE_1M, window=8), ours("utilities", M, UTILITIES_1M, window=8),
            ours("collide_boxes", M, COLLIDE_1M, window=8)], gate_spacing_m=1),
        "track_gen_sdf.json": rows_doc("track_gen", [
            ours("sdf_query", M, SDF_QUERY_1M_R64, resolution=64),
            ours("sdf_bake", K64, SDF_WHOLE_65K_R128, resolution=128, baked_envs=K64,
                 us_per_baked_env=SDF_WHOLE_65K_R128 * 1e3 / K64),
            ours("sdf_bake_masked", K64, SDF_MASKED_US_R128 * 4096 * 1e-3, resolution=128, baked_envs=4096,
                 us_per_baked_env=SDF_MASKED_US_R128)], gate_spacing_m=1),
        "operating_point.json": {"label": "operating_point", "command": "graph_replay_bench (test)", "replays": 1000,
                                 "rows": [{"envs": 4096, "skip_policy": "baseline", "done_envs": 0,
                                           "ms": {"median": BASELINE_PLAIN, "p10": 0, "p90": 0},
                                           "over_baseline_us": 0}]},
        "operating_point_boxes.json": {
            "label": "operating_point_boxes", "command": "graph_replay_bench --boxes (test)", "replays": 1000,
            "box_half_extents_m": [0.2, 0.1],
            "rows": [{"envs": 4096, "skip_policy": "baseline", "done_envs": 0,
                      "ms": {"median": BASELINE_BOXES, "p10": 0, "p90": 0}},
                     {"envs": 4096, "skip_policy": "physics_only", "done_envs": 0,
                      "ms": {"median": PHYSICS, "p10": 0, "p90": 0}},
                     {"envs": 4096, "skip_policy": "conditional", "done_envs": 4,
                      "ms": {"median": FOUR_DONE_BOXES, "p10": 0, "p90": 0}}]},
        "shape_metrics.json": {
            "peer": "track_gen_host", "command": "shape_metrics_report (test)", "seed": 0,
            "rows": [{"preset": "track", "E": 512, "yield": 1.0,
                      "compactness": {"median": TRACK_COMPACTNESS, "p10": 0.79, "p90": 0.92}},
                     {"preset": "bezier", "E": 512, "yield": 0.998,
                      "compactness": {"median": BEZIER_COMPACTNESS, "p10": 0.5, "p90": 0.7},
                      "straight_fraction": {"median": 0.3}, "mean_hairpins": 1.5}]},
        "track_gen_host.json": {
            "peer": "track_gen_host", "device": "host", "command": "host_bench (test)",
            "rows": [{"scenario": "generate", "E": 256, "N": 256, "repeats": 20, "median_ms": 11.1, "p10_ms": 11.0,
                      "p90_ms": 11.2, "tracks_per_s_per_core": HOST_RATE}]},
        os.path.join("peers", "trackgen.json"): {
            **rows_doc("trackgen", [
                seed("generate", K64, SEED_BEZIER_65K, generator="bezier", tracks_per_s=K64 / (SEED_BEZIER_65K * 1e-3),
                     stats={"valid_fraction": 0.998}),
                seed("generate", K64, SEED_POLAR_65K, generator="polar", tracks_per_s=K64 / (SEED_POLAR_65K * 1e-3)),
                seed("generate", K64, SEED_CHECKPOINT_65K, generator="checkpoint",
                     tracks_per_s=K64 / (SEED_CHECKPOINT_65K * 1e-3)),
                seed("generate", K64, SEED_HULL_65K, generator="hull", tracks_per_s=K64 / (SEED_HULL_65K * 1e-3)),
                seed("generate", 4096, SEED_REPULSIVE_4K, generator="repulsive",
                     tracks_per_s=4096 / (SEED_REPULSIVE_4K * 1e-3)),
                seed("gates", K64, SEED_GATES_65K, generator="bezier", courses_per_s=K64 / (SEED_GATES_65K * 1e-3),
                     stats={"valid_fraction": 1.0, "mean_gates": 9.0}),
                seed("step", M, SEED_STEP_1M, op="step", collision="segments", tiled_from=262144),
                seed("progress_update", M, SEED_PROGRESS_1M, op="progress.update", collision=None,
                     env_steps_per_s=M / (SEED_PROGRESS_1M * 1e-3)),
                seed("collision", M, SEED_COLLISION_1M, op="collision.query", collision="segments"),
                seed("collision", M, SEED_SDF_QUERY_1M_R32, op="collision.query", collision="sdf32"),
                seed("localize", M, SEED_LOCALIZE_1M, op="localize_warm", collision=None),
                seed("sdf_bake", K64, SEED_SDF_BAKE_65K_R128, op="sdf_bake", collision="sdf128")]),
            "errors": [{"scenario": "generate", "E": K64, "N": None,
                        "message": "repulsive: E > --repulsive-max-envs 4096 (eager only)"}]},
    }
    for name, doc in docs.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            json.dump(doc, f)


def number(cell):
    """The first number of a table cell ('3.08x', '1.06e6', '20 (20-20)', '1,062,172')."""
    m = re.search(r"-?[\d,]*\.?\d+(?:e-?\d+)?", cell.replace("e+", "e"))
    if not m:
        raise AssertionError(f"no number in {cell!r}")
    return float(m.group(0).replace(",", ""))


def factor(cell, word):
    """The factor of 'met (margin f)' or 'missed (short by a factor f)' after `word` in a cell."""
    m = re.search(re.escape(word) + r"[^(]*\((?:margin|short by a factor) ([\d.]+)\)", cell)
    if not m:
        raise AssertionError(f"no {word!r} verdict in {cell!r}")
    return float(m.group(1))


class PerfReportIssueTables(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        folder = os.path.join(cls.tmp.name, "out")
        write_inputs(folder)
        md = os.path.join(cls.tmp.name, "performance.md")
        done = subprocess.run([sys.executable, REPORT, "--in", folder, "--md", md, "--png",
                               os.path.join(cls.tmp.name, "p.png"), "--notes", "", "--commit", "test"],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise AssertionError(f"perf-report failed: {done.stderr}")
        with open(md, encoding="utf-8") as f:
            cls.text = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def section(self, title):
        start = self.text.index(title)
        end = self.text.find("\n## ", start + 1)
        return self.text[start:end if end > 0 else None]

    def row(self, section, *first_cells, having=""):
        """The cells of the table row of `section` that starts with `first_cells` (and contains `having`)."""
        prefix = "| " + " | ".join(first_cells) + " |"
        lines = [l for l in self.section(section).splitlines() if l.startswith(prefix) and having in l]
        self.assertEqual(len(lines), 1, f"rows starting {prefix!r} in {section!r}: {lines}")
        return [c.strip() for c in lines[0].strip().strip("|").split("|")]

    def assertClose(self, got, want, rel=0.006):
        self.assertLessEqual(abs(got - want), rel * abs(want), f"{got} != {want}")

    def test_families_ratio_and_targets(self):
        sec = "## Generator families"
        c = self.row(sec, "bezier", "65,536")
        want_ours, want_seed = K64 / (BEZIER[K64] * 1e-3), K64 / (SEED_BEZIER_65K * 1e-3)
        self.assertClose(number(c[2]), BEZIER[K64])
        self.assertClose(number(c[3]), want_ours)
        self.assertClose(number(c[4]), 99.9)       # valid, %
        self.assertClose(number(c[5]), 0.1)        # fallback, %
        self.assertClose(number(c[6]), 1.05)
        self.assertClose(number(c[7]), SEED_BEZIER_65K)
        self.assertClose(number(c[8]), want_seed)
        self.assertClose(number(c[11]), want_ours / want_seed)
        self.assertIn("20x", c[12])
        self.assertTrue(c[13].startswith("missed"))
        self.assertClose(factor(c[13], ""), 20 / (want_ours / want_seed))
        # The track pipeline's row is the generation part's (1 ms), not the families part's repeat.
        c = self.row(sec, "polar (track pipeline)", "65,536")
        self.assertClose(number(c[2]), GEN_TRACK_65K)
        self.assertClose(number(c[11]), SEED_POLAR_65K / GEN_TRACK_65K)
        self.assertTrue(c[13].startswith("met"))
        # At 1M: the absolute target, 1e7 tracks/s.
        c = self.row(sec, "bezier", "1,048,576")
        self.assertClose(factor(c[13], ""), 1e7 / (M / (BEZIER[M] * 1e-3)))
        self.assertIn("no row", c[7])
        # A family with its own pipeline's row is judged on it; the dispatch row beside it is not.
        c = self.row(sec, "hull", "65,536")
        self.assertClose(number(c[2]), HULL_OWN_65K)
        self.assertClose(number(c[11]), SEED_HULL_65K / HULL_OWN_65K)
        self.assertIn("20x", c[12])
        c = self.row(sec, "hull (family pipeline)", "65,536")
        self.assertClose(number(c[2]), HULL_DISPATCH_65K)
        self.assertEqual((c[12], c[13]), ("-", "-"))
        # bezier has no own row in this run: judged on the dispatch row (above), none shown beside it.
        self.assertNotIn("| bezier (family pipeline) |", self.section(sec))
        # No seed counterpart of a mix. The repulsive family is judged at 4,096, where the seed
        # library runs it (100x asked); at 65,536 neither has a row, the seed's error quoted.
        self.assertIn("no mix", self.row(sec, "mix (equal weights)", "65,536")[7])
        c = self.row(sec, "repulsive", "4,096")
        self.assertClose(number(c[2]), REPULSIVE_OWN_4K)
        self.assertClose(number(c[11]), SEED_REPULSIVE_4K / REPULSIVE_OWN_4K)
        self.assertIn("100x", c[12])
        self.assertIn("missed", c[13])
        c = self.row(sec, "repulsive", "65,536")
        self.assertIn("no row in this run", c[2])
        self.assertIn("--repulsive-max-envs", c[7])
        self.assertEqual((c[12], c[13]), ("-", "-"))
        # With the relaxation on: shown beside the seed library's row, not judged; only where the
        # run has the row.
        c = self.row(sec, "bezier (relaxation on)", "65,536")
        self.assertClose(number(c[2]), BEZIER_RELAXED_65K)
        self.assertClose(number(c[7]), SEED_BEZIER_65K)
        self.assertClose(number(c[11]), SEED_BEZIER_65K / BEZIER_RELAXED_65K)
        self.assertEqual((c[12], c[13]), ("-", "-"))
        self.assertNotIn("| hull (relaxation on) |", self.section(sec))

    def test_shape_metrics(self):
        sec = "## Generator families"
        c = self.row(sec, "polar (`track` preset)")
        self.assertClose(number(c[3]), TRACK_COMPACTNESS)
        self.assertTrue(c[10].startswith("missed"))      # the track preset's target is 0.70
        c = self.row(sec, "bezier", "512")
        self.assertClose(number(c[3]), BEZIER_COMPACTNESS)
        self.assertClose(number(c[4]), 0.42)              # the seed's figure, quoted by issue 13
        self.assertClose(number(c[6]), 1.5)
        self.assertTrue(c[10].startswith("met"))
        self.assertIn("no row", self.row(sec, "hull", "-")[2])
        # host_bench's document stays the host backend's (the shapes document has the same peer).
        c = self.row("## One core", "track_gen_host", "generate")
        self.assertClose(number(c[4]), HOST_RATE)

    def test_gate_courses(self):
        # The judged row: gates alone from bezier corners, against the seed's GateGenerator.
        c = self.row("## Gate courses", "65,536", "gates alone, bezier corners (gate_sequence_bezier)")
        speedup = SEED_GATES_65K / GATE_SEQUENCES_65K
        self.assertClose(number(c[3]), K64 / (GATE_SEQUENCES_65K * 1e-3))
        self.assertClose(number(c[7]), K64 / (SEED_GATES_65K * 1e-3))
        self.assertClose(number(c[11]), speedup)
        self.assertIn("met", c[13])
        self.assertClose(factor(c[13], ""), speedup / 20)
        # Whole gate courses are shown beside it, not judged.
        c = self.row("## Gate courses", "65,536", "gate courses with course line (gate_course)")
        self.assertClose(number(c[3]), K64 / (GATES_65K * 1e-3))
        self.assertClose(number(c[11]), SEED_GATES_65K / GATES_65K)
        self.assertEqual(c[12:], ["-", "-"])

    def test_utilities(self):
        sec = "## Per-step utilities"
        c = self.row(sec, "exact box collision alone", "1,048,576")
        self.assertClose(number(c[3]), COLLIDE_1M)
        self.assertClose(number(c[5]), SEED_COLLISION_1M)
        self.assertClose(number(c[6]), SEED_COLLISION_1M / COLLIDE_1M)
        self.assertClose(factor(c[8], "time"), COLLIDE_1M / 0.15)
        self.assertClose(factor(c[8], "speed-up"), 40 / (SEED_COLLISION_1M / COLLIDE_1M))
        c = self.row(sec, "exact box collision inside the step", "1,048,576")
        self.assertClose(number(c[3]), BOXES_1M - STEP_1M)
        self.assertClose(number(c[6]), SEED_COLLISION_1M / (BOXES_1M - STEP_1M))
        c = self.row(sec, "step + exact box collision", "1,048,576")
        self.assertClose(number(c[6]), SEED_STEP_1M / BOXES_1M)
        c = self.row(sec, "progress step", "1,048,576")
        self.assertClose(number(c[6]), SEED_PROGRESS_1M / STEP_1M)
        c = self.row(sec, "localize, warm", "1,048,576")
        self.assertClose(number(c[6]), SEED_LOCALIZE_1M / LOCALIZE_1M)
        c = self.row(sec, "localize + observations + rewards", "1,048,576")
        self.assertIn("no such composite", c[4])
        self.assertTrue(c[8].startswith("met"))
        self.assertClose(factor(c[8], ""), STEP_1M / UTILITIES_1M)
        c = self.row(sec, "SDF query, R = 64", "1,048,576")
        self.assertClose(number(c[6]), SEED_SDF_QUERY_1M_R32 / SDF_QUERY_1M_R64)
        self.assertClose(factor(c[8], ""), 0.05 / SDF_QUERY_1M_R64)
        c = self.row(sec, "SDF bake per env, R = 128", "65,536", having="sdf_bake_masked")
        seed_us = SEED_SDF_BAKE_65K_R128 * 1e3 / K64
        self.assertClose(number(c[6]), seed_us / SDF_MASKED_US_R128)
        self.assertClose(factor(c[8], ""), 50 / (seed_us / SDF_MASKED_US_R128))
        # The whole-batch bake: the same per-env comparison, no target (the target is the masked bake's).
        c = self.row(sec, "SDF bake per env, R = 128", "65,536", having="whole batch): 3.05")
        self.assertClose(number(c[6]), SEED_SDF_BAKE_65K_R128 / SDF_WHOLE_65K_R128)
        self.assertEqual(c[8], "-")

    def test_boxes_replay(self):
        sec = "## Replayed graph with box collision"
        self.assertClose(number(self.row(sec, "4,096", "physics + step + collision")[3]), BASELINE_BOXES)
        self.assertClose(number(self.row(sec, "4,096", "physics + step + collision")[4]),
                         (BASELINE_BOXES - PHYSICS) * 1e3)
        self.assertClose(number(self.row(sec, "4,096", "+ regenerate(mask), skip::conditional")[4]),
                         (FOUR_DONE_BOXES - PHYSICS) * 1e3)
        c = [l for l in self.section(sec).splitlines() if "no boxes" in l]
        self.assertEqual(len(c), 1)
        self.assertClose(number(c[0].split("|")[5]), (BASELINE_PLAIN - PHYSICS) * 1e3)

    def test_step_beside_the_seed_progress_update(self):
        # The seed's column is progress.update() (0.26 ms), not its Course.step() (6.73 ms, with collision).
        sec = "## Step: progress of one agent per env"
        c = self.row(sec, "1,048,576", "1")
        self.assertIn("trackgen progress.update() env-steps/s", self.section(sec))
        self.assertClose(number(c[5]), M / (SEED_PROGRESS_1M * 1e-3), rel=0.01)
        self.assertClose(number(c[6]), SEED_PROGRESS_1M / STEP_1M, rel=0.01)
        line = next(l for l in self.section("## Targets").splitlines() if "progress.update() at every E" in l)
        self.assertIn("**met**", line)
        self.assertClose(number(line.split("progress.update()'s: ")[1]), SEED_PROGRESS_1M / STEP_1M, rel=0.01)

    def test_targets_table(self):
        sec = "## Targets"
        text = self.section(sec)
        line = next(l for l in text.splitlines() if "every generator family at E = 65,536" in l)
        # The worst at 65,536: checkpoint, 91.3 / 160 of the seed's rate, against 20 (hull's dispatch
        # row, 66.2 / 300, is not judged: its own pipeline's row is).
        self.assertIn("missed", line)
        self.assertIn("checkpoint", line)
        self.assertClose(number(line.split("ours / seed: ")[1]), SEED_CHECKPOINT_65K / CHECKPOINT_65K, rel=0.01)
        line = next(l for l in text.splitlines() if "localizer + observations + rewards" in l)
        self.assertIn("**met**", line)
        self.assertClose(number(line.split("step ms: ")[1]), UTILITIES_1M / STEP_1M, rel=0.01)
        line = next(l for l in text.splitlines() if "SDF query at E = 1,048,576" in l)
        self.assertIn("**met**", line)


if __name__ == "__main__":
    unittest.main()
