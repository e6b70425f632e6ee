#!/usr/bin/env python3
"""The trace stream at its design rate: a CPU switching 10,000 times a
second (`burn pingpong 70000 10000 1`: a wake and a switch each
hand-off) traced for 60 s by `sonde-prof record --trace -d 60000` (the
kernel's `trace stream`), on both architectures at -smp 2 (real time:
the stream is the network's as much as the guest's). What the stream
carried, what the kernel dropped and what was lost on the wire, written
as the "## The trace stream: 60 s of 10,000 switches a second" section
of docs/bench.md. Run by bench/run.py; alone: python3 bench/trace_stream.py
[--arch x86_64|arm64]. The target: 0 dropped, 0 lost."""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
from qemu import ARCHES, NICS, Machine, free_port  # noqa: E402
from benchmd import write_section  # noqa: E402

PROF = os.path.join(ROOT, "build", "host", "sonde-prof")
SECONDS = 60
RATE = 10000
SAID = re.compile(r"kernel \S+: (\d+) events in (\d+) ms, (\d+) dropped in the kernel, "
                  r"(\d+) lost on the wire")


def measure(arch):
    port = free_port()
    with Machine(smp=2, arch=arch, name="bench-trace-stream-" + arch, append="udpshell=9000",
                 lifetime=SECONDS + 300,
                 extra=["-netdev", "user,id=n0,hostfwd=udp:127.0.0.1:%d-:9000" % port,
                        "-device", NICS[arch]]) as g:
        g.boot(120)
        out = g.cmd("burn pingpong %d %d 1" % ((SECONDS + 10) * 1000, RATE), 30)
        if "pids" not in out:
            sys.exit("bench: burn pingpong did not start: %r" % out)
        with tempfile.TemporaryDirectory(prefix="sonde-bench-trace-") as tmp:
            txt = os.path.join(tmp, "t.txt")
            r = subprocess.run([PROF, "record", "--trace", "-d", str(SECONDS * 1000), "-t", "60",
                                "-e", ARCHES[arch]["kernel"], "-o", txt, "127.0.0.1:%d" % port],
                               capture_output=True, text=True, timeout=SECONDS + 240)
            m = SAID.search(r.stderr)
            if r.returncode != 0 or not m:
                sys.exit("bench: record --trace (%s): exit %d: %s" % (arch, r.returncode,
                                                                     r.stderr[-800:]))
            text = open(txt).read()
        stat = g.cmd("burn pingpong stat", 30)
        g.cmd("burn stop", 30)
    switches = sum(int(s) for s in re.findall(r"^cpu \d+: .*?switches (\d+)", text, re.M))
    return {"arch": arch, "events": int(m.group(1)), "ms": int(m.group(2)),
            "dropped": int(m.group(3)), "lost": int(m.group(4)), "switches": switches,
            "stat": stat.strip().splitlines()[-1] if stat.strip() else "-"}


def main(argv):
    arches = [argv[argv.index("--arch") + 1]] if "--arch" in argv else ["x86_64", "arm64"]
    rows = []
    for arch in arches:
        r = measure(arch)
        rows.append(r)
        print("trace stream %s: %d events in %d ms (%d switches), %d dropped, %d lost"
              % (arch, r["events"], r["ms"], r["switches"], r["dropped"], r["lost"]))
    lines = ["## The trace stream: 60 s of 10,000 switches a second", "",
             "bench/trace_stream.py: `burn pingpong %d %d 1` on CPU 1 of a -smp 2 kernel, "
             "`sonde-prof record --trace -d %d` over its UDP shell (the kernel's `trace "
             "stream`), in real time. Target: 0 dropped in the kernel, 0 lost on the wire."
             % ((SECONDS + 10) * 1000, RATE, SECONDS * 1000), "",
             "| architecture | events | covered | switches | per second | dropped | lost |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %d | %.1f s | %d | %.0f | %d | %d |"
                     % (r["arch"], r["events"], r["ms"] / 1000.0, r["switches"],
                        r["switches"] * 1000.0 / max(r["ms"], 1), r["dropped"], r["lost"]))
    write_section(lines)
    return 0 if all(r["dropped"] == 0 and r["lost"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
