#!/usr/bin/env bash
# The tree's dependency rules, checked on every `make test` (README "Layout"):
#   1. portable code (kernel/ net/ drivers/ mm/ lib/ hal/ uapi/) includes
#      nothing from arch/ or tools/: it reaches hardware only through hal/,
#      and the formats it shares with the host tools live in uapi/. The one
#      exception is hal/'s own: a hal header may include its contract's
#      inline half, arch/<arch>/*_inline.h, each from its own build's
#      folder: arch/x86_64/ or arch/arm64/ in the kernel build only (under
#      !defined(SONDE_HOST_TEST) && defined(__x86_64__) or __aarch64__),
#      its twin arch/host/ in host tests only (defined(SONDE_HOST_TEST));
#      and every inline half the kernel gets has a host twin, so that host
#      tests compile the inline code above it as the kernel does;
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
#      through others (a layer is a .c and its .h: ring.c and ring.h);
#   7. the sample path names no host build: no SONDE_HOST_TEST or
#      __STDC_HOSTED__ test in its files, so that what host tests compile
#      of it is what the kernel runs (only hal/'s inline halves differ);
#   8. every unit test is named after the file it tests (README "Tests"):
#      tests/unit/test_X.c, or test_X-PART.c where one file's tests fill
#      several, X being a source's path below its top folder with '/' as
#      '_' and no extension (kernel/prof/ring.c: test_prof_ring.c,
#      test_prof_ring-threads.c). The helpers beside them are the files
#      not named test_*: a .c among them is fake_*.c, sim_*.c or
#      harness.c, so that a test misnamed otherwise (never run by
#      scripts/unit.sh, which runs test_*.c) fails here too.
#   9. tools/ has no pipeline/ folder: sonde-prof's parts live in folders
#      named for what they hold;
#  10. no tools/ layer includes a layer above it. sonde-prof's layers, from
#      the bottom: common/ (every tool's), model/ (the profile in memory,
#      symbols, the pprof reader), output/ (the writers), ingest/ (the
#      shells' replies, the stream, the collector, fleet rounds), store/
#      (the history in SQLite or PostgreSQL), serve/ (serve's history,
#      HTTP and API), cmd/ (one file per subcommand). A
#      layer includes its own and those below; so output and model never
#      include ingest, serve or the subcommands. Any other folder under
#      tools/ holds one program's parts and includes only itself and
#      common/; the programs (tools/*.c) may include any layer;
#  11. no include circle passes through the profiler core, and outside it
#      no source names a ring's or a claim's fields (the scheduler calls
#      the core's hooks, kernel/prof/offcpu_hooks.h);
#  12. facts from the core, words from the commands: in kernel/prof/ only
#      the report files print, and no string holds shell syntax;
#  13. SHELL_COMMAND only in kernel/cmd/, kernel/shell.c and testing/.
#  14. every lock is named where it is defined, with a literal of the
#      naming rule (kernel/spinlock.h).
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
# Each inline half comes from its own build's folder: the include sits
# under the #if or #elif that names that build (arch/host/: the host
# tests; arch/<arch>/: the kernel for that architecture).
check "hal/ includes arch/<arch>/ inline halves only in the kernel build, arch/host/ only in host tests" \
  "$(for h in $(srcs hal); do
       awk -v f="$h" '/^#if|^#elif/ { g = $0 } /^#else|^#endif/ { g = "" }
         /#include "arch\// {
           a = $0; sub(/^[^"]*"arch\//, "", a); sub(/\/.*/, "", a)
           m = a == "x86_64" ? "__x86_64__" : a == "arm64" ? "__aarch64__" : ""
           if (a == "host")
             ok = g ~ /(^|[^!])defined\(SONDE_HOST_TEST\)/ && g !~ /!defined\(SONDE_HOST_TEST\)/
           else
             ok = m != "" && g ~ /!defined\(SONDE_HOST_TEST\)/ && index(g, "defined(" m ")") > 0
           if (!ok) print f ":" NR ": " $0 " (under: " (g == "" ? "no #if" : g) ")"
         }' "$h"
     done)"
check "every arch/<arch>/ inline half hal/ includes has its arch/host/ twin, included beside it" \
  "$(for h in $(srcs hal); do
       for y in $(sed -n 's,^#include "arch/\(x86_64\|arm64\)/\([a-z_]*_inline\.h\)"$,\2,p' "$h" | sort -u); do
         [ -f "arch/host/$y" ] || echo "$h: arch/host/$y does not exist"
         grep -q "^#include \"arch/host/$y\"$" "$h" || echo "$h: includes arch/<arch>/$y but not arch/host/$y"
       done
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
# includes_of FILE...: "file:line:path" for every #include, its path as
# the build resolves it from the tree's root: "x" relative to the file's
# own folder when that exists there, else to the root (-I.), <x> to the
# root too, and any ../ folded away, so that "../../net/net.h" and
# <net/net.h> are both net/net.h.
includes_of() {
  python3 - "$@" <<'PY'
import os, re, sys
for f in sys.argv[1:]:
    d = os.path.dirname(f)
    for n, line in enumerate(open(f, encoding='utf-8', errors='replace'), 1):
        m = re.match(r'\s*#\s*include\s*(["<])([^">]+)[">]', line)
        if not m:
            continue
        p = m.group(2)
        if m.group(1) == '"' and os.path.exists(os.path.join(d, p)):
            p = os.path.join(d, p)
        print("%s:%d:%s" % (f, n, os.path.normpath(p)))
PY
}

