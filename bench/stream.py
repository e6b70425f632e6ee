#!/usr/bin/env python3
"""bench/stream.py: the profile stream over 60 s (docs/continuous.md),
written as the "## Stream" section of docs/bench.md (bench/benchmd.py:
replaced where it stands, every other section kept).

Two boots, each with `burn` on every CPU and `sonde-prof record -d 60s`
over QEMU's user network on loopback:

  arm64, the PMU (~1 kHz), -smp 1 under -icount shift=0 (docs/bench.md's
        profiler section says why -smp 1);
  x86-64, the tick (100 Hz a CPU: TCG gives x86 no PMU), -smp 4 under
        -icount shift=1,sleep=off.

Per boot: records produced (the kernel's own count at the END: records
its rings gave the stream, plus those dropped), records delivered (what
sonde-prof received), lost in the kernel, lost on the wire (records and
datagrams, from sonde-prof's accounting). Targets: 0 and 0 on loopback.

Then the stream's price: two more boots at -smp 1 under -icount shift=0
(arm64 PMU, x86-64 tick), each running the kernel's `bench stream PORT`
over the UDP shell: a fixed workload timed with profiling off, under a
windowed profile and under a stream to PORT, side by side in one boot
(guest instructions). Target: the stream's slowdown within 0.01 points
of the window's.
Needs `make` and `make ARCH=arm64` done. Python 3 standard library."""
import os
import re
import subprocess
import sys
import socket
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
from qemu import ARCHES, Fail, Machine, free_port, NICS  # noqa: E402
from benchmd import write_section  # noqa: E402

PROF = os.path.join(ROOT, "build", "host", "sonde-prof")
SECONDS = 60
HEADER = re.compile(r"^(\d+) samples on (\d+) cpus, (\d+) dropped, source (.*)$", re.M)
STREAMED = re.compile(r"^streamed: (\d+) records lost on the wire \((\d+) datagrams\)(.*)$", re.M)
# `profile status`'s control line (uapi/stream_ctl.h) once the stream ended.
STATUS = re.compile(r"^stream v=1 op=status result=ok state=ended .*\breason=(\S+) records=(\d+) "
                    r"datagrams=(\d+) drops=(\d+) sendfail=(\d+) ", re.M)


def measure(arch, smp, icount):
    port = free_port()
    fwd = "user,id=n0,hostfwd=udp:127.0.0.1:%d-:9000" % port
    with Machine(arch=arch, smp=smp, icount=icount, append="udpshell=9000",
                 name="stream-" + arch, lifetime=SECONDS * 8 + 120,
                 extra=["-netdev", fwd, "-device", NICS[arch]]) as g:
        g.boot(120)
        out = g.cmd("burn 600000 %s" % ",".join(str(c) for c in range(smp)))
        if not out.startswith("burn: 600000 ms"):
            raise Fail("%s: burn did not start: %r" % (arch, out))
        with tempfile.TemporaryDirectory() as tmp:
            txt = os.path.join(tmp, "s.txt")
            r = subprocess.run([PROF, "record", "-d", "%ds" % SECONDS, "-e",
                                ARCHES[arch]["kernel"], "-o", txt, "127.0.0.1:%d" % port],
                               capture_output=True, text=True, timeout=SECONDS * 6 + 60)
            if r.returncode != 0:
                raise Fail("%s: sonde-prof record: exit %d: %s" % (arch, r.returncode, r.stderr))
            rep = open(txt).read()
        status = g.cmd("profile status", 60)
    h, s, k = HEADER.search(rep), STREAMED.search(rep), STATUS.search(status)
    if not (h and s and k):
        raise Fail("%s: figures not found in %r / %r" % (arch, rep[:300], status))
    return {
        "source": h.group(4), "cpus": smp, "delivered": int(h.group(1)),
        "dropped": int(h.group(3)), "wire": int(s.group(1)), "dgrams": int(s.group(2)),
        "note": s.group(3).lstrip("; "), "reason": k.group(1),
        "sent": int(k.group(2)), "k_dgrams": int(k.group(3)), "k_dropped": int(k.group(4)),
        "send_failed": int(k.group(5)), "stderr": r.stderr.strip(),
    }


BENCH_STREAM = re.compile(r"bench: stream workload off (\d+) cycles, window (\d+) cycles, "
                          r"stream (\d+) cycles")
SONDE_SH = os.path.join(ROOT, "build", "host", "sonde-sh")


