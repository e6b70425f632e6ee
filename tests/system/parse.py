"""tests/system/parse.py: parsers for the shell's output formats (see
kernel/cmd/tasks.c, kernel/cmd/sys.c, kernel/cmd/profile.c, kernel/backtrace.c,
kernel/cmd/bench.c), for the system tests and the benchmarks alike."""
import re

from qemu import Fail

PS_ROW = re.compile(r"^\s*(\d+) (\S+)\s+(\d+) (\S+)\s+(\d+)\s+(\S+)\s*$", re.M)
CPUS_ROW = re.compile(r"^\s*(\d+)\s+(\d+) (\S+)\s+(\d+)\s+(\d+)\s+(-?\d+) (\S+)\s*$", re.M)
STACKS_ROW = re.compile(r"^(\S+)\s+(-?\d+) (\S+)\s+(\d+)\s+(\d+)\s+(\d+)(\s+LOW)?\s*$", re.M)
UPTIME = re.compile(r"^up \d+\.\d{3} s \((\d+) ns\), (\d+) cpus$", re.M)
HEAP = re.compile(r"heap in use (\d+) bytes")
BURN = re.compile(r"^burn: (\d+) ms, pids((?: \d+)*)$", re.M)
PROF_WINDOW = re.compile(r"^profiled (\d+) ms$", re.M)
PROF_HEADER = re.compile(r"^(\d+) samples on (\d+) cpus, (\d+) dropped, source (.+)$", re.M)
PROF_LEAF = re.compile(r"^(\d+\.\d)% (\d+) (\S+)$")
CALLER = re.compile(r"^        <- (\S+)$")
BENCH_WORKLOAD = re.compile(r"workload off (\d+) cycles, on (\d+) cycles")
SAMPLE_COST = re.compile(r"sample cost (\d+) (.+?) median \(min (\d+), max (\d+)\), ([\d.]+)% of cpu time")
PROF_SOURCES = re.compile(r"^cpus: (\d+ (?:pmu|tick|none).*)$", re.M)
PROF_SOURCE = re.compile(r"^(\d+)((?: pmu \d+)?)((?: tick \d+)?)( none)?$")
BENCH_P99 = re.compile(r"sample cost p50 (\d+) p99 (\d+) (.+)$", re.M)
BENCH_REPORT = re.compile(r"report (\d+)x(\d+) records (\d+) cycles, (\d+) us")
EXPORT_HEADER = re.compile(r"^# sonde (folded|raw) build-id=([0-9a-f]{40}) source=([ -~]{1,63}?) "
                           r"samples=(0|[1-9]\d*) dropped=(0|[1-9]\d*) cpus=(0|[1-9]\d*) ms=(0|[1-9]\d*)$")
FOLDED_LINE = re.compile(r"^([!-~]+) ([1-9]\d*)$")
DEC = r"(0|[1-9]\d*)"
HEX = r"[0-9a-f]{1,16}"
RAW_LINE = re.compile(r"^([1-9]\d*) %s ([!-:<-~]{1,31}) %s (%s(?: %s){0,7})$" % (DEC, DEC, HEX, HEX))


def ps(out):
    """[{pid, name, cpu, state, ticks, headroom}] from `ps`."""
    rows = []
    for m in PS_ROW.finditer(out):
        rows.append(dict(pid=int(m.group(1)), name=m.group(2), cpu=int(m.group(3)),
                         state=m.group(4), ticks=int(m.group(5)), headroom=m.group(6)))
    if not rows or "pid name" not in out:
        raise Fail("ps: no task rows in output: %r" % out[-500:])
    return rows


def cpus(out):
    """{cpu: {apic, state, ticks, busy, pid, task}} from `cpus`."""
    rows = {}
    for m in CPUS_ROW.finditer(out):
        rows[int(m.group(1))] = dict(apic=int(m.group(2)), state=m.group(3),
                                     ticks=int(m.group(4)), busy=int(m.group(5)),
                                     pid=int(m.group(6)), task=m.group(7))
    if not rows:
        raise Fail("cpus: no cpu rows in output: %r" % out[-500:])
    return rows


def stacks(out):
    rows = []
    for m in STACKS_ROW.finditer(out):
        rows.append(dict(kind=m.group(1), owner=int(m.group(2)), name=m.group(3),
                         size=int(m.group(4)), deepest=int(m.group(5)),
                         headroom=int(m.group(6)), low=bool(m.group(7))))
    if not rows:
        raise Fail("stacks: no rows in output: %r" % out[-500:])
    return rows


def uptime_ns(out):
    m = UPTIME.search(out)
    if not m:
        raise Fail("uptime: unexpected output %r" % out)
    return int(m.group(1))


def heap_in_use(out):
    m = HEAP.search(out)
    if not m:
        raise Fail("mem: no 'heap in use' in %r" % out)
    return int(m.group(1))


