#!/usr/bin/env python3
"""Sonde system tests: boot the kernel in QEMU (TCG) and drive its serial shell.

usage: python3 tests/system/run.py [--list] [-h] [NAME...]

  With no NAME, runs every test. A NAME selects tests by exact name or by
  shell-style pattern ('panic_*', '*profile*', 'smp1_*'). --list prints the tests.

Prints one line per test, 'PASS name (secs)' or 'FAIL name (secs): reason'
followed by the relevant serial output, and ends with 'N passed, N
failed' (see runner.py; nothing here retries); the exit status is non-zero
if any test failed (a test that cannot run fails; nothing is skipped), 2 if
a NAME selects no test. Needs build/x86_64/kernel.elf (make) and
qemu-system-x86_64. Python 3 standard library only.

Read-only tests share one booted 4-CPU machine (and one smp=1 machine);
the rate tests share machines under -icount (SHARED_KINDS says why);
tests that need a fresh or special machine (panics, boot parameters, -cpu
models) boot their own. Every QEMU has a bounded lifetime and is killed by
its own pid when its test (or the run) ends.
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
from shell_checks import (check_burn_folded, check_burn_raw, check_error_cases, check_export_header,  # noqa: E402
                          check_profile_bad_input, checked_profile, expect_answers)
from qemu import Fail, Machine, ROOT, KERNEL, check  # noqa: E402

BURN_CHAIN = ["burn_spin", "burn_inner", "burn_middle", "burn_outer", "burn_task"]
KERNEL_SRC_DIRS = ["arch/x86_64", "kernel", "kernel/cmd", "kernel/prof", "kernel/testing", "mm", "lib", "drivers", "net"]

TESTS = []            # (name, fn), in run order


def test(name):
    def reg(fn):
        TESTS.append((name, fn))
        return fn
    return reg


# ---- machines ----------------------------------------------------------

# The machines whose kind ends in "i" run under -icount shift=0,sleep=off:
# guest time is the instructions executed, and an idle guest jumps straight
# to its next timer, so every timer interrupt lands at an exact point of
# guest time however the host schedules QEMU. Without icount a vCPU thread
# the host keeps off its core misses ticks, which collapse: on a loaded
# 2-core host the 4-CPU tick profile measured 106-389 samples of 400. The
# rate tests measure on these machines and assert figures a loaded host
# cannot move. icount runs the vCPUs in turn on one host thread, and at 4
# busy vCPUs one waiting its turn still loses ticks (349-367 of 400
# measured, repeatably): busy rates are measured at smp=2 and smp=1, idle
# ones at smp=4 too. An idle icount guest spins through guest time as fast
# as the host runs it, so one is closed as soon as the tests that use it
# are done (they run back to back).
# Measured, three runs with two busy loops on the 2-core host: idle ticks
# 0-1 off of 10^4-10^5 expected; idle profile 203-204 of 200 (smp=4) and
# 51 of 50; busy profile 200-202 of 200 (smp=2) and 101 of 100; one task
# 50 of 50; round robin 50-60 ticks each, within 6% of each other; a 500
# ms sleep's window 51.0 ticks a CPU every time.
SHARED_KINDS = {
    "smp4": dict(smp=4),
    "smp1": dict(smp=1),
    "smp4i": dict(smp=4, icount="shift=0,sleep=off"),
    "smp2i": dict(smp=2, icount="shift=0,sleep=off"),
    "smp1i": dict(smp=1, icount="shift=0,sleep=off"),
}
ICOUNT_USERS = {}     # test name -> the icount kind it uses


class Ctx:
    """What a test gets: shared machines, private ones, and cleanup."""
    shared = {}       # kind -> Machine, across tests

    def __init__(self, name):
        self.name = name
        self.used = []        # (machine, buffer mark at first use)
        self.private = []
        for kind, m in list(Ctx.shared.items()):
            if kind.endswith("i") and ICOUNT_USERS.get(name) != kind:
                m.close()
                del Ctx.shared[kind]

    def _use(self, m):
        if all(u[0] is not m for u in self.used):
            self.used.append((m, m.mark()))
        return m

    def machine(self, kind="smp4"):
        """The shared machine of this kind, booted (or rebooted) if needed."""
        check(not kind.endswith("i") or ICOUNT_USERS.get(self.name) == kind,
              "test %s uses %s without being registered as one of its users" % (self.name, kind))
        m = Ctx.shared.get(kind)
        if m is not None and not m.alive():
            m.close()
            m = None
        if m is None:
            m = Machine(name=kind, lifetime=600, **SHARED_KINDS[kind])
            Ctx.shared[kind] = m
            self._use(m)
            m.boot()
        return self._use(m)

    def boot(self, smp=4, append="", cpu=None, wait_prompt=True, rng=True):
        """A private machine for this test only; closed when it ends.
        rng=False: without the virtio-rng device (qemu.Machine)."""
        m = Machine(smp=smp, append=append, cpu=cpu, lifetime=120, name=self.name, rng=rng)
        self.private.append(m)
        self._use(m)
        if wait_prompt:
            m.boot()
        return m

    def finish(self, failed):
        for m in self.private:
            m.close()
        # A shared machine a failed test leaves unresponsive is replaced.
        for kind, m in list(Ctx.shared.items()):
            if not any(u[0] is m for u in self.used):
                continue
            ok = m.alive()
            if ok and failed:
                try:
                    quiesce(m)
                    ok = "pong" in m.cmd("echo pong", 15)
                except Fail:
                    ok = False
            if not ok:
                m.close()
                del Ctx.shared[kind]

    def tails(self):
        return "\n".join(runner.quoted_tail(m, start) for m, start in self.used)


# ---- helpers -----------------------------------------------------------

def ps(m):
    return P.ps(m.cmd("ps"))


def cpus(m):
    return P.cpus(m.cmd("cpus"))


def shell_pid(m):
    rows = [r for r in ps(m) if r["name"] == "shell"]
    check(len(rows) == 1, "ps: expected one task named shell, got %r" % rows)
    return rows[0]["pid"], rows[0]["cpu"]


def burn_tasks(m):
    return [r for r in ps(m) if r["name"] == "burn" and r["state"] != "dead"]


def quiesce(m, timeout=15):
    """Stop every burn task and wait until ps lists none."""
    m.cmd("burn stop")
    deadline = time.monotonic() + timeout
    while burn_tasks(m):
        if time.monotonic() > deadline:
            raise Fail("burn tasks still listed %d s after 'burn stop'" % timeout)
        time.sleep(0.3)


def start_burn(m, ms, cpus_arg=None, expect=None):
    out = m.cmd("burn %d%s" % (ms, " " + cpus_arg if cpus_arg else ""))
    pids = P.burn_pids(out)
    if expect is not None:
        check(len(pids) == expect, "burn started %d tasks, expected %d: %r" % (len(pids), expect, out))
    check(len(set(pids)) == len(pids), "burn printed duplicate pids: %r" % out)
    return pids


def nm_addr(name):
    out = subprocess.run(["nm", KERNEL], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == name and f[1] in "tT":
            return int(f[0], 16)
    raise Fail("nm: no text symbol %s in %s" % (name, KERNEL))


def registered_commands():
    names = set()
    rx = re.compile(r'^\s*SHELL_COMMAND\(\s*\w+\s*,\s*"([^"]+)"', re.M)
    for d in KERNEL_SRC_DIRS:
        full = os.path.join(ROOT, d)
        if not os.path.isdir(full):
            continue
        for f in os.listdir(full):
            if f.endswith(".c"):
                with open(os.path.join(full, f), encoding="utf-8", errors="replace") as fh:
                    names.update(rx.findall(fh.read()))
    return names


def check_burn_chain(names, require_first, what):
    """names must hold burn's chain in order, contiguous, ending at
    burn_task; the first burn frame may be any of them (the sample point
    varies). With require_first, it must be frame 0 or (the task was
    caught in a helper such as time_ns called from burn_task) frame 1."""
    idx = [i for i, n in enumerate(names) if n in BURN_CHAIN]
    check(idx, "%s: no burn frame in %r" % (what, names))
    first = idx[0]
    if require_first:
        check(first <= 1, "%s: the running task's first frames %r are not burn's (%r)" % (
            what, names[:2], names))
    k = BURN_CHAIN.index(names[first])
    want = BURN_CHAIN[k:]
    got = names[first:first + len(want)]
    check(got == want, "%s: burn chain out of order: got %r, expected %r" % (what, got, want))


# ======================================================================
# Foundation (issue 2)
# ======================================================================

@test("boot_prompt")
def t_boot_prompt(ctx):
    m = ctx.boot(wait_prompt=False)
    secs = m.boot()
    log = m.text()
    check("Sonde booting" in log, "no 'Sonde booting' banner")
    # x86-64 keeps lib/sha256.c's C (kernel/sha256_boot.c), and says so.
    check(re.search(r"^sha256: portable C \(x86-64's SHA extensions are not used\)$", log, re.M),
          "no boot line naming the portable SHA-256: %r" % re.findall(r"^sha256:.*$", log, re.M))
    print("    boot to prompt: %.2f s (4 cpus, TCG)" % secs)
    check(secs < 10, "boot to prompt took %.2f s (sanity bound 10 s)" % secs)
    expect_answers(m, "boot")


@test("help_lists_all")
def t_help(ctx):
    m = ctx.machine()
    expected = registered_commands()
    check(len(expected) >= 10, "found only %r registered with SHELL_COMMAND" % expected)
    out = m.cmd("help")
    listed = [l.split()[0] for l in out.splitlines() if l.strip()]
    check(len(listed) == len(set(listed)), "help lists a command twice: %r" % listed)
    missing = expected - set(listed)
    extra = set(listed) - expected
    check(not missing, "help does not list %s" % sorted(missing))
    check(not extra, "help lists commands not registered in the sources: %s" % sorted(extra))


@test("version")
def t_version(ctx):
    m = ctx.machine()
    P.check_version(m.cmd("version"), "x86_64", KERNEL)


@test("serial_paste_5k")
def t_serial_paste(ctx):
    m = ctx.boot(smp=2)
    console_checks.check_paste(m)
    console_checks.check_long_line(m)


@test("unknown_command")
def t_unknown(ctx):
    m = ctx.machine()
    out = m.cmd("frobnicate now")
    check(out.strip() == "unknown command 'frobnicate' (try help)", "got %r" % out)
    expect_answers(m, "an unknown command")


@test("long_line")
def t_long_line(ctx):
    m = ctx.machine()
    start = m.mark()
    # Typed in two halves (as a person or a paste would arrive), the line
    # ends after 300 bytes; the kernel must refuse it whole.
    line = "echo " + "x" * 295
    m.send(line[:150])
    time.sleep(0.2)
    m.send(line[150:] + "\r")
    mt = m.wait_for(r"line too long \(at most 255 bytes\): ignored\r?\n> ", 20, start)
    out = m.text(start, mt.end())
    check("x" * 256 not in out.replace("\n", ""), "more than 255 bytes echoed: %r" % out[-400:])
    check("\nxxxxx" not in out, "the long line was executed (echo printed it): %r" % out[-400:])
    expect_answers(m, "a 300-byte line")


@test("echo")
def t_echo(ctx):
    m = ctx.machine()
    out = m.cmd("echo hello   world 42")
    check(out == "hello world 42\n", "got %r" % out)
    out = m.cmd("echo")
    check(out == "\n", "echo with no words: got %r" % out)


# kernel/panic.c's register dump, arch/x86_64/trap.c's formats: the trap
# frame's registers for a panic from an exception or NMI, and the few a
# panic from code can read where it stands.
TRAP_REGS = ["rip", "rsp", "rbp", "rflags", "rax", "rbx", "rcx", "rdx", "rsi", "rdi",
             "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cr3"]
HERE_REGS = ["rsp", "rbp", "rflags", "cr0", "cr3", "cr4"]


def panic_test(ctx, kind, patterns, regs=TRAP_REGS):
    """Boot, panic from the shell, and check the whole report: the header
    names the shell on its CPU, the registers, every pattern, this CPU's
    backtrace, every other CPU's answer, and the machine stops."""
    m = ctx.boot()
    pid, cpu = shell_pid(m)
    start = m.mark()
    m.send("panic %s\r" % kind)
    for p in patterns:
        m.wait_for(p, 60, start)
    halt = m.wait_for(r"System halted\.", 60, start)
    # The machine must stop answering.
    after = halt.end()
    m.send("echo alive\r")
    time.sleep(3)
    rest = m.text(after)
    check("alive" not in rest, "the shell answered after 'System halted.': %r" % rest)
    out = m.text(start, halt.end())
    check("PANIC: " in out, "no PANIC line: %r" % out[:400])
    mine = runner.check_panic_report(out[out.index("PANIC: "):], pid, cpu, ncpus_of("smp4"), regs)
    if regs is TRAP_REGS:
        check(re.search(r"(?<![\w])cs +[0-9a-f]+(?![\w])", out), "register dump lacks cs")
    # GCC moves the unreachable trap into cmd_panic.cold: that is cmd_panic.
    names = [P.sym_name(t).replace(".cold", "") for t in re.findall(r"^        <- (\S+)$", mine, re.M)]
    check(P.in_order(names, ["cmd_panic", "shell_run_line", "shell_task"]),
          "this cpu's backtrace %r lacks the shell's chain in order" % names)
    return out


