#!/usr/bin/env python3
"""Sonde arm64 system tests: boot build/arm64/kernel.elf on QEMU virt
(GICv3, cortex-a72, TCG) and drive its serial shell.

usage: python3 tests/system/arm64_tests.py [--list] [NAME...]

  With no NAME, runs every test; a NAME selects by exact name or by
  shell-style pattern ('panic_*'). Prints 'PASS name (secs)' or
  'FAIL name (secs): reason' plus the serial tail, and ends with exactly
  'N passed, N failed'; the exit status is non-zero if any test failed (a
  test that cannot run fails; nothing is skipped). Needs
  build/arm64/kernel.elf (make ARCH=arm64) and qemu-system-aarch64.
  Python 3 standard library only. As for run.py, the QEMU driver is
  tests/system/qemu.py, the output parsers are tests/system/parse.py and
  the loop that runs the tests is tests/system/runner.py.

Read-only tests share one 4-CPU machine (and a pmu=off one for the tick's
figures); panics and boot parameters get machines of their own. Every QEMU has a bounded lifetime, is killed by its
own pid when its test (or the run) ends, and the whole run takes well
under 3 minutes.
"""
import fnmatch
import os
import re
import sys
import time

sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parse as P  # noqa: E402
import console_checks  # noqa: E402
import runner  # noqa: E402
from shell_checks import check_profile_bad_input, checked_profile, expect_answers  # noqa: E402
from qemu import ARCHES, Fail, Machine, check  # noqa: E402

BURN_CHAIN = ["burn_spin", "burn_inner", "burn_middle", "burn_outer", "burn_task"]


# ---- machines and helpers ----------------------------------------------

def boot(name, **kw):
    """A booted arm64 machine (qemu.Machine: virt with GICv3, cortex-a72
    unless kw says otherwise), with the lifetime every QEMU here gets."""
    m = Machine(arch="arm64", lifetime=240.0, name=name, **kw)
    m.boot()
    return m


SHARED = {}


def shared(kind="smp4"):
    """smp4: the default boot (the PMU's pseudo-NMI source); tick: the same
    with pmu=off, for the tick's own figures."""
    m = SHARED.get(kind)
    if m is None or not m.alive():
        if m is not None:
            m.close()
        m = boot(kind, append="pmu=off" if kind == "tick" else "")
        SHARED[kind] = m
    return m


PMU_SOURCE = "pmu/pseudo-nmi arm64 pmuv3 cycles"


def burn_running(m):
    return [r for r in P.ps(m.cmd("ps")) if r["name"] == "burn" and r["state"] != "dead"]


def quiesce(m, timeout=15):
    m.cmd("burn stop")
    deadline = time.monotonic() + timeout
    while burn_running(m):
        check(time.monotonic() < deadline, "burn tasks still listed %d s after 'burn stop'" % timeout)
        time.sleep(0.3)


def start_burn(m, ms):
    return P.burn_pids(m.cmd("burn %d" % ms))


def check_burn_chain(r):
    """burn's whole chain is in the profile (the leaf burn_spin, called
    through burn_inner, burn_middle and burn_outer from burn_task)."""
    check(any(c["name"] == "burn_spin" and c["callers"][:4] == BURN_CHAIN[1:] for c in r["chains"]),
          "no chain burn_spin <- %s among %r" % (" <- ".join(BURN_CHAIN[1:]),
                                                [(c["leaf"], c["callers"]) for c in r["chains"]]))


def burn_miss(r):
    """burn's chain on top with at least 80% of the samples, or why not.
    A share, so measured again when it misses: on a loaded host TCG spends
    long stretches in the timer reads (time_ns), and 20% of a PMU profile
    has been seen there."""
    top = r["chains"][0]
    if top["name"] != "burn_spin" or top["callers"][:4] != BURN_CHAIN[1:]:
        return "top chain %s <- %s, expected burn's" % (top["leaf"], " <- ".join(top["callers"]))
    if top["pct"] < 80:
        return "burn_spin has %.1f%% < 80%%" % top["pct"]
    return None


