#!/usr/bin/env python3
"""lockstat and lock profiles against a live kernel (docs/profiling.md,
"Locks"), on either architecture.

usage: python3 tests/system/lock_tests.py [--arch x86_64|arm64] [--list] [NAME...]

One kernel at -smp 2 under -icount (guest time follows instructions, so
a vCPU the host descheduled takes no guest time) runs `burn lock`
(kernel/cmd/burn_lock.c): burn-holder keeps the mutex probe-m and the
spinlock probe-s for known times, burn-waiter asks for each once the
holder has it and times its own waits.

- counts_exact: under `lockstat on`, `burn lock 12`: probe-m (mutex)
  and probe-s (spin) each taken exactly 24 times, 12 of them contended;
  each lock's total wait within 10% of what the waiter measured, its
  total hold within 10% of what the holder measured, and the table
  sorted by total wait.
- window: `lockstat 200` counts 200 ms of the idle machine (the run
  queues' locks) with the table's header saying so, and stops counting.
- unnamed: the mutex and queue of `burn wait ... unnamed`, zero-filled
  statics never named, are counted under "?".
- profile_off_spin: `profile off` during `burn lock start 20` has
  `[spin probe-s]` entries of the waiter, through burn_lock_waiter, no
  more than the waiter spun, and a header line with the time spun.
- profile_lock: `profile lock 2000 all 64` over all of `burn lock start
  10 3000 profiled` (its rounds wait for the window): at least 90% of
  each lock's delay charged to the holder's function (burn_lock_hold_mutex,
  burn_lock_hold_spin) under [mutex probe-m] and [spin probe-s], each
  lock's total within 10% of what the waiter measured, 10 waits each.
- profile_lock_split: `burn lock start 10 3000 split` (burn-second takes
  probe-m each time the holder frees it, before the waiter can, and keeps
  it 1.5 ms): each mutex wait is split between the holder
  (burn_lock_hold_mutex) and burn-second (burn_lock_hold_second), 10
  waits each, burn-second's share within 10% of its 10 x 1.5 ms, and the
  two together within 10% of what the waiter measured.
- record_lock: `sonde-prof record --lock -d 2000` over all of `burn lock
  start 10 3000 profiled`: `go tool pprof -raw` reads the pprof with the
  two sample types of Go's mutex profile (contentions/count,
  delay/nanoseconds) and period type contentions; at least 90% of each
  lock's delay on samples whose root is [mutex probe-m] / [spin probe-s]
  and that pass through the holder's function, each lock's delay within
  10% of what the waiter measured, 10 contentions each; `report` of the
  kept raw profile to .folded has the lock as the root frame, the
  holder's function in the stack, the same delay in microseconds; and
  to .txt, the kernel's report (20 waits, each lock's entry with its 10
  waits through the holder's function).
- record_lock_stream: `record --lock -d 3000`, past one window, is
  `profile lock stream`: the raw profile it keeps says source=locks
  kind=lock with no drops, and the pprof charges each lock as
  record_lock's does (90% through the holder's function, within 10% of
  the waiter, 10 contentions).
- top_lock: `sonde-prof top --lock` over the same rounds: [mutex probe-m]
  and [spin probe-s] are leaves with delay of their own, the holder's
  functions carry it, the mutex's more than the spinlock's.
- bad_input: errors name what was wrong and the allowed range.

Prints 'PASS name (secs)' or 'FAIL name (secs): reason' and ends with
'N passed, N failed' (nothing retries). Python 3 standard library."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from qemu import ARCHES, NICS, ROOT, Machine, check, free_port  # noqa: E402

ARCH = "x86_64"
LIFETIME = 240.0
ICOUNT = "shift=1,sleep=off"         # as offcpu_tests.py
ROW = re.compile(r"^(\S+) +(spin|mutex) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+)\s*$", re.M)
HEADER = re.compile(r"^lockstat: (on|off), (\d+) ms counted, (\d+) lock names; times in ns, "
                    r"clock unit (\d+) ns", re.M)
BURN = re.compile(r"burn lock: rounds (\d+) mutex waited (\d+) ns held (\d+) ns "
                  r"spin waited (\d+) ns held (\d+) ns")
PROF = os.path.join(ROOT, "build", "host", "sonde-prof")
TESTS = []


def test(fn):
    TESTS.append((fn.__name__[2:], fn))
    return fn


class World:
    m = None

    @classmethod
    def get(cls):
        if cls.m is None:
            # The UDP shell: sonde-prof record asks it (record_lock).
            port = free_port()
            fwd = "user,id=n0,hostfwd=udp:127.0.0.1:%d-:9000" % port
            cls.m = Machine(smp=2, arch=ARCH, lifetime=LIFETIME, name=ARCH + "-locks",
                            icount=ICOUNT, append="udpshell=9000",
                            extra=["-netdev", fwd, "-device", NICS[ARCH]])
            cls.m.target = "127.0.0.1:%d" % port
            cls.m.boot(90)
        return cls.m


def table(text):
    """The table's rows: {(name, kind): (acq, cont, wait, wait_max, wait_avg, hold, hold_max)},
    and the rows' order."""
    rows, order = {}, []
    for g in ROW.finditer(text):
        key = (g.group(1), g.group(2))
        rows[key] = tuple(int(g.group(i)) for i in range(3, 10))
        order.append(key)
    return rows, order