def price(arch, append):
    """The workload off, under a window and under a stream, in one boot."""
    port = free_port()
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    sink.settimeout(0.5)
    got = {"n": 0}
    done = threading.Event()

    def drain():
        while not done.is_set():
            try:
                sink.recv(2048)
                got["n"] += 1
            except socket.timeout:
                pass
    t = threading.Thread(target=drain, daemon=True)
    t.start()
    fwd = "user,id=n0,hostfwd=udp:127.0.0.1:%d-:9000" % port
    # `bench stream` runs only for a key holder (its stream starts
    # confirmed): a fresh key for this boot, in a file only we can read.
    key = os.urandom(32).hex()
    keyfile = tempfile.NamedTemporaryFile("w", prefix="sonde-bench-key-", delete=False)
    os.chmod(keyfile.name, 0o600)
    keyfile.write(key + "\n")
    keyfile.close()
    try:
        with Machine(arch=arch, smp=1, icount="shift=0",
                     append=("udpshell=9000 ushkey=%s %s" % (key, append)).strip(),
                     name="price-" + arch, lifetime=900,
                     extra=["-netdev", fwd, "-device", NICS[arch]]) as g:
            g.boot(120)
            r = subprocess.run([SONDE_SH, "-t", "600", "-k", keyfile.name, "127.0.0.1:%d" % port,
                                "bench stream %d" % sink.getsockname()[1]],
                               capture_output=True, text=True, timeout=700)
    finally:
        done.set()
        t.join()
        sink.close()
        os.unlink(keyfile.name)
    m = BENCH_STREAM.search(r.stdout)
    if r.returncode != 0 or not m:
        raise Fail("%s: bench stream: exit %d: %r %r" % (arch, r.returncode, r.stdout[-500:],
                                                           r.stderr))
    off, win, strm = (int(x) for x in m.groups())
    return {"off": off, "win": win, "stream": strm, "dgrams": got["n"],
            "win_pct": 100.0 * (win - off) / off, "stream_pct": 100.0 * (strm - off) / off}


def price_row(name, r):
    d = r["stream_pct"] - r["win_pct"]
    return "| %s | %d | %d | %d | %+.4f%% | %+.4f%% | %+.4f | %d | %s |" % (
        name, r["off"], r["win"], r["stream"], r["win_pct"], r["stream_pct"], d,
        r["dgrams"], "met" if abs(d) <= 0.01 else "**missed**")


def row(name, r):
    produced = r["sent"] + r["k_dropped"]
    return "| %s | `%s` | %d | %d | %d | %d | %d records, %d datagrams | %s |" % (
        name, r["source"], r["cpus"], produced, r["delivered"], r["dropped"], r["wire"],
        r["dgrams"], r["note"] or "END: " + r["reason"])


def main():
    for arch in ("x86_64", "arm64"):
        if not os.path.exists(ARCHES[arch]["kernel"]):
            sys.exit("bench: %s missing: run %s" % (ARCHES[arch]["kernel"], ARCHES[arch]["make"]))
    try:
        a = measure("arm64", 1, "shift=0")
        x = measure("x86_64", 4, "shift=1,sleep=off")
        pa = price("arm64", "")
        px = price("x86_64", "")
    except Fail as e:
        sys.exit("bench: stream: %s" % e)
    lines = [
        "## Stream",
        "",
        "Written by `python3 bench/stream.py`: `sonde-prof record -d %ds` of one" % SECONDS,
        "kernel running `burn` on every CPU, over QEMU's user network on loopback",
        "(docs/continuous.md). Produced: the records the kernel's rings gave the",
        "stream plus those it dropped, by the kernel's own count (`profile status`",
        "after the END); delivered: the samples sonde-prof received; lost on the",
        "wire: its accounting (gaps in each CPU's record numbers and the END's",
        "totals; gaps in the datagrams' sequence).",
        "",
        "| kernel, source | header | CPUs | records produced | delivered | lost in the kernel | lost on the wire | end |",
        "|---|---|---|---|---|---|---|---|",
        row("arm64, PMU ~1 kHz, `-icount shift=0`", a),
        row("x86-64, tick 100 Hz, `-icount shift=1,sleep=off`", x),
        "",
        "Targets: 0 lost in the kernel and 0 on the wire, on loopback.",
        "",
        "Kernel's counts: arm64 %d records in %d datagrams, %d dropped, %d send failures; "
        "x86-64 %d records in %d datagrams, %d dropped, %d send failures." % (
            a["sent"], a["k_dgrams"], a["k_dropped"], a["send_failed"],
            x["sent"], x["k_dgrams"], x["k_dropped"], x["send_failed"]),
        "",
        "The stream's price: `bench stream PORT` at `-smp 1` under `-icount shift=0`, the",
        "same workload with profiling off, under a 1000 ms window and under a stream",
        "stopped after as long (guest instructions; slowdowns against off; the",
        "difference in percentage points; datagrams the host received).",
        "",
        "| kernel, source | off | window | stream | window slowdown | stream slowdown | difference (points) | datagrams | within 0.01 points |",
        "|---|---|---|---|---|---|---|---|---|",
        price_row("arm64, PMU ~1 kHz", pa),
        price_row("x86-64, tick 100 Hz", px),
        "",
    ]
    write_section(lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
