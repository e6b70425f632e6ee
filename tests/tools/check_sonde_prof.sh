#!/usr/bin/env bash
# sonde-prof end to end on the real x86 kernel ELF, with no QEMU: a raw
# profile is made from real addresses of the burn chain (nm and objdump),
# then every output is checked with the tool people would read it with:
# go tool pprof (-top, -list, -tags), xmllint, and addr2line -f -i for the
# names of inlined frames. Also the error paths: a build id mismatch, a
# truncated profile, an unknown extension, an ELF without DWARF. And
# `top` on the same profile replayed: plain lines, its errors, and the
# ncurses view under tmux (burn_spin within 3 s, callers on enter, q).
# Usage: tests/tools/check_sonde_prof.sh   (ends "N passed, N failed")
set -u
cd "$(dirname "$0")/../.."
ELF=build/x86_64/kernel.elf
PROF=build/host/sonde-prof
make -s "$ELF" "$PROF" || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp                # go tool pprof keeps state under $HOME
. tests/tools/lib.sh
# The return address of the call from function $1 to function $2: the
# address of the instruction after it.
ret_after() {
  ${OBJDUMP:-objdump} -d --no-show-raw-insn "$ELF" |
    awk -v f="<$1>:" -v t="<$2>" '
      $2 == f { infn = 1; next }
      infn && /^$/ { infn = 0 }
      infn && want { sub(":", "", $1); print $1; exit }
      infn && $0 ~ /(call|bl)[ \t]/ && index($0, t) { want = 1 }'
}
hex_add() { printf '%x' $((0x$1 + $2)); }

spin=$(sym burn_spin)
r_inner=$(ret_after burn_inner burn_spin)
r_middle=$(ret_after burn_middle burn_inner)
r_outer=$(ret_after burn_outer burn_middle)
r_task=$(ret_after burn_task burn_outer)
if [ -z "$spin" ] || [ -z "$r_inner" ] || [ -z "$r_middle" ] || [ -z "$r_outer" ] || [ -z "$r_task" ]; then
  bad "burn chain addresses from nm/objdump" "spin=$spin inner=$r_inner middle=$r_middle outer=$r_outer task=$r_task"
  echo "$passed passed, $failed failed"; exit 1
fi
tail="$r_inner $r_middle $r_outer $r_task"
cat > "$tmp/burn.raw" <<EOF
# sonde raw build-id=$bid source=tick 100Hz samples=100 dropped=0 cpus=2 ms=1000
60 7 burn 1 $(hex_add "$spin" 0x30) $tail
30 7 burn 1 $(hex_add "$spin" 0x38) $tail
7 8 burn 0 $(hex_add "$r_inner" 1) $r_middle $r_outer $r_task
3 0 idle 0 $(sym burn_outer)
EOF

run() { "$PROF" report "$@" > "$tmp/out" 2> "$tmp/err"; echo $? > "$tmp/rc"; }
rc() { cat "$tmp/rc"; }

# ---- pprof, read by go tool pprof --------------------------------------
run -i "$tmp/burn.raw" -e "$ELF" -o "$tmp/p.pb.gz"
check "report -o .pb.gz exits 0" [ "$(rc)" = 0 ]
top=$(go tool pprof -symbolize=none -top "$tmp/p.pb.gz" 2>&1)
first=$(printf '%s\n' "$top" | awk '/flat%/ { getline; print $NF; exit }')
if [ "$first" = burn_spin ]; then ok "pprof -top lists burn_spin first"
else bad "pprof -top lists burn_spin first" "$top"; fi
if printf '%s\n' "$top" | grep -q "Total samples = 1000ms"; then ok "pprof cpu time = 100 x 10 ms"
else bad "pprof cpu time = 100 x 10 ms" "$top"; fi
list=$(go tool pprof -symbolize=none -list burn_spin "$tmp/p.pb.gz" 2>&1)
if printf '%s\n' "$list" | grep -q "ROUTINE.*burn_spin in kernel/cmd/burn.c" &&
   printf '%s\n' "$list" | grep -qE '^ +[0-9.]+m?s +[0-9.]+m?s +[0-9]+: .*x = x \*'; then
  ok "pprof -list burn_spin shows kernel/cmd/burn.c with samples on its lines"
