#!/usr/bin/env bash
# The tree's dependency rules, checked on every `make test` (README "Layout"):
#   1. portable code (kernel/ net/ drivers/ mm/ lib/ hal/ uapi/) includes
#      nothing from arch/ or tools/: it reaches hardware only through hal/,
#      and the formats it shares with the host tools live in uapi/;
#   2. uapi/ includes only uapi/, lib/ (portable and freestanding, like
#      lib/sha256.c that the authenticated format needs) and the C
#      library's freestanding headers, so both the kernel and a host tool
#      can compile it;
#   3. no source outside tests/ includes a .c file (a unit test may include
#      the file it tests).
# Each rule is one check; a line per offending include names it.
set -u
cd "$(dirname "$0")/.."
passed=0; failed=0
check() {
  local name=$1 hits=$2
  if [ -n "$hits" ]; then
    echo "FAIL $name:"; printf '%s\n' "$hits" | sed 's/^/  /'
    failed=$((failed + 1))
  else
    echo "PASS $name"; passed=$((passed + 1))
  fi
}
srcs() { find "$@" -name '*.[chS]' 2>/dev/null | sort; }

portable=$(srcs kernel net drivers mm lib hal uapi)
check "portable code includes no arch/ or tools/ header" \
  "$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(\.\./\)*\(arch\|tools\)/' $portable)"

uapi=$(srcs uapi)
check "uapi/ includes only uapi/, lib/ and freestanding C headers" \
  "$( [ -z "$uapi" ] || grep -Hn '^[[:space:]]*#[[:space:]]*include' $uapi |
      grep -v '#[[:space:]]*include[[:space:]]*"\(uapi\|lib\)/' |
      grep -v '<\(stdint\|stddef\|stdbool\|stdarg\|limits\)\.h>')"

check "no kernel or tool source includes a .c file" \
  "$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]*\.c[>"]' \
       $(srcs arch kernel net drivers mm lib hal uapi tools))"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
