#!/usr/bin/env python3
"""Sonde heap profiling system tests: `heaptest`'s known allocation sites
measured by `profile heap`, `profile allocs` and `profile allocs stream`,
an injected leak, and four CPUs allocating at a high sampling rate
(docs/profiling.md).

usage: python3 tests/system/heap_tests.py [--arch x86_64|arm64] [--list] [NAME...]

One 4-CPU machine per run, booted once; the tests run on it in order
(each leaves the heap as it found it, but for the leak it injects). Prints
'PASS name (secs)' or 'FAIL name (secs): reason' plus the serial tail, and
ends with 'N passed, N failed'. Nothing is retried: the rates are chosen
so that every estimate checked to 10% is at least 3 standard deviations
inside it (sd of an estimate of B bytes at rate R: sqrt(R / B)).
Python 3 standard library only.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from qemu import ARCHES, Fail, Machine, ROOT, check, free_port, NICS  # noqa: E402

PROF = os.path.join(ROOT, "build", "host", "sonde-prof")

MIB = 1 << 20
CHAIN = re.compile(r"^\d+\.\d% (\d+) bytes (\d+) objects (\S+)$", re.M)
INUSE = re.compile(r"^heap in use: rate (\d+) bytes, (\d+) samples, (\d+) did not fit the table$", re.M)
ALLOCS = re.compile(r"^heap allocated in (\d+) ms: rate (\d+) bytes, (\d+) samples on (\d+) cpus, (\d+) dropped$", re.M)
MEM = re.compile(r"heap in use (\d+) bytes \(\d+ pages, (\d+) allocs, (\d+) frees\)\n"
                 r"heap profiling (?:on, rate (\d+) bytes|off): (\d+) sampled blocks live "
                 r"\(table \d+\), (\d+) samples, (\d+) did not fit, (\d+) retired")

TESTS = []
ARCH = ["x86_64"]
MACHINE = {}


def test(name):
    def reg(fn):
        TESTS.append((name, fn))
        return fn
    return reg


def by_site(out):
    """{leaf function: [bytes, objects]} over a heap text report's chains."""
    sites = {}
    for b, o, leaf in CHAIN.findall(out):
        fn = leaf.split("+")[0]
        s = sites.setdefault(fn, [0, 0])
        s[0] += int(b)
        s[1] += int(o)
    return sites


def within(what, got, want, tol=0.10):
    check(abs(got - want) <= tol * want,
          "%s: estimated %d, truth %d (off by %.1f%%, allowed %d%%)" % (
              what, got, want, 100.0 * (got - want) / want, int(tol * 100)))


def mem(m):
    out = m.cmd("mem")
    g = MEM.search(out)
    check(g, "mem's output not understood: %r" % out)
    check("found no entry" not in out, "mem reports sampled frees with no entry: %r" % out)
    return [int(x) if x is not None else 0 for x in g.groups()]


def ok(m, line, want, timeout=60):
    out = m.cmd(line, timeout)
    check(want in out, "%s: expected %r, got %r" % (line, want, out))
    return out


@test("heap_inuse_sites")
def t_inuse(ctx):
    """Sites A (4 MiB in 4 KiB blocks), B (1 MiB in 64-byte objects) and
    D (2 MiB in 2-page blocks from page_alloc, not kmalloc) within 10% in
    bytes and objects at rate 1024 (>= 200 samples; B's sd 3.1%), C (64
    MiB allocated and freed) near 0."""
    m = ctx.m
    ok(m, "profile heap rate 1024", "profile: heap profiling at rate 1024 bytes")
    ok(m, "heaptest keep", "heaptest: kept A 1024 x 4096 bytes", 120)
    out = m.cmd("profile heap 128", 60)
    h = INUSE.search(out)
    check(h, "no in-use header: %r" % out[:300])
    check(int(h.group(1)) == 1024 and int(h.group(2)) >= 200 and int(h.group(3)) == 0,
          "header: %s" % h.group(0))
    sites = by_site(out)
    check("heaptest_site_a" in sites and "heaptest_site_b" in sites,
          "sites A and B not both in the report: %s" % sorted(sites))
    within("site A bytes", sites["heaptest_site_a"][0], 4 * MIB)
    within("site A objects", sites["heaptest_site_a"][1], 1024)
    within("site B bytes", sites["heaptest_site_b"][0], MIB)
    within("site B objects", sites["heaptest_site_b"][1], 16384)
    check("heaptest_site_d" in sites, "site D's whole pages not sampled: %s" % sorted(sites))
    within("site D bytes", sites["heaptest_site_d"][0], 2 * MIB)
    within("site D objects", sites["heaptest_site_d"][1], 256)
    c = sites.get("heaptest_site_c", [0, 0])[0]
    check(c <= 0.01 * 64 * MIB, "site C shows %d bytes in use after freeing all" % c)
    ok(m, "heaptest free", "heaptest: freed")
    sites = by_site(m.cmd("profile heap 128", 60))
    check(not {"heaptest_site_a", "heaptest_site_b", "heaptest_site_d"} & set(sites),
          "A, B or D still in use after heaptest free: %s" % sites)


