#!/usr/bin/env python3
"""The scheduling trace (`trace`, docs/profiling.md) against a live kernel,
on either architecture: x86-64 at -smp 4 on the tick, arm64 at -smp 1 on
the PMU (QEMU 7.2 delivers the arm64 counter's overflow under -icount at
one vCPU only). Both under -icount, so that a slice's length is guest
instructions, never a host that descheduled the vCPU.

usage: python3 tests/system/trace_tests.py [--arch x86_64|arm64] [--list] [NAME...]

One kernel runs `burn pingpong 600000 1000 PP` (two tasks handing a turn
to each other through the queue burn-pp 1000 times a second on CPU PP).

- switches_match_stat: a `trace 500 PP` holds the hand-offs that the
  rate of two `burn pingpong stat` 2 s of guest time apart, just before,
  gives for its window, within 1%, and no CPU dropped a record.
- switches_chain: on each CPU, every switch's entering task is the next
  switch's leaving one; the pair hand off through waitq burn-pp.
- runs_add_up: on each CPU, the tasks' runs plus idle add up to the
  window (to the printed microsecond), and no row ran longer than it.
- tick_slices: the tick is a slice 100 times a second per CPU, each
  positive and shorter than the tick's 10 ms; arm64's samples come from
  the counter and its NMIs are slices too.
- delays_agree: the pair's scheduling delays in the trace and `profile
  latency 500` over the same workload: wakes a second within 5%, the
  median in the same or a neighbouring power-of-two bucket.
- map: `trace 100 PP map` marks the CPU that switched and names the pair.
- raw_matches_stat: `trace 500 PP raw` is uapi/trace_raw.h's grammar to
  the line, and its hand-offs are the stat's rate within 1%, each after
  a wake; the switches chain on each CPU.
- pingpong_drops_nothing: a kernel of its own runs `trace 2000 PP map` over
  `burn pingpong 2000 10000` (10,000 hand-offs a second): no CPU drops a
  record, on either architecture (arm64's NMIs inside the records kept).
- irq_wakes: a second kernel (-smp 2) answers UDP shell commands while
  a `trace 1000` and a `profile off 1000` run: the virtio-rx task's runs
  say the NIC's interrupt woke them, by the name its driver registered
  (virtio-net), and whom it interrupted, and so does `profile off`.
- bad_input: the errors name what was wrong and the allowed range.
- preempted_spinners: two `burn` spinners on the pair's CPU leave it
  `preempted` (the tick's), never `yield`.
- record_trace_txt: `sonde-prof record --trace -d 500 -o X.txt` over the
  second kernel's UDP shell while burn pingpong runs there: the shell's
  timehist rows and summary, runs adding up, the samples' functions
  named from the ELF, and its raw reply (-r) holding the rows' switches.
- record_trace_stream: `record --trace -d 3000`, past one window, is
  `trace stream`: to .json, the pair's 1000 hand-offs a second as runs on
  CPU 1's lane leaving for burn-pp, the wakes as flows that pair, the
  samples named from the ELF; to .pftrace, read by its wire format, the
  pair's sched_switch events and thread names; to .html, the page around
  the JSON; 0 records lost on the wire each time.

Prints 'PASS name (secs)' or 'FAIL name (secs): reason' and ends with
'N passed, N failed' (nothing retries). Python 3 standard library."""
import json
import os
import shutil
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from qemu import ARCHES, Machine, check, free_port, NICS  # noqa: E402

SONDE_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "host", "sonde-sh")
SONDE_PROF = os.path.join(os.path.dirname(SONDE_SH), "sonde-prof")

ARCH = "x86_64"
LIFETIME = 240.0
ICOUNT = "shift=1,sleep=off"
TESTS = []
STAT_SPAN_NS = 2 * 10**9           # the span of the stats' rate

HEAD = re.compile(r"^trace: (\d+\.\d{3}) ms from (\d+) ns on the clock, (\d+) cpus, "
                  r"samples from (.+)$", re.M)
ROW = re.compile(r"^\s*(\d+\.\d{3}) \[(\d{4})\]  (\S+)\s+(\d+\.\d{3})\s+(\d+\.\d{3})\s+"
                 r"(\d+\.\d{3})(\+?)\s+(\S+)(?: (\S+))? => (\S+)(?: \(woken by irq [^)]*\))?$", re.M)
CPU = re.compile(r"^cpu (\d+): busy [\d.]+% \((\d+\.\d{3}) ms\), idle (\d+\.\d{3}) ms, "
                 r"interrupts [\d.]+% \((\d+\.\d{3}) ms\), switches (\d+), wakes (\d+), "
                 r"samples (\d+), dropped (\d+) \((\d+) nested\)\n  slices: (.*)$", re.M)
