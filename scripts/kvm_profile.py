#!/usr/bin/env python3
"""Boot Sonde on a KVM host with the host's CPU (-enable-kvm -cpu host), so
the performance-counter path runs on a real counter: lscpu, then burn and
profile. Prints the session and writes it to the file given.

usage: scripts/kvm_profile.py [--qemu PATH] [--out FILE] [--smp N]
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
from qemu import Fail, Machine  # noqa: E402

BOOT_S, CMD_S = 60, 120              # waits for the first prompt and after each command


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--out", default=None)
    ap.add_argument("--smp", default="4")
    ap.add_argument("--cpu", default="host",
                    help="the -cpu model (QEMU 7.2 on some nested hosts needs host,-arch-capabilities)")
    ap.add_argument("--extra", default="", help="extra qemu arguments")
    ap.add_argument("--cmds", default="lscpu;profile 500;burn 4000;profile 1000 all 3;"
                    "profile 500 all 3;cpus;burn stop",
                    help="shell commands, separated by ';'")
    a = ap.parse_args()
    if not os.path.exists("/dev/kvm"):
        sys.exit("kvm_profile: no /dev/kvm on this machine")
    lines = [l.strip() for l in a.cmds.split(";")]
    try:
        m = Machine(qemu=a.qemu, cpu=a.cpu, smp=a.smp, append=None, name="kvm",
                    extra=["-enable-kvm"] + a.extra.split(),
                    lifetime=BOOT_S + CMD_S * len(lines) + 30)
    except Fail as e:
        sys.exit("kvm_profile: %s" % e)
    ok = True
    try:
        m.boot(BOOT_S)
        for line in lines:
            try:
                m.cmd(line, CMD_S)
            except Fail as e:
                # As before: a command that does not come back to the
                # prompt is reported and the next one is sent anyway.
                print("kvm_profile: %s" % e, file=sys.stderr)
                if not m.alive():
                    break
    except Fail as e:
        print("kvm_profile: %s" % e, file=sys.stderr)
        ok = False
    finally:
        # Taken before close(): QEMU answers its SIGTERM with a line of its own.
        text = m.text()
        m.close()
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