@test("panic_direct")
def t_panic_direct(ctx):
    panic_test(ctx, "direct", [r"PANIC: requested from the shell", r"Backtrace:"], regs=HERE_REGS)


@test("panic_pagefault")
def t_panic_pf(ctx):
    out = panic_test(ctx, "pagefault", [r"page fault \(vector 14", r"Backtrace:"])
    check(re.search(r"cr2 0x0*7f0000000000", out), "page fault report lacks cr2 0x7f0000000000")


@test("panic_divzero")
def t_panic_div(ctx):
    panic_test(ctx, "divzero", [r"divide error \(vector 0", r"Backtrace:"])


@test("panic_ud")
def t_panic_ud(ctx):
    panic_test(ctx, "ud", [r"invalid opcode \(vector 6", r"Backtrace:"])


@test("panic_nmi")
def t_panic_nmi(ctx):
    panic_test(ctx, "nmi", [r"unexpected NMI", r"Backtrace:"])


@test("boot_unknown_param")
def t_unknown_param(ctx):
    m = ctx.boot(append="foo=bar")
    log = m.text()
    check(re.search(r"unknown parameter 'foo'", log), "boot log does not report 'foo': %r" % log[-600:])
    check(log.count("unknown parameter") == 1, "unknown parameter reported %d times" % log.count("unknown parameter"))
    expect_answers(m, "an unknown boot parameter")