SLICE = re.compile(r"(\w+) (\d+) \((\d+\.\d{3})-(\d+\.\d{3}) us\)")
# The raw trace (uapi/trace_raw.h), one regex a line.
RAW_HEAD = re.compile(r"^# sonde trace build-id=([0-9a-f]{40}) cpus=(\d+) ms=(\d+) events=(\d+) "
                      r"dropped=(\d+(?:,\d+)*)$")
RAW_TASK = r"(\d+) ([!-:<-~]{1,31})"
RAW_EV = {
    "S": re.compile(r"^S (\d+) (\d+) %s (-|sleep|waitq|mutex|preempted|exit|yield)(?::(\S+))? %s$"
                    % (RAW_TASK, RAW_TASK)),
    "W": re.compile(r"^W (\d+) (\d+) %s %s (\d+)(?: irq=(\d+):(tick|device|ipi|nmi)(?::(\S+))?)?$"
                    % (RAW_TASK, RAW_TASK)),
    "I": re.compile(r"^I (\d+) (\d+) (\d+) (\d+) (tick|device|ipi|nmi)(?: ([a-z0-9._+-]+))? (\d+)$"),
    "P": re.compile(r"^P (\d+) (\d+) %s ([0-9a-f]{1,16})((?: [0-9a-f]{1,16}){0,7})$" % RAW_TASK),
}
STAT = re.compile(r"^burn pingpong: running, rate 1000, handoffs (\d+) at (\d+) ns$", re.M)


def test(fn):
    TESTS.append((fn.__name__[2:], fn))
    return fn


class World:
    """One kernel with burn pingpong running, shared by every test."""
    m = None
    pair = None
    pp = 1

    @classmethod
    def get(cls):
        if cls.m is None:
            smp = 1 if ARCH == "arm64" else 4
            cls.pp = 0 if smp == 1 else 1
            cls.m = Machine(smp=smp, arch=ARCH, lifetime=LIFETIME, name=ARCH + "-trace",
                            icount=ICOUNT)
            cls.m.boot(90)
            # Long enough that no test outlives it, however slow the host:
            # a pair that ends during a window makes fewer wakes than the last.
            out = cls.m.cmd("burn pingpong 600000 1000 %d" % cls.pp, 30)
            g = re.search(r"pids (\d+) (\d+)", out)
            check(g, "burn pingpong did not start: %r" % out)
            cls.pair = {"burn-ping[%s]" % g.group(1), "burn-pong[%s]" % g.group(2)}
            cls.m.cmd("echo settled", 30)
        return cls.m


def trace(m, words, timeout=120):
    out = m.cmd(words, timeout)
    h = HEAD.search(out)
    check(h, "%r printed no header: %r" % (words, out[:300]))
    rows = [dict(t=float(g[0]), cpu=int(g[1]), task=g[2], wait=float(g[3]), delay=float(g[4]),
                 run=float(g[5]), partial=g[6] == "+", left=g[7], name=g[8], next=g[9])
            for g in ROW.findall(out)]
    cpus = {}
    for g in CPU.findall(out):
        slices = {s[0]: (int(s[1]), float(s[2]), float(s[3])) for s in SLICE.findall(g[9])}
        cpus[int(g[0])] = dict(busy=float(g[1]), idle=float(g[2]), irq=float(g[3]),
                               switches=int(g[4]), wakes=int(g[5]), samples=int(g[6]),
                               dropped=int(g[7]), nested=int(g[8]), slices=slices)
    check(cpus, "%r printed no cpu summary: %r" % (words, out[-500:]))
    shown = re.search(r"^(\d+) switches shown", out, re.M)
    check(shown and (words.endswith(" map") or int(shown.group(1)) == len(rows)),
          "%r: %d rows read, the trace says %r" % (words, len(rows), shown and shown.group(0)))
    return dict(ms=float(h.group(1)), t0=int(h.group(2)), source=h.group(4), rows=rows,
                cpus=cpus, out=out)


def check_no_drops(tr):
    for cpu, c in sorted(tr["cpus"].items()):
        check(c["dropped"] == 0 and c["nested"] == 0,
              "cpu %d dropped %d records (%d nested): %r" % (cpu, c["dropped"], c["nested"],
                                                             tr["cpus"]))


def stat(m):
    out = m.cmd("burn pingpong stat", 30)
    g = STAT.search(out)
    check(g, "burn pingpong stat: %r" % out)
    return int(g.group(1)), int(g.group(2))


def pair_rate(m):
    """The pair's hand-offs a ns of guest time, over STAT_SPAN_NS."""
    n0, c0 = stat(m)
    n1, c1 = n0, c0
    for _ in range(120):            # the guest's clock runs ~0.1x the host's
        time.sleep(0.5)
        n1, c1 = stat(m)
        if c1 - c0 >= STAT_SPAN_NS:
            break
    check(c1 - c0 >= STAT_SPAN_NS, "the guest clock moved %d ns in 60 s" % (c1 - c0))
    check((n1 - n0) * 500e6 / (c1 - c0) > 250,
          "the pair handed off %d times in %d ns" % (n1 - n0, c1 - c0))
    return (n1 - n0) / float(c1 - c0)


