"""Times ``Course.regenerate()`` (every env) through the PyTorch extension, which builds tracks with
``presets::elevated_family_pipeline`` (the family dispatch + elevation stage), against the same
count of envs, so that the Python path's cost over the C++ ``track_pipeline`` rows of
``track_gen_bench`` is measured, not assumed.

    python3 bench/python/course_regenerate_speed.py --envs 65536 1048576 --repeats 21

Prints one row per (envs, generator): median, min and max of CUDA-event times in milliseconds.
"""
import argparse
import statistics

import torch

from track_gen.course import Course
from track_gen.pipeline import presets


def time_regenerate(num_envs: int, generator: str, repeats: int, warmup: int = 3):
    course = Course.track(presets.track(num_envs=num_envs, device="cuda:0", seed=1, generator=generator))
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
    return statistics.median(times), min(times), max(times), valid


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[65536, 1048576])
    parser.add_argument("--generators", nargs="+", default=["polar"])
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    print(f"{'envs':>9} {'generator':>10} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'valid':>10}")
    for n in args.envs:
        for g in args.generators:
            med, lo, hi, valid = time_regenerate(n, g, args.repeats)
            print(f"{n:>9} {g:>10} {med:>10.3f} {lo:>8.3f} {hi:>8.3f} {valid:>10}", flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
