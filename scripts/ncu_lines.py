#!/usr/bin/env python3
"""Where a kernel spends its instructions and warp samples, per source file and line.

Usage: python3 scripts/ncu_lines.py REPORT.ncu-rep [TOP]

Sums the per-PC metrics of an Nsight Compute report's first kernel (the SourceCounters
section: `inst_executed`, `smsp__pcsamp_sample_count`) over the CUDA source line each PC comes
from, with Nsight Compute's Python report interface (`ncu_report`, in its extras/python
folder). `ncu --page source --print-source cuda --csv` prints only one file of a kernel built
from many headers; this prints every file and the TOP lines (default 30) of each metric.
"""
import collections
import glob
import sys

for folder in (glob.glob('/usr/local/cuda*/nsight-compute*/extras/python') +
               glob.glob('/opt/nvidia/nsight-compute/*/extras/python')):
    sys.path.append(folder)
import ncu_report  # noqa: E402  (found on the paths above)


def main():
    report = ncu_report.load_report(sys.argv[1])
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    action = report.range_by_idx(0).action_by_idx(0)
    print(action.name())
    for name in action.metric_names():
        if not ('inst_executed' == name or 'pcsamp_sample_count' in name):
            continue
        metric = action.metric_by_name(name)
        if not metric.has_correlation_ids():
            continue
        pcs = metric.correlation_ids()
        by_line, by_file = collections.Counter(), collections.Counter()
        for i in range(metric.num_instances()):
            info = action.source_info(pcs.as_uint64(i))
            where = (info.file_name().split('/')[-1], info.line()) if info else ('?', 0)
            value = metric.as_double(i)
            by_line[where] += value
            by_file[where[0]] += value
        total = sum(by_line.values()) or 1.0
        print(f'== {name}: total {total:.4g}')
        for f, value in by_file.most_common(12):
            print(f'  {100 * value / total:6.2f}%  {f}')
        for (f, line), value in by_line.most_common(top):
            print(f'  {100 * value / total:6.2f}%  {f}:{line}')


if __name__ == '__main__':
    main()
