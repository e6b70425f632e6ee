#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.c) with clang under ASan
# and UBSan, runs each over its corpus (tests/fuzz/corpus/<target>/: the
# seeds and every crash ever found, as regressions), then fuzzes it for
# FUZZ_SECONDS. A target file's "// LINK:" line names the real sources it
# links, and an optional "// LIBS:" line its flags and libraries, as in
# tests/unit.
#
# Usage: scripts/fuzz.sh [target ...]      (default: every target)
#   FUZZ_SECONDS  seconds of fuzzing per target (default 60; 0: corpus only)
#   FUZZ_JOBS     targets at once (default: the number of CPUs)
# New inputs go to build/host/fuzz/corpus/<target>/, never into the tree;
# a crash is written to build/host/fuzz/crash-<target>-*: minimize it
# (-minimize_crash=1), fix the bug, and add it to the target's corpus.
# Each target is one test per phase (corpus, fuzz); the last line is
# "N passed, N failed", and each fuzz phase prints its exec/s and coverage.
set -u
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
cd "$(dirname "$0")/.."
out=build/host/fuzz
mkdir -p "$out"
cflags="-std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined
        -fno-sanitize-recover=undefined -fno-omit-frame-pointer
        -Wall -Wextra -Werror -Wno-unused-parameter -Wno-unused-function
        -I. -Itests/unit -DSONDE_HOST_TEST"
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(tests/fuzz/fuzz_*.c)
for i in "${!files[@]}"; do
  [ -f "${files[$i]}" ] || files[$i]=tests/fuzz/fuzz_${files[$i]}.c
done
# one FILE: builds, replays and fuzzes one target; prints what it has to
# say, then "RESULT PASSED FAILED" as its last line.
one() {
  local f=$1 name bin link libs corpus res stats cov runs eps work passed=0 failed=0
  name=$(basename "$f" .c); name=${name#fuzz_}
  bin=$out/fuzz_$name
  # The locks' own code too (kernel/spinlock.c, kernel/lockstat.c), as
  # scripts/unit.sh links it: every target that compiles a spinlock runs
  # kernel/spinlock.h's inline paths.
  link=$(sed -n 's,^// LINK:,,p' "$f" | head -1)
  libs=$(sed -n 's,^// LIBS:,,p' "$f" | head -1)
  corpus=tests/fuzz/corpus/$name
  # Rebuild only when a source, or a header one of them includes, is
  # newer than the binary: make test runs this on every invocation, and
  # clang with two sanitizers is slow. The headers are the preprocessor's
  # own list (-MM, with the -I of LIBS); when it cannot make one, rebuild.
  local inc="" x deps
  for x in $libs; do case $x in -I?*) inc="$inc $x" ;; esac; done
  deps=$(clang $cflags $inc -MM "$f" tests/unit/fake_hal.c kernel/spinlock.c kernel/lockstat.c $link 2> /dev/null |
         tr -d '\\' | tr ' ' '\n' | grep -v -e ':$' -e '^$')
  if [ ! -x "$bin" ] || [ -z "$deps" ] ||
     [ -n "$(find $deps scripts/fuzz.sh -newer "$bin" 2>/dev/null)" ]; then
    if ! clang $cflags "$f" tests/unit/fake_hal.c kernel/spinlock.c kernel/lockstat.c $link $libs -o "$bin" 2> "$out/$name.build.log"; then
      echo "fuzz $name: BUILD FAILED"; head -30 "$out/$name.build.log" | sed 's/^/  /'
      failed=$((failed + 2)); echo "RESULT $passed $failed"; return
    fi
  fi
  if [ ! -d "$corpus" ] || [ -z "$(ls -A "$corpus")" ]; then
    echo "fuzz $name: FAILED: $corpus is empty"; failed=$((failed + 2)); echo "RESULT $passed $failed"; return
  fi
  # Phase 1: every corpus file, once (a crash fixed stays fixed).
  # The artifact prefix keeps a replayed crash out of the source tree.
  if res=$(UBSAN_OPTIONS=print_stacktrace=1 "$bin" -runs=0 \
             -artifact_prefix="$out/crash-$name-" "$corpus" 2>&1) &&
     ! grep -q 'ERROR: \|runtime error' <<< "$res"; then
    echo "fuzz $name: corpus of $(ls "$corpus" | wc -l) inputs passed"; passed=$((passed + 1))
  else
    echo "fuzz $name: corpus FAILED"; printf '%s\n' "$res" | tail -40 | sed 's/^/  /'
    failed=$((failed + 1))
  fi
  [ "$FUZZ_SECONDS" -gt 0 ] || { echo "RESULT $passed $failed"; return; }
  # Phase 2: new inputs land in the build tree's corpus; the tree's is read.
  work=$out/corpus/$name; mkdir -p "$work"
  if res=$(UBSAN_OPTIONS=print_stacktrace=1 "$bin" -max_total_time="$FUZZ_SECONDS" \
             -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
             -artifact_prefix="$out/crash-$name-" "$work" "$corpus" 2>&1); then
    stats=$(grep -E '^#[0-9]+[[:space:]]+DONE' <<< "$res" | tail -1)
    cov=$(sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1 ft \2/p' <<< "$stats")
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' <<< "$res")
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' <<< "$res")
    echo "fuzz $name: ${FUZZ_SECONDS} s, $runs runs, $eps exec/s, $cov, no crash"
    passed=$((passed + 1))
  else
    echo "fuzz $name: FAILED"; printf '%s\n' "$res" | grep -v '^#[0-9]' | tail -40 | sed 's/^/  /'
    failed=$((failed + 1))
  fi
  echo "RESULT $passed $failed"
}

. scripts/jobs.sh
make_generated fuzz "$out/generated.log" "${files[@]}"
jobs_run "${FUZZ_JOBS:-$(nproc)}" 2 one "${files[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
