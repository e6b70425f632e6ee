"""Checks of the shell that read the same on every architecture: the shell
still answers, and every bad-input case of `profile` prints its error and
starts nothing (issues 5 and 9: "behaves the same as on x86")."""
import re

from qemu import check

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