class Last:
    """The trace of t_switches_match_stat, which the next tests read too,
    and the pair's rate it was measured against."""
    tr = None
    rate = None


def last():
    if Last.tr is None:
        t_switches_match_stat(None)
    return Last.tr


@test
def t_switches_match_stat(ctx):
    m = World.get()
    # The stat's rate over a span of its own, just before: on arm64's
    # one CPU the shell printing the trace holds the pair off, so a span
    # around the trace would count that too. The pair paces itself on an
    # absolute grid (start + k / rate), so its count at a stat is the
    # grid's less how far the pair lags at that instant: a vCPU that
    # has not run for a while lags by up to ~10 hand-offs, 1% of a 1 s
    # span. Over STAT_SPAN_NS of guest time that is about 0.5%, and the
    # 1% bound measures the trace, not where the stats happened to land.
    rate = pair_rate(m)
    tr = trace(m, "trace 500 %d" % World.pp)
    Last.tr, Last.rate = tr, rate
    want = rate * tr["ms"] * 1e6
    got = sum(1 for r in tr["rows"] if r["task"] in World.pair and r["next"] in World.pair)
    check(abs(got - want) <= 0.01 * want,
          "%d switches between the pair in the %.3f ms trace; the stat's rate says %.1f"
          % (got, tr["ms"], want))
    check(all(r["cpu"] == World.pp for r in tr["rows"]),
          "a row of a cpu not asked for: %r" % [r for r in tr["rows"] if r["cpu"] != World.pp][:2])
    # Nothing lost, on either architecture. x86-64 samples on the tick,
    # which never lands inside a record; arm64's counter NMI can land
    # inside a switch's or wake's record being written, and its sample
    # and slice then wait in the CPU's deferral until that record is done
    # (kernel/prof/ring_produce.h): kept, never dropped.
    check_no_drops(tr)


@test
def t_switches_chain(ctx):
    tr = trace(World.get(), "trace 200")
    by = {}
    for r in tr["rows"]:
        by.setdefault(r["cpu"], []).append(r)
    check(World.pp in by, "no switch on cpu %d" % World.pp)
    for cpu, rows in by.items():
        for a, b in zip(rows, rows[1:]):
            check(a["next"] == b["task"],
                  "cpu %d: %s switched to %s at %.3f ms, but %s left next at %.3f ms"
                  % (cpu, a["task"], a["next"], a["t"], b["task"], b["t"]))
            check(a["t"] <= b["t"], "cpu %d: rows out of time order: %r %r" % (cpu, a, b))
    # A hand-off; the shell may preempt either (on arm64's one CPU).
    pair = [r for r in by[World.pp] if r["task"] in World.pair and r["next"] in World.pair]
    check(pair and all(r["left"] == "waitq" and r["name"] == "burn-pp" for r in pair),
          "the pair leave for other reasons: %r" % [r for r in pair
                                                     if r["left"] != "waitq"][:3])


@test
def t_runs_add_up(ctx):
    tr = last()
    for cpu, c in tr["cpus"].items():
        check(abs(c["busy"] + c["idle"] - tr["ms"]) <= 0.002,
              "cpu %d: busy %.3f + idle %.3f ms is not the window's %.3f ms"
              % (cpu, c["busy"], c["idle"], tr["ms"]))
    check(all(r["run"] <= tr["ms"] for r in tr["rows"]), "a run longer than the window")
    # The pair's CPU never idles: a hand-off is a switch from one to the other.
    c = tr["cpus"][World.pp]
    check(c["switches"] >= 450, "cpu %d: %d switches" % (World.pp, c["switches"]))


@test
def t_tick_slices(ctx):
    tr = last()
    want = tr["ms"] / 10.0
    for cpu, c in tr["cpus"].items():
        tick = c["slices"].get("tick")
        check(tick, "cpu %d: no tick slices: %r" % (cpu, c["slices"]))
        n, lo, hi = tick
        check(abs(n - want) <= max(2, 0.02 * want),
              "cpu %d: %d tick slices in %.3f ms (100 a second: %.0f)" % (cpu, n, tr["ms"], want))
        check(lo > 0 and hi < 10000.0, "cpu %d: tick slices %.3f-%.3f us" % (cpu, lo, hi))
    if ARCH == "arm64":
        check("PMU" in tr["source"] or "pmu" in tr["source"].lower(),
              "arm64's samples from %r, not the counter" % tr["source"])
        nmi = tr["cpus"][World.pp]["slices"].get("nmi")
        check(nmi and nmi[0] > 0 and nmi[1] > 0, "no NMI slices: %r" % tr["cpus"])


def bucket(us):
    b = 0
    while us >= (2 << b) and b < 31:
        b += 1
    return b


