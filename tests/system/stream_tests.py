#!/usr/bin/env python3
"""`sonde-prof record -d SECONDS` over the profile stream against live
x86_64 kernels (docs/continuous.md).

usage: python3 tests/system/stream_tests.py [--list] [NAME...]

- one_kernel_10s: a kernel at -smp 4 running `burn` on every CPU, recorded
  for 10 s: 10 s x 100 Hz x 4 CPUs samples within 5%, nothing lost (on the
  wire or in the kernel), burn_spin named, the loss in the .txt header
  and in the pprof comments (`go tool pprof -comments`).
- fleet_one_killed: three kernels at -smp 1 recorded together for 10 s,
  one of them killed halfway: it is named on stderr and in its report,
  the other two are complete (1000 samples within 5%, nothing lost), and
  the exit status is 0.
- authenticated_7s: a kernel with ushkey=, recorded for 7 s with -k: the
  keep-alives (tagged) hold the stream past the kernel's 5 s, 700 samples
  within 5%, nothing lost; every datagram tagged (else none would count).
- forged_open, forged_keyed (issue 26): while a kernel at -smp 1 is
  recorded for 6 s, datagrams are forged to the collector's port with the
  stream's own id: a seq 2^31 ahead and one a window ahead, a batch with a
  pid above INT32_MAX (numbered past the stream's END), a META whose task
  name holds " samples=", a META with another build id; and one of an
  unknown stream id. Open: the profile completes with 600 samples within
  5%, 0 lost, the refusals in the report, and the other build id is not
  taken for a restart (the shell is asked, and says the stream runs).
  With -k (ushkey=): every one of them is refused for its missing tag,
  and the count is the same.

Each guest's UDP shell (port 9000) is forwarded from a free port on
127.0.0.1; the stream comes back through QEMU's user network to the
collector's port on 127.0.0.1. The tick is the sample source (100 Hz per
CPU), every guest runs under -icount (its clock counts instructions), and
each kernel ends its stream itself after the 10 s asked for by that
clock, so the count does not depend on the host's load.

Prints 'PASS name (secs)' or 'FAIL name (secs): reason' and ends with
'N passed, N failed'. Needs `make` done and go (golang-go). Python 3
standard library."""
import os
import pty
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parse as P  # noqa: E402
import runner  # noqa: E402
from qemu import ARCHES, Fail, Machine, ROOT, free_port, check  # noqa: E402

PROF = os.path.join(ROOT, "build", "host", "sonde-prof")
ELF = ARCHES["x86_64"]["kernel"]
NIC = "virtio-net-pci,netdev=n0,disable-modern=on"
HOST = "127.0.0.1"
LIFETIME = 180.0
# Under -icount the kernel's clock is its instruction count, so its 10 s
# (the window the kernel ends by itself) hold 1000 ticks per CPU whatever
# the host's load, and every tick is taken at -smp 4 too (the vCPUs take
# turns on one host thread; the kernel starts each CPU's tick at its own
# phase so that no turn lasts a whole period: arch/x86_64/lapic.c).
ICOUNT_SMP4 = "shift=1,sleep=off"
HEADER = re.compile(r"^(\d+) samples on (\d+) cpus, (\d+) dropped, source (.*)$", re.M)
STREAMED = re.compile(r"^streamed: (\d+) records lost on the wire \((\d+) datagrams\)(.*)$", re.M)


class Guest(Machine):
    def __init__(self, smp, name, icount=None, append=""):
        self.port = free_port()
        fwd = "user,id=n0,hostfwd=udp:%s:%d-:9000" % (HOST, self.port)
        Machine.__init__(self, smp=smp, append=("udpshell=9000 " + append).strip(), arch="x86_64",
                         lifetime=LIFETIME, name=name, icount=icount,
                         extra=["-netdev", fwd, "-device", NIC])
        self.target = "%s:%d" % (HOST, self.port)

    def burn(self, cpus):
        out = self.cmd("burn 600000 %s" % ",".join(str(c) for c in range(cpus)))
        check(out.startswith("burn: 600000 ms"), "%s: burn did not start: %r" % (self.name, out))