def remeasured(measure, rate_miss, attempts=3):
    """Figures that depend on the host under TCG: while the host has a vCPU
    thread (or QEMU's main loop, which fires the counter's overflow timer)
    descheduled, virtual time runs on and the interrupts missed meanwhile
    collapse into one, so a rate (or a share of the samples) that misses
    is measured again, up to attempts times. Only those: measure() makes
    its correctness checks itself, and one that fails fails the test at
    once, never measured again. rate_miss(result) says why the figures
    missed, or None."""
    misses = []
    for i in range(attempts):
        res = measure()
        why = rate_miss(res)
        if why is None:
            return res
        misses.append(why)
        print("    measurement %d of %d: rate missed (host load %.1f): %s" % (
            i + 1, attempts, os.getloadavg()[0], why))
    raise Fail("the rate missed in all %d measurements: %s" % (attempts, "; ".join(misses)))


# ---- tests ---------------------------------------------------------------

TESTS = []


def test(fn):
    TESTS.append((fn.__name__[2:], fn))
    return fn


@test
def t_boot_prompt(ctx):
    m = ctx.use(shared())
    log = m.text()
    check(re.search(r"Sonde booting \(arm64, EL1", log), "no arm64 boot banner: %r" % log[:300])
    check(re.search(r"^mem: \d+ MiB usable", log, re.M), "no memory line from the device tree")
    check(re.search(r"^smp: 4 cpus online \(device tree lists 4, psci hvc\)$", log, re.M),
          "boot log lacks 'smp: 4 cpus online': %r" % log[-600:])
    check(re.search(r"timer: generic timer \d+ Hz, virtual timer PPI INTID 27, 100 Hz tick", log),
          "no generic timer line")
    P.check_version(m.cmd("version"), "arm64", ARCHES["arm64"]["kernel"])


@test
def t_serial_paste_5k(ctx):
    """The console's input path: a 5 KB paste and a 10 KB line lose nothing."""
    m = ctx.use(boot("paste", smp=2), own=True)
    console_checks.check_paste(m)
    console_checks.check_long_line(m)


@test
def t_commands(ctx):
    """help, ps, cpus, stacks, sym, lscpu answer in the x86 formats."""
    m = ctx.use(shared())
    hl = m.cmd("help")
    for c in ("bt", "burn", "cpus", "help", "lscpu", "panic", "profile", "ps", "stacks", "sym"):
        check(re.search(r"^  %s\b" % c, hl, re.M), "help does not list %s" % c)
    rows = P.ps(m.cmd("ps"))
    names = {r["name"] for r in rows}
    check({"idle0", "idle1", "idle2", "idle3", "shell"} <= names, "ps: %r" % names)
    cp = P.cpus(m.cmd("cpus"))
    check(sorted(cp) == [0, 1, 2, 3], "cpus lists %r" % sorted(cp))
    check(all(r["state"] == "online" for r in cp.values()), "a cpu is not online: %r" % cp)
    # The `cpus` column headed "apic" holds the MPIDR's affinity on arm64.
    check(len({r["apic"] for r in cp.values()}) == 4, "hardware ids (MPIDR) not unique: %r" % cp)
    st = m.cmd("stacks")
    check(re.search(r"^task\s+\d+ shell\s+16384\s+\d+\s+\d+", st, re.M), "stacks: %r" % st)
    addr = m.cmd("sym 0x0")
    check(addr.strip(), "sym printed nothing")
    ls = m.cmd("lscpu")
    for rx in (r"^vendor:\s+ARM \(implementer 0x41\)$",
               r"^part:\s+Cortex-A72 \(0xd08\)",
               r"^pmu claims:\s+PMUv3 .*PMUVer 0x[0-9a-f]\), \d+ event counters \+ cycle counter",
               r"^interrupt:\s+PPI 23 \(device tree /pmu\), pseudo-NMI",
               r"^probe:\s+cycle counter moved by \d+ in \d+ us \(\d+ per us: period \d+ for 1 kHz\)$",
               r"^profile source: %s$" % re.escape(PMU_SOURCE)):
        check(re.search(rx, ls, re.M), "lscpu lacks /%s/: %r" % (rx, ls))
    # QEMU's TCG counts PMCCNTR at a virtual 1 GHz: the probe measured it
    # against the generic timer; 10 us of two clocks, so within 25%.
    rate = int(re.search(r"\((\d+) per us", ls).group(1))
    check(750 <= rate <= 1250, "probe measured %d counts per us; QEMU's cycle counter runs at 1000" % rate)