else bad "pprof -list burn_spin shows kernel/cmd/burn.c with samples on its lines" "$list"; fi
tags=$(go tool pprof -symbolize=none -tags "$tmp/p.pb.gz" 2>&1)
if printf '%s\n' "$tags" | grep -q "task: Total" && printf '%s\n' "$tags" | grep -q "kernel: Total" &&
   printf '%s\n' "$tags" | grep -qE '\): 0$' && printf '%s\n' "$tags" | grep -q "burn.raw"; then
  ok "pprof -tags shows pid, cpu (0 included), task and kernel"
else bad "pprof -tags shows pid, cpu (0 included), task and kernel" "$tags"; fi
focus=$(go tool pprof -symbolize=none -tagfocus=cpu=0 -top "$tmp/p.pb.gz" 2>&1)
if printf '%s\n' "$focus" | grep -q "Showing nodes accounting for 100ms, 10.00% of 1000ms total"; then
  ok "pprof -tagfocus=cpu=0 keeps cpu 0's 10 samples"
else bad "pprof -tagfocus=cpu=0 keeps cpu 0's 10 samples" "$focus"; fi
peek=$(go tool pprof -symbolize=none -traces "$tmp/p.pb.gz" 2>&1)
if printf '%s\n' "$peek" | grep -q "Build ID: $bid"; then ok "pprof sees the mapping's build id"
else bad "pprof sees the mapping's build id" "$(printf '%s\n' "$peek" | head -5)"; fi

# ---- a lock profile: Go's mutex-profile types, the lock at the root ------
cat > "$tmp/lock.raw" <<EOF
# sonde raw build-id=$bid source=locks samples=4 dropped=0 cpus=2 ms=2000 kind=lock
3:30000000 7 burn 1 lock=mutex:probe-m waits=10 $tail
1:3000000 7 burn 0 lock=spin:probe-s waits=2 $r_middle $r_outer $r_task
EOF
run -i "$tmp/lock.raw" -e "$ELF" -o "$tmp/l.pb.gz"
raw=$(go tool pprof -raw -symbolize=none "$tmp/l.pb.gz" 2>&1)
if [ "$(rc)" = 0 ] && printf '%s\n' "$raw" | grep -qE "^contentions/count delay/nanoseconds(\[dflt\])?$" &&
   printf '%s\n' "$raw" | grep -qx "PeriodType: contentions count" &&
   printf '%s\n' "$raw" | grep -qE "^ +10 +30000000: " &&
   printf '%s\n' "$raw" | grep -qE "^ +[0-9]+: 0x[0-9a-f]+ \[mutex probe-m\]"; then
  ok "lock pprof: contentions/count and delay/nanoseconds, [mutex probe-m] a location"
else bad "lock pprof: contentions/count and delay/nanoseconds, [mutex probe-m] a location" "$(cat "$tmp/err") $raw"; fi
run -i "$tmp/lock.raw" -e "$ELF" -o "$tmp/l.folded"
if [ "$(rc)" = 0 ] && grep -qxF "[mutex probe-m];burn;burn_task;burn_outer;burn_middle;burn_inner 30000" "$tmp/l.folded" &&
   grep -qxF "[spin probe-s];burn;burn_task;burn_outer;burn_middle 3000" "$tmp/l.folded"; then
  ok "lock folded: the lock above the holder's task, in microseconds"
else bad "lock folded: the lock above the holder's task, in microseconds" "$(cat "$tmp/err" "$tmp/l.folded")"; fi
run -i "$tmp/lock.raw" -e "$ELF" -o "$tmp/l.svg"
if [ "$(rc)" = 0 ] && xmllint --noout "$tmp/l.svg" 2> "$tmp/xml" && grep -qF "[mutex probe-m] (30000 us" "$tmp/l.svg"; then
  ok "lock svg passes xmllint, the lock's frame in us"
else bad "lock svg passes xmllint, the lock's frame in us" "$(cat "$tmp/err" "$tmp/xml")"; fi
run -i "$tmp/lock.raw" -i "$tmp/burn.raw" -e "$ELF" -o "$tmp/m.folded"
if [ "$(rc)" = 2 ] && grep -qF "burn.raw is a cpu profile: a lock profile merges only with lock profiles" "$tmp/err" &&
   [ ! -e "$tmp/m.folded" ]; then
  ok "a lock profile and a CPU one do not merge (exit 2, named, no output)"
