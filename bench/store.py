#!/usr/bin/env python3
"""serve's store, SQLite against PostgreSQL side by side in one run (make
bench, after bench/run.py's own; runnable alone), written as the "## Store"
section of docs/bench.md (bench/benchmd.py: replaced where it stands).

- ingest: simulated kernels (build/host/fleet-gen, as bench/fleet.py runs
  it) streamed into a real `sonde-prof serve --store S` for SECONDS:
  records in the store per second, and serve's CPU time over the run as a
  share of one core (every bucket is written from serve's loop);
- disk: the same run at 100 Hz: bytes the store grew by, per row of
  counts and per kernel, scaled from the run to a day at each grain (a
  shorter run, scaled; said so in the section);
- /api/flame at 1000 kernels: a store filled directly with synthetic
  buckets (SQL, not serve: 1000 kernels x STACKS stacks, every bucket of
  the last hour at 10 s and of the day before at a minute, as retention
  leaves them), then a serve on it answering a 10 s, a 1 h and a 1 day
  range (median of 3 requests each).

PostgreSQL: a throwaway cluster (scripts/pg.sh), or $SONDE_PG_URI."""
import argparse
import os
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

from benchmd import write_section  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROF = os.path.join(ROOT, "build/host/sonde-prof")
GEN = os.path.join(ROOT, "build/host/fleet-gen")
ELF = os.path.join(ROOT, "build/x86_64/kernel.elf")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import fleet as F  # noqa: E402

BUCKET = 10000
DAY = 86400000
HZ_TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / HZ_TICK


def start_serve(store, hosts):
    sv = subprocess.Popen([PROF, "serve", "-l", "127.0.0.1:0", "-e", ELF, "--store", store,
                           "--max-stacks", "65536"] + hosts,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", sv.stdout.readline())
    if not m:
        sv.kill()
        sys.exit("store: serve did not start")
    return sv, int(m.group(1))


def get(port, path, timeout=300):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
              b"Connection: close\r\n\r\n" % port)
    reply = b""
    while True:
        b = s.recv(1 << 20)
        if not b:
            break
        reply += b
    s.close()
    return reply.partition(b"\r\n\r\n")[2]


class Lite:
    name = "SQLite"

    def __init__(self, tmp):
        self.path = os.path.join(tmp, "bench.db")
        self.uri = self.path

    def reset(self):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.path + suffix):
                os.unlink(self.path + suffix)

    def size(self):
        db = sqlite3.connect(self.path)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        return sum(os.path.getsize(self.path + s) for s in ("", "-wal")
                   if os.path.exists(self.path + s))

    def sql(self, text):
        db = sqlite3.connect(self.path)
        r = db.executescript(text)
        db.commit()
        db.close()
        return r

    def scalar(self, text):
        db = sqlite3.connect(self.path)
        v = db.execute(text).fetchone()[0]
        db.close()
        return v

    blob = staticmethod(lambda b: "X'%s'" % b.hex())
    series = staticmethod(lambda lo, hi, step: (
        "WITH RECURSIVE b(t) AS (SELECT %d UNION ALL SELECT t + %d FROM b WHERE t + %d < %d) "
        % (lo, step, step, hi), "b"))


class Pg:
    name = "PostgreSQL"

    def __init__(self, uri):
        self.uri = uri

    def psql(self, *args, stdin=None):
        return subprocess.run(["psql", "-q", "-At", "-v", "ON_ERROR_STOP=1", self.uri, *args],
                              input=stdin, capture_output=True, text=True, check=True).stdout

    def reset(self):
        self.psql("-c", "DROP TABLE IF EXISTS counts, stacks, kernels, reasons CASCADE")

    def size(self):
        self.psql("-c", "CHECKPOINT")
        return int(self.psql("-c", "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) "
                             "FROM pg_class c WHERE c.relname IN ('stacks', 'kernels', 'reasons')"
                             " OR c.relname LIKE 'counts_d%'").strip() or 0)

    def sql(self, text):
        return self.psql("-f", "-", stdin=text)

    def scalar(self, text):
        return self.psql("-c", text).strip()

    blob = staticmethod(lambda b: "'\\x%s'::bytea" % b.hex())
    series = staticmethod(lambda lo, hi, step: ("", "generate_series(%d, %d, %d) AS b(t)"
                                                % (lo, hi - 1, step)))


