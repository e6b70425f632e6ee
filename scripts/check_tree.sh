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
#      the file it tests);
#   4. the profiler core (kernel/prof/) includes nothing from net/, the
#      shell (kernel/shell.h) or the commands (kernel/cmd/): it hands its
#      output to a printer or a sink its caller gives;
#   5. net/, drivers/, mm/ and lib/ include nothing from the commands or
#      the shell: the command layer registers their commands;
#   6. no two layers of the profiler core include each other, directly or
#      through others (a layer is a .c and its .h: ring.c and ring.h).
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

prof=$(srcs kernel/prof)
check "the profiler core (kernel/prof/) includes nothing from net/, the shell or the commands" \
  "$( [ -z "$prof" ] || grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(net/\|kernel/shell\.h\|kernel/cmd/\)' $prof)"

lower=$(srcs net drivers mm lib)
check "net/, drivers/, mm/ and lib/ include nothing from the commands or the shell" \
  "$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"kernel/\(shell\.h\|cmd/\)' $lower)"

# Layers: a file's layer is its name without .c/.h. An edge A -> B for
# every include of kernel/prof/B.h from A's files; a loop is a path back
# to where it started. One line per loop, its layers in order.
check "no loop of includes between the profiler core's layers" \
  "$( [ -z "$prof" ] || python3 - $prof <<'PY'
import re, sys
edges = {}
for f in sys.argv[1:]:
    a = f.split('/')[-1].rsplit('.', 1)[0]
    for line in open(f, encoding='utf-8', errors='replace'):
        m = re.match(r'\s*#\s*include\s*"kernel/prof/([a-z_0-9]+)\.h"', line)
        if m and m.group(1) != a:
            edges.setdefault(a, set()).add(m.group(1))
seen = set()
def walk(path):
    for b in sorted(edges.get(path[-1], ())):
        if b == path[0]:
            loop = path[path.index(min(path)):] + path[:path.index(min(path))]
            key = tuple(loop)
            if key not in seen:
                seen.add(key)
                print("kernel/prof: " + " -> ".join(loop + [loop[0]]))
        elif b not in path:
            walk(path + [b])
for a in sorted(edges):
    walk([a])
PY
)"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
