#!/usr/bin/env python3
"""Sonde network system tests: virtio-net, the UDP shell, netload.

usage: python3 tests/system/net_tests.py [--list] [--arch x86_64|arm64] [NAME...]

Boots one kernel under QEMU (TCG, 4 CPUs) with user networking: the UDP
shell's port 9000 and netload's port 9001 forwarded from two FREE loopback
ports (found by binding port 0 on 127.0.0.1), serial on stdio pipes. Talks
to it with build/host/sonde-sh, build/host/netload and Python sockets
speaking the wire format (docs/udpshell.md) directly. Every host socket
binds and sends to 127.0.0.1 only; every count and wait is bounded; QEMU
has a bounded lifetime and is killed by its pid on the way out.

Prints 'PASS name (secs)' or 'FAIL name (secs): reason' per test and ends
with 'N passed, N failed' (nothing here retries); exit
status 1 if any failed, 2 if a NAME (exact or shell-style pattern)
selects nothing. Any exception in a test is that test's failure; the rest
still run. Needs `make` done (kernel and host tools). Python 3 standard
library only.

pair_netload_profiled boots two kernels on one wire instead
(tests/system/pair.py: build/host/sonde-switch between their socket
netdevs, slirp on a third switch port forwarding both UDP shells): B
receives what A sends with netload, one sonde-prof record profiles both,
and the test checks the counts, A's send path and B's receive path.

pingpong_off_stream: `burn pingpong` (two tasks switching 10,000 times a
second on one CPU) under `profile off` streamed for 10 s to `sonde-prof
record --off`: the pair's intervals, the kernel's drops and the records
lost on the wire add up to the switches of the window within 1%; then
`sonde-prof top --off` shows the pair's [waitq burn-pp] live, and
`record --wall` on one of them adds up to its 1 s window (about 15 s;
the shared kernel runs without -icount, so the window is 10 s of real
time).

--arch arm64 runs the same tests against build/arm64/kernel.elf on QEMU
virt (GICv3, cortex-a72) with virtio-net on a virtio-mmio transport
(virtio-net-device); x86_64 (virtio-net-pci) is the default. Every test
applies to both (ARCH_ONLY would name one that does not, and why).
"""
import atexit
import hashlib
import hmac
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True       # no __pycache__ in the source tree
from qemu import ARCHES, Fail, LIVE, Machine, ROOT, free_port, check, NICS  # noqa: E402
import pair  # noqa: E402
import parse as P  # noqa: E402
import pstream as PS  # noqa: E402
import runner  # noqa: E402
from shell_checks import checked_profile  # noqa: E402

SONDE_SH = os.path.join(ROOT, "build", "host", "sonde-sh")
NETLOAD = os.path.join(ROOT, "build", "host", "netload")
SONDE_PROF = os.path.join(ROOT, "build", "host", "sonde-prof")
LIFETIME = 240.0                 # seconds: the QEMU dies after this, whatever happens
MAGIC = 0x4E4F5348
HOST = "127.0.0.1"

# Per architecture, the NIC (the kernel, QEMU and machine are qemu.ARCHES').
ARCH = "x86_64"                  # set by --arch in main()
NET_RX_FUNCS = ("vn_rx_task", "rx_drain", "vq_kick", "vn_irq", "net_rx", "ipv4_input", "udp_input",
                "nl_input", "ether_", "virtio")


# ---- the guest ----------------------------------------------------------

class Guest(Machine):
    """A Machine with user networking: the UDP shell's port 9000 and
    netload's 9001 forwarded from ushell_port and nload_port on HOST."""

    def __init__(self, ushell_port, nload_port, append="udpshell=9000", nic=True, rng=True,
                 smp=4):
        for tool in (ARCHES[ARCH]["kernel"], SONDE_SH, NETLOAD):
            if not os.path.exists(tool):
                raise Fail("%s does not exist: run %s first" % (tool, ARCHES[ARCH]["make"]))
        self.ushell_port, self.nload_port = ushell_port, nload_port
        fwd = "hostfwd=udp:%s:%d-:9000,hostfwd=udp:%s:%d-:9001" % (HOST, ushell_port,
                                                                   HOST, nload_port)
        if nic:
            extra = ["-netdev", "user,id=n0," + fwd, "-device", NICS[ARCH]]
        else:
            extra = ["-nic", "none"]
        Machine.__init__(self, smp=smp, append=append, lifetime=LIFETIME, name="guest",
                         arch=ARCH, extra=extra, rng=rng)

    def wait_for(self, pattern, timeout, start=0):
        """Machine.wait_for with re.M ('^' and '$' at every line), and the
        serial tail in the failure."""
        rx = re.compile(pattern, re.M) if isinstance(pattern, str) else pattern
        try:
            return Machine.wait_for(self, rx, timeout, start)
        except Fail as e:
            raise Fail("%s; serial tail:\n%s" % (e, self.tail(start)))

    def sh(self, line, timeout=10, wall=60):
        """One command over the UDP shell with build/host/sonde-sh."""
        try:
            r = subprocess.run([SONDE_SH, "-p", str(self.ushell_port), "-t", str(timeout),
                                HOST, line], capture_output=True, timeout=wall)
        except subprocess.TimeoutExpired:
            raise Fail("sonde-sh %r: still running after %d s" % (line, wall))
        if r.returncode != 0:
            raise Fail("sonde-sh %r: exit %d: %s" % (line, r.returncode,
                                                     r.stderr.decode(errors="replace")))
        return r.stdout.decode("latin-1")


# ---- a raw protocol client ------------------------------------------------

def request(seq, line, chunk=0, flags=1, reserved=0, length=None):
    payload = line.encode() if isinstance(line, str) else line
    n = len(payload) if length is None else length
    return struct.pack(">IIHHHH", MAGIC, seq, chunk, flags, n, reserved) + payload


def raw_exchange(sock, port, dgram, timeout=10.0):
    """Send one request, collect the reply chunks until the last; returns
    the raw datagrams in arrival order. Like sonde-sh (docs/udpshell.md,
    "What a client does"), the same request goes again after 1 s without
    a new chunk, 3 sends in all: UDP may lose a datagram, and the server
    answers a same-seq retransmission from its remembered reply without
    running the command again. Fails on silence."""
    sock.sendto(dgram, (HOST, port))
    sends = 1
    seq = struct.unpack(">I", dgram[4:8])[0]
    got, last = {}, None
    deadline = time.monotonic() + timeout
    resend = time.monotonic() + 1.0
    while last is None or len(got) < last + 1:
        now = time.monotonic()
        left = deadline - now
        if left <= 0:
            raise Fail("no complete reply to seq %d within %.0f s (%d sends; have %d chunks)"
                       % (seq, timeout, sends, len(got)))
        if now >= resend and sends < 3:
            sock.sendto(dgram, (HOST, port))
            sends += 1
            resend = now + 1.0
        sock.settimeout(max(0.05, min(left, resend - now) if sends < 3 else left))
        try:
            d, _ = sock.recvfrom(65536)
        except socket.timeout:
            continue
        magic, rseq, chunk, flags, n, rid = struct.unpack(">IIHHHH", d[:16])
        check(magic == MAGIC and n == len(d) - 16 and flags & 4 and rid != 0,
              "malformed reply %r" % d[:32])
        if rseq != seq:
            continue                      # a late reply to something earlier
        if chunk not in got:
            resend = time.monotonic() + 1.0
        got[chunk] = d
        if flags & 1:
            last = chunk
    return [got[i] for i in range(last + 1)]


def payload_of(chunks):
    return b"".join(c[16:] for c in chunks).decode("latin-1")


def net_counter(text, name):
    m = re.search(r"%s (\d+)" % re.escape(name), text)
    if not m:
        raise Fail("net: no %r counter in %r" % (name, text))
    return int(m.group(1))


# ---- tests -----------------------------------------------------------------

# Every test here runs on both architectures (virtio-net over PCI on x86,
# over virtio-mmio on arm64; boot_net checks each one's transport): a test
# for one architecture only would name it in ARCH_ONLY, with the reason.
TESTS = []
ARCH_ONLY = {}                   # test name -> the one arch it applies to


def test(fn):
    TESTS.append((fn.__name__[2:], fn))
    return fn


@test
def t_boot_net(g):
    m = g.wait_for(r"^net: mac ([0-9a-f:]{17}) ip (\S+) mask (\S+) gw (\S+)$", 5)
    check(m.group(2) == "10.0.2.15" and m.group(4) == "10.0.2.2", "boot line %r" % m.group(0))
    g.wait_for(r"^net: UDP shell on port 9000", 5)
    if ARCH == "arm64":
        # Found in the device tree: QEMU puts the first device in the last
        # of virt's 32 windows (0x0a000000 + 0x200 n, SPI 16 + n).
        out = g.cmd("vnet")
        m = re.search(r"^virtio-net mmio 0x([0-9a-f]+) v[12] irq (\d+):", out, re.M)
        check(m, "vnet does not name a virtio-mmio transport: %r" % out)
        base, irq = int(m.group(1), 16), int(m.group(2))
        check(base == 0x0a000000 + 0x200 * (irq - 48), "window 0x%x does not match SPI INTID %d"
              % (base, irq))
        return
    out = g.cmd("pci")
    check(re.search(r"^00:\d\d\.0 1af4:1000 class 02\.00\.00 bar0 io 0x[0-9a-f]+ .*irq \d+", out, re.M),
          "pci does not list the virtio-net device with an I/O BAR and irq: %r" % out)


@test
def t_ushell_help(g):
    out = g.sh("help")
    for c in ("profile", "netload", "net", "pci", "help"):
        check(re.search(r"^  %s\b" % c, out, re.M), "help over UDP lacks %r: %r" % (c, out[:400]))


@test
def t_ushell_version(g):
    out = g.sh("version")
    serial = g.cmd("version")
    check(out.startswith("Sonde") and out == serial,
          "version over UDP %r differs from serial %r" % (out, serial))


@test
def t_ushell_profile(g):
    out = g.sh("profile 200 all 2", timeout=20)
    r = checked_profile(out)
    check(r["window"] == 200, "window %d, asked 200" % r["window"])
    check(r["samples"] > 0 and r["chains"], "no samples/chains: %r" % out[:600])
    # Whole: two chains were asked for, so either every sample is in the
    # chains shown (at most two distinct chains), or exactly two are shown
    # and hold no more than the total. (The PMU source at 1 kHz on arm64
    # often sees a third chain in 200 ms.)
    shown = sum(c["count"] for c in r["chains"])
    check(len(r["chains"]) <= 2, "asked for 2 chains, got %d" % len(r["chains"]))
    check(shown == r["samples"] or (len(r["chains"]) == 2 and shown < r["samples"]),
          "report incomplete: %d chains hold %d samples, header says %d"
          % (len(r["chains"]), shown, r["samples"]))
    check(out.endswith("\n"), "report cut short: %r" % out[-200:])


@test
def t_ushell_profile_raw(g):
    """`profile 1000 all raw` and `... folded` over the UDP shell with burn
    on every CPU: each reply arrives whole (P.raw and P.folded check that
    the counts add up to samples=, so a lost chunk fails) and names the
    booted kernel's build id."""
    want = P.elf_build_id(ARCHES[ARCH]["kernel"])
    try:
        g.cmd("burn 4000")
        outs = [g.sh("profile 1000 all %s" % fmt, timeout=30) for fmt in ("raw", "folded")]
    finally:
        g.cmd("burn stop")
    r, f = P.raw(outs[0]), P.folded(outs[1])
    print("    raw: %d samples, %d chains, %d bytes; folded: %d samples, %d stacks" % (
        r["samples"], len(r["chains"]), len(outs[0]), f["samples"], len(f["stacks"])))
    for h, what in ((r, "raw"), (f, "folded")):
        check(h["build_id"] == want, "%s: build-id %s, the ELF's is %s" % (what, h["build_id"], want))
        check(h["samples"] > 0 and h["ms"] == 1000, "%s header: %r" % (what, outs[0 if what == "raw" else 1][:200]))


@test
def t_ushell_unknown(g):
    out = g.sh("frobnicate 1 2")
    check(out == "unknown command 'frobnicate' (try help)\n", "unknown command reply %r" % out)


@test
def t_ushell_10000_lines(g):
    out = g.sh("lines 10000", timeout=15)
    lines = out.split("\n")
    check(lines[-1] == "", "output does not end with a newline")
    want = ["line %d" % i for i in range(1, 10001)]
    check(lines[:-1] == want, "10000 lines not reassembled in order: %d lines, first bad %r" % (
        len(lines) - 1, next((l for l, w in zip(lines, want) if l != w), None)))


@test
def t_ushell_empty_reply(g):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind((HOST, 0))
        chunks = raw_exchange(s, g.ushell_port, request(777, ""))
        check(len(chunks) == 1 and len(chunks[0]) == 16 and chunks[0][10:12] == b"\0\5",
              "empty command: want one empty last chunk (flags last, reply), got %r" % chunks)
    finally:
        s.close()


