#!/usr/bin/env python3
"""make bench: the profiler's figures, measured side by side in one boot
under -icount shift=0 (guest time tied to instructions, so repeatable),
written to docs/bench.md. Absolute host times are noise here; the ratios
and the guest-cycle figures are what to read."""
import os, re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
import parse as P  # noqa: E402
from qemu import Fail, Machine, check  # noqa: E402

BOOT_S, BENCH_S = 120, 900           # waits for the prompt and for `bench profile`


def main():
    with Machine(smp=4, icount="shift=0", append=None, name="bench",
                 lifetime=BOOT_S + BENCH_S + 60) as g:
        g.boot(BOOT_S)
        out = g.cmd("bench profile", BENCH_S)
        tsc = re.search(r"tsc: (\d+) MHz", g.text())
    try:
        b = P.bench_profile(out)
        check(b["unit"] == "cycles", "sample cost in %r, not cycles" % b["unit"])
    except Fail as e:
        print(out)
        sys.exit("bench: could not read the figures: %s" % e)
    off, on = b["off"], b["on"]
    # The same share from the steady cost: median x samples over the window
    # (1000 ms) times the CPUs, free of the icount turn-taking outliers.
    steady = (b["median"] * b["samples"] * 100.0 / (1000 * 1000 * int(tsc.group(1)) * b["cpus"])
              if tsc else None)
    overhead = (on - off) * 100.0 / off
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (bench/run.py). One boot of `-smp 4 -icount shift=0`:",
        "guest time follows instructions, so these are guest cycles (TSC), repeatable",
        "from run to run; host wall time is not used.",
        "",
        "## Profiler (tick source, 100 Hz per CPU)",
        "",
        "| figure | value |",
        "|---|---|",
        "| fixed burn workload, profiling off (sum over 4 CPUs) | %d cycles |" % off,
        "| same workload, `profile 1000` running over it | %d cycles |" % on,
        "| ratio on/off | %.4f (overhead %+.3f%%; target < 0.5%%) |" % (on / off, overhead),
        "| samples in the profiled window | %(samples)d on %(cpus)d cpus, %(dropped)d dropped, source %(source)s |" % b,
        "| cycles per sample | median %(median)d, min %(cmin)d, max %(cmax)d |" % b,
        "| share of cpu time spent sampling (sum of costs, as the header prints it) | %s%% |" % b["share"],
        "| the same from the median (median x samples / window x cpus) | %s |" % (
            "%.4f%%" % steady if steady is not None else "tsc rate not found"),
        "| Report() over %(report_cpus)d x %(report_recs)d records (fold, resolve, print to a sink) | %(report_cycles)d cycles = %(report_us)d us guest time (target < 20 ms) |" % b,
        "",
        "Under -icount the four vCPUs take turns on one host thread and guest",
        "time runs on while a vCPU waits for its turn, so a sample that straddles",
        "a turn is charged the other vCPUs' slice: that is the max, and it inflates",
        "the share line (a sum). The median is the steady cost of a sample.",
        "",
    ]
    path = os.path.join(ROOT, "docs/bench.md")
    text = "\n".join(lines)
    open(path, "w").write(text)
    print(text)
    # The other sections append themselves, each after this one.
    rc = 0
    for part in ("bench/netload.py", "bench/arm64_pmu.py"):
        if os.path.exists(os.path.join(ROOT, part)):
            rc |= subprocess.call([sys.executable, os.path.join(ROOT, part)])
    sys.exit(rc)


if __name__ == "__main__":
    main()