@test("heap_allocs_window")
def t_allocs(ctx):
    """C allocates 64 MiB in 256-byte objects inside a 2 s window at rate
    16384 (sd 1.6%): dominant, within 10% in bytes and objects."""
    m = ctx.m
    ok(m, "profile heap rate 16384", "at rate 16384 bytes")
    ok(m, "heaptest churn 200", "heaptest: churn pid")
    out = m.cmd("profile allocs 2000 all 128", 60)
    st = m.cmd("heaptest status")
    g = re.search(r"churn done in (\d+) ms", st)
    check(g, "the churn had not finished when the window closed: %r" % st)
    check(int(g.group(1)) < 1700, "the churn took %s ms: longer than the window after its "
          "200 ms delay, so the window cannot hold it all" % g.group(1))
    h = ALLOCS.search(out)
    check(h, "no allocs header: %r" % out[:300])
    check(h.group(1) == "2000" and h.group(2) == "16384" and h.group(5) == "0", "header: %s" % h.group(0))
    first = CHAIN.search(out)
    check(first and first.group(3).startswith("heaptest_site_c+"),
          "C is not the first chain: %r" % out[:400])
    c = by_site(out)["heaptest_site_c"]
    within("site C bytes allocated", c[0], 64 * MIB)
    within("site C objects allocated", c[1], 262144)


@test("heap_leak_found")
def t_leak(ctx):
    """An injected leak of 10000 x 128 bytes grows site L's in-use figure
    by its size (rate 1024: sd 2.8%)."""
    m = ctx.m
    ok(m, "profile heap rate 1024", "at rate 1024 bytes")
    before = by_site(m.cmd("profile heap 128", 60)).get("heaptest_site_leak", [0, 0])
    ok(m, "heaptest leak 10000", "heaptest: leaked 10000 x 128 bytes")
    out = m.cmd("profile heap 128", 60)
    after = by_site(out).get("heaptest_site_leak", [0, 0])
    within("leaked bytes", after[0] - before[0], 10000 * 128)
    within("leaked objects", after[1] - before[1], 10000)


def stress_wait(m):
    """`heaptest status` once every stress task is done."""
    deadline = time.monotonic() + 60
    while True:
        st = m.cmd("heaptest status")
        if re.search(r"stress 0 running, [1-9]\d* done", st):
            return st
        check(time.monotonic() < deadline, "stress did not finish: %r" % st)
        time.sleep(0.5)


