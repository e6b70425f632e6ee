#!/usr/bin/env python3
"""Sonde arm64 system tests: boot build/arm64/kernel.elf on QEMU virt
(GICv3, cortex-a72, TCG) and drive its serial shell.

usage: python3 tests/system/arm64_tests.py [--list] [NAME...]

  With no NAME, runs every test; a NAME selects by exact name or by
  shell-style pattern ('panic_*'). Prints 'PASS name (secs)' or
  'FAIL name (secs): reason' plus the serial tail, and ends with exactly
  'N passed, N failed'; the exit status is non-zero if any test
  failed (a test that cannot run fails; nothing is skipped), 2 if a NAME
  selects no test. Needs
  build/arm64/kernel.elf (make ARCH=arm64) and qemu-system-aarch64.
  Python 3 standard library only. As for run.py, the QEMU driver is
  tests/system/qemu.py, the output parsers are tests/system/parse.py and
  the loop that runs the tests is tests/system/runner.py.

Read-only tests share one 4-CPU machine (and a pmu=off one for the tick's
profile); panics, boot parameters and the rates (under -icount, see
ICOUNT) get machines of their own. Every QEMU has a bounded lifetime, is killed by its
own pid when its test (or the run) ends, and the whole run takes well
under 3 minutes.
"""
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parse as P  # noqa: E402
import console_checks  # noqa: E402
import runner  # noqa: E402
from shell_checks import (check_burn_folded, check_burn_raw, check_export_header,  # noqa: E402
                          check_profile_bad_input, checked_profile, expect_answers)
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

# arch/arm64/trap.c's register dump of a trap frame.
TRAP_REGS = ["pc", "sp", "fp", "lr", "pstate", "esr", "far"] + ["x%d" % i for i in range(29)]


# Machines under -icount shift=0,sleep=off: guest time is the instructions
# executed, so every timer (and, at smp=1, every PMU overflow) interrupt
# lands at an exact point of guest time whatever the host does; an idle
# guest jumps to its next timer at once. Without it, a loaded 2-core host
# keeps vCPU threads off their cores and the interrupts they miss
# collapse. The rates are measured there. icount runs the vCPUs in turn on
# one host thread and at 4 busy vCPUs one waiting its turn still misses
# ticks. At smp=2 the shell's 1000 ms window was seen to end only when the
# burn did (1 run in 6), so busy rates are measured at smp=1. Measured,
# three runs with two busy loops on the 2-core host: ticks 0-1 off of
# ~10^4; tick profile 101 of 100; PMU 999-1000 of 1000; masked spin 800
# of 800 (sleep=on there: see the test).
ICOUNT = "shift=0,sleep=off"


