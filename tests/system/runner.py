"""tests/system/runner.py: the loop that runs system tests and reports them,
for tests/system/run.py and arm64_tests.py (net_tests.py shares one guest
across its tests and keeps a loop of its own).

A test is (name, fn); fn(ctx) passes by returning and fails by raising
(Fail, or anything else: a test that cannot run fails). ctx comes from the
suite's new_ctx(name) and has tails() (the serial output to quote when the
test failed) and finish(failed) (closes what the test booted, and whatever
shared machine it left unusable).
"""
import signal
import time

from qemu import Fail, LIVE


def quoted_tail(m, start, n=1500):
    """The last n characters m printed since start, indented under a
    header line naming the machine."""
    return "    --- %s output (tail) ---\n%s" % (
        m.name, "\n".join("    | " + l for l in m.tail(start, n).splitlines()))


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
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0