@test
def t_ushell_garbage(g):
    def host_drops(port):
        """Datagrams the host kernel dropped at QEMU's forwarding socket
        (127.0.0.1:port) because QEMU had not read them yet: the 'drops'
        column of /proc/net/udp. These never reach the guest."""
        want = "0100007F:%04X" % port
        with open("/proc/net/udp") as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                if cols[1] == want:
                    return int(cols[-1])
        raise Fail("no host socket on 127.0.0.1:%d in /proc/net/udp" % port)

    before = g.sh("net")
    bad0 = net_counter(before, "bad udpshell")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((HOST, 0))
    try:
        # One of each malformed kind, slowly, each must be counted.
        kinds = [b"", b"NOSH", request(1, "help")[:15],            # short
                 struct.pack(">IIHHHH", 0x4E4F5349, 1, 0, 1, 4, 0) + b"help",   # magic
                 request(1, "help", length=200),                   # len beyond
                 request(1, "help", length=2),                     # len short of it
                 request(1, "help", reserved=1),                   # reserved
                 request(1, "x" * 256)]                            # oversized command
        for k in kinds:
            s.sendto(k, (HOST, g.ushell_port))
            time.sleep(0.05)
        mid = net_counter(g.sh("net"), "bad udpshell")
        check(mid - bad0 == len(kinds), "each malformed kind once: counter went %d -> %d, "
              "want +%d" % (bad0, mid, len(kinds)))
        # 20 000 random datagrams, paced (100 every 10 ms) so that QEMU keeps
        # up. From the host socket to the guest's handler the path is
        # lossless and in order: slirp queues while the guest's ring is full,
        # and the guest's driver never drops a received frame. So every
        # datagram the host kernel handed to QEMU must be counted by the
        # time the next `net` request (behind them on the same path) runs.
        # The one loss outside the guest, the host socket's own buffer
        # overflowing while QEMU is descheduled, is read from /proc/net/udp.
        # The check catches a malformed datagram that is neither answered
        # nor counted (a parse path that returns early, a drop the UDP
        # shell does not see).
        rnd = random.Random(1234)
        sent = 0
        drops0 = host_drops(g.ushell_port)
        for burst in range(200):
            for _ in range(100):
                n = rnd.choice([0, 1, 15, 16, 17, rnd.randrange(0, 1473)])
                d = bytes(rnd.getrandbits(8) for _ in range(n))
                if n >= 4 and rnd.random() < 0.3:
                    d = struct.pack(">I", MAGIC) + d[4:]          # right magic, rest random
                s.sendto(d, (HOST, g.ushell_port))
                sent += 1
            time.sleep(0.01)
        # Read now: on loopback a datagram is queued or dropped within its
        # sendto, so these drops are final, and sonde-sh's requests below
        # (which may be dropped and resent too) are not among them.
        lost = host_drops(g.ushell_port) - drops0
        out = g.sh("version")
        check(out.startswith("Sonde"), "shell does not answer after garbage: %r" % out)
        # A random datagram with the right magic and the reply flag is
        # dropped as a reply before it is parsed: counted there instead.
        text = g.sh("net")
        after = net_counter(text, "bad udpshell") + net_counter(text, ", replies")
        mid += net_counter(before, ", replies")
        check(after - mid == sent - lost,
              "garbage: %d sent, %d dropped by the host before QEMU read them, bad udpshell "
              "and replies counters rose by %d (want exactly %d)"
              % (sent, lost, after - mid, sent - lost))
        s.setblocking(False)
        answered = 0
        try:
            while True:
                s.recv(65536)
                answered += 1
        except BlockingIOError:
            pass
        check(answered == 0, "garbage: %d replies to malformed datagrams" % answered)
        print("    garbage: %d sent, %d dropped on the host, %d counted as bad udpshell"
              % (sent, lost, after - mid))
    finally:
        s.close()


@test
def t_ushell_retransmit(g):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((HOST, 0))
    try:
        seq = random.randrange(1 << 31)
        a = raw_exchange(s, g.ushell_port, request(seq, "burn 1 0"))
        pa = P.burn_pids(payload_of(a))
        b = raw_exchange(s, g.ushell_port, request(seq, "burn 1 0"))
        check(a == b, "retransmit got a different reply: %r vs %r" % (a, b))
        c = raw_exchange(s, g.ushell_port, request(seq + 1, "burn 1 0"))
        pc = P.burn_pids(payload_of(c))
        check(pc != pa, "a new sequence number did not run the command again")
        check(pc[0] > pa[0], "pids: first run %s, second %s" % (pa, pc))
        # seq is no longer this sender's last request: it runs again.
        d = raw_exchange(s, g.ushell_port, request(seq, "burn 1 0"))
        pd = P.burn_pids(payload_of(d))
        check(pd[0] > pc[0], "an old sequence number (not the last) must run again")
        # A long reply comes back whole from the kept copy too.
        e = raw_exchange(s, g.ushell_port, request(seq + 2, "lines 3000"))
        f = raw_exchange(s, g.ushell_port, request(seq + 2, "lines 3000"))
        check(e == f and len(e) > 10, "long reply retransmit differs (%d vs %d chunks)" % (
            len(e), len(f)))
    finally:
        s.close()


@test
def t_ushell_resend_flood(g):
    """50 copies of one 26-byte `lines 2000` request after its reply (a
    flood of retransmits, from a captured or forged datagram): the kept
    reply goes out at most 3 more times, so the flood draws at most 4
    replies' bytes however many copies come (it drew 50: 700 datagrams,
    955,850 bytes, 735 times what was sent). The amplification factor,
    reply bytes over request bytes, is printed and bounded."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((HOST, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    try:
        req = request(random.randrange(1 << 31), "lines 2000")
        check(len(req) == 26, "request is %d bytes" % len(req))
        first = raw_exchange(s, g.ushell_port, req)
        one = sum(len(d) for d in first)
        n0 = g.sh("net")
        for _ in range(50):
            s.sendto(req, (HOST, g.ushell_port))
            time.sleep(0.02)
        got = []
        s.settimeout(3.0)
        try:
            while True:
                got.append(s.recv(65536))
        except socket.timeout:
            pass
        n1 = g.sh("net")
    finally:
        s.close()
    total = sum(len(d) for d in got)
    sent = 51 * len(req)
    factor = (one + total) / sent
    print("    one reply %d bytes in %d datagrams; 50 copies drew %d datagrams, %d bytes; "
          "%d bytes out for %d in: factor %.1f" % (one, len(first), len(got), total,
                                                   one + total, sent, factor))
    resent = net_counter(n1, "resent from the kept reply") - net_counter(n0, "resent from the kept reply")
    check(resent == 3 and len(got) == 3 * len(first) and total == 3 * one,
          "resent %d times, %d datagrams, %d bytes: want 3 times the %d-byte reply"
          % (resent, len(got), total, one))
    # The other 47 drew nothing: refused once the 3 resends were spent, or
    # ignored while a resend of the same request was still going out.
    spent = net_counter(n1, "resends spent") - net_counter(n0, "resends spent")
    in_hand = net_counter(n1, "retransmits in hand") - net_counter(n0, "retransmits in hand")
    check(spent + in_hand == 47, "%d copies refused as resends spent and %d in hand, want 47"
          % (spent, in_hand))
    # The bound docs/udpshell.md states: a request draws its output at most
    # 4 times in all, whatever the number of copies.
    check(one + total <= 4 * one, "a request drew %d bytes, more than 4 replies" % (one + total))


@test
def t_ushell_no_splice(g):
    """sonde-sh loses the end of a reply, and before its resend reaches the
    shell, four other senders push its kept reply out: the shell runs the
    command again. sonde-sh must refuse to put the two runs' chunks
    together (exit 2, naming both reply ids), even though `lines` prints
    the same text twice; it used to print a splice of the two and exit 0."""
    evicted = []

    def drop(d):                         # the first run's chunks from 5 on are lost
        return not evicted and struct.unpack(">H", d[8:10])[0] >= 5

    def before(n, d):                    # the client's resend: evict first
        if n != 2:
            return
        for i in range(4):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((HOST, 0))
            s.settimeout(5.0)
            try:
                s.sendto(request(77 + i, "version"), (HOST, g.ushell_port))
                s.recv(65536)            # answered: its reply took a kept slot
            finally:
                s.close()
        evicted.append(True)

    r = Relay(g.ushell_port, drop=drop, before=before)
    try:
        p = subprocess.run([SONDE_SH, "-p", str(r.port), "-t", "10", HOST, "lines 3000"],
                           capture_output=True, timeout=60)
    finally:
        r.close()
    err = p.stderr.decode(errors="replace")
    print("    %d chunks of the first run dropped, %d sends; sonde-sh: %s"
          % (r.dropped, len(r.sent), err.strip()))
    check(evicted, "the client never resent (%d sends), so nothing was evicted" % len(r.sent))
    m = re.search(r"chunks of two different replies \(ids (\d+) and (\d+)\)", err)
    check(p.returncode == 2 and m and m.group(1) != m.group(2),
          "sonde-sh put two runs together: exit %d, %d bytes out, %r"
          % (p.returncode, len(p.stdout), err))
    want = "".join("line %d\n" % i for i in range(1, 3001))
    check(want.startswith(p.stdout.decode()) and len(p.stdout) == 5 * 1400,
          "printed %d bytes, want the first run's 5 chunks" % len(p.stdout))


def nos_client(sock, port, seq, line, timeout=10.0):
    """The protocol's other client, nos's scripts/udpsh.py, as it reads a
    reply: request flags 0; datagrams shorter than the header, with another
    magic or another seq skipped; a payload length beyond the datagram or a
    chunk out of order fail; the payload is the bytes after the header up
    to its length, anything in the other fields (flags but bit 0, the id)
    unread; the flagged chunk ends it. No resends. Returns the text, or
    raises Fail as that client would report an error."""
    sock.sendto(struct.pack(">IIHHHH", MAGIC, seq, 0, 0, len(line), 0) + line.encode(),
                (HOST, port))
    sock.settimeout(timeout)
    want, text = 0, b""
    while True:
        try:
            d = sock.recv(4096)
        except socket.timeout:
            raise Fail("nos client: timeout after chunk %d" % want)
        if len(d) < 16:
            continue
        magic, rseq, chunk, flags, n, _ = struct.unpack(">IIHHHH", d[:16])
        if magic != MAGIC or rseq != seq:
            continue
        check(n <= len(d) - 16, "nos client: payload_len mismatch")
        check(chunk == want, "nos client: expected chunk %d, got %d" % (want, chunk))
        text += d[16:16 + n]
        want += 1
        if flags & 1:
            return text.decode("latin-1")


@test
def t_ushell_nos_client_compat(g):
    """Open mode still speaks to nos's udpsh.py unchanged: the reply flag
    and the reply id sit where that client does not look."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((HOST, 0))
    try:
        out = nos_client(s, g.ushell_port, 0, "version")
        check(out == g.cmd("version"), "version over the nos client: %r" % out)
        out = nos_client(s, g.ushell_port, 1, "lines 300")
        check(out == "".join("line %d\n" % i for i in range(1, 301)),
              "lines 300 over the nos client: %d bytes" % len(out))
    finally:
        s.close()


@test
def t_ushell_port_reuse(g):
    """A client that starts at seq 0 on a source port an earlier client used
    gets its own answer. The retransmit cache used to be keyed on (ip,
    port, seq) alone and answered `version` with the earlier client's
    `uptime`, running nothing."""
    a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    a.bind((HOST, 0))
    port = a.getsockname()[1]
    try:
        first = payload_of(raw_exchange(a, g.ushell_port, request(0, "uptime")))
        check(first.startswith("up "), "uptime answered %r" % first[:80])
    finally:
        a.close()
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    b.bind((HOST, port))
    try:
        second = payload_of(raw_exchange(b, g.ushell_port, request(0, "version")))
        check(second.startswith("Sonde "), "version from a reused port and seq 0 answered %r: "
              "the earlier client's cached reply" % second[:80])
    finally:
        b.close()


def ushell_in_background(g, line):
    """Run line over the UDP shell in a thread: res gets "out" or "err"."""
    res = {}

    def run():
        try:
            res["out"] = g.sh(line, timeout=20)
        except Fail as e:
            res["err"] = str(e)
    th = threading.Thread(target=run)
    th.start()
    return th, res


@test
def t_profile_busy_across_shells(g):
    """A second profile from the other shell gets `profile: busy`, and the
    first one's report is whole."""
    th, res = ushell_in_background(g, "profile 2000 all 2")
    try:
        time.sleep(1.0)
        second = g.cmd("profile 100", timeout=10)
        running = "out" not in res and "err" not in res
    finally:
        th.join(30)
    check(running, "the UDP profile ended before the serial one was asked: %r" % res)
    check(second.strip() == "profile: busy", "second profile: %r" % second)
    check("out" in res and checked_profile(res["out"])["window"] == 2000,
          "first profile: %r" % res)
    after = g.cmd("profile 100", timeout=10)
    check(after.startswith("profiled 100 ms"), "profile after the busy one: %r" % after)


@test
def t_ushell_serial_concurrent(g):
    """The serial shell answers while the UDP shell runs a long command."""
    th, res = ushell_in_background(g, "profile 2000")
    try:
        time.sleep(1.0)
        t0 = time.monotonic()
        out = g.cmd("version", timeout=10)
        dt = time.monotonic() - t0
        busy = "out" not in res and "err" not in res
    finally:
        th.join(30)
    check(out.startswith("Sonde"), "serial version: %r" % out)
    check(busy, "the UDP shell's profile ended before the serial command ran: %r" % res)
    check(dt < 1.5, "serial command took %.1f s while the UDP shell was busy" % dt)
    check("out" in res and checked_profile(res["out"])["window"] == 2000,
          "UDP profile: %r" % res)