def nm_addr(name):
    """A text symbol's address in build/arm64/kernel.elf, from the cross nm."""
    nm = subprocess.run(["aarch64-linux-gnu-nm", ARCHES["arm64"]["kernel"]], capture_output=True,
                        text=True, check=True).stdout
    for line in nm.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == name and f[1] in "tT":
            return int(f[0], 16)
    raise Fail("nm: no text symbol %s in the arm64 kernel" % name)


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
    # cortex-a72 has the SHA-256 instructions (ID_AA64ISAR0_EL1.SHA2 = 1):
    # found, and they gave the C's digests at boot (kernel/sha256_boot.c).
    check(re.search(r"^sha256: arm64 SHA-256 instructions \(ID_AA64ISAR0_EL1\.SHA2\), checked "
                    r"against the C on messages of 0, 55, 56, 64 and 1432 bytes$", log, re.M),
          "no boot line saying the SHA-256 instructions are in use: %r"
          % re.findall(r"^sha256:.*$", log, re.M))
    P.check_version(m.cmd("version"), "arm64", ARCHES["arm64"]["kernel"])


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
    # Exact answers (kernel/symtab.c): nothing lies at 0, and burn_spin's
    # address (from the ELF) names it at offset 0. A lookup that returns
    # the nearest symbol below any address, or a table off by one entry,
    # prints something else.
    out = m.cmd("sym 0x0")
    check(out == "0x0000000000000000: no symbol\n", "sym 0x0: %r" % out)
    a = nm_addr("burn_spin")
    out = m.cmd("sym 0x%x" % a)
    check(out == "0x%016x burn_spin+0x0\n" % a, "sym 0x%x: %r, expected burn_spin+0x0" % (a, out))
    out = m.cmd("sym 0x%x" % (a + 4))
    check(out == "0x%016x burn_spin+0x4\n" % (a + 4), "sym 0x%x: %r, expected burn_spin+0x4" % (a + 4, out))
    ls = m.cmd("lscpu")
    for rx in (r"^vendor:\s+ARM \(implementer 0x41\)$",
               r"^part:\s+Cortex-A72 \(0xd08\)",
               r"^pmu claims:\s+PMUv3 .*PMUVer 0x[0-9a-f]\), \d+ event counters \+ cycle counter",
               r"^interrupt:\s+PPI 23 \(device tree /pmu\), pseudo-NMI",
               r"^probe:\s+cycle counter moved by \d+ in \d+ us \(\d+ per us: period \d+ for 1 kHz\)$",
               r"^profile source: %s$" % re.escape(PMU_SOURCE),
               r"^sha256:\s+arm64 SHA-256 instructions \(ID_AA64ISAR0_EL1\.SHA2\)$"):
        check(re.search(rx, ls, re.M), "lscpu lacks /%s/: %r" % (rx, ls))
    # QEMU's TCG counts PMCCNTR at a virtual 1 GHz: the probe measured it
    # against the generic timer; 10 us of two clocks, so within 25%.
    rate = int(re.search(r"\((\d+) per us", ls).group(1))
    check(750 <= rate <= 1250, "probe measured %d counts per us; QEMU's cycle counter runs at 1000" % rate)
    # The installed block function is the instructions (t_tick_rate
    # compares their cost with the C's, under icount).
    out = m.cmd("bench sha256", 60)
    check(re.search(r"^bench: pstr_seal of a 1400-byte datagram \d+ ns \(NH, SHA-256 the CPU's instructions\)$",
                    out, re.M), "bench sha256: %r" % out)


# An operand naming a SIMD&FP register (v0-v31, or its q/d/s/h/b view);
# system registers (s3_3_c2_c4_0) and addresses never match.
SIMD_REG = re.compile(r"(?<![\w.#])[vqdshb]\d{1,2}(?!\w)|\bfp[cs]r\b")


@test
def t_simd_only_in_sha256(ctx):
    """The kernel saves no vector register on a switch or an exception
    (arch/arm64/sha256.c): SHA-256's block function, run with interrupts
    masked, must be the only code in the kernel that names one, the
    pseudo-NMI's path included. From the disassembly, no boot."""
    dis = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn",
                          ARCHES["arm64"]["kernel"]], capture_output=True, text=True, check=True).stdout
    users, fn = {}, None
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            fn = m.group(1)
            continue
        f = line.split("\t")
        if fn and len(f) >= 3 and SIMD_REG.search(re.sub(r"<[^>]*>|//.*", "", f[2])):
            users[fn] = users.get(fn, 0) + 1
    print("    instructions naming a vector register: %r" % users)
    check(list(users) == ["sha256_a64_blocks"], "functions other than sha256_a64_blocks use SIMD&FP "
          "registers (nothing saves them): %r" % users)