def record(args, timeout=120):
    r = subprocess.run([PROF, "record"] + args, capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT)
    return r.returncode, r.stdout, r.stderr


def reports(text):
    """The .txt split per kernel: {name: report} ("" for one kernel)."""
    parts = re.split(r"^kernel (\S+)\n", text, flags=re.M)
    if len(parts) == 1:
        return {"": text}
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def figures(rep):
    h, s = HEADER.search(rep), STREAMED.search(rep)
    check(h and s, "no samples/streamed header in:\n%s" % rep[:600])
    return int(h.group(1)), int(h.group(3)), int(s.group(1)), int(s.group(2)), s.group(3)


def within(n, want, pct=5.0):
    return abs(n - want) <= want * pct / 100


TESTS = []


def test(fn):
    TESTS.append((fn.__name__[2:], fn))
    return fn


@test
def t_one_kernel_10s(ctx):
    tmp = ctx.tmp
    with Guest(4, "smp4", icount=ICOUNT_SMP4) as g:
        g.boot(90)
        g.burn(4)
        txt, pb = os.path.join(tmp, "one.txt"), os.path.join(tmp, "one.pb.gz")
        rc, _, err = record(["-d", "10s", "-e", ELF, "-o", txt, g.target])
        check(rc == 0, "record -d 10s: exit %d: %s" % (rc, err))
        with open(txt) as f:
            rep = f.read()
        samples, dropped, lost, dgrams, note = figures(rep)
        print("    %d samples (want 4000 within 5%%), %d dropped in the kernel, "
              "%d records / %d datagrams lost on the wire%s" % (samples, dropped, lost, dgrams, note))
        check(within(samples, 4000), "%d samples, want 10 s x 100 Hz x 4 = 4000 within 5%%" % samples)
        check(dropped == 0 and lost == 0 and dgrams == 0,
              "lost: %d in the kernel, %d records / %d datagrams on the wire" % (dropped, lost, dgrams))
        check("burn_spin" in rep, "burn_spin is not in the report:\n%s" % rep[:800])
        check(err == "", "stderr is not a terminal, yet: %r" % err)
        # The same in pprof: its comment carries the loss.
        rc, _, err = record(["-d", "3s", "-e", ELF, "-o", pb, g.target])
        check(rc == 0, "record -d 3s -o .pb.gz: exit %d: %s" % (rc, err))
        env = dict(os.environ, HOME=tmp)
        r = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-comments", pb],
                           capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
        check(r.returncode == 0 and "records lost on the wire" in r.stdout,
              "go tool pprof -comments: %s%s" % (r.stdout, r.stderr))
        print("    " + r.stdout.strip())


@test
def t_fleet_one_killed(ctx):
    tmp = ctx.tmp
    gs = [Guest(1, "k%d" % i, icount="shift=0,sleep=off") for i in range(3)]
    try:
        for g in gs:
            g.boot(90)
        for g in gs:
            g.burn(1)
        txt = os.path.join(tmp, "fleet.txt")
        # The middle kernel dies 5 s into the 10 s window.
        victim = gs[1]
        killer = threading.Timer(6.0, victim.close)   # ~1 s to start the streams
        killer.start()
        t0 = time.monotonic()
        rc, _, err = record(["-d", "10s", "-e", ELF, "-o", txt] + [g.target for g in gs])
        killer.cancel()
        print("    record took %.1f s; stderr: %s" % (time.monotonic() - t0, err.strip()))
        check(rc == 0, "record of three, one killed: exit %d: %s" % (rc, err))
        check(re.search(r"kernel %s stopped answering at \d+\.\d s" % re.escape(victim.target), err),
              "the killed kernel %s is not named on stderr: %r" % (victim.target, err))
        with open(txt) as f:
            reps = reports(f.read())
        check(sorted(reps) == sorted(g.target for g in gs), "reports for %s" % sorted(reps))
        for g in gs:
            samples, dropped, lost, dgrams, note = figures(reps[g.target])
            print("    %s: %d samples, %d dropped, %d/%d lost on the wire%s" % (
                g.target, samples, dropped, lost, dgrams, note))
            if g is victim:
                check("stopped answering" in note, "%s's report: %r" % (g.target, note))
                check(samples < 900, "%s killed at 5 s has %d samples" % (g.target, samples))
            else:
                check(within(samples, 1000), "%s: %d samples, want 1000 within 5%%" % (g.target, samples))
                check(dropped == 0 and lost == 0 and dgrams == 0 and note == "",
                      "%s: %d dropped, %d/%d lost, %r" % (g.target, dropped, lost, dgrams, note))
    finally:
        for g in gs:
            g.close()


