#!/usr/bin/env python3
"""A fleet of simulated kernels (build/host/fleet-gen, tools/fleet/sim.c)
streamed into a real `sonde-prof record`, and the sums checked end to end.

usage: python3 bench/fleet.py --kernels N --rate HZ --seconds S [--loss P]
           [--dup P] [--reorder P] [--cpus C] [--stacks K] [--seed X]
           [--sample K --period P] [--elf ELF] [--out FILE] [--stats FILE]
           [--json FILE]
       python3 bench/fleet.py --serve --kernels N --rate HZ --seconds S
           [--max-stacks M] [--cpus C] [--stacks K] [--seed X] [--elf ELF]
           [--json FILE]

Every simulated kernel has its own port (its shell and its stream's
source), a task table of its own, C CPUs (default 4) sampling at HZ each,
and the build id of ELF (default build/x86_64/kernel.elf), whose
functions its stacks are made of. sonde-prof records them for S seconds
(-d), writes its folded output, one root frame per kernel, to FILE
(default: a temporary file), and each kernel's accounting (--stats).

The last line printed is exactly

  fleet: N kernels, S s, SENT records sent, GOT records ingested, LOST lost (accounted LA), R records/s

SENT the records the generator put in batches (fewer than the rate asks
when it cannot keep up: it then says so, and makes no burst), GOT those in sonde-prof's
output (the sum of its folded counts), LOST those in batches the
generator lost on purpose (--loss), LA what sonde-prof accounted as lost
on the wire, R GOT per second of the window. The exit status is 0 when
GOT + LOST == SENT and LA == LOST, each kernel's own sums agree as well,
and the copies (--dup) sonde-prof counted are the generator's; 1
otherwise, with what disagreed on stderr; 2 on a usage error.
--json FILE writes the figures (and sonde-prof's CPU time and peak memory)
for bench/collector.py.

With --serve, the kernels stream into a real `sonde-prof serve` instead
(--max-stacks M, default 1048576, its history's bound; its store a fresh
SQLite file of its own) for S seconds,
while 100 requests for /api/flame over the last minute are made, one
after another, paced over the run (the run lasts until the 100 are
answered). Then the generator stops and, once serve's received count
has stood still for a second (at most a minute), the history is read
whole. The last lines printed are

  serve: peak RSS R MB, CPU C s over W s (and D s to take the rest), S records sent, G in its history,
         O over the bound, W lost on the wire, B behind (a request held the history)
  serve: N kernels listed, L lost, flame p99 P ms

N from /api/status (kernel_count), L = S - G records lost end to end, P
the 99th percentile of the 100 requests' times. The exit status is 0 when
N is the kernels asked for and L is 0; 1 otherwise. FLEET_PROF_WRAP, when set, is a command line put
before sonde-prof's (e.g. "valgrind --tool=callgrind") to profile it.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import shutil
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "build/host/fleet-gen")
PROF = os.path.join(ROOT, "build/host/sonde-prof")


def elf_facts(elf):
    """The ELF's build id and up to 64 of its function addresses."""
    out = subprocess.run(["readelf", "-n", elf], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]{40})", out)
    if not m:
        sys.exit("fleet: %s has no GNU build id" % elf)
    syms = subprocess.run(["nm", "--defined-only", elf], capture_output=True, text=True,
                          check=True).stdout.split("\n")
    funcs = sorted({int(w[0], 16) for w in (l.split() for l in syms)
                    if len(w) == 3 and w[1] in "tT" and not w[2].startswith(".")
                    and not w[2].startswith("_")})
    if len(funcs) < 8:
        sys.exit("fleet: %s has too few functions" % elf)
    step = max(1, len(funcs) // 64)
    # An address inside each function: a return address is named from
    # the byte before it, which is still the function's.
    return m.group(1), [f + 4 for f in funcs[::step][:64]]


def parse_counts(line):
    w = line.split()
    return {w[i]: int(w[i + 1]) for i in range(2 if w[0] == "kernel" else 1, len(w) - 1, 2)}


def folded_per_kernel(path):
    got = {}
    with open(path) as f:
        for line in f:
            stack, n = line.rstrip("\n").rsplit(" ", 1)
            kernel = stack.split(";", 1)[0]
            got[kernel] = got.get(kernel, 0) + int(n)
    return got


def stats_per_kernel(path):
    out = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            out[w[0]] = {w[i]: int(w[i + 1]) for i in range(1, len(w) - 1, 2)}
            out[w[0]]["end_missing"] = "end_missing" in w
    return out


def start_gen(a, bid, frames, **extra):
    """fleet-gen for a's kernels: (process, their HOST:PORTs)."""
    gen = subprocess.Popen(
        [GEN, "--kernels", str(a.kernels), "--rate", str(a.rate), "--cpus", str(a.cpus),
         "--stacks", str(a.stacks), "--loss", str(a.loss), "--dup", str(a.dup),
         "--reorder", str(a.reorder), "--seed", str(a.seed), "--build-id", bid,
         "--frames", ",".join("%x" % f for f in frames)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, **extra)
    ready = gen.stdout.readline().split()
    if not ready or ready[0] != "ready" or len(ready) != a.kernels + 1:
        gen.kill()
        sys.exit("fleet: fleet-gen did not start: %r" % ready)
    return gen, ["127.0.0.1:%s" % port for port in ready[1:]]


def gen_totals(gen):
    """Stops fleet-gen: each kernel's counts by HOST:PORT, and the total."""
    gen.stdin.close()
    lines = gen.stdout.read().splitlines()
    gen.wait()
    sent, total = {}, {}
    for line in lines:
        if line.startswith("kernel "):
            sent["127.0.0.1:" + line.split()[1]] = parse_counts(line)
        elif line.startswith("total "):
            total = parse_counts(line)
    return sent, total


def get_json(url, timeout=60):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.load(r)


def proc_figures(pid):
    """(peak RSS in kB, CPU seconds) of a running process."""
    with open("/proc/%d/status" % pid) as f:
        hwm = int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))
    with open("/proc/%d/stat" % pid) as f:
        w = f.read().rsplit(")", 1)[1].split()
    return hwm, (int(w[11]) + int(w[12])) / os.sysconf("SC_CLK_TCK")