@test
def t_driver_interrupts(g):
    out = g.cmd("vnet")
    m = re.search(r"interrupts (\d+), rx frames (\d+), tx frames (\d+)", out)
    check(m, "vnet: %r" % out)
    irqs, rx, tx = map(int, m.groups())
    check(irqs > 0 and rx > 0 and tx > 0, "no interrupts or frames: %r" % out)
    check(irqs <= rx, "more interrupts than frames received: %r" % out)
    # The UDP shell's replies are built in place in the device's transmit
    # buffers (udp_send through udp_reserve); only ARP's frames, built
    # before the next hop is known, are copied. QEMU's user network offers
    # no checksum offload (its backend takes no virtio_net_hdr), so the
    # checksums are summed in place, and the host's socket drops a
    # datagram whose UDP checksum is wrong: every reply these tests read
    # proves them right.
    m = re.search(r"tx frames (\d+) \((\d+) built in place, (\d+) copied\)", out)
    check(m, "vnet does not say how its frames were built: %r" % out)
    inplace, copied = int(m.group(2)), int(m.group(3))
    check(inplace + copied == tx and inplace > copied, "frames mostly copied: %r" % out)
    check("checksum offload off" in out, "checksum offload under QEMU's user network: %r" % out)


def netload_done(g, start, kind, timeout):
    # The summary comes from the run's task, after the command returned:
    # often right behind the shell's "> " prompt.
    m = g.wait_for(r"^(?:> )?(netload %s .*datagrams (\d+) bytes \d+ .* run \d+)\n" % kind, timeout, start)
    return m.group(1), int(m.group(2))


def kv(line, key):
    m = re.search(r"\b%s (\d+)" % key, line)
    if not m:
        raise Fail("no %r in %r" % (key, line))
    return int(m.group(1))


