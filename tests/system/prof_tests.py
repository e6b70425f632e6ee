#!/usr/bin/env python3
"""Sonde's host profiler end to end: `sonde-prof record` against running
kernels, its outputs read by the tools people read them with.

usage: python3 tests/system/prof_tests.py [--list] [NAME...]

Boots one x86_64 and one arm64 kernel side by side, each at -smp 1 under
`-icount shift=0,sleep=off` with `burn` running: there the profile's
figures are exact (burn_spin holds 100% of the x86 tick's samples and
99.9-100% of the arm64 counter's, measured), so a threshold of 90% can
only fail on a wrong result, never on a loaded host. Each guest's UDP
shell (port 9000) is forwarded from a free port on 127.0.0.1; every host
socket and request stays on 127.0.0.1. Both guests take one host thread
each (icount runs a guest's vCPUs in turn), so the run fits a 2-core host.

Checks: `go tool pprof -top` and `-list` on the .pb.gz of each
architecture; the .folded burn chain root first, its counts summing to
the raw header's samples (kept with -r); the .svg through xmllint with a
burn_spin frame; two kernels in one pprof, each sample labelled with its
HOST:PORT (`-tags`); and the errors: the other architecture's ELF (exit
2), a kernel already profiling (`profile: busy`, exit 1), nothing
listening (exit 1), no answer (timeout after the resends, exit 2), an
ELF without DWARF (a warning, exit 0), an unknown extension (exit 2). No
error leaves an output file. And `sonde-prof top` live on the x86
kernel under tmux: burn_spin on its screen within 3 s, q quits.

Prints 'PASS name (secs)' or 'FAIL name (secs): reason' and ends with
'N passed, N failed' (nothing retries). Needs `make` and `make
ARCH=arm64` done, go (golang-go) and xmllint. Python 3 standard library.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from qemu import ARCHES, Fail, Machine, ROOT, free_port, check, NICS  # noqa: E402

PROF = os.path.join(ROOT, "build", "host", "sonde-prof")
ELF = {a: ARCHES[a]["kernel"] for a in ARCHES}
HOST = "127.0.0.1"
LIFETIME = 150.0                 # seconds: each QEMU dies after this, whatever happens
BURN_CHAIN = "burn_task;burn_outer;burn_middle;burn_inner;burn_spin"


class Guest(Machine):
    """One kernel at -smp 1 under icount, its UDP shell on HOST:port."""

    def __init__(self, arch):
        self.port = free_port()
        fwd = "user,id=n0,hostfwd=udp:%s:%d-:9000" % (HOST, self.port)
        Machine.__init__(self, smp=1, append="udpshell=9000", arch=arch, lifetime=LIFETIME,
                         name=arch, icount="shift=0,sleep=off",
                         extra=["-netdev", fwd, "-device", NICS[arch]])
        self.target = "%s:%d" % (HOST, self.port)


class World:
    """The two guests, booted once with burn running, and a scratch
    directory (also go tool pprof's HOME: it keeps state there)."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="sonde-prof-test.")
        self.env = dict(os.environ, HOME=self.tmp)
        self.g = {}
        for a in ("x86_64", "arm64"):
            self.g[a] = Guest(a)              # both start before either is waited for
        for a, g in self.g.items():
            g.boot(60)
            out = g.cmd("burn 600000")
            check(out.startswith("burn: 600000 ms"), "%s: burn did not start: %r" % (a, out))

    def path(self, name):
        return os.path.join(self.tmp, name)

    def close(self):
        for g in self.g.values():
            g.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


W = []


def world():
    if not W:
        W.append(World())
    return W[0]


def record(args, timeout=90):
    """sonde-prof record ARGS: (exit status, stdout, stderr). Unless ARGS
    say otherwise, -t 30: under icount a guest's window is guest time,
    and on a loaded host 1000 ms of it took up to 3 s (measured), more
    than the default 5 s of slack allows for once a request waits behind
    another; the slack costs nothing when the answer comes."""
    if "-t" not in args:
        args = ["-t", "30"] + args
    try:
        r = subprocess.run([PROF, "record"] + args, capture_output=True, text=True,
                           timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        raise Fail("sonde-prof record %s: still running after %d s" % (" ".join(args), timeout))
    return r.returncode, r.stdout, r.stderr


def record_ok(args):
    rc, _, err = record(args)
    check(rc == 0, "sonde-prof record %s: exit %d: %s" % (" ".join(args), rc, err))
    return err


def pprof(w, *args):
    # Run from the tree's root: -list finds kernel/cmd/burn.c there.
    r = subprocess.run(["go", "tool", "pprof", "-symbolize=none"] + list(args),
                       capture_output=True, text=True, timeout=60, cwd=ROOT, env=w.env)
    check(r.returncode == 0, "go tool pprof %s: exit %d: %s" % (" ".join(args), r.returncode,
                                                              r.stderr))
    return r.stdout


def no_output(w, name):
    """Neither the file nor a temporary one beside it."""
    left = [f for f in os.listdir(w.tmp) if f == name or f.startswith(name + ".tmp.")]
    check(not left, "an error left %s behind" % left)


# ---- tests -------------------------------------------------------------------

TESTS = []


def test(fn):
    TESTS.append((fn.__name__[2:], fn))
    return fn


def top_and_list(arch):
    w = world()
    out = w.path("%s.pb.gz" % arch)
    record_ok(["-d", "1000", "-e", ELF[arch], "-o", out, w.g[arch].target])
    top = pprof(w, "-top", out)
    rows = top.split("flat%", 1)[-1].splitlines()[1:]
    check(rows, "no rows in pprof -top:\n%s" % top)
    first = rows[0].split()
    print("    %s" % "\n    ".join(top.strip().splitlines()[-len(rows) - 2:][:6]))
    check(first[-1] == "burn_spin", "pprof -top lists %s first, not burn_spin:\n%s" % (first[-1], top))
    flat = float(first[1].rstrip("%"))
    check(flat >= 90.0, "burn_spin has %.2f%% flat, want at least 90%%:\n%s" % (flat, top))
    lst = pprof(w, "-list", "burn_spin", out)
    check(re.search(r"ROUTINE =+ burn_spin in kernel/cmd/burn\.c", lst),
          "pprof -list burn_spin names no kernel/cmd/burn.c:\n%s" % lst)
    # Lines of kernel/cmd/burn.c with samples on them: the loop's (its test
    # or its body: which one takes a sample is the emulator's choice).
    check(re.search(r"^ +[0-9.]+m?s +[0-9.]+m?s +2[01]: ", lst, re.M),
          "pprof -list burn_spin shows no sampled line of kernel/cmd/burn.c:\n%s" % lst)


@test
def t_x86_pprof_top_and_list(_):
    top_and_list("x86_64")


@test
def t_arm64_pprof_top_and_list(_):
    top_and_list("arm64")


@test
def t_folded_burn_chain_sums_to_samples(_):
    w = world()
    out, raw = w.path("p.folded"), w.path("p.raw")
    record_ok(["-d", "1000", "-r", raw, "-e", ELF["x86_64"], "-o", out, w.g["x86_64"].target])
    with open(raw) as f:
        m = re.match(r"# sonde raw build-id=[0-9a-f]{40} source=.* samples=(\d+) ", f.readline())
    check(m, "the kept raw profile has no header")
    samples = int(m.group(1))
    with open(out) as f:
        lines = f.read().splitlines()
    total = sum(int(l.rsplit(" ", 1)[1]) for l in lines)
    check(total == samples and samples > 0,
          "folded counts add up to %d, the raw header says samples=%d" % (total, samples))
    chain = [l for l in lines if re.match(r"^burn;(task_start;)?%s \d+$" % BURN_CHAIN, l)]
    check(chain, "no root-first burn chain (burn;...;%s) in:\n%s" % (BURN_CHAIN, "\n".join(lines)))
    print("    %s (of %d samples)" % (chain[0], samples))


@test
def t_svg_flame_graph(_):
    w = world()
    out = w.path("p.svg")
    record_ok(["-d", "500", "-e", ELF["arm64"], "-o", out, w.g["arm64"].target])
    r = subprocess.run(["xmllint", "--noout", out], capture_output=True, text=True)
    check(r.returncode == 0, "xmllint: %s" % r.stderr)
    with open(out) as f:
        svg = f.read()
    check(re.search(r"<title>burn_spin \(\d+ samples, [0-9.]+%\)</title>", svg),
          "no frame titled burn_spin in the SVG")


@test
def t_two_kernels_one_pprof(_):
    w = world()
    out = w.path("both.pb.gz")
    x, a = w.g["x86_64"], w.g["arm64"]
    t0 = time.monotonic()
    record_ok(["-d", "1000", "-e", ELF["x86_64"], "-e", ELF["arm64"], "-o", out,
               x.target, a.target])
    dt = time.monotonic() - t0
    tags = pprof(w, "-tags", out)
    for g in (x, a):
        check(re.search(r"^\s+\S+ \(\s*[0-9.]+%%\): %s$" % re.escape(g.target), tags, re.M),
              "pprof -tags lacks kernel %s:\n%s" % (g.target, tags))
    print("    kernels: %s and %s, %.1f s for one 1000 ms window" % (x.target, a.target, dt))
    folded = w.path("both.folded")
    record_ok(["-d", "200", "--per-kernel", "-e", ELF["x86_64"], "-e", ELF["arm64"], "-o",
               folded, x.target, a.target])
    with open(folded) as f:
        roots = set(l.split(";", 1)[0] for l in f)
    check(roots == {x.target, a.target}, "--per-kernel roots %s" % sorted(roots))


@test
def t_wrong_elf_refused(_):
    w = world()
    x = w.g["x86_64"]
    rc, _, err = record(["-d", "100", "-e", ELF["arm64"], "-o", w.path("wrong.pb.gz"), x.target])
    check(rc == 2, "the arm64 ELF for the x86 kernel: exit %d, want 2: %s" % (rc, err))
    check(re.search(r"build id mismatch: %s was recorded on a kernel with build id [0-9a-f]{40}, "
                    r"but .*arm64/kernel\.elf has build id [0-9a-f]{40}" % re.escape(x.target), err),
          "message: %r" % err)
    no_output(w, "wrong.pb.gz")


@test
def t_busy_kernel_exit_1(_):
    """A kernel whose serial shell is running a profile answers the UDP
    shell's `profile` with `profile: busy`: the kernel said no."""
    w = world()
    x = w.g["x86_64"]
    res = {}
    start = x.mark()

    def serial():
        try:
            res["out"] = x.cmd("profile 2000", timeout=60)
        except Fail as e:
            res["err"] = str(e)
    th = threading.Thread(target=serial)
    th.start()
    try:
        # The echo comes back when the shell has the line; the profile
        # then holds the profiler for 2 s of guest time.
        x.wait_for(r"profile 2000\n", 10, start)
        rc, _, err = record(["-d", "100", "-e", ELF["x86_64"], "-o", w.path("busy.txt"), x.target])
        running = th.is_alive()
    finally:
        th.join(60)
    check(running, "the serial profile ended before record asked: %r" % res)
    check(rc == 1 and err == "sonde-prof: %s said: profile: busy\n" % x.target,
          "record during a serial profile: exit %d, %r" % (rc, err))
    no_output(w, "busy.txt")
    check(res.get("out", "").startswith("profiled 2000 ms"), "the serial profile: %r" % res)


@test
def t_nobody_listening_exit_1(_):
    w = world()
    rc, _, err = record(["-d", "100", "-e", ELF["x86_64"], "-o", w.path("none.svg"),
                         "%s:%d" % (HOST, free_port())], timeout=20)
    check(rc == 1 and "refused the request: nothing listens there" in err,
          "exit %d: %r" % (rc, err))
    no_output(w, "none.svg")


@test
def t_no_answer_times_out_exit_2(_):
    w = world()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((HOST, 0))                   # takes every request, answers none
    try:
        t0 = time.monotonic()
        rc, _, err = record(["-d", "100", "-t", "1", "-e", ELF["x86_64"], "-o",
                             w.path("silent.svg"), "%s:%d" % (HOST, s.getsockname()[1])],
                            timeout=20)
        dt = time.monotonic() - t0
        s.setblocking(False)
        sends = 0
        try:
            while s.recv(2048):
                sends += 1
        except BlockingIOError:
            pass
    finally:
        s.close()
    check(rc == 2 and "timeout: no reply from" in err and "sent 2 times" in err,
          "exit %d: %r" % (rc, err))
    # 1.1 s of silence allowed: the request and one resend after 1 s.
    check(sends == 2 and dt < 10, "%d requests in %.1f s" % (sends, dt))
    no_output(w, "silent.svg")


@test
def t_elf_without_dwarf_warns(_):
    w = world()
    nodebug = w.path("nodebug.elf")
    subprocess.run(["objcopy", "--strip-debug", ELF["x86_64"], nodebug], check=True)
    out = w.path("nd.txt")
    err = record_ok(["-d", "200", "-e", nodebug, "-o", out, w.g["x86_64"].target])
    check(re.search(r"warning: .*nodebug\.elf has no DWARF debug info: names come from the ELF "
                    r"symbol table", err), "no warning: %r" % err)
    with open(out) as f:
        txt = f.read()
    check(re.search(r"^\d+\.\d% \d+ burn_spin\+0x[0-9a-f]+(\.\.0x[0-9a-f]+)? \(\?\?:0\)$", txt, re.M),
          "no burn_spin by its ELF symbol:\n%s" % txt)


@test
def t_unknown_extension_exit_2(_):
    w = world()
    rc, _, err = record(["-e", ELF["x86_64"], "-o", w.path("p.pdf"), w.g["x86_64"].target])
    check(rc == 2 and "unknown extension (known: .pb.gz, .folded, .svg, .txt, .html)" in err,
          "exit %d: %r" % (rc, err))
    no_output(w, "p.pdf")



def tmux(w, *args):
    return subprocess.run(["tmux", "-S", w.path("tmux.sock"), "-f", "/dev/null"] + list(args),
                          capture_output=True, text=True, timeout=10)


@test
def t_top_live_under_tmux(_):
    """sonde-prof top on the live x86 kernel in an 80x24 tmux: burn_spin
    on screen, selected at the top, within 3 s of the screen's first
    drawing; q ends it (exit 0) and stops the stream, so the kernel takes
    a record at once after."""
    w = world()
    g = w.g["x86_64"]
    rcfile, errfile = w.path("top.rc"), w.path("top.err")
    cmd = "%s top -e %s %s 2> %s; echo $? > %s; sleep 60" % (PROF, ELF["x86_64"], g.target,
                                                             errfile, rcfile)
    env_term = os.environ.get("TERM") or "xterm"
    r = subprocess.run(["env", "TERM=" + env_term, "tmux", "-S", w.path("tmux.sock"), "-f",
                        "/dev/null", "new-session", "-d", "-s", "top", "-x", "80", "-y", "24",
                        cmd], capture_output=True, text=True, timeout=10)
    check(r.returncode == 0, "tmux new-session: %s" % r.stderr)
    try:
        t0 = time.monotonic()
        shown = seen = None
        screen = ""
        while time.monotonic() - t0 < 20:
            screen = tmux(w, "capture-pane", "-p", "-t", "top").stdout
            if shown is None and screen.startswith("sonde-prof top  %s" % g.target):
                shown = time.monotonic()
            if shown is not None and re.search(r"^> +[0-9.]+ +[0-9.]+  burn_spin$", screen, re.M):
                seen = time.monotonic()
                break
            if shown is not None and time.monotonic() - shown > 3 or os.path.exists(rcfile):
                break
            time.sleep(0.1)
        err = open(errfile).read() if os.path.exists(errfile) else ""
        check(shown is not None, "no top screen in %.1f s:\n%s%s" % (time.monotonic() - t0,
                                                                     screen, err))
        check(seen is not None, "burn_spin not first within 3 s of the screen:\n%s%s" % (screen, err))
        print("    screen after %.1f s, burn_spin after %.1f s more" % (shown - t0, seen - shown))
        print("    %s" % "\n    ".join(screen.splitlines()[:6]))
        tmux(w, "send-keys", "-t", "top", "q")
        t1 = time.monotonic()
        while not os.path.exists(rcfile) and time.monotonic() - t1 < 5:
            time.sleep(0.1)
        time.sleep(0.1)
        rc = open(rcfile).read().strip() if os.path.exists(rcfile) else None
        check(rc == "0", "after q: exit %s in %.1f s: %s" % (rc, time.monotonic() - t1,
                                                             open(errfile).read()))
    finally:
        tmux(w, "kill-server")
    # The stream was stopped: the kernel is not busy.
    record_ok(["-d", "500", "-e", ELF["x86_64"], "-o", w.path("after-top.folded"), g.target])


class Ctx:
    def __init__(self, name):
        self.name = name

    def tails(self):
        return "\n".join(runner.quoted_tail(g, 0, 600) for g in (W[0].g.values() if W else []))

    def finish(self, failed):
        pass


def main(argv):
    if "--list" in argv:
        for name, _ in TESTS:
            print(name)
        return 0
    for tool in ("go", "xmllint", "objcopy", "tmux"):
        if not shutil.which(tool):
            print("%s not found (scripts/deps.sh installs it)" % tool)
            return runner.totals(0, 1)
    chosen = runner.select(TESTS, [a for a in argv if not a.startswith("-")])
    try:
        return runner.run(chosen, Ctx)
    finally:
        if W:
            W[0].close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