@test
def t_tick_rate(ctx):
    """Every cpu's ticks against the guest's own uptime, ~3 s apart."""
    m = ctx.use(shared())
    u1, c1 = m.cmds(["uptime", "cpus"])
    time.sleep(3)
    u2, c2 = m.cmds(["uptime", "cpus"])
    dt = (P.uptime_ns(u2) - P.uptime_ns(u1)) / 1e9
    c1, c2 = P.cpus(c1), P.cpus(c2)
    want = 100 * dt
    rates = {c: (c2[c]["ticks"] - c1[c]["ticks"]) / dt for c in c1}
    print("    guest %.3f s: ticks/s %s" % (dt, " ".join("%d:%.1f" % kv for kv in sorted(rates.items()))))
    check(len(rates) == 4, "expected 4 cpus, got %r" % rates)
    for c, r in rates.items():
        check(abs(r * dt - want) <= 0.1 * want, "cpu %d ticked %.1f/s, not 100 Hz within 10%%" % (c, r))


@test
def t_profile_burn_all(ctx):
    """The tick's figures (pmu=off): ~400 samples in 1 s on 4 busy cpus."""
    m = ctx.use(shared("tick"))
    ls = m.cmd("lscpu")
    for rx in (r"^pmu=off:\s+counter never used$", r"^probe:\s+not run \(pmu=off\)$",
               r"^profile source: tick 100Hz$"):
        check(re.search(rx, ls, re.M), "lscpu under pmu=off lacks /%s/: %r" % (rx, ls))

    def measure():
        try:
            check(len(start_burn(m, 3000)) == 4, "burn did not start one task per cpu")
            time.sleep(0.3)
            # cpus just before and after, in one send: the ticks the cpus
            # took around the window tell a profiler that drops samples from
            # a host too loaded to run 4 vCPUs at 100 Hz (missed ticks
            # collapse).
            c1, out, c2 = m.cmds(["cpus", "profile 1000 all 3", "cpus"], 60)
        finally:
            quiesce(m)
        r = checked_profile(out)
        c1, c2 = P.cpus(c1), P.cpus(c2)
        took = sum(c2[c]["ticks"] - c1[c]["ticks"] for c in c1)
        top = r["chains"][0] if r["chains"] else None
        print("    %d samples on %d cpus (expected ~400; the cpus took %d ticks around the window), top %s" % (
            r["samples"], r["cpus"], took, "%.1f%% %s" % (top["pct"], top["leaf"]) if top else "-"))
        check(r["window"] == 1000, "window %d" % r["window"])
        check(r["source"] == "tick 100Hz", "source %r" % r["source"])
        check("pmu: PMUv3 cycle counter not used (pmu=off): tick only" in out,
              "no pmu=off note under the header: %r" % out[:300])
        check(r["samples"] <= took, "%d samples but the cpus took only %d ticks" % (r["samples"], took))
        check(r["cpus"] == 4, "samples on %d cpus" % r["cpus"])
        check_burn_chain(r)
        return r, took

    def miss(res):
        r, took = res
        if abs(r["samples"] - 400) <= 40:
            return burn_miss(r)
        return "%d samples, expected 400 within 10%% (the cpus took %d ticks around the window%s)" % (
            r["samples"], took, ": the guest lost ticks, is the host overloaded?" if took < 360 else "")
    remeasured(measure, miss)