@test
def t_tick_rate(ctx):
    """Every cpu's ticks against the guest's own uptime, on an idle 4-CPU
    machine under icount, where the tick is exact: 0.2% (and the tick in
    flight at either end) catches a timer programmed from a misread
    counter frequency, or one CPU's timer at another rate. Then, on the
    same machine, what SHA-256 costs in guest instructions."""
    m = ctx.use(boot("tick-icount", icount=ICOUNT), own=True)
    u1, c1 = m.cmds(["uptime", "cpus"])
    time.sleep(1)
    u2, c2 = m.cmds(["uptime", "cpus"])
    dt = (P.uptime_ns(u2) - P.uptime_ns(u1)) / 1e9
    c1, c2 = P.cpus(c1), P.cpus(c2)
    want = 100 * dt
    got = {c: c2[c]["ticks"] - c1[c]["ticks"] for c in c1}
    print("    guest %.3f s: ticks %s, expected %.1f" % (dt, " ".join("%d:%d" % kv for kv in sorted(got.items())),
                                                      want))
    check(sorted(got) == [0, 1, 2, 3], "expected cpus 0-3, got %r" % got)
    for c, d in got.items():
        check(abs(d - want) <= 0.002 * want + 2, "cpu %d ticked %d times in %.3f s of guest time: not 100 Hz "
              "within 0.2%%" % (c, d, dt))
    # The same icount machine counts guest instructions: SHA-256 of 1432
    # bytes costs ~82,000 in the C and ~2,800 with the SHA-256 instructions
    # (~2,100 for a stream datagram's tag, NH and two blocks). Without icount TCG's
    # wall time says nothing of it: the instructions run as helper calls.
    out = m.cmd("bench sha256", 60)
    print("    " + out.strip().replace("\n", "\n    "))
    sha = re.search(r"^bench: sha256 of 1432 bytes: portable C (\d+) ns, in use (\d+) ns", out, re.M)
    check(sha, "bench sha256: %r" % out)
    check(int(sha.group(2)) * 10 < int(sha.group(1)), "bench sha256 under icount: the SHA-256 "
          "instructions are not 10x fewer guest instructions than the C: %r" % out)
    # A stream datagram's tag, NH and two blocks (~1,900), against the
    # HMAC of all its bytes that tags were before NH (~3,800).
    seal = re.search(r"^bench: pstr_seal of a 1400-byte datagram (\d+) ns", out, re.M)
    whole = re.search(r"^bench: hmac-sha256 of a 1400-byte datagram (\d+) ns", out, re.M)
    check(seal and whole, "bench sha256: %r" % out)
    check(int(seal.group(1)) * 3 < int(whole.group(1)) * 2, "bench sha256 under icount: pstr_seal "
          "is not a third cheaper than the HMAC of the whole datagram: %r" % out)


def tick_burn_profile(m, ncpu):
    """burn on every cpu under `profile 1000 all 3` with the tick as the
    source (pmu=off), between two `cpus` in one send: the profile and the
    ticks the cpus took around the window. Asserts what every run must
    show."""
    ls = m.cmd("lscpu")
    for rx in (r"^pmu=off:\s+counter never used$", r"^probe:\s+not run \(pmu=off\)$",
               r"^profile source: tick 100Hz$"):
        check(re.search(rx, ls, re.M), "lscpu under pmu=off lacks /%s/: %r" % (rx, ls))
    check(len(start_burn(m, 5000)) == ncpu, "burn did not start one task per cpu")
    time.sleep(0.3)
    c1, out, c2 = m.cmds(["cpus", "profile 1000 all 3", "cpus"], 60)
    r = checked_profile(out)
    c1, c2 = P.cpus(c1), P.cpus(c2)
    took = sum(c2[c]["ticks"] - c1[c]["ticks"] for c in c1)
    top = r["chains"][0] if r["chains"] else None
    print("    %d samples on %d cpus (100 Hz: %d; the cpus took %d ticks around the window), top %s" % (
        r["samples"], r["cpus"], 100 * ncpu, took, "%.1f%% %s" % (top["pct"], top["leaf"]) if top else "-"))
    check(r["window"] == 1000, "window %d" % r["window"])
    check(r["source"] == "tick 100Hz", "source %r" % r["source"])
    check("pmu: PMUv3 cycle counter not used (pmu=off): tick only" in out,
          "no pmu=off note under the header: %r" % out[:300])
    # More samples than ticks: a tick sampled twice, or samples invented.
    check(r["samples"] <= took, "%d samples but the cpus took only %d ticks" % (r["samples"], took))
    check(r["cpus"] == ncpu, "samples on %d cpus, expected %d" % (r["cpus"], ncpu))
    check(top and top["name"] == "burn_spin", "top leaf %r, expected burn_spin" % (top and top["leaf"]))
    check(top["pct"] >= 80, "burn_spin has %.1f%% < 80%%" % top["pct"])
    check(top["callers"][:4] == BURN_CHAIN[1:],
          "top callers %r, expected %r" % (top["callers"], BURN_CHAIN[1:]))
    return r