# ======================================================================
# SMP, time and tasks (issue 3)
# ======================================================================

def ncpus_of(kind):
    return SHARED_KINDS[kind]["smp"]


def t_cpus_online(ctx, kind):
    m = ctx.machine(kind)
    n = ncpus_of(kind)
    check(re.search(r"smp: %d cpus online" % n, m.text()), "boot log lacks 'smp: %d cpus online'" % n)
    rows = cpus(m)
    check(sorted(rows) == list(range(n)), "cpus lists %r, expected cpus 0-%d" % (sorted(rows), n - 1))
    check(all(r["state"] == "online" for r in rows.values()), "a cpu is not online: %r" % rows)
    apics = [r["apic"] for r in rows.values()]
    check(len(set(apics)) == n, "apic ids not unique: %r" % apics)


def guest_s(m):
    return P.uptime_ns(m.cmd("uptime")) / 1e9


def wait_guest(m, secs, timeout=60):
    """Wait until secs of guest time have passed (under icount guest time
    runs slower than the host's while the vCPUs are busy)."""
    t0, deadline = guest_s(m), time.monotonic() + timeout
    while guest_s(m) - t0 < secs:
        check(time.monotonic() < deadline, "guest clock moved less than %.1f s in %d s" % (secs, timeout))
        time.sleep(0.2)


def t_tick_rate(ctx, kind):
    """Ticks against the guest's own clock: uptime and cpus read back to
    back (one send, no host round trip), twice, ~3 s apart, on an idle
    machine under icount, where the tick is exact (and an idle guest runs
    through many seconds of guest time in one of the host's): 0.2% (and
    the tick in flight at either end) catches a timer calibrated a little
    off, or an AP whose timer runs at another rate than the boot CPU's."""
    m = ctx.machine(kind)
    quiesce(m)
    u1, c1 = m.cmds(["uptime", "cpus"])
    h1 = time.monotonic()
    time.sleep(1)
    u2, c2 = m.cmds(["uptime", "cpus"])
    h2 = time.monotonic()
    dt = (P.uptime_ns(u2) - P.uptime_ns(u1)) / 1e9
    c1, c2 = P.cpus(c1), P.cpus(c2)
    want = 100 * dt
    got = {cpu: c2[cpu]["ticks"] - c1[cpu]["ticks"] for cpu in c1}
    print("    guest %.3f s (host %.3f s): ticks per cpu %s, expected %.1f" % (
        dt, h2 - h1, " ".join("%d:%d" % kv for kv in sorted(got.items())), want))
    check(sorted(got) == list(range(ncpus_of(kind))), "expected cpus 0-%d, got %r" % (ncpus_of(kind) - 1, got))
    for cpu, d in got.items():
        check(abs(d - want) <= 0.002 * want + 2, "cpu %d ticked %d times in %.3f s of guest time: not 100 Hz "
              "within 0.2%%" % (cpu, d, dt))


def t_ps(ctx, kind):
    m = ctx.machine(kind)
    n = ncpus_of(kind)
    rows = ps(m)
    pids = [r["pid"] for r in rows]
    check(len(pids) == len(set(pids)), "pids not unique: %r" % pids)
    names = [r["name"] for r in rows]
    for i in range(n):
        idle = [r for r in rows if r["name"] == "idle%d" % i]
        check(len(idle) == 1, "expected one idle%d task, got %r" % (i, names))
        check(idle[0]["cpu"] == i, "idle%d is on cpu %d" % (i, idle[0]["cpu"]))
    check(not [x for x in names if re.match(r"idle\d+$", x) and int(x[4:]) >= n],
          "idle task for a cpu that is not there: %r" % names)
    check(names.count("shell") == 1, "expected one shell task: %r" % names)


def t_one_running_per_cpu(ctx, kind):
    """A CPU runs one task at a time, so ps (taken in one snapshot, from
    the shell, which is running) shows at most one 'running' task per CPU
    and the shell's CPU's idle task is not 'running'."""
    m = ctx.machine(kind)
    rows = ps(m)
    per = {}
    for r in rows:
        if r["state"] == "running":
            per.setdefault(r["cpu"], []).append("%d %s" % (r["pid"], r["name"]))
    bad = {c: t for c, t in per.items() if len(t) > 1}
    check(not bad, "more than one task 'running' on a cpu: %r" % bad)


def t_burn_all_cpus(ctx, kind):
    """burn with no cpu list puts one task on every CPU, and each CPU is
    then busy (not in its idle task) for nearly every tick."""
    m = ctx.machine(kind)
    n = ncpus_of(kind)
    try:
        # One send: no host round trip between the first reading and the
        # start, which would count idle ticks a loaded host stretches.
        c1, out = m.cmds(["cpus", "burn 3000"])
        c1 = P.cpus(c1)
        pids = P.burn_pids(out)
        check(len(pids) == n, "burn started %d tasks, expected %d: %r" % (len(pids), n, out))
        time.sleep(1.0)
        c2 = cpus(m)
        print("    busy/ticks per cpu over ~1 s: %s" % " ".join(
            "%d:%d/%d" % (c, c2[c]["busy"] - c1[c]["busy"], c2[c]["ticks"] - c1[c]["ticks"]) for c in sorted(c1)))
        for c in c1:
            dt = c2[c]["ticks"] - c1[c]["ticks"]
            db = c2[c]["busy"] - c1[c]["busy"]
            check(dt > 0, "cpu %d did not tick" % c)
            # 90%: the idle ticks are those before the task first ran.
            # A CPU busy half the time fails: a burn loop that sleeps or
            # yields between rounds, a scheduler that lets the idle task
            # run while burn is runnable, or busy counted on one CPU only.
            check(db >= 0.9 * dt, "cpu %d busy for %d of %d ticks during burn (want >= 90%%)" % (c, db, dt))
        onn = {r["cpu"] for r in ps(m) if r["pid"] in pids}
        check(len(onn) == n, "burn tasks not one per cpu: on cpus %r" % sorted(onn))
        # burn 3000 ends by itself.
        deadline = time.monotonic() + 12
        while any(r["pid"] in pids for r in burn_tasks(m)):
            check(time.monotonic() < deadline, "burn 3000 tasks still there 12 s later")
            time.sleep(0.3)
    finally:
        quiesce(m)


