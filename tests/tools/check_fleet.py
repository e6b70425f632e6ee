#!/usr/bin/env python3
"""sonde-prof record and serve against a fleet of simulated kernels
(build/host/fleet-gen through bench/fleet.py), no QEMU: about 35 s.

- fleet_50: 50 kernels x 4 CPUs x 100 Hz for 10 s, with 2% of the
  batches lost, 1% doubled and 2% reordered on the way: the total ingested
  plus the injected loss is exactly what was sent, sonde-prof accounts
  exactly the injected loss, and every kernel, by its label (its
  HOST:PORT root frame; its own task names), has exactly its own records.
- rotation: 12 kernels, --sample 3 --period 500ms over 5 s: each kernel
  is covered within one period of its fair share (5 s x 3 / 12), the
  kernel-seconds in the report add up to 3 kernels at a time, no more than
  3 kernels ever stream at once, and a kernel streams only as often as
  sonde-prof says it sampled it.
- serve_rotation: `sonde-prof serve --sample 2 --period 500ms` over 6
  kernels for about 3 s: /api/status's covered_ms per kernel within one
  period of its fair share, and never more than 2 kernels streaming.
- serve_200: 200 kernels x 4 CPUs x 100 Hz into a real serve for 5 s
  (bench/fleet.py --serve), 100 /api/flame over the last minute meanwhile:
  /api/status lists all 200, every record sent is in serve's history (0
  lost end to end, none behind, none over the bound), and /api/kernels
  pages them all.

Prints "N passed, M failed" last; exit 0 when none failed."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLEET = os.path.join(ROOT, "bench/fleet.py")
SERVE_LAST = re.compile(r"^serve: (\d+) kernels listed, (\d+) lost, flame p99 (\d+) ms$")
LAST = re.compile(r"^fleet: (\d+) kernels, (\d+) s, (\d+) records sent, (\d+) records ingested, "
                  r"(\d+) lost \(accounted (\d+)\), (\d+) records/s$")
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s" % what)


def fleet(tmp, name, *args):
    out, js = os.path.join(tmp, name + ".folded"), os.path.join(tmp, name + ".json")
    r = subprocess.run([sys.executable, FLEET, "--out", out, "--json", js] + list(args),
                       capture_output=True, text=True, timeout=120)
    last = r.stdout.strip().split("\n")[-1]
    if r.returncode != 0:
        print(r.stdout + r.stderr)
    data = json.load(open(js)) if os.path.exists(js) else {}
    return r.returncode, LAST.match(last), data, out, r.stderr


def folded_kernels(path):
    per = {}
    for line in open(path):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        frames = stack.split(";")
        per.setdefault(frames[0], {}).setdefault(frames[1], 0)
        per[frames[0]][frames[1]] += int(n)
    return per


def fleet_50(tmp):
    rc, m, d, out, _ = fleet(tmp, "f50", "--kernels", "50", "--rate", "100", "--seconds", "10",
                             "--loss", "0.02", "--dup", "0.01", "--reorder", "0.02")
    check(rc == 0 and m, "fleet_50: fleet.py exit %d, last line %r" % (rc, m))
    if not m:
        return
    n, s, sent, got, lost, acc, _ = (int(x) for x in m.groups())
    check((n, s) == (50, 10), "fleet_50: %d kernels, %d s" % (n, s))
    # 10 s x 100 Hz x 4 CPUs x 50 kernels, less the time before each
    # stream's confirmation (a loaded host takes longer to confirm 50).
    check(190000 <= sent <= 200000, "fleet_50: %d records sent, not 190000-200000" % sent)
    check(got + lost == sent, "fleet_50: %d ingested + %d lost != %d sent" % (got, lost, sent))
    check(lost > 0 and acc == lost, "fleet_50: %d lost, %d accounted" % (lost, acc))
    per = folded_kernels(out)
    check(len(per) == 50, "fleet_50: %d kernel labels, not 50" % len(per))
    # Kernel i's tasks are k<i>-t<j> (and idle): each label holds only
    # one kernel's tasks, and every kernel's are different.
    owners = {}
    for kernel, tasks in per.items():
        ks = {t.split("-")[0] for t in tasks if t != "idle"}
        check(len(ks) == 1, "fleet_50: %s holds the tasks of %s" % (kernel, sorted(ks)))
        owners.setdefault(min(ks), []).append(kernel)
    check(len(owners) == 50, "fleet_50: %d distinct kernels' tasks" % len(owners))


def rotation(tmp):
    rc, m, d, out, err = fleet(tmp, "rot", "--kernels", "12", "--rate", "100", "--seconds", "5",
                               "--sample", "3", "--period", "500ms")
    check(rc == 0 and m, "rotation: fleet.py exit %d" % rc)
    if not d:
        return
    cov = {k: v for k, v in d["covered_ms"].items() if k != "total"}
    fair = 5000 * 3 / 12
    check(len(cov) == 12, "rotation: %d kernels accounted" % len(cov))
    for k, ms in sorted(cov.items()):
        check(abs(ms - fair) <= 500, "rotation: %s covered %d ms, fair share %d +- 500"
              % (k, ms, fair))
    check(d["covered_ms"]["total"] == 5000 * 3, "rotation: %d kernel-ms in all, not 15000"
          % d["covered_ms"]["total"])
    check(1 <= d["concurrent_max"] <= 3, "rotation: %d kernels streamed at once"
          % d["concurrent_max"])
    for k, n in d["gen_streams"].items():
        want = cov.get(k, 0) // 500
        check(n == want, "rotation: %s streamed %d times, sampled %d" % (k, n, want))
    check("sampled 3 of 12 kernels at a time, 10 rounds of 0.5 s: 15.0 kernel-s covered"
          in err, "rotation: no coverage line in %r" % err[-300:])


def serve_rotation():
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import fleet as F
    elf = os.path.join(ROOT, "build/x86_64/kernel.elf")
    bid, frames = F.elf_facts(elf)
    gen = subprocess.Popen([F.GEN, "--kernels", "6", "--build-id", bid, "--frames",
                            ",".join("%x" % f for f in frames)],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ports = gen.stdout.readline().split()[1:]
    store = tempfile.TemporaryDirectory(prefix="fleet-rotation-")    # serve's own store
    sv = subprocess.Popen([F.PROF, "serve", "-l", "127.0.0.1:0", "--sample", "2", "--period",
                           "500ms", "-e", elf, "--store", os.path.join(store.name, "serve.db")]
                          + ["127.0.0.1:%s" % p for p in ports],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://[0-9.:]+/", sv.stdout.readline()).group(0)
        t0 = time.monotonic()
        time.sleep(3.2)
        st = json.load(urllib.request.urlopen(url + "api/status", timeout=10))
        elapsed = time.monotonic() - t0
    finally:
        sv.terminate()
        sv.wait(timeout=20)
        gen.stdin.close()
        last = gen.stdout.read().strip().split("\n")[-1]
        gen.wait(timeout=20)
    cov = [k["covered_ms"] for k in st["kernels"]]
    fair = elapsed * 1000 * 2 / 6
    check(len(cov) == 6, "serve_rotation: %d kernels in /api/status" % len(cov))
    for c in cov:
        check(abs(c - fair) <= 500 + 300, "serve_rotation: a kernel covered %d ms, fair share "
              "%d +- a period (and the start's 300 ms)" % (c, fair))
    m = re.search(r"concurrent_max (\d+)", last)
    check(m and 1 <= int(m.group(1)) <= 2, "serve_rotation: %s kernels streamed at once"
          % (m.group(1) if m else "?"))


def serve_200(tmp):
    js = os.path.join(tmp, "s200.json")
    r = subprocess.run([sys.executable, FLEET, "--serve", "--kernels", "200", "--rate", "100",
                        "--seconds", "5", "--json", js], capture_output=True, text=True,
                       timeout=120)
    last = r.stdout.strip().split("\n")[-1]
    m = SERVE_LAST.match(last)
    check(r.returncode == 0 and m, "serve_200: fleet.py exit %d, last line %r" % (r.returncode, last))
    if not m or not os.path.exists(js):
        print(r.stdout + r.stderr[-2000:])
        return
    d = json.load(open(js))
    check(int(m.group(1)) == 200, "serve_200: %s kernels listed, not 200" % m.group(1))
    check(int(m.group(2)) == 0, "serve_200: %s records lost end to end" % m.group(2))
    # 5 s x 100 Hz x 4 CPUs x 200 kernels, less each stream's start.
    check(380000 <= d["sent"] <= 400000, "serve_200: %d records sent" % d["sent"])
    check(d["got"] == d["sent"] == d["received"], "serve_200: sent %d, received %d, in the "
          "history %d" % (d["sent"], d["received"], d["got"]))
    check(d["behind"] == 0 and d["over"] == 0, "serve_200: %d behind, %d over the bound"
          % (d["behind"], d["over"]))
    check(d["pages_listed"] == 200, "serve_200: /api/kernels paged %d" % d["pages_listed"])
    check(d["states"] == {"streaming": 200}, "serve_200: states %r" % d["states"])
    check(len(d["flame_ms"]) == 100, "serve_200: %d flame requests" % len(d["flame_ms"]))


def main():
    with tempfile.TemporaryDirectory(prefix="check_fleet.") as tmp:
        fleet_50(tmp)
        rotation(tmp)
        serve_rotation()
        serve_200(tmp)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