def within(got, want, pct):
    return want > 0 and abs(got - want) <= want * pct / 100.0


@test
def t_counts_exact(ctx):
    m = World.get()
    m.cmd("lockstat off", 30)
    m.cmd("lockstat reset", 30)
    m.cmd("lockstat on", 30)
    out = m.cmd("burn lock 12", 120)
    m.cmd("lockstat off", 30)
    text = m.cmd("lockstat", 30)
    b = BURN.search(out)
    check(b, "burn lock said %r" % out.strip()[-300:])
    rounds = int(b.group(1))
    mw, mh, sw, sh = (int(b.group(i)) for i in (2, 3, 4, 5))
    h = HEADER.search(text)
    check(h and h.group(1) == "off", "no header saying off: %r" % text[:300])
    rows, order = table(text)
    for key, waited, held in ((("probe-m", "mutex"), mw, mh), (("probe-s", "spin"), sw, sh)):
        check(key in rows, "no row for %s %s in %r" % (key + (text[-800:],)))
        acq, cont, wait, wmax, wavg, hold, hmax = rows[key]
        check(acq == 2 * rounds, "%s %s: %d acquisitions, not %d" % (key + (acq, 2 * rounds)))
        check(cont == rounds, "%s %s: %d contentions, not %d" % (key + (cont, rounds)))
        check(within(wait, waited, 10), "%s %s: wait total %d ns, the waiter measured %d ns"
              % (key + (wait, waited)))
        check(within(hold, held, 10), "%s %s: hold total %d ns, the holder measured %d ns"
              % (key + (hold, held)))
        check(wmax <= wait and wavg == wait // cont and hmax <= hold,
              "%s %s: max/avg do not fit the totals: %r" % (key + (rows[key],)))
    waits = [rows[k][2] for k in order]
    check(waits == sorted(waits, reverse=True), "not sorted by total wait: %r" % order)


@test
def t_window(ctx):
    m = World.get()
    m.cmd("lockstat off", 30)
    text = m.cmd("lockstat 200", 60)
    h = HEADER.search(text)
    check(h, "no header: %r" % text[:300])
    check(h.group(1) == "off", "the window left lockstat counting: %r" % h.group(0))
    check(abs(int(h.group(2)) - 200) <= 20, "window of %s ms counted, not about 200" % h.group(2))
    rows, _ = table(text)
    rq = rows.get(("runqueue", "spin"))
    check(rq and rq[0] > 0, "no run-queue acquisitions in an idle window: %r" % text[-600:])
    again = table(m.cmd("lockstat", 30))[0].get(("runqueue", "spin"))
    check(again == rq, "counts moved after the window ended: %r then %r" % (rq, again))


@test
def t_unnamed(ctx):
    m = World.get()
    m.cmd("lockstat off", 30)
    m.cmd("lockstat reset", 30)
    m.cmd("lockstat on", 30)
    out = m.cmd("burn wait 300 unnamed", 30)
    check("pids" in out, "burn wait said %r" % out.strip()[-200:])
    m.cmd("echo wait", 30)
    text, t0 = "", time.time()
    # Its phases (10 ms on the CPU, 20 ms asleep, 30 on the queue, 15 on
    # the mutex) come round every 75 ms of guest time: poll until one
    # mutex phase is counted, 60 s of wall time at most.
    while time.time() - t0 < 60:
        text = m.cmd("lockstat", 30)
        if ("?", "mutex") in table(text)[0]:
            break
    m.cmd("lockstat off", 30)
    rows, _ = table(text)
    check(("?", "mutex") in rows and rows[("?", "mutex")][0] > 0,
          "the unnamed mutex is not counted as '?': %r" % text[-800:])
    check(("?", "spin") in rows, "the unnamed queue's lock is not counted as '?'")