def t_burn_preempt(ctx, kind):
    """Two burn tasks pinned to one CPU share it: after 1 s of guest time
    (icount: the one busy vCPU's time slices are the kernel's alone, not
    the host's) each has about half of the ~100 ticks. A scheduler that
    lets one task run until it blocks, or that requeues the preempted
    task at the front, starves the other."""
    m = ctx.machine(kind)
    cpu = ncpus_of(kind) - 1
    try:
        pids = start_burn(m, 5000, "%d,%d" % (cpu, cpu), expect=2)
        wait_guest(m, 1.0)
        rows = {r["pid"]: r for r in ps(m)}
        for p in pids:
            check(p in rows, "burn pid %d gone after 1 s of 5" % p)
            check(rows[p]["cpu"] == cpu, "burn pid %d on cpu %d, pinned to %d" % (p, rows[p]["cpu"], cpu))
        t = [rows[p]["ticks"] for p in pids]
        print("    two burn tasks on cpu %d after ~1 s of guest time: ticks %r" % (cpu, t))
        check(min(t) >= 40, "a pinned burn task got under 40 of ~100 ticks: %r" % t)
        check(min(t) >= 0.8 * max(t), "round robin unfair: ticks %r" % t)
    finally:
        quiesce(m)


def t_idle_beside_burn(ctx, kind):
    """One CPU busy, the next one idle: the idle CPU keeps its 100 Hz tick
    (so its sleepers wake and its tasks run). Under -icount QEMU 7.2 gives
    each vCPU in turn the time left to the next timer deadline; the busy
    CPU 0 used all of it and CPU 1, next, got none: it took its interrupt
    and executed nothing, ~1 tick in 10 (measured 2.2 a host second
    against 18.6), and its UDP shell did not answer
    (docs/qemu-icount.md). No serial traffic during the wait: a UART
    interrupt ends CPU 0's turn too and would hide it."""
    m = ctx.machine(kind)
    try:
        start_burn(m, 30000, "0", expect=1)
        u1, c1 = m.cmds(["uptime", "cpus"])
        time.sleep(2.0)
        u2, c2 = m.cmds(["uptime", "cpus"])
        dt = (P.uptime_ns(u2) - P.uptime_ns(u1)) / 1e9
        c1, c2 = P.cpus(c1), P.cpus(c2)
        got = {c: c2[c]["ticks"] - c1[c]["ticks"] for c in (0, 1)}
        busy0 = c2[0]["busy"] - c1[0]["busy"]
        print("    guest %.3f s with burn on cpu 0: ticks cpu 0 %d (busy %d), cpu 1 %d" % (
            dt, got[0], busy0, got[1]))
        check(got[0] >= 10, "cpu 0 ticked %d times in %.3f s of guest time" % (got[0], dt))
        check(busy0 >= 0.9 * got[0], "cpu 0 busy %d of %d ticks with burn on it" % (busy0, got[0]))
        check(got[1] >= 0.9 * got[0] - 2, "cpu 1 (idle) ticked %d times while cpu 0 (burn) ticked %d: "
              "the idle vCPU is not given time" % (got[1], got[0]))
    finally:
        quiesce(m)


def t_stacks(ctx, kind):
    m = ctx.machine(kind)
    try:
        start_burn(m, 5000)        # tasks with deep stacks in use
        time.sleep(0.3)
        rows = ps(m)
        st = P.stacks(m.cmd("stacks"))
        tasks = {r["owner"]: r for r in st if r["kind"] == "task"}
        for r in rows:
            check(r["pid"] in tasks, "stacks has no task stack for pid %d (%s)" % (r["pid"], r["name"]))
            s = tasks[r["pid"]]
            check(0 < s["headroom"] < s["size"], "pid %d headroom %d not in (0, %d)" % (
                r["pid"], s["headroom"], s["size"]))
            check(s["deepest"] + s["headroom"] == s["size"], "pid %d: deepest + headroom != size" % r["pid"])
            hm = re.match(r"(\d+)/(\d+)$", r["headroom"])
            check(hm and 0 < int(hm.group(1)) < int(hm.group(2)),
                  "ps headroom %r for pid %d" % (r["headroom"], r["pid"]))
        for s in st:
            check(s["headroom"] <= s["size"], "%s stack %s: headroom %d > size %d" % (
                s["kind"], s["name"], s["headroom"], s["size"]))
    finally:
        quiesce(m)


def t_sleep(ctx, kind):
    """`profile 500 all` sleeps its window (sleep_ticks), on an idle icount
    machine. The window's own length is its sample count: every CPU is
    sampled at each of its ticks, so a window of 500 ms holds 50 or 51 of
    each CPU's ticks, and one that woke k ticks late holds k more. That
    count is the guest's own: the guest clock read before and after (one
    send) also holds the time the rest of the line took to arrive through
    QEMU's 16-byte UART FIFO, which is the host's scheduling (558 ms was
    seen on a loaded host), so it serves only as the lower bound."""
    m = ctx.machine(kind)
    n = ncpus_of(kind)
    quiesce(m)
    u1, pr, u2 = m.cmds(["uptime", "profile 500 all 1", "uptime"])
    r = checked_profile(pr)
    d = (P.uptime_ns(u2) - P.uptime_ns(u1)) / 1e6
    print("    %d samples on %d cpus in the 500 ms window (%.1f a cpu); uptime moved %.1f ms around it" % (
        r["samples"], r["cpus"], r["samples"] / n, d))
    check(r["window"] == 500 and r["cpus"] == n, "profile 500 all: window %d on %d cpus" % (r["window"], r["cpus"]))
    check(d >= 500, "the guest clock moved %.1f ms < 500 ms around a 500 ms sleep" % d)
    # At most one tick late a CPU (52 of 50): a sleep that waits a whole
    # tick too many (a deadline rounded up twice) or is only woken by an
    # unrelated timer holds more. At least 50: one that ends early, less.
    check(50 * n <= r["samples"] <= 52 * n, "%d samples in the 500 ms window on %d cpus: expected 50-52 "
          "a cpu (the sleep woke early or late)" % (r["samples"], n))


for _k in ("smp4", "smp1"):
    for _n, _f in [("cpus_online", t_cpus_online), ("ps", t_ps),
                   ("ps_one_running_per_cpu", t_one_running_per_cpu),
                   ("burn_all_cpus", t_burn_all_cpus), ("stacks_headroom", t_stacks)]:
        test("%s_%s" % (_k, _n))(lambda ctx, f=_f, k=_k: f(ctx, k))