def ingest(store, kernels, rate, seconds, stacks):
    """fleet-gen's kernels streamed into serve for seconds: records stored
    per second, serve's share of a core, bytes the store grew by, rows."""
    store.reset()
    bid, frames = F.elf_facts(ELF)
    gen = subprocess.Popen([GEN, "--kernels", str(kernels), "--rate", str(rate), "--cpus", "4",
                            "--stacks", str(stacks), "--build-id", bid, "--frames",
                            ",".join("%x" % f for f in frames)],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = gen.stdout.readline().split()
    hosts = ["127.0.0.1:%s" % p for p in ready[1:]]
    sv, port = start_serve(store.uri, hosts)
    base = store.size()
    c0, t0 = cpu_s(sv.pid), time.monotonic()
    time.sleep(seconds)
    c1, t1 = cpu_s(sv.pid), time.monotonic()
    sv.terminate()                      # the open bucket written too
    sv.wait()
    gen.stdin.close()
    gen.wait()
    recs = int(store.scalar("SELECT coalesce(sum(count), 0) FROM counts"))
    rows = int(store.scalar("SELECT count(*) FROM counts"))
    nst = int(store.scalar("SELECT count(*) FROM stacks"))
    buckets = int(store.scalar("SELECT count(DISTINCT bucket_ms) FROM counts"))
    return dict(recs=recs, rate=recs / (t1 - t0), cpu=(c1 - c0) / (t1 - t0),
                bytes=store.size() - base, total=store.size(), rows=rows, stacks=nst,
                buckets=buckets, wall=t1 - t0)


def fill(store, kernels, stacks, now):
    """1000 kernels' buckets straight into the store: the last hour at
    10 s, the 23 hours before at a minute (what retention leaves)."""
    store.reset()
    subprocess.run([PROF, "query", "--store", store.uri, "--from", "now-1h", "-e", ELF, "-o",
                    "/dev/null.folded"], capture_output=True)    # the schema, made by st_open
    bid, frames = F.elf_facts(ELF)
    ks = ",".join("('bench-%d:5555', '%s', 'tick 100Hz', %d)" % (k, bid, now)
                  for k in range(kernels))
    store.sql("INSERT INTO kernels (name, build_id, source, last_ms) VALUES %s" % ks)
    rows = []
    for k in range(1, kernels + 1):
        for s in range(stacks):
            fr = frames[s % len(frames)].to_bytes(8, "little") + frames[-1].to_bytes(8, "little")
            rows.append("(%d, %d, 0, 7, %d, 0, 0, 2, %s)" % (k * 64 + s, k, s % 4, store.blob(fr)))
    store.sql("INSERT INTO stacks (hash, kernel, kind, pid, cpu, reason, size, depth, frames) "
              "VALUES %s" % ",".join(rows))
    hour = now - 3600000
    if isinstance(store, Pg):
        for day in range((now - DAY) // DAY, now // DAY + 1):
            store.sql("CREATE TABLE IF NOT EXISTS counts_d%d PARTITION OF counts FOR VALUES "
                      "FROM (%d) TO (%d)" % (day, day * DAY, (day + 1) * DAY))
    for lo, hi, span in ((hour // BUCKET * BUCKET, now // BUCKET * BUCKET, BUCKET),
                         ((now - DAY) // 60000 * 60000, hour // BUCKET * BUCKET // 60000 * 60000,
                          60000)):
        with_, src = store.series(lo, hi, span)
        store.sql("%s INSERT INTO counts (bucket_ms, span_ms, kernel, kind, stack, count, weight) "
                  "SELECT b.t, %d, s.kernel, 0, s.hash, %d, %d FROM %s, stacks s"
                  % (with_, span, span // 100, span // 100, src))
    return int(store.scalar("SELECT count(*) FROM counts"))


def flame(store, kernels, now):
    sv, port = start_serve(store.uri, ["127.0.0.1:9"])
    t_end = time.time() + 60
    while time.time() < t_end:
        if get(port, "/api/status").count(b'"elsewhere"') >= kernels:
            break
        time.sleep(0.5)
    out = {}
    for label, span in (("10 s", BUCKET), ("1 h", 3600000), ("1 day", DAY)):
        b = now // BUCKET * BUCKET - BUCKET
        ts, samples = [], 0
        for _ in range(3):
            t0 = time.monotonic()
            body = get(port, "/api/flame?from=%d&to=%d" % (b + BUCKET - span, b + BUCKET))
            ts.append((time.monotonic() - t0) * 1000)
            m = re.search(rb'"samples":(\d+)', body)
            samples = int(m.group(1)) if m else -1
        out[label] = (sorted(ts)[1], samples)
    sv.kill()
    sv.wait()
    return out


def pg_cluster():
    if os.environ.get("SONDE_PG_URI"):
        return os.environ["SONDE_PG_URI"], None
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts/pg.sh"), "start"],
                       capture_output=True, text=True, check=True)
    facts = dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)
    return facts["PGURI"], facts["PGDIR"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kernels", type=int, default=16, help="ingest: simulated kernels")
    p.add_argument("--rate", type=int, default=1000, help="ingest: Hz per CPU (4 CPUs)")
    p.add_argument("--seconds", type=int, default=25)
    p.add_argument("--stacks", type=int, default=16, help="distinct stacks per kernel")
    p.add_argument("--flame-kernels", type=int, default=1000)
    p.add_argument("--flame-stacks", type=int, default=5)
    a = p.parse_args()
    uri, pgdir = pg_cluster()
    tmp = tempfile.mkdtemp(prefix="store-bench.")
    stores = [Lite(tmp), Pg(uri)]
    res = {}
    try:
        for s in stores:
            r = {"ingest": ingest(s, a.kernels, a.rate, a.seconds, a.stacks),
                 "disk": ingest(s, a.kernels, 100, a.seconds, a.stacks)}
            now = int(time.time() * 1000)
            r["rows"] = fill(s, a.flame_kernels, a.flame_stacks, now)
            r["size_1000"] = s.size()
            r["flame"] = flame(s, a.flame_kernels, now)
            res[s.name] = r
            print(s.name, r, flush=True)
            s.reset()
    finally:
        if pgdir:
            subprocess.run(["bash", os.path.join(ROOT, "scripts/pg.sh"), "stop", pgdir])
    lines = ["## Store", "",
             "`python3 bench/store.py` (defaults: ingest %d kernels x 4 CPUs, %d s; "
             "/api/flame at %d kernels), SQLite against PostgreSQL 15 (a throwaway "
             "cluster of scripts/pg.sh, fsync off) in one run, on this 2-core machine "
             "shared with other work." % (a.kernels, a.seconds, a.flame_kernels), "",
             "| | SQLite | PostgreSQL |", "| --- | --- | --- |"]
    L, P = res["SQLite"], res["PostgreSQL"]

    def row(label, f):
        lines.append("| %s | %s | %s |" % (label, f(L), f(P)))
    row("ingest at %d Hz x 4 CPUs x %d kernels: records stored per s" % (a.rate, a.kernels),
        lambda r: "%.0f" % r["ingest"]["rate"])
    row("serve's CPU meanwhile (share of one core)", lambda r: "%.1f%%" % (100 * r["ingest"]["cpu"]))
    row("at 100 Hz: records stored per s, serve's CPU",
        lambda r: "%.0f, %.1f%%" % (r["disk"]["rate"], 100 * r["disk"]["cpu"]))

    def per_day(r):
        d = r["disk"]
        per_row = d["bytes"] / max(d["rows"], 1)
        rows_per_bucket = d["rows"] / max(d["buckets"], 1) / a.kernels
        fine = per_row * rows_per_bucket * 8640
        kept = per_row * rows_per_bucket * (360 + 1380)
        return "%.0f B a row, %.1f rows a bucket; %.1f MB at 10 s, %.1f MB as kept (360 x 10 s + 1380 x 1 min)" % (
            per_row, rows_per_bucket, fine / 1e6, kept / 1e6)
    row("disk per kernel per day at 100 Hz, %d stacks (scaled from %d s)" % (a.stacks, a.seconds),
        per_day)
    row("1000 kernels' day (%d x %d stacks): rows, bytes" % (a.flame_kernels, a.flame_stacks),
        lambda r: "%d rows, %.0f MB" % (r["rows"], r["size_1000"] / 1e6))
    for label in ("10 s", "1 h", "1 day"):
        row("/api/flame, %s range, %d kernels (median of 3)" % (label, a.flame_kernels),
            lambda r, l=label: "%.0f ms (%d samples)" % r["flame"][l])
    lines += ["", "The 1 h and 1 day ranges are read from buckets written straight into "
              "the store (bench/store.py's fill), not streamed; disk per day is a %d s run "
              "scaled to a day (bytes a row include the stacks' rows and, in PostgreSQL, "
              "pages not yet full: the filled day's is bytes / rows), \"as kept\" taking "
              "a minute to hold the stacks a 10 s bucket does." % a.seconds, ""]
    write_section(lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