def pmu_burn_profile(m, ncpu):
    """burn on every cpu, then `profile 1000 all 3` between two `cpus`, and
    `profile_cpus`. Checks what holds however loaded the host is: the
    counter is the source, every cpu's samples came from its counter and
    none from its tick (so no mixed-sources line), burn_spin's chain on
    top. Returns the profile, the ticks each cpu took around the window
    and each cpu's {pmu, tick} samples."""
    try:
        check(len(start_burn(m, 3000)) == ncpu, "burn did not start one task per cpu")
        time.sleep(0.3)
        c1, out, c2, pc = m.cmds(["cpus", "profile 1000 all 3", "cpus", "profile_cpus"], 60)
    finally:
        quiesce(m)
    r = checked_profile(out)
    src = P.cpu_sources(pc)
    c1, c2 = P.cpus(c1), P.cpus(c2)
    ticks = {c: c2[c]["ticks"] - c1[c]["ticks"] for c in c1}
    top = r["chains"][0] if r["chains"] else None
    print("    %d samples on %d cpus (%s), the cpus took %d ticks around the window; top %s" % (
        r["samples"], r["cpus"], pc.strip(), sum(ticks.values()),
        "%.1f%% %s" % (top["pct"], top["leaf"]) if top else "-"))
    check(r["source"] == PMU_SOURCE, "source %r, expected %r" % (r["source"], PMU_SOURCE))
    check(sorted(src) == list(range(ncpu)), "profile_cpus lists cpus %r, expected 0-%d" % (sorted(src), ncpu - 1))
    for c, n in sorted(src.items()):
        check(n["tick"] == 0 and n["pmu"] > 0, "cpu %d took %d samples from its counter and %d from its tick: "
              "every cpu's must come from the counter (%s)" % (c, n["pmu"], n["tick"], pc.strip()))
    check(r["sources"] is None, "a mixed-sources line in a run where every cpu used the counter: %r" % out[:400])
    check(sum(n["pmu"] for n in src.values()) == r["samples"],
          "profile_cpus counts %r do not add up to the header's %d samples" % (src, r["samples"]))
    check(r["cpus"] == ncpu, "samples on %d cpus" % r["cpus"])
    check_burn_chain(r)
    return r, ticks, src


@test
def t_profile_pmu_rate(ctx):
    """One busy cpu (smp=1): the PMU takes ten times the tick's samples,
    1000 in 1 s, within 25%. One vCPU thread has a host core of its own,
    so nothing here depends on how loaded the host is."""
    m = ctx.use(boot("pmu-smp1", append="smp=1"), own=True)

    def miss(res):
        r, ticks, _ = res
        t = sum(ticks.values())
        if abs(r["samples"] - 1000) > 250:
            return "%d samples, expected 1000 within 25%%" % r["samples"]
        if abs(r["samples"] - 10 * t) > 2.5 * t:
            return "%d samples against %d ticks: not ten times within 25%%" % (r["samples"], t)
        return burn_miss(r)
    remeasured(lambda: pmu_burn_profile(m, 1), miss)


# The counter's rate per busy cpu, and how far a measurement may stray from
# it. At -smp 2 on the 2-core host here, with the host otherwise quiet
# (load ~2: the two vCPU threads and QEMU's main loop), 1 s windows took
# 936/931 and 937/935 samples per cpu; 25% holds there. With other work on
# the host (load 2-8) the same windows took anywhere from 1 to 902 per cpu
# (363/561, 175/1, 90/124, 221/224, 529/103, 88/213, 902/690, 230/185,
# 509/567, 195/278, 209/34, 730/79, 246/299): no tolerance tells that from
# a broken period, so a miss is measured again, and a miss every time on a
# loaded host is the host's (the failure prints the load).
PMU_RATE, PMU_RATE_TOL = 1000, 0.25


@test
def t_profile_pmu_every_cpu(ctx):
    """-smp 2, burn on both cpus: every cpu's samples came from its own
    counter, none from its tick, and each cpu took 1000 a second within
    25%. Two vCPU threads fit the 2-core host, where four do not (QEMU 7.2
    also stops delivering the overflow at more than one vCPU under
    -icount, so this runs without it)."""
    m = ctx.use(boot("pmu-smp2", smp=2), own=True)

    def miss(res):
        r, ticks, src = res
        off = {c: n["pmu"] for c, n in src.items() if abs(n["pmu"] - PMU_RATE) > PMU_RATE_TOL * PMU_RATE}
        if not off:
            return burn_miss(r)
        return "cpu samples %s, expected %d within %d%% on each (ticks meanwhile %s)" % (
            off, PMU_RATE, PMU_RATE_TOL * 100, ticks)
    remeasured(lambda: pmu_burn_profile(m, 2), miss)


