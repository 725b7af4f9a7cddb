"""Times ``Course.regenerate()`` (every env) through the PyTorch extension, so that the Python
path's cost over the C++ rows of ``track_gen_bench`` is measured, not assumed. Each generator runs
as ``generator=<family>`` (the pipeline the course picks: a family's own for one family) and, with
``--weights``, also as ``generator_weights={<family>: 1.0}`` (the same tracks through
``elevated_family_pipeline``).

    python3 bench/python/course_regenerate_speed.py --envs 65536 1048576 --repeats 21 \
        --generators polar bezier hull voronoi checkpoint --weights

Prints one row per (envs, generator, selection): the pipeline, median, min and max of CUDA-event
times in milliseconds, and the valid tracks.
"""
import argparse
import statistics

import torch

from track_gen.course import Course
from track_gen.pipeline import presets


def time_regenerate(num_envs: int, generator: str, repeats: int, weights: bool = False, warmup: int = 3):
    select = {"generator_weights": {generator: 1.0}} if weights else {"generator": generator}
    course = Course.track(presets.track(num_envs=num_envs, device="cuda:0", seed=1, **select))
    for _ in range(warmup):
        course.regenerate()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        course.regenerate()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    from track_gen.course import status_bits  # noqa: PLC0415
    valid = int(((course.tracks.status & status_bits()["valid"]) != 0).sum())
    return course.pipeline, statistics.median(times), min(times), max(times), valid


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[65536, 1048576])
    parser.add_argument("--generators", nargs="+", default=["polar"])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--weights", action="store_true",
                        help="also time each family selected by a weight on it alone (the family pipeline)")
    args = parser.parse_args()
    print(f"{'envs':>9} {'generator':>10} {'selected by':>11} {'pipeline':>32} {'median ms':>10} {'min ms':>8} "
          f"{'max ms':>8} {'valid':>10}")
    for n in args.envs:
        for g in args.generators:
            for weights in ((False, True) if args.weights else (False,)):
                pipeline, med, lo, hi, valid = time_regenerate(n, g, args.repeats, weights)
                how = "weights" if weights else "generator"
                print(f"{n:>9} {g:>10} {how:>11} {pipeline:>32} {med:>10.3f} {lo:>8.3f} {hi:>8.3f} {valid:>10}",
                      flush=True)
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
