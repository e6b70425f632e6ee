#!/usr/bin/env python3
"""Two live x86_64 kernels under QEMU (as tests/system/stream_tests.py
starts them: -smp 1, the UDP shell forwarded from a free port on
127.0.0.1) and `sonde-prof serve -l 127.0.0.1:0` watching both, for the
browser tests of serve (tests/browser/serve_live.js).

Prints one JSON line once serve listens:
  {"url": "http://127.0.0.1:PORT/", "kernels": ["127.0.0.1:P0", "127.0.0.1:P1"]}
then takes commands on stdin, one a line, each answered with one line
("ok ..." or "error ..."):
  burn K      `burn 600000` on kernel K's serial console
  kill K      kernel K's QEMU killed (it stops answering at once)
Closing stdin (or a kill) ends serve and both QEMUs. Python 3 standard
library."""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'system'))
from qemu import ARCHES, Machine, ROOT, free_port  # noqa: E402

PROF = os.path.join(ROOT, 'build', 'host', 'sonde-prof')
ELF = ARCHES['x86_64']['kernel']
NIC = 'virtio-net-pci,netdev=n0,disable-modern=on'
LIFETIME = 120.0          # whatever happens to the test, QEMU dies by then


class Guest(Machine):
    def __init__(self, name):
        self.port = free_port()
        fwd = 'user,id=n0,hostfwd=udp:127.0.0.1:%d-:9000' % self.port
        Machine.__init__(self, smp=1, append='udpshell=9000', arch='x86_64', lifetime=LIFETIME,
                         name=name, extra=['-netdev', fwd, '-device', NIC])
        self.target = '127.0.0.1:%d' % self.port


def say(line):
    sys.stdout.write(line + '\n')
    sys.stdout.flush()


def main():
    guests = []
    serve = None
    try:
        guests = [Guest('k0'), Guest('k1')]
        # Both boot at once; each waits for its own prompt.
        errs = []

        def boot(g):
            try:
                g.boot(60)
                # The shell answers once the UDP shell is up: the prompt
                # comes after it (kernel/netboot.c).
            except Exception as e:     # noqa: BLE001 (said below)
                errs.append('%s: %s' % (g.name, e))
        ts = [threading.Thread(target=boot, args=(g,)) for g in guests]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errs:
            say('error ' + '; '.join(errs))
            return 1
        # A store of its own, gone with the run (the default one in the
        # working directory would hold every earlier test's kernels).
        store_dir = tempfile.TemporaryDirectory(prefix='serve-live-')
        serve = subprocess.Popen([PROF, 'serve', '-l', '127.0.0.1:0', '-e', ELF, '--store',
                                  os.path.join(store_dir.name, 'serve.db')] +
                                 [g.target for g in guests], stdout=subprocess.PIPE,
                                 stderr=sys.stderr, text=True, cwd=ROOT)
        line = serve.stdout.readline()
        m = re.search(r'(http://127\.0\.0\.1:\d+/)', line)
        if not m:
            say('error serve did not start: %r' % line)
            return 1
        say(json.dumps({'url': m.group(1), 'kernels': [g.target for g in guests]}))
        for cmd in sys.stdin:
            f = cmd.split()
            if len(f) != 2 or f[0] not in ('burn', 'kill') or not f[1].isdigit() or \
                    int(f[1]) >= len(guests):
                say('error unknown command %r (burn K, kill K; K 0-%d)' % (cmd.strip(),
                                                                          len(guests) - 1))
                continue
            g = guests[int(f[1])]
            if f[0] == 'burn':
                out = g.cmd('burn 600000')
                say(('ok ' if out.startswith('burn: 600000 ms') else 'error ') + out.strip()[:80])
            else:
                g.close()
                say('ok killed %s' % g.target)
        return 0
    finally:
        if serve and serve.poll() is None:
            serve.terminate()
            try:
                serve.wait(5)
            except subprocess.TimeoutExpired:
                serve.kill()
        for g in guests:
            g.close()


if __name__ == '__main__':
    sys.exit(main())