@test("kill")
def t_kill(ctx):
    m = ctx.machine()
    try:
        pid, _ = shell_pid(m)
        out = m.cmd("kill %d" % pid)
        check(out.strip() == "kill: pid %d cannot be killed (only burn and netload tasks)" % pid,
              "kill of the shell: %r" % out)
        out = m.cmd("kill 1")
        check("cannot be killed" in out, "kill of idle0 (pid 1): %r" % out)
        pids = start_burn(m, 20000)
        victim, others = pids[1], [p for p in pids if p != pids[1]]
        out = m.cmd("kill %d" % victim)
        check(out.strip() == "kill: pid %d asked to stop" % victim, "kill of burn: %r" % out)
        deadline = time.monotonic() + 5
        while victim in [r["pid"] for r in burn_tasks(m)]:
            check(time.monotonic() < deadline, "burn pid %d still alive 5 s after kill" % victim)
            time.sleep(0.3)
        alive = {r["pid"] for r in burn_tasks(m)}
        check(set(others) <= alive, "kill %d also stopped others: alive %r" % (victim, alive))
        out = m.cmd("kill %d" % victim)
        check("no such task" in out, "second kill of %d: %r" % (victim, out))
    finally:
        quiesce(m)


@test("burn_bad_input")
def t_burn_bad(ctx):
    m = ctx.machine()
    n = ncpus_of("smp4")
    cases = [
        ("burn 0", r"^burn: time '0' out of range \(1-600000 ms\)$"),
        ("burn 600001", r"^burn: time '600001' out of range \(1-600000 ms\)$"),
        ("burn abc", r"^burn: time 'abc' out of range \(1-600000 ms\)$"),
        ("burn 100 %d" % n, r"^burn: cpu '%d' is not an online cpu \(0-%d\)$" % (n, n - 1)),
        ("burn 100 1,x", r"^burn: cpu 'x' is not an online cpu \(0-%d\)$" % (n - 1)),
        ("burn", r"^burn: usage: burn <ms>"),
        ("burn 100 1 2", r"^burn: usage: burn <ms>"),
    ]
    check_error_cases(m, cases)
    check(not burn_tasks(m), "a bad burn command started tasks: %r" % burn_tasks(m))


@test("kill_bad_input")
def t_kill_bad(ctx):
    m = ctx.machine()
    cases = [
        ("kill abc", r"^kill: pid 'abc' is not a number \(1-2147483647\)$"),
        ("kill 0", r"^kill: pid '0' is not a number \(1-2147483647\)$"),
        ("kill 99999", r"^kill: pid 99999: no such task$"),
        ("kill", r"^kill: usage: kill <pid>$"),
        ("kill 1 2", r"^kill: usage: kill <pid>$"),
    ]
    check_error_cases(m, cases)


# ======================================================================
# Symbols and stack traces (issue 4)
# ======================================================================

@test("backtrace_panic_chain")
def t_bt_panic(ctx):
    out = panic_test(ctx, "divzero", [r"divide error", r"Backtrace:"])
    bt = out.split("Backtrace:", 1)[1]
    # Only this CPU's backtrace: other CPUs' follow as "cpu N:".
    bt = re.split(r"\ncpu \d+:", bt)[0]
    names = [P.sym_name(m.group(1)) for m in re.finditer(r"^        <- (\S+)$", bt, re.M)]
    want = ["panic_chain_inner", "panic_chain_middle", "panic_chain_outer"]
    check(names[:3] == want, "backtrace starts %r, expected %r (from the faulting frame)" % (names[:4], want))
    check(P.in_order(names, want + ["cmd_panic", "shell_run_line", "shell_task"]),
          "backtrace %r lacks the shell's chain after the panic chain" % names)


@test("bt_burn")
def t_bt_burn(ctx):
    m = ctx.machine()
    try:
        _, shcpu = shell_pid(m)
        pids = start_burn(m, 5000)
        time.sleep(0.5)
        rows = {r["pid"]: r for r in ps(m)}
        for p in pids:
            out = m.cmd("bt %d" % p)
            names = P.backtraces(out).get(p)
            check(names, "bt %d printed no frames: %r" % (p, out))
            # Alone on its CPU a burn task is running: its frame 0 is the
            # interrupted instruction, inside burn. On the shell's CPU it
            # may have been switched out (walked from its saved context).
            check_burn_chain(names, rows[p]["cpu"] != shcpu, "bt %d" % p)
    finally:
        quiesce(m)


@test("bt_all")
def t_bt_all(ctx):
    m = ctx.machine()
    try:
        start_burn(m, 5000)
        time.sleep(0.3)
        pids = {r["pid"] for r in ps(m)}
        out = m.cmd("bt all", 60)
        check("did not answer" not in out, "a cpu did not answer: %r" % out[-800:])
        bts = P.backtraces(out)
        missing = pids - set(bts)
        check(not missing, "bt all did not list pids %r" % sorted(missing))
        empty = [p for p in pids if not bts.get(p)]
        check(not empty, "bt all printed no frames for pids %r" % empty)
    finally:
        quiesce(m)


@test("bt_idle")
def t_bt_idle(ctx):
    """Each idle task halts in cpu_idle; its backtrace must say so (and
    must not be the shell's own stack)."""
    m = ctx.machine()
    idle = [r["pid"] for r in ps(m) if re.match(r"idle\d+$", r["name"])]
    check(idle, "no idle tasks in ps")
    for p in idle:
        out = m.cmd("bt %d" % p)
        names = P.backtraces(out).get(p, [])
        check("cpu_idle" in names and "cmd_bt" not in names,
              "bt %d (idle task): %r, expected cpu_idle and not the shell's stack" % (p, names))


@test("sym")
def t_sym(ctx):
    m = ctx.machine()
    for name in ("burn_spin", "panic_chain_inner", "cpu_idle", "prof_window_run"):
        a = nm_addr(name)
        out = m.cmd("sym 0x%x" % a)
        check(out.strip() == "0x%016x %s+0x0" % (a, name), "sym 0x%x: %r, expected %s+0x0" % (a, out, name))
        out = m.cmd("sym %d" % (a + 5))
        check(out.strip() == "0x%016x %s+0x5" % (a + 5, name), "sym %d: %r, expected %s+0x5" % (a + 5, out, name))
    out = m.cmd("sym 0x1000")
    check(out == "0x0000000000001000: no symbol\n", "sym 0x1000: %r" % out)
    out = m.cmd("sym 0x0")
    check(out == "0x0000000000000000: no symbol\n", "sym 0x0: %r" % out)
    out = m.cmd("sym zz")
    check(out.startswith("sym: bad address 'zz'"), "sym zz: %r" % out)


@test("symtab_stable")
def t_symtab(ctx):
    b = os.path.join(ROOT, "build", "x86_64")
    s1, s2 = os.path.join(b, "symtab1.S"), os.path.join(b, "symtab2.S")
    symgen = os.path.join(ROOT, "build", "host", "symgen")
    for f in (s1, s2, symgen, KERNEL):
        check(os.path.exists(f), "%s missing: run make" % f)
    with open(s1, "rb") as f1, open(s2, "rb") as f2:
        a, c = f1.read(), f2.read()
    check(a == c, "symtab1.S (pass 2) and symtab2.S (pass 3) differ")
    check(b"burn_spin" in c, "symtab2.S has no burn_spin")
    nm = subprocess.run(["nm", "-n", "-S", KERNEL], capture_output=True, check=True).stdout
    regen = subprocess.run([symgen], input=nm, capture_output=True, check=True).stdout
    check(regen == c, "nm -n -S kernel.elf | symgen does not reproduce symtab2.S")