check "the profiler core (kernel/prof/) includes nothing from net/, the shell or the commands" \
  "$( [ -z "$prof" ] || includes_of $prof | grep -E ':(net/|kernel/shell\.h$|kernel/cmd/)')"

lower=$(srcs net drivers mm lib)
check "net/, drivers/, mm/ and lib/ include nothing from the commands or the shell" \
  "$(includes_of $lower | grep -E ':(kernel/shell\.h|kernel/cmd/.*)$')"

# Layers: a file's layer is its name without .c/.h. An edge A -> B for
# every include of kernel/prof/B.h from A's files; a loop is a path back
# to where it started. One line per loop, its layers in order.
check "no loop of includes between the profiler core's layers" \
  "$( [ -z "$prof" ] || includes_of $prof | python3 -c '
import sys
edges = {}
for line in sys.stdin:
    f, _, p = line.rstrip("\n").split(":", 2)
    a = f.split("/")[-1].rsplit(".", 1)[0]
    if p.startswith("kernel/prof/") and p.endswith(".h"):
        b = p[len("kernel/prof/"):-2]
        if b != a:
            edges.setdefault(a, set()).add(b)
seen = set()
def walk(path):
    for b in sorted(edges.get(path[-1], ())):
        if b == path[0]:
            i = path.index(min(path))
            loop = path[i:] + path[:i]
            if tuple(loop) not in seen:
                seen.add(tuple(loop))
                print("kernel/prof: " + " -> ".join(loop + [loop[0]]))
        elif b not in path:
            walk(path + [b])
for a in sorted(edges):
    walk([a])
')"

# The scheduler, the allocator and the locks call the core's hooks and
# know nothing else of it, and the core reaches tasks through
# kernel/task.h: so no chain of includes leaves kernel/prof/ and comes
# back to it (kernel/sched.h embeds the core's per-task state, so the
# core must never include it). One line per file outside the core that
# the core reaches and that reaches the core again. (mm/heapprof.h
# includes the core's record: so the core takes the heap's rate and
# in-use table from its callers, and never includes it.)
check "no include circle passes through the profiler core (kernel/prof/)" \
  "$(includes_of $(srcs kernel hal mm lib uapi net drivers) | python3 -c '
import sys
edges = {}
node = lambda p: "kernel/prof" if p.startswith("kernel/prof/") else p
for line in sys.stdin:
    f, _, p = line.rstrip("\n").split(":", 2)
    edges.setdefault(node(f), set()).add(node(p))
def reach(a):
    seen, todo = set(), [a]
    while todo:
        for b in edges.get(todo.pop(), ()):
            if b not in seen:
                seen.add(b)
                todo.append(b)
    return seen
for x in sorted(reach("kernel/prof") - {"kernel/prof"}):
    if "kernel/prof" in reach(x):
        print("kernel/prof -> %s -> ... -> kernel/prof" % x)
')"

# Only the core names a ring's or a reservation's insides: the scheduler
# and every other caller goes through the hooks (kernel/prof/offcpu_hooks.h,
# mm/heapprof's own), never pc_buf, pc_cap or a reservation's fields.
check "outside kernel/prof/ no source names the ring's or a reservation's fields" \
  "$(grep -HnE '\b(pc_buf|pc_cap|k_pc|k_head)\b' $(srcs kernel net drivers mm lib arch | grep -v '^kernel/prof/'))"

# Facts from the core, words from the commands: only the report files
# print (report.c, export.c, offreport.c, lockreport.c, wall.c, through the printer
# they are handed), and no string of the core holds shell syntax (a
# backtick, a usage, a subcommand to type): every refusal is a struct
# prof_err that kernel/cmd/ words (kernel/cmd/profile_say.c).
prof_reports="report export offreport lockreport wall"
check "in kernel/prof/ only the report files ($prof_reports) print" \
  "$(grep -HnE '\b(pr_printf|pr_puts|pr_putc|pr_write|kprintf)\(' $prof |
     grep -vE "^kernel/prof/($(echo $prof_reports | tr ' ' '|'))\.c:")"
check "no string in kernel/prof/ holds shell syntax (a backtick, usage, a profile subcommand)" \
  "$(grep -HnE '"[^"]*(`|usage|profile (stream|stop|status|keepalive|heap|allocs|off|wall|latency|rate)\b)[^"]*"' $prof)"