def serve_run(a, bid, frames):
    """--serve: the fleet into a real serve, its flame timed meanwhile."""
    gen, hosts = start_gen(a, bid, frames)
    err = tempfile.TemporaryFile(mode="w+")
    # A store of its own: the run's counts are this serve's alone, never
    # an earlier run's rows for kernels of the same HOST:PORT.
    store = tempfile.mkdtemp(prefix="fleet-serve.")
    sv = subprocess.Popen([PROF, "serve", "-l", "127.0.0.1:0", "--max-stacks",
                           str(a.max_stacks), "--store", os.path.join(store, "serve.db"),
                           "-e", a.elf] + hosts,
                          stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        m = re.search(r"http://[0-9.:]+/", sv.stdout.readline())
        if not m:
            sys.exit("fleet: serve did not start")
        url = m.group(0)
        t0 = time.monotonic()
        times = []

        def flames():
            for i in range(100):
                due = t0 + i * a.seconds / 100
                if time.monotonic() < due:
                    time.sleep(due - time.monotonic())
                now = get_json(url + "api/status")["now_ms"]
                q = "api/flame?from=%d&to=%d" % (max(0, now - 60000), now)
                t = time.monotonic()
                get_json(url + q)
                times.append(time.monotonic() - t)
        th = threading.Thread(target=flames)
        th.start()
        th.join()
        left = a.seconds - (time.monotonic() - t0)
        if left > 0:
            time.sleep(left)
        wall = time.monotonic() - t0
        sent, total = gen_totals(gen)
        # What was on the way is taken: serve's received count still for a
        # second (a serve behind the fleet drains its socket meanwhile).
        t_end, last, still = time.monotonic(), -1, 0
        while still < 2 and time.monotonic() - t_end < 60:
            time.sleep(0.5)
            got = get_json(url + "api/status")["received"]
            still = still + 1 if got == last else 0
            last = got
        drain = time.monotonic() - t_end
        st = get_json(url + "api/status")
        everything = get_json(url + "api/flame?from=0&to=%d&by=frame" % st["now_ms"])
        listed = []
        while len(listed) < st["kernel_count"]:
            page = get_json(url + "api/kernels?offset=%d&limit=500" % len(listed))
            if not page["kernels"]:
                break
            listed += page["kernels"]
        behind = sum(k["behind"] for k in listed)
        wire = sum(k["lost"] for k in listed)
        received = sum(k["received"] for k in listed)
        rss_kb, cpu = proc_figures(sv.pid)
    finally:
        if gen.poll() is None:
            gen.kill()
        sv.terminate()
        sv.wait(timeout=30)
        shutil.rmtree(store, ignore_errors=True)
    err.seek(0)
    said = err.read()
    if said:
        sys.stderr.write(said[-3000:])
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000
    SENT, GOT = total["records"], everything["samples"]
    n, lost = st["kernel_count"], total["records"] - everything["samples"]
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"kernels": a.kernels, "seconds": a.seconds, "wall_s": wall,
                       "rate": a.rate, "cpus": a.cpus, "sent": SENT, "got": GOT,
                       "over": everything["over"], "listed": n, "lost": lost,
                       "flame_ms": [t * 1000 for t in times], "flame_p99_ms": p99,
                       "maxrss_kb": rss_kb, "cpu_s": cpu, "states": st["kernel_states"],
                       "behind": behind, "received": received, "drain_s": drain, "wire_lost": wire, "pages_listed": len(listed),
                       "stacks": st["stacks"]}, f, indent=1)
    print("serve: peak RSS %.0f MB, CPU %.1f s over %.1f s (and %.1f s to take the rest), %d "
          "records sent, %d in its history, %d over the bound, %d lost on the wire, %d behind "
          "(a request held the history)" % (rss_kb / 1024, cpu, wall, drain, SENT, GOT,
                                            everything["over"], wire, behind))
    print("serve: %d kernels listed, %d lost, flame p99 %.0f ms" % (n, lost, p99))
    return 0 if n == a.kernels and lost == 0 else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kernels", type=int, required=True)
    p.add_argument("--rate", type=int, required=True)
    p.add_argument("--seconds", type=int, required=True)
    p.add_argument("--loss", type=float, default=0.0)
    p.add_argument("--dup", type=float, default=0.0)
    p.add_argument("--reorder", type=float, default=0.0)
    p.add_argument("--cpus", type=int, default=4)
    p.add_argument("--stacks", type=int, default=16)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sample", type=int, default=0)
    p.add_argument("--period", default="")
    p.add_argument("--elf", default=os.path.join(ROOT, "build/x86_64/kernel.elf"))
    p.add_argument("--out", default="")
    p.add_argument("--stats", default="")
    p.add_argument("--json", default="")
    p.add_argument("--serve", action="store_true")
    p.add_argument("--max-stacks", type=int, default=1048576)
    a = p.parse_args()
    if not 1 <= a.kernels <= 4096:
        p.error("--kernels %d out of range (1-4096)" % a.kernels)
    if not 3 <= a.seconds <= 86400:
        p.error("--seconds %d out of range (3-86400: a stream is over 2 s)" % a.seconds)
    if bool(a.sample) != bool(a.period):
        p.error("give --sample and --period together")
    for f in (GEN, PROF, a.elf):
        if not os.path.exists(f):
            sys.exit("fleet: %s missing: run make all first" % f)
    bid, frames = elf_facts(a.elf)
    if a.serve:
        if a.sample or a.loss or a.dup or a.reorder:
            p.error("--serve takes none of --sample, --loss, --dup, --reorder")
        return serve_run(a, bid, frames)
    tmp = tempfile.mkdtemp(prefix="fleet.")
    out = a.out or os.path.join(tmp, "fleet.folded")
    stats = a.stats or os.path.join(tmp, "fleet.stats")
    gen, hosts = start_gen(a, bid, frames)
    cmd = os.environ.get("FLEET_PROF_WRAP", "").split() + [PROF, "record", "-d", "%ds" % a.seconds, "-e", a.elf, "-o", out, "--per-kernel",
           "--stats", stats]
    if a.sample:
        cmd += ["--sample", str(a.sample), "--period", a.period]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    rec = subprocess.run(cmd + hosts, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    sent, total = gen_totals(gen)
    gen_ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    sys.stderr.write(rec.stderr)
    if rec.returncode != 0:
        sys.exit("fleet: sonde-prof record exited %d" % rec.returncode)
    got = folded_per_kernel(out)
    acc = stats_per_kernel(stats)
    bad = []
    for name, s in sent.items():
        g, x = got.get(name, 0), acc.get(name, {})
        if g + s["lost_records"] != s["records"] or x.get("lost_records") != s["lost_records"] \
                or x.get("dups") != s["dups"] or x.get("lost_dgrams") != s["lost_dgrams"] \
                or x.get("end_missing"):
            bad.append("%s: sent %d, got %d, lost %d (accounted %s records, %s datagrams "
                       "of %d, %s copies of %d%s)" % (
                           name, s["records"], g, s["lost_records"], x.get("lost_records"),
                           x.get("lost_dgrams"), s["lost_dgrams"], x.get("dups"), s["dups"],
                           ", its END never came" if x.get("end_missing") else ""))
    SENT, GOT, LOST = total["records"], sum(got.values()), total["lost_records"]
    LA = acc["total"]["lost_records"]
    for b in bad[:10]:
        print("fleet: %s" % b, file=sys.stderr)
    if total.get("unmade"):
        print("fleet: the generator fell behind its rate: %d records never made (not sent, "
              "not counted)" % total["unmade"], file=sys.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"kernels": a.kernels, "seconds": a.seconds, "rate": a.rate,
                       "cpus": a.cpus, "sent": SENT, "got": GOT, "lost": LOST,
                       "accounted": LA, "wall_s": wall, "children_cpu_s": cpu,
                       "maxrss_kb": after.ru_maxrss,
                       "gen_cpu_s": (gen_ru.ru_utime - after.ru_utime) +
                                    (gen_ru.ru_stime - after.ru_stime),
                       "concurrent_max": total.get("concurrent_max", 0),
                       "unmade": total.get("unmade", 0),
                       "covered_ms": {k: v["covered_ms"] for k, v in acc.items()},
                       "gen_stream_ms": {k: v["stream_ms"] for k, v in sent.items()},
                       "gen_streams": {k: v["streams"] for k, v in sent.items()},
                       "stderr": rec.stderr}, f, indent=1)
    print("fleet: %d kernels, %d s, %d records sent, %d records ingested, %d lost "
          "(accounted %d), %d records/s" % (a.kernels, a.seconds, SENT, GOT, LOST, LA,
                                            GOT // a.seconds))
    return 0 if not bad and GOT + LOST == SENT and LA == LOST else 1


if __name__ == "__main__":
    sys.exit(main())