# ======================================================================
# The profiler (issue 5)
# ======================================================================

def t_profile_burn_all(ctx, kind):
    """burn on every CPU under `profile 1000 all 3`. Every run asserts
    what the profile must say: burn_spin on top with burn's callers in
    order, samples from every CPU, sorted chains, and never more samples
    than the ticks the CPUs took around the window (`cpus` just before and
    after, in the same send). On an icount machine, where every tick
    arrives, the count is also asserted: 100 a CPU."""
    m = ctx.machine(kind)
    n = ncpus_of(kind)
    exact = kind.endswith("i")
    try:
        start_burn(m, 5000, expect=n)
        time.sleep(0.3)
        c1, out, c2 = m.cmds(["cpus", "profile 1000 all 3", "cpus"], 60)
        r = checked_profile(out)
        c1, c2 = P.cpus(c1), P.cpus(c2)
        took = sum(c2[c]["ticks"] - c1[c]["ticks"] for c in c1)
        want = n * 100
        print("    %d samples on %d cpus (100 Hz: %d; the cpus took %d ticks around the window), "
              "top %.1f%% %s" % (r["samples"], r["cpus"], want, took,
                                 r["chains"][0]["pct"] if r["chains"] else 0,
                                 r["chains"][0]["leaf"] if r["chains"] else "-"))
        check(r["window"] == 1000, "window %d" % r["window"])
        check(r["source"] == "tick 100Hz", "source %r" % r["source"])
        # A profiler that samples twice per tick (two handlers registered,
        # or a sample taken on both edges of the window) has more samples
        # than ticks.
        check(r["samples"] <= took, "%d samples but the cpus took only %d ticks around the window" % (
            r["samples"], took))
        if exact:
            # 3%: a window a tick long or short on a CPU, or one CPU
            # sampled at half the rate, is outside it.
            check(abs(r["samples"] - want) <= 0.03 * want,
                  "%d samples in 1 s under icount, expected %d within 3%% (the cpus took %d ticks "
                  "around the window)" % (r["samples"], want, took))
        check(r["cpus"] == n, "samples on %d cpus, expected %d" % (r["cpus"], n))
        check(1 <= len(r["chains"]) <= 3, "%d chains printed for chains=3" % len(r["chains"]))
        top = r["chains"][0]
        check(top["name"] == "burn_spin", "top leaf %r, expected burn_spin" % top["leaf"])
        check(top["pct"] >= 80, "burn_spin has %.1f%% < 80%%" % top["pct"])
        check(top["callers"][:4] == BURN_CHAIN[1:], "top callers %r, expected %r" % (top["callers"], BURN_CHAIN[1:]))
        counts = [c["count"] for c in r["chains"]]
        check(counts == sorted(counts, reverse=True), "chains not sorted by count: %r" % counts)
        pct = top["count"] * 100.0 / r["samples"]
        check(abs(pct - top["pct"]) <= 0.051, "top %.1f%% but %d/%d samples" % (top["pct"], top["count"], r["samples"]))
    finally:
        quiesce(m)


# Functions burn_task calls directly: a sample in one's prologue sees
# burn_task's frame pointer, so the walk skips burn_task (the known limit
# of frame-pointer walks) and the chain reads e.g. task_should_stop <-
# task_start, with no burn frame in it.
BURN_TASK_CALLEES = ("time_ns", "task_should_stop")


def t_profile_burn_pid(ctx, kind):
    """`profile 500 <pid>` of one of the burn tasks: only that task's
    samples, all in burn, on its one CPU; on an icount machine, one a
    tick: 50 (the task is alone on its CPU)."""
    m = ctx.machine(kind)
    exact = kind.endswith("i")
    try:
        pids = start_burn(m, 5000)
        time.sleep(0.3)
        victim = pids[-1]
        vcpu = [r["cpu"] for r in ps(m) if r["pid"] == victim]
        check(vcpu, "burn pid %d not in ps" % victim)
        c1, out, c2 = m.cmds(["cpus", "profile 500 %d" % victim, "cpus"], 60)
        r = checked_profile(out)
        took = P.cpus(c2)[vcpu[0]]["ticks"] - P.cpus(c1)[vcpu[0]]["ticks"]
        print("    pid %d: %d samples on %d cpus (its cpu %d took %d ticks around the window)" % (
            victim, r["samples"], r["cpus"], vcpu[0], took))
        check(0 < r["samples"] <= took, "%d samples of one task, but its cpu took %d ticks" % (
            r["samples"], took))
        if exact:
            # A filter that lets another task's samples through (the shell's,
            # on the same CPU at smp=1) or drops some of this one's moves
            # the count off 50.
            check(abs(r["samples"] - 50) <= 2, "%d samples for one burn task over 500 ms under icount, "
                  "expected 50 within 2" % r["samples"])
        check(r["cpus"] == 1, "one task's samples on %d cpus" % r["cpus"])
        check(r["chains"], "no chains printed")
        for c in r["chains"]:
            frames = [c["name"]] + c["callers"]
            skipped = frames[0] in BURN_TASK_CALLEES and frames[1:2] == ["task_start"]
            check(skipped or any(f.startswith("burn_") for f in frames),
                  "a chain without burn frames in a burn pid's profile: %r" % frames)
        check(sum(c["count"] for c in r["chains"]) <= r["samples"], "chain counts exceed samples")
    finally:
        quiesce(m)


def t_profile_asleep(ctx, kind):
    m = ctx.machine(kind)
    pid, _ = shell_pid(m)
    out = m.cmd("profile 200 %d" % pid, 60)
    r = checked_profile(out)
    check(r["samples"] == 0, "the sleeping shell got %d samples" % r["samples"])
    check(re.search(r"^no samples for pid %d: that task may have been asleep the whole window$" % pid, out, re.M),
          "no 'may have been asleep' message: %r" % out)


def t_profile_idle(ctx, kind):
    """An idle machine (icount: the idle vCPUs' ticks are exact) takes 50
    samples a CPU in 500 ms, nearly all in cpu_idle."""
    m = ctx.machine(kind)
    n = ncpus_of(kind)
    quiesce(m)
    r = checked_profile(m.cmd("profile 500 all 3", 60))
    want = n * 50
    check(abs(r["samples"] - want) <= 0.03 * want + 1,
          "idle tick profile: %d samples, expected %d within 3%%" % (r["samples"], want))
    check(r["cpus"] == n, "idle samples on %d cpus, expected %d" % (r["cpus"], n))
    check(r["chains"], "no chains")
    top = r["chains"][0]
    idle = sum(c["count"] for c in r["chains"] if c["name"] == "cpu_idle")
    print("    %d samples (expected %d); top %.1f%% %s; cpu_idle leaves %d" % (
        r["samples"], want, top["pct"], top["leaf"], idle))
    check(top["name"] == "cpu_idle", "top leaf on an idle machine is %r, expected cpu_idle" % top["leaf"])
    check(top["pct"] > 50, "cpu_idle's top chain has only %.1f%%" % top["pct"])