def burn_pids(out):
    m = BURN.search(out)
    if not m:
        raise Fail("burn: unexpected output %r" % out)
    return [int(x) for x in m.group(2).split()]


def sym_name(token):
    """'burn_inner+0xe' -> 'burn_inner'; '0xffff...' -> the token."""
    return token.split("+", 1)[0]


def profile(out):
    """{window, samples, cpus, dropped, source, notes, cost, sources,
    chains}; cost is {median, unit, cmin, cmax, share} or None (no
    'sample cost' line); sources is the 'cpus:' line's {cpu: {pmu, tick}}
    or None (no such line); a chain is {pct, count, leaf, name, callers:
    [names], caller_tokens}."""
    w = PROF_WINDOW.search(out)
    h = PROF_HEADER.search(out)
    if not w or not h:
        raise Fail("profile: no 'profiled N ms' / 'N samples on N cpus' header in %r" % out[-800:])
    r = dict(window=int(w.group(1)), samples=int(h.group(1)), cpus=int(h.group(2)),
             dropped=int(h.group(3)), source=h.group(4), chains=[], lines=out.splitlines())
    r["notes"] = [l for l in r["lines"] if l.startswith("pmu:")]
    c = SAMPLE_COST.search(out)
    r["cost"] = c and dict(median=int(c.group(1)), unit=c.group(2), cmin=int(c.group(3)),
                           cmax=int(c.group(4)), share=c.group(5))
    r["sources"] = cpu_sources(out) if PROF_SOURCES.search(out) else None
    cur = None
    for line in r["lines"]:
        m = PROF_LEAF.match(line)
        if m:
            cur = dict(pct=float(m.group(1)), count=int(m.group(2)), leaf=m.group(3),
                       name=sym_name(m.group(3)), callers=[], caller_tokens=[])
            r["chains"].append(cur)
            continue
        m = CALLER.match(line)
        if m and cur is not None:
            cur["callers"].append(sym_name(m.group(1)))
            cur["caller_tokens"].append(m.group(1))
    return r


def cpu_sources(out):
    """The 'cpus: 0 pmu 1001, 1 tick 98, 2 none' line (the report's, when
    sources were mixed, or profile_cpus'): {cpu: {pmu, tick}}."""
    m = PROF_SOURCES.search(out)
    if not m:
        raise Fail("no 'cpus: ...' line of per-cpu sources in %r" % out[-500:])
    res = {}
    for item in m.group(1).split(", "):
        f = PROF_SOURCE.match(item)
        if not f or not (f.group(2) or f.group(3) or f.group(4)):
            raise Fail("per-cpu sources: cannot read %r in %r" % (item, m.group(0)))
        res[int(f.group(1))] = dict(pmu=int(f.group(2).split()[1]) if f.group(2) else 0,
                                    tick=int(f.group(3).split()[1]) if f.group(3) else 0)
    return res


def frames(block):
    """The frame names ("        <- name+0x..." lines) of one backtrace."""
    return [sym_name(m.group(1)) for m in map(CALLER.match, block.splitlines()) if m]


def backtraces(out):
    """`bt all` / `bt pid`: {pid: [frame names]} plus the raw blocks."""
    res = {}
    cur = None
    for line in out.splitlines():
        m = re.match(r"^pid (\d+):$", line)
        if m:
            cur = int(m.group(1))
            res[cur] = []
            continue
        m = CALLER.match(line)
        if m and cur is not None:
            res[cur].append(sym_name(m.group(1)))
    return res


def in_order(names, expected):
    """True if expected occurs in names as a subsequence, in order."""
    it = iter(names)
    return all(any(n == e for n in it) for e in expected)


def bench_profile(out):
    """`bench profile`: {off, on} (the workload's cycles with profiling off
    and on), the profile's header {samples, cpus, dropped, source}, its
    sample cost {median, unit, cmin, cmax, share (the "%" figure, as
    printed)}, the bench's own quantiles of it {p50, p99} (None where not
    printed) and the report's timing {report_cpus, report_recs (per cpu),
    report_cycles, report_us}."""
    w, h = BENCH_WORKLOAD.search(out), PROF_HEADER.search(out)
    c, r = SAMPLE_COST.search(out), BENCH_REPORT.search(out)
    q = BENCH_P99.search(out)
    if not (w and h and c and r):
        raise Fail("bench profile: missing%s%s%s%s in %r" % (
            "" if w else " 'workload off N cycles, on N cycles'",
            "" if h else " 'N samples on N cpus'", "" if c else " 'sample cost'",
            "" if r else " 'report NxN records'", out[-800:]))
    return dict(off=int(w.group(1)), on=int(w.group(2)),
                samples=int(h.group(1)), cpus=int(h.group(2)), dropped=int(h.group(3)),
                source=h.group(4).strip(),
                median=int(c.group(1)), unit=c.group(2), cmin=int(c.group(3)),
                cmax=int(c.group(4)), share=c.group(5),
                report_cpus=int(r.group(1)), report_recs=int(r.group(2)),
                report_cycles=int(r.group(3)), report_us=int(r.group(4)),
                p50=q and int(q.group(1)), p99=q and int(q.group(2)))


