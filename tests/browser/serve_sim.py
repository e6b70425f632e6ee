#!/usr/bin/env python3
"""A fleet of simulated kernels (build/host/fleet-gen, as bench/fleet.py
starts it) and `sonde-prof serve -l 127.0.0.1:0` watching them all, for
the browser test of serve's page at a fleet's size
(tests/browser/serve_fleet_page.js). No QEMU.

usage: serve_sim.py KERNELS RATE

Prints one JSON line once serve listens:
  {"url": "http://127.0.0.1:PORT/", "kernels": ["127.0.0.1:P0", ...]}
and runs until stdin closes (or a kill), then stops serve and the
generator. Python 3 standard library."""
import json
import os
import re
import subprocess
import sys
import tempfile
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, 'bench'))
import fleet as F  # noqa: E402


def main():
    n, rate = int(sys.argv[1]), int(sys.argv[2])
    elf = os.path.join(ROOT, 'build/x86_64/kernel.elf')
    bid, frames = F.elf_facts(elf)
    a = types.SimpleNamespace(kernels=n, rate=rate, cpus=2, stacks=8, loss=0, dup=0,
                              reorder=0, seed=1)
    gen, hosts = F.start_gen(a, bid, frames)
    # A store of its own, gone with the run (the default one in the working
    # directory would hold every earlier test's kernels).
    tmp = tempfile.TemporaryDirectory(prefix='serve-sim-')
    sv = subprocess.Popen([F.PROF, 'serve', '-l', '127.0.0.1:0', '-e', elf,
                           '--store', os.path.join(tmp.name, 'serve.db')] + hosts,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        m = re.search(r'http://[0-9.:]+/', sv.stdout.readline())
        print(json.dumps({'url': m.group(0) if m else None, 'kernels': hosts}), flush=True)
        sys.stdin.read()
    finally:
        sv.terminate()
        sv.wait(timeout=30)
        F.gen_totals(gen)


if __name__ == '__main__':
    main()
