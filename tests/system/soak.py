#!/usr/bin/env python3
"""Sonde soak: many short profiles under load, with the UDP shell busy.

usage: python3 tests/system/soak.py [--cycles N]

Boots the x86 guest with user networking as net_tests.py does, starts
`burn` on every CPU, and runs N `profile 1 all 1` start/stop cycles on the
serial shell, sent in batches with no host round trip between them (as
qemu.Machine.cmds does), while a Python thread sends UDP-shell requests
(`version`, one socket, raw protocol) back to back. Checks: every profile
report is whole (a 1 ms window, its one chain within its samples, and
none dropped: 4 CPUs for 11 ms at most fill no buffer; the sample cost is
not checked, since on a loaded host a vCPU descheduled mid-sample makes
it anything), nothing hangs (every wait
is bounded), every UDP request is answered with the right bytes, and
`mem` after the last cycle matches `mem` after the first WARMUP: the same
heap bytes in use, and free KiB lower by exactly the pages the heap newly
caches, at most one empty page per size class (the first cycles allocate
the profiler's per-CPU buffers, which are kept for good; the UDP shell's
kept reply is allocated by the first request).

Throughout, `fpjunk` (kernel/testing/fpjunk.c) runs on CPU 3: a task
whose older frame records hold random frame pointers and return
addresses while it is sampled, so every cycle's walks meet corrupt
chains. Before and after the cycles, a profile of that task alone must
count samples in its own functions, and the kernel must still answer.

make test runs 1000 cycles (about 21 s here, 10000 took 258 s); make soak runs 10000.
Ends with 'N passed, N failed' (one test).
"""
import os
import re
import socket
import struct
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import net_tests as N  # noqa: E402
from qemu import Fail, check  # noqa: E402
import parse as P  # noqa: E402

BATCH = 12                 # cycles sent at once, with no host round trip between
WARMUP = 2 * BATCH         # cycles before the memory baseline (see soak())
BURN_MS = 600000           # burn's maximum; a longer soak restarts it
MEM_RX = re.compile(r"^total (\d+) KiB, free (\d+) KiB, heap in use (\d+) bytes \((\d+) pages", re.M)
# mm/heap.c keeps at most one empty slab page per size class (NCLASSES, 8)
# rather than give it back at once: pages the heap may legitimately hold
# more of after the cycles than after the warm-up, with nothing in use.
HEAP_CLASSES = 8


