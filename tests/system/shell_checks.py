"""Checks of the shell that read the same on every architecture: the shell
still answers, every bad-input case of `profile` prints its error and
starts nothing, and every profile report's header holds what it says."""
import re

import parse as P
from qemu import check

# The rate at which each source fills a per-CPU buffer, and the buffer Start
# sizes for a window (prof_ring_records_for, kernel/prof/ring.c): the
# window plus one tick, an eighth more, 16 records, rounded up to a power
# of two (256 at least).
PROF_RATE = {"pmu": 1000, "tick": 100}      # samples per second per busy cpu


def prof_buf_records(ms, hz):
    n = hz * (ms + 10) // 1000
    n += n // 8 + 16
    cap = 256
    while cap < n:
        cap *= 2
    return cap
COST_MAX = 100000                           # cycles or timer units: ~1000x a sample

PROFILE_BAD_INPUT = [
    ("profile 0", r"^profile: window 0 out of range \(1-2000 ms\)$"),
    ("profile 2001", r"^profile: window 2001 out of range \(1-2000 ms\)$"),
    ("profile abc", r"^profile: 'abc' is not a window \(1-2000 ms\), folded or raw$"),
    ("profile 500 all 0", r"^profile: chains 0 out of range \(1-128\)$"),
    ("profile 500 all 129", r"^profile: chains 129 out of range \(1-128\)$"),
    ("profile 500 99999", r"^profile: pid 99999: no such task$"),
    ("profile 500 xyz", r"^profile: 'xyz' is not a pid, all, folded or raw$"),
    ("profile 1 all 3 extra", r"^profile: too many arguments"),
    ("profile 500 all xyz", r"^profile: 'xyz' is not a chain count \(1-128\), folded or raw$"),
    ("profile 500 all fold", r"^profile: 'fold' is not a chain count \(1-128\), folded or raw$"),
    ("profile 500 raw 3", r"^profile: 'raw' must be the last argument \(usage: profile \[ms\] "
                          r"\[pid\|all\] \[chains\|folded\|raw\]\)$"),
    ("profile folded all", r"^profile: 'folded' must be the last argument"),
    ("profile 0 raw", r"^profile: window 0 out of range \(1-2000 ms\)$"),
    ("profile 500 99999 folded", r"^profile: pid 99999: no such task$"),
    ("profile 1 all raw extra", r"^profile: too many arguments"),
]


def expect_answers(m, what):
    out = m.cmd("echo still here", 20)
    check(out.strip() == "still here", "after %s the shell did not answer echo: %r" % (what, out))


def check_error_cases(m, cases, started=()):
    """Each (line, regex): the reply matches, nothing started (started, if
    given, is a word or a tuple of words the output must not contain), and
    the shell answers."""
    words = (started,) if isinstance(started, str) else started
    for line, rx in cases:
        out = m.cmd(line)
        check(re.search(rx, out, re.M), "%r: got %r, expected /%s/" % (line, out, rx))
        for w in words:
            check(w not in out, "%r started something: %r" % (line, out))
        expect_answers(m, line)


def check_profile_bad_input(m):
    check_error_cases(m, PROFILE_BAD_INPUT, started=("profiled", "# sonde"))


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


# burn's stack as `profile ... folded` prints it, root first: the text
# report's chain, burn_spin <- burn_inner <- burn_middle <- burn_outer <-
# burn_task, with its outermost caller, task_start, which every task
# starts in (on both architectures).
BURN_FOLDED = ["task_start", "burn_task", "burn_outer", "burn_middle", "burn_inner", "burn_spin"]


def check_export_header(h, elf, source, ncpus, ms, what, ticks=None):
    """What the header of `profile ... folded|raw` (P.folded, P.raw) must
    say of a run with every CPU busy: the build id of the ELF that was
    booted (readelf -n), the source, the window, every CPU, no drops in a
    window the buffers hold (as checked_profile), samples, and with the
    tick as the source (ticks: the ticks the CPUs took around the window)
    no more samples than ticks."""
    want = P.elf_build_id(elf)
    check(h["build_id"] == want, "%s: build-id %s, readelf -n %s says %s" % (what, h["build_id"], elf, want))
    check(h["source"] == source, "%s: source %r, expected %r" % (what, h["source"], source))
    check(h["ms"] == ms, "%s: ms=%d, expected %d" % (what, h["ms"], ms))
    check(h["cpus"] == ncpus, "%s: cpus=%d, expected %d" % (what, h["cpus"], ncpus))
    rate = PROF_RATE["pmu" if source.startswith("pmu") else "tick"]
    if rate * (ms + 10) <= prof_buf_records(ms, rate) * 1000:
        check(h["dropped"] == 0, "%s: dropped=%d in a window the buffers hold" % (what, h["dropped"]))
    check(h["samples"] > 0, "%s: no samples under burn" % what)
    if ticks is not None:
        check(h["samples"] <= ticks, "%s: samples=%d but the cpus took %d ticks around the window" % (
            what, h["samples"], ticks))


def check_burn_folded(f, what):
    """The hottest stack of a folded profile under burn is burn's, root
    first, printed first; returns it."""
    top = max(f["stacks"], key=lambda st: st["count"])
    check(f["stacks"][0] is top, "%s: stacks not hottest first" % what)
    want = ["burn"] + BURN_FOLDED
    got = [top["task"]] + top["frames"]
    check(got == want, "%s: top stack %s, expected %s" % (what, ";".join(got), ";".join(want)))
    return top


def check_burn_raw(r, name, ncpus, pids, what):
    """A raw profile under burn: chains on CPUs that exist, task burn
    exactly for burn's pids, and the hottest chain, named here with
    name(addr) from the ELF (a return address from address - 1), is burn's
    stack. Returns that chain and its names."""
    for c in r["chains"]:
        check(c["cpu"] < ncpus, "%s: a chain on cpu %d of %d: %r" % (what, c["cpu"], ncpus, c))
        check((c["task"] == "burn") == (c["pid"] in pids), "%s: task %s pid %d, burn pids %r" % (
            what, c["task"], c["pid"], pids))
    top = max(r["chains"], key=lambda c: c["count"])
    names = [name(top["frames"][0])] + [name(a - 1) for a in top["frames"][1:]]
    check(names == BURN_FOLDED[::-1], "%s: hottest chain names %r, expected %r" % (
        what, names, BURN_FOLDED[::-1]))
    return top, names
