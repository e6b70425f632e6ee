#!/usr/bin/env python3
"""What the scheduling trace costs the scheduler and an interrupt, side by
side in one run against the tree before the trace: one boot per
architecture and per tree at -smp 1 under -icount shift=0 (guest time
follows instructions), written as the "## The scheduling trace: its cost"
section of docs/bench.md. Run by bench/run.py after the other sections;
alone: python3 bench/trace.py [--base DIR].

The tree before the trace is the parent of the first commit that touched
kernel/prof/trace_hooks.c. Its kernels come from --base DIR (a checkout of
it with both kernels built), or are built here from its files under
build/bench-base (git archive; both kernels, a few minutes the first
time, kept for the next run).

- bench_switch, before: its yield loop with the gate closed (the switch
  as it was before the trace).
- bench_switch trace, now: the same with the gate closed, then under a
  trace's window (its records must not drop: a dropped record costs less
  than a written one).
- bench_irq, now: a self-IPI's whole path with the trace off and on (an
  IPI takes no sample, so the difference is the trace's slice alone).

arm64 boots with pmu=off in both trees: the tick samples a trace's window
at 100 Hz, as on x86-64, instead of the counter's ~1 kHz NMIs whose
samples would land in the mean rounds arm64's coarse clock needs."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
from qemu import Machine  # noqa: E402
from benchmd import write_section  # noqa: E402

INSNS_PER_UNIT = {"x86_64": 1, "arm64": 8}   # as bench/run.py
APPEND = {"x86_64": "", "arm64": "pmu=off"}
ROUND = re.compile(r"^(switch|wake|pingpong|ipi) (off|on): rounds (\d+) min (\d+) mean (\d+) "
                   r"sum (\d+) ", re.M)
WINDOW = re.compile(r"^(switch|wake|pingpong|ipi) window: .*, (\d+) dropped$", re.M)
# The targets (issue 36, point 6), guest instructions.
OFF_MAX, ON_MAX, IRQ_MAX = 2, 80, 40
BOOTS = {"x86_64": 1, "arm64": 3}     # boots of each tree (measure)
BASE_DIR = os.path.join(ROOT, "build", "bench-base")


def git(*args, cwd=ROOT):
    return subprocess.check_output(["git"] + list(args), cwd=cwd, text=True).strip()


def base_commit():
    first = git("log", "--format=%H", "--", "kernel/prof/trace_hooks.c").splitlines()[-1]
    return git("rev-parse", first + "^")


def base_tree(given):
    """A tree of the commit before the trace with both kernels built."""
    commit = base_commit()
    tree = given or BASE_DIR
    if not given:
        stamp = os.path.join(tree, ".commit")
        if not os.path.exists(stamp) or open(stamp).read().strip() != commit:
            # The commit's files alone (git archive), not a worktree: the
            # checkout's list of worktrees is left as it is.
            subprocess.check_call(["rm", "-rf", tree])
            os.makedirs(tree)
            archive = subprocess.Popen(["git", "archive", commit], cwd=ROOT, stdout=subprocess.PIPE)
            subprocess.check_call(["tar", "-x", "-C", tree], stdin=archive.stdout)
            if archive.wait() != 0:
                sys.exit("bench: git archive %s failed" % commit)
            with open(stamp, "w") as f:
                f.write(commit + "\n")
        for arch in ("x86_64", "arm64"):
            subprocess.check_call(["make", "-j2", "ARCH=" + arch,
                                   "build/%s/kernel.elf" % arch], cwd=tree,
                                  stdout=subprocess.DEVNULL)
    for arch in ("x86_64", "arm64"):
        if not os.path.exists(os.path.join(tree, "build", arch, "kernel.elf")):
            sys.exit("bench: %s has no build/%s/kernel.elf" % (tree, arch))
    return tree, commit


def run(arch, kernel, cmds):
    with Machine(arch=arch, smp=1, icount="shift=0", append=APPEND[arch], kernel=kernel,
                 name="bench-trace-" + arch, lifetime=400) as g:
        g.boot(120)
        return "\n".join(g.cmd(c, 250).strip() for c in cmds)


def rounds(out, arch, want):
    got = {(m.group(1), m.group(2)): tuple(int(m.group(i)) for i in (3, 4, 5, 6))
           for m in ROUND.finditer(out)}
    drops = {m.group(1): int(m.group(2)) for m in WINDOW.finditer(out)}
    if not want <= set(got) or any(got[k][0] == 0 for k in want):
        print(out)
        sys.exit("bench: could not read the rounds %s (%s)" % (sorted(want), arch))
    if any(drops.values()):
        print(out)
        sys.exit("bench: a trace's window dropped records (%s): %s" % (arch, drops))
    k = INSNS_PER_UNIT[arch]

    # x86-64: the fastest round, exact (the TSC counts instructions).
    # arm64: the mean over every round (tens of thousands), exact to a
    # fraction of an instruction where the fastest is a multiple of 8.
    def per(p, state, n):
        count, least, _, total = got[(p, state)]
        return (least if arch == "x86_64" else total / count) * k / float(n)
    return per


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def measure(arch, base):
    # arm64's mean round moves by up to ~3 instructions a switch from one
    # boot to the next (what else the guest did meanwhile; x86-64's
    # fastest round does not move): the median of BOOTS boots of each.
    boots = BOOTS[arch]
    r = dict(raw=[])
    figs = {}
    for i in range(boots):
        before = run(arch, os.path.join(base, "build", arch, "kernel.elf"), ["bench_switch"])
        now = run(arch, None, ["bench_switch trace", "bench_irq"])
        b = rounds(before, arch, {("switch", "off")})
        n = rounds(now, arch, {(p, s) for p in ("switch", "wake", "ipi") for s in ("off", "on")})
        for k, v in (("before", b("switch", "off", 2)), ("off", n("switch", "off", 2)),
                     ("on", n("switch", "on", 2)), ("ipi_off", n("ipi", "off", 1)),
                     ("ipi_on", n("ipi", "on", 1))):
            figs.setdefault(k, []).append(v)
        tag = "boot %d: " % (i + 1) if boots > 1 else ""
        r["raw"] += [tag + "before: " + ln for ln in before.splitlines()
                     if ROUND.match(ln) and ln.startswith(("switch", "wake"))]
        r["raw"] += [tag + ln for ln in now.splitlines()
                     if (ROUND.match(ln) or WINDOW.match(ln)) and not ln.startswith("pingpong")]
    for k, v in figs.items():
        r[k] = median(v)
        r[k + "_all"] = v
    r["off_added"] = r["off"] - r["before"]
    r["on_added"] = r["on"] - r["off"]
    r["ipi_added"] = r["ipi_on"] - r["ipi_off"]
    return r


def verdict(r, key, limit):
    over = [name for name, a in (("x86-64", "x86_64"), ("arm64", "arm64")) if r[a][key] > limit]
    return ("within it on both architectures" if not over else
            "over it on %s (the table)" % " and ".join(over))


def section(r, commit):
    lines = [
        "## The scheduling trace: its cost",
        "",
        "`bench/trace.py`: one boot per architecture and per tree at `-smp 1` under",
        "`-icount shift=0` (arm64 with `pmu=off`, so that a trace's samples come from",
        "the tick as on x86-64), side by side in one run with the tree before the",
        "trace (%s, the parent of the first commit of kernel/prof/trace_hooks.c)." % commit[:7],
        "`bench_switch` is the off-CPU section's yield loop (two tasks yielding to",
        "each other, a switch each, no wake), run with the gate closed and then",
        "under a trace's window (`bench_switch trace`, whose drop counts must be",
        "0; its hand-off rounds are printed below too); `bench_irq` is a task",
        "kicking itself with the reschedule IPI, a round its whole path (sending,",
        "entry, handler, return; an IPI takes no sample), the trace off and on.",
        "Guest instructions; per switch half a round, per interrupt one (x86-64: the",
        "fastest round; arm64: the mean round, as its timer's 8 ns unit makes the",
        "fastest a multiple of 8, and the median of %d boots of each tree, as that"
        % BOOTS["arm64"],
        "mean moves by up to ~3 instructions a switch from one boot to the next:",
        "arm64's switch before the trace %s, trace off %s)."
        % (", ".join("%.1f" % v for v in r["arm64"]["before_all"]),
           ", ".join("%.1f" % v for v in r["arm64"]["off_all"])),
        "",
        "| architecture | switch, before the trace | switch, trace off | off added | switch, trace on | on added per switch | interrupt, trace off | interrupt, trace on | added per interrupt |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, a in (("x86-64", "x86_64"), ("arm64", "arm64")):
        x = r[a]
        lines.append("| %s | %.1f | %.1f | %+.1f | %.1f | %+.1f | %.1f | %.1f | %+.1f |" % (
            name, x["before"], x["off"], x["off_added"], x["on"], x["on_added"],
            x["ipi_off"], x["ipi_on"], x["ipi_added"]))
    lines += [
        "",
        "Targets (issue 36, point 6):",
        "",
        "- tracing off, at most %d instructions a switch more than before the trace:"
        % OFF_MAX,
        "  %s;" % verdict(r, "off_added", OFF_MAX),
        "- tracing on, at most %d more a switch: %s;" % (ON_MAX, verdict(r, "on_added", ON_MAX)),
        "- an interrupt with tracing on, at most %d more: %s." % (IRQ_MAX,
                                                               verdict(r, "ipi_added", IRQ_MAX)),
        "",
        "- Off: the switch pays the one test of the gate's scheduler bit it paid",
        "  before the trace (an off-CPU window and a trace share it,",
        "  kernel/prof/offcpu_hooks.h); the interrupt entry one load and branch and",
        "  its exit one test of the register that holds it.",
        "- On, a switch: one record through the producers' reservation",
        "  (kernel/prof/ring_produce.h, with the trace's kind skipping the pid",
        "  filter's test) and the switch's facts (kernel/prof/trace_hooks.c). The",
        "  release's check of the NMI deferral (a load and a branch not taken,",
        "  ring_produce.h) is in it: what keeps arm64's counter NMIs that land",
        "  inside a record from being dropped (the trace tests hold both",
        "  architectures to 0 dropped, and `trace 2000` over `burn pingpong 2000",
        "  10000` to 0: tests/system/trace_tests.py, pingpong_drops_nothing).",
        "- On, an interrupt (x86-64, read off the disassembly of trap_irq and",
        "  prof_trace_irq_exit, so approximate; the same list is in",
        "  kernel/prof/trace_hooks.c): the entry's class, clock, index and three",
        "  stores ~17; the exit's call and frame 6; the index, the vector's test",
        "  and the end's store 7; the gate's trace bit 2; the guard's test, address",
        "  and exchange 8; the gate's reload 3; room 6 and slot 5; the interrupted",
        "  pid 6; the record's fill with its clock 16; count and publication 2; the",
        "  release and the deferral's check 4. Made cheaper here: the trace's",
        "  records skip the pid filter's test; the exit reads the CPU's index once",
        "  for both of its structs, ends the interrupt before the record and reads",
        "  the slice's facts only once the slot is its own (live across the",
        "  reservation, they cost five saved registers); a one-record room test; no",
        "  fix-up of a zero clock. Inlining the exit into the interrupt's path cost",
        "  every interrupt 6 more, traced or not (its registers saved), and was",
        "  undone. What would take it to the target is a slice recorded without a",
        "  reservation of its own (the guard, the gate's reload, the room test,",
        "  which every record needs against the NMI and the closer); not done.",
        "",
        "Figures as printed:",
        "",
    ]
    for a in ("x86_64", "arm64"):
        lines += ["- %s: %s" % (a, ln) for ln in r[a]["raw"]]
    lines.append("")
    return lines


def main(argv):
    given = None
    if argv[:1] == ["--base"] and len(argv) == 2:
        given = os.path.abspath(argv[1])
    elif argv:
        sys.exit("usage: python3 bench/trace.py [--base DIR]")
    base, commit = base_tree(given)
    r = {a: measure(a, base) for a in ("x86_64", "arm64")}
    lines = section(r, commit)
    write_section(lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