@test
def t_profile_pmu_burn(ctx):
    """The PMU source on 4 busy cpus: every cpu on its counter, burn_spin on
    top, and more samples than the tick would take. Not the full 4000:
    4 vCPU threads and QEMU's main loop share the 2-core host, and the
    overflows a descheduled vCPU misses collapse into one (measured 500-2000
    from run to run; the tick loses almost nothing at 100 Hz), so the rate
    asserted here is only that the PMU beats the tick by half as much
    again; each cpu's own rate is t_profile_pmu_every_cpu's."""
    m = ctx.use(shared())

    def miss(res):
        r, ticks, _ = res
        t = sum(ticks.values())
        if r["samples"] < 1.5 * t:
            return "%d samples is not well above the %d ticks taken meanwhile" % (r["samples"], t)
        return burn_miss(r)
    remeasured(lambda: pmu_burn_profile(m, 4), miss)


def masked_profile(m):
    """spin_masked 800 ms (after 100 ms) under a 1000 ms profile: the
    spinning cpu's buffer (1024) holds all of it even at 1 kHz. Returns the
    profile and the samples whose chain has masked_spin in it."""
    out = m.cmd("spin_masked 800 100")
    check(re.search(r"^spin_masked: pid \d+, 800 ms with interrupts masked after 100 ms$", out, re.M),
          "spin_masked: %r" % out)
    r = checked_profile(m.cmd("profile 1000 all 8", 60))
    n = sum(c["count"] for c in r["chains"] if c["name"] == "masked_spin" or "masked_spin" in c["callers"])
    time.sleep(0.2)                     # the spin is over by now
    expect_answers(m, "spin_masked")
    return r, n


@test
def t_pmu_samples_interrupts_off(ctx):
    """A task spinning with interrupts masked (ICC_PMR_EL1) is sampled by
    the pseudo-NMI: masked_spin is in the profile, at close to the rate a
    busy cpu gets (800 ms: expect ~800, at least 300 on a loaded host)."""
    m = ctx.use(shared())

    def measure():
        r, n = masked_profile(m)
        print("    %d samples in masked_spin of %d, source %s" % (n, r["samples"], r["source"]))
        check(r["source"] == PMU_SOURCE, "source %r" % r["source"])
        check(n > 0, "not one sample in masked_spin: the counter does not sample with interrupts "
              "masked (chains %r)" % [(c["count"], c["leaf"]) for c in r["chains"]])
        return r, n

    def miss(res):
        r, n = res
        return None if n >= 300 else "only %d samples in masked_spin (chains %r)" % (
            n, [(c["count"], c["leaf"]) for c in r["chains"]])
    remeasured(measure, miss)


@test
def t_tick_cannot_see_interrupts_off(ctx):
    """The same under pmu=off: the tick is masked with everything else, so
    not one sample lands in masked_spin. (Also shows that PMR masking
    really holds the tick back.)"""
    m = ctx.use(shared("tick"))
    r, n = masked_profile(m)
    print("    %d samples in masked_spin of %d, source %s" % (n, r["samples"], r["source"]))
    check(r["source"] == "tick 100Hz", "source %r" % r["source"])
    check(r["samples"] > 0, "the tick took no samples at all")
    check(n == 0, "the tick sampled masked_spin %d times: interrupts were not masked" % n)


