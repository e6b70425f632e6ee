#!/usr/bin/env python3
"""What a lock costs when nobody else wants it: `bench_lock` on one vCPU
under -icount shift=0 (guest time follows instructions), on x86_64 and
arm64, written as the "## Locks: the uncontended pair" section of
docs/bench.md (the section is replaced where it stands, or added at the
end). Run by bench/run.py after the other sections; alone: python3
bench/lock.py; `--print` only prints the figures (for a tree without this
script's section, such as the one BEFORE below was measured on)."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
from qemu import Machine  # noqa: E402
from benchmd import write_section  # noqa: E402

INSNS_PER_UNIT = {"x86_64": 1, "arm64": 8}   # as bench/run.py
PAIR = re.compile(r"^lock (spin|mutex) (off|on): batch min (\d+) empty (\d+) .+? per (\d+) pairs\r?$",
                  re.M)

# Guest instructions per uncontended pair on the tree before named locks
# (c77befc), measured by hand with this script's --print and
# kernel/cmd/bench_lock.c copied in (SPINLOCK_INIT without a name).
BEFORE = {"x86_64": {"spin": 26.000, "mutex": 131.002}, "arm64": {"spin": 26.992, "mutex": 132.000}}
BUDGET_OFF, BUDGET_ON = 2, 30       # instructions a pair more than BEFORE (issue: locks)


def measure(arch):
    with Machine(arch=arch, smp=1, icount="shift=0", name="bench-lock-" + arch,
                 lifetime=240) as g:
        g.boot(120)
        out = g.cmd("bench_lock", 100)
    k = INSNS_PER_UNIT[arch]
    r = {}
    for m in PAIR.finditer(out):
        pairs = int(m.group(5))
        r[(m.group(1), m.group(2))] = (int(m.group(3)) - int(m.group(4))) * k / pairs
    if ("spin", "off") not in r or ("mutex", "off") not in r:
        print(out)
        sys.exit("bench: could not read bench_lock's figures (%s)" % arch)
    return r


def main():
    res = {a: measure(a) for a in ("x86_64", "arm64")}
    for a, r in res.items():
        for (kind, state), v in sorted(r.items()):
            print("%s %s %s: %.3f guest instructions a pair" % (a, kind, state, v))
    if "--print" in sys.argv[1:]:
        return
    lines = [
        "## Locks: the uncontended pair",
        "",
        "`bench_lock` (kernel/cmd/bench_lock.c), one boot per architecture at `-smp 1`",
        "under `-icount shift=0`: batches of 1000 uncontended pairs on one CPU,",
        "spin_lock + spin_unlock of a spinlock and mutex_lock + mutex_unlock of a",
        "mutex, the fastest of 200 batches less the same loop with an empty body.",
        "Guest instructions a pair (arm64's 8 ns clock unit over 1000 pairs: to",
        "0.008). Before: the tree before named locks (c77befc), measured by hand",
        "with `bench/lock.py --print` and bench_lock.c copied in.",
        "",
        "| architecture | pair | before | lockstat off | added, off | lockstat on | added, on |",
        "|---|---|---|---|---|---|---|",
    ]
    over = []
    for a, r in res.items():
        for kind in ("spin", "mutex"):
            b, off, on = BEFORE[a][kind], r[(kind, "off")], r.get((kind, "on"))
            if off - b > BUDGET_OFF or (on is not None and on - b > BUDGET_ON):
                over.append("%s %s" % (a, kind))
            lines.append("| %s | %s | %.3f | %.3f | %+.3f | %s | %s |" % (
                a, kind, b, off, off - b, "-" if on is None else "%.3f" % on,
                "-" if on is None else "%+.3f" % (on - b)))
    lines += ["", "Budget: at most %d more than before off, %d on: %s." % (
        BUDGET_OFF, BUDGET_ON, "met on both architectures" if not over
        else "OVER for " + ", ".join(over))]
    write_section(lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