else bad "a lock profile and a CPU one do not merge (exit 2, named, no output)" "exit $(rc): $(cat "$tmp/err")"; fi
sed 's/^3:30000000 /3:60000000 /; s/waits=10 /waits=20 /' "$tmp/lock.raw" > "$tmp/lock2.raw"
run -i "$tmp/lock2.raw" -e "$ELF" -o "$tmp/l2.pb.gz"
"$PROF" diff -e "$ELF" "$tmp/l.pb.gz" "$tmp/l2.pb.gz" -o "$tmp/ld.txt" 2> "$tmp/err"
if [ $? = 0 ] && grep -qx "base 33000 us, new 63000 us, change +30000 us" "$tmp/ld.txt" &&
   grep -qE "^ +\+30000 +\+100\.0% +30000 +60000  \[mutex probe-m\];burn;" "$tmp/ld.txt"; then
  ok "diff of two lock pprofs: the lock's delay in us, the mutex's change"
else bad "diff of two lock pprofs: the lock's delay in us, the mutex's change" "$(cat "$tmp/err" "$tmp/ld.txt")"; fi
# ---- SVG, folded, text ---------------------------------------------------
run -i "$tmp/burn.raw" -e "$ELF" -o "$tmp/p.svg"
if [ "$(rc)" = 0 ] && xmllint --noout "$tmp/p.svg" 2> "$tmp/xml"; then ok "svg passes xmllint"
else bad "svg passes xmllint" "$(cat "$tmp/err" "$tmp/xml")"; fi
run -i "$tmp/burn.raw" -e "$ELF" -o "$tmp/p.folded"
want="burn;burn_task;burn_outer;burn_middle;burn_inner;burn_spin 90"
if grep -qxF "$want" "$tmp/p.folded" &&
   [ "$(awk '{ s += $NF } END { print s }' "$tmp/p.folded")" = 100 ]; then
  ok "folded: root first, counts sum to samples"
else bad "folded: root first, counts sum to samples" "$(cat "$tmp/p.folded")"; fi
run -i "$tmp/burn.raw" -e "$ELF" -o "$tmp/p.txt"
if sed -n 3p "$tmp/p.txt" | grep -qE '^90\.0% 90 burn_spin\+0x30\.\.0x38 \(kernel/cmd/burn.c:[0-9]+\)$' &&
   sed -n 4p "$tmp/p.txt" | grep -qE '^        <- burn_inner\+0x[0-9a-f]+ \(kernel/cmd/burn.c:24\)$'; then
  ok "txt: the kernel's report with file:line"
else bad "txt: the kernel's report with file:line" "$(cat "$tmp/p.txt")"; fi

# ---- inlined frames against addr2line -f -i -----------------------------
# The middle of every function of 25 bytes or more: sonde-prof's frames
# (folded, innermost last) must name what addr2line names.
# One address once: GCC's identical code folding leaves two names on one
# body (unwind_leaf_state and x86_leaf_state), and pprof keeps one location
# per address.
nm -n -S "$ELF" | awk '$3 ~ /^[tT]$/ && length($2) > 0 { print $1, $2 }' | sort -u -k1,1 > "$tmp/syms"
n=0
{ while read -r a s; do
    [ $((0x$s)) -ge 25 ] || continue
    echo "$(hex_add "$a" $((0x$s / 2)))"; n=$((n + 1))
  done < "$tmp/syms"; } > "$tmp/addrs"
n=$(wc -l < "$tmp/addrs")
{ echo "# sonde raw build-id=$bid source=tick 100Hz samples=$n dropped=0 cpus=1 ms=1"
  i=0; while read -r a; do echo "1 $i t$i 0 $a"; i=$((i + 1)); done < "$tmp/addrs"; } > "$tmp/all.raw"
run -i "$tmp/all.raw" -e "$ELF" -o "$tmp/all.folded"
sed 's/^0*x*//' "$tmp/addrs" | sed 's/^/0x/' | addr2line -f -i -a -e "$ELF" |
  awk '/^0x/ { if (n) print s; s = ""; n = 1; next } NR % 1 == 0 && !/:/ { s = s ? $0 ";" s : $0 } END { print s }' > "$tmp/a2l"
i=0; diff=0; inlined=0
while read -r want; do
  got=$(grep "^t$i;" "$tmp/all.folded" | sed "s/^t$i;//; s/ 1\$//")
  case $want in *";"*) inlined=$((inlined + 1)) ;; esac
  [ "$want" = "$got" ] || { diff=$((diff + 1)); [ $diff -le 3 ] && echo "  addr #$i: addr2line $want, sonde-prof $got"; }
  i=$((i + 1))
done < "$tmp/a2l"
if [ "$(rc)" = 0 ] && [ "$i" = "$n" ] && [ $diff = 0 ] && [ $inlined -gt 0 ]; then
  ok "inlined frames match addr2line -f -i at $n addresses ($inlined inlined)"
