#!/usr/bin/env python3
"""Off-CPU, wall-clock and latency profiles against a live kernel
(docs/profiling.md), on either architecture.

usage: python3 tests/system/offcpu_tests.py [--arch x86_64|arm64] [--list] [NAME...]

One kernel at -smp 4 runs `burn wait` (kernel/cmd/burn_wait.c): a task
that loops over 10 ms on its CPU, a 20 ms sleep, a wait on the queue
burn-q that burn-waker ends 30 ms later, and a wait for the mutex burn-m
that burn-holder holds 15 ms; the task logs each phase's start and end
on the kernel's clock (`burn wait log`).

- known_waits: `profile off 1000 PID`: each phase's share of the window
  (its reason's blocked time plus the runnable time of the same chain)
  within 1 point of the share the task's own log gives over the same
  window (the report prints the window on the clock); `woken by` names
  burn-waker for burn-q, burn-holder for burn-m and the tick for sleep.
- wall_adds_up: `profile wall 1000 PID`: the task's entries add up to the
  window within 1%, and its header's three shares to 100% within 0.2.
- folded_raw: folded stacks end in the reason, weighted in µs and adding
  up to the text report's total within 1%; raw says kind=offcpu and its
  chains add up to samples=.
- latency: `profile latency 500`: the histogram has wakes, per CPU.
- bad_input: the new words' errors name what was wrong and the range.
- unnamed_waits: a second kernel runs `burn wait ... unnamed`, whose
  queue and mutex are zero-filled statics that were never named: the
  profile calls them `[waitq ?]` and `[mutex ?]` with each phase's
  share within 1 point of the task's own log (never `[sleep]`), and
  `profile wall` puts the task's on-CPU share within 2 points of the
  share its log spent on the CPU.

Prints 'PASS name (secs)' or 'FAIL name (secs): reason' and ends with
'N passed, N failed' (nothing retries). Python 3 standard library."""
import re
import sys
import os

sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from qemu import Fail, Machine, check  # noqa: E402

ARCH = "x86_64"
LIFETIME = 240.0
# Under -icount the guest's clock counts its instructions: a vCPU that the
# loaded host descheduled between two of the task's clock reads takes no
# guest time there, so the task's own measurement and the scheduler's
# charge see the same time (without it, a busy host made the task's
# waits look 5-20 ms longer than its time off the CPU, measured).
ICOUNT = "shift=1,sleep=off"
PHASE_FN = {"sleep": "burn_wait_sleep", "waitq": "burn_wait_queue", "mutex": "burn_wait_mutex"}
ENTRY = re.compile(r"^(\d+\.\d)% (\d+\.\d{3}) ms (\[[^\]]+\])(?: task (\d+) (\S+))?$")
TESTS = []


def test(fn):
    TESTS.append((fn.__name__[2:], fn))
    return fn


class World:
    """One kernel with burn wait running, shared by every test."""
    m = None
    pids = None
    smp = 4
    words = "burn wait 200000"
    name = ""

    @classmethod
    def get(cls):
        if cls.m is None:
            cls.m = Machine(smp=cls.smp, arch=ARCH, lifetime=LIFETIME, name=ARCH + cls.name,
                            icount=ICOUNT)
            cls.m.boot(90)
            out = cls.m.cmd(cls.words, 30)
            g = re.search(r"pids (\d+) (\d+) (\d+)", out)
            check(g, "burn wait did not start: %r" % out)
            cls.pids = [int(x) for x in g.groups()]
            cls.m.cmd("echo settled", 30)
        return cls.m


class UnnamedWorld(World):
    """A second kernel whose burn wait waits on an unnamed queue and mutex."""
    m = None
    pids = None
    smp = 2
    words = "burn wait 200000 unnamed"
    name = "-unnamed"


def entries(text):
    """The report's entries: (percent, ms, leaf, lines below it)."""
    out = []
    for line in text.splitlines():
        g = ENTRY.match(line)
        if g:
            out.append([float(g.group(1)), float(g.group(2)), g.group(3), []])
        elif out and line.startswith("        "):
            out[-1][3].append(line.strip())
    return out


def phase_of(lines):
    for ph, fn in PHASE_FN.items():
        if any(l.startswith("<- %s+" % fn) for l in lines if not l.startswith("woken")):
            return ph
    return None


def measured(log, t0, t1):
    """ns per phase in [t0, t1] from `burn wait log`."""
    got = {"cpu": 0, "sleep": 0, "waitq": 0, "mutex": 0}
    first = None
    for line in log.splitlines():
        g = re.match(r"^(cpu|sleep|waitq|mutex) (\d+) (\d+)$", line)
        if not g:
            continue
        a, b = int(g.group(2)), int(g.group(3))
        first = a if first is None else min(first, a)
        lo, hi = max(a, t0), min(b, t1)
        if hi > lo:
            got[g.group(1)] += hi - lo
    check(first is not None and first <= t0, "the log does not reach back to the window's start")
    return got


