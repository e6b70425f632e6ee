"""Checks of the shell that read the same on every architecture: the shell
still answers, every bad-input case of `profile` prints its error and
starts nothing, and every profile report's header holds what it says."""
import re

import parse as P
from qemu import check

# The rate at which each source fills a per-CPU buffer, and the buffer Start
# sizes for a window (prof_records_for, kernel/profiler.c): the window plus
# one tick, an eighth more, 16 records, rounded up to a power of two (64 at
# least).
PROF_RATE = {"pmu": 1000, "tick": 100}      # samples per second per busy cpu


def prof_buf_records(ms, hz):
    n = hz * (ms + 10) // 1000
    n += n // 8 + 16
    cap = 64
    while cap < n:
        cap *= 2
    return cap
COST_MAX = 100000                           # cycles or timer units: ~1000x a sample

PROFILE_BAD_INPUT = [
    ("profile 0", r"^profile: window 0 out of range \(1-2000 ms\)$"),
    ("profile 2001", r"^profile: window 2001 out of range \(1-2000 ms\)$"),
    ("profile abc", r"^profile: window 'abc' is not a number \(1-2000 ms\)$"),
    ("profile 500 all 0", r"^profile: chains 0 out of range \(1-128\)$"),
    ("profile 500 all 129", r"^profile: chains 129 out of range \(1-128\)$"),
    ("profile 500 99999", r"^profile: pid 99999: no such task$"),
    ("profile 500 xyz", r"^profile: pid 'xyz' is not a number or 'all'$"),
    ("profile 1 all 3 extra", r"^profile: too many arguments"),
]


def expect_answers(m, what):
    out = m.cmd("echo still here", 20)
    check(out.strip() == "still here", "after %s the shell did not answer echo: %r" % (what, out))


def check_error_cases(m, cases, started=None):
    """Each (line, regex): the reply matches, nothing started (started, if
    given, is a word the output must not contain), and the shell answers."""
    for line, rx in cases:
        out = m.cmd(line)
        check(re.search(rx, out, re.M), "%r: got %r, expected /%s/" % (line, out, rx))
        if started:
            check(started not in out, "%r started something: %r" % (line, out))
        expect_answers(m, line)


def check_profile_bad_input(m):
    check_error_cases(m, PROFILE_BAD_INPUT, started="profiled")


def checked_profile(out):
    """P.profile(out), with the header's own figures checked: no drops in a
    window whose samples fit the per-cpu buffer Start sized for it (the
    window ends at the first tick after it, so up to 10 ms late: every
    window fits, at the planned rate), and a sample cost line that
    is there exactly when there are samples, with a median that is
    nonzero, sane and between min and max. Every profile check uses it."""
    r = P.profile(out)
    rate = PROF_RATE["pmu" if r["source"].startswith("pmu") else "tick"]
    records = prof_buf_records(r["window"], rate)
    if rate * (r["window"] + 10) <= records * 1000:
        check(r["dropped"] == 0, "%d samples dropped in a %d ms window at %d/s per cpu, which fits "
              "the %d-sample buffers: %r" % (r["dropped"], r["window"], rate, records,
                                             "\n".join(r["lines"][:3])))
    c = r["cost"]
    if not r["samples"]:
        check(c is None, "a sample cost line with no samples: %r" % "\n".join(r["lines"][:4]))
        return r
    check(c is not None, "%d samples but no 'sample cost' line: %r" % (r["samples"], "\n".join(r["lines"][:4])))
    check(0 < c["median"] < COST_MAX and c["cmin"] <= c["median"] <= c["cmax"],
          "sample cost median %d (min %d, max %d) %s: expected 0 < median < %d within min..max" % (
              c["median"], c["cmin"], c["cmax"], c["unit"], COST_MAX))
    return r