else bad "inlined frames match addr2line -f -i" "rc $(rc), $i of $n compared, $diff differ, $inlined inlined"; fi

# The same addresses' file:line, every inlined frame, as go tool pprof
# -raw reads them back, against addr2line (paths relative to the tree).
run -i "$tmp/all.raw" -e "$ELF" -o "$tmp/all.pb.gz"
go tool pprof -symbolize=none -raw "$tmp/all.pb.gz" 2>&1 |
  awk '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 }
       on && $1 ~ /^[0-9]+:$/ { if (a) print a, s; a = $2; s = $4 " " $5; next }
       on { s = s ";" $1 " " $2 } END { if (a) print a, s }' | sort > "$tmp/pp_lines"
sed 's/^/0x/' "$tmp/addrs" | addr2line -f -i -a -e "$ELF" |
  sed -e "s| (discriminator [0-9]*)||" -e "s|$PWD/||" -e 's|^\./||' |
  awk '/^0x/ { if (a) print a, s; a = $1; s = ""; f = ""; next }
       f == "" { f = $0; next } { s = s ? s ";" f " " $0 : f " " $0; f = "" }
       END { if (a) print a, s }' | sed 's/^0x0*/0x/' | sort > "$tmp/a2l_lines"
if [ "$(wc -l < "$tmp/pp_lines")" = "$n" ] && cmp -s "$tmp/pp_lines" "$tmp/a2l_lines"; then
  ok "file:line of every frame matches addr2line -i at $n addresses"
else bad "file:line of every frame matches addr2line -i" "$(diff "$tmp/pp_lines" "$tmp/a2l_lines" | head -10)"; fi

# ---- merging kernels -----------------------------------------------------
cp "$tmp/burn.raw" "$tmp/b.raw"
run -i "$tmp/burn.raw" -i "$tmp/b.raw" -e "$ELF" --kernel vm1 --kernel vm2 --per-kernel -o "$tmp/m.folded"
if [ "$(rc)" = 0 ] && grep -q "^vm1;burn;" "$tmp/m.folded" && grep -q "^vm2;burn;" "$tmp/m.folded" &&
   [ "$(awk '{ s += $NF } END { print s }' "$tmp/m.folded")" = 200 ]; then
  ok "two inputs merge, --per-kernel roots"
else bad "two inputs merge, --per-kernel roots" "$(cat "$tmp/err" "$tmp/m.folded")"; fi
run -i "$tmp/burn.raw" -i "$tmp/b.raw" -e "$ELF" --kernel vm1 --kernel vm2 -o "$tmp/m.pb.gz"
tags=$(go tool pprof -symbolize=none -tags "$tmp/m.pb.gz" 2>&1)
if printf '%s\n' "$tags" | grep -q ": vm1" && printf '%s\n' "$tags" | grep -q ": vm2"; then
  ok "pprof kernel label per input"
else bad "pprof kernel label per input" "$tags"; fi

# ---- errors: exit 2, a message naming what was wrong, no output file -------
sed "s/build-id=$bid/build-id=$(printf '%040d' 0)/" "$tmp/burn.raw" > "$tmp/other.raw"
run -i "$tmp/other.raw" -e "$ELF" -o "$tmp/e1.txt"
if [ "$(rc)" = 2 ] && grep -q "build id mismatch.*$(printf '%040d' 0).*$bid" "$tmp/err" && [ ! -e "$tmp/e1.txt" ]; then
  ok "build id mismatch: exit 2 naming both ids, no output"
else bad "build id mismatch: exit 2 naming both ids, no output" "rc $(rc): $(cat "$tmp/err")"; fi
head -c -5 "$tmp/burn.raw" > "$tmp/cut.raw"
echo keep > "$tmp/e2.txt"
run -i "$tmp/cut.raw" -e "$ELF" -o "$tmp/e2.txt"
if [ "$(rc)" = 2 ] && grep -q "cut.raw: line 5: truncated" "$tmp/err" && [ "$(cat "$tmp/e2.txt")" = keep ] &&
   [ -z "$(ls "$tmp" | grep '\.tmp\.')" ]; then
  ok "truncated profile: exit 2 naming the line, old output untouched, no temp file"
else bad "truncated profile: exit 2 naming the line, old output untouched" "rc $(rc): $(cat "$tmp/err")"; fi
run -i "$tmp/burn.raw" -e "$ELF" -o "$tmp/e3.pdf"
if [ "$(rc)" = 2 ] && grep -q "unknown extension (known: .pb.gz, .folded, .svg, .txt, .html)" "$tmp/err"; then
  ok "unknown extension lists the known ones"