@test
def t_profile_burn_all(ctx):
    """The tick's profile (pmu=off) of 4 busy cpus: burn on top, every
    cpu sampled. Its rate is the next test's."""
    m = ctx.use(shared("tick"))
    try:
        tick_burn_profile(m, 4)
    finally:
        quiesce(m)


@test
def t_profile_tick_rate(ctx):
    """The tick's rate under a busy profile, at smp=1 under icount where
    every tick arrives: 100 samples in 1 s within one (measured: 100 every
    time; a window is 100 ticks from just after one, kernel/prof/session.c).
    A profiler that skips ticks, or a window that ends a tick late, is
    outside it. (At smp=2
    under icount the shell's 1000 ms window was measured to end only
    when the burn did, ~4.5 s of guest time later: not a figure to assert
    until that is understood.)"""
    m = ctx.use(boot("tick-smp1-icount", append="pmu=off smp=1", icount=ICOUNT), own=True)
    r = tick_burn_profile(m, 1)
    check(abs(r["samples"] - 100) <= 1, "%d samples, expected 100 within one" % r["samples"])



def check_burn_chain(r):
    """burn's whole chain is in the profile (the leaf burn_spin, called
    through burn_inner, burn_middle and burn_outer from burn_task)."""
    check(any(c["name"] == "burn_spin" and c["callers"][:4] == BURN_CHAIN[1:] for c in r["chains"]),
          "no chain burn_spin <- %s among %r" % (" <- ".join(BURN_CHAIN[1:]),
                                                [(c["leaf"], c["callers"]) for c in r["chains"]]))


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
    """One busy cpu (smp=1) under icount, where the cycle counter counts
    guest instructions and every overflow is delivered: the PMU takes 1000
    samples in 1 s, ten times the tick's, with burn_spin's chain on top at
    80% or more. Within 2: the window is exactly 100 ticks
    (kernel/prof/session.c), the jitter's drift stays within half a period
    of the grid (kernel/pmu_nmi.h) and the probe reads QEMU's rate exactly
    (1000 per us over 200 us). Measured: 999 or 1000 in 12 runs. A window
    that ends a tick late (1010), a drift left to wander (1003-1017 before),
    a rate one count per us off (998-999), or overflows lost, is outside
    it."""
    m = ctx.use(boot("pmu-smp1", append="smp=1", icount=ICOUNT), own=True)
    r, ticks, _ = pmu_burn_profile(m, 1)
    t = sum(ticks.values())
    check(998 <= r["samples"] <= 1002, "%d samples, expected 1000 within 2" % r["samples"])
    check(abs(r["samples"] - 10 * t) <= 0.05 * 10 * t,
          "%d samples against %d ticks: not ten times within 5%%" % (r["samples"], t))
    top = r["chains"][0]
    check(top["name"] == "burn_spin" and top["pct"] >= 80,
          "top chain %.1f%% %s, expected burn_spin with 80%% or more" % (top["pct"], top["leaf"]))


@test
def t_profile_pmu_2000(ctx):
    """The longest window on the fastest source: smp=1 under icount, burn
    busy, `profile 2000 all 3` keeps every sample (the buffer Start sized
    for 2000 ms at ~1 kHz): 0 dropped and 2000 samples within 2 (the
    window is 200 ticks, the period exact: see profile_pmu_rate)."""
    m = ctx.use(boot("pmu-2000", append="smp=1", icount=ICOUNT), own=True)
    try:
        check(len(start_burn(m, 4000)) == 1, "burn did not start one task")
        time.sleep(0.3)
        out = m.cmd("profile 2000 all 3", 90)
    finally:
        quiesce(m)
    r = checked_profile(out)
    print("    %d samples, %d dropped" % (r["samples"], r["dropped"]))
    check(r["source"] == PMU_SOURCE, "source %r, expected %r" % (r["source"], PMU_SOURCE))
    check(r["dropped"] == 0, "%d dropped in a 2000 ms window" % r["dropped"])
    check(abs(r["samples"] - 2000) <= 2, "%d samples, expected 2000 within 2" % r["samples"])


