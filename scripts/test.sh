#!/usr/bin/env bash
# make test: every stage runs even if an earlier one failed; each ends with
# "N passed, N failed", and the last line adds them up. A stage
# whose file is missing, that times out, or that prints no result line is
# a failure: nothing here can pass by not running. No test is retried.
set -u
cd "$(dirname "$0")/.."
total_p=0; total_f=0; rc=0
# stage NAME SECONDS FILE CMD...: FILE is what the stage runs (it must exist).
stage() {
  local name=$1 secs=$2 file=$3; shift 3
  echo "=== $name: $*"
  if [ ! -f "$file" ]; then
    echo "$name: FAILED: $file is missing"
    total_f=$((total_f + 1)); rc=1; return
  fi
  local log; log=$(mktemp)
  # --kill-after: a stage that ignores SIGTERM is killed; the runners
  # close their QEMUs on SIGTERM.
  timeout --kill-after=15 "$secs" "$@" 2>&1 | tee "$log"
  local st=${PIPESTATUS[0]}
  local line; line=$(grep -E '^(unit: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  rm -f "$log"
  if [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
    echo "$name: FAILED: timed out after $secs s"
    total_f=$((total_f + 1)); rc=1
    [ -z "$line" ] && return
  fi
  if [[ "$line" =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    total_p=$((total_p + BASH_REMATCH[1])); total_f=$((total_f + BASH_REMATCH[2]))
  else
    total_f=$((total_f + 1)); echo "$name: no result line"
  fi
  if [ "$st" -ne 0 ]; then
    rc=1
    [[ "$line" =~ \ 0\ failed ]] && [ "$st" -ne 124 ] && [ "$st" -ne 137 ] && total_f=$((total_f + 1))
  fi
}
stage tree 60 scripts/check_tree.sh bash scripts/check_tree.sh
stage unit 300 scripts/unit.sh bash scripts/unit.sh
# Each libFuzzer target over its corpus (every crash ever found), then
# 10 s of fuzzing each: about 100 s on 2 cores.
FUZZ_SECONDS=${FUZZ_SECONDS:-10} stage fuzz 200 scripts/fuzz.sh bash scripts/fuzz.sh
stage tools 300 tests/tools/check_sonde_prof.sh bash tests/tools/check_sonde_prof.sh
# sonde-prof's web pages in headless chromium (tests/browser/): one QEMU boot,
# 1 s of burn, 15 tests of pages: about 25 s.
stage browser 90 tests/browser/run.js node tests/browser/run.js
# sonde-prof serve's page in headless chromium with two live x86_64 kernels
# (QEMU, -smp 1 each): about 25 s.
stage serve 90 tests/browser/serve_live.js node tests/browser/serve_live.js
# sonde-prof serve against malformed HTTP requests, a fake kernel on loopback: about 4 s.
stage serve-http 60 tests/tools/check_serve_http.py python3 tests/tools/check_serve_http.py
# record -d over 2 s against fake kernels on loopback: about 30 s.
stage stream-tools 120 tests/tools/check_stream_record.sh bash tests/tools/check_stream_record.sh
# a fleet of 50 simulated kernels for 10 s, 12 sampled 3 at a time, serve sampling 2 of 6: about 21 s.
stage fleet 90 tests/tools/check_fleet.py python3 tests/tools/check_fleet.py
stage x86_64 600 tests/system/run.py python3 tests/system/run.py
stage network 300 tests/system/net_tests.py python3 tests/system/net_tests.py --arch x86_64
# off-CPU, wall and latency profiles of burn wait: about 10 s.
stage offcpu 120 tests/system/offcpu_tests.py python3 tests/system/offcpu_tests.py --arch x86_64
# heaptest's sites under profile heap and profile allocs, a leak, 4 CPUs: about 10 s.
stage heap 120 tests/system/heap_tests.py python3 tests/system/heap_tests.py --arch x86_64
# record -d over 2 s through the profile stream, one kernel and a fleet: about 35 s.
stage stream 240 tests/system/stream_tests.py python3 tests/system/stream_tests.py
# 1000 profile cycles under burn and UDP-shell load: about 30 s (make soak: 10000).
stage soak 120 tests/system/soak.py python3 tests/system/soak.py --cycles 1000
if make -s ARCH=arm64 all >/dev/null; then
  stage arm64 400 tests/system/arm64_tests.py python3 tests/system/arm64_tests.py
  stage arm64-offcpu 120 tests/system/offcpu_tests.py python3 tests/system/offcpu_tests.py --arch arm64
  stage arm64-heap 120 tests/system/heap_tests.py python3 tests/system/heap_tests.py --arch arm64
  # Every network test applies to arm64 too (the UDP shell over virtio-mmio).
  stage arm64-network 300 tests/system/net_tests.py python3 tests/system/net_tests.py --arch arm64
  # sonde-prof record against an x86_64 and an arm64 kernel at once.
  stage profile 180 tests/system/prof_tests.py python3 tests/system/prof_tests.py
else
  echo "arm64: build failed"; total_f=$((total_f + 1)); rc=1
fi
echo "test: $total_p passed, $total_f failed"
echo "$total_p passed, $total_f failed"
[ "$rc" -eq 0 ] && [ "$total_f" -eq 0 ]
