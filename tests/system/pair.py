"""tests/system/pair.py: two Sonde kernels on one Ethernet wire, each
reachable from the host over its UDP shell (docs/netload.md, "Two kernels
on one wire"). Used by scripts/pair.py and net_tests.py's pair test.

    A 10.0.2.15 ---\\                          /--- host 127.0.0.1:port_a
                    sonde-switch --- slirp (in A's QEMU)
    B 10.0.2.16 ---/                          \\--- host 127.0.0.1:port_b

Each kernel's one NIC is a QEMU `-netdev socket,udp=...` to a port of
build/host/sonde-switch, a learning switch on 127.0.0.1. The switch's
third port is another socket netdev in A's QEMU, on a hub of its own with
a `-netdev user` (slirp) whose hostfwds reach both UDP shells: the host
talks to 127.0.0.1:port_a and :port_b, slirp hands that to 10.0.2.15:9000
and 10.0.2.16:9000, and the replies come back to slirp as to any gateway
(gw=10.0.2.2). Addresses are static, from the boot parameters.

Why a switch and not a QEMU hub: a hub repeats every frame on every port,
and slirp forwards every IPv4 datagram it is handed to the real
destination from the host, whatever the destination MAC (measured: with
A, B and slirp on one hub, QEMU sent each of A's netload datagrams to
10.0.2.16 out of the host). Behind the switch slirp hears only frames for
its MAC and broadcasts; A to B goes from A's port to B's alone.

Every process here has a bounded lifetime (the Machines' watchdogs, the
switch's -t) and close() ends them by their own pids.
"""
import os
import socket
import subprocess
import time

from qemu import ARCHES, Fail, Machine, ROOT, free_port

SWITCH = os.path.join(ROOT, "build", "host", "sonde-switch")
SONDE_SH = os.path.join(ROOT, "build", "host", "sonde-sh")
SONDE_PROF = os.path.join(ROOT, "build", "host", "sonde-prof")
HOST = "127.0.0.1"
IP = {"a": "10.0.2.15", "b": "10.0.2.16"}
MAC = {"a": "52:54:00:12:34:56", "b": "52:54:00:12:34:57"}
NIC = {
    "x86_64": "virtio-net-pci,netdev=n0,disable-modern=on,mac=%s",
    "arm64": "virtio-net-device,netdev=n0,mac=%s",
}
MASK, GW = "255.255.255.0", "10.0.2.2"

# B's -icount for a profile of the receiver: its clock then counts the
# instructions it runs (1 ns each), and real time only while idle, so a
# tick lands in the receive path in proportion to the work done there.
# Without it (MTTCG, like A) B's ticks fall nearly all in cpu_idle: on
# x86 the receive path took 2-8 of B's 400 samples in 3 runs, a count
# that could reach 0; under icount 54-97 in six runs (measured). B's own
# netload seconds and dps are then in that clock, which runs behind real
# time while B is busy: A's figures (real time) are the rate.
ICOUNT_B = "shift=0,sleep=on"


def _sock(port, peer, ident):
    return "socket,id=%s,udp=%s:%d,localaddr=%s:%d" % (ident, HOST, port, HOST, peer)