@test
def t_profile_windows(ctx):
    """The shortest and the longest window under burn on both sources (the
    PMU's pseudo-NMI, and the tick with pmu=off), each on its own smp=1
    icount machine, where a sample's cost is its own and every overflow is
    delivered: each reports, the header's figures hold (checked_profile:
    no drops in a window the buffers were sized for, a sane cost), and the
    2000 ms window has its 2000 (PMU) samples within 2 or its 200 (tick)
    within 1 (see profile_pmu_rate)."""
    for name, append, source, rate in (("win-pmu", "smp=1", PMU_SOURCE, 1000),
                                       ("win-tick", "smp=1 pmu=off", "tick 100Hz", 100)):
        m = ctx.use(boot(name, append=append, icount=ICOUNT), own=True)
        try:
            check(len(start_burn(m, 10000)) == 1, "burn did not start one task")
            time.sleep(0.3)
            short = checked_profile(m.cmd("profile 1 all 3", 30))
            long_ = checked_profile(m.cmd("profile 2000 all 3", 90))
        finally:
            quiesce(m)
        want = rate * 2
        print("    %s: 1 ms %d samples; 2000 ms %d samples, %d dropped" % (
            name, short["samples"], long_["samples"], long_["dropped"]))
        check(short["source"] == source and long_["source"] == source,
              "%s: sources %r, %r" % (name, short["source"], long_["source"]))
        check(short["samples"] >= 1, "%s: no sample in the 1 ms window" % name)
        check(long_["dropped"] == 0, "%s: %d dropped in 2000 ms" % (name, long_["dropped"]))
        slack = 2 if rate == 1000 else 1
        check(abs(long_["samples"] - want) <= slack, "%s: %d samples in 2000 ms, expected %d "
              "within %d" % (name, long_["samples"], want, slack))


@test
def t_profile_pmu_no_lockstep(ctx):
    """`burn phase`: burn_phase_a then burn_phase_b, half a millisecond
    each on a grid of the clock, a cycle of exactly the counter's period
    (smp=1 under icount: 1 ms of cycles, delivered exactly). A fixed period
    samples one point of the cycle every time and puts nearly every sample
    in one phase; the period's +-1/4 jitter (kernel/pmu.c) moves the point
    by a random walk (one step: 144 us) that crosses the cycle every ~50
    samples, some 40 times over ~2000, so each phase holds near half.
    (With +-1/16, 36 us a step, it crossed about twice in 2 s, and a run
    read 75.8%.) 25-75% each, the two together 95% or more: a
    fixed period's lockstep is far outside it (tried: with the jitter off,
    0.0% and 100.0%). That needs the probe to read the rate
    exactly (1000 per us here, sleep=off); one count per us off, the period
    drifts across the cycle every ~1000 samples and spreads them too, so
    the check then passes either way."""
    m = ctx.use(boot("pmu-phase", append="smp=1", icount=ICOUNT), own=True)
    try:
        check(len(P.burn_pids(m.cmd("burn phase 4000"))) == 1, "burn phase did not start one task")
        time.sleep(0.3)
        out = m.cmd("profile 2000 all 16", 90)
    finally:
        quiesce(m)
    r = checked_profile(out)
    check(r["source"] == PMU_SOURCE, "source %r, expected %r" % (r["source"], PMU_SOURCE))
    # A phase's samples are those whose chain names it: its loop, or the
    # clock read it calls (cycles_now <- burn_phase_a+...).
    share = {"burn_phase_a": 0.0, "burn_phase_b": 0.0}
    for c in r["chains"]:
        for name in [c["name"]] + c["callers"]:
            if name in share:
                share[name] += c["count"] * 100.0 / r["samples"]
                break
    print("    %d samples: burn_phase_a %.1f%%, burn_phase_b %.1f%%" % (
        r["samples"], share["burn_phase_a"], share["burn_phase_b"]))
    check(sum(share.values()) >= 95, "the phases hold %.1f%% of the samples, expected 95%% or more"
          % sum(share.values()))
    for name, pct in share.items():
        check(25 <= pct <= 75, "%s holds %.1f%% of the samples, expected 25-75%%: the counter "
              "keeps step with the workload's 1 ms cycle" % (name, pct))