@test
def t_pmu_assume_without_pmu(ctx):
    """-cpu cortex-a72,pmu=off claims no PMUv3 and its counter never moves:
    pmu=assume makes the probe try it, and it is rejected in its 10 us."""
    m = ctx.use(boot("assume", cpu="cortex-a72,pmu=off", append="pmu=assume"), own=True)
    ls = m.cmd("lscpu")
    for rx in (r"^pmu claims:\s+none \(ID_AA64DFR0_EL1.PMUVer 0x0\)$",
               r"^pmu=assume:\s+acting as if PMUv3 were claimed$",
               r"^probe:\s+did not count in 10 us$", r"^profile source: tick 100Hz$"):
        check(re.search(rx, ls, re.M), "lscpu lacks /%s/: %r" % (rx, ls))
    start_burn(m, 1000)
    out = m.cmd("profile 300 all 1", 60)
    r = checked_profile(out)
    check(r["source"] == "tick 100Hz", "source %r" % r["source"])
    check(re.search(r"^pmu: PMUv3 cycle counter assumed \(pmu=assume\) but did not count in 10 us: "
                    r"tick only$", out, re.M), "no probe note under the header: %r" % out[:400])
    check(r["samples"] > 0, "no tick samples")


@test
def t_pmu_stray_interrupt_panics(ctx):
    """The PMU's PPI with no overflow behind it is not swallowed."""
    m = ctx.use(boot("stray"), own=True)
    start = m.mark()
    m.send("pmu_irq_stray\r")
    m.wait_for(r"PANIC: unexpected PMU interrupt on cpu \d+ \(INTID 23\): the cycle counter has no "
               r"overflow recorded in PMOVSSET_EL0 \(counter not armed\)", 60, start)
    halt = m.wait_for(r"System halted\.", 60, start)
    bt = m.text(start, halt.end()).split("Backtrace:", 1)[1]
    check("cmd_pmu_irq_stray" in bt.split("\ncpu ")[0], "the panic's backtrace lacks the command: %r" % bt)


@test
def t_bt_burn_and_all(ctx):
    """bt of a running burn task (answered by SGI from its cpu), then bt all:
    every cpu answers."""
    m = ctx.use(shared())
    try:
        pids = start_burn(m, 5000)
        time.sleep(0.5)
        shell = [r for r in P.ps(m.cmd("ps")) if r["name"] == "shell"][0]
        rows = {r["pid"]: r for r in P.ps(m.cmd("ps"))}
        far = [p for p in pids if rows[p]["cpu"] != shell["cpu"]]
        check(far, "no burn task on another cpu than the shell: %r" % rows)
        out = m.cmd("bt %d" % far[0])
        names = P.frames(out)
        # Frame 0 is the interrupted pc: burn_spin mostly, or time_ns
        # when the sample lands in burn_task's deadline check.
        sub = [n for n in names if n in BURN_CHAIN]
        check(sub and sub[-1] == "burn_task" and sub == BURN_CHAIN[BURN_CHAIN.index(sub[0]):],
              "bt %d: %r lacks burn's chain in order" % (far[0], names))
        out = m.cmd("bt all", 60)
        check("did not answer" not in out, "a cpu did not answer: %r" % out[-600:])
        blocks = re.split(r"^pid (\d+):$", out, flags=re.M)
        listed = {int(blocks[i]): P.frames(blocks[i + 1]) for i in range(1, len(blocks) - 1, 2)}
        check(set(rows) <= set(listed), "bt all missed pids %r" % sorted(set(rows) - set(listed)))
        check(all(listed[p] for p in rows), "bt all printed a task with no frames: %r" % listed)
    finally:
        quiesce(m)


@test
def t_profile_bad_input(ctx):
    m = ctx.use(shared())
    check_profile_bad_input(m)


@test
def t_serial_input_burst(ctx):
    """300 lines in bursts of ten, no host round trip inside a burst: every
    one answered. A receive interrupt lost between draining the PL011's
    FIFO and clearing it leaves the rest of a line stuck (the shell hangs
    mid-line): this is the test that found it."""
    m = ctx.use(shared())
    for k in range(30):
        lines = ["echo b%d-%d" % (k, i) for i in range(10)]
        outs = m.cmds(lines, 20)
        for l, o in zip(lines, outs):
            check(o.strip() == l[5:], "%r answered %r" % (l, o))


