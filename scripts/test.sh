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
[ -f tests/system/net_tests.py ] && stage network python3 tests/system/net_tests.py --arch x86_64
if [ -f arch/arm64/build.mk ] && [ -f tests/system/arm64_tests.py ]; then
  if make -s ARCH=arm64 all >/dev/null; then
    stage arm64 python3 tests/system/arm64_tests.py
    # The UDP shell over virtio-mmio: the x86 bars, and netload once each way.
    [ -f tests/system/net_tests.py ] && stage arm64-network python3 tests/system/net_tests.py \
      --arch arm64 boot_net ushell_help ushell_version ushell_profile ushell_unknown \
      ushell_10000_lines ushell_empty_reply ushell_garbage ushell_retransmit \
      driver_interrupts netload_send_to_sink netload_recv_from_blast
  else
    echo "arm64: build failed"; total_f=$((total_f + 1)); rc=1
  fi
fi
echo "test: $total_p passed, $total_f failed"
echo "$total_p passed, $total_f failed"
[ "$rc" -eq 0 ] && [ "$total_f" -eq 0 ]