def burn_export(m, fmt, n):
    """`profile 1000 all <fmt>` under burn on every CPU, between two
    `cpus`: (the output, the ticks the CPUs took around the window, the
    burn pids)."""
    try:
        pids = start_burn(m, 5000, expect=n)
        time.sleep(0.3)
        c1, out, c2 = m.cmds(["cpus", "profile 1000 all %s" % fmt, "cpus"], 60)
    finally:
        quiesce(m)
    c1, c2 = P.cpus(c1), P.cpus(c2)
    return out, sum(c2[c]["ticks"] - c1[c]["ticks"] for c in c1), pids


@test("smp4_profile_folded")
def t_profile_folded(ctx):
    """`profile 1000 all folded` under burn on every CPU: the header names
    the booted kernel, the counts add up to samples= (P.folded checks),
    and the hottest stack is burn's whole chain, root first, with at
    least 80% of the samples (as the text report's top chain)."""
    m = ctx.machine()
    n = ncpus_of("smp4")
    out, took, _ = burn_export(m, "folded", n)
    f = P.folded(out)
    check_export_header(f, KERNEL, "tick 100Hz", n, 1000, "profile folded", ticks=took)
    top = check_burn_folded(f, "profile folded")
    print("    %d samples, %d stacks; top %d %s;%s" % (f["samples"], len(f["stacks"]), top["count"],
                                                    top["task"], ";".join(top["frames"])))
    check(top["count"] >= 0.8 * f["samples"], "burn's stack has %d of %d samples (< 80%%)" % (
        top["count"], f["samples"]))


@test("smp4_profile_raw")
def t_profile_raw(ctx):
    """`profile 1000 all raw` under burn on every CPU: every line to the
    grammar of uapi/profile_raw.h (P.raw checks, with the counts adding up
    to samples=), burn's samples under burn's pids on CPUs that exist,
    and the hottest chain's addresses, named here from the ELF, are
    burn's stack."""
    m = ctx.machine()
    n = ncpus_of("smp4")
    out, took, pids = burn_export(m, "raw", n)
    r = P.raw(out)
    check_export_header(r, KERNEL, "tick 100Hz", n, 1000, "profile raw", ticks=took)
    top, names = check_burn_raw(r, P.nm_namer("nm", KERNEL), n, pids, "profile raw")
    burn = sum(c["count"] for c in r["chains"] if c["task"] == "burn")
    print("    %d samples, %d chains, %d of them burn's; top %d on cpu %d: %s" % (
        r["samples"], len(r["chains"]), burn, top["count"], top["cpu"], " <- ".join(names)))
    check(burn >= 0.8 * r["samples"], "burn has %d of %d samples" % (burn, r["samples"]))


test("smp4_profile_burn_all")(lambda ctx: t_profile_burn_all(ctx, "smp4"))
test("smp4_profile_burn_pid")(lambda ctx: t_profile_burn_pid(ctx, "smp4"))
for _k in ("smp4", "smp1"):
    test("%s_profile_asleep_shell" % _k)(lambda ctx, k=_k: t_profile_asleep(ctx, k))


# The rates, on the icount machines (see SHARED_KINDS), each machine's
# tests back to back. Idle rates at smp=4 and smp=1; busy ones at smp=2
# and smp=1, where icount delivers every tick.
for _k, _names in [("smp4i", ["tick_rate", "sleep_500ms", "profile_idle", "burn_preempt"]),
                   ("smp2i", ["profile_burn_all", "profile_burn_pid", "idle_beside_burn"]),
                   ("smp1i", ["tick_rate", "sleep_500ms", "profile_idle", "burn_preempt",
                              "profile_burn_all", "profile_burn_pid"])]:
    for _n in _names:
        _name = "%s_%s" % (_k[:-1], _n)
        ICOUNT_USERS[_name] = _k
        test(_name)(lambda ctx, f=globals()["t_" + {"sleep_500ms": "sleep"}.get(_n, _n)], k=_k: f(ctx, k))


@test("bench_report_4x2048")
def t_bench_report(ctx):
    """make bench's Report() figure comes from `bench report` at -smp 4:
    4 CPUs x 2048 records, folded and timed; and the profiler is free
    for the next run after it."""
    m = ctx.machine()
    out = m.cmd("bench report", 120)
    r = P.BENCH_REPORT.search(out)
    check(r, "bench report: no 'report NxN records N cycles' line in %r" % out)
    check((int(r.group(1)), int(r.group(2))) == (4, 2048),
          "bench report: %sx%s records, expected 4x2048: %r" % (r.group(1), r.group(2), out))
    check(int(r.group(3)) > 0, "bench report: 0 cycles: %r" % out)
    out = m.cmd("bench report now")
    check("bench: usage: bench profile | bench report |" in out, "bench report now: %r" % out)
    # The profiler is free again: a run of its own, its header whole.
    h = P.profile(m.cmd("profile 20"))
    check(h["window"] == 20 and h["cpus"] == 4 and h["dropped"] == 0,
          "profile 20 after bench report: %r" % {k: h[k] for k in ("window", "cpus", "dropped")})


@test("profile_bad_input")
def t_profile_bad(ctx):
    m = ctx.machine()
    check_profile_bad_input(m)


# Back-to-back `profile 1` runs in profile_stress: 1000 took 32-53 s on the
# 2-core host (about 53 ms a round trip over serial, the window ending at
# the next tick), inside the ~60 s this test may take, so make test runs
# them all.
PROFILE_STRESS_RUNS = 1000


@test("profile_stress")
def t_profile_stress(ctx):
    """PROFILE_STRESS_RUNS back-to-back `profile 1` while burn runs on every
    CPU: no crash, every run reports, the shell answers, and the heap in
    use is back at its baseline. The baseline is taken after a first
    `profile 1` (the per-CPU buffers are allocated for the window and
    kept) with the same burn tasks running: every later Start finds its
    buffers big enough and allocates nothing, and every report frees what
    it allocated."""
    m = ctx.machine()
    n = PROFILE_STRESS_RUNS
    try:
        start_burn(m, 600000, expect=ncpus_of("smp4"))
        time.sleep(0.3)
        # Not checked_profile: its sample-cost bound does not hold for the
        # two or three samples of a 1 ms window on a host that deschedules
        # vCPUs mid-sample (seen: a median of 0.9 ms); profile_windows
        # checks the 1 ms header under icount.
        out = m.cmd("profile 1")
        check("profiled 1 ms" in out, "first run: %r" % out[-500:])
        base = P.heap_in_use(m.cmd("mem"))
        t0 = time.monotonic()
        for i in range(n):
            out = m.cmd("profile 1", 30)
            check("profiled 1 ms" in out, "run %d: %r" % (i + 1, out[-500:]))
        took = time.monotonic() - t0
        final = P.heap_in_use(m.cmd("mem"))
        print("    %d runs in %.1f s; heap in use %d before, %d after" % (n, took, base, final))
        check(final == base, "heap in use %d after %d runs, %d before" % (final, n, base))
        expect_answers(m, "%d profile runs" % n)
    finally:
        quiesce(m)


