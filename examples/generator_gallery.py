#!/usr/bin/env python3
"""The generator families side by side: one row per family (and a mixed batch), six tracks each,
drawn with their road borders and gates, titled with each track's compactness 4 pi A / P^2.

    PYTHONPATH=python python3 examples/generator_gallery.py --out docs/generators.png

Needs the compiled extension (``scripts/python-check --build-only`` or ``pip install ./python``)
and matplotlib; runs on the GPU when there is one (``--device cpu``: the host backend, the same
tracks up to float rounding). The tracks are the first six envs of a course of the ``track`` preset
with ``generator=<family>`` (the mixed row: ``generator_weights`` equal on every family)."""
import argparse
import math

import torch

from track_gen.course import Course
from track_gen.pipeline import presets

FAMILIES = ["polar", "bezier", "hull", "voronoi", "checkpoint", "repulsive"]


def compactness(xy):
    """4 pi A / P^2 of a closed polygon [N, 2] (shoelace area), in double."""
    x, y = xy[:, 0].double(), xy[:, 1].double()
    area = 0.5 * torch.abs(torch.sum(x * torch.roll(y, -1) - torch.roll(x, -1) * y))
    perimeter = torch.sum(torch.linalg.norm(torch.roll(xy.double(), -1, 0) - xy.double(), dim=1))
    return float(4 * math.pi * area / perimeter ** 2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="generators.png", help="PNG file to write")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tracks", type=int, default=6, help="tracks per row")
    parser.add_argument("--device", default="cuda:0" if torch.cuda.is_available() else "cpu",
                        help="torch device of the courses (default: cuda:0 when torch sees a GPU, else cpu)")
    args = parser.parse_args()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = FAMILIES + ["mix"]
    fig, axes = plt.subplots(len(rows), args.tracks, figsize=(2.2 * args.tracks, 2.3 * len(rows)))
    for r, name in enumerate(rows):
        options = ({"generator_weights": {f: 1.0 for f in FAMILIES}} if name == "mix" else {"generator": name})
        course = Course.track(presets.track(64, device=args.device, seed=args.seed, **options), checkpoint_spacing=2.0)
        if course.tracks.position.is_cuda:
            torch.cuda.synchronize()
        t = course.tracks
        for c in range(args.tracks):
            ax = axes[r][c]
            pos = t.position[c, :, :2].cpu()
            left, right = t.border_left[c, :, :2].cpu(), t.border_right[c, :, :2].cpu()
            ax.fill(torch.cat([left[:, 0], right.flip(0)[:, 0]]), torch.cat([left[:, 1], right.flip(0)[:, 1]]),
                    color="#d9d9d9", linewidth=0)
            for border in (left, right):
                closed = torch.cat([border, border[:1]])
                ax.plot(closed[:, 0], closed[:, 1], color="#333333", linewidth=0.6)
            g = int(t.num_gates[c])
            centre = t.gate_centre[c, :g, :2].cpu()
            normal = t.gate_normal[c, :g, :2].cpu()
            half = t.gate_half_width[c, :g].cpu().unsqueeze(1)
            side = torch.stack([-normal[:, 1], normal[:, 0]], dim=1) * half
            for k in range(g):
                a, b = centre[k] - side[k], centre[k] + side[k]
                ax.plot([a[0], b[0]], [a[1], b[1]], color="#d62728" if k == 0 else "#1f77b4",
                        linewidth=1.6 if k == 0 else 0.5)
            family = FAMILIES[int(t.family[c])] if int(t.family[c]) >= 0 else "user"
            label = f"{family}, " if name == "mix" else ""
            ax.set_title(f"{label}c = {compactness(pos):.2f}, L = {float(t.length[c]):.0f} m", fontsize=7)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
        axes[r][0].set_ylabel(name, fontsize=10)
    fig.suptitle("track_gen generator families (track preset, seed %d): borders, gates (red: start line), "
                 "compactness c = 4 pi A / P^2" % args.seed, fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.985))  # room for the title above the first row's
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
