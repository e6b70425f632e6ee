#!/usr/bin/env python3
"""A real profile of `burn` for the browser tests: boots the x86_64 kernel
(-smp 2), starts `burn` on CPU 1 (CPU 0 stays idle: two tasks in the
graph), and records one second with sonde-prof over the UDP shell.
Without -icount: it boots in about 1 s instead of 10; host load changes
the figures, not what the tests check (the page against the .txt report
of the same samples, burn_spin against the rest of burn's samples).

usage: python3 tests/browser/burn_profile.py OUTDIR

Writes OUTDIR/burn.html (record -o, the page under test), OUTDIR/burn.raw
(record -r) and OUTDIR/burn.txt (report from that raw: the same samples),
then prints 'ok SECONDS'. Exits 1 with a message on any failure. Every
socket stays on 127.0.0.1; the QEMU is closed before it exits."""
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "system"))
from qemu import ARCHES, Fail, Machine, ROOT, free_port, check  # noqa: E402

PROF = os.path.join(ROOT, "build", "host", "sonde-prof")
ELF = ARCHES["x86_64"]["kernel"]


def run(args):
    r = subprocess.run([PROF] + args, capture_output=True, text=True, timeout=60, cwd=ROOT)
    check(r.returncode == 0, "sonde-prof %s: exit %d: %s" % (" ".join(args), r.returncode,
                                                            r.stderr.strip()))


def main():
    out = sys.argv[1]
    t0 = time.monotonic()
    port = free_port()
    fwd = "user,id=n0,hostfwd=udp:127.0.0.1:%d-:9000" % port
    m = Machine(smp=2, append="udpshell=9000", lifetime=90.0, name="x86_64",
                extra=["-netdev", fwd, "-device", "virtio-net-pci,netdev=n0,disable-modern=on"])
    try:
        m.boot(60)
        o = m.cmd("burn 600000 1")
        check(o.startswith("burn: 600000 ms"), "burn did not start: %r" % o)
        # -t 30: a loaded host may answer late; it costs nothing otherwise.
        run(["record", "-t", "30", "-d", "1000", "-r", os.path.join(out, "burn.raw"),
             "-e", ELF, "-o", os.path.join(out, "burn.html"), "127.0.0.1:%d" % port])
    finally:
        m.close()
    run(["report", "-i", os.path.join(out, "burn.raw"), "-e", ELF,
         "-o", os.path.join(out, "burn.txt")])
    print("ok %.1f" % (time.monotonic() - t0))


if __name__ == "__main__":
    try:
        main()
    except (Fail, subprocess.TimeoutExpired, OSError) as e:
        print("burn_profile: %s" % e)
        sys.exit(1)
