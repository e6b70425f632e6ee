#!/usr/bin/env python3
"""bench/netload.py: netload's figures, both directions, 64- and 1024-byte
datagrams, under QEMU TCG with user networking; written as the "## Network"
section of docs/bench.md (bench/benchmd.py: replaced where it stands,
every other section kept).

  kernel -> host: `netload send 10.0.2.2 PORT 2000 SIZE` in the kernel,
                  `build/host/netload sink` on a free loopback port.
  host -> kernel: `netload recv 9001 4000` in the kernel, `build/host/netload
                  blast` (unpaced, 2 s) at a free loopback port forwarded to
                  the guest's 9001.

Real time, not -icount: the host end runs on the host's clock. Figures
depend on the host; what they show is the order of magnitude and where the
losses are. Needs `make` done. Python 3 standard library only."""
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
import net_tests as N  # noqa: E402
from benchmd import write_section  # noqa: E402

SIZES = (64, 1024)


def kv(line, key):
    m = re.search(r"\b%s ([\d.]+)" % key, line)
    if not m:
        sys.exit("bench: no %r in %r" % (key, line))
    return m.group(1)


def send(g, size):
    port = N.free_port()
    sink = subprocess.Popen([N.NETLOAD, "sink", "-p", str(port), "-t", "6"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        start = g.mark()
        g.cmd("netload send 10.0.2.2 %d 2000 %d" % (port, size))
        line, _ = N.netload_done(g, start, "send", 30)
        host = sink.communicate(timeout=30)[0].decode()
    finally:
        if sink.poll() is None:
            sink.kill()
            sink.wait()
    return line, host


def recv(g, size):
    start = g.mark()
    g.cmd("netload recv 9001 4000")
    r = subprocess.run([N.NETLOAD, "blast", "-H", N.HOST, "-p", str(g.nload_port), "-t", "2",
                        "-s", str(size)], capture_output=True, timeout=30)
    line, _ = N.netload_done(g, start, "recv", 30)
    return line, r.stdout.decode()


def main():
    g = N.Guest(N.free_port(), N.free_port())
    rows = []
    try:
        g.boot(90)
        for size in SIZES:
            k, h = send(g, size)
            print(k, h, sep="\n")
            rows.append("| kernel -> host | %d | %s | %s | %s | sink got %s of %s sent, %s ring-full retries |" % (
                size, kv(k, "dps"), kv(k, "mbps"), kv(k, "seconds"),
                kv(h, "datagrams"), kv(k, "datagrams"), kv(k, "retries")))
        for size in SIZES:
            k, h = recv(g, size)
            print(h, k, sep="\n")
            sent = int(kv(h, "datagrams"))
            got = int(kv(k, "datagrams"))
            rows.append("| host -> kernel | %d | %s | %s | %s | host offered %s/s; kernel got %d of %d (%.0f%%), lost %s |" % (
                size, kv(k, "dps"), kv(k, "mbps"), kv(k, "seconds"), kv(h, "dps"),
                got, sent, 100.0 * got / sent if sent else 0, kv(k, "lost")))
        vnet = g.cmd("vnet")
    finally:
        g.close()

    lines = [
        "## Network",
        "",
        "Written by `python3 bench/netload.py`. One boot, `-smp 4`, TCG, QEMU user",
        "networking (slirp), virtio-net legacy; real time on this host (not",
        "`-icount`: the host end of the wire runs on the host's clock). Datagrams/s",
        "and Mbit/s (UDP payload) are the kernel's own figures: for send, over the",
        "run; for receive, from the first datagram to the last.",
        "",
        "| direction | size | datagrams/s | Mbit/s | seconds | notes |",
        "|---|---|---|---|---|---|",
    ] + rows + [
        "",
        "On a shared 2-core host the figures move by up to 2x from run to run.",
        "Receive is measured against an unpaced `netload blast`: the host offers",
        "far more than QEMU's slirp and device model pass on, and what is lost is",
        "lost before the guest sees it (the kernel's receive drop counters stay",
        "at 0; the lost figure is from the sequence numbers). Send never loses:",
        "a full TX ring makes netload retry the same datagram (the retries column;",
        "each retry is also a `no buffer` drop in `net`). Under TCG the guest's",
        "own path is cheap next to the device model: a profile taken during a",
        "receive run has most of its samples in `rx_drain` right after the queue notify,",
        "where QEMU copies the frames it queued into the ring (docs/netload.md).",
        "",
        "Driver counters after the runs: `%s`" % " ".join(vnet.split()),
        "",
    ]
    write_section(lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