@test("heap_four_cpus_stress")
def t_stress(ctx):
    """Four CPUs allocate and free mixed sizes (kmalloc's small and
    large, and page_alloc's whole pages) at rate 64, with a profile allocs window in the middle: afterwards the
    heap's bytes in use, its allocs - frees and the table's live blocks
    are back where they were, every sampled free found its entry, and
    nothing was retired that was not sampled. First a short stress with
    profiling off, so that every CPU's countdown is off (INT64_MAX, which
    nothing crosses) however the change reached it: then samples from all
    four during the stress prove that each took the change to 64 itself
    (arm64: an SGI into its x18)."""
    m = ctx.m
    ok(m, "profile heap rate off", "heap profiling off")
    ok(m, "heaptest stress 100", "heaptest: stress 100 ms")
    stress_wait(m)
    ok(m, "profile heap rate 64", "at rate 64 bytes")
    # The window's rings stay once grown (they are never freed): a first
    # window grows them, so that the comparison below is of the stress
    # alone, whichever test ran before.
    ok(m, "profile allocs 10", "heap allocated in 10 ms")
    b = mem(m)
    # Both lines at once: the kernel's shell reads the second as soon as
    # the first returns, with no host round trip between (on a busy host
    # one can outlast the stress's 2 s, and the window would miss it).
    started, out = m.cmds(["heaptest stress 2000", "profile allocs 500"], 60)
    check("heaptest: stress 2000 ms, pids" in started, "heaptest stress 2000: %r" % started)
    h = ALLOCS.search(out)
    check(h and "ht_stress_task+" in out,
          "profile allocs during the stress does not show it: %r" % out[:300])
    check(h.group(4) == "4", "samples on %s cpus during the stress, not all 4: %r"
          % (h.group(4), out[:300]))
    st = stress_wait(m)
    g = re.search(r"(\d+) pairs, (\d+) failed", st)
    check(g and int(g.group(1)) > 1000 and g.group(2) == "0", "stress: %r" % st)
    ok(m, "profile heap rate off", "heap profiling off")
    a = mem(m)
    check(a[0] == b[0], "heap in use %d bytes after the stress, %d before" % (a[0], b[0]))
    check(a[1] - a[2] == b[1] - b[2], "allocs - frees %d after, %d before" % (a[1] - a[2], b[1] - b[2]))
    check(a[4] == b[4], "%d sampled blocks live after, %d before" % (a[4], b[4]))
    check(a[5] - b[5] > 1000, "only %d samples during the stress at rate 64" % (a[5] - b[5]))
    check(a[5] - b[5] == (a[7] - b[7]) + (a[6] - b[6]),
          "samples %d != retired %d + did not fit %d" % (a[5] - b[5], a[7] - b[7], a[6] - b[6]))


def sonde_prof(ctx, *args):
    m = ctx.m
    r = subprocess.run([PROF, "record", "-e", ARCHES[ARCH[0]]["kernel"]] + list(args) + [m.target],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "sonde-prof record %s: exit %d: %s" % (" ".join(args), r.returncode,
                                                                    r.stderr))


def pprof_top(ctx, index, path, *extra):
    """{function: flat value} from go tool pprof -top -sample_index=index."""
    r = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-sample_index=" + index,
                        "-top", "-nodecount=100", "-unit=byte" if "space" in index else "-unit=count"]
                       + list(extra) + [path], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, HOME=ctx.tmp))
    check(r.returncode == 0, "go tool pprof -sample_index=%s: %s" % (index, r.stderr))
    rows = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 6 and f[1].endswith("%"):
            v = re.match(r"[\d.]+", f[0])
            rows[f[5]] = float(v.group(0)) if v else 0.0
    return rows, r.stdout


@test("heap_sonde_prof_pprof")
def t_pprof(ctx):
    """sonde-prof record --heap and --allocs write pprof with Go's four
    sample types: go tool pprof -sample_index=inuse_space puts site A
    first (4 MiB), inuse_objects site B (16384 objects), and an allocs
    window's alloc_space site C; folded weighs bytes."""
    m = ctx.m
    ok(m, "profile heap rate 1024", "at rate 1024 bytes")
    ok(m, "heaptest keep", "heaptest: kept A", 120)
    heap = os.path.join(ctx.tmp, "heap.pb.gz")
    sonde_prof(ctx, "--heap", "-o", heap)
    rows, out = pprof_top(ctx, "inuse_space", heap)
    check(rows and max(rows, key=rows.get) == "heaptest_site_a", "inuse_space top:\n%s" % out)
    within("pprof inuse_space of site A", rows["heaptest_site_a"], 4 * MIB)
    rows, out = pprof_top(ctx, "inuse_objects", heap)
    check(max(rows, key=rows.get) == "heaptest_site_b", "inuse_objects top:\n%s" % out)
    within("pprof inuse_objects of site B", rows["heaptest_site_b"], 16384)
    folded = os.path.join(ctx.tmp, "heap.folded")
    sonde_prof(ctx, "--heap", "-o", folded)
    a = sum(int(l.rsplit(" ", 1)[1]) for l in open(folded) if l.rstrip().split(" ")[0].endswith(";heaptest_site_a"))
    within("folded bytes of site A", a, 4 * MIB)
    ok(m, "heaptest free", "heaptest: freed")
    ok(m, "profile heap rate 16384", "at rate 16384 bytes")
    ok(m, "heaptest churn 200", "heaptest: churn pid")
    allocs = os.path.join(ctx.tmp, "allocs.pb.gz")
    sonde_prof(ctx, "--allocs", "-d", "2000", "-o", allocs)
    rows, out = pprof_top(ctx, "alloc_space", allocs)
    check(max(rows, key=rows.get) == "heaptest_site_c", "alloc_space top:\n%s" % out)
    within("pprof alloc_space of site C", rows["heaptest_site_c"], 64 * MIB)