def _export_header(out, kind):
    """The first line of `profile ... folded|raw` as {build_id, source,
    samples, dropped, cpus, ms}, and the lines after it."""
    lines = out.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    m = EXPORT_HEADER.match(lines[0]) if lines else None
    if not m or m.group(1) != kind:
        raise Fail("profile %s: no '# sonde %s build-id=...' header line in %r" % (kind, kind, out[:300]))
    h = dict(build_id=m.group(2), source=m.group(3), samples=int(m.group(4)),
             dropped=int(m.group(5)), cpus=int(m.group(6)), ms=int(m.group(7)))
    return h, lines[1:]


def folded(out):
    """`profile ... folded`: the header's fields and stacks, a list of
    {task, frames (root first), count}. Every line is checked; the counts
    must add up to samples= and no stack may be printed twice."""
    h, lines = _export_header(out, "folded")
    h["stacks"] = []
    seen = set()
    for i, line in enumerate(lines, 2):
        m = FOLDED_LINE.match(line)
        if not m:
            raise Fail("profile folded: line %d is not 'task;frame;... count': %r" % (i, line))
        names = m.group(1).split(";")
        if "" in names or len(names) < 2:
            raise Fail("profile folded: line %d has an empty name or no frame: %r" % (i, line))
        if m.group(1) in seen:
            raise Fail("profile folded: line %d repeats a stack: %r" % (i, line))
        seen.add(m.group(1))
        h["stacks"].append(dict(task=names[0], frames=names[1:], count=int(m.group(2))))
    total = sum(st["count"] for st in h["stacks"])
    if total != h["samples"]:
        raise Fail("profile folded: counts add up to %d, the header says samples=%d" % (total, h["samples"]))
    return h


def raw(out):
    """`profile ... raw`, read strictly to uapi/profile_raw.h's grammar:
    the header's fields and chains, a list of {count, pid, task, cpu,
    frames (ints, pc first)}. The counts must add up to samples= and no
    (pid, task, cpu, frames) may be printed twice."""
    h, lines = _export_header(out, "raw")
    h["chains"] = []
    seen = set()
    for i, line in enumerate(lines, 2):
        m = RAW_LINE.match(line)
        if not m:
            raise Fail("profile raw: line %d breaks the grammar: %r" % (i, line))
        c = dict(count=int(m.group(1)), pid=int(m.group(2)), task=m.group(3), cpu=int(m.group(4)),
                 frames=[int(x, 16) for x in m.group(5).split()])
        if c["count"] > 4294967295 or c["pid"] > 2147483647 or c["cpu"] > 4095:
            raise Fail("profile raw: line %d has a field out of range: %r" % (i, line))
        key = (c["pid"], c["task"], c["cpu"], tuple(c["frames"]))
        if key in seen:
            raise Fail("profile raw: line %d repeats a chain: %r" % (i, line))
        seen.add(key)
        h["chains"].append(c)
    total = sum(c["count"] for c in h["chains"])
    if total != h["samples"]:
        raise Fail("profile raw: counts add up to %d, the header says samples=%d" % (total, h["samples"]))
    return h


def nm_namer(nm, elf):
    """A function naming an address of elf by its text symbols (nm is the
    nm to run: the cross one for arm64): the symbol at or below it, as the
    kernel's symtab does, or None below the first. Name a return address
    from address - 1."""
    import bisect
    import subprocess
    out = subprocess.run([nm, "-n", elf], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tT":
            syms.append((int(f[0], 16), f[2]))
    addrs = [a for a, _ in syms]

    def name(addr):
        i = bisect.bisect_right(addrs, addr) - 1
        return syms[i][1] if i >= 0 else None
    return name


def elf_build_id(elf):
    """The GNU build id readelf finds in an ELF file, as lowercase hex (the
    reference the kernel's own `version` line is checked against)."""
    import subprocess
    out = subprocess.run(["readelf", "-n", elf], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not m:
        raise Fail("%s has no build-id note (readelf -n)" % elf)
    return m.group(1)


def check_version(out, arch, elf):
    """`version`: the banner line, then `build-id <hex>` equal to the id in
    the ELF that was booted (a kernel reading the wrong note, or printing a
    stale id, fails here)."""
    if not re.match(r"^Sonde \S+ \(%s\), built .+\nbuild-id [0-9a-f]{40}\n$" % arch, out):
        raise Fail("unexpected version output %r" % out)
    want = elf_build_id(elf)
    got = re.search(r"^build-id (\S+)$", out, re.M).group(1)
    if got != want:
        raise Fail("version says build-id %s, readelf -n %s says %s" % (got, elf, want))
