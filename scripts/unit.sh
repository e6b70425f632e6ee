#!/usr/bin/env bash
# Builds and runs every host unit test (tests/unit/test_*.c) under ASan and
# UBSan. A test file's "// LINK:" line names the sources it links; a source
# there under build/ is generated, and made first. An optional "// LIBS:"
# line adds link arguments after the objects (-lfoo), and its -Idir items
# (generated headers) reach every compile too; anything else there is
# refused. An optional "// CFLAGS:" line adds compiler options for every
# source of that test (-D of a build variant: the arm64 PMU backend's test
# defines SONDE_HOST_PMUV3, arch/host/pmu_inline.h). A test whose file
# has a "// TSAN: yes" line (threads of its own: test_prof_ring-threads.c)
# is also built and run a second time under ThreadSanitizer and UBSan
# (TSan and ASan do not mix), as NAME-tsan; any race it reports fails it.
# Every test also links the locks' own code (kernel/spinlock.c, the
# contended path, and kernel/lockstat.c, its hooks), as every test that
# compiles a spinlock runs kernel/spinlock.h's inline paths.
# Usage: scripts/unit.sh [test_name ...]
# UNIT_JOBS tests are built and run at once (default: the number of CPUs).
# Each test binary has UNIT_TIMEOUT seconds (default 120); one that runs
# longer is killed and counts as a failure naming it.
set -u
UNIT_TIMEOUT=${UNIT_TIMEOUT:-120}
cd "$(dirname "$0")/.."
out=build/host/unit
mkdir -p "$out"
cflags="-std=gnu11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined
        -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter
        -Wno-unused-function -I. -Itests/unit -DSONDE_HOST_TEST"
# GCC's TSan does not model a lone __atomic_thread_fence (-Wtsan says so):
# kernel/stacks.c's seqlock readers use them, and this build lets them
# compile. The rings' ordering is all on the atomics themselves, which
# TSan does model.
tsan_cflags="${cflags/-fsanitize=address,undefined/-fsanitize=thread,undefined} -Wno-tsan"
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(tests/unit/test_*.c)
for i in "${!files[@]}"; do
  [ -f "${files[$i]}" ] || files[$i]=tests/unit/${files[$i]}.c
done
runs=("${files[@]}")
for f in "${files[@]}"; do
  [ -f "$f" ] && grep -q '^// TSAN: yes$' "$f" && runs+=("tsan:$f")
done
# Most tests link the same sources (the profiler's ~30 files, the fakes):
# each is compiled once per run, for every test that names it with the
# same flags, into a directory of this run's own (so that nothing is ever
# stale, and two runs at once do not share one), then linked per test.
objdir=$(mktemp -d "$out/obj.XXXXXX") || { echo "unit: no object directory under $out"; exit 1; }
trap 'rm -rf "$objdir"' EXIT
# object SRC KEY FLAGS: prints SRC's object compiled with FLAGS (all of
# them, the sanitizers' included; KEY names them), compiling it first
# unless an earlier test of this run did; two
# jobs that compile the same one at once each write their own file and
# rename it into place.
object() {
  local src=$1 key=$2 flags=$3 o
  o="$objdir/$key/${src%.c}.o"
  if [ ! -f "$o" ]; then
    mkdir -p "$(dirname "$o")"
    gcc $flags -c "$src" -o "$o.$BASHPID" || { rm -f "$o.$BASHPID"; return 1; }
    mv -f "$o.$BASHPID" "$o"
  fi
  printf '%s\n' "$o"
}

# one FILE: builds and runs one test; prints what it has to say, then
# "RESULT PASSED FAILED" as its last line. tsan:FILE: the same under
# ThreadSanitizer.
one() {
  local f=$1 name link libs tflags src res rc line p q base=$cflags
  case $f in tsan:*) f=${f#tsan:}; base=$tsan_cflags ;; esac
  name=$(basename "$f" .c)
  [ "$base" = "$cflags" ] || name=$name-tsan
  link=$(sed -n 's,^// LINK:,,p' "$f" | head -1)
  libs=$(sed -n 's,^// LIBS:,,p' "$f" | head -1)
  tflags=$(sed -n 's,^// CFLAGS:,,p' "$f" | head -1)
  : > "$out/$name.log"
  # -I of generated headers (in LIBS) matters to the compile as well;
  # anything there but -I, -l and -L is refused, as it would reach only
  # the link.
  local inc="" o objs=() x key built=yes
  for x in $libs; do
    case $x in
      -I?*) inc="$inc $x" ;;
      -l?*|-L?*) ;;
      *) echo "$name: LIBS may hold -Idir, -lname and -Ldir only, not '$x'" >> "$out/$name.log"
         built=no ;;
    esac
  done
  key=$(printf '%s' "$base$tflags$inc" | md5sum | cut -c1-12)
  for src in "$f" tests/unit/harness.c tests/unit/fake_hal.c kernel/spinlock.c kernel/lockstat.c $link; do
    [ $built = yes ] || break
    o=$(object "$src" "$key" "$base $tflags$inc" 2>> "$out/$name.log") || { built=no; break; }
    objs+=("$o")
  done
  if [ $built = no ] || ! gcc $base $tflags "${objs[@]}" $libs -o "$out/$name" 2>> "$out/$name.log"; then
    echo "$name: BUILD FAILED"; sed 's/^/  /' "$out/$name.log" | head -30
    echo "RESULT 0 1"; return
  fi
  # A unit test that hangs (a lock never released, a loop on a fake that
  # never changes) must not hang make test: it is killed and fails.
  res=$(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 TSAN_OPTIONS=halt_on_error=1 \
        timeout --kill-after=5 "$UNIT_TIMEOUT" "$out/$name" 2>&1)
  rc=$?
  line=$(printf '%s\n' "$res" | tail -1)
  if [[ "$line" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    p=${BASH_REMATCH[1]}; q=${BASH_REMATCH[2]}
  else
    p=0; q=1
  fi
  [ $rc -ne 0 ] && [ "$q" -eq 0 ] && q=1
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "$name: FAILED: timed out after $UNIT_TIMEOUT s"; [ -n "$res" ] && printf '%s\n' "$res" | sed 's/^/  /' | tail -20
  elif [ "$q" -ne 0 ]; then
    echo "$name: FAILED"; printf '%s\n' "$res" | sed 's/^/  /' | tail -40
  else
    echo "$name: $p passed"
  fi
  echo "RESULT $p $q"
}

. scripts/jobs.sh
make_generated unit "$out/generated.log" "${files[@]}"
jobs_run "${UNIT_JOBS:-$(nproc)}" 1 one "${runs[@]}"
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