@test
def t_netload_send_to_sink(g):
    port = free_port()
    sink = subprocess.Popen([NETLOAD, "sink", "-p", str(port), "-t", "8"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(0.5)
        start = g.mark()
        out = g.cmd("netload send 10.0.2.2 %d 1000" % port)
        check("sending 1024-byte datagrams to 10.0.2.2" in out, "netload send: %r" % out)
        line, kernel_sent = netload_done(g, start, "send", 20)
        so, se = sink.communicate(timeout=20)
    finally:
        if sink.poll() is None:
            sink.kill()
            sink.wait()
    res = so.decode()
    got = kv(res, "datagrams")
    print("    kernel: %s\n    host:   %s" % (line.strip(), res.strip()))
    check(got > 1000, "sink counted %d datagrams, want > 1000" % got)
    check(kv(res, "malformed") == 0 and kv(res, "foreign") == 0, "sink: %s" % res)
    # What is still in the TX ring (128 slots) when the kernel stops may
    # arrive or not; nothing else may go missing.
    check(0 <= kernel_sent - got <= 128, "kernel sent %d, sink got %d" % (kernel_sent, got))


@test
def t_netload_recv_from_blast(g):
    start = g.mark()
    out = g.cmd("netload recv 9001 4000")
    check("receiving on port 9001" in out, "netload recv: %r" % out)
    r = subprocess.run([NETLOAD, "blast", "-H", HOST, "-p", str(g.nload_port), "-t", "1",
                        "-s", "512", "-r", "3000"], capture_output=True, timeout=20)
    res = r.stdout.decode()
    check(r.returncode == 0, "blast failed: %s %s" % (res, r.stderr.decode()))
    sent = kv(res, "datagrams")
    line, got = netload_done(g, start, "recv", 20)
    print("    host:   %s\n    kernel: %s" % (res.strip(), line.strip()))
    lost = kv(line, "lost")
    check(got > 0 and kv(line, "foreign") == 0, "recv: %s" % line)
    check(kv(line, "dup") == 0, "duplicates: %s" % line)
    # lost counts gaps below the highest sequence seen; only datagrams after
    # the last one that arrived are invisible to the receiver.
    check(got + lost <= sent and sent - (got + lost) <= max(5, sent // 50),
          "host sent %d, kernel got %d and reports %d lost" % (sent, got, lost))


@test
def t_netload_profile_during_recv(g):
    # The driver's receive task alone: without icount the guest's CPUs are
    # mostly idle between the host's bursts, and how often a tick finds
    # the receive path running over every task depends on the host's load.
    # Filtered to that task, every sample it gets is on the receive path.
    m = re.search(r"^\s*(\d+)\s+virtio-rx\s", g.cmd("ps"), re.M)
    check(m, "no virtio-rx task in ps")
    start = g.mark()
    g.cmd("netload recv 9001 10000")
    # Unpaced: under TCG the receive path only shows when it is flooded.
    blast = subprocess.Popen([NETLOAD, "blast", "-H", HOST, "-p", str(g.nload_port), "-t", "5",
                              "-s", "1024"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(1.0)
        out = g.sh("profile 2000 %s 3" % m.group(1), timeout=30)
        blast.communicate(timeout=20)
    finally:
        if blast.poll() is None:
            blast.kill()
            blast.wait()
    g.cmd("netload stop", timeout=10)
    netload_done(g, start, "recv", 10)
    r = checked_profile(out)
    names = set()
    for c in r["chains"]:
        names.add(c["name"])
        names.update(c["callers"])
    hits = sorted(n for n in names if any(f in n for f in NET_RX_FUNCS))
    print("    receive path in profile: %s" % ", ".join(hits))
    check(hits, "no network receive function among the chains: %s" % sorted(names))


@test
def t_netload_recv_off_cpu(g):
    # profile off on the driver's receive task while netload recv takes a
    # blast: between the host's bursts it waits for the device, so its
    # time off the CPU lands in [waitq virtio-rx], woken from the
    # device's interrupt (docs/profiling.md).
    m = re.search(r"^\s*(\d+)\s+virtio-rx\s", g.cmd("ps"), re.M)
    check(m, "no virtio-rx task in ps")
    start = g.mark()
    g.cmd("netload recv 9001 10000")
    blast = subprocess.Popen([NETLOAD, "blast", "-H", HOST, "-p", str(g.nload_port), "-t", "4",
                              "-s", "1024"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(1.0)
        out = g.cmd("profile off 1000 %s 4" % m.group(1), timeout=30)
        blast.communicate(timeout=20)
    finally:
        if blast.poll() is None:
            blast.kill()
            blast.wait()
    g.cmd("netload stop", timeout=10)
    netload_done(g, start, "recv", 10)
    h = re.search(r"^blocked (\d+\.\d{3}) ms, runnable (\d+\.\d{3}) ms, 1 tasks, (\d+) dropped$",
                  out, re.M)
    check(h, "no off-cpu header for the one task: %r" % out[:300])
    entries = re.findall(r"^(\d+\.\d)%% (\d+\.\d{3}) ms (\[[^\]]+\]) task %s virtio-rx$"
                         % m.group(1), out, re.M)
    check(entries, "no entries: %r" % out[:300])
    check(entries[0][2] == "[waitq virtio-rx]", "heaviest entry is %s, not [waitq virtio-rx]"
          % entries[0][2])
    share = sum(float(e[0]) for e in entries if e[2] == "[waitq virtio-rx]")
    check(share >= 50.0, "[waitq virtio-rx] holds only %.1f%% of its time off the CPU" % share)
    # Its waker is the device's interrupt, by the name its driver gave it
    # (not the task the interrupt happened to land on; a shared line: the
    # names joined by '+').
    wirq = re.findall(r"^        woken by irq (\S+) on CPU \d+, during \d+ \S+$", out, re.M)
    check(any("virtio-net" in w.split("+") for w in wirq),
          "its waker is not named as the virtio-net interrupt: %r" % out[:600])
    print("    virtio-rx: %.1f%% of its off-CPU time in [waitq virtio-rx]" % share)


PP_RATE, PP_SECS = 10000, 10     # burn pingpong's switches a second; the record's window


def pp_stat(g):
    """burn pingpong stat: (handoffs, the kernel's clock in ns)."""
    out = g.cmd("burn pingpong stat", timeout=30)
    m = re.search(r"handoffs (\d+) at (\d+) ns", out)
    check(m, "burn pingpong stat: %r" % out)
    return int(m.group(1)), int(m.group(2))


@test
def t_pingpong_off_stream(g):
    # Two tasks switching 10,000 times a second on one CPU (burn
    # pingpong) for 10 s under `profile off` streamed to `sonde-prof
    # record --off`: every switch-in of the pair is an interval of the
    # profile, one the kernel dropped (counted), or one lost on the wire
    # (counted), so those add up to the switches the pair counted itself
    # over the stream's window; never more than it made in all.
    out = g.cmd("burn pingpong %d %d" % ((PP_SECS + 30) * 1000, PP_RATE), timeout=30)
    m = re.search(r"pids (\d+) (\d+)", out)
    check(m, "burn pingpong did not start: %r" % out)
    pair_pids = {int(m.group(1)), int(m.group(2))}
    tmp = tempfile.mkdtemp(prefix="pp-off-")
    raw, txt = os.path.join(tmp, "pp.raw"), os.path.join(tmp, "pp.txt")
    try:
        n0, t0 = pp_stat(g)
        r = subprocess.run([SONDE_PROF, "record", "--off", "-d", "%ds" % PP_SECS, "-e",
                            ARCHES[ARCH]["kernel"], "-r", raw, "-o", txt,
                            "%s:%d" % (HOST, g.ushell_port)],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
        n1, t1 = pp_stat(g)
        check(r.returncode == 0, "record --off: exit %d: %s" % (r.returncode, r.stderr))
        # The same, live: `top --off` (plain lines: stdout is no terminal)
        # shows the pair's wait as the heaviest reason.
        top = subprocess.run([SONDE_PROF, "top", "--off", "-n", "2", "-e", ARCHES[ARCH]["kernel"],
                              "%s:%d" % (HOST, g.ushell_port)],
                             capture_output=True, text=True, timeout=60, cwd=ROOT)
        last = top.stdout.rsplit("sonde-prof top", 1)[-1]
        check(top.returncode == 0 and re.search(r" us off-CPU in \d", last) and
              re.search(r"^ +\d+\.\d +\d+\.\d +\[waitq burn-pp\]$", last, re.M) and
              re.search(r"^ +0\.0 +\d+\.\d +burn_pingpong_wait$", last, re.M),
              "top --off: exit %d: %s%s" % (top.returncode, top.stdout[-1500:], top.stderr))
        with open(raw) as f:
            text = f.read()
        with open(txt) as f:
            rep = f.read()
        # And `record --wall` on one of the pair for 1 s: its samples
        # (times the tick's period) and its time off the CPU add up to the
        # window, in the folded output's microseconds.
        wall = os.path.join(tmp, "pp.folded")
        rw = subprocess.run([SONDE_PROF, "record", "--wall", "-d", "1s", "-p", str(min(pair_pids)),
                             "-e", ARCHES[ARCH]["kernel"], "-o", wall, "%s:%d" % (HOST, g.ushell_port)],
                            capture_output=True, text=True, timeout=60, cwd=ROOT)
        check(rw.returncode == 0, "record --wall: exit %d: %s" % (rw.returncode, rw.stderr))
        with open(wall) as f:
            lines = f.read().splitlines()
        wall_us = sum(int(x.rsplit(" ", 1)[1]) for x in lines)
        print("    record --wall -d 1s on pid %d: %d us in %d stacks"
              % (min(pair_pids), wall_us, len(lines)))
        cpu_us = sum(int(x.rsplit(" ", 1)[1]) for x in lines if not x.rsplit(" ", 1)[0].endswith("]"))
        print("    record --wall: %d us on the CPU" % cpu_us)
        check(abs(wall_us - 1000000) <= 50000, "wall: %d us, want 1 s within 5%%:\n%s"
              % (wall_us, "\n".join(lines[:10])))
        # The pair shares its CPU: each runs about half the time.
        check(0.2 <= cpu_us / wall_us <= 0.8, "wall: %d us of %d on the CPU, want 20-80%%"
              % (cpu_us, wall_us))
        check(any(x.startswith("burn-p") and "[waitq burn-pp] " in x for x in lines) and
              any("burn_pingpong_pass" in x and "[" not in x.rsplit(";", 1)[-1] for x in lines),
              "wall stacks lack the pair's wait or its time on the CPU:\n%s" % "\n".join(lines[:10]))
    finally:
        g.cmd("kill %d" % min(pair_pids), timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)
    h = re.match(r"# sonde raw build-id=[0-9a-f]{40} source=sched samples=\d+ dropped=(\d+) "
                 r"cpus=\d+ ms=(\d+) kind=offcpu\n", text)
    check(h, "raw header: %r" % text[:200])
    dropped, window_ms = int(h.group(1)), int(h.group(2))
    w = re.search(r"^streamed: (\d+) records lost on the wire \((\d+) datagrams\)", rep, re.M)
    check(w, "no streamed line in the report:\n%s" % rep[:400])
    lost = int(w.group(1))
    intervals = 0
    for line in text.splitlines()[1:]:
        c = re.match(r"^(\d+):\d+ (\d+) \S+ \d+ why=waitq:burn-pp waker=(\d+):burn-p[io]ng ", line)
        if c and int(c.group(2)) in pair_pids:
            check(int(c.group(3)) in pair_pids - {int(c.group(2))},
                  "a burn-pp wait not woken by the other of the pair: %r" % line)
            intervals += int(c.group(1))
    # The pair's pace over the span the two stats bracket, applied to the
    # stream's window: the switches the window held. A record lost on the
    # wire is half an interval (blocked or runnable): counted whole, it
    # can only overstate what is accounted for.
    rate = (n1 - n0) / ((t1 - t0) / 1e9)
    want = rate * window_ms / 1000
    got = intervals + dropped + lost
    print("    pair: %d switches at %.0f/s; window %d ms: %d intervals, %d dropped in the "
          "kernel, %d records lost on the wire (want %.0f)"
          % (n1 - n0, rate, window_ms, intervals, dropped, lost, want))
    check(window_ms == PP_SECS * 1000, "the stream covered %d ms, not %d" % (window_ms, PP_SECS * 1000))
    check(abs(got - want) <= want * 0.01,
          "%d intervals + %d dropped + %d lost, want %.0f within 1%%" % (intervals, dropped, lost, want))
    check(intervals + dropped <= n1 - n0 + 1,
          "%d intervals + %d dropped: more than the %d switches the pair made"
          % (intervals, dropped, n1 - n0))
    check("[waitq burn-pp] task" in rep and "woken by" in rep, "report:\n%s" % rep[:600])


@test
def t_netload_busy_and_stop(g):
    out = g.cmd("netload recv 9001 20000")
    pid = int(re.search(r"pid (\d+)", out).group(1))
    out2 = g.cmd("netload recv 9001 100")
    check(out2 == "netload: busy (pid %d)\n" % pid, "second run: %r" % out2)
    out3 = g.cmd("netload send 10.0.2.2 9 100")
    check(out3 == "netload: busy (pid %d)\n" % pid, "second run (send): %r" % out3)
    st = g.cmd("netload")
    check("running (pid %d)" % pid in st and "netload recv port 9001" in st, "state: %r" % st)
    t0 = time.monotonic()
    out4 = g.cmd("netload stop", timeout=10)
    check("stopped pid %d" % pid in out4 and time.monotonic() - t0 < 5, "stop: %r" % out4)
    # The port is free again: a new run binds it at once.
    start = g.mark()
    out5 = g.cmd("netload recv 9001 200")
    check("receiving on port 9001" in out5, "port not freed by stop: %r" % out5)
    netload_done(g, start, "recv", 10)
    check("last run (finished)" in g.cmd("netload"), "state after the run")


@test
def t_bench_netrx(g):
    """bench_netrx's datagrams go up the real stack to netload's count:
    every frame counted by the stack, taken in by the receive run, none
    dropped, and the two figures read."""
    out = g.cmd("netload recv 9001 20000")
    check("receiving on port 9001" in out, "netload recv: %r" % out)
    try:
        out = g.cmd("bench_netrx 9001 64", timeout=120)
        m = re.search(r"^netrx: (\d+) datagrams of 64 bytes to port 9001, (\d+) frames counted$",
                      out, re.M)
        check(m and m.group(1) == m.group(2) and int(m.group(1)) > 0, "bench_netrx: %r" % out)
        for state in ("off", "on"):
            check(re.search(r"^netrx %s: batch min \d+ .+ per 100 datagrams$" % state, out, re.M),
                  "no %s figure: %r" % (state, out))
        st = g.cmd("netload")
        got = re.search(r"datagrams (\d+) .* lost (\d+) .* foreign (\d+)", st)
        check(got and int(got.group(1)) + int(got.group(3)) >= int(m.group(1)),
              "netload took in fewer than the %s sent: %r" % (m.group(1), st))
    finally:
        g.cmd("netload stop", timeout=10)


@test
def t_netload_bad_args(g):
    cases = [
        ("netload send 10.0.2.2 9001 100 10", "size '10' out of range (18-1472 bytes)"),
        ("netload send 10.0.2.2 9001 100 9000", "size '9000' out of range (18-1472 bytes)"),
        ("netload send 10.0.2.2 9001 0", "ms '0' out of range (1-600000)"),
        ("netload recv 9001 0", "ms '0' out of range (1-600000)"),
        ("netload send 10.0.2 9001 100", "ip '10.0.2' is not a host address"),
        ("netload send 10.0.2.300 9001 100", "ip '10.0.2.300' is not a host address"),
        ("netload send 10.0.2.2 70000 100", "port '70000' out of range (1-65535)"),
        ("netload recv 0 100", "port '0' out of range (1-65535)"),
        ("netload send 10.0.2.2 9001 100 64 0", "pps '0' out of range"),
        ("netload frob", "usage"),
        ("netload recv 9000 100", "port 9000 is in use"),
        ("bench_netrx", "usage: bench_netrx PORT [size]"),
        ("bench_netrx 0", "port '0' out of range (1-65535)"),
        ("bench_netrx 9001 10", "size '10' out of range (18-1472 bytes)"),
        ("bench_netrx 9001 64 1", "usage: bench_netrx PORT [size]"),
    ]
    for line, want in cases:
        out = g.cmd(line)
        check(want in out, "%r: want %r, got %r" % (line, want, out))
    check("busy" not in g.cmd("netload"), "a refused command left a run behind")


# ---- profile stream (kernel/prof/stream.c, uapi/profile_stream.h) --------
# The collector is a Python receiver on a free loopback port: QEMU's user
# network delivers the guest's datagrams to 10.0.2.2:PORT there. It asks
# for the stream and keeps it alive over the UDP shell from that port, as
# a kernel heeds keep-alives only from the stream's destination. The
# datagrams are read with tests/system/pstream.py, a second reading of the
# format apart from the C parser.

STREAM_RX = re.compile(r"^profile: streaming id 0x([0-9a-f]{8}) to 10\.0\.2\.2:(\d+) "
                       r"\((\S.*), (\d+) cpus\)$", re.M)


def ctl_is(out, **want):
    """out's control line (PS.ctl) has every key of want with its value."""
    c = PS.ctl(out)
    return c is not None and all(c.get(k) == v for k, v in want.items())


def stream_start(g, rx, line, confirm=True):
    """line asked from rx's own port; confirmed with a keep-alive from
    there unless not confirm. (stream id, cpus), from the answer's
    control line; its text for people says the same."""
    out = rx.sh(line, g.ushell_port)
    c = PS.ctl(out)
    check(c and c["op"] == "start" and c["result"] == "ok" and "id" in c, "%r: %r" % (line, out))
    sid = int(c["id"], 16)
    m = STREAM_RX.search(PS.human(out))
    check(m and int(m.group(1), 16) == sid and int(m.group(4)) == int(c["cpus"]),
          "%r: the text says otherwise: %r" % (line, out))
    if confirm:
        ka = rx.sh("profile keepalive 0x%08x" % sid, g.ushell_port)
        check(ctl_is(ka, op="keepalive", result="ok", id="0x%08x" % sid), "first keep-alive: %r" % ka)
        check(PS.human(ka).strip() == "profile: stream 0x%08x kept alive" % sid,
              "first keep-alive's text: %r" % ka)
    return sid, int(c["cpus"])


def stream_checked(s, sid, reason):
    """The datagrams of stream sid: well formed, one stream, META at seq 0,
    no gap in seq nor in any CPU's first index, and an END of reason whose
    per-CPU totals are exactly what arrived."""
    check(not s["bad"], "malformed datagrams: %s" % s["bad"][:3])
    check(s["streams"] == {sid}, "stream ids %s, the shell said 0x%08x" % (
        sorted("0x%08x" % i for i in s["streams"]), sid))
    check(s["metas"] and s["metas"][0]["seq"] == 0, "the first datagram (seq 0) is not a META")
    check(s["seq_gaps"] == 0 and s["first_gaps"] == 0, "gaps: %d in seq, %d in first indices"
          % (s["seq_gaps"], s["first_gaps"]))
    check(len(s["ends"]) == 3 and len({e["seq"] for e in s["ends"]}) == 1,
          "%d END copies, seqs %s" % (len(s["ends"]), [e["seq"] for e in s["ends"]]))
    end = s["ends"][0]
    check(end["reason"] == reason, "END reason %d, want %d" % (end["reason"], reason))
    got = {c: (n, 0) for c, n in s["records"].items()}
    for b in s["batches"]:
        got[b["cpu"]] = (got[b["cpu"]][0], b["drops_total"])
    want = {c: v for c, v in end["cpus"].items() if v[0] or v[1]}
    check(want == {c: v for c, v in got.items() if v[0] or v[1]},
          "END totals %s, arrived %s" % (end["cpus"], got))
    return end


@test
def t_pstream_elapsed(g):
    """`profile stream PORT 2000 all` under burn: META first, the records
    the rate says, seq and first indices continuous, END ELAPSED whose
    totals are what arrived, and the META's build id the booted ELF's."""
    rx = PS.Receiver()
    try:
        g.cmd("burn 5000")
        sid, ncpus = stream_start(g, rx, "profile stream %d 2000 all" % rx.port)
        check(rx.wait_end(10), "no END within 10 s")
        st = rx.sh("profile status", g.ushell_port)
    finally:
        g.cmd("burn stop")
        rx.close()
    s = PS.summarize(rx.got)
    stream_checked(s, sid, PS.END_ELAPSED)
    meta = s["metas"][0]
    check(meta["build_id"] == P.elf_build_id(ARCHES[ARCH]["kernel"]), "META build id %s" % meta["build_id"])
    check(meta["ms"] == 2000 and meta["pid"] == 0xffffffff and meta["cpus"] == ncpus, "META %r" % meta)
    check(any(n == "burn" for n in meta["tasks"].values()), "META tasks lack burn: %r" % meta["tasks"])
    total = sum(s["records"].values())
    hz = 100 if s["ticks"] * 2 > total else 1e9 / meta["period_ns"]
    expect = 2.0 * hz * ncpus
    print("    %d records on %d cpus (%.0f expected at %d Hz), %d datagrams, %d METAs" % (
        total, len(s["records"]), expect, hz, len(rx.got), len(s["metas"])))
    # This guest runs in real time (no -icount: the network tests need
    # it), so a busy host delays its ticks and the tick's count has only
    # a floor here; the rate itself is checked under -icount by
    # stream_tests.py's one_kernel_10s (4000 within 5%). A counter's
    # overflows follow TCG's idea of cycles, far below 1 kHz on arm64's
    # emulated PMUv3, so only its ceiling is checked.
    low = 0.1 * expect if hz == 100 else 1
    check(low <= total <= 1.5 * expect, "%d records, %.0f to %.0f expected" % (total, low, 1.5 * expect))
    check(ctl_is(st, op="status", state="ended", last="0x%08x" % sid, reason="elapsed",
                 records=str(total)), "profile status: %r" % st)
    check(re.search(r"the last, 0x%08x, ended \(length reached\): %d records" % (sid, total), st),
          "profile status's text: %r" % st)
    other = g.sh("profile status")
    check(ctl_is(other, state="ended", reason="elapsed", records=str(total),
                 to="10.0.2.2:%d" % rx.port) and "last" not in PS.ctl(other)
          and "%08x" % sid not in other, "profile status from another port: %r" % other)
    net = g.cmd("net")
    check("profile stream: %d records in " % total in net, "net lacks the stream's line: %r" % net)


@test
def t_pstream_keepalive_timeout(g):
    """A stream until stopped that hears no keep-alive after the first
    ends by itself, END TIMEOUT, 5-7 s after it; then the profiler is
    free."""
    rx = PS.Receiver()
    try:
        sid, _ = stream_start(g, rx, "profile stream %d 0" % rx.port)
        t0 = time.monotonic()
        ended = rx.wait_end(12)
    finally:
        rx.close()
    check(ended, "no END within 12 s of a stream without keep-alives")
    check(4.5 <= ended - t0 <= 7.5, "ended %.1f s after the keep-alive, want 5-7" % (ended - t0))
    stream_checked(PS.summarize(rx.got), sid, PS.END_TIMEOUT)
    after = g.sh("profile 10")
    check(after.startswith("profiled 10 ms"), "profile after the stream: %r" % after)


@test
def t_pstream_keepalive_busy_stop(g):
    """Keep-alives every second keep a stream going past 7 s; meanwhile
    every other profile says busy and which stream; `profile stop` ends it
    with END STOPPED and a summary; a second stop says there is none."""
    rx = PS.Receiver()
    try:
        t0 = time.monotonic()
        sid, _ = stream_start(g, rx, "profile stream %d 0 all" % rx.port)
        busy = "profile: busy (streaming id 0x%08x to 10.0.2.2:%d)" % (sid, rx.port)
        anon = "profile: busy (streaming to 10.0.2.2:%d)" % rx.port
        for line, out, want in (("profile 100 from the destination", rx.sh("profile 100", g.ushell_port), busy),
                                ("udp profile 100", g.sh("profile 100"), anon),
                                ("serial profile 100", g.cmd("profile 100"), anon),
                                ("udp profile stream", g.sh("profile stream %d" % rx.port), anon)):
            check(PS.human(out).strip() == want, "%s: %r, want %r" % (line, out, want))
        out = g.sh("profile stream %d" % rx.port)
        check(ctl_is(out, op="start", result="busy", state="streaming") and "id" not in PS.ctl(out),
              "udp profile stream's control line: %r" % out)
        wrong = rx.sh("profile keepalive 0x%x" % (sid ^ 1), g.ushell_port)
        check(ctl_is(wrong, op="keepalive", result="other", id="0x%08x" % sid),
              "keepalive of a wrong id: %r" % wrong)
        check(PS.human(wrong).strip() == "profile: stream 0x%08x is not running (0x%08x is)"
              % (sid ^ 1, sid), "keepalive of a wrong id's text: %r" % wrong)
        while time.monotonic() - t0 < 7.5:
            out = rx.sh("profile keepalive 0x%08x" % sid, g.ushell_port)
            check(ctl_is(out, op="keepalive", result="ok", id="0x%08x" % sid), "keepalive: %r" % out)
            check(not rx.ended_at, "ended %.1f s in despite keep-alives" % ((rx.ended_at or t0) - t0))
            time.sleep(0.8)
        st = rx.sh("profile status", g.ushell_port)
        check(ctl_is(st, op="status", state="streaming", id="0x%08x" % sid, confirmed="1"),
              "status: %r" % st)
        check(PS.human(st).startswith("profile: streaming id 0x%08x" % sid), "status's text: %r" % st)
        other = g.sh("profile status")
        check(ctl_is(other, state="streaming", to="10.0.2.2:%d" % rx.port) and "%08x" % sid not in other,
              "status from another port: %r" % other)
        out = rx.sh("profile stop", g.ushell_port)
        check(ctl_is(out, op="stop", result="ok", state="ended", id="0x%08x" % sid, reason="stopped"),
              "stop: %r" % out)
        check(re.match(r"profile: stream 0x%08x to 10\.0\.2\.2:%d ended \(stopped\): \d+ records in "
                       r"\d+ datagrams, \d+ dropped, \d+ send failures$" % (sid, rx.port),
                       PS.human(out).strip()), "stop's text: %r" % out)
        check(rx.wait_end(3), "no END within 3 s of profile stop")
    finally:
        rx.close()
    stream_checked(PS.summarize(rx.got), sid, PS.END_STOPPED)
    again = g.sh("profile stop")
    check(ctl_is(again, op="stop", result="none", state="ended"), "second stop: %r" % again)
    ka = g.sh("profile keepalive 0x%08x" % sid)
    check(ctl_is(ka, op="keepalive", result="none"), "keepalive after the end: %r" % ka)


@test
def t_pstream_spoofed_keepalive(g):
    """Issue 26: keep-alives that name the right id but come from another
    port than the stream's destination are refused, the id unsaid, and
    keep nothing alive: the stream ends by timeout 5-7 s after the
    destination's last keep-alive, with END TIMEOUT; the status counts
    the refusals. (Before: any keep-alive with the id kept it going.)"""
    rx = PS.Receiver()
    try:
        sid, _ = stream_start(g, rx, "profile stream %d 0 all" % rx.port)
        t0 = time.monotonic()
        refused = 0
        while not rx.ended_at and time.monotonic() - t0 < 10:
            out = g.sh("profile keepalive 0x%08x" % sid)
            if ctl_is(out, result="none"):
                break               # over: the END is on its way
            check(ctl_is(out, op="keepalive", result="refused") and "id" not in PS.ctl(out),
                  "spoofed keep-alive: %r" % out)
            check(PS.human(out).strip() == "profile: keep-alive refused: a stream is kept alive only "
                  "from its destination, 10.0.2.2:%d" % rx.port, "spoofed keep-alive's text: %r" % out)
            refused += 1
            time.sleep(0.7)
        ended = rx.wait_end(3)
        st = rx.sh("profile status", g.ushell_port)
    finally:
        rx.close()
    check(ended, "the stream still ran %.1f s after its destination's keep-alive" % (time.monotonic() - t0))
    print("    ended %.1f s after the destination's keep-alive, %d spoofed ones refused" % (ended - t0, refused))
    check(4.5 <= ended - t0 <= 7.5, "ended %.1f s after the destination's keep-alive, want 5-7" % (ended - t0))
    check(refused >= 5, "only %d spoofed keep-alives were sent" % refused)
    stream_checked(PS.summarize(rx.got), sid, PS.END_TIMEOUT)
    check(ctl_is(st, state="ended", last="0x%08x" % sid, reason="timeout", karefused=str(refused)),
          "status: %r" % st)


@test
def t_pstream_spoofed_start(g):
    """Issue 26: a stream asked for from another port than its
    destination (what a spoofed source amounts to): the answer names no
    id; keep-alives from the asker, even with the id (learnt here from
    the victim's own status, as if it leaked), are refused; the victim's
    port receives at most one datagram (the META) in 8 s, and the stream
    ends, never confirmed, without an END. (Before: a stream every 50 ms,
    kept going for as long as the asker liked.)"""
    victim = PS.Receiver()
    try:
        out = g.sh("profile stream %d 0 all" % victim.port)
        check(ctl_is(out, op="start", result="ok", to="10.0.2.2:%d" % victim.port) and "0x" not in out,
              "a stream asked from elsewhere: %r" % out)
        check(PS.human(out).strip().startswith("profile: streaming to 10.0.2.2:%d (" % victim.port)
              and out.strip().endswith("once a keep-alive from there confirms it"),
              "a stream asked from elsewhere, its text: %r" % out)
        # The id, as only the destination is told it (a status asks; it
        # confirms nothing).
        st = victim.sh("profile status", g.ushell_port)
        check(ctl_is(st, state="streaming", confirmed="0") and "id" in PS.ctl(st),
              "status from the destination's port: %r" % st)
        sid = int(PS.ctl(st)["id"], 16)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 8:
            ka = g.sh("profile keepalive 0x%08x" % sid)
            check(ctl_is(ka, result="refused") or ctl_is(ka, result="none"),
                  "keep-alive from the asker: %r" % ka)
            time.sleep(0.9)
        n = len(victim.got)
        kinds = [h["type"] if isinstance(h, dict) else str(h) for _, h in victim.got]
    finally:
        victim.close()
    print("    the victim's port received %d datagram(s): %s" % (n, kinds))
    check(n <= 1, "the victim's port received %d datagrams: %s" % (n, kinds[:10]))
    check(kinds in ([], [PS.META]), "what reached the victim: %s" % kinds)
    st = g.sh("profile status")
    check(ctl_is(st, state="ended", reason="unconfirmed"), "status after: %r" % st)
    after = g.sh("profile 10")
    check(after.startswith("profiled 10 ms"), "profile after the stream: %r" % after)


PSTREAM_BAD = [
    ("profile stream", "profile: stream needs a port (usage: profile [off|wall|allocs|lock] stream <port> "
                       "[ms|0] [pid|all])"),
    ("profile stream 0", "profile: port 0 out of range (1-65535)"),
    ("profile stream 65536", "profile: port 65536 out of range (1-65535)"),
    ("profile stream abc", "profile: 'abc' is not a port (1-65535)"),
    ("profile stream 5555 86400001", "profile: stream length 86400001 out of range "
                                     "(0: until stopped, or 1-86400000 ms)"),
    ("profile stream 5555 -1", "profile: '-1' is not a stream length (0: until stopped, or 1-86400000 ms)"),
    ("profile stream 5555 100 99999", "profile: pid 99999: no such task"),
    ("profile stream 5555 100 xyz", "profile: 'xyz' is not a pid or all"),
    ("profile stream 5555 100 all 3", "profile: too many arguments (usage: profile [off|wall|allocs|lock] "
                                      "stream <port> [ms|0] [pid|all])"),
    ("profile stop now", "profile: stop takes no arguments"),
    ("profile keepalive", "profile: usage: profile keepalive <id>"),
    ("profile keepalive zz", "profile: 'zz' is not a stream id (0x00000001-0xffffffff)"),
    ("profile stream 5555 100 all", "profile: stream goes to the UDP shell client that asks; "
                                    "use it over the UDP shell"),
]


@test
def t_pstream_bad_args_and_serial(g):
    """Every bad argument named with its range, and from the serial
    console a stream is refused with the reason; nothing is left running."""
    for line, want in PSTREAM_BAD:
        out = g.cmd(line)
        res = "failed" if line == PSTREAM_BAD[-1][0] else "invalid"
        check(ctl_is(out, result=res) and PS.human(out).strip() == want,
              "%r: got %r, want result=%s and %r" % (line, out, res, want))
    for line, want in PSTREAM_BAD[:-1]:
        out = g.sh(line)
        check(ctl_is(out, result="invalid") and PS.human(out).strip() == want,
              "over UDP %r: got %r, want %r" % (line, out, want))
    check(ctl_is(g.cmd("profile stop"), result="none"), "a refused stream ran")


@test
def t_bench_stream_needs_a_key(g):
    """`bench stream` starts its stream confirmed (its client cannot send
    a keep-alive while the shell runs it), so an open shell refuses it,
    saying why, and nothing streams."""
    out = g.sh("bench stream 9")
    check("bench: stream needs the authenticated shell (boot with ushkey=" in out,
          "open shell ran bench stream: %r" % out[-300:])
    check(ctl_is(g.cmd("profile stop"), result="none"), "a refused stream ran")


# Tests that boot machines of their own (not the shared guest).
SOLO = []


def solo(fn):
    SOLO.append((fn.__name__[2:], fn))
    return fn


@solo
def t_boot_bad_params(_g):
    with Guest(free_port(), free_port(),
               append="ip=10.0.2.300 mask=255.0.255.0 gw=10.9.9.9 udpshell=70000") as g:
        g.boot(90)
        text = g.text()
    for want in ("net: ip='10.0.2.300' is not a host address (a.b.c.d): using 10.0.2.15",
                 "net: mask='255.0.255.0' is not a netmask",
                 "net: gw=10.9.9.9 is not on 10.0.2.15/255.255.255.0: no gateway",
                 "net: udpshell='70000' is not a port (1-65535): UDP shell not started",
                 "net: mac 52:54:00:12:34:56 ip 10.0.2.15 mask 255.255.255.0 gw none"):
        check(want in text, "boot output lacks %r:\n%s" % (want, text))
    check("UDP shell on port" not in text, "UDP shell started with a bad port")


@solo
def t_boot_no_nic(_g):
    with Guest(0, 0, nic=False) as g:
        g.boot(90)
        text = g.text()
        out = g.cmd("net")
        out2 = g.cmd("netload recv 9001 100")
    check(text.count("net: no usable network device") == 1, "boot: %r" % text)
    check(out == "net: no network device\n", "net: %r" % out)
    check("no network device" in out2, "netload without a device: %r" % out2)


def folded_by_kernel(path):
    """A `record --per-kernel` .folded file: {kernel: [(frames, count)]},
    frames root first without the kernel's own root frame."""
    by = {}
    with open(path) as f:
        for line in f:
            stack, n = line.rstrip("\n").rsplit(" ", 1)
            frames = stack.split(";")
            by.setdefault(frames[0], []).append((frames[1:], int(n)))
    return by


def hottest(stacks, n=3):
    """The n leaf functions with the most samples: [(name, share)]."""
    total = sum(c for _, c in stacks) or 1
    leaves = {}
    for frames, c in stacks:
        leaves[frames[-1]] = leaves.get(frames[-1], 0) + c
    top = sorted(leaves.items(), key=lambda kv_: -kv_[1])[:n]
    return [(name, 100.0 * c / total) for name, c in top]


@solo
def t_pair_netload_profiled(_g):
    """Two kernels on one wire (tests/system/pair.py): B receives what A
    sends, and one sonde-prof record profiles both over the same window."""
    tmp = tempfile.mkdtemp(prefix="sonde-pair.")
    out = os.path.join(tmp, "pair.folded")
    # B under icount: the receive path in proportion to its work (pair.ICOUNT_B).
    p = pair.Pair(arch=ARCH, smp=2, lifetime=120.0, icount_b=pair.ICOUNT_B)
    try:
        p.boot(90)
        # 1472-byte datagrams: a full frame, the most receive work a
        # datagram makes (the checksum of the payload).
        sent_line, got_line, _ = pair.load_and_profile(p, out, 2000, 1472, ["--per-kernel"])
        by = folded_by_kernel(out)
    finally:
        counters = p.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print("    A: %s\n    B: %s" % (sent_line, got_line))
    sent, got = kv(sent_line, "datagrams"), kv(got_line, "datagrams")
    check(0 < got <= sent, "B counted %d datagrams of the %d A sent" % (got, sent))
    check(kv(sent_line, "errors") == 0, "A: %s" % sent_line)
    check(kv(got_line, "foreign") == 0 and kv(got_line, "dup") == 0, "B: %s" % got_line)
    check(kv(sent_line, "run") == kv(got_line, "run"), "B locked onto another run than A's")
    ka, kb = p.target("a"), p.target("b")
    check(set(by) == {ka, kb}, "kernels in the profile: %s, want %s and %s" % (sorted(by), ka, kb))
    total = sum(c for k in by for _, c in by[k])
    for k, name in ((ka, "A"), (kb, "B")):
        n = sum(c for _, c in by[k])
        print("    %s %s: %d samples (%.0f%%), hottest %s" % (
            name, k, n, 100.0 * n / total,
            ", ".join("%s %.1f%%" % h for h in hottest(by[k]))))
    send = [c for f, c in by[ka] if "nl_send_task" in f and "udp_send" in f]
    check(send, "A's profile has no nl_send_task -> udp_send chain:\n%s" % by[ka])
    rx = [c for f, c in by[kb] if any(x in fr for fr in f for x in NET_RX_FUNCS)]
    # At least 10 of B's ~400 tick samples: 54-97 measured on x86 in six
    # runs (arm64's counter takes ~10 times the samples: 297-690).
    check(sum(rx) >= 10, "B's profile has %d samples with a receive-path frame (%s), want 10:\n%s"
          % (sum(rx), ", ".join(NET_RX_FUNCS), by[kb]))
    print("    A's send path %d samples, B's receive path %d" % (sum(send), sum(rx)))
    # The switch kept the load off slirp's port: slirp saw the UDP-shell
    # traffic and broadcasts, a few dozen frames, not the load.
    m = re.search(r"^switch: port 2 \S+ rx \d+ tx (\d+)", counters, re.M)
    check(m and int(m.group(1)) < 1000, "slirp's port was sent %s frames: %r" % (
        m and m.group(1), counters))


@solo
def t_pair_spoofed_request_no_pingpong(_g):
    """Two open shells on one wire (tests/system/pair.py, with a raw switch
    port): one request forged from A's shell port to B's. B answers it, to
    A's shell port, flagged as a reply; A drops it (counted as `replies`)
    and the exchange ends there. Before every reply carried the flag, A
    ran B's answer as a command and the two shells answered each other
    for as long as they ran."""
    p = pair.Pair(arch=ARCH, smp=2, lifetime=120.0, raw=True)
    try:
        p.boot(90)
        b_mac = bytes(int(x, 16) for x in pair.MAC["b"].split(":"))
        a0, b0 = pair.sh(p, "a", "net"), pair.sh(p, "b", "net")
        p.send_raw(udp_frame(b_mac, Wire.MAC, pair.IP["a"], pair.IP["b"], 9000, 9000,
                             request(0x5350, "unknown")))
        time.sleep(3.0)
        a1, b1 = pair.sh(p, "a", "net"), pair.sh(p, "b", "net")
        time.sleep(2.0)
        a2 = pair.sh(p, "a", "net")
    finally:
        p.close()
    req = lambda t: net_counter(t, "requests")
    rep = lambda t: net_counter(t, ", replies")
    print("    A: requests %d -> %d -> %d; B: requests %d -> %d"
          % (req(a0), req(a1), req(a2), req(b0), req(b1)))
    # Each `net` counts itself as a request.
    check(req(b1) == req(b0) + 2, "B ran %d requests, want the forged one and `net`"
          % (req(b1) - req(b0)))
    check(req(a1) == req(a0) + 1 and req(a2) == req(a1) + 1, "A ran %d requests, then %d "
          "more, want 1 (`net`) each time: the shells answer each other"
          % (req(a1) - req(a0), req(a2) - req(a1)))
    check(rep(a1) == rep(a0) + 1 and rep(a2) == rep(a1), "A dropped %d replies, then %d more, "
          "want 1 then 0" % (rep(a1) - rep(a0), rep(a2) - rep(a1)))


@test
def t_ushell_open_says_so(g):
    """Without ushkey= the boot says, once, that anyone can use the shell."""
    text = g.text()
    check(text.count("UDP shell on port 9000 with no authentication: open to anyone who can "
                     "reach it") == 1, "boot does not warn once of the open shell:\n%s"
          % g.tail())


# ---- the authenticated mode (ushkey=) ---------------------------------------
#
# One guest booted with a key serves these tests (booted by the first that
# needs it, closed with the rest in main). The key is fresh per run, in a
# private file that goes away at exit.

AUTH = {}


def auth_key_file(hexkey):
    path = os.path.join("/tmp", "sonde-ushkey-%d-%d" % (os.getpid(), len(AUTH)))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, (hexkey + "\n").encode())
    os.close(fd)
    atexit.register(lambda: os.path.exists(path) and os.unlink(path))
    return path


def auth_key():
    """The run's key (made once), its file and a wrong key's file."""
    if "key" not in AUTH:
        key = bytes(random.getrandbits(8) for _ in range(32))
        AUTH["key"] = key
        AUTH["file"] = auth_key_file(key.hex())
        AUTH["wrong"] = auth_key_file(bytes(b ^ 0x80 for b in key).hex())
    return AUTH["key"]


def auth_boot(smp=4):
    """A new kernel booted with the run's key."""
    g = Guest(free_port(), free_port(), append="udpshell=9000 ushkey=" + auth_key().hex(),
              smp=smp)
    g.boot(90)
    return g


def auth_guest():
    g = AUTH.get("g")
    if g is None or not g.alive():
        AUTH["g"] = g = auth_boot()
    return g


def sh_k(g, line, keyfile, timeout=10):
    """sonde-sh with -k keyfile (or none): (exit status, stdout, stderr)."""
    argv = [SONDE_SH, "-p", str(g.ushell_port), "-t", str(timeout)]
    if keyfile:
        argv += ["-k", keyfile]
    r = subprocess.run(argv + [HOST, line], capture_output=True, timeout=60)
    return r.returncode, r.stdout.decode("latin-1"), r.stderr.decode("latin-1")


def auth_net(g):
    rc, out, err = sh_k(g, "net", AUTH["file"])
    check(rc == 0, "sonde-sh -k net: exit %d: %s" % (rc, err))
    return out


AUTH_HDR = ">IIHHHHQQ"               # header, nonce, epoch (docs/udpshell.md)
AUTH_OFF = 32                        # the payload's offset


def auth_request(key, seq, nonce, epoch, line, flags=3):
    body = struct.pack(AUTH_HDR, MAGIC, seq, 0, flags, len(line), 0, nonce, epoch) + line.encode()
    return body + hmac.new(key, body, hashlib.sha256).digest()


def auth_challenge(sock, g, timeout=10.0):
    """Ask g for its boot epoch: (epoch, the highest nonce it has accepted),
    after checking the answer's tag, flags, nonce and size."""
    key, nonce = AUTH["key"], time.time_ns()
    chal = auth_request(key, random.randrange(1 << 32), nonce, 0, "\0" * 8, flags=0xb)
    deadline = time.monotonic() + timeout
    while True:
        sock.sendto(chal, (HOST, g.ushell_port))
        sock.settimeout(1.0)
        try:
            d, _ = sock.recvfrom(65536)
        except socket.timeout:
            check(time.monotonic() < deadline, "no answer to the challenge in %.0f s" % timeout)
            continue
        magic, _, _, flags, n, _, rnonce, epoch = struct.unpack(AUTH_HDR, d[:AUTH_OFF])
        check(len(d) == len(chal) and flags == 0xf and n == 8 and rnonce == nonce,
              "challenge answer %r" % d[:AUTH_OFF])
        check(hmac.compare_digest(hmac.new(key, d[:-32], hashlib.sha256).digest(), d[-32:]),
              "the challenge's answer does not verify")
        return epoch, struct.unpack(">Q", d[AUTH_OFF:AUTH_OFF + 8])[0]


def auth_exchange(sock, g, dgram, timeout=10.0):
    """raw_exchange for one tagged request: every reply chunk's tag, reply
    flag, nonce and epoch checked; returns the payload."""
    key, nonce, epoch = AUTH["key"], dgram[16:24], dgram[24:32]
    sock.sendto(dgram, (HOST, g.ushell_port))
    got, last, sends = {}, None, 1
    deadline = time.monotonic() + timeout
    while last is None or len(got) < last + 1:
        left = deadline - time.monotonic()
        check(left > 0, "no complete tagged reply in %.0f s (%d sends)" % (timeout, sends))
        sock.settimeout(min(left, 1.0))
        try:
            d, _ = sock.recvfrom(65536)
        except socket.timeout:
            if sends < 3:
                sock.sendto(dgram, (HOST, g.ushell_port))
                sends += 1
            continue
        magic, seq, chunk, flags, n, res = struct.unpack(">IIHHHH", d[:16])
        check(magic == MAGIC and flags & 6 == 6 and len(d) == 64 + n, "reply %r" % d[:32])
        check(hmac.compare_digest(hmac.new(key, d[:-32], hashlib.sha256).digest(), d[-32:]),
              "reply tag does not verify")
        check(d[16:24] == nonce and d[24:32] == epoch, "reply bound to another nonce or epoch")
        got[chunk] = d[AUTH_OFF:AUTH_OFF + n]
        if flags & 1:
            last = chunk
    return b"".join(got[i] for i in range(last + 1)).decode("latin-1")


class Relay:
    """A UDP relay between a client on this host and a guest's shell port,
    as anyone on the path could run one: it keeps every datagram the
    client sends (the captured requests), and forge(reply) may return
    datagrams to hand the client before each of the shell's replies."""

    def __init__(self, shell_port, forge=None, drop=None, before=None):
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind((HOST, 0))
        self.port = self.front.getsockname()[1]
        self.back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.back.bind((HOST, 0))
        self.back.connect((HOST, shell_port))
        self.forge, self.client, self.sent, self.forged = forge, None, [], 0
        # drop(reply): keep it from the client; before(n, dgram): runs
        # before the client's n-th datagram (from 1) goes to the shell.
        self.drop, self.before, self.dropped = drop, before, 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        import select
        while not self.stop:
            ready, _, _ = select.select([self.front, self.back], [], [], 0.1)
            for sk in ready:
                try:
                    d, addr = sk.recvfrom(65536)
                except OSError:
                    continue                  # the guest's port refused: nothing to relay
                if sk is self.front:
                    self.client = addr
                    self.sent.append(d)
                    if self.before:
                        self.before(len(self.sent), d)
                    self.back.send(d)
                elif self.drop and self.drop(d):
                    self.dropped += 1
                elif self.client:
                    for f in (self.forge(d) if self.forge else []):
                        self.front.sendto(f, self.client)
                        self.forged += 1
                    self.front.sendto(d, self.client)

    def requests(self):
        """What the client sent, challenges left out (flags bit 3)."""
        return [d for d in self.sent if len(d) >= 16 and not struct.unpack(">H", d[10:12])[0] & 8]

    def close(self):
        self.stop = True
        self.thread.join(2)
        self.front.close()
        self.back.close()


def capture_k(g, line):
    """`sonde-sh -k line` through a Relay: its output and the request it
    sent (the last datagram that was not a challenge), as an eavesdropper
    on the wire would capture it."""
    r = Relay(g.ushell_port)
    try:
        argv = [SONDE_SH, "-p", str(r.port), "-t", "10", "-k", AUTH["file"], HOST, line]
        p = subprocess.run(argv, capture_output=True, timeout=60)
    finally:
        r.close()
    check(p.returncode == 0, "sonde-sh -k %r through the relay: exit %d: %s" % (
        line, p.returncode, p.stderr.decode(errors="replace")))
    reqs = r.requests()
    check(reqs, "the relay saw no request")
    return p.stdout.decode("latin-1"), reqs[-1]


def replay(g, dgram, ports):
    """dgram sent once from each of `ports` new sockets; how many got
    anything back within 2 s."""
    socks = []
    try:
        for _ in range(ports):
            sk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sk.bind((HOST, 0))
            socks.append(sk)
            sk.sendto(dgram, (HOST, g.ushell_port))
        time.sleep(2.0)
        answered = 0
        for sk in socks:
            sk.setblocking(False)
            try:
                sk.recv(65536)
                answered += 1
            except (BlockingIOError, ConnectionRefusedError):
                pass
        return answered
    finally:
        for sk in socks:
            sk.close()


def replay_ran(g, dgram, ports):
    """Replay dgram from `ports` new ports at g; (requests it ran, sockets
    answered), read from `net` before and after (each `net` counts
    itself)."""
    n0 = auth_net(g)
    answered = replay(g, dgram, ports)
    n1 = auth_net(g)
    return net_counter(n1, "requests") - net_counter(n0, "requests") - 1, answered, n0, n1


def silent(sock, seconds):
    """True if nothing arrives on sock for seconds."""
    sock.settimeout(seconds)
    try:
        sock.recvfrom(65536)
        return False
    except socket.timeout:
        return True


@solo
def t_ushkey_works_and_is_never_shown(_g):
    g = auth_guest()
    text = g.text()
    hexkey = AUTH["key"].hex()
    check("UDP shell on port 9000, authenticated (HMAC-SHA256, ushkey=)" in text,
          "boot does not say the shell is authenticated:\n%s" % g.tail())
    check("open to anyone" not in text, "authenticated shell called open")
    rc, out, err = sh_k(g, "version", AUTH["file"])
    check(rc == 0 and out == g.cmd("version"), "sonde-sh -k version: exit %d %r %s"
          % (rc, out, err))
    seen = g.text() + out + auth_net(g)
    check(hexkey not in seen.lower() and hexkey[:16] not in seen.lower(),
          "the key appears in the kernel's output")


@solo
def t_ushkey_without_k_gets_no_answer(_g):
    g = auth_guest()
    before = net_counter(auth_net(g), "unauthenticated")
    rc, out, err = sh_k(g, "version", None, timeout=2)
    check(rc == 2 and out == "" and "timeout" in err, "without -k: exit %d %r %r"
          % (rc, out, err))
    sends = int(re.search(r"sent (\d+) times", err).group(1))
    after = net_counter(auth_net(g), "unauthenticated")
    check(after == before + sends, "unauthenticated %d -> %d for %d sends" % (before, after, sends))


@solo
def t_ushkey_sonde_prof_record(_g):
    """sonde-prof record -k profiles a keyed kernel; without -k it gets no
    answer (exit 2) and leaves no output file."""
    g = auth_guest()
    out = os.path.join(tempfile.mkdtemp(prefix="sonde-k-"), "p.folded")
    try:
        base = [SONDE_PROF, "record", "-d", "200", "-t", "5", "-e", ARCHES[ARCH]["kernel"], "-o", out]
        r = subprocess.run(base + ["-k", AUTH["file"], "%s:%d" % (HOST, g.ushell_port)],
                           capture_output=True, timeout=60)
        check(r.returncode == 0, "sonde-prof record -k: exit %d: %s" % (
            r.returncode, r.stderr.decode(errors="replace")))
        with open(out) as f:
            lines = [l for l in f.read().splitlines() if l]
        check(lines and all(re.match(r"^\S.* \d+$", l) for l in lines),
              "folded output %r" % lines[:3])
        os.unlink(out)
        r = subprocess.run(base + ["%s:%d" % (HOST, g.ushell_port)], capture_output=True, timeout=60)
        check(r.returncode == 2 and b"timeout" in r.stderr, "without -k: exit %d: %s" % (
            r.returncode, r.stderr.decode(errors="replace")))
        check(not os.path.exists(out), "a refused record left %s behind" % out)
    finally:
        shutil.rmtree(os.path.dirname(out), ignore_errors=True)


@solo
def t_ushkey_wrong_key_refused(_g):
    g = auth_guest()
    before = net_counter(auth_net(g), "bad tag")
    rc, out, err = sh_k(g, "version", AUTH["wrong"], timeout=2)
    check(rc == 2 and out == "" and "timeout" in err, "wrong key: exit %d %r %r" % (rc, out, err))
    check(net_counter(auth_net(g), "bad tag") > before, "wrong key not counted as bad tag")


@solo
def t_ushkey_replay_not_run_twice(_g):
    """A captured request sent again: from the kept reply at once (its
    retransmit), refused once its client moved on; `burn` pids show what
    ran."""
    g = auth_guest()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((HOST, 0))
    try:
        epoch, highest = auth_challenge(s, g)
        key, seq, nonce = AUTH["key"], random.randrange(1 << 31), max(time.time_ns(), highest + 1)
        r1 = auth_request(key, seq, nonce, epoch, "burn 1 0")
        a = auth_exchange(s, g, r1)
        b = auth_exchange(s, g, r1)
        check(a == b, "retransmit ran again: %r vs %r" % (a, b))
        c = auth_exchange(s, g, auth_request(key, seq + 1, nonce + 1, epoch, "burn 1 0"))
        check(P.burn_pids(c)[0] > P.burn_pids(a)[0], "a fresh nonce did not run the command")
        n0 = auth_net(g)
        s.sendto(r1, (HOST, g.ushell_port))
        check(silent(s, 2.0), "a replayed request was answered")
        n1 = auth_net(g)
        check(net_counter(n1, ", replayed") == net_counter(n0, ", replayed") + 1,
              "replay not counted: %r" % n1)
    finally:
        s.close()


@solo
def t_ushkey_replay_from_20_new_ports(_g):
    """A request captured from sonde-sh -k, sent again byte for byte from
    20 new source ports: it runs 0 more times, nobody gets an answer, and
    each is counted as replayed. (Freshness was per sender: it ran 8 more
    times, every reply to the replayer's port.)"""
    g = auth_guest()
    out, req = capture_k(g, "version")
    check(out.startswith("Sonde"), "sonde-sh -k version: %r" % out)
    ran, answered, n0, n1 = replay_ran(g, req, 20)
    print("    replayed from 20 new ports: ran %d more times, %d answered" % (ran, answered))
    check(ran == 0 and answered == 0, "the captured request ran %d more times, %d replays "
          "answered" % (ran, answered))
    check(net_counter(n1, ", replayed") - net_counter(n0, ", replayed") == 20,
          "replays not counted: %r -> %r" % (n0, n1))


@solo
def t_ushkey_replay_after_reboot(_g):
    """A request captured before a reboot, sent again after it (same key):
    refused as tagged for another boot's epoch, never run. (The window
    lived in memory only: it ran again after every reboot.)"""
    g = auth_guest()
    _, req = capture_k(g, "version")
    g.close()
    g = auth_guest()                     # the same key, a new boot
    ran, answered, n0, n1 = replay_ran(g, req, 3)
    print("    after a reboot: ran %d times, %d answered" % (ran, answered))
    check(ran == 0 and answered == 0, "a request from the previous boot ran %d times" % ran)
    check(net_counter(n1, "wrong epoch") - net_counter(n0, "wrong epoch") == 3,
          "not counted as another epoch's: %r" % n1)


@solo
def t_ushkey_replay_on_another_kernel(_g):
    """A request captured on kernel A, sent to kernel B booted with the same
    key (one key for a fleet, as sonde-prof -k uses it): refused as another
    kernel's epoch, never run."""
    a = auth_guest()
    _, req = capture_k(a, "version")
    with auth_boot(smp=2) as b:
        ran, answered, n0, n1 = replay_ran(b, req, 3)
        print("    on another kernel: ran %d times, %d answered" % (ran, answered))
        check(ran == 0 and answered == 0, "kernel A's request ran %d times on B" % ran)
        check(net_counter(n1, "wrong epoch") - net_counter(n0, "wrong epoch") == 3,
              "not counted as another epoch's: %r" % n1)
        # B still answers its key: the refusal is the epoch, not the key.
        out, _ = capture_k(b, "version")
        check(out.startswith("Sonde"), "B does not answer sonde-sh -k: %r" % out)


@solo
def t_ushid_kernels_sharing_a_key_are_not_interchangeable(_g):
    """Two kernels booted with the same key and ushid=alpha / ushid=beta.
    A request tagged for alpha (captured on its way to alpha) is refused by
    beta, counted as a bad tag, and never runs; a client told alpha, whose
    datagrams an attacker redirects to beta, gets no answer it believes;
    beta's own answer to a beta client's challenge, handed to an alpha
    client, is ignored and counted. (Without ids only the epoch told them
    apart, and the client took whichever epoch answered.)"""
    key = auth_key().hex()

    def boot(name):
        g = Guest(free_port(), free_port(), smp=1,
                  append="udpshell=9000 ushkey=%s ushid=%s" % (key, name))
        g.boot(90)
        return g

    def sh_id(port, name, line, timeout=10):
        argv = [SONDE_SH, "-p", str(port), "-t", str(timeout), "-k", AUTH["file"], "-i", name,
                HOST, line]
        r = subprocess.run(argv, capture_output=True, timeout=60)
        return r.returncode, r.stdout.decode("latin-1"), r.stderr.decode("latin-1")

    def net_of(g, name):
        rc, out, err = sh_id(g.ushell_port, name, "net")
        check(rc == 0, "sonde-sh -i %s net: exit %d: %s" % (name, rc, err))
        return out

    with boot("alpha") as a, boot("beta") as b:
        check("authenticated (HMAC-SHA256, ushkey=, ushid=alpha)" in a.text(),
              "alpha's boot line does not name its id:\n%s" % a.text())
        # Alpha's request, as captured on the wire.
        r = Relay(a.ushell_port)
        try:
            rc, out, err = sh_id(r.port, "alpha", "version")
        finally:
            r.close()
        check(rc == 0 and out.startswith("Sonde"), "alpha with -i alpha: exit %d %r %s"
              % (rc, out, err))
        n0 = net_of(b, "beta")
        check("kernel id beta" in n0, "beta's net does not name its id: %r" % n0)
        # The captured request replayed to beta: refused as a bad tag.
        answered = replay(b, r.requests()[-1], 3)
        # A client of alpha redirected to beta: nothing it believes.
        red = Relay(b.ushell_port)
        try:
            rc, out, err = sh_id(red.port, "alpha", "version", timeout=3)
        finally:
            red.close()
        n1 = net_of(b, "beta")
        refused = net_counter(n1, "bad tag") - net_counter(n0, "bad tag")
        ran = net_counter(n1, "requests") - net_counter(n0, "requests") - 1
        print("    alpha's request at beta: ran %d, answered %d; redirected client: exit %d; "
              "beta counted %d bad tags" % (ran, answered, rc, refused))
        check(ran == 0 and answered == 0, "alpha's request ran %d times on beta" % ran)
        check(rc == 2 and out == "" and "timeout" in err,
              "a client of alpha took beta's word: exit %d %r %s" % (rc, out, err))
        check(len(red.sent) >= 2 and refused == 3 + len(red.sent),
              "beta counted %d bad tags for 3 replays and the redirected client's %d "
              "challenges" % (refused, len(red.sent)))
        # Beta's answer to a beta client's challenge (captured), handed to
        # a client of alpha before alpha's own: ignored, counted.
        cap = Relay(b.ushell_port)
        try:
            rc, out, err = sh_id(cap.port, "beta", "version")
        finally:
            cap.close()
        check(rc == 0, "beta with -i beta: exit %d %s" % (rc, err))
        chal_b = cap.sent[0]
        sk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sk.bind((HOST, 0))
            sk.settimeout(3)
            sk.sendto(chal_b, (HOST, b.ushell_port))
            beta_answer, _ = sk.recvfrom(2048)
        finally:
            sk.close()
        check(len(beta_answer) == 72, "beta's answer is %d bytes" % len(beta_answer))
        handed = Relay(a.ushell_port, lambda d: [beta_answer])
        try:
            rc, out, err = sh_id(handed.port, "alpha", "version")
        finally:
            handed.close()
        m = re.search(r"ignored (\d+) datagrams", err)
        print("    beta's answer handed to an alpha client %d times; it said: %s"
              % (handed.forged, err.strip()))
        check(rc == 0 and out.startswith("Sonde") and m and int(m.group(1)) == handed.forged,
              "alpha client given beta's answer: exit %d %r %s" % (rc, out, err))
        # sonde-prof: one key, one id per kernel, in order; a one-reply
        # window and a stream. The ids swapped: neither kernel answers.
        tmp = tempfile.mkdtemp(prefix="sonde-id-")
        try:
            hosts = ["%s:%d" % (HOST, a.ushell_port), "%s:%d" % (HOST, b.ushell_port)]
            for d, ids in (("200", ["alpha", "beta"]), ("2500", ["alpha", "beta"]),
                           ("200", ["beta", "alpha"])):
                out = os.path.join(tmp, "p%s%s.folded" % (d, ids[0]))
                argv = [SONDE_PROF, "record", "-d", d, "-t", "3", "-e",
                        ARCHES[ARCH]["kernel"], "-o", out, "-k", AUTH["file"],
                        "--id", ids[0], "--id", ids[1]] + hosts
                r = subprocess.run(argv, capture_output=True, timeout=60)
                err = r.stderr.decode(errors="replace")
                print("    sonde-prof record -d %s --id %s --id %s: exit %d"
                      % (d, ids[0], ids[1], r.returncode))
                if ids[0] == "alpha":
                    check(r.returncode == 0 and os.path.getsize(out) > 0,
                          "sonde-prof with the right ids: exit %d: %s" % (r.returncode, err))
                else:
                    check(r.returncode == 2 and "timeout" in err and not os.path.exists(out),
                          "sonde-prof with the ids swapped: exit %d: %s" % (r.returncode, err))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


@solo
def t_ushid_bad_value_keeps_shell_stopped(_g):
    """A bad ushid= is refused at boot naming the allowed form, and the
    shell does not start, as for a bad key."""
    app = "udpshell=9000 ushkey=%s ushid=no/such:id" % auth_key().hex()
    with Guest(free_port(), free_port(), append=app, smp=1) as g:
        g.boot(90)
        text = g.text()
    check("boot: ushid='no/such:id' (10 characters) must be 1-31 characters, each a letter, "
          "a digit, '.', '_' or '-'" in text, "no message naming the rule:\n%s" % text)
    check("net: UDP shell not started: ushid= is not usable" in text and
          "UDP shell on port" not in text, "a bad id started the shell:\n%s" % text)


@solo
def t_ushkey_client_ignores_forged_datagrams(_g):
    """Someone on the path hands sonde-sh -k, before each of the shell's
    replies, that reply with one changed byte, an untagged copy of it and
    a datagram of garbage: sonde-sh ignores them, counts them, and prints
    the real reply (exit 0). (One such datagram used to abort the
    command with a protocol error.)"""
    g = auth_guest()

    def forge(d):
        if len(d) < 16 or struct.unpack(">H", d[10:12])[0] & 8:
            return []                    # the challenge's answer goes through untouched
        seq = d[4:8]
        changed = bytearray(d)
        changed[-40] ^= 1
        untagged = struct.pack(">I", MAGIC) + seq + struct.pack(">HHHH", 0, 5, 6, 0) + b"forged"
        return [bytes(changed), untagged, b"\x00" * 23]

    r = Relay(g.ushell_port, forge)
    try:
        argv = [SONDE_SH, "-p", str(r.port), "-t", "10", "-k", AUTH["file"], HOST, "lines 300"]
        p = subprocess.run(argv, capture_output=True, timeout=60)
    finally:
        r.close()
    err = p.stderr.decode(errors="replace")
    want = "".join("line %d\n" % i for i in range(1, 301))
    print("    %d forged datagrams sent to the client; it said: %s" % (r.forged, err.strip()))
    check(p.returncode == 0 and p.stdout.decode() == want, "sonde-sh -k through forgeries: "
          "exit %d, %d bytes of output: %s" % (p.returncode, len(p.stdout), err))
    m = re.search(r"ignored (\d+) datagrams", err)
    check(r.forged >= 3 and m and int(m.group(1)) == r.forged,
          "forged %d, the client says %r" % (r.forged, err))


@solo
def t_ushkey_bad_value_keeps_shell_stopped(_g):
    bad = "0123456789abcdef" * 3 + "0123456789abcde"           # 63 digits
    with Guest(free_port(), free_port(), append="udpshell=9000 ushkey=" + bad) as g:
        g.boot(90)
        text = g.text()
    check("boot: ushkey= must be 64 hex digits" in text and "got 63 characters" in text,
          "no message naming the rule:\n%s" % text)
    check("net: UDP shell not started: ushkey= is not usable" in text, "shell started?\n%s" % text)
    check("UDP shell on port" not in text, "a bad key started the shell")
    check(bad not in text and bad[:20] not in text, "the bad key was echoed")


def long_cmdline(key_hex, size=600):
    """A command line of exactly size bytes: the UDP shell's port, filler
    words, and ushkey= as the last word, past the first 511 bytes."""
    head, tail = "udpshell=9000", "ushkey=" + key_hex
    fill, i = [], 0
    while len(" ".join([head] + fill + [tail])) < size:
        i += 1
        fill.append("pad%d=%s" % (i, "p" * 60))
    line = " ".join([head] + fill + [tail])
    over = len(line) - size                     # trim the last filler to fit exactly
    fill[-1] = fill[-1][:len(fill[-1]) - over]
    line = " ".join([head] + fill + [tail])
    check(len(line) == size and line.index("ushkey=") > 511, "filler %d bytes" % len(line))
    return line


@solo
def t_ushkey_long_cmdline_fails_closed(_g):
    """A 600-byte command line carrying ushkey= at its end: the key lies
    past the kernel's 512-byte copy of the line (x86) or its 512-byte
    parse buffer (arm64). The shell must refuse to start, saying why, not
    start open; the key is never shown."""
    key = bytes(random.getrandbits(8) for _ in range(32)).hex()
    with Guest(free_port(), free_port(), append=long_cmdline(key)) as g:
        g.boot(90)
        text = g.text()
        check("UDP shell on port 9000 with no authentication" not in text,
              "the key was lost and the shell started OPEN:\n%s" % g.tail())
        check("boot: ushkey= was not read" in text, "no message naming the lost key:\n%s" % g.tail())
        check("net: UDP shell not started: ushkey= is not usable" in text,
              "no refusal from the shell:\n%s" % g.tail())
        rc, out, err = sh_k(g, "version", None, timeout=2)
        check(rc == 2 and out == "", "an unkeyed request was answered: exit %d %r" % (rc, out))
    check(key not in text.lower() and key[:16] not in text.lower(), "the key was echoed")


@solo
def t_ushkey_without_entropy_refused(_g):
    """ushkey= on a machine with no entropy source (QEMU's default cpu has
    neither RDRAND nor RNDR, and no virtio-rng device is given): the
    authenticated shell refuses to start, naming the missing source,
    rather than start without an unpredictable boot epoch."""
    key = bytes(random.getrandbits(8) for _ in range(32)).hex()
    with Guest(free_port(), free_port(), append="udpshell=9000 ushkey=" + key, rng=False) as g:
        g.boot(90)
        text = g.text()
        check(re.search(r"^entropy: none: no RDRAND/RNDR on this CPU and no usable virtio-rng "
                        r"device", text, re.M), "no 'entropy: none' boot line:\n%s" % g.tail())
        check("net: UDP shell not started: ushkey= needs an entropy source for the boot epoch, "
              "and this machine has none" in text, "no refusal naming the entropy source:\n%s"
              % g.tail())
        check("UDP shell on port" not in text, "the shell started:\n%s" % g.tail())
        check(re.search(r"^entropy:\s+none$", g.cmd("lscpu"), re.M), "lscpu does not say none")
    check(key not in text.lower() and key[:16] not in text.lower(), "the key was echoed")


# ---- raw frames over -netdev socket ----------------------------------------

def inet_csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip4(a):
    return socket.inet_aton(a)


def ipv4_frame(dst_mac, src_mac, src, dst, proto, l4):
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 0x1234, 0x4000, 64, proto, 0,
                      ip4(src), ip4(dst))
    hdr = hdr[:10] + struct.pack(">H", inet_csum(hdr)) + hdr[12:]
    return dst_mac + src_mac + b"\x08\x00" + hdr + l4


def udp_frame(dst_mac, src_mac, src, dst, sport, dport, payload):
    u = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    pseudo = ip4(src) + ip4(dst) + struct.pack(">BBH", 0, 17, len(u))
    c = inet_csum(pseudo + u) or 0xffff
    return ipv4_frame(dst_mac, src_mac, src, dst, 17, u[:6] + struct.pack(">H", c) + u[8:])


def echo_frame(dst_mac, src_mac, src, dst):
    ic = struct.pack(">BBHHH", 8, 0, 0, 0x5344, 1) + b"spoofed?"
    ic = ic[:2] + struct.pack(">H", inet_csum(ic)) + ic[4:]
    return ipv4_frame(dst_mac, src_mac, src, dst, 1, ic)


class Wire:
    """The guest's Ethernet as UDP datagrams on loopback (QEMU's -netdev
    socket,udp=...,localaddr=...): the test is every other host on the
    segment. It answers the guest's ARP requests for any address with its
    own MAC, and keeps every IPv4 frame the guest sends."""
    MAC = bytes([0x52, 0x55, 0x0a, 0x00, 0x02, 0x02])

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((HOST, 0))
        self.port = self.sock.getsockname()[1]
        self.qemu_port = free_port()
        self.ipv4 = []

    def netdev(self):
        return "socket,id=n0,udp=%s:%d,localaddr=%s:%d" % (HOST, self.port, HOST, self.qemu_port)

    def send(self, frame):
        self.sock.sendto(frame, (HOST, self.qemu_port))

    def pump(self, seconds):
        """Receive for this long: answer ARP, keep IPv4."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            self.sock.settimeout(left)
            try:
                f, _ = self.sock.recvfrom(2048)
            except socket.timeout:
                return
            if f[12:14] == b"\x08\x06" and f[20:22] == b"\x00\x01":     # ARP request
                sha, spa, tpa = f[22:28], f[28:32], f[38:42]
                arp = struct.pack(">HHBBH", 1, 0x0800, 6, 4, 2) + self.MAC + tpa + sha + spa
                self.send(sha + self.MAC + b"\x08\x06" + arp)
            elif f[12:14] == b"\x08\x00":
                self.ipv4.append(f)

    def close(self):
        self.sock.close()


@solo
def t_spoofed_sources_get_no_reply(_g):
    """RFC 1122 3.2.1.3 on the wire, with raw frames: a UDP-shell request
    and an echo whose source is the subnet broadcast or 255.255.255.255,
    and a request from a group Ethernet source, get no frame back and are
    counted. A 26-byte `lines 2000` from 10.0.2.255 used to make the
    kernel broadcast 14 frames. The same request from a real peer is
    answered, so silence is the rule, not a dead wire."""
    w = Wire()
    try:
        m = Machine(smp=2, append="udpshell=9000", lifetime=LIFETIME, name="raw-wire", arch=ARCH,
                    extra=["-netdev", w.netdev(), "-device", NICS[ARCH]])
        with m:
            m.boot(90)
            mac = re.search(r"^net: mac ([0-9a-f:]{17}) ", m.text(), re.M)
            check(mac, "no 'net: mac' boot line")
            guest = bytes(int(x, 16) for x in mac.group(1).split(":"))
            req = request(7, "lines 2000")
            # The control: a real peer's request is answered (after ARP).
            w.send(udp_frame(guest, Wire.MAC, "10.0.2.2", "10.0.2.15", 5555, 9000, request(1, "version")))
            w.pump(2.0)
            check(any(f[23] == 17 for f in w.ipv4), "no reply to a request from a real peer: the "
                  "wire does not work (%d IPv4 frames)" % len(w.ipv4))
            w.ipv4.clear()
            spoofed = [
                udp_frame(guest, Wire.MAC, "10.0.2.255", "10.0.2.15", 5555, 9000, req),
                udp_frame(guest, Wire.MAC, "255.255.255.255", "10.0.2.15", 5555, 9000, req),
                echo_frame(guest, Wire.MAC, "10.0.2.255", "10.0.2.15"),
                udp_frame(guest, b"\x01\x00\x5e\x00\x00\x01", "10.0.2.2", "10.0.2.15", 5556, 9000,
                          req),
            ]
            for f in spoofed:
                w.send(f)
            w.pump(1.5)
            check(not w.ipv4, "%d IPv4 frames sent in answer to spoofed sources (first to %s)" % (
                len(w.ipv4), w.ipv4[0][:6].hex(":") if w.ipv4 else "-"))
            bad = re.search(r"bad source (\d+)", m.cmd("net"))
            check(bad and int(bad.group(1)) == len(spoofed), "net counts %s bad sources, sent %d" % (
                bad and bad.group(1), len(spoofed)))
    finally:
        w.close()


@solo
def t_broadcast_request_gets_no_answer(_g):
    """A UDP-shell request to the subnet broadcast or 255.255.255.255 (in a
    broadcast frame) is dropped before the shell sees it, and counted;
    one datagram must not draw an answer from every kernel on the wire.
    The same request to the kernel's own address is answered."""
    w = Wire()
    try:
        m = Machine(smp=2, append="udpshell=9000", lifetime=LIFETIME, name="raw-wire", arch=ARCH,
                    extra=["-netdev", w.netdev(), "-device", NICS[ARCH]])
        with m:
            m.boot(90)
            mac = re.search(r"^net: mac ([0-9a-f:]{17}) ", m.text(), re.M)
            check(mac, "no 'net: mac' boot line")
            guest = bytes(int(x, 16) for x in mac.group(1).split(":"))
            bcast = b"\xff" * 6
            for dst in ("10.0.2.255", "255.255.255.255"):
                w.send(udp_frame(bcast, Wire.MAC, "10.0.2.2", dst, 5555, 9000,
                                 request(3, "version")))
            w.pump(2.0)
            udp = [f for f in w.ipv4 if f[23] == 17]
            check(not udp, "%d UDP frames sent in answer to broadcasts" % len(udp))
            text = m.cmd("net")
            got = re.search(r"broadcast (\d+)", text)
            check(got and int(got.group(1)) == 2, "net counts %s broadcasts, sent 2:\n%s"
                  % (got and got.group(1), text))
            check(net_counter(text, "requests") == 0, "the shell saw a broadcast:\n%s" % text)
            # The control: the same request to the kernel's own address.
            w.send(udp_frame(guest, Wire.MAC, "10.0.2.2", "10.0.2.15", 5555, 9000,
                             request(4, "version")))
            w.pump(2.0)
            check(any(f[23] == 17 for f in w.ipv4), "no reply to a unicast request: the "
                  "wire does not work (%d IPv4 frames)" % len(w.ipv4))
    finally:
        w.close()


def applies(name):
    return ARCH_ONLY.get(name, ARCH) == ARCH


def run_one(name, fn, g):
    """One test: PASS, or FAIL with whatever it raised. Any exception is
    that test's failure and the suite goes on."""
    t0 = time.monotonic()
    try:
        fn(g)
    except KeyboardInterrupt:
        raise
    except Fail as e:
        print("FAIL %s (%.1fs): %s" % (name, time.monotonic() - t0, e), flush=True)
        return False
    except Exception as e:              # a test that cannot run fails
        print("FAIL %s (%.1fs): %s: %s" % (name, time.monotonic() - t0, type(e).__name__, e), flush=True)
        return False
    print("PASS %s (%.1fs)" % (name, time.monotonic() - t0), flush=True)
    return True


def main(argv):
    global ARCH
    argv = list(argv)
    if "--arch" in argv:
        i = argv.index("--arch")
        if i + 1 >= len(argv) or argv[i + 1] not in ARCHES:
            print("--arch wants one of %s" % ", ".join(sorted(ARCHES)), file=sys.stderr)
            return 2
        ARCH = argv[i + 1]
        del argv[i:i + 2]
    if "--list" in argv:
        for name, _ in TESTS + SOLO:
            if applies(name):
                print(name)
        return 0
    chosen = runner.select(TESTS + SOLO, [a for a in argv if not a.startswith("-")])
    wrong = [n for n, _ in chosen if not applies(n)]
    if wrong:
        print("not for %s: %s" % (ARCH, ", ".join(wrong)), file=sys.stderr)
        return 2
    selected = [t for t in chosen if t in TESTS]
    solos = [t for t in chosen if t in SOLO]
    passed = failed = 0
    g = None
    boot_error = None
    t_all = time.monotonic()
    try:
        for name, fn in selected:
            # The shared guest, booted for the first test and again after
            # a test that left it dead (its own failure said why). A guest
            # that does not boot fails every test that needed it, once.
            if boot_error is None and (g is None or not g.alive()):
                if g is not None:
                    g.close()
                    g = None
                try:
                    g = Guest(free_port(), free_port())
                    g.boot(90)
                except Exception as e:
                    boot_error = "%s: %s" % (type(e).__name__, e)
            if boot_error is not None:
                failed += 1
                print("FAIL %s: the guest did not boot: %s" % (name, boot_error), flush=True)
                continue
            if run_one(name, fn, g):
                passed += 1
            else:
                failed += 1
        if g is not None:
            g.close()             # the solo tests boot their own
            g = None
        for name, fn in solos:
            if run_one(name, fn, None):
                passed += 1
            else:
                failed += 1
    except KeyboardInterrupt:
        print("interrupted")
        failed += 1
    finally:
        if g is not None:
            g.close()
        for m in list(LIVE):
            m.close()
    print("(%s, %.0f s)" % (ARCH, time.monotonic() - t_all))
    return runner.totals(passed, failed)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
