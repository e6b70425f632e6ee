#!/usr/bin/env bash
# make test: every stage runs even if an earlier one failed; each ends with
# "N passed, N failed", and the last line adds them up.
set -u
cd "$(dirname "$0")/.."
total_p=0; total_f=0; rc=0
stage() {
  local name=$1; shift
  echo "=== $name: $*"
  local log; log=$(mktemp)
  "$@" 2>&1 | tee "$log"
  local st=${PIPESTATUS[0]}
  local line; line=$(grep -E '^(unit: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  rm -f "$log"
  if [[ "$line" =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    total_p=$((total_p + BASH_REMATCH[1])); total_f=$((total_f + BASH_REMATCH[2]))
  else
    total_f=$((total_f + 1)); echo "$name: no result line"
  fi
  if [ "$st" -ne 0 ]; then
    rc=1
    [[ "$line" =~ \ 0\ failed ]] && total_f=$((total_f + 1))
  fi
}
stage unit bash scripts/unit.sh
stage x86_64 python3 tests/system/run.py
[ -f tests/system/net_tests.py ] && stage network python3 tests/system/net_tests.py
if [ -f arch/arm64/build.mk ] && [ -f tests/system/arm64_tests.py ]; then
  if make -s ARCH=arm64 all >/dev/null; then
    stage arm64 python3 tests/system/arm64_tests.py
  else
    echo "arm64: build failed"; total_f=$((total_f + 1)); rc=1
  fi
fi
echo "test: $total_p passed, $total_f failed"
echo "$total_p passed, $total_f failed"
[ "$rc" -eq 0 ] && [ "$total_f" -eq 0 ]
