#!/usr/bin/env python3
"""make bench, heap profiling's part: written as the "## Heap profiling"
section of docs/bench.md (after the stream's; it keeps everything before
it). One boot per architecture at -smp 1 under -icount shift=0 runs the
kernel's `bench_heap` (kernel/cmd/bench_heap.c): the guest instructions
of a kmalloc+kfree pair (64 bytes) with sampling off, on at the default
rate (the average, samples included) and with every allocation sampled,
and the slowdown at the default rate of a workload that does nothing but
replace 64 live objects of 32-511 bytes."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
from qemu import Machine  # noqa: E402

PAIR = re.compile(r"pair off ([\d.]+) on ([\d.]+) sampled (\d+) (.+?) per kmalloc\+kfree")
WORK = re.compile(r"workload off (\d+) on (\d+) .*, slowdown ([\d.]+)%, (\d+) samples taken")
# The workload's bytes (kernel/cmd/bench_heap.c: 65536 objects of 32 + (i * 97) % 480)
# and the samples the default rate takes of them on average.
WORK_BYTES = sum(32 + (i * 97) % 480 for i in range(65536))
SAMPLES = round(WORK_BYTES / 524288)
# Guest instructions per cycles_now() unit under -icount shift=0 (bench/run.py).
INSNS_PER_UNIT = {"x86_64": 1, "arm64": 8}
# "pair, off" with no heap profiling at all: this script run on a kernel
# whose heapprof_count (mm/heapprof.h) is `(void)size; return false;`, so
# that the countdown and the sampled branch are compiled out of kmalloc.
# Measured again whenever kmalloc's code changes (last: the sample's site
# read from kmalloc's frame record, mm/heap.c heap_sample; unchanged).
BASELINE = {"x86_64": 248.0, "arm64": 252.0}


def measure(arch):
    with Machine(arch=arch, smp=1, icount="shift=0", name="bench-heap-" + arch,
                 lifetime=400) as g:
        g.boot(120)
        out = g.cmd("bench_heap", 300)
    p, w = PAIR.search(out), WORK.search(out)
    if not p or not w:
        sys.exit("bench heap: %s: could not read %r" % (arch, out))
    k = INSNS_PER_UNIT[arch]
    return dict(off=float(p.group(1)) * k, on=float(p.group(2)) * k, sampled=int(p.group(3)) * k,
                w_off=int(w.group(1)), w_on=int(w.group(2)), slow=float(w.group(3)),
                taken=int(w.group(4)), raw=out.strip())


def main():
    r = {a: measure(a) for a in ("x86_64", "arm64")}
    lines = [
        "## Heap profiling",
        "",
        "Written by bench/heap.py: `bench_heap` at `-smp 1` under `-icount shift=0`,",
        "guest instructions (arm64: timer units x 8, so multiples of 8). A pair is",
        "`kmalloc(64)` + `kfree`, 100000 of them, interrupts off; \"on\" samples at",
        "the default rate (524288 bytes) and includes its samples; \"sampled\" samples",
        "every allocation (rate 1): the price of one sample (threshold draw, scaling,",
        "stack walk, table entry and its retire). The workload replaces 64 live",
        "objects of 32-511 bytes 65536 times and does nothing else: the worst case",
        "for the countdown's share.",
        "",
        "| architecture | pair, off | pair, on (average) | pair, sampled | workload slowdown at the default rate |",
        "|---|---|---|---|---|",
    ]
    for name, a in (("x86-64", "x86_64"), ("arm64", "arm64")):
        q = r[a]
        lines.append("| %s | %.1f | %.1f | %d | %.3f%% |" % (name, q["off"], q["on"], q["sampled"], q["slow"]))
    lines += [
        "",
        "Without heap profiling (the same bench on a kernel whose heapprof_count",
        "is `return false`, the countdown and the sampled branch compiled out) the",
        "pair costs %.1f on x86-64 and %.1f on arm64: sampling off costs %+.1f and" % (
            BASELINE["x86_64"], BASELINE["arm64"], r["x86_64"]["off"] - BASELINE["x86_64"]),
        "%+.1f (target: at most +3). kmalloc keeps no allocation site on its" % (
            r["arm64"]["off"] - BASELINE["arm64"]),
        "fast path: a sample reads the return address from kmalloc's frame",
        "record (mm/heap.c, heap_sample).",
        "",
        "Target: the workload's slowdown <= 1%. Every kmalloc counts its bytes",
        "down in a per-CPU countdown, 2 instructions on both: x86-64 keeps it in",
        "struct cpu's heap_left, `sub %reg,%gs:24; js`; arm64 in register x18,",
        "reserved kernel-wide (-ffixed-x18), `subs x18, x18, reg; b.mi` (in",
        "memory it took 5, `mrs tpidr_el1; ldr; sub; str; tbnz`: no subtract into",
        "memory; docs/profiling.md gives the pair without the countdown).",
        "Sampling off, the countdown is INT64_MAX, so off and on run the same",
        "instructions and kmalloc tests no rate: \"pair, off\" and \"pair, on\"",
        "differ only by the samples, and so does the workload. The split, from",
        "the figures above: the workload",
        "asks for %d bytes, %d samples on average at the default rate (the" % (WORK_BYTES, SAMPLES),
        "count of one run varies, as a Poisson count does), each costing",
        "\"sampled\" - \"off\" more than an unsampled pair:",
        "",
    ]
    for name, a in (("x86-64", "x86_64"), ("arm64", "arm64")):
        q = r[a]
        extra = q["taken"] * (q["sampled"] - q["off"])
        lines.append("- %s: %d samples taken x %.0f = %.0f instructions expected, %.0f measured "
                     "(on - off)" % (name, q["taken"], q["sampled"] - q["off"], extra,
                                     (q["w_on"] - q["w_off"]) * INSNS_PER_UNIT[a]))
    lines += [
        "",
        "Figures as printed by the kernel:",
        "",
    ]
    for a in ("x86_64", "arm64"):
        lines += ["- %s: %s" % (a, l) for l in r[a]["raw"].splitlines()]
    lines.append("")
    path = os.path.join(ROOT, "docs", "bench.md")
    old = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    head = old.split("\n## Heap profiling", 1)[0].rstrip("\n") + "\n"
    open(path, "w").write(head + "\n" + "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