@test
def t_panic_divzero_says_why(ctx):
    m = ctx.use(shared())
    out = m.cmd("panic divzero")
    check(re.search(r"^panic: divzero: arm64 does not trap integer division by zero", out, re.M),
          "panic divzero: %r" % out)
    expect_answers(m, "panic divzero")


def panic_test(ctx, kind, patterns):
    m = ctx.use(boot("panic-" + kind), own=True)
    start = m.mark()
    m.send("panic %s\r" % kind)
    for p in patterns:
        m.wait_for(p, 60, start)
    halt = m.wait_for(r"System halted\.", 60, start)
    m.send("echo alive\r")
    time.sleep(2)
    check("alive" not in m.text(halt.end()), "the shell answered after 'System halted.'")
    out = m.text(start, halt.end())
    bt = out.split("Backtrace:", 1)[1]
    mine = re.split(r"\ncpu \d+:", bt)[0]
    names = P.frames(mine)
    check(re.search(r"^        <- cmd_panic\+0x[0-9a-f]+$", mine, re.M),
          "backtrace lacks '        <- cmd_panic+0x..': %r" % mine)
    check(P.in_order(names, ["cmd_panic", "shell_run_line", "shell_task", "task_start"]),
          "backtrace %r lacks the shell's chain in order" % names)
    others = re.findall(r"^cpu (\d+):\n((?:        <- \S+\n)+)", out, re.M)
    check(sorted(int(c) for c, _ in others) == [1, 2, 3],
          "other cpus' backtraces: %r" % [c for c, _ in others])
    check(re.search(r"^  pc  [0-9a-f]{16}  sp  [0-9a-f]{16}  fp  [0-9a-f]{16}  lr  [0-9a-f]{16}$", out, re.M),
          "no register dump")
    return out


@test
def t_panic_ud(ctx):
    panic_test(ctx, "ud", [r"PANIC: BRK instruction \(EC 0x3c, ESR 0x[0-9a-f]+, immediate 0x3e8\)"])


@test
def t_panic_pagefault(ctx):
    panic_test(ctx, "pagefault", [r"PANIC: data abort \(EC 0x25, ESR 0x[0-9a-f]+\): translation fault "
                                  r"level \d, read at FAR 0x7f0000000000"])


@test
def t_boot_el2_smp2(ctx):
    """Entered at EL2 (virtualization=on): dropped to EL1, PSCI by smc,
    smp=2 honoured, and the tick profile still works."""
    m = ctx.use(boot("el2", machine="virt,gic-version=3,virtualization=on", append="smp=2"), own=True)
    log = m.text()
    check(re.search(r"Sonde booting \(arm64, EL1, entered at EL2\)", log), "banner: %r" % log[:200])
    check(re.search(r"^smp: 2 cpus online \(device tree lists 4, psci smc\)$", log, re.M),
          "boot log: %r" % log[-500:])
    start_burn(m, 1500)
    r = checked_profile(m.cmd("profile 500 all 1", 60))
    check(r["cpus"] == 2 and r["chains"] and r["chains"][0]["name"] == "burn_spin",
          "profile at smp=2: %d cpus, chains %r" % (r["cpus"], r["chains"][:1]))
    # The PMU works after the drop from EL2 too (MDCR_EL2 left as reset).
    check(r["source"] == PMU_SOURCE, "source %r after entry at EL2" % r["source"])


# ---- runner ----------------------------------------------------------------

class Ctx:
    def __init__(self, name):
        self.used = []
        self.own = []

    def use(self, m, own=False):
        self.used.append((m, m.mark()))
        if own:
            self.own.append(m)
        return m

    def tails(self):
        return "\n".join(runner.quoted_tail(m, start) for m, start in self.used)

    def finish(self, failed):
        for m in self.own:
            m.close()


def main(argv):
    if "--list" in argv:
        for n, _ in TESTS:
            print(n)
        return 0
    pats = [a for a in argv if not a.startswith("-")]
    tests = [(n, f) for n, f in TESTS if not pats or any(fnmatch.fnmatch(n, p) for p in pats)]
    return runner.run(tests, Ctx)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