else bad "unknown extension lists the known ones" "rc $(rc): $(cat "$tmp/err")"; fi
run -i "$tmp/missing.raw" -e "$ELF" -o "$tmp/e4.txt"
if [ "$(rc)" = 2 ] && grep -q "missing.raw: No such file" "$tmp/err"; then ok "missing input: exit 2"
else bad "missing input: exit 2" "rc $(rc): $(cat "$tmp/err")"; fi
"$PROF" --help > "$tmp/help" 2>&1; h=$?
"$PROF" > /dev/null 2>&1; u=$?
"$PROF" report -i x > /dev/null 2> "$tmp/err"; v=$?
if [ $h = 0 ] && grep -q "^usage: sonde-prof record" "$tmp/help" && grep -q "sonde-prof report" "$tmp/help" && [ $u = 2 ] && [ $v = 2 ] &&
   grep -q "no kernel ELF" "$tmp/err"; then ok "--help exits 0, bad usage exits 2"
else bad "--help exits 0, bad usage exits 2" "help $h, none $u, partial $v"; fi

# Addresses outside the image, or past the last symbol, are not named
# after whatever symbol comes before them.
printf '# sonde raw build-id=%s source=pmu/nmi amd perfctr0 samples=2 dropped=0 cpus=1 ms=1\n2 1 x 0 ffffffffffffffff 0\n' "$bid" > "$tmp/odd.raw"
run -i "$tmp/odd.raw" -e "$ELF" -o "$tmp/odd.txt"
if [ "$(rc)" = 0 ] && grep -qx '100.0% 2 0xffffffffffffffff (??:0)' "$tmp/odd.txt" &&
   grep -qx '        <- 0x0000000000000000 (??:0)' "$tmp/odd.txt"; then
  ok "addresses outside the kernel stay addresses"
else bad "addresses outside the kernel stay addresses" "$(cat "$tmp/err" "$tmp/odd.txt")"; fi

# ---- an ELF without DWARF: the symbol table, with a warning --------------
objcopy --strip-debug "$ELF" "$tmp/nodebug.elf"
run -i "$tmp/burn.raw" -e "$tmp/nodebug.elf" -o "$tmp/nd.txt"
if [ "$(rc)" = 0 ] && grep -q "warning: .*no DWARF" "$tmp/err" &&
   sed -n 3p "$tmp/nd.txt" | grep -qE '^90\.0% 90 burn_spin\+0x30\.\.0x38 \(\?\?:0\)$'; then
  ok "no DWARF: ELF symbols, a warning, exit 0"
else bad "no DWARF: ELF symbols, a warning, exit 0" "rc $(rc): $(cat "$tmp/err" "$tmp/nd.txt")"; fi

# ---- every host tool: --help on stdout (exit 0), HOST[:PORT] errors (exit 2)
for t in sonde-sh netload sonde-prof; do
  make -s "build/host/$t" > /dev/null 2>&1
  "build/host/$t" --help > "$tmp/help" 2> "$tmp/err"; h=$?
  "build/host/$t" -h > /dev/null 2>&1; h2=$?
  if [ $h = 0 ] && [ $h2 = 0 ] && grep -q "^usage: $t" "$tmp/help" && [ ! -s "$tmp/err" ]; then
    ok "$t --help and -h: usage on stdout, exit 0"
  else bad "$t --help and -h: usage on stdout, exit 0" "exit $h / $h2: $(cat "$tmp/err")"; fi
done
# No datagram leaves for these, not even a DNS query: the name has an
# empty label, which the resolver refuses before asking anyone; the port
# is out of range.
host_err() {  # NAME WANT CMD...: exit 2 with WANT on stderr, no output file
  local name=$1 want=$2; shift 2
  "$@" > /dev/null 2> "$tmp/err"; local r=$?
  if [ $r = 2 ] && grep -qF -e "$want" "$tmp/err" && [ ! -e "$tmp/h.svg" ]; then ok "$name"
  else bad "$name" "exit $r: $(cat "$tmp/err")"; fi
}
host_err "sonde-sh: unresolvable name, exit 2" "cannot resolve 'no..such.host' to an IPv4 address" \
  build/host/sonde-sh no..such.host version
host_err "sonde-sh: bad port in HOST:PORT, exit 2" "'127.0.0.1:70000': port '70000' out of range (1-65535)" \
  build/host/sonde-sh 127.0.0.1:70000 version