@test
def t_profile_pmu_every_cpu(ctx):
    """-smp 2, burn on both cpus: every cpu's samples came from its own
    counter and none from its tick (pmu_burn_profile asserts it per cpu,
    from profile_cpus). A kernel that armed the counter on cpu 0 only, and
    left cpu 1 on the tick, fails here whatever the host's load. The rate
    per cpu is not asserted at smp 2: without icount (QEMU 7.2 stops
    delivering the overflow at more than one vCPU under it) it follows the
    host's scheduling, measured from 936/931 per second on a quiet 2-core
    host down to 175/1 with other work on it; the counter's rate is
    t_profile_pmu_rate's, exact under icount, and every cpu runs the same
    arming code that test measures."""
    m = ctx.use(boot("pmu-smp2", smp=2), own=True)
    r, ticks, src = pmu_burn_profile(m, 2)
    print("    per cpu: counter samples %s, ticks meanwhile %s" % (
        {c: n["pmu"] for c, n in sorted(src.items())}, ticks))


@test
def t_profile_pmu_burn(ctx):
    """The PMU source on 4 busy cpus: every cpu on its counter (none on its
    tick), burn's whole chain in the profile and burn_spin the top leaf.
    The share and the rate are not asserted here: 4 vCPU threads and QEMU's
    main loop share the 2-core host, and while a vCPU is descheduled its
    virtual time runs on (burn_spin was measured at 73-79% of the samples,
    time_ns up to 19%, 500-2000 samples a second); the rate is
    t_profile_pmu_rate's, under icount."""
    m = ctx.use(shared())
    r, _, _ = pmu_burn_profile(m, 4)
    top = r["chains"][0]
    # A walk that loses the leaf, or a fold that sorts by the wrong key.
    check(top["name"] == "burn_spin", "top leaf %s, expected burn_spin" % top["leaf"])


def pmu_burn_export(m, fmt):
    """`profile 1000 all <fmt>` under burn on every cpu of the shared PMU
    machine: (the output, the burn pids)."""
    try:
        pids = start_burn(m, 3000)
        check(len(pids) == 4, "burn did not start one task per cpu")
        time.sleep(0.3)
        out = m.cmd("profile 1000 all %s" % fmt, 60)
    finally:
        quiesce(m)
    return out, pids


@test
def t_profile_folded(ctx):
    """`profile 1000 all folded` on the counter, 4 busy cpus: the header
    names the booted kernel and the counter, the counts add up to samples=
    (P.folded), and the hottest stack is burn's, root first. Its share is
    not asserted, as in t_profile_pmu_burn."""
    m = ctx.use(shared())
    out, _ = pmu_burn_export(m, "folded")
    f = P.folded(out)
    check_export_header(f, ARCHES["arm64"]["kernel"], PMU_SOURCE, 4, 1000, "profile folded")
    top = check_burn_folded(f, "profile folded")
    print("    %d samples (%d dropped), %d stacks; top %d %s;%s" % (
        f["samples"], f["dropped"], len(f["stacks"]), top["count"], top["task"], ";".join(top["frames"])))


@test
def t_profile_raw(ctx):
    """`profile 1000 all raw` on the counter, 4 busy cpus: the grammar of
    uapi/profile_raw.h (P.raw, counts adding up to samples=), burn's
    pids, and the hottest chain named from the ELF is burn's stack."""
    m = ctx.use(shared())
    out, pids = pmu_burn_export(m, "raw")
    r = P.raw(out)
    elf = ARCHES["arm64"]["kernel"]
    check_export_header(r, elf, PMU_SOURCE, 4, 1000, "profile raw")
    top, names = check_burn_raw(r, P.nm_namer("aarch64-linux-gnu-nm", elf), 4, pids, "profile raw")
    print("    %d samples (%d dropped), %d chains; top %d on cpu %d: %s" % (
        r["samples"], r["dropped"], len(r["chains"]), top["count"], top["cpu"], " <- ".join(names)))