SPIN_ENTRY = re.compile(r"^(\d+\.\d)% (\d+\.\d{3}) ms \[spin probe-s\] task (\d+) (\S+)$")


@test
def t_profile_off_spin(ctx):
    m = World.get()
    m.cmd("lockstat off", 30)
    out = m.cmd("burn lock start 20", 30)
    g = re.search(r"pids (\d+) (\d+)", out)
    check(g, "burn lock start said %r" % out.strip()[-200:])
    waiter = int(g.group(2))
    rep = m.cmd("profile off 500 all 64", 60)
    done = BURN.search(m.cmd("burn lock wait", 120))
    check(done, "burn lock wait printed no line")
    spun = int(done.group(4))
    lines = rep.splitlines()
    spin_ms, chain_ok = 0.0, False
    for i, line in enumerate(lines):
        e = SPIN_ENTRY.match(line)
        if not e:
            continue
        check(int(e.group(3)) == waiter, "[spin probe-s] charged to pid %s, not the waiter %d"
              % (e.group(3), waiter))
        spin_ms += float(e.group(2))
        tail = []
        for l in lines[i + 1:]:
            if not l.startswith("        "):
                break
            tail.append(l.strip())
        chain_ok |= any(t.startswith("<- burn_lock_waiter+") for t in tail)
    check(spin_ms > 0, "no [spin probe-s] entry in profile off: %r" % rep[-1200:])
    check(chain_ok, "no [spin probe-s] chain through burn_lock_waiter: %r" % rep[-1200:])
    check("spun " in rep, "the header does not say the time spun: %r" % rep[:400])
    # The window may miss the run's first rounds, never add to them.
    check(spin_ms * 1e6 <= spun * 1.1,
          "%.3f ms spun in the profile, the waiter spun only %d ns in all" % (spin_ms, spun))


LOCK_ENTRY = re.compile(r"^(\d+\.\d)% (\d+\.\d{3}) ms \[(mutex|spin) (\S+)\] (\d+) waits, "
                        r"held by task (\d+) (\S+)$")


def lock_entries(rep):
    """[(kind, name, ms, waits, pid, [callers])] of a profile lock report."""
    lines, out = rep.splitlines(), []
    for i, line in enumerate(lines):
        e = LOCK_ENTRY.match(line)
        if not e:
            continue
        tail = []
        for l in lines[i + 1:]:
            if not l.startswith("        "):
                break
            tail.append(l.strip())
        out.append((e.group(3), e.group(4), float(e.group(2)), int(e.group(5)),
                    int(e.group(6)), tail))
    return out


@test
def t_profile_lock(ctx):
    m = World.get()
    m.cmd("lockstat off", 30)
    out = m.cmd("burn lock start 10 3000 profiled", 30)
    g = re.search(r"pids (\d+) (\d+)", out)
    check(g, "burn lock start said %r" % out.strip()[-200:])
    holder = int(g.group(1))
    rep = m.cmd("profile lock 2000 all 64", 90)
    done = BURN.search(m.cmd("burn lock wait", 120))
    check(done, "burn lock wait printed no line")
    check(re.search(r"^lock profiled 2000 ms: ", rep, re.M), "no header: %r" % rep[:300])
    entries = lock_entries(rep)
    for kind, name, fn, waited in (("mutex", "probe-m", "burn_lock_hold_mutex", int(done.group(2))),
                                   ("spin", "probe-s", "burn_lock_hold_spin", int(done.group(4)))):
        mine = [e for e in entries if e[0] == kind and e[1] == name]
        check(mine, "no [%s %s] entry: %r" % (kind, name, rep[-1500:]))
        total = sum(e[2] for e in mine) * 1e6
        held = sum(e[2] for e in mine if e[4] == holder and
                   any(t.startswith("<- %s+" % fn) for t in e[5])) * 1e6
        waits = sum(e[3] for e in mine if e[4] == holder)
        check(held >= 0.9 * total, "[%s %s]: %.0f ns of %.0f charged to %s of pid %d: %r"
              % (kind, name, held, total, fn, holder, rep[-1500:]))
        check(within(total, waited, 10), "[%s %s]: %.0f ns charged, the waiter measured %d ns"
              % (kind, name, total, waited))
        check(waits == 10, "[%s %s]: %d waits charged to the holder, not 10" % (kind, name, waits))
    out = m.cmd("profile lock 2001", 30)
    check("profile: window 2001 out of range (1-2000 ms)" in out, "profile lock 2001 said %r" % out)