# `profile status`'s control line (uapi/stream_ctl.h) once the stream ended.
STATUS_END = re.compile(r"^stream v=1 op=status result=ok state=ended .*\breason=elapsed "
                        r"records=(\d+) datagrams=\d+ drops=(\d+) sendfail=(\d+) ", re.M)
STATS = re.compile(r"^total streams 1 covered_ms (\d+) records (\d+) lost_records (\d+) "
                   r"lost_dgrams \d+ dups \d+ drops (\d+) refused 0$", re.M)


def wait_cmd(m, line, pattern, what, secs=30):
    """Run line on the serial shell until its answer matches pattern: the match."""
    deadline = time.monotonic() + secs
    while True:
        out = m.cmd(line)
        g = re.search(pattern, out)
        if g:
            return g
        check(time.monotonic() < deadline, "%s: %s never said %r: %r" % (what, line, pattern, out))
        time.sleep(0.1)


@test("heap_allocs_stream")
def t_allocs_stream(ctx):
    """`profile allocs stream` from a live kernel into `sonde-prof record
    --allocs -d 4s` (over 2 s: streamed): C's 64 MiB in 256-byte objects,
    allocated wholly inside the stream (it starts once the stream runs and
    ends while it still does), within 10% in the folded bytes (rate 16384:
    sd 1.6%) and first in pprof's alloc_space; the kernel's records sent
    are the collector's received plus those lost on the wire, its drops
    the collector's, and the allocator took at least every record sent or
    dropped."""
    m = ctx.m
    elf = ARCHES[ARCH[0]]["kernel"]
    ok(m, "profile heap rate 16384", "at rate 16384 bytes")
    samples0 = mem(m)[5]
    folded, stats, raw = (os.path.join(ctx.tmp, n) for n in ("s.folded", "s.stats", "s.raw"))
    rec = subprocess.Popen([PROF, "record", "--allocs", "-d", "4s", "--stats", stats, "-r", raw,
                            "-e", elf, "-o", folded, m.target],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_cmd(m, "profile status", r"(?m)^stream v=1 op=status result=ok state=streaming .*"
                 r"\bconfirmed=1\b", "the stream", 20)
        ok(m, "heaptest churn 0", "heaptest: churn pid")
        wait_cmd(m, "heaptest status", r"churn done in \d+ ms", "the churn", 20)
        running = m.cmd("profile status")
        check(re.search(r"(?m)^stream v=1 op=status result=ok state=streaming ", running),
              "the stream ended before the churn did: the window cannot hold it all: %r" % running)
        _, err = rec.communicate(timeout=60)
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.communicate()
    check(rec.returncode == 0, "record --allocs -d 4s: exit %d: %s" % (rec.returncode, err))
    end = STATUS_END.search(m.cmd("profile status"))
    check(end, "the kernel's account of the stream not understood: %r" % m.cmd("profile status"))
    sent, dropped, failed = (int(x) for x in end.groups())
    st = STATS.search(open(stats).read())
    check(st, "--stats: %r" % open(stats).read())
    covered, got, lost, drops = (int(x) for x in st.groups())
    print("    kernel: %d records sent, %d dropped, %d send failures; collector: %d received, "
          "%d lost on the wire, %d drops, %d ms covered" % (sent, dropped, failed, got, lost,
                                                           drops, covered))
    check(sent == got + lost, "the kernel sent %d records, the collector got %d and counted %d "
          "lost" % (sent, got, lost))
    check(dropped == drops, "the kernel dropped %d, the collector counted %d" % (dropped, drops))
    samples1 = mem(m)[5]
    check(samples1 - samples0 >= sent + dropped,
          "the allocator took %d samples, fewer than the %d records sent and %d dropped"
          % (samples1 - samples0, sent, dropped))
    c = sum(int(l.rsplit(" ", 1)[1]) for l in open(folded)
            if l.rsplit(" ", 1)[0].endswith(";heaptest_site_c"))
    print("    site C: %d bytes estimated from the stream, %d allocated" % (c, 64 * MIB))
    within("streamed folded bytes of site C", c, 64 * MIB)
    head = open(raw).readline()
    check(re.match(r"# sonde raw build-id=[0-9a-f]+ source=heap allocs rate 16384 samples=%d "
                   r"dropped=%d cpus=\d+ ms=\d+ kind=heap$" % (got, drops), head),
          "raw header: %r" % head)
    pb = os.path.join(ctx.tmp, "s.pb.gz")
    r = subprocess.run([PROF, "report", "-i", raw, "-e", elf, "-o", pb],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "report -i %s: %s" % (raw, r.stderr))
    rows, out = pprof_top(ctx, "alloc_space", pb)
    check(max(rows, key=rows.get) == "heaptest_site_c", "streamed alloc_space top:\n%s" % out)
    within("streamed pprof alloc_space of site C", rows["heaptest_site_c"], 64 * MIB)


def diff(ctx, *args):
    return subprocess.run([PROF, "diff"] + list(args), capture_output=True, text=True, timeout=60)


@test("heap_leak_diff")
def t_leak_diff(ctx):
    """An injected leak (heaptest leak 10000: 10000 x 128 bytes) is the top
    chain of sonde-prof diff between two heap profiles, with its size
    (rate 1024: sd 2.8%), in .txt, .folded, .svg and .pb.gz; the same
    profiles as .pb.gz diff to the same bytes, and go tool pprof
    -diff_base over them agrees with diff's .pb.gz; a CPU profile and a
    heap profile do not compare, nor is a diff's output an input."""
    m = ctx.m
    elf = ARCHES[ARCH[0]]["kernel"]
    ok(m, "profile heap rate 1024", "at rate 1024 bytes")
    base, new = os.path.join(ctx.tmp, "base.raw"), os.path.join(ctx.tmp, "new.raw")
    sonde_prof(ctx, "--heap", "-r", base, "-o", os.path.join(ctx.tmp, "b.txt"))
    ok(m, "heaptest leak 10000", "heaptest: leaked 10000 x 128 bytes")
    sonde_prof(ctx, "--heap", "-r", new, "-o", os.path.join(ctx.tmp, "n.txt"))
    out = {}
    for ext in ("txt", "folded", "svg", "pb.gz"):
        out[ext] = os.path.join(ctx.tmp, "d." + ext)
        r = diff(ctx, base, new, "-e", elf, "-o", out[ext])
        check(r.returncode == 0, "diff -o .%s: exit %d: %s" % (ext, r.returncode, r.stderr))
    lines = open(out["txt"]).read().splitlines()
    check(len(lines) > 2, "diff .txt: %r" % lines)
    top = lines[2].split()
    check(top[-1].endswith(";heaptest_site_leak"), "the top growth is not the leak: %r" % lines[:5])
    within("diff: the leak's growth", int(top[0]), 10000 * 128)
    grown = [l.rsplit(" ", 2) for l in open(out["folded"]) if l.split(" ")[0].endswith(";heaptest_site_leak")]
    check(grown and all(int(b) < int(n) for _, b, n in grown), "folded: %r" % grown)
    svg = open(out["svg"]).read()
    check("heaptest_site_leak" in svg and "rgb(255," in svg, "svg lacks the leak or any red")
    rows, top_out = pprof_top(ctx, "inuse_space", out["pb.gz"])
    check(max(rows, key=rows.get) == "heaptest_site_leak", "pprof of the diff:\n%s" % top_out)
    within("pprof diff: the leak", rows["heaptest_site_leak"], 10000 * 128)
    # The same two profiles as .pb.gz (report, offline): diffed without an
    # ELF, and mixed with a raw one, they give the raw diff's very bytes.
    pb = {}
    for name, raw in (("base", base), ("new", new)):
        pb[name] = os.path.join(ctx.tmp, name + ".pb.gz")
        r = subprocess.run([PROF, "report", "-i", raw, "-e", elf, "-o", pb[name]],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "report %s: %s" % (name, r.stderr))
    for ext in ("txt", "folded"):
        for b, n, e in ((pb["base"], pb["new"], []), (base, pb["new"], ["-e", elf])):
            got = os.path.join(ctx.tmp, "p." + ext)
            r = diff(ctx, b, n, *e, "-o", got)
            check(r.returncode == 0, "diff %s %s: %s" % (b, n, r.stderr))
            check(open(got).read() == open(out[ext]).read(),
                  "diff of %s and %s differs from the raw profiles' .%s" % (b, n, ext))
    # go tool pprof's own -diff_base over the two agrees with diff's .pb.gz.
    rows, top_out = pprof_top(ctx, "inuse_space", pb["new"], "-diff_base=" + pb["base"])
    check(max(rows, key=rows.get) == "heaptest_site_leak", "pprof -diff_base:\n%s" % top_out)
    mine, _ = pprof_top(ctx, "inuse_space", out["pb.gz"])
    check(abs(rows["heaptest_site_leak"] - mine["heaptest_site_leak"]) <= 0.01 * mine["heaptest_site_leak"],
          "pprof -diff_base says %s, diff's .pb.gz %s" % (rows["heaptest_site_leak"],
                                                          mine["heaptest_site_leak"]))
    cpu = os.path.join(ctx.tmp, "cpu.raw")
    sonde_prof(ctx, "-d", "100", "-r", cpu, "-o", os.path.join(ctx.tmp, "c.txt"))
    r = diff(ctx, cpu, new, "-e", elf, "-o", os.path.join(ctx.tmp, "x.txt"))
    check(r.returncode == 2 and "only profiles of one kind compare" in r.stderr,
          "cpu vs heap: exit %d: %s" % (r.returncode, r.stderr))
    r = diff(ctx, out["pb.gz"], pb["new"], "-o", os.path.join(ctx.tmp, "x.txt"))
    check(r.returncode == 2 and "negative sample values" in r.stderr,
          "a diff's .pb.gz as BASE: exit %d: %s" % (r.returncode, r.stderr))


class Ctx:
    """The run's one machine, booted at the first test that asks (a boot
    that fails fails that test)."""

    def __init__(self, name):
        self.start = None
        self.tmp = tempfile.mkdtemp(prefix="sonde-heap-test.")

    @property
    def m(self):
        m = MACHINE.get("m")
        if m is None or not m.alive():
            if m is not None:
                m.close()
            port = free_port()
            fwd = "user,id=n0,hostfwd=udp:127.0.0.1:%d-:9000" % port
            m = Machine(arch=ARCH[0], smp=4, lifetime=300.0, name="heap-" + ARCH[0],
                        append="udpshell=9000", extra=["-netdev", fwd, "-device", NICS[ARCH[0]]])
            m.target = "127.0.0.1:%d" % port
            MACHINE["m"] = m
            m.boot(120)
        if self.start is None:
            self.start = m.mark()
        return m

    def tails(self):
        m = MACHINE.get("m")
        return runner.quoted_tail(m, self.start or 0) if m else ""

    def finish(self, failed):
        shutil.rmtree(self.tmp, ignore_errors=True)
        if failed and "m" in MACHINE:
            MACHINE.pop("m").close()


def main(argv):
    if "--arch" in argv:
        i = argv.index("--arch")
        check(i + 1 < len(argv), "--arch needs x86_64 or arm64")
        ARCH[0] = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if "--list" in argv:
        for name, _ in TESTS:
            print(name)
        return 0
    chosen = runner.select(TESTS, [a for a in argv if not a.startswith("-")])
    try:
        return runner.run(chosen, Ctx)
    finally:
        if "m" in MACHINE:
            MACHINE.pop("m").close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