@test
def t_authenticated_7s(ctx):
    """A shell with ushkey=: the stream is asked for, kept alive (7 s is
    past the kernel's 5 s without a keep-alive) and stopped with -k's key."""
    key = os.urandom(32).hex()
    keyfile = os.path.join(ctx.tmp, "key")
    with open(keyfile, "w") as f:
        f.write(key + "\n")
    os.chmod(keyfile, 0o600)
    with Guest(1, "auth", icount="shift=0,sleep=off", append="ushkey=" + key) as g:
        g.boot(90)
        g.burn(1)
        txt = os.path.join(ctx.tmp, "auth.txt")
        rc, _, err = record(["-d", "7s", "-k", keyfile, "-e", ELF, "-o", txt, g.target])
        check(rc == 0, "record -d 7s -k: exit %d: %s" % (rc, err))
        with open(txt) as f:
            samples, dropped, lost, dgrams, note = figures(f.read())
        print("    %d samples (want 700 within 5%%), %d dropped, %d/%d lost%s" % (
            samples, dropped, lost, dgrams, note))
        check(note == "" and err == "", "the stream did not end as asked: %r %r" % (note, err))
        check(within(samples, 700) and dropped == 0 and lost == 0 and dgrams == 0,
              "%d samples, %d dropped, %d/%d lost" % (samples, dropped, lost, dgrams))


def record_on_pty(args):
    """sonde-prof record with its stderr on a terminal (so that it says
    its collector's port and each stream's id); (process, output so far:
    a list the reader thread appends to)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([PROF, "record"] + args, stdout=subprocess.PIPE, stderr=slave, cwd=ROOT)
    os.close(slave)
    out = []

    def reader():
        while True:
            try:
                b = os.read(master, 4096)
            except OSError:
                break
            if not b:
                break
            out.append(b.decode("latin-1"))
        os.close(master)
    threading.Thread(target=reader, daemon=True).start()
    return p, out


def wait_for(out, pattern, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        m = re.search(pattern, "".join(out))
        if m:
            return m
        time.sleep(0.05)
    raise Fail("no %r on the terminal in %d s: %r" % (pattern, seconds, "".join(out)[-500:]))


SPRS = struct.Struct(">IBBHIIQHHBBH")        # the 32-byte header, flags byte apart


def sprs(typ, cpu, sid, seq, payload, count):
    return SPRS.pack(0x53505253, 1, typ, cpu, sid, seq, 0, len(payload), count, 0, 0, 0) + payload


def forge(port, sid, build_id):
    """What an on-path forger who has seen the stream's id could send."""
    def rec(pid):
        return struct.pack(">IBBHQ", pid, 1, 0, 0, 0xffffffff80100000)

    def meta(bid, task):
        src = b"tick 100Hz"
        p = bid.encode() + bytes([len(src)]) + src + struct.pack(">IIIH", 0xffffffff, 6000, 10000000, 1)
        return p + struct.pack(">IB", 9, len(task)) + task
    head = struct.pack(">III", 0, 0, 0)
    dgrams = [sprs(2, 0, sid, 0x7ffffff0, head + rec(7), 1),             # seq ~2^31 ahead
              sprs(2, 0, sid, 70000, head + rec(7), 1),                  # a window ahead
              sprs(2, 7, sid, 5000, head + rec(0x80000000), 1),          # past the END
              sprs(1, 0, sid, 3, meta(build_id, b"x samples=1"), 1),     # refused name
              sprs(1, 0, sid, 4, meta("f" * 40, b"evil"), 1),            # another build
              sprs(2, 0, sid ^ 0x5a5a5a5a, 1, head + rec(7), 1)]         # unknown id
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for d in dgrams:
        s.sendto(d, (HOST, port))
    s.close()
    return len(dgrams)