host_err "netload blast: unresolvable name, exit 2" "cannot resolve 'no..such.host'" \
  build/host/netload blast -H no..such.host -p 9 -t 0.1
host_err "sonde-prof record: unresolvable name, exit 2, no output" "cannot resolve 'no..such.host'" \
  "$PROF" record -e "$ELF" -o "$tmp/h.svg" 127.0.0.1:9 no..such.host
host_err "sonde-prof record: -d out of range names the range" \
  '-d 0 out of range (1 ms to 86400 s: "500ms", "10s", or a number of ms)' \
  "$PROF" record -d 0 -e "$ELF" -o "$tmp/h.svg" 127.0.0.1
host_err "sonde-prof record: --lock is one kind of its own" \
  "give one of --heap, --allocs, --off, --wall, --lock and --trace" \
  "$PROF" record --lock --off -e "$ELF" -o "$tmp/h.svg" 127.0.0.1
host_err "sonde-prof record: --trace past 2 s keeps no raw trace (-r)" \
  "-r keeps a window's raw trace (-d up to 2000 ms): a longer trace is a stream, which has none" \
  "$PROF" record --trace -d 2001 -e "$ELF" -o "$tmp/h.txt" -r "$tmp/h.raw" 127.0.0.1
host_err "sonde-prof record: --trace has no --stats (its loss is said on stderr)" \
  "--stats is a profile stream's accounting: not with --trace" \
  "$PROF" record --trace -d 5000 --stats "$tmp/s.json" -e "$ELF" -o "$tmp/h.txt" 127.0.0.1
host_err "sonde-prof record: --trace takes every task" \
  "--trace is every task's switches: -p does not apply" \
  "$PROF" record --trace -p 7 -e "$ELF" -o "$tmp/h.txt" 127.0.0.1
host_err "sonde-prof record: --trace -o .json holds one kernel's, refused for two first" \
  "-o $tmp/h.json holds one kernel's trace: give one HOST (2 given), or -o FILE.txt for each in turn" \
  "$PROF" record --trace -e "$ELF" -o "$tmp/h.json" 127.0.0.1 127.0.0.2
host_err "sonde-prof record: --trace -o .svg is no trace's" \
  "-o $tmp/h.svg: unknown extension for --trace (.txt, .pftrace, .json, .html)" \
  "$PROF" record --trace -e "$ELF" -o "$tmp/h.svg" 127.0.0.1
host_err "sonde-prof record: -e once or once per HOST" "give -e once, or once per HOST in order" \
  "$PROF" record -e "$ELF" -e "$ELF" -e "$ELF" -o "$tmp/h.svg" 127.0.0.1 127.0.0.2
host_err "sonde-prof record: missing ELF, exit 2 before any request" "nope.elf" \
  "$PROF" record -e "$tmp/nope.elf" -o "$tmp/h.svg" 127.0.0.1:9
printf '%064d\n' 0 > "$tmp/key"
host_err "sonde-prof record: --id once per HOST" "give --id once per HOST in order" \
  "$PROF" record -k "$tmp/key" --id a -e "$ELF" -o "$tmp/h.svg" 127.0.0.1:9 127.0.0.2:9
host_err "sonde-prof record: --id needs -k" "--id names the kernels' ushid=, which only a key (-k) uses" \
  "$PROF" record --id a -e "$ELF" -o "$tmp/h.svg" 127.0.0.1:9
host_err "sonde-prof record: a bad --id names the rule" "kernel id 'a/b' must be 1-31 characters" \
  "$PROF" record -k "$tmp/key" --id a/b -e "$ELF" -o "$tmp/h.svg" 127.0.0.1:9
host_err "sonde-sh: -i without -k" "-i alpha names a kernel's ushid=, which only a key (-k) uses" \
  build/host/sonde-sh -i alpha 127.0.0.1:9 version
host_err "sonde-sh: a bad -i names the rule" "kernel id 'al pha' must be 1-31 characters" \
  build/host/sonde-sh -k "$tmp/key" -i "al pha" 127.0.0.1:9 version

