#!/usr/bin/env bash
# The tree's dependency rules, checked on every `make test` (README "Layout"):
#   1. portable code (kernel/ net/ drivers/ mm/ lib/ hal/ uapi/) includes
#      nothing from arch/ or tools/: it reaches hardware only through hal/,
#      and the formats it shares with the host tools live in uapi/. The one
#      exception is hal/'s own: a hal header may include its contract's
#      inline half, arch/<arch>/*_inline.h, in the kernel build only (under
#      #if !__STDC_HOSTED__ && !defined(SONDE_HOST_TEST)), so that host
#      tests still see plain functions they can fake;
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
check "portable code includes no arch/ or tools/ header (hal/: only arch/*/*_inline.h)" \
  "$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(\.\./\)*\(arch\|tools\)/' $portable |
     grep -v '^hal/[a-z_]*\.h:[0-9]*:#include "arch/[a-z0-9_]*/[a-z_]*_inline\.h"$')"
# hal's inline halves are for the kernel build alone: each include sits
# under the guard that keeps host tests on the plain functions.
check "hal/ includes an arch/ inline header only outside host builds" \
  "$(for h in $(srcs hal); do
       awk -v f="$h" '/^#if|^#elif/ { g = $0 } /^#else|^#endif/ { g = "" }
         /#include "arch\// && g !~ /!__STDC_HOSTED__ && !defined\(SONDE_HOST_TEST\)/ { print f ":" NR ": " $0 }' "$h"
     done)"

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