class Pair:
    """The switch and the two kernels, started but not yet booted
    (boot() waits for both prompts). a and b are the Machines; port_a and
    port_b the host ports of their UDP shells; target(k) 'HOST:PORT'.
    icount_b: B's -icount argument, or None (ICOUNT_B says why a profile
    of the receiver wants one)."""

    def __init__(self, arch="x86_64", smp=2, lifetime=300.0, icount_b=None, raw=False):
        a = ARCHES[arch]
        for tool in (SWITCH, SONDE_SH, SONDE_PROF):
            if not os.path.exists(tool):
                raise Fail("%s does not exist: run %s first" % (tool, a["make"]))
        self.arch = arch
        self.port_a, self.port_b = free_port(), free_port()
        # Switch ports 0 (A), 1 (B), 2 (slirp); each its port and its peer's.
        sw = [(free_port(), free_port()) for _ in range(3)]
        # raw: a fourth port whose other end is this socket, for a test to
        # put frames of its own on the wire (send_raw) as any host could.
        self.raw = None
        if raw:
            self.raw = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.raw.bind((HOST, 0))
            sw.append((free_port(), self.raw.getsockname()[1]))
            self.raw_port = sw[3][0]
        self.switch = subprocess.Popen(
            [SWITCH, "-t", str(int(lifetime))] + ["%d:%d" % p for p in sw],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        self.a = self.b = None
        try:
            line = self.switch.stdout.readline()
            if not line.startswith("switch: ready"):
                raise Fail("sonde-switch did not start: %r%s" % (line, self.switch.stdout.read()))
            fwd = ",".join("hostfwd=udp:%s:%d-%s:9000" % (HOST, p, IP[k])
                           for k, p in (("a", self.port_a), ("b", self.port_b)))
            self.a = self._kernel("a", sw[0], smp, lifetime, [
                "-netdev", "user,id=u0," + fwd,
                "-netdev", "hubport,id=h0,hubid=1,netdev=u0",
                "-netdev", _sock(sw[2][0], sw[2][1], "s2"),
                "-netdev", "hubport,id=h1,hubid=1,netdev=s2"])
            self.b = self._kernel("b", sw[1], smp, lifetime, [], icount_b)
        except BaseException:
            self.close()
            raise

    def _kernel(self, k, sw, smp, lifetime, extra, icount=None):
        append = "udpshell=9000 ip=%s mask=%s gw=%s" % (IP[k], MASK, GW)
        return Machine(smp=smp, append=append, arch=self.arch, lifetime=lifetime,
                       name="pair-" + k, icount=icount,
                       extra=["-netdev", _sock(sw[0], sw[1], "n0"),
                              "-device", NIC[self.arch] % MAC[k]] + extra)

    def boot(self, timeout=90):
        self.a.boot(timeout)
        self.b.boot(timeout)

    def send_raw(self, frame):
        """One Ethernet frame onto the wire from the raw port."""
        self.raw.sendto(frame, (HOST, self.raw_port))

    def target(self, k):
        return "%s:%d" % (HOST, self.port_a if k == "a" else self.port_b)

    def close(self):
        """Both kernels, then the switch; returns the switch's counters
        (its last lines) or ''."""
        for m in (self.a, self.b):
            if m is not None:
                m.close()
        out = ""
        if self.raw is not None:
            self.raw.close()
        if self.switch.poll() is None:
            self.switch.terminate()
        try:
            out = self.switch.communicate(timeout=5)[0] or ""
        except subprocess.TimeoutExpired:
            self.switch.kill()
            self.switch.communicate()
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


NL_PORT = 5000                   # B's netload receive port


def sh(pair, k, line, timeout=10):
    """One command on kernel k's UDP shell, with build/host/sonde-sh."""
    r = subprocess.run([SONDE_SH, "-p", str(pair.port_a if k == "a" else pair.port_b),
                        "-t", str(timeout), HOST, line],
                       capture_output=True, text=True, timeout=timeout * 4 + 10)
    if r.returncode != 0:
        raise Fail("%s: sonde-sh %r: exit %d: %s" % (k, line, r.returncode, r.stderr.strip()))
    return r.stdout


def _wait_finished(pair, k, seconds):
    deadline = time.monotonic() + seconds
    while True:
        out = sh(pair, k, "netload")
        if "last run (finished)" in out:
            return out
        if time.monotonic() > deadline:
            raise Fail("%s: netload still running after %.0f s: %r" % (k, seconds, out))
        time.sleep(0.5)


def _summary(text, what):
    return next((l for l in text.splitlines() if l.startswith("netload " + what)), None)


def load_and_profile(pair, out, window_ms=2000, size=1024, record_args=()):
    """B receives and A sends, for window_ms plus 3 s; one `sonde-prof
    record` of both kernels over window_ms, 1 s into the sending, writes
    out. Returns (A's send line, B's recv line, record's stderr): the
    summaries as `netload` prints them."""
    send_ms = window_ms + 3000
    elf = ARCHES[pair.arch]["kernel"]
    sh(pair, "b", "netload recv %d %d" % (NL_PORT, send_ms + 5000))
    sh(pair, "a", "netload send %s %d %d %d" % (IP["b"], NL_PORT, send_ms, size))
    time.sleep(1.0)
    # -t 30: each kernel's answer waits behind its window, and two TCG
    # guests under load answer slowly on a 2-core host.
    argv = [SONDE_PROF, "record", "-d", str(window_ms), "-t", "30", "-e", elf, "-e", elf,
            "-o", out] + list(record_args) + [pair.target("a"), pair.target("b")]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT)
    if r.returncode != 0:
        raise Fail("%s: exit %d: %s" % (" ".join(argv), r.returncode, r.stderr.strip()))
    sent = _wait_finished(pair, "a", send_ms / 1000.0 + 10)
    time.sleep(0.5)                  # the last datagrams in flight
    got = sh(pair, "b", "netload")
    if "netload: running" in got:    # B's window outlasts A's run
        got = sh(pair, "b", "netload stop")
    s, g = _summary(sent, "send"), _summary(got, "recv")
    if not s or not g:
        raise Fail("no netload summary: A said %r, B said %r" % (sent, got))
    return s, g, r.stderr