# ---- top: the live view, fed by --replay (burn.raw in a loop) -----------
# Plain lines when stdout is not a terminal: a table per second, each
# followed by a separator line, for -n refreshes.
"$PROF" top -n 3 -e "$ELF" --replay "$tmp/burn.raw" > "$tmp/top.txt" 2> "$tmp/err"; r=$?
if [ $r = 0 ] && [ "$(grep -c '^-\{80\}$' "$tmp/top.txt")" = 3 ] &&
   grep -qE '^   90\.0    90\.0  burn_spin$' "$tmp/top.txt" &&
   grep -qE '^    0\.0    97\.0  burn_task$' "$tmp/top.txt" &&
   grep -q '^sonde-prof top  burn.raw  source tick 100Hz  window 5 s$' "$tmp/top.txt" &&
   ! grep -q '^q quit' "$tmp/top.txt" && [ ! -s "$tmp/err" ]; then
  ok "top, stdout not a terminal: plain tables, burn_spin 90% self"
else bad "top, stdout not a terminal: plain tables, burn_spin 90% self" "exit $r: $(cat "$tmp/err" "$tmp/top.txt")"; fi
# Two kernels: a line each in the header, a self% column each.
sed 's/^60 /10 /; s/samples=100/samples=50/' "$tmp/burn.raw" > "$tmp/half.raw"
"$PROF" top -n 2 -e "$ELF" --replay "$tmp/burn.raw" --replay "$tmp/half.raw" > "$tmp/top2.txt" 2> "$tmp/err"; r=$?
if [ $r = 0 ] && grep -q '^sonde-prof top  2 kernels  window 5 s$' "$tmp/top2.txt" &&
   grep -q '^k2 half.raw  source tick 100Hz  ' "$tmp/top2.txt" &&
   grep -q '^  SELF%  TOTAL%    k1%    k2%  FUNCTION$' "$tmp/top2.txt" &&
   grep -qE '^   86\.7    86\.7   90\.0   80\.0  burn_spin$' "$tmp/top2.txt"; then
  ok "top, two kernels: per-kernel lines and columns"
else bad "top, two kernels: per-kernel lines and columns" "exit $r: $(cat "$tmp/err" "$tmp/top2.txt")"; fi
"$PROF" top -e "$ELF" --replay "$tmp/burn.raw" > /dev/null 2>&1 & pid=$!
sleep 1.5; kill -TERM $pid; wait $pid; r=$?
check "top exits 0 on SIGTERM" [ $r = 0 ]
host_err "top: -w out of range names the range" "-w 0 out of range (1-3600 s)" \
  "$PROF" top -w 0 -e "$ELF" --replay "$tmp/burn.raw"
host_err "top: -w 3601 out of range" "-w 3601 out of range (1-3600 s)" \
  "$PROF" top -w 3601 -e "$ELF" --replay "$tmp/burn.raw"
host_err "top: -n out of range" "-n 0 out of range" \
  "$PROF" top -n 0 -e "$ELF" --replay "$tmp/burn.raw"
host_err "top: no ELF" "no kernel ELF: give -e ELF" "$PROF" top --replay "$tmp/burn.raw"
host_err "top: build id mismatch, exit 2" "build id mismatch" \
  "$PROF" top -n 1 -e "$ELF" --replay "$tmp/other.raw"
"$PROF" top -n 1 -e "$ELF" 127.0.0.1:9 > "$tmp/out" 2> "$tmp/err"; r=$?
if [ $r = 1 ] && grep -q "127.0.0.1:9 refused the request: nothing listens there" "$tmp/err" &&
   [ ! -s "$tmp/out" ]; then ok "top HOST with nothing listening: exit 1 before any screen"
else bad "top HOST with nothing listening: exit 1 before any screen" "exit $r: $(cat "$tmp/err" "$tmp/out")"; fi
host_err "top: unresolvable HOST, exit 2" "cannot resolve 'no..such.host'" \
  "$PROF" top -e "$ELF" no..such.host
host_err "top: HOSTs and --replay together" "give HOSTs or --replay, not both" \
  "$PROF" top -e "$ELF" --replay "$tmp/burn.raw" 127.0.0.1
"$PROF" top --help > "$tmp/help" 2>&1; h=$?
if [ $h = 0 ] && grep -q '^usage: sonde-prof top' "$tmp/help" && grep -q -- '-w SECONDS' "$tmp/help"; then
  ok "top --help: usage on stdout, exit 0"
else bad "top --help: usage on stdout, exit 0" "exit $h: $(cat "$tmp/help")"; fi