def masked_profile(m):
    """spin_masked 800 ms (after 150 ms) under a 1000 ms profile: the
    spinning cpu's buffer (sized for the window) holds all of it at 1 kHz. Returns the
    profile and the samples whose chain has masked_spin in it."""
    # One send, no host round trip: the profile must start within the
    # spin's 150 ms delay (and end after it). The second line still
    # crosses QEMU's UART FIFO after the first, at the host's pace.
    out, prof = m.cmds(["spin_masked 800 150", "profile 1000 all 8"], 60)
    check(re.search(r"^spin_masked: pid \d+, 800 ms with interrupts masked after 150 ms$", out, re.M),
          "spin_masked: %r" % out)
    r = checked_profile(prof)
    n = sum(c["count"] for c in r["chains"] if c["name"] == "masked_spin" or "masked_spin" in c["callers"])
    time.sleep(0.2)                     # the spin is over by now
    expect_answers(m, "spin_masked")
    return r, n


@test
def t_pmu_samples_interrupts_off(ctx):
    """A task spinning with interrupts masked (ICC_PMR_EL1) is sampled by
    the pseudo-NMI at the rate a busy cpu gets: 800 ms at 1 kHz. At smp=1
    under icount every overflow is delivered, so ~800: a pseudo-NMI that
    the mask holds back for part of the spin (a priority above the PMR's
    threshold, say) loses that part."""
    # sleep=on: while the guest idles through the spin's delay its clock
    # keeps the host's pace, so the 150 ms are long enough for the
    # profile line to arrive (sleep=off would race through them). The
    # spin itself is busy, where icount's clock is exact either way.
    m = ctx.use(boot("masked-smp1", append="smp=1", icount="shift=0"), own=True)
    r, n = masked_profile(m)
    print("    %d samples in masked_spin of %d, source %s" % (n, r["samples"], r["source"]))
    check(r["source"] == PMU_SOURCE, "source %r" % r["source"])
    check(abs(n - 800) <= 24, "%d samples in masked_spin, expected 800 within 3%% (chains %r)" % (
        n, [(c["count"], c["leaf"]) for c in r["chains"]]))


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
    shell = [r for r in P.ps(m.cmd("ps")) if r["name"] == "shell"]
    check(len(shell) == 1, "ps: expected one shell task: %r" % shell)
    start = m.mark()
    m.send("pmu_irq_stray\r")
    p = m.wait_for(r"PANIC: unexpected PMU interrupt on cpu (\d+) \(INTID 23\): the cycle counter has no "
                   r"overflow recorded in PMOVSSET_EL0 \(counter not armed\)", 60, start)
    check(int(p.group(1)) == shell[0]["cpu"], "the stray interrupt was taken on cpu %s, the shell's is %d" % (
        p.group(1), shell[0]["cpu"]))
    halt = m.wait_for(r"System halted\.", 60, start)
    mine = runner.check_panic_report(m.text(p.start(), halt.end()), shell[0]["pid"], shell[0]["cpu"], 4,
                                     TRAP_REGS)
    check("cmd_pmu_irq_stray" in mine, "the panic's backtrace lacks the command: %r" % mine)


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
def t_serial_paste_5k(ctx):
    """The console's input path: a 10 KB paste and a 10 KB line lose nothing."""
    m = ctx.use(boot("paste", smp=2), own=True)
    console_checks.check_paste(m)
    console_checks.check_long_line(m)


@test
def t_panic_divzero_says_why(ctx):
    m = ctx.use(shared())
    out = m.cmd("panic divzero")
    check(re.search(r"^panic: divzero: arm64 does not trap integer division by zero", out, re.M),
          "panic divzero: %r" % out)
    expect_answers(m, "panic divzero")