def forged_record(ctx, name, append, extra):
    with Guest(1, name, icount="shift=0,sleep=off", append=append) as g:
        g.boot(90)
        g.burn(1)
        txt = os.path.join(ctx.tmp, name + ".txt")
        p, out = record_on_pty(["-d", "6s", "-e", ELF, "-o", txt] + extra + [g.target])
        try:
            port = int(wait_for(out, r"to port (\d+) \.\.\.", 20).group(1))
            sid = int(wait_for(out, r"%s: stream 0x([0-9a-f]{8})" % re.escape(g.target), 20).group(1), 16)
            time.sleep(1.0)
            n = forge(port, sid, P.elf_build_id(ELF))
            rc = p.wait(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        time.sleep(0.2)
        err = "".join(out)
        check(rc == 0, "record with forged datagrams: exit %d: %s" % (rc, err))
        with open(txt) as f:
            rep = f.read()
        samples, dropped, lost, dgrams, note = figures(rep)
        print("    %d forged datagrams sent; %d samples (want 600 within 5%%), %d dropped, "
              "%d/%d lost%s" % (n, samples, dropped, lost, dgrams, note))
        check(within(samples, 600) and dropped == 0 and lost == 0 and dgrams == 0,
              "%d samples, %d dropped, %d/%d lost" % (samples, dropped, lost, dgrams))
        check("restarted" not in err and "restarted" not in rep, "taken for a restart: %r" % err)
        return rep, note, err


@test
def t_forged_open(ctx):
    rep, note, err = forged_record(ctx, "forged-open", "", [])
    m = re.search(r"refused (\d+) datagrams \(forged or not sane\), 1 records", note)
    check(m and int(m.group(1)) >= 4, "the refusals are not in the report: %r" % note)
    check("though its shell says its stream runs: ignored" in err,
          "the other build id's META was not put to the shell: %r" % err)


@test
def t_forged_keyed(ctx):
    key = os.urandom(32).hex()
    keyfile = os.path.join(ctx.tmp, "key")
    with open(keyfile, "w") as f:
        f.write(key + "\n")
    os.chmod(keyfile, 0o600)
    rep, note, err = forged_record(ctx, "forged-keyed", "ushkey=" + key, ["-k", keyfile])
    m = re.search(r"refused (\d+) datagrams \(forged or not sane\), 0 records", note)
    check(m and int(m.group(1)) >= 5, "the untagged ones are not refused in the report: %r" % note)
    check("though its shell says" not in err, "an untagged datagram was put to the shell: %r" % err)


class Ctx:
    """A scratch directory per test (also go tool pprof's HOME)."""

    def __init__(self, name):
        self.tmp = tempfile.mkdtemp(prefix="sonde-stream-test.")

    def tails(self):
        return ""

    def finish(self, failed):
        shutil.rmtree(self.tmp, ignore_errors=True)


def main(argv):
    if "--list" in argv:
        for name, _ in TESTS:
            print(name)
        return 0
    if not shutil.which("go"):
        print("go not found (scripts/deps.sh installs it)")
        return runner.totals(0, 1)
    chosen = runner.select(TESTS, [a for a in argv if not a.startswith("-")])
    return runner.run(chosen, Ctx)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