# Under tmux, an 80x24 terminal: burn_spin on screen within 3 s, enter
# shows its callers, q quits.
if command -v tmux > /dev/null; then
  tsock=$tmp/tmux.sock
  tcap() { tmux -S "$tsock" capture-pane -p -t top 2>/dev/null; }
  TERM=${TERM:-xterm} tmux -S "$tsock" -f /dev/null new-session -d -s top -x 80 -y 24 \
    "$PROF top -e $ELF --replay $tmp/burn.raw 2> $tmp/top.err; echo \$? > $tmp/top.rc; sleep 60"
  seen=0
  for _ in $(seq 30); do
    tcap | grep -qE '^> +90\.0 +90\.0  burn_spin$' && { seen=1; break; }
    sleep 0.1
  done
  if [ $seen = 1 ]; then ok "top under tmux 80x24: burn_spin selected at the top within 3 s"
  else bad "top under tmux 80x24: burn_spin selected at the top within 3 s" "$(tcap; cat "$tmp/top.err" 2>/dev/null)"; fi
  tmux -S "$tsock" send-keys -t top Enter
  sleep 0.5
  if tcap | grep -q '^callers of burn_spin: in' && tcap | grep -qE '^> 100\.0 +[0-9]+  burn_inner$' &&
     tcap | grep -q '^q quit  up/down select  enter: its callers  left/esc: back$'; then
    ok "top under tmux: enter shows burn_spin's callers"
  else bad "top under tmux: enter shows burn_spin's callers" "$(tcap)"; fi
  tmux -S "$tsock" send-keys -t top Left
  tmux -S "$tsock" send-keys -t top q
  for _ in $(seq 30); do [ -s "$tmp/top.rc" ] && break; sleep 0.1; done
  if [ "$(cat "$tmp/top.rc" 2>/dev/null)" = 0 ]; then ok "top under tmux: q quits, exit 0"
  else bad "top under tmux: q quits, exit 0" "$(tcap; cat "$tmp/top.err" 2>/dev/null)"; fi
  tmux -S "$tsock" kill-server 2>/dev/null
else
  echo "SKIP top under tmux: no tmux (scripts/deps.sh installs it)"
fi

# ---- off-CPU profiles: every output (tests/tools/check_offcpu_prof.sh)
. tests/tools/check_offcpu_prof.sh

# ---- the parsers build as kernel code: freestanding, no library calls
for src in profile_raw trace_raw; do
for cc in gcc aarch64-linux-gnu-gcc; do
  command -v $cc > /dev/null || continue
  if $cc -std=gnu11 -O2 -ffreestanding -fno-pic -fno-stack-protector -mgeneral-regs-only \
       -Wall -Wextra -Werror -Wmissing-prototypes -I. -c uapi/$src.c -o "$tmp/praw.o" 2> "$tmp/cc" &&
     [ -z "$(nm "$tmp/praw.o" | awk '$1 == "U"')" ]; then
    ok "uapi/$src.c builds freestanding with $cc and calls nothing"
  else bad "uapi/$src.c builds freestanding with $cc and calls nothing" "$(cat "$tmp/cc"; nm "$tmp/praw.o" 2>/dev/null | awk '$1 == "U"')"; fi
done
done

# ---- arm64: the same tool on the other kernel (addresses are just ELF
# addresses; nothing in sonde-prof knows the architecture).
if command -v aarch64-linux-gnu-objdump > /dev/null &&
   make -s ARCH=arm64 build/arm64/kernel.elf > /dev/null 2>&1; then
  ELF=build/arm64/kernel.elf OBJDUMP=aarch64-linux-gnu-objdump
  bid=$(readelf -n "$ELF" | awk '/Build ID/ { print $3 }')
  spin=$(sym burn_spin) r_inner=$(ret_after burn_inner burn_spin)
  printf '# sonde raw build-id=%s source=pmu/pseudo-nmi arm64 pmuv3 cycles samples=5 dropped=0 cpus=1 ms=1000\n5 3 burn 0 %s %s\n' \
    "$bid" "$(hex_add "$spin" 0x1c)" "$r_inner" > "$tmp/a64.raw"
  run -i "$tmp/a64.raw" -e "$ELF" -o "$tmp/a64.txt"
  if [ "$(rc)" = 0 ] && grep -qE '^100\.0% 5 burn_spin\+0x1c \(kernel/cmd/burn.c:[0-9]+\)$' "$tmp/a64.txt" &&
     grep -qE '^        <- burn_inner\+0x[0-9a-f]+ \(kernel/cmd/burn.c:24\)$' "$tmp/a64.txt"; then
    ok "arm64 kernel: burn_spin and its caller with file:line"
  else bad "arm64 kernel: burn_spin and its caller with file:line" "$(cat "$tmp/err" "$tmp/a64.txt")"; fi
else
  echo "SKIP arm64: no aarch64 toolchain or the arm64 build failed"
fi

finish
