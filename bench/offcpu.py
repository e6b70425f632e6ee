#!/usr/bin/env python3
"""What off-CPU profiling costs a context switch: `bench_switch` on one
vCPU under -icount shift=0 (guest time follows instructions), on x86_64
and arm64, written as the "## Off-CPU profiling" section of docs/bench.md
(it keeps everything before that heading). Run by bench/run.py after the
other sections; alone: python3 bench/offcpu.py."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
from qemu import Machine  # noqa: E402

INSNS_PER_UNIT = {"x86_64": 1, "arm64": 8}   # as bench/run.py
LINE = re.compile(r"^switch (off|on): rounds (\d+) min (\d+) mean (\d+) ", re.M)


def measure(arch):
    with Machine(arch=arch, smp=1, icount="shift=0", name="bench-switch-" + arch,
                 lifetime=300) as g:
        g.boot(120)
        out = g.cmd("bench_switch", 200)
    got = {m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
           for m in LINE.finditer(out)}
    if set(got) != {"off", "on"} or got["off"][0] == 0 or got["on"][0] == 0:
        print(out)
        sys.exit("bench: could not read bench_switch's figures (%s)" % arch)
    k = INSNS_PER_UNIT[arch]
    # A round is two switches and the other task's loop body.
    off, on = got["off"][1] * k / 2.0, got["on"][1] * k / 2.0
    return dict(off=off, on=on, added=on - off,
                slowdown=(got["on"][2] - got["off"][2]) * 100.0 / got["off"][2], raw=got)


def main():
    r = {a: measure(a) for a in ("x86_64", "arm64")}
    lines = [
        "## Off-CPU profiling: the context switch",
        "",
        "`bench_switch` (kernel/cmd/bench_switch.c), one boot per architecture at",
        "`-smp 1` under `-icount shift=0`: two tasks yield to each other, each",
        "yield one switch; the first times every round (two switches and the other",
        "task's loop body) with the gate closed, then under `profile latency 40`",
        "(an off-CPU window, every switch-in recorded: the task's walk from its",
        "saved context, the clock, the record). Per switch: half the fastest",
        "round (no tick in it), in guest instructions (arm64: multiples of 4, the",
        "timer's 8 ns unit over 2). Slowdown: the mean round, on against off.",
        "",
        "| architecture | switch, off | switch, on | added per switch | ping-pong slowdown |",
        "|---|---|---|---|---|",
    ]
    for name, a in (("x86-64", "x86_64"), ("arm64", "arm64")):
        x = r[a]
        lines.append("| %s | %d | %d | %d | %+.1f%% |" % (name, x["off"], x["on"], x["added"], x["slowdown"]))
    lines += [
        "",
        "Targets (issue 24): off within 2 instructions of the switch before off-CPU",
        "profiling; on at most 150 instructions a switch, walk included; ping-pong",
        "slowdown at most 3%. Off: the switch path gained one load of the gate and",
        "one branch not taken, out of line otherwise (x86-64: `mov`, `test`, `jne`;",
        "arm64: `ldr`, `tbnz` after the gate's address), read from the",
        "disassembly of `schedule`, not measured against a build without it. On:",
        "the figures above are far over the target. Measured apart on x86-64 by",
        "leaving one piece out at a time (one-off builds, not kept): the walk",
        "from the saved context about 150 instructions (it was 256 through the",
        "stacks' registry, now bounded by the task's own stack), prof_emit_n",
        "about 165 (two records copied in, under the producers' guard), and the",
        "clock, the state machine and building the records the other ~200.",
        "The ping-pong here switches as fast as the CPU can (over a million",
        "switches a second of guest time); at the issue's 10,000 switches a second",
        "the added cost is %.1f%% of a CPU (10,000 x %d instructions a second)."
        % (r["x86_64"]["added"] * 10000 * 100.0 / 1e9, r["x86_64"]["added"]),
        "",
        "For reference, not measured here: bcc's offcputime(8) and `perf record",
        "--off-cpu` run a BPF program at every context switch, and offcputime's man",
        "page (OVERHEAD section) warns that the overhead can become significant",
        "at high switch rates (the issue cites over 1M switches/s).",
        "",
        "Figures as printed: " + "; ".join(
            "%s off rounds %d min %d mean %d, on rounds %d min %d mean %d" % (
                (a,) + r[a]["raw"]["off"] + r[a]["raw"]["on"]) for a in ("x86_64", "arm64")),
        "",
    ]
    path = os.path.join(ROOT, "docs", "bench.md")
    old = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    head = old.split("\n## Off-CPU profiling", 1)[0].rstrip("\n") + "\n"
    open(path, "w").write(head + "\n" + "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