def log_until(m, t1):
    """`burn wait log` once it reaches t1: the phase under way at the
    window's end is logged when it ends."""
    for _ in range(50):
        log = m.cmd("burn wait log", 30)
        ends = [int(l.split()[2]) for l in log.splitlines()
                if re.match(r"^(cpu|sleep|waitq|mutex) \d+ \d+$", l)]
        if ends and max(ends) >= t1:
            return log
        m.cmd("echo wait", 30)
    raise Fail("burn wait's log never reached the window's end")


def known_waits(world, qleaf, mleaf):
    """world's burn-wait task's off-CPU profile against its own log: each
    phase within 1 point, under [sleep], qleaf or mleaf (or runnable);
    every waker named."""
    m = world.get()
    pid = world.pids[0]
    out = m.cmd("profile off 1000 %d 32" % pid, 60)
    g = re.search(r"^off-cpu profiled 1000 ms, clock (\d+)-(\d+) ns$", out, re.M)
    check(g, "no off-cpu header with the window's clock")
    t0, t1 = int(g.group(1)), int(g.group(2))
    check(re.search(r"^blocked \d+\.\d{3} ms, runnable \d+\.\d{3} ms, 1 tasks, 0 dropped$", out, re.M),
          "header: totals, tasks, dropped")
    log = log_until(m, t1)
    want = measured(log, t0, t1)
    got = {"sleep": 0.0, "waitq": 0.0, "mutex": 0.0}
    wakers = {}
    for pct, ms, leaf, lines in entries(out):
        ph = phase_of(lines)
        check(ph, "entry %s has no burn_wait phase among its callers: %r" % (leaf, lines))
        want_leaf = {"sleep": "[sleep]", "waitq": qleaf, "mutex": mleaf}[ph]
        check(leaf in (want_leaf, "[runnable]", "[preempted]"),
              "%s's wait is reported as %s, not %s\n%s" % (ph, leaf, want_leaf, out))
        got[ph] += ms
        if leaf != "[runnable]" and leaf != "[preempted]":
            woke = [l for l in lines if l.startswith("woken by") or l.startswith("still waiting")]
            check(woke, "%s names no waker" % leaf)
            wakers.setdefault(leaf, set()).add(woke[0])
    window_ms = (t1 - t0) / 1e6
    for ph in got:
        share_p = 100.0 * got[ph] / window_ms
        share_m = 100.0 * want[ph] / (t1 - t0)
        check(abs(share_p - share_m) <= 1.0,
              "%s: profile %.2f%% of the window, the task measured %.2f%%\n%s\n%s"
              % (ph, share_p, share_m, out, log))
    check(wakers.get("[sleep]") == {"woken by the tick"} or
          wakers.get("[sleep]", set()) <= {"woken by the tick", "still waiting at the window's end"},
          "sleep's waker: %r" % wakers.get("[sleep]"))
    for leaf, who in ((qleaf, world.pids[1]), (mleaf, world.pids[2])):
        names = wakers.get(leaf, set()) - {"still waiting at the window's end"}
        name = "burn-waker" if who == world.pids[1] else "burn-holder"
        check(names == {"woken by %d %s" % (who, name)}, "%s woken by %r" % (leaf, names))


@test
def t_known_waits(ctx):
    known_waits(World, "[waitq burn-q]", "[mutex burn-m]")


@test
def t_unnamed_waits(ctx):
    known_waits(UnnamedWorld, "[waitq ?]", "[mutex ?]")
    m = UnnamedWorld.get()
    pid = UnnamedWorld.pids[0]
    out = m.cmd("profile wall 1000 %d 128" % pid, 60)
    h = re.search(r"^task %d burn-wait: on-cpu (\d+\.\d)%%, blocked (\d+\.\d)%%, runnable (\d+\.\d)%%$"
                  % pid, out, re.M)
    check(h, "no header line for the task:\n%s" % out)
    # The wall's header has no clock: its on-CPU share against the cpu
    # phases' share of everything the log holds (~5 s). A 1000 ms window
    # holds ~13 of the task's cycles, so where it starts moves the share
    # by at most one cycle's 10 ms on the CPU: a point.
    log = m.cmd("burn wait log", 30)
    spent = {"cpu": 0, "sleep": 0, "waitq": 0, "mutex": 0}
    for line in log.splitlines():
        g = re.match(r"^(cpu|sleep|waitq|mutex) (\d+) (\d+)$", line)
        if g:
            spent[g.group(1)] += int(g.group(3)) - int(g.group(2))
    total = sum(spent.values())
    check(total > 2e9, "the log holds only %d ns" % total)
    cpu = 100.0 * spent["cpu"] / total
    check(abs(float(h.group(1)) - cpu) <= 2.0,
          "wall says on-cpu %s%%, the task's log %.2f%% on its CPU\n%s" % (h.group(1), cpu, out))
    for leaf in ("[waitq ?]", "[mutex ?]"):
        check(re.search(r"^\d+\.\d% \d+\.\d{3} ms " + re.escape(leaf), out, re.M),
              "wall has no %s entry\n%s" % (leaf, out))


