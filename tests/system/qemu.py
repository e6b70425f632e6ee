"""tests/system/qemu.py: one Sonde kernel under QEMU, driven over serial.

The one QEMU/serial driver of the tree: tests/system/run.py, arm64_tests.py
and net_tests.py, bench/*.py and scripts/kvm_profile.py all start their
machines here.

A Machine starts qemu-system-x86_64 or qemu-system-aarch64 (ARCHES) with
stdin/stdout pipes (stderr merged into stdout), and a reader thread appends
everything QEMU writes to a buffer, "\\r" removed (the console writes
"\\r\\n": without the "\\r", '$' under re.M matches at a line's end).
wait_for() waits for a regex in that buffer; cmd() sends one shell line and
returns what the command printed, without its echo and without the next
prompt; cmds() sends several at once; text() is the output as it came.

Every Machine has a bounded lifetime: a watchdog timer kills it by its own
pid when the lifetime runs out, and close() (terminate, then kill) is called
from the callers' finally blocks (or on leaving a `with Machine(...)`
block). All live machines are also in LIVE, so a
runner can kill any survivor on the way out.
"""
import os
import re
import socket
import subprocess
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Per architecture: the QEMU, its machine and default cpu, the kernel, how
# to build that kernel (for the message when it is missing), and the
# virtio-rng device every machine gets unless asked for none (rng=False).
ARCHES = {
    "x86_64": dict(qemu="qemu-system-x86_64", machine=None, cpu=None,
                   kernel=os.path.join(ROOT, "build", "x86_64", "kernel.elf"), make="make",
                   rng="virtio-rng-pci"),
    "arm64": dict(qemu="qemu-system-aarch64", machine="virt,gic-version=3", cpu="cortex-a72",
                  kernel=os.path.join(ROOT, "build", "arm64", "kernel.elf"), make="make ARCH=arm64",
                  rng="virtio-rng-device"),
}
KERNEL = ARCHES["x86_64"]["kernel"]
QEMU = ARCHES["x86_64"]["qemu"]

# The prompt is "> " at the start of a line.
PROMPT = re.compile(r"\n> ")
LIVE = set()
_live_lock = threading.Lock()


# Each architecture's virtio-net NIC on the netdev n0 (-netdev ...,id=n0):
# x86-64's on PCI, legacy (the driver speaks virtio 0.9.5), arm64's on
# virtio-mmio.
NICS = {
    "x86_64": "virtio-net-pci,netdev=n0,disable-modern=on",
    "arm64": "virtio-net-device,netdev=n0",
}


