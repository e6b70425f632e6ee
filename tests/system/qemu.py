"""tests/system/qemu.py: one Sonde kernel under QEMU, driven over serial.

A Machine starts qemu-system-x86_64 with stdin/stdout pipes (stderr merged
into stdout), and a reader thread appends everything QEMU writes to a
buffer. wait_for() waits for a regex in that buffer; cmd() sends one shell
line and returns what the command printed, without its echo and without the
next prompt.

Every Machine has a bounded lifetime: a watchdog timer kills it by its own
pid when the lifetime runs out, and close() (terminate, then kill) is called
from the test runner's finally blocks. All live machines are also in
LIVE, so the runner can kill any survivor on the way out.
"""
import os
import re
import subprocess
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KERNEL = os.path.join(ROOT, "build", "x86_64", "kernel.elf")
QEMU = "qemu-system-x86_64"

# The prompt is "> " at the start of a line; the console writes "\r\n".
PROMPT = re.compile(r"\n> ")
LIVE = set()
_live_lock = threading.Lock()


class Fail(Exception):
    """A test assertion failed (or something it needed did not happen)."""


class Machine:
    def __init__(self, smp=4, append="", cpu=None, lifetime=300.0, name="qemu"):
        self.name = name
        self.argv = [QEMU, "-kernel", KERNEL, "-smp", str(smp), "-m", "512M",
                     "-display", "none", "-serial", "stdio", "-no-reboot"]
        if cpu:
            self.argv += ["-cpu", cpu]
        self.argv += ["-append", append]
        self.buf = ""
        self.eof = False
        self.cond = threading.Condition()
        self.boot_s = None
        if not os.path.exists(KERNEL):
            raise Fail("%s does not exist: run make first" % KERNEL)
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, cwd=ROOT)
        with _live_lock:
            LIVE.add(self)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        # The bounded lifetime: whatever happens to the test, this QEMU dies.
        self.watchdog = threading.Timer(lifetime, self._expire)
        self.watchdog.daemon = True
        self.watchdog.start()
        self.expired = False

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
                self.buf += b.decode("latin-1")
                self.cond.notify_all()

    def _expire(self):
        self.expired = True
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
        with self.cond:
            return self.buf[start:end].replace("\r", "")

    def tail(self, start=0, n=1500):
        t = self.text(start)
        return t[-n:]

    def wait_for(self, pattern, timeout, start=0):
        """The first match of pattern at or after buffer offset start."""
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
        """Wait for the first prompt; record the boot time."""
        self.wait_for(PROMPT, timeout)
        self.boot_s = time.monotonic() - self.t0
        return self.boot_s

    def cmd(self, line, timeout=30):
        """Send line, wait for the next prompt, return the output between
        the echoed line and that prompt ("\r" removed)."""
        return self.cmds([line], timeout)[0]

    def cmds(self, lines, timeout=30):
        """Send several lines at once (the shell reads them back to back,
        with no host round trip between them: keep the total well under
        the kernel's 256-byte receive ring). Returns each one's output."""
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