@test
def t_profile_lock_split(ctx):
    m = World.get()
    m.cmd("lockstat off", 30)
    out = m.cmd("burn lock start 10 3000 split", 30)
    g = re.search(r"pids (\d+) (\d+) (\d+)", out)
    check(g, "burn lock start said %r" % out.strip()[-200:])
    holder, second = int(g.group(1)), int(g.group(3))
    rep = m.cmd("profile lock 2000 all 64", 90)
    done = BURN.search(m.cmd("burn lock wait", 120))
    check(done, "burn lock wait printed no line")
    waited = int(done.group(2))
    mutex = [e for e in lock_entries(rep) if e[0] == "mutex" and e[1] == "probe-m"]
    parts = {}
    for pid, fn in ((holder, "burn_lock_hold_mutex"), (second, "burn_lock_hold_second")):
        mine = [e for e in mutex if e[4] == pid and any(t.startswith("<- %s+" % fn) for t in e[5])]
        parts[pid] = sum(e[2] for e in mine) * 1e6
        waits = sum(e[3] for e in mine)
        check(waits == 10, "%s (pid %d) charged %d waits, not 10: %r" % (fn, pid, waits, rep[-1500:]))
    check(within(parts[second], 10 * 1.5e6, 10),
          "burn-second charged %.0f ns, it held the mutex 10 x 1.5 ms" % parts[second])
    check(parts[holder] > 0, "the holder charged nothing: %r" % rep[-1500:])
    check(within(parts[holder] + parts[second], waited, 10),
          "%.0f + %.0f ns charged, the waiter measured %d ns" % (parts[holder], parts[second], waited))


def check_charges(rows, done, text):
    """Each probe lock's delay in a lock pprof (pprof_raw's rows): at least
    90% through the holder's function, within 10% of what the waiter
    measured (done: burn lock wait's line), 10 contentions. Each lock's
    root ("[mutex probe-m]") -> (the holder's function, its delay)."""
    by = {}
    for kind, name, fn, waited in (("mutex", "probe-m", "burn_lock_hold_mutex", int(done.group(2))),
                                   ("spin", "probe-s", "burn_lock_hold_spin", int(done.group(4)))):
        root = "[%s %s]" % (kind, name)
        mine = [(v, names) for v, names in rows if names and names[-1] == root]
        check(mine, "no sample with root %s: %s" % (root, text[-1500:]))
        total = sum(v[1] for v, _ in mine)
        held = sum(v[1] for v, names in mine if fn in names)
        check(held >= 0.9 * total, "%s: %d ns of %d on %s: %s" % (root, held, total, fn, text[-1500:]))
        check(within(total, waited, 10), "%s: %d ns of delay, the waiter measured %d ns"
              % (root, total, waited))
        waits = sum(v[0] for v, names in mine if fn in names)
        check(waits == 10, "%s: %d contentions through %s, not 10" % (root, waits, fn))
        by[root] = (fn, total)
    return by


def pprof_raw(path, tmp):
    """(sample types line, period type line, [(values, [names leaf first])]) of
    `go tool pprof -raw`."""
    r = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", path],
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, HOME=tmp))
    check(r.returncode == 0, "go tool pprof -raw: %s" % r.stderr)
    out = r.stdout
    ptype = re.search(r"^PeriodType: (.*)$", out, re.M)
    samples = out.split("Samples:\n", 1)[1].split("Locations", 1)[0].splitlines()
    locs, at = {}, None
    for line in out.split("Locations\n", 1)[1].split("Mappings", 1)[0].splitlines():
        g = re.match(r"^\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(\S+(?: \S+\])?)", line)
        if g:
            at = locs[g.group(1)] = [g.group(2)]
        elif at is not None and line.strip():
            at.append(line.split()[0])      # a frame inlined there, innermost first
    rows = []
    for line in samples[1:]:
        g = re.match(r"^\s+(\d+)\s+(\d+): ([\d ]+)$", line)
        if g:
            rows.append(((int(g.group(1)), int(g.group(2))),
                         [n for x in g.group(3).split() for n in locs.get(x, ["?"])]))
    return samples[0].replace("[dflt]", "").strip() if samples else "", ptype.group(1) if ptype else "", rows, out


