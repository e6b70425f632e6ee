"""tests/system/runner.py: the loop that runs system tests and reports them,
for tests/system/run.py and arm64_tests.py (net_tests.py shares one guest
across its tests and keeps a loop of its own).

A test is (name, fn); fn(ctx) passes by returning and fails by raising
(Fail, or anything else: a test that cannot run fails). ctx comes from the
suite's new_ctx(name) and has tails() (the serial output to quote when the
test failed) and finish(failed) (closes what the test booted, and whatever
shared machine it left unusable).

Nothing here runs a test twice: a test passes or fails on its one run.
Where a figure depends on the host's scheduling, the test measures it
where it does not (under -icount, or at -smp 1) instead of retrying.
"""
import fnmatch
import re
import signal
import sys
import time

from qemu import Fail, LIVE, check


def quoted_tail(m, start, n=1500):
    """The last n characters m printed since start, indented under a
    header line naming the machine."""
    return "    --- %s output (tail) ---\n%s" % (
        m.name, "\n".join("    | " + l for l in m.tail(start, n).splitlines()))


def select(tests, patterns):
    """The tests whose names match any pattern (exact or shell-style), in
    run order; every test with no patterns. A pattern that matches nothing
    is a usage error: it exits 2 naming it, so that a misspelt name never
    runs nothing and passes."""
    if not patterns:
        return list(tests)
    unknown = [p for p in patterns if not any(fnmatch.fnmatchcase(n, p) for n, _ in tests)]
    if unknown:
        print("unknown test%s: %s (try --list)" % ("s" if len(unknown) > 1 else "", ", ".join(unknown)),
              file=sys.stderr)
        sys.exit(2)
    return [(n, f) for n, f in tests if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


def totals(passed, failed):
    """The totals line, and the exit status it means."""
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def run(tests, new_ctx):
    """Runs tests in order; prints 'PASS name (secs)' or 'FAIL name (secs):
    reason' and the tails, then 'total N s' and 'N passed, N failed'.
    Returns the exit status (1 if any test failed). Every QEMU still live
    is closed on the way out, after an interrupt (^C, SIGTERM) too."""
    def on_signal(sig, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    passed = failed = 0
    t_all = time.monotonic()
    try:
        for name, fn in tests:
            ctx = new_ctx(name)
            t0 = time.monotonic()
            err = None
            try:
                fn(ctx)
            except Fail as e:
                err = str(e)
            except KeyboardInterrupt:
                raise
            except Exception as e:          # a test that cannot run fails
                err = "%s: %s" % (type(e).__name__, e)
            tails = ctx.tails() if err else ""
            try:
                ctx.finish(err is not None)
            except Exception as e:
                err = err or "cleanup: %s" % e
            dt = time.monotonic() - t0
            if err is None:
                passed += 1
                print("PASS %s (%.1f s)" % (name, dt), flush=True)
            else:
                failed += 1
                print("FAIL %s (%.1f s): %s\n%s" % (name, dt, err, tails), flush=True)
    except KeyboardInterrupt:
        print("interrupted")
        failed += 1
    finally:
        for m in list(LIVE):
            m.close()
    print("total %.1f s" % (time.monotonic() - t_all))
    return totals(passed, failed)


def main(argv, tests, new_ctx, set_arch):
    """The command line of a test file that runs on either architecture:
    [--arch x86_64|arm64] [--list] [NAME...]; set_arch(arch) is called
    before any test runs. Returns the exit status."""
    argv = list(argv)
    if "--arch" in argv:
        i = argv.index("--arch")
        if i + 1 >= len(argv) or argv[i + 1] not in ("x86_64", "arm64"):
            print("--arch wants x86_64 or arm64", file=sys.stderr)
            return 2
        set_arch(argv[i + 1])
        del argv[i:i + 2]
    if "--list" in argv:
        for name, _ in tests:
            print(name)
        return 0
    return run(select(tests, [a for a in argv if not a.startswith("-")]), new_ctx)


# ---- panic reports (kernel/panic.c), the same on both architectures ------

def check_panic_report(out, pid, cpu, ncpus, regs, task="shell"):
    """out is the serial output from the panic's PANIC line to 'System
    halted.'. It must name the CPU and task that panicked ('cpu N, task P
    (name)'), dump every register in regs with a 16-hex-digit value
    between that line and 'Backtrace:', and hold an answer ('cpu N:' and
    at least one frame) from every other online CPU, once each, in order;
    'cpu N did not answer the NMI' fails it. Returns this CPU's own
    backtrace block (the lines between 'Backtrace:' and the first other
    CPU's answer)."""
    hm = re.search(r"^PANIC: .*\n(cpu (\d+), task (\d+) \((\S+)\))$", out, re.M)
    check(hm, "no 'cpu N, task N (name)' line right under the PANIC line: %r" % out[:600])
    # The panicking CPU and task are the ones that ran the command: a
    # header that reads another CPU's current task (a wrong per-CPU
    # pointer) or the boot placeholder names something else.
    check((int(hm.group(2)), int(hm.group(3)), hm.group(4)) == (cpu, pid, task),
          "panic header %r, expected 'cpu %d, task %d (%s)'" % (hm.group(1), cpu, pid, task))
    rest = out[hm.end():]
    check("Backtrace:" in rest, "no 'Backtrace:' after the header")
    dump, bt = rest.split("Backtrace:", 1)
    # Every register, each with its full 64-bit value: a dump that drops
    # a line, or prints a value with %x (cut to 32 bits), fails here.
    missing = [r for r in regs if not re.search(r"(?<![\w])%s +[0-9a-f]{16}(?![\w])" % re.escape(r), dump)]
    check(not missing, "register dump lacks %s with a 16-hex-digit value: %r" % (missing, dump))
    check(not re.search(r"did not answer", out), "a cpu did not answer the NMI: %r" % re.findall(
        r"^.*did not answer.*$", out, re.M))
    others = [c for c in range(ncpus) if c != cpu]
    answers = re.findall(r"^cpu (\d+):\n((?:        <- \S+\n)*)", bt, re.M)
    # The panic stops every other CPU by NMI and prints its backtrace: a
    # CPU skipped in that loop, or one whose answer never came, is missing.
    check([int(c) for c, _ in answers] == others,
          "other cpus' answers %r, expected cpus %r" % ([c for c, _ in answers], others))
    empty = [c for c, frames in answers if not frames]
    check(not empty, "cpus %r answered with no frames" % empty)
    return re.split(r"^cpu \d+:$", bt, maxsplit=1, flags=re.M)[0]
