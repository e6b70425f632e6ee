#!/usr/bin/env python3
"""make bench: the profiler's figures, measured side by side in one boot
under -icount shift=0 (guest time tied to instructions, so repeatable),
written to docs/bench.md. Absolute host times are noise here; the ratios
and the guest-cycle figures are what to read."""
import os, re, subprocess, sys, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = os.path.join(ROOT, "build/x86_64/kernel.elf")


class Guest:
    def __init__(self, args):
        self.p = subprocess.Popen(
            ["qemu-system-x86_64", "-kernel", KERNEL, "-m", "512M", "-display", "none",
             "-serial", "stdio", "-no-reboot"] + args,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.buf = b""
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            b = self.p.stdout.read1(4096)
            if not b:
                return
            with self.lock:
                self.buf += b

    def wait_for(self, pat, timeout):
        end = time.time() + timeout
        while time.time() < end:
            with self.lock:
                m = re.search(pat, self.buf.decode(errors="replace"))
            if m:
                return m
            time.sleep(0.05)
        raise TimeoutError("timed out waiting for %r; output tail:\n%s" % (pat, self.buf[-2000:].decode(errors="replace")))

    def cmd(self, line, timeout):
        with self.lock:
            start = len(self.buf)
        self.p.stdin.write(line.encode() + b"\r")
        self.p.stdin.flush()
        end = time.time() + timeout
        while time.time() < end:
            with self.lock:
                out = self.buf[start:].decode(errors="replace")
            i = out.find("\n> ")
            if i >= 0:
                return out[:i]
            time.sleep(0.1)
        raise TimeoutError("%s: no prompt within %ds" % (line, timeout))

    def close(self):
        self.p.kill()
        self.p.wait(timeout=10)


def main():
    g = Guest(["-smp", "4", "-icount", "shift=0"])
    try:
        g.wait_for(r"\n> ", 120)
        out = g.cmd("bench profile", 900)
    finally:
        g.close()
    m = re.search(r"workload off (\d+) cycles, on (\d+) cycles", out)
    c = re.search(r"sample cost (\d+) cycles median \(min (\d+), max (\d+)\), ([\d.]+)% of cpu time", out)
    s = re.search(r"(\d+) samples on (\d+) cpus, (\d+) dropped, source (.*)", out)
    r = re.search(r"report (\d+)x1024 records (\d+) cycles, (\d+) us", out)
    if not (m and c and s and r):
        print(out)
        sys.exit("bench: could not read the figures")
    off, on = int(m.group(1)), int(m.group(2))
    overhead = (on - off) * 100.0 / off
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (bench/run.py). One boot of `-smp 4 -icount shift=0`:",
        "guest time follows instructions, so these are guest cycles (TSC), repeatable",
        "from run to run; host wall time is not used.",
        "",
        "## Profiler (tick source, 100 Hz per CPU)",
        "",
        "| figure | value |",
        "|---|---|",
        "| fixed burn workload, profiling off (sum over 4 CPUs) | %d cycles |" % off,
        "| same workload, `profile 1000` running over it | %d cycles |" % on,
        "| ratio on/off | %.4f (overhead %+.3f%%; target < 0.5%%) |" % (on / off, overhead),
        "| samples in the profiled window | %s on %s cpus, %s dropped, source %s |" % s.groups(),
        "| cycles per sample | median %s, min %s, max %s |" % c.groups()[:3],
        "| share of cpu time spent sampling | %s%% |" % c.group(4),
        "| Report() over %s x 1024 records (fold, resolve, print to a sink) | %s cycles = %s us guest time (target < 20 ms) |" % r.groups(),
        "",
        "Under -icount the four vCPUs take turns on one host thread and guest",
        "time runs on while a vCPU waits for its turn, so a sample that straddles",
        "a turn is charged the other vCPUs' slice: that is the max, and it inflates",
        "the share line (a sum). The median is the steady cost of a sample.",
        "",
    ]
    path = os.path.join(ROOT, "docs/bench.md")
    text = "\n".join(lines)
    open(path, "w").write(text)
    print(text)
    # The other sections append themselves, each after this one.
    rc = 0
    for part in ("bench/netload.py", "bench/arm64_pmu.py"):
        if os.path.exists(os.path.join(ROOT, part)):
            rc |= subprocess.call([sys.executable, os.path.join(ROOT, part)])
    sys.exit(rc)


if __name__ == "__main__":
    main()