def free_port(host="127.0.0.1"):
    """A UDP port nobody on host uses right now (the kernel picks it): for
    QEMU's port forwards and socket netdevs."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Fail(Exception):
    """A test assertion failed (or something it needed did not happen)."""


def check(cond, msg):
    if not cond:
        raise Fail(msg)


class Machine:
    """arch picks ARCHES' entry; machine and cpu default to that entry's
    (-M, -cpu), qemu and kernel override its binary and kernel path.
    append=None passes no -append at all; icount is -icount's argument;
    extra is appended to the command line as given (-netdev, -device,
    -nic, -enable-kvm ...). rng=True gives the machine ARCHES' virtio-rng
    device, the kernel's entropy source where the cpu has no RDRAND/RNDR
    (QEMU's default cpus have neither); rng=False boots without it, so that
    with such a cpu the kernel has no entropy source at all."""

    def __init__(self, smp=4, append="", cpu=None, lifetime=300.0, name="qemu",
                 arch="x86_64", machine=None, icount=None, extra=(), qemu=None, kernel=None,
                 rng=True):
        a = ARCHES[arch]
        self.name = name
        self.arch = arch
        self.kernel = kernel or a["kernel"]
        if not os.path.exists(self.kernel):
            raise Fail("%s does not exist: run %s first" % (self.kernel, a["make"]))
        self.argv = [qemu or a["qemu"]]
        machine = machine or a["machine"]
        cpu = cpu or a["cpu"]
        if machine:
            self.argv += ["-M", machine]
        if cpu:
            self.argv += ["-cpu", cpu]
        self.argv += ["-kernel", self.kernel, "-smp", str(smp), "-m", "512M",
                      "-display", "none", "-serial", "stdio", "-no-reboot"]
        if icount:
            self.argv += ["-icount", icount]
        if append is not None:
            self.argv += ["-append", append]
        if rng:
            self.argv += ["-device", a["rng"]]
        self.argv += list(extra)
        self.buf = ""
        self.eof = False
        self.cond = threading.Condition()
        self.boot_s = None
        self.expired = False
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, cwd=ROOT)
        with _live_lock:
            LIVE.add(self)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        # The bounded lifetime: whatever happens to the caller, this QEMU dies.
        self.watchdog = threading.Timer(lifetime, self._expire)
        self.watchdog.daemon = True
        self.watchdog.start()

    # ---- process ----
    def _read(self):
        fd = self.proc.stdout.fileno()
        while True:
            try:
                b = os.read(fd, 65536)
            except OSError:
                b = b""
            with self.cond:
                if not b:
                    self.eof = True
                    self.cond.notify_all()
                    return
                # latin-1: one character a byte, so nothing is lost or
                # replaced; "\r" goes here, once, so that offsets taken
                # from matches (mark(), m.end()) index text() directly.
                self.buf += b.decode("latin-1").replace("\r", "")
                self.cond.notify_all()

    def _expire(self):
        self.expired = True
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        """Terminate, then kill, this machine's own QEMU process."""
        self.watchdog.cancel()
        p = self.proc
        if p.poll() is None:
            try:
                p.terminate()
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
            except OSError:
                pass
        # The reader sees EOF once QEMU is gone; let it finish before the
        # pipe's descriptor is closed (and could be reused under it).
        if self.reader is not threading.current_thread():
            self.reader.join(timeout=5)
        for f in (p.stdin, p.stdout):
            try:
                f.close()
            except OSError:
                pass
        with _live_lock:
            LIVE.discard(self)

    # ---- buffer ----
    def mark(self):
        with self.cond:
            return len(self.buf)

    def text(self, start=0, end=None):
        """The output from buffer offset start (a mark() or a match's
        offset) to end, as QEMU wrote it but for the "\\r"s."""
        with self.cond:
            return self.buf[start:end]

    def tail(self, start=0, n=1500):
        t = self.text(start)
        return t[-n:]

    def wait_for(self, pattern, timeout, start=0):
        """The first match of pattern (a string or a compiled regex) at or
        after buffer offset start."""
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                m = rx.search(self.buf, start)
                if m:
                    return m
                if self.eof:
                    raise Fail("%s: qemu exited (rc %s) while waiting for %r%s" % (
                        self.name, self.proc.poll(), rx.pattern,
                        " (lifetime expired)" if self.expired else ""))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Fail("%s: timed out after %.0f s waiting for %r" % (
                        self.name, timeout, rx.pattern))
                self.cond.wait(min(left, 0.5))

    def send(self, s):
        try:
            self.proc.stdin.write(s.encode("latin-1"))
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as e:
            raise Fail("%s: cannot write to qemu: %s" % (self.name, e))

    # ---- shell ----
    def boot(self, timeout=60):
        """Wait for the first prompt; record and return the boot time."""
        self.wait_for(PROMPT, timeout)
        self.boot_s = time.monotonic() - self.t0
        return self.boot_s

    def cmd(self, line, timeout=30):
        """Send line, wait for the next prompt, return the output between
        the echoed line and that prompt."""
        return self.cmds([line], timeout)[0]

    def cmds(self, lines, timeout=30):
        """Send several lines at once (the shell reads them back to back,
        with no host round trip between them: keep the total well under
        the kernel's 256-byte receive ring). Returns each one's output;
        timeout is per line."""
        start = self.mark()
        self.send("".join(l + "\r" for l in lines))
        outs = []
        pos = start
        for _ in lines:
            m = self.wait_for(PROMPT, timeout, pos)
            out = self.text(pos, m.start() + 1)
            nl = out.find("\n")       # drop the echoed command line
            outs.append(out[nl + 1:] if nl >= 0 else "")
            pos = m.end()
        return outs