# Mechanism defines no command: a shell command (SHELL_COMMAND) is
# kernel/cmd/'s, the shell's own (help, kernel/shell.c), or a testing/
# folder's (commands for the system tests alone).
check "SHELL_COMMAND only in kernel/cmd/, kernel/shell.c and testing/ folders" \
  "$(grep -Hn '^[[:space:]]*SHELL_COMMAND(' $(srcs arch kernel net drivers mm lib) |
     grep -vE '^(kernel/cmd/[^:]*|kernel/shell\.c|[a-z0-9_/]*/testing/[^:]*):')"

# The sample path: the entry points, the capture and walk, the stack
# bounds, the claim, the current task. A host-build switch in any of
# The sample path: the entry points, the ring's producer side, the capture
# and walk, the stack bounds, the counter's claim, the current task. A host-build switch in any of
# them would let the host tests compile something the kernel does not run.
hot="kernel/prof/sample.c kernel/prof/ring_produce.h kernel/stacktrace_inline.h kernel/stacks.h kernel/pmu_nmi.h
     kernel/task.h kernel/percpu.h"
check "the sample path names no host build (SONDE_HOST_TEST, __STDC_HOSTED__)" \
  "$(grep -Hn '^[[:space:]]*#.*\(SONDE_HOST_TEST\|__STDC_HOSTED__\)' $hot)"

# Rule 8. Sources are every .c, .h and .S outside tests/ (and build/).
names=$(srcs arch kernel net drivers mm lib hal uapi tools bench |
        sed 's,^[^/]*/,,; s,\.[chS]$,,; s,/,_,g' | sort -u)
check "every unit test is named after the file it tests (tests/unit/test_X.c or test_X-PART.c)" \
  "$(for t in tests/unit/test_*.c; do
       [ -e "$t" ] || continue
       x=$(basename "$t" .c); x=${x#test_}; x=${x%%-*}
       printf '%s\n' "$names" | grep -qxF -- "$x" ||
         echo "$t: no source is X='$x' (the rule: test_X.c or test_X-PART.c tests the file whose path below its top folder is X with '/' as '_', e.g. kernel/prof/ring.c: test_prof_ring.c)"
     done
     for h in tests/unit/*.c; do
       case $(basename "$h") in test_*.c|fake_*.c|sim_*.c|harness.c) ;;
         *) echo "$h: a unit test is named test_X.c (or test_X-PART.c); a helper fake_*.c, sim_*.c or harness.c" ;;
       esac
     done)"
check "tools/ has no pipeline/ folder (sonde-prof's parts are in named layers)" \
  "$( [ ! -e tools/pipeline ] || echo "tools/pipeline exists: $(ls tools/pipeline | head -5 | tr '\n' ' ')")"

check "no tools/ layer includes a layer above it (common < model < output < ingest < store < serve < cmd)" \
  "$(includes_of $(srcs tools/*/) | python3 -c '
import sys
order = ["common", "model", "output", "ingest", "store", "serve", "cmd"]
for line in sys.stdin:
    f, n, p = line.rstrip("\n").split(":", 2)
    a = f.split("/")[1]
    if not p.startswith("tools/") or p.count("/") < 2:
        continue
    b = p.split("/")[1]
    if a in order:
        ok = b in order and order.index(b) <= order.index(a)
    else:
        ok = b in (a, "common")
    if not ok:
        print("%s:%s: includes %s (%s above %s)" % (f, n, p, b, a))
')"

# Every lock is named for what it guards (kernel/spinlock.h, kernel/sched.h):
# SPINLOCK_INIT, WAITQ_INIT, MUTEX_INIT, spin_init, waitq_init and
# mutex_init take a string literal of 1-31 characters from '!'..'~'
# except ';' and ':' (one field of a raw profile).
lock_srcs=$(srcs arch kernel net drivers mm lib | grep -vE '^kernel/(spinlock|sched)\.h$')
check "every lock is named with a literal of 1-31 of '!'..'~' but ';' ':' (SPINLOCK_INIT(\"name\"))" \
  "$(grep -HnE '\b(SPINLOCK_INIT|WAITQ_INIT|MUTEX_INIT|spin_init|waitq_init|mutex_init)\b' $lock_srcs |
     grep -vE '\b(SPINLOCK_INIT|WAITQ_INIT|MUTEX_INIT)\("[!-9<-~]{1,31}"\)|\b(spin|waitq|mutex)_init\([^,()]+, "[!-9<-~]{1,31}"\)')"

# A source file says one thing: past 700 lines it says two (tests and
# generated files aside).
check "no source file over 700 lines (kernel, arch, hal, lib, mm, net, drivers, uapi, tools, web)" \
  "$( { srcs arch hal kernel lib mm net drivers uapi tools; find web -path web/node_modules -prune -o -name '*.js' -print; } |
     xargs wc -l | awk '$2 != "total" && $1 > 700 { print $2 ": " $1 " lines" }')"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