@test
def t_delays_agree(ctx):
    m = World.get()
    tr = last()
    delays = sorted(r["delay"] * 1000 for r in tr["rows"]
                    if r["task"] in World.pair and r["wait"] > 0)
    check(len(delays) > 250, "%d woken runs of the pair" % len(delays))
    out = m.cmd("profile latency 500", 60)
    g = re.search(r"^cpu %d: (\d+) wakes, max ([\d.]+) ms\n +usecs : count\n((?:.*\n?)*)"
                  % World.pp, out, re.M)
    check(g, "profile latency has no cpu %d: %r" % (World.pp, out[:400]))
    hist = [(int(a), int(n)) for a, n in
            re.findall(r"^ *(\d+) -> \d+ *: (\d+) ", g.group(3), re.M)]
    wakes = int(g.group(1))
    per_ms = len(delays) / tr["ms"]
    # The same workload: the pair's wakes at the trace's rate. The pair
    # paces itself on guest time and falls behind while its vCPU waits
    # its turn in TCG's round robin (7-9% in one window of some runs, 0
    # in the trace's), so a window sees fewer of its wakes, never more.
    check(0.8 * per_ms <= wakes / 500.0 <= 1.05 * per_ms,
          "profile latency %.3f wakes a ms, the trace %.3f" % (wakes / 500.0, per_ms))
    # The median of each.
    half, seen, mb = wakes / 2.0, 0, None
    for lo, n in hist:
        seen += n
        if seen >= half:
            mb = bucket(lo)
            break
    tb = bucket(delays[len(delays) // 2])
    check(mb is not None and abs(mb - tb) <= 1,
          "median delay: bucket %s in profile latency, %d (%.1f us) in the trace"
          % (mb, tb, delays[len(delays) // 2]))


@test
def t_map(ctx):
    tr = trace(World.get(), "trace 100 %d map" % World.pp)
    lines = [ln for ln in tr["out"].splitlines() if re.search(r"\d ms( |$)", ln)
             and "*" in ln]
    check(len(lines) >= 90, "%d map lines for 100 ms of 1000 hand-offs a s" % len(lines))
    legend = set(re.findall(r"=> (\S+)$", tr["out"], re.M))
    check(World.pair <= legend, "the map's legend %r lacks the pair %r" % (legend, World.pair))


@test
def t_raw_matches_stat(ctx):
    """`trace 500 PP raw`: every line in the grammar; the pair's hand-offs
    (switches from one to the other) are what the stat's rate says, within
    1%, each after a wake of the task coming in; on each CPU every
    switch's entering task is the next one's leaving one; nothing is
    dropped but arm64's nested samples (at most 1% of them)."""
    m = World.get()
    # The rate switches_match_stat measured, when it ran: the pair keeps
    # its grid while nothing takes its CPU (the spinners' test comes later).
    rate = Last.rate or pair_rate(m)
    h, evs = raw_trace(m.cmd("trace 500 %d raw" % World.pp, 120).rstrip("\n") + "\n")
    check(h["ms"] == 500, "ms=%d" % h["ms"])
    pids = {t.split("[")[1][:-1] for t in World.pair}
    sw = [e for e in evs if e[0] == "S"]
    pair = [e for e in sw if e[3] in pids and e[7] in pids]
    want = rate * 500e6
    check(abs(len(pair) - want) <= 0.01 * want,
          "%d hand-offs in the raw trace's 500 ms; the stat's rate says %.1f" % (len(pair), want))
    check(all(int(e[2]) == World.pp for e in evs), "an event of a cpu not asked for")
    check(all(e[5] == "waitq" and e[6] == "burn-pp" for e in pair),
          "the pair left for other reasons: %r" % [e for e in pair if e[5] != "waitq"][:3])
    names = {"%s[%s]" % (e[4], e[3]) for e in pair} | {"%s[%s]" % (e[8], e[7]) for e in pair}
    check(names == World.pair, "the pair's names %r, not %r" % (names, World.pair))
    for a, b in zip(sw, sw[1:]):
        check(a[7] == b[3], "%s switched to %s, but %s left next" % (a[4], a[8], b[4]))
    woken = [e for e in evs if e[0] == "W" and e[5] in pids]
    check(len(woken) >= len(pair) - 2, "%d wakes of the pair for %d hand-offs" % (len(woken), len(pair)))
    samples = sum(1 for e in evs if e[0] == "P")
    check(sum(h["drops"]) == 0, "dropped %r" % (h["drops"],))
    print("    %d hand-offs (stat: %.1f), %d wakes of the pair, %d samples, %d slices"
          % (len(pair), want, len(woken), samples, sum(1 for e in evs if e[0] == "I")))


@test
def t_pingpong_drops_nothing(ctx):
    """The issue's workload: `trace 2000` over `burn pingpong 2000
    10000` (10,000 hand-offs a second, each a wake and a switch) drops
    nothing, on a kernel of its own (the shared one's pair runs at 1000
    a second). arm64 samples on the counter's NMI, ~1 kHz, and its
    samples and NMI slices are all there too."""
    m = PingWorld.get()
    out = m.cmd("burn pingpong 2000 10000 %d" % PingWorld.pp, 30)
    check(re.search(r"pids (\d+) (\d+)", out), "burn pingpong did not start: %r" % out)
    # The map view: a short line a switch, where the rows would print
    # 40,000 long ones over the serial line (10 s more of the run).
    tr = trace(m, "trace 2000 %d map" % PingWorld.pp, 300)
    c = tr["cpus"][PingWorld.pp]
    # The pair ran through the window: most of its 2 s overlap it.
    check(c["switches"] >= 15000 and c["wakes"] >= 15000,
          "cpu %d: %d switches, %d wakes in the 2 s trace" % (PingWorld.pp, c["switches"], c["wakes"]))
    check_no_drops(tr)
    if ARCH == "arm64":
        nmi = c["slices"].get("nmi")
        check(nmi and nmi[0] >= 1000 and c["samples"] >= 1000,
              "cpu %d: %d samples, NMI slices %r" % (PingWorld.pp, c["samples"], nmi))
    print("    cpu %d: %d switches, %d wakes, %d samples, 0 dropped"
          % (PingWorld.pp, c["switches"], c["wakes"], c["samples"]))


class PingWorld:
    """A kernel of its own for the 10,000/s ping-pong: x86-64 at -smp 2
    (the pair on CPU 1), arm64 at -smp 1 (its counter's NMI)."""
    m = None
    pp = 1

    @classmethod
    def get(cls):
        if cls.m is None:
            smp = 1 if ARCH == "arm64" else 2
            cls.pp = smp - 1
            cls.m = Machine(smp=smp, arch=ARCH, lifetime=LIFETIME, name=ARCH + "-trace-pp",
                            icount=ICOUNT)
            cls.m.boot(90)
        return cls.m


class NetWorld:
    """A kernel with its UDP shell on a virtio-net NIC, for the wakes its
    interrupt makes."""
    m = None
    port = None
    pair = None                 # net_pair's pids

    @classmethod
    def get(cls):
        if cls.m is None:
            cls.port = free_port()
            nic = NICS[ARCH]
            cls.m = Machine(smp=2, arch=ARCH, lifetime=LIFETIME, name=ARCH + "-trace-net",
                            append="udpshell=9000",
                            extra=["-netdev", "user,id=n0,hostfwd=udp:127.0.0.1:%d-:9000"
                                   % cls.port, "-device", nic])
            cls.m.boot(90)
        return cls.m


def udp_load(port, stop):
    """UDP shell commands from the host, one at a time, until stop is set."""
    while not stop.is_set():
        subprocess.run([SONDE_SH, "-p", str(port), "-t", "5", "127.0.0.1", "echo x"],
                       capture_output=True, timeout=30)


def under_udp(m, port, words):
    stop = threading.Event()
    th = threading.Thread(target=udp_load, args=(port, stop), daemon=True)
    th.start()
    try:
        return m.cmd(words, 120)
    finally:
        stop.set()
        th.join(40)


@test
def t_irq_wakes(ctx):
    m = NetWorld.get()
    out = under_udp(m, NetWorld.port, "trace 1000")
    # The interrupt by its device's name (a shared line: the names joined
    # by '+'), never the bare vector: the NIC's driver registered it.
    rx = re.findall(r"^.*\] +virtio-rx\[\d+\] .* \(woken by irq (\S+) on CPU (\d+), "
                    r"during (\S+)\)$", out, re.M)
    check(rx, "no virtio-rx run woken by an interrupt in the trace: %r"
          % [ln for ln in out.splitlines() if "virtio-rx" in ln][:4])
    check(all("virtio-net" in r[0].split("+") for r in rx),
          "virtio-rx woken by an interrupt not named virtio-net: %r" % sorted({r[0] for r in rx}))
    out = under_udp(m, NetWorld.port, "profile off 1000")
    wirq = re.findall(r"^        woken by irq (\S+) on CPU \d+, during \d+ \S+$", out, re.M)
    check(any("virtio-net" in w.split("+") for w in wirq),
          "profile off names no virtio-net interrupt as a waker: %r" % out[:1200])
    print("    virtio-rx woken by irq %s (trace), %s (profile off)"
          % ("/".join(sorted({r[0] for r in rx})), "/".join(sorted(set(wirq)))))


@test
def t_bad_input(ctx):
    m = World.get()
    top = 0 if ARCH == "arm64" else 3
    for cmd, want in (("trace 0", "trace: window 0 out of range (1-2000 ms)"),
                      ("trace 2001", "trace: window 2001 out of range (1-2000 ms)"),
                      ("trace soon", "trace: 'soon' is not a window (1-2000 ms)"),
                      ("trace 10 9", "trace: cpu '9' is not an online cpu (0-%d)" % top),
                      ("trace 10 0,", "trace: a cpu list ends with a cpu, not ','"),
                      ("trace map 10", "trace: 'map' must be the last argument"),
                      ("trace raw 10", "trace: 'raw' must be the last argument"),
                      ("trace 10 0 1 map", "trace: too many arguments")):
        out = m.cmd(cmd, 30)
        check(want in out, "%r said %r, not %r" % (cmd, out.strip()[-200:], want))


@test
def t_preempted_spinners(ctx):
    """Two CPU-bound tasks on the pair's CPU share it by the tick's
    preemption: their switches say `preempted`, never `yield` (which
    only a task that gives its CPU up itself says), and the pair's
    hand-offs still go through their queue."""
    m = World.get()
    cpu = World.pp
    out = m.cmd("burn 1500 %d,%d" % (cpu, cpu), 30)
    g = re.search(r"pids (\d+) (\d+)", out)
    check(g, "burn did not start: %r" % out)
    spin = set(g.groups())
    tr = trace(m, "trace 300 %d" % cpu)
    mine = [r for r in tr["rows"] if re.search(r"\[(\d+)\]$", r["task"]) and
            re.search(r"\[(\d+)\]$", r["task"]).group(1) in spin]
    check(len(mine) >= 10, "the spinners switched %d times in 300 ms: %r" % (len(mine), tr["rows"][:5]))
    check(all(r["left"] == "preempted" for r in mine),
          "a spinner left for %r" % sorted({r["left"] for r in mine}))
    check(all(r["left"] != "yield" for r in tr["rows"] if r["task"] in World.pair),
          "the pair yielded: %r" % [r for r in tr["rows"] if r["left"] == "yield"][:2])
    m.cmd("burn stop", 30)


def raw_trace(text):
    """A raw trace read as strictly as uapi/trace_raw.c reads it: the
    header, then each event by its grammar, CPUs below cpus=, times in
    order, events= lines. Returns (header, events) with each event a
    tuple of its kind and its regex groups."""
    lines = text.split("\n")
    check(lines and lines[-1] == "", "the raw trace does not end with a newline: %r" % text[-80:])
    h = RAW_HEAD.match(lines[0])
    check(h, "not a raw trace header: %r" % lines[0][:200])
    cpus = int(h.group(2))
    drops = [int(d) for d in h.group(5).split(",")]
    check(len(drops) == cpus, "dropped= has %d numbers for cpus=%d" % (len(drops), cpus))
    evs, last = [], 0
    for ln in lines[1:-1]:
        g = RAW_EV.get(ln[:1]) and RAW_EV[ln[:1]].match(ln)
        check(g, "a line outside the grammar: %r" % ln)
        t, cpu = int(g.group(1)), int(g.group(2))
        check(cpu < cpus and t >= last, "cpu or time order broken at %r" % ln)
        last = t
        evs.append((ln[0],) + g.groups())
    check(len(evs) == int(h.group(4)), "%d events, events=%s" % (len(evs), h.group(4)))
    return dict(build_id=h.group(1), cpus=cpus, ms=int(h.group(3)), drops=drops), evs


TXT_CPU = re.compile(r"^cpu (\d+): busy [\d.]+% \((\d+\.\d{3}) ms\), idle (\d+\.\d{3}) ms, "
                     r"interrupts [\d.]+% \((\d+\.\d{3}) ms\), switches (\d+), wakes (\d+), "
                     r"samples (\d+), dropped (\d+)\n  slices: .*\n  longest: .*\n"
                     r"  hottest: (.*)$", re.M)


def elf_functions():
    out = subprocess.run(["nm", ARCHES[ARCH]["kernel"]], capture_output=True, text=True,
                         timeout=60).stdout
    return {ln.split()[2] for ln in out.splitlines() if len(ln.split()) == 3}


def net_pair(m):
    """The second kernel's pair (burn pingpong at 1000/s on CPU 1), started
    by the first test that wants it and shared by the next (`burn stop`
    stops spinners, not the pair): its two pids."""
    if NetWorld.pair is None:
        out = m.cmd("burn pingpong 600000 1000 1", 30)
        g = re.search(r"pids (\d+) (\d+)", out)
        check(g, "burn pingpong did not start: %r" % out)
        NetWorld.pair = g.groups()
    return NetWorld.pair


def pb_fields(buf):
    """A protobuf message's fields as (number, wire type, value): varints
    as ints, length-delimited as bytes (the wire format, no schema)."""
    out, i = [], 0
    while i < len(buf):
        key, i = pb_varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = pb_varint(buf, i)
        elif wt == 2:
            n, i = pb_varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        out.append((num, wt, v))
    return out


def pb_varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def pftrace_switches(path):
    """(next_comm of every sched_switch, the thread names), from a
    .pftrace read by the field numbers of tools/output/perfetto.proto:
    Trace.packet 1; TracePacket.ftrace_events 1, track_descriptor 60;
    FtraceEventBundle.event 2; FtraceEvent.sched_switch 4;
    SchedSwitch.next_comm 5; TrackDescriptor.thread 4, thread_name 5."""
    nexts, threads = [], set()
    for num, wt, pkt in pb_fields(open(path, "rb").read()):
        if num != 1 or wt != 2:
            continue
        for pn, pw, pv in pb_fields(pkt):
            if pn == 1 and pw == 2:
                for bn, bw, ev in pb_fields(pv):
                    if bn == 2 and bw == 2:
                        for en, ew, sw in pb_fields(ev):
                            if en == 4 and ew == 2:
                                nexts += [v.decode() for n, w, v in pb_fields(sw) if n == 5]
            elif pn == 60 and pw == 2:
                for tn, tw, tv in pb_fields(pv):
                    if tn == 4 and tw == 2:
                        threads |= {v.decode() for n, w, v in pb_fields(tv) if n == 5}
    return nexts, threads


@test
def t_record_trace_stream(ctx):
    """Past 2 s `record --trace` is `trace stream`: over burn pingpong at
    1000 hand-offs a second, -d 3000 to .json (Chrome trace events: the
    pair's runs on CPU 1's lane, as many as its hand-offs, each left for
    the burn-pp queue; the wakes as flows that pair; the samples' frames
    named from the ELF), to .pftrace (read by the wire format: the
    pair's sched_switch events and thread names) and to .html (the page
    around the same JSON); nothing lost on the wire."""
    m = NetWorld.get()
    net_pair(m)
    tmp = tempfile.mkdtemp(prefix="sonde-trace-stream-")
    try:
        got = {}
        for ext in ("json", "pftrace", "html"):
            f = os.path.join(tmp, "t." + ext)
            r = subprocess.run([SONDE_PROF, "record", "--trace", "-d", "3000", "-e",
                                ARCHES[ARCH]["kernel"], "-o", f, "127.0.0.1:%d" % NetWorld.port],
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 0, "record --trace -d 3000 -o .%s: exit %d: %s"
                  % (ext, r.returncode, r.stderr))
            lost = re.search(r"events in (\d+) ms, (\d+) dropped in the kernel, (\d+) lost on the "
                             r"wire", r.stderr)
            check(lost and lost.group(3) == "0", "record --trace -o .%s: %r" % (ext, r.stderr))
            got[ext] = f
        doc = json.load(open(got["json"]))
        page = open(got["html"]).read()
        nexts, threads = pftrace_switches(got["pftrace"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    evs = doc["traceEvents"]
    lane = [e for e in evs if e.get("ph") == "M" and e["args"].get("name") == "CPU 1"]
    check(lane, "no lane for CPU 1")
    pair = ("burn-ping", "burn-pong")
    runs = [e for e in evs if e.get("ph") == "X" and e.get("cat") == "run" and e["name"] in pair
            and e["pid"] == lane[0]["pid"]]
    ms = doc["otherData"]["ms"]
    check(len(runs) >= 0.9 * ms, "%d runs of the pair in %d ms at 1000 hand-offs/s" % (len(runs), ms))
    waitq = [e for e in runs if e["args"]["left"] == "waitq:burn-pp"]
    check(len(waitq) >= 0.99 * (len(runs) - 2), "%d of %d runs left for waitq:burn-pp"
          % (len(waitq), len(runs)))
    flows = [e for e in evs if e.get("cat") == "wake"]
    starts = sorted(e["id"] for e in flows if e["ph"] == "s")
    check(len(starts) >= len(runs) - 2 and starts == sorted(e["id"] for e in flows if e["ph"] == "f"),
          "%d wake flows' starts for %d runs, their ends apart" % (len(starts), len(runs)))
    funcs = elf_functions()
    frames = {f["name"] for f in doc["stackFrames"].values()}
    # Every frame named from the ELF (inlined calls too, which nm does not
    # list), the pair's task function among them.
    check(frames and not any(f.startswith("0x") for f in frames) and "burn_pp_task" in frames
          and len(frames & funcs) >= len(frames) // 2,
          "the samples' frames %r" % sorted(frames)[:12])
    check(sum(1 for n in nexts if n in pair) >= 0.9 * ms and set(pair) <= threads,
          "the .pftrace: %d switches into the pair, threads %r" %
          (sum(1 for n in nexts if n in pair), sorted(threads)[:8]))
    check('id="sonde-trace"' in page and '"traceEvents"' in page, "the .html holds no trace")
    print("    %d runs of the pair in %d ms, %d wake flows, %d .pftrace switches into it"
          % (len(runs), ms, len(starts), sum(1 for n in nexts if n in pair)))


@test
def t_record_trace_txt(ctx):
    """`sonde-prof record --trace -d 500 -o X.txt` over the UDP shell of a
    kernel running burn pingpong: the shell's timehist rows (the pair
    handing off through burn-pp), each CPU's summary adding up to the
    window with as many switches as its rows, the samples' functions
    named from the ELF, and the raw reply (-r) with its wakes."""
    m = NetWorld.get()
    ping, pong = net_pair(m)
    pair = {"burn-ping[%s]" % ping, "burn-pong[%s]" % pong}
    tmp = tempfile.mkdtemp(prefix="sonde-trace-")
    txt, raw = os.path.join(tmp, "t.txt"), os.path.join(tmp, "t.raw")
    try:
        r = subprocess.run([SONDE_PROF, "record", "--trace", "-d", "500", "-e",
                            ARCHES[ARCH]["kernel"], "-o", txt, "-r", raw,
                            "127.0.0.1:%d" % NetWorld.port], capture_output=True, text=True,
                           timeout=120)
        check(r.returncode == 0, "record --trace exit %d: %s" % (r.returncode, r.stderr))
        text, rawtext = open(txt).read(), open(raw).read()
    finally:
        for f in (txt, raw):
            if os.path.exists(f):
                os.unlink(f)
        os.rmdir(tmp)
    h = re.match(r"^trace: (\d+\.\d{3}) ms, (\d+) cpus, kernel 127\.0\.0\.1:%d, build-id "
                 r"([0-9a-f]{40})$" % NetWorld.port, text, re.M)
    check(h, "no header: %r" % text[:200])
    window = float(h.group(1))
    rows = [dict(cpu=int(g[1]), task=g[2], left=g[7], name=g[8], next=g[9])
            for g in ROW.findall(text)]
    shown = re.search(r"^(\d+) switches shown", text, re.M)
    check(shown and int(shown.group(1)) == len(rows), "%d rows, %r" % (len(rows), shown))
    hand = [r for r in rows if r["task"] in pair and r["next"] in pair]
    # Without -icount a vCPU the host held off can come back to both of
    # the pair runnable, and the tick then preempts one for the other: a
    # few such hand-offs, never most.
    other = [r for r in hand if not (r["left"] == "waitq" and r["name"] == "burn-pp")]
    check(len(hand) >= 450 and len(other) <= len(hand) // 100,
          "%d hand-offs of the pair in 500 ms, %d not through burn-pp: %r"
          % (len(hand), len(other), other[:3]))
    cpus = {int(c[0]): c for c in TXT_CPU.findall(text)}
    check(len(cpus) == int(h.group(2)), "%d cpu summaries for %s cpus" % (len(cpus), h.group(2)))
    funcs = elf_functions()
    for cpu, c in cpus.items():
        check(abs(float(c[1]) + float(c[2]) - window) <= 0.002,
              "cpu %d: busy %s + idle %s ms is not the window's %.3f" % (cpu, c[1], c[2], window))
        check(int(c[4]) == sum(1 for r in rows if r["cpu"] == cpu),
              "cpu %d: %s switches, %d rows" % (cpu, c[4], sum(1 for r in rows if r["cpu"] == cpu)))
        named = re.findall(r"(?:^|; )(\S+) \d+", c[8])
        check(int(c[6]) == 0 or (named and all(f in funcs for f in named)),
              "cpu %d: samples in %r, not functions of the ELF" % (cpu, c[8]))
    check(int(cpus[1][6]) > 0, "no samples on the pair's cpu: %r" % (cpus[1],))
    rh, evs = raw_trace(rawtext)
    check(rh["build_id"] == h.group(3), "the raw trace's build id %s" % rh["build_id"])
    check(sum(1 for e in evs if e[0] == "S") == len(rows), "the raw trace's switches are not the rows")
    # Each hand-off through burn-pp follows the wake of the task it hands
    # to, but for two: the first one's wake may fall before the window
    # opened, and after a tick preempted one of the pair between its wake
    # and its wait, the other passes the turn to a task still runnable (no
    # wake) and then waits, handing back to it through burn-pp.
    through = len(hand) - len(other)
    woken = sum(1 for e in evs if e[0] == "W" and e[5] in (ping, pong))
    check(woken >= through - len(other) - 1,
          "%d wakes of the pair for %d hand-offs through burn-pp, %d preempted"
          % (woken, through, len(other)))
    print("    %d rows, %d hand-offs; cpu 1 in %s" % (len(rows), len(hand), cpus[1][8]))


class Ctx:
    def __init__(self, name):
        pass

    def tails(self):
        return "".join(runner.quoted_tail(w.m, 0) for w in (World, PingWorld, NetWorld) if w.m)

    def finish(self, failed):
        pass


def set_arch(arch):
    global ARCH
    ARCH = arch


def main(argv):
    return runner.main(argv, TESTS, Ctx, set_arch)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