def panic_test(ctx, kind, patterns):
    """Boot, panic from the shell, and check the whole report (runner's
    check_panic_report: the header names the shell on its cpu, every
    register, every other cpu's answer), this cpu's backtrace from
    cmd_panic, and that the machine stops."""
    m = ctx.use(boot("panic-" + kind), own=True)
    shell = [r for r in P.ps(m.cmd("ps")) if r["name"] == "shell"]
    check(len(shell) == 1, "ps: expected one shell task: %r" % shell)
    start = m.mark()
    m.send("panic %s\r" % kind)
    for p in patterns:
        m.wait_for(p, 60, start)
    halt = m.wait_for(r"System halted\.", 60, start)
    m.send("echo alive\r")
    time.sleep(2)
    check("alive" not in m.text(halt.end()), "the shell answered after 'System halted.'")
    out = m.text(start, halt.end())
    check("PANIC: " in out, "no PANIC line: %r" % out[:400])
    mine = runner.check_panic_report(out[out.index("PANIC: "):], shell[0]["pid"], shell[0]["cpu"], 4, TRAP_REGS)
    names = P.frames(mine)
    check(re.search(r"^        <- cmd_panic\+0x[0-9a-f]+$", mine, re.M),
          "backtrace lacks '        <- cmd_panic+0x..': %r" % mine)
    check(P.in_order(names, ["cmd_panic", "shell_run_line", "shell_task", "task_start"]),
          "backtrace %r lacks the shell's chain in order" % names)
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


def entropy_lines(m):
    """The boot line and lscpu's line naming the entropy source."""
    boot = re.search(r"^entropy: (.*)$", m.text(), re.M)
    check(boot, "no 'entropy:' boot line: %r" % m.text()[-800:])
    ls = re.search(r"^entropy:\s+(.*)$", m.cmd("lscpu"), re.M)
    check(ls, "lscpu has no entropy line")
    return boot.group(1), ls.group(1)


@test
def t_entropy_virtio_rng(ctx):
    """cortex-a72 has no RNDR: the virtio-rng-device every test machine
    gets, on a virtio-mmio transport from the device tree, is the source."""
    m = ctx.use(shared())
    boot, ls = entropy_lines(m)
    check(re.match(r"virtio-rng \(mmio 0x[0-9a-f]+ v[12] irq \d+\)$", boot),
          "boot line names %r, not a virtio-mmio virtio-rng" % boot)
    check(re.match(r"virtio-rng \(\d+ words drawn\)$", ls), "lscpu: %r" % ls)


@test
def t_entropy_rndr(ctx):
    """-cpu max has FEAT_RNG (ID_AA64ISAR0_EL1.RNDR = 1): RNDR is preferred
    to the virtio-rng device the machine also has."""
    m = ctx.use(boot("rndr", cpu="max", smp=2), own=True)
    boot_line, ls = entropy_lines(m)
    check(boot_line == "rndr (the CPU's instruction)", "boot line: %r" % boot_line)
    r = re.match(r"rndr \((\d+) words drawn, (\d+) empty tries\)$", ls)
    check(r and int(r.group(1)) >= 2, "lscpu: %r" % ls)
    # -cpu max has SHA-512 too (ID_AA64ISAR0_EL1.SHA2 = 2), which includes
    # the SHA-256 instructions: they are used there as well.
    check(re.search(r"^sha256: arm64 SHA-256 instructions \(ID_AA64ISAR0_EL1\.SHA2\), checked", m.text(), re.M),
          "-cpu max: %r" % re.findall(r"^sha256:.*$", m.text(), re.M))


@test
def t_entropy_none(ctx):
    """cortex-a72 and no virtio-rng device: no source, and the boot says so."""
    m = ctx.use(boot("no-rng", smp=2, rng=False), own=True)
    boot_line, ls = entropy_lines(m)
    check(boot_line == "none: no RDRAND/RNDR on this CPU and no usable virtio-rng device "
          "(ushkey= cannot be used)", "boot line: %r" % boot_line)
    check(ls == "none", "lscpu: %r" % ls)


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
    return runner.run(runner.select(TESTS, [a for a in argv if not a.startswith("-")]), Ctx)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
