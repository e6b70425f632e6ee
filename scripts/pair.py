#!/usr/bin/env python3
"""scripts/pair.py: two Sonde kernels on one Ethernet wire (docs/netload.md,
"Two kernels on one wire").

usage: python3 scripts/pair.py [--arch x86_64|arm64] [--smp N] [--icount-b ARG|none]
                               [--profile OUT [--window MS] [--size BYTES]]

Starts build/host/sonde-switch and two kernels, A (10.0.2.15) and B
(10.0.2.16), static addresses from the boot parameters, each NIC a QEMU
UDP socket netdev on a switch port; prints the host port of each kernel's
UDP shell. Without --profile it waits until Ctrl-C (or an hour), then
stops everything. With --profile OUT: B runs `netload recv`, A `netload
send` to it, one `sonde-prof record` profiles both over the window (MS,
1-2000, default 2000) and writes OUT (its extension picks the format, as
for record; the per-kernel root frame is added for .folded and .svg), and
the script prints both netload summaries and exits. B runs under
-icount (tests/system/pair.py's ICOUNT_B says why; --icount-b none
turns it off).

Needs `make` (or `make ARCH=arm64`) done: the kernel and build/host's
sonde-switch, sonde-sh and sonde-prof. Every socket is on 127.0.0.1.
Exit status 0, 1 if a step failed (the message says which), 2 on bad usage.
"""
import argparse
import os
import signal
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
from qemu import ARCHES, Fail  # noqa: E402
import pair as P  # noqa: E402

LIFETIME = 3600.0


def window(s):
    v = int(s)
    if not 1 <= v <= 2000:
        raise argparse.ArgumentTypeError("window %s out of range (1-2000 ms)" % s)
    return v


def on_signal(sig, frame):
    raise KeyboardInterrupt


def main():
    ap = argparse.ArgumentParser(description="Two Sonde kernels on one wire, "
                                 "each reachable over its UDP shell.")
    ap.add_argument("--arch", choices=sorted(ARCHES), default="x86_64")
    ap.add_argument("--smp", type=int, default=2, help="CPUs per kernel (default 2)")
    ap.add_argument("--profile", metavar="OUT",
                    help="run netload A -> B, profile both into OUT, then exit")
    ap.add_argument("--window", type=window, default=2000, metavar="MS",
                    help="the profile's window, 1-2000 ms (default 2000)")
    ap.add_argument("--size", type=int, default=1472,
                    help="datagram payload, 18-1472 (default 1472, a full frame)")
    ap.add_argument("--icount-b", default=P.ICOUNT_B, metavar="ARG",
                    help="B's -icount (default %s: its ticks then land in the receive "
                    "path as often as it works there), or 'none' for MTTCG like A" % P.ICOUNT_B)
    args = ap.parse_args()

    # SIGTERM ends the script the way Ctrl-C does, through the finally;
    # and SIGINT does even where it came in ignored (a background job).
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    p = None
    try:
        icount = None if args.icount_b == "none" else args.icount_b
        p = P.Pair(arch=args.arch, smp=args.smp, lifetime=LIFETIME, icount_b=icount)
        p.boot()
        for k in ("a", "b"):
            print("%s %s: build/host/sonde-sh -p %d 127.0.0.1 <command>" % (
                k.upper(), P.IP[k], p.port_a if k == "a" else p.port_b))
        print("(the UDP shells have no authentication: the host side is 127.0.0.1 only)")
        sys.stdout.flush()
        if not args.profile:
            print("Ctrl-C stops both kernels and the switch.")
            sys.stdout.flush()
            while p.a.alive() and p.b.alive():
                time.sleep(1)
            return 1
        extra = ["--per-kernel"] if args.profile.endswith((".folded", ".svg")) else []
        sent, got, err = P.load_and_profile(p, args.profile, args.window, args.size, extra)
        print("A: " + sent)
        print("B: " + got)
        if err.strip():
            print(err.strip())
        print("profile of both kernels: %s" % args.profile)
        return 0
    except Fail as e:
        print("pair: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        if p is not None:
            counters = p.close()
            if counters.strip():
                print(counters.strip())


if __name__ == "__main__":
    sys.exit(main())
