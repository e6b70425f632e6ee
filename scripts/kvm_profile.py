#!/usr/bin/env python3
"""Boot Sonde on a KVM host with the host's CPU (-enable-kvm -cpu host), so
the performance-counter path runs on a real counter: lscpu, then burn and
profile. Prints the session and writes it to the file given.

usage: scripts/kvm_profile.py [--qemu PATH] [--out FILE] [--smp N]
"""
import argparse, os, re, subprocess, sys, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--out", default=None)
    ap.add_argument("--smp", default="4")
    ap.add_argument("--extra", default="", help="extra qemu arguments")
    ap.add_argument("--cmds", default="lscpu;profile 500;burn 4000;profile 1000 all 3;"
                    "profile 500 all 3;cpus;burn stop",
                    help="shell commands, separated by ';'")
    a = ap.parse_args()
    if not os.path.exists("/dev/kvm"):
        sys.exit("kvm_profile: no /dev/kvm on this machine")
    cmd = [a.qemu, "-enable-kvm", "-cpu", "host", "-smp", a.smp, "-m", "512M",
           "-display", "none", "-serial", "stdio", "-no-reboot",
           "-kernel", os.path.join(ROOT, "build/x86_64/kernel.elf")] + a.extra.split()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    buf = bytearray()
    lock = threading.Lock()

    def reader():
        while True:
            b = p.stdout.read1(4096)
            if not b:
                return
            with lock:
                buf.extend(b)

    threading.Thread(target=reader, daemon=True).start()

    def wait_prompt(start, timeout):
        end = time.time() + timeout
        while time.time() < end:
            with lock:
                if b"\n> " in bytes(buf[start:]):
                    return True
            if p.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def run(line, timeout=30):
        with lock:
            start = len(buf)
        p.stdin.write(line.encode() + b"\r")
        p.stdin.flush()
        wait_prompt(start, timeout)

    try:
        ok = wait_prompt(0, 60)
        if ok:
            for line in a.cmds.split(";"):
                run(line.strip(), 120)
    finally:
        p.kill()
        p.wait(timeout=10)
    text = buf.decode(errors="replace").replace("\r", "")
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
