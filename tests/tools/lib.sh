# tests/tools/lib.sh: what the tool checks share (sourced, from the
# repository root, with ELF set): the PASS/FAIL counters and the kernel
# ELF's build id and symbols.
passed=0; failed=0
ok()   { echo "PASS $1"; passed=$((passed + 1)); }
bad()  { echo "FAIL $1"; [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/  /' | head -20
         failed=$((failed + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
has()  { grep -q -- "$2" "$1"; }
# The summary line and the exit status: 0 only with nothing failed.
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; }

bid=$(readelf -n "$ELF" | awk '/Build ID/ { print $3 }')
sym() { nm "$ELF" | awk -v s="$1" '$3 == s { print $1 }'; }