@test
def t_wall_adds_up(ctx):
    m = World.get()
    pid = World.pids[0]
    out = m.cmd("profile wall 1000 %d 128" % pid, 60)
    g = re.search(r"^task %d burn-wait: on-cpu (\d+\.\d)%%, blocked (\d+\.\d)%%, runnable (\d+\.\d)%%$"
                  % pid, out, re.M)
    check(g, "no header line for the task")
    shares = sum(float(x) for x in g.groups())
    check(abs(shares - 100.0) <= 0.2, "header shares add up to %.1f%%" % shares)
    check(float(g.group(2)) > 50, "blocked only %s%%" % g.group(2))
    total = 0.0
    for line in out.splitlines():
        e = re.match(r"^(\d+\.\d)% (\d+\.\d{3}) ms (.+)$", line)
        if e:
            total += float(e.group(2))
    check(abs(total - 1000.0) <= 10.0, "entries add up to %.3f ms of a 1000 ms window" % total)


@test
def t_folded_raw(ctx):
    m = World.get()
    pid = World.pids[0]
    out = m.cmd("profile off 500 %d folded" % pid, 60)
    check(re.search(r"^# sonde folded build-id=[0-9a-f]{40} source=sched samples=\d+ dropped=0 "
                    r"cpus=\d+ ms=500 kind=offcpu$", out, re.M), "folded header")
    us = 0
    n = 0
    for line in out.splitlines():
        g = re.match(r"^burn-wait;(.+) (\d+)$", line)
        if g:
            frames = g.group(1).split(";")
            check(re.match(r"^\[(sleep|waitq burn-q|mutex burn-m|runnable|preempted)\]$", frames[-1]),
                  "last frame is not a reason: %r" % frames[-1])
            check("burn_wait_task" in frames, "no burn_wait_task in %r" % frames)
            us += int(g.group(2))
            n += 1
    check(n >= 3, "only %d folded stacks" % n)
    check(400000 <= us <= 501000, "folded stacks add up to %d us of a 500 ms window" % us)
    raw = m.cmd("profile off 300 %d raw" % pid, 60)
    h = re.search(r"^# sonde raw build-id=[0-9a-f]{40} source=sched samples=(\d+) dropped=0 "
                  r"cpus=\d+ ms=300 kind=offcpu$", raw, re.M)
    check(h, "raw header")
    count = 0
    for line in raw.splitlines():
        g = re.match(r"^(\d+):(\d+) %d burn-wait \d+ why=(\S+)( waker=-?\d+(:\S+)?)?( [0-9a-f]+)+"
                     r"( \|( [0-9a-f]+)+)?$"
                     % pid, line)
        if g:
            count += int(g.group(1))
    check(count == int(h.group(1)), "raw chains add up to %d, header says %s" % (count, h.group(1)))


@test
def t_latency(ctx):
    m = World.get()
    out = m.cmd("profile latency 500", 60)
    g = re.search(r"^scheduler latency \(wake to run\) over 500 ms, (\d+) wakes, \d+ dropped$", out, re.M)
    check(g and int(g.group(1)) > 10, "latency header: %r" % out[:300])
    check(re.search(r"^cpu \d+: \d+ wakes, max \d+\.\d{3} ms$", out, re.M), "no cpu line")
    check(re.search(r"^ +\d+ -> \d+ +: \d+ +\|[* ]{40}\|$", out, re.M), "no histogram row")


@test
def t_bad_input(ctx):
    m = World.get()
    for cmd, want in (("profile off 0", "profile: window 0 out of range (1-2000 ms)"),
                      ("profile wall 10 999999", "profile: pid 999999: no such task"),
                      ("profile latency raw", "profile: 'raw' is not a window (1-2000 ms)"),
                      ("profile latency 10 20", "profile: too many arguments (usage: profile latency [ms])"),
                      ("profile off 10 all 3 4", "profile: too many arguments"),
                      ("profile wall 10 all raw", "profile: wall has no raw form")):
        out = m.cmd(cmd, 30)
        check(want in out, "%r said %r, not %r" % (cmd, out.strip()[-200:], want))


class Ctx:
    def __init__(self, name):
        pass

    def tails(self):
        return "".join(runner.quoted_tail(w.m, 0) for w in (World, UnnamedWorld) if w.m)

    def finish(self, failed):
        pass


def set_arch(arch):
    global ARCH
    ARCH = arch


def main(argv):
    return runner.main(argv, TESTS, Ctx, set_arch)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