@test
def t_record_lock(ctx):
    m = World.get()
    m.cmd("lockstat off", 30)
    tmp = tempfile.mkdtemp(prefix="sonde-lock-test.")
    try:
        out = m.cmd("burn lock start 10 3000 profiled", 30)
        check(re.search(r"pids (\d+) (\d+)", out), "burn lock start said %r" % out.strip()[-200:])
        pb, raw = os.path.join(tmp, "lock.pb.gz"), os.path.join(tmp, "lock.raw")
        r = subprocess.run([PROF, "record", "--lock", "-d", "2000", "-t", "60", "-e",
                            ARCHES[ARCH]["kernel"], "-r", raw, "-o", pb, m.target],
                           capture_output=True, text=True, timeout=180)
        done = BURN.search(m.cmd("burn lock wait", 120))
        check(r.returncode == 0, "record --lock: exit %d: %s" % (r.returncode, r.stderr))
        check(done, "burn lock wait printed no line")
        types, ptype, rows, text = pprof_raw(pb, tmp)
        check(types == "contentions/count delay/nanoseconds", "sample types %r: %s" % (types, text[:600]))
        check(ptype == "contentions count", "period type %r" % ptype)
        folded = os.path.join(tmp, "lock.folded")
        r = subprocess.run([PROF, "report", "-i", raw, "-e", ARCHES[ARCH]["kernel"], "-o", folded],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "report -o .folded: exit %d: %s" % (r.returncode, r.stderr))
        lines = [l.rsplit(" ", 1) for l in open(folded).read().splitlines()]
        for root, (fn, total) in check_charges(rows, done, text).items():
            us = sum(int(c) for s, c in lines if s.split(";")[0] == root)
            us_fn = sum(int(c) for s, c in lines if s.split(";")[0] == root and fn in s.split(";"))
            check(within(us * 1000, total, 2), "%s folded %d us, pprof %d ns" % (root, us, total))
            check(us_fn >= 0.9 * us, "%s folded: %d us of %d through %s" % (root, us_fn, us, fn))
        txt = os.path.join(tmp, "lock.txt")
        r = subprocess.run([PROF, "report", "-i", raw, "-e", ARCHES[ARCH]["kernel"], "-o", txt],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "report -o .txt: exit %d: %s" % (r.returncode, r.stderr))
        rep = open(txt).read()
        check(re.match(r"lock profiled 2000 ms: [\d.]+ ms of waits charged to their holders, "
                       r"20 waits, ", rep), "report .txt header: %r" % rep[:300])
        for root, fn in (("[mutex probe-m]", "burn_lock_hold_mutex"), ("[spin probe-s]", "burn_lock_hold_spin")):
            check(re.search(r"^[\d.]+%% [\d.]+ ms %s 10 waits, held by task \d+ .*\n(        <- .*\n)*"
                            r"        <- %s\+0x" % (re.escape(root), fn), rep, re.M),
                  "report .txt: no %s entry through %s: %r" % (root, fn, rep[:1500]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@test
def t_record_lock_stream(ctx):
    """Past 2 s, record --lock is `profile lock stream`: the same charges
    through the stream's lock records."""
    m = World.get()
    tmp = tempfile.mkdtemp(prefix="sonde-lockstream-")
    try:
        out = m.cmd("burn lock start 10 3000 profiled", 30)
        check(re.search(r"pids (\d+) (\d+)", out), "burn lock start said %r" % out.strip()[-200:])
        pb, raw = os.path.join(tmp, "lock.pb.gz"), os.path.join(tmp, "lock.raw")
        r = subprocess.run([PROF, "record", "--lock", "-d", "3000", "-t", "60", "-e",
                            ARCHES[ARCH]["kernel"], "-r", raw, "-o", pb, m.target],
                           capture_output=True, text=True, timeout=180)
        done = BURN.search(m.cmd("burn lock wait", 120))
        check(r.returncode == 0, "record --lock -d 3000: exit %d: %s" % (r.returncode, r.stderr))
        check(done, "burn lock wait printed no line")
        head = open(raw).readline()
        check(re.match(r"# sonde raw build-id=[0-9a-f]{40} source=locks samples=\d+ dropped=0 "
                       r"cpus=\d+ ms=\d+ kind=lock$", head), "the streamed raw header %r" % head)
        types, ptype, rows, text = pprof_raw(pb, tmp)
        check(types == "contentions/count delay/nanoseconds", "sample types %r: %s" % (types, text[:600]))
        check_charges(rows, done, text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@test
def t_top_lock(ctx):
    """`top --lock` (plain lines: stdout is no terminal) over burn lock's
    profiled rounds: the two locks are leaves, the holder's functions
    carry their delay."""
    m = World.get()
    out = m.cmd("burn lock start 10 3000 profiled", 30)
    check(re.search(r"pids (\d+) (\d+)", out), "burn lock start said %r" % out.strip()[-200:])
    top = subprocess.run([PROF, "top", "--lock", "-n", "2", "-w", "30", "-e",
                          ARCHES[ARCH]["kernel"], m.target],
                         capture_output=True, text=True, timeout=60)
    done = BURN.search(m.cmd("burn lock wait", 120))
    check(done, "burn lock wait printed no line")
    last = top.stdout.rsplit("sonde-prof top", 1)[-1]
    rows = {name: (float(s), float(t)) for s, t, name in
            re.findall(r"^ +(\d+\.\d) +(\d+\.\d) +(\S+(?: \S+)?)$", last, re.M)}
    check(top.returncode == 0 and re.search(r" us of lock waits in \d", last),
          "top --lock: exit %d: %s%s" % (top.returncode, top.stdout[-1500:], top.stderr))
    for leaf, fn in (("[mutex probe-m]", "burn_lock_hold_mutex"), ("[spin probe-s]", "burn_lock_hold_spin")):
        check(leaf in rows and rows[leaf][0] > 0, "top --lock: no %s leaf: %s" % (leaf, last[-1500:]))
        check(fn in rows and rows[fn][1] > 0, "top --lock: %s carries no delay: %s" % (fn, last[-1500:]))
    # The mutex's 3 ms holds outweigh the spinlock's 300 us ones.
    check(rows["[mutex probe-m]"][0] > rows["[spin probe-s]"][0],
          "top --lock: mutex %r, spin %r" % (rows["[mutex probe-m]"], rows["[spin probe-s]"]))


@test
def t_bad_input(ctx):
    m = World.get()
    m.cmd("lockstat off", 30)
    for cmd, want in (("lockstat 0", "lockstat: window 0 out of range (1-10000 ms)"),
                      ("lockstat 10001", "lockstat: window 10001 out of range (1-10000 ms)"),
                      ("lockstat sometimes", "lockstat: 'sometimes' is not on, off, reset or a window in ms (1-10000)"),
                      ("lockstat on off", "lockstat: takes one argument: on, off, reset or a window in ms (1-10000)"),
                      ("profile lock stream", "profile: stream needs a port (usage: profile [off|wall|allocs|lock] stream <port> [ms|0] [pid|all])"),
                      ("profile lock stream 9000", "profile: stream goes to the UDP shell client that asks; use it over the UDP shell"),
                      ("burn lock 0", "burn: usage: burn lock [start] <rounds 1-10000> [hold_us 1-100000] | burn lock start <rounds> <hold_us> profiled|split | burn lock wait"),
                      ("burn lock 1 100001", "burn: usage: burn lock [start] <rounds 1-10000> [hold_us 1-100000] | burn lock start <rounds> <hold_us> profiled|split | burn lock wait")):
        out = m.cmd(cmd, 30)
        check(want in out, "%r said %r, not %r" % (cmd, out.strip()[-200:], want))
    m.cmd("lockstat on", 30)
    out = m.cmd("lockstat 10", 30)
    m.cmd("lockstat off", 30)
    check("lockstat: the running table is on" in out, "a window over the running table: %r" % out)


class Ctx:
    def __init__(self, name):
        pass

    def tails(self):
        return runner.quoted_tail(World.m, 0) if World.m else ""

    def finish(self, failed):
        pass


def main(argv):
    global ARCH
    if "--arch" in argv:
        i = argv.index("--arch")
        ARCH = argv[i + 1]
        del argv[i:i + 2]
    if "--list" in argv:
        for name, _ in TESTS:
            print(name)
        return 0
    chosen = runner.select(TESTS, [a for a in argv if not a.startswith("-")])
    return runner.run(chosen, Ctx)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
