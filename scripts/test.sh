#!/usr/bin/env bash
# make test: every stage runs even if an earlier one failed; each ends with
# "N passed, N failed", and the last line adds them up. A stage
# whose file is missing, that times out, or that prints no result line is
# a failure: nothing here can pass by not running. No test is retried.
#
# The stages run one after another: the kernels' tests have the machine
# to themselves, as some check figures of a guest running in real time.
# The unit tests and the fuzzers use every CPU. A summary at the end
# lists every stage with its time.
set -u
cd "$(dirname "$0")/.."
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT

# stage NAME SECONDS FILE CMD...: FILE is what the stage runs (it must
# exist). Writes "PASSED FAILED SECONDS" to $res/NAME, and NAME to the
# list of stages that ran, $res/order.
stage() {
  local name=$1 secs=$2 file=$3; shift 3
  local t0=$SECONDS p=0 f=0
  echo "$name" >> "$res/order"
  echo "=== $name: $*"
  if [ ! -f "$file" ]; then
    echo "$name: FAILED: $file is missing"
    echo "0 1 0" > "$res/$name"; return
  fi
  local log; log=$(mktemp)
  # --kill-after: a stage that ignores SIGTERM is killed; the runners
  # close their QEMUs on SIGTERM.
  timeout --kill-after=15 "$secs" "$@" 2>&1 | tee "$log"
  local st=${PIPESTATUS[0]}
  local line; line=$(grep -E '^(unit: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  rm -f "$log"
  if [[ "$line" =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    p=${BASH_REMATCH[1]}; f=${BASH_REMATCH[2]}
  else
    f=$((f + 1)); echo "$name: no result line"
  fi
  if [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
    # With no result line, that is already the one failure.
    echo "$name: FAILED: timed out after $secs s"; [ -n "$line" ] && f=$((f + 1))
  elif [ "$st" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "$name: FAILED: exit status $st with no test failed"; f=1
  fi
  echo "=== $name: $p passed, $f failed in $((SECONDS - t0)) s"
  echo "$p $f $((SECONDS - t0))" > "$res/$name"
}

# Both kernels first: a stage's time is its tests'.
built=yes
make -s ARCH=arm64 all > "$res/arm64-build.log" 2>&1 ||
  { built=no; echo "arm64: build failed"; tail -20 "$res/arm64-build.log"; }

stage tree 60 scripts/check_tree.sh bash scripts/check_tree.sh
# Two tests at once, one a CPU (UNIT_JOBS), each source compiled once: about 45 s.
stage unit 600 scripts/unit.sh bash scripts/unit.sh
# Each libFuzzer target over its corpus (every crash ever found), then
# 3 s of fuzzing each (make fuzz: a minute each), two at once: about 60 s,
# most of it building the targets.
FUZZ_SECONDS=${FUZZ_SECONDS:-3} stage fuzz 300 scripts/fuzz.sh bash scripts/fuzz.sh
stage tools 300 tests/tools/check_sonde_prof.sh bash tests/tools/check_sonde_prof.sh
# sonde-prof serve against malformed HTTP requests, kernels that cannot stream (retried)
# and a keyed one (-k), fake kernels on loopback: about 5 s.
stage serve-http 60 tests/tools/check_serve_http.py python3 tests/tools/check_serve_http.py
# sonde-prof serve tried as an attacker would (issue 35): bytes not UTF-8, foreign
# Host headers, trickling clients (the 10 s request deadline), forged seq jumps, a
# flood of foreign stream ids, hostile .pb.gz files: about 40 s.
stage serve-hostile 90 tests/tools/check_serve_hostile.py python3 tests/tools/check_serve_hostile.py
# serve's collector apart from HTTP: a 7 s request ends no stream; a kernel
# whose stream ended on a timeout, or that restarted, streams again: about 15 s.
stage serve-stall 60 tests/tools/check_serve_stall.py python3 tests/tools/check_serve_stall.py
# serve's store: kill -9 and a restart on SQLite and on PostgreSQL, two
# serves into one PostgreSQL (a throwaway cluster, scripts/pg.sh): about 30 s.
stage serve-store 90 tests/tools/check_serve_store.py python3 tests/tools/check_serve_store.py
# record -d over 2 s against fake kernels on loopback: about 30 s.
stage stream-tools 120 tests/tools/check_stream_record.sh bash tests/tools/check_stream_record.sh
# a fleet of 50 simulated kernels for 10 s, 12 sampled 3 at a time, serve sampling 2 of 6,
# serve holding 200 for 5 s: about 35 s.
stage fleet 120 tests/tools/check_fleet.py python3 tests/tools/check_fleet.py
# sonde-prof's web pages in headless chromium (tests/browser/): one QEMU
# boot, 1 s of burn, 30 tests of pages (13 of the trace page, on a trace
# made by the test): about 30 s.
stage browser 120 tests/browser/run.js node tests/browser/run.js
# sonde-prof serve's page in headless chromium with two live x86_64
# kernels (QEMU, -smp 1 each): about 25 s.
stage serve 120 tests/browser/serve_live.js node tests/browser/serve_live.js
# serve's page over 120 simulated kernels (no QEMU): the list paged and
# searched, the fleet's flame and timeline: about 12 s.
stage serve-fleet 90 tests/browser/serve_fleet_page.js node tests/browser/serve_fleet_page.js
stage x86_64 600 tests/system/run.py python3 tests/system/run.py
stage network 300 tests/system/net_tests.py python3 tests/system/net_tests.py --arch x86_64
# off-CPU, wall and latency profiles of burn wait: about 10 s.
stage offcpu 120 tests/system/offcpu_tests.py python3 tests/system/offcpu_tests.py --arch x86_64
# lockstat's exact counts of burn lock's probe, a window, unnamed locks: about 15 s.
stage locks 120 tests/system/lock_tests.py python3 tests/system/lock_tests.py --arch x86_64
# traces of burn pingpong at -smp 4 under -icount: switches, runs, ticks, delays, the raw
# trace, record --trace (a window's and a stream's), and a 2 s trace of the 10,000/s
# ping-pong that drops nothing: about 120 s.
stage trace 240 tests/system/trace_tests.py python3 tests/system/trace_tests.py --arch x86_64
# heaptest's sites under profile heap and profile allocs, a leak, 4 CPUs: about 10 s.
stage heap 120 tests/system/heap_tests.py python3 tests/system/heap_tests.py --arch x86_64
# record -d over 2 s through the profile stream, one kernel and a fleet: about 35 s.
stage stream 240 tests/system/stream_tests.py python3 tests/system/stream_tests.py
# 1000 profile cycles under burn and UDP-shell load: about 30 s (make soak: 10000).
stage soak 120 tests/system/soak.py python3 tests/system/soak.py --cycles 1000
if [ $built = yes ]; then
  stage arm64 400 tests/system/arm64_tests.py python3 tests/system/arm64_tests.py
  stage arm64-offcpu 120 tests/system/offcpu_tests.py python3 tests/system/offcpu_tests.py --arch arm64
  stage arm64-locks 120 tests/system/lock_tests.py python3 tests/system/lock_tests.py --arch arm64
  # the same at -smp 1, the samples (and NMI slices) from the counter: about 100 s.
  stage arm64-trace 200 tests/system/trace_tests.py python3 tests/system/trace_tests.py --arch arm64
  stage arm64-heap 120 tests/system/heap_tests.py python3 tests/system/heap_tests.py --arch arm64
  # Every network test applies to arm64 too (the UDP shell over virtio-mmio).
  stage arm64-network 300 tests/system/net_tests.py python3 tests/system/net_tests.py --arch arm64
  # sonde-prof record against an x86_64 and an arm64 kernel at once.
  stage profile 180 tests/system/prof_tests.py python3 tests/system/prof_tests.py
fi

total_p=0; total_f=0
echo "=== summary"
while read -r name; do
  read -r p f s < "$res/$name"
  printf '%-14s %4d passed, %d failed  %s s\n' "$name" "$p" "$f" "$s"
  total_p=$((total_p + p)); total_f=$((total_f + f))
done < "$res/order"
[ $built = yes ] || total_f=$((total_f + 1))
echo "test: $total_p passed, $total_f failed"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
