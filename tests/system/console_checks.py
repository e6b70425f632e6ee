"""tests/system/console_checks.py: the serial console's input path, the same
on every architecture: a paste much larger than the UART's FIFO and a line
longer than the line editor's limit must lose nothing (kernel/console_rx.c)."""
import re

from qemu import PROMPT, check

PASTE_COMMANDS = 500


def check_paste(m, timeout=120):
    """500 numbered echoes, each behind a `help` (about 10 KB in one write,
    as a paste arrives): every echo runs, in order, and the console counts
    nothing lost. The `help`s make the shell slower than the line, so the
    paste outruns it: before the console applied backpressure, arm64 ran
    227 of the 500 echoes (its receive ring threw bytes away when full)."""
    lines = []
    for i in range(PASTE_COMMANDS):
        lines += ["help", "echo paste-%03d" % i]
    blob = "".join(l + "\r" for l in lines)
    check(len(blob) >= 5000, "the paste is only %d bytes" % len(blob))
    start = m.mark()
    m.send(blob)
    last = m.wait_for(r"(?m)^paste-%03d\r?$" % (PASTE_COMMANDS - 1), timeout, start)
    got = re.findall(r"(?m)^paste-(\d{3})\r?$", m.text(start))
    want = ["%03d" % i for i in range(PASTE_COMMANDS)]
    missing = sorted(set(want) - set(got))
    check(not missing, "%d of %d pasted commands did not run (first missing: %s)" % (
        len(missing), PASTE_COMMANDS, missing[:5]))
    check(got == want, "pasted commands ran out of order or twice")
    m.wait_for(PROMPT, timeout, last.end())     # the last command's prompt
    st = m.cmd("console")
    f = re.search(r"(\d+) received, (\d+) lost \(uart overruns\), throttled (\d+) times", st)
    check(f, "console: unexpected output %r" % st)
    check(f.group(2) == "0", "console reports bytes lost: %r" % st)
    # Every byte of the paste went through the ring (a console that
    # dropped bytes and still ran the commands cannot exist, but one that
    # miscounts can).
    check(int(f.group(1)) >= len(blob), "console received %s bytes of a %d-byte paste" % (
        f.group(1), len(blob)))


def check_long_line(m, timeout=60):
    """A 10 KB line, then a command: the long line is refused by name, and
    its CR is not lost, so the next command runs on its own (it used to be
    swallowed into the long line on arm64)."""
    start = m.mark()
    m.send("x" * 10000 + "\r" + "echo after-long-line\r")
    m.wait_for(r"(?m)^after-long-line\r?$", timeout, start)
    out = m.text(start)
    check(re.search(r"line too long \(at most \d+ bytes\): ignored", out),
          "no 'line too long' answer to a 10 KB line")