class UdpLoad(threading.Thread):
    """Sends `version` over the UDP shell until stopped; every request
    must be answered (the protocol's own resends allowed) with want."""

    def __init__(self, port, want):
        threading.Thread.__init__(self, daemon=True)
        self.port, self.want = port, want
        self.stop = threading.Event()
        self.sent = self.answered = 0
        self.error = None
        self.worst = 0.0

    def run(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.bind((N.HOST, 0))
            seq = 1000
            while not self.stop.is_set():
                seq += 1
                self.sent += 1
                t0 = time.monotonic()
                out = N.payload_of(N.raw_exchange(s, self.port, N.request(seq, "version"), 20.0))
                self.worst = max(self.worst, time.monotonic() - t0)
                if out != self.want:
                    raise Fail("request %d: reply %r, want %r" % (seq, out, self.want))
                self.answered += 1
        except Exception as e:            # reported by the main thread
            self.error = "%s: %s" % (type(e).__name__, e)
        finally:
            s.close()


def whole_profile(out):
    r = P.profile(out)
    shown = sum(c["count"] for c in r["chains"])
    check(r["window"] == 1 and r["dropped"] == 0 and len(r["chains"]) <= 1 and
          shown <= r["samples"] and (shown > 0) == (r["samples"] > 0),
          "profile 1 all 1: window %d, %d dropped, %d chains holding %d of %d samples: %r"
          % (r["window"], r["dropped"], len(r["chains"]), shown, r["samples"], out[:400]))
    return r


def mem(g):
    out = g.cmd("mem")
    m = MEM_RX.search(out)
    check(m, "mem: unexpected output %r" % out)
    return {"free_kib": int(m.group(2)), "heap_bytes": int(m.group(3)), "heap_pages": int(m.group(4)),
            "line": out.strip()}


def start_burn(g):
    out = g.cmd("burn %d" % BURN_MS)
    m = re.search(r"^burn: %d ms, pids((?: \d+)+)$" % BURN_MS, out, re.M)
    check(m and len(m.group(1).split()) == 4, "burn on 4 cpus: %r" % out)
    return time.monotonic()


def fpjunk_profile(g, pid, when):
    """A profile of the fpjunk task alone: its samples are counted, in
    its own code or the clock it reads, whatever its chain holds."""
    r = P.profile(g.cmd("profile 300 %d 4" % pid, 30))
    check(r["samples"] > 0, "%s: no sample of fpjunk (pid %d) in 300 ms" % (when, pid))
    leaves = [c["name"] for c in r["chains"]]
    check(any(n.startswith("fpjunk_") for n in leaves),
          "%s: no chain ends in fpjunk's code: %r" % (when, leaves))
    return r["samples"]


def soak(g, cycles):
    want_version = g.cmd("version")
    out = g.cmd("fpjunk %d 3" % BURN_MS)
    m = re.search(r"^fpjunk: %d ms on cpu 3, pid (\d+)$" % BURN_MS, out, re.M)
    check(m, "fpjunk: %r" % out)
    junk_pid = int(m.group(1))
    fpjunk_profile(g, junk_pid, "before the cycles")
    burn_t = start_burn(g)
    load = UdpLoad(g.ushell_port, want_version)
    load.start()
    try:
        # The first cycles and one answered request: what a cycle keeps for
        # good. Not cycle 1 alone: the heap keeps one empty page per size
        # class (mm/heap.c), and a report's arrays fall into one class or
        # another with its sample count, so a class first touched at cycle
        # 30 would cache its page then and look like a leak.
        for out in g.cmds(["profile 1 all 1"] * WARMUP, timeout=30):
            whole_profile(out)
        deadline = time.monotonic() + 20
        while load.answered == 0 and load.error is None and time.monotonic() < deadline:
            time.sleep(0.05)
        check(load.answered > 0, "no UDP reply within 20 s: %s" % load.error)
        base = mem(g)
        t0 = time.monotonic()
        done, samples = WARMUP, 0
        while done < cycles:
            if time.monotonic() - burn_t > BURN_MS / 1000 - 60:
                burn_t = start_burn(g)        # the old tasks end on their own
            n = min(BATCH, cycles - done)
            for out in g.cmds(["profile 1 all 1"] * n, timeout=30):
                samples += whole_profile(out)["samples"]
            done += n
            check(load.error is None, "UDP load failed after %d cycles: %s" % (done, load.error))
        elapsed = time.monotonic() - t0
    finally:
        load.stop.set()
        load.join(30)
    check(not load.is_alive(), "the UDP load thread hangs")
    check(load.error is None, "UDP load: %s" % load.error)
    check(load.answered == load.sent, "UDP: %d requests, %d answered" % (load.sent, load.answered))
    after = mem(g)
    print("soak: %d cycles in %.1f s (%.1f ms each), %d samples; UDP %d requests, all answered, "
          "slowest %.2f s" % (cycles, elapsed, 1000 * elapsed / max(1, cycles - 1), samples,
                              load.answered, load.worst))
    print("soak: mem after cycle %d: %s" % (WARMUP, base["line"]))
    print("soak: mem after cycle %d: %s" % (cycles, after["line"]))
    # Exact where a leak would show: the heap's bytes in use, and every free
    # page the allocator lost is one the heap holds. Only the heap's cache
    # of empty pages (one per size class, first touched by a report whose
    # arrays fell into a class the warm-up did not use) may differ.
    grown = after["heap_pages"] - base["heap_pages"]
    check(after["heap_bytes"] == base["heap_bytes"] and
          base["free_kib"] - after["free_kib"] == 4 * grown and 0 <= grown <= HEAP_CLASSES,
          "memory not back to its baseline: %s, then %s" % (base["line"], after["line"]))
    junk = fpjunk_profile(g, junk_pid, "after %d cycles" % cycles)
    print("soak: fpjunk (pid %d) still sampled after the cycles: %d samples in 300 ms"
          % (junk_pid, junk))
    out = g.cmd("kill %d" % junk_pid)
    check("asked to stop" in out, "kill fpjunk: %r" % out)
    out = g.cmd("burn stop")
    check(re.search(r"^burn: stopping \d+ tasks$", out, re.M), "burn stop: %r" % out)
    out = g.cmd("echo still here")
    check(out.strip() == "still here", "the shell does not answer after the soak: %r" % out)


def main(argv):
    cycles = 1000
    if "--cycles" in argv:
        cycles = int(argv[argv.index("--cycles") + 1])
    # Wall time for the whole run: boot, the cycles (the slowest measured
    # ~0.1 s each), and the checks; the QEMU dies after it whatever happens.
    N.LIFETIME = 120 + cycles * 0.25
    name = "soak_%d" % cycles
    t0 = time.monotonic()
    g = None
    ok = False
    try:
        g = N.Guest(N.free_port(), N.free_port())
        g.boot(90)
        soak(g, cycles)
        ok = True
        print("PASS %s (%.1fs)" % (name, time.monotonic() - t0), flush=True)
    except Exception as e:
        print("FAIL %s (%.1fs): %s: %s" % (name, time.monotonic() - t0, type(e).__name__, e),
              flush=True)
        if g is not None:
            print(g.tail(0, 1500))
    finally:
        if g is not None:
            g.close()
    print("%d passed, %d failed" % (ok, not ok))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