@test("smp1_profile_windows")
def t_profile_windows(ctx):
    """The shortest and the longest window under burn, on the tick (QEMU's
    x86 has no counter), on the smp=1 icount machine, where a sample's
    cost is its own (no vCPU descheduled mid-sample, no other vCPU's turn
    charged to it): both report, the header's own figures hold
    (checked_profile: no drops in a window the buffers were sized for, a
    sane cost), the 2000 ms window has its ~200 samples."""
    m = ctx.machine("smp1i")
    try:
        start_burn(m, 10000, expect=1)
        time.sleep(0.3)
        short = checked_profile(m.cmd("profile 1 all 3", 30))
        long_ = checked_profile(m.cmd("profile 2000 all 3", 60))
    finally:
        quiesce(m)
    print("    1 ms: %d samples; 2000 ms: %d samples, %d dropped" % (
        short["samples"], long_["samples"], long_["dropped"]))
    check(short["window"] == 1 and long_["window"] == 2000, "windows %d and %d ms" % (
        short["window"], long_["window"]))
    check(short["samples"] >= 1, "no sample in the 1 ms window (it ends at the next tick)")
    check(long_["dropped"] == 0, "%d dropped in the 2000 ms window" % long_["dropped"])
    check(abs(long_["samples"] - 200) <= 4, "%d samples in 2000 ms at 100 Hz, expected 200 within 2%%"
          % long_["samples"])


ICOUNT_USERS["smp1_profile_windows"] = "smp1i"


# ======================================================================
# Performance-counter source (issue 6)
# ======================================================================

def lscpu_profile(m):
    ls = m.cmd("lscpu")
    r = checked_profile(m.cmd("profile 200", 60))
    return ls, r


@test("pmu_default")
def t_pmu_default(ctx):
    m = ctx.machine()
    ls, r = lscpu_profile(m)
    check(re.search(r"^pmu claims:\s+no performance counter claimed$", ls, re.M), "lscpu: %r" % ls)
    check(re.search(r"^probe:\s+not run \(no counter claimed\)$", ls, re.M), "lscpu probe line: %r" % ls)
    check(re.search(r"^profile source: tick 100Hz$", ls, re.M), "lscpu source: %r" % ls)
    check(re.search(r"^cpus:\s+4$", ls, re.M), "lscpu cpu count: %r" % ls)
    check(r["source"] == "tick 100Hz", "profile source %r" % r["source"])
    check(not r["notes"], "unexpected pmu note %r" % r["notes"])


def pmu_assume(ctx, cpu, vendor, what):
    m = ctx.boot(cpu=cpu, append="pmu=assume")
    ls, r = lscpu_profile(m)
    check(re.search(r"^vendor:\s+%s$" % vendor, ls, re.M), "lscpu vendor: %r" % ls)
    check(re.search(r"^pmu=assume:\s+acting as if", ls, re.M), "lscpu lacks the pmu=assume line: %r" % ls)
    check(re.search(r"^probe:\s+did not count in \d+ us$", ls, re.M), "lscpu probe line: %r" % ls)
    check(re.search(r"^profile source: tick 100Hz$", ls, re.M), "lscpu source: %r" % ls)
    check(r["source"] == "tick 100Hz", "profile source %r" % r["source"])
    check(len(r["notes"]) == 1 and re.match(r"^pmu: %s .*did not count.*tick only$" % what, r["notes"][0]),
          "profile header lacks the probe note: %r" % r["notes"])
    check(r["samples"] > 0, "no samples on the tick fallback")


@test("pmu_assume_intel")
def t_pmu_intel(ctx):
    pmu_assume(ctx, "Skylake-Client", "GenuineIntel", "intel")


@test("pmu_assume_amd")
def t_pmu_amd(ctx):
    pmu_assume(ctx, "EPYC", "AuthenticAMD", "amd")


@test("pmu_off")
def t_pmu_off(ctx):
    m = ctx.boot(append="pmu=off")
    check("unknown parameter" not in m.text(), "pmu=off reported as unknown")
    ls, r = lscpu_profile(m)
    check(re.search(r"^pmu=off:", ls, re.M), "lscpu lacks the pmu=off line: %r" % ls)
    check(re.search(r"^probe:\s+not run", ls, re.M), "lscpu probe line: %r" % ls)
    check(re.search(r"^profile source: tick 100Hz$", ls, re.M), "lscpu source: %r" % ls)
    check(r["source"] == "tick 100Hz", "profile source %r" % r["source"])


# ======================================================================
# Entropy sources (issue 26: the UDP shell's boot epoch)
# ======================================================================

def entropy_lines(m):
    """The boot line and lscpu's line naming the entropy source."""
    boot = re.search(r"^entropy: (.*)$", m.text(), re.M)
    check(boot, "no 'entropy:' boot line: %r" % m.text()[-800:])
    ls = re.search(r"^entropy:\s+(.*)$", m.cmd("lscpu"), re.M)
    check(ls, "lscpu has no entropy line")
    return boot.group(1), ls.group(1)


@test("entropy_virtio_rng")
def t_entropy_virtio_rng(ctx):
    """QEMU's default cpu has no RDRAND: the virtio-rng-pci device every
    test machine gets is the source, found on PCI (1af4:1005)."""
    boot, ls = entropy_lines(ctx.machine())
    m = re.match(r"virtio-rng \(io (0x[0-9a-f]+) irq \d+\)$", boot)
    check(m, "boot line names %r, not the virtio-rng device" % boot)
    check(re.match(r"virtio-rng \(\d+ words drawn\)$", ls), "lscpu: %r" % ls)
    pci = ctx.machine().cmd("pci")
    check(re.search(r"^\S+ 1af4:1005 .*bar0 io %s " % m.group(1), pci, re.M),
          "the device named is not the PCI virtio-rng: %r" % pci)


@test("entropy_rdrand")
def t_entropy_rdrand(ctx):
    """-cpu max has RDRAND (CPUID.01H:ECX bit 30): the instruction is
    preferred to the virtio-rng device the machine also has."""
    boot, ls = entropy_lines(ctx.boot(cpu="max", smp=2))
    check(boot == "rdrand (the CPU's instruction)", "boot line: %r" % boot)
    m = re.match(r"rdrand \((\d+) words drawn, (\d+) empty tries\)$", ls)
    check(m and int(m.group(1)) >= 2, "lscpu: %r" % ls)


@test("entropy_none")
def t_entropy_none(ctx):
    """The default cpu and no virtio-rng device: no source, and the boot
    says so (never a clock in its place)."""
    boot, ls = entropy_lines(ctx.boot(smp=2, rng=False))
    check(boot == "none: no RDRAND/RNDR on this CPU and no usable virtio-rng device "
          "(ushkey= cannot be used)", "boot line: %r" % boot)
    check(ls == "none", "lscpu: %r" % ls)


# ======================================================================
# runner
# ======================================================================

def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__.strip())
        return 0
    if "--list" in argv:
        for n, _ in TESTS:
            print(n)
        return 0
    tests = runner.select(TESTS, argv)
    return runner.run(tests, Ctx)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
