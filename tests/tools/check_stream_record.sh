#!/usr/bin/env bash
# `sonde-prof record -d` over 2 s (the stream, docs/continuous.md) end to
# end with no QEMU: fake kernels (tests/tools/fake_stream_kernel.py) answer
# the UDP shell on 127.0.0.1 and stream samples of the real x86 kernel's
# burn chain under its build id, at exactly hz x cpus x seconds. Checks:
# the count and the loss in the .txt header and the pprof comments (go
# tool pprof -comments), exact when the fake loses every K-th datagram;
# three kernels with one dying halfway (named, the others complete, the
# kernel label on every sample); an END that never came; -r's raw profile
# read back by `report`; forged datagrams that change no count; a busy
# kernel (exit 1); kernels that answer without the control line or in
# another version (named once, the others stream on); -d's units; and
# off-CPU intervals (`profile off
# stream`) through record --off and top --off.
# Usage: tests/tools/check_stream_record.sh   (ends "N passed, N failed")
set -u
cd "$(dirname "$0")/../.."
ELF=build/x86_64/kernel.elf
PROF=build/host/sonde-prof
FAKE=tests/tools/fake_stream_kernel.py
make -s "$ELF" "$PROF" build/host/sonde-sh || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
export HOME=$tmp                # go tool pprof keeps state under $HOME
. tests/tools/lib.sh
frames="$(printf '%x' $((0x$(sym burn_spin) + 0x30))),$(sym burn_task)"

# A free UDP port on 127.0.0.1 for each fake.
free_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# fake PORTVAR ARGS...: starts one, waits for its "ready".
fake() {
  local port; port=$(free_port)
  python3 "$FAKE" --port "$port" --build-id "$bid" --frames "$frames" "${@:2}" > "$tmp/fake.$port" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do grep -qs ready "$tmp/fake.$port" && break; sleep 0.1; done
  printf -v "$1" '%s' "$port"
}
rec() { "$PROF" record "$@" > "$tmp/out" 2> "$tmp/err"; echo $? > "$tmp/rc"; }
rc() { cat "$tmp/rc"; }

# ---- off-CPU: record --off and top --off over `profile off stream` ------
fake po --cpus 2 --hz 100
rec --off -d 2100ms -e "$ELF" -r "$tmp/po.raw" -o "$tmp/po.txt" "127.0.0.1:$po"
if [ "$(rc)" = 0 ] && has "$tmp/po.txt" "^off-cpu profiled 2100 ms$" &&
   has "$tmp/po.txt" "^blocked 420.000 ms, runnable 0.000 ms, 1 tasks, 0 dropped$" &&
   has "$tmp/po.txt" "^streamed: 0 records lost on the wire (0 datagrams)" &&
   [ "$(grep -c '^50.0% 210.000 ms \[waitq burn-q\] task 7 burn$' "$tmp/po.txt")" = 2 ] &&
   has "$tmp/po.txt" "^        woken by 9 burn-waker$" &&
   has "$tmp/po.raw" " source=sched samples=420 dropped=0 cpus=2 ms=2100 kind=offcpu$" &&
   has "$tmp/po.raw" " why=waitq:burn-q waker=9:burn-waker "; then
  ok "record --off -d 2100ms: 420 intervals of 1 ms on burn-q (an entry per CPU), woken by burn-waker, nothing lost"
else bad "record --off -d 2100ms: 420 intervals of 1 ms on burn-q (an entry per CPU), woken by burn-waker, nothing lost" "$(cat "$tmp/err" "$tmp/po.txt" 2>/dev/null | head -20)"; fi
fake pt --cpus 2 --hz 100
"$PROF" top --off -n 2 -e "$ELF" "127.0.0.1:$pt" > "$tmp/top" 2> "$tmp/err"
if grep -qE '^ +100\.0 +100\.0 +\[waitq burn-q\]$' "$tmp/top" && grep -q " us off-CPU in " "$tmp/top"; then
  ok "top --off: [waitq burn-q] all of the time waiting, in µs"
else bad "top --off: [waitq burn-q] all of the time waiting, in µs" "$(cat "$tmp/top" "$tmp/err" | tail -15)"; fi

# ---- one kernel, nothing lost ------------------------------------------
fake p1 --cpus 4 --hz 100
rec -d 3s -e "$ELF" -o "$tmp/one.txt" "127.0.0.1:$p1"
check "record -d 3s exits 0" [ "$(rc)" = 0 ]
check "3 s x 100 Hz x 4 CPUs: 1200 samples, none dropped" has "$tmp/one.txt" "^1200 samples on 4 cpus, 0 dropped"
check "the header says nothing was lost on the wire" has "$tmp/one.txt" "^streamed: 0 records lost on the wire (0 datagrams)$"
check "the samples are named from the ELF" has "$tmp/one.txt" "burn_spin+0x30"
check "no progress line when stderr is not a terminal" [ ! -s "$tmp/err" ]

# ---- loss on the wire and in the kernel, exactly --------------------------
fake p2 --cpus 4 --hz 100 --drop-every 5 --drops 3
rec -d 3s -r "$tmp/lossy.raw" -e "$ELF" -o "$tmp/lossy.pb.gz" "127.0.0.1:$p2"
check "a lossy stream still exits 0" [ "$(rc)" = 0 ]
go tool pprof -symbolize=none -comments "$tmp/lossy.pb.gz" > "$tmp/comments" 2>&1
samples=$(sed -n 's/.* \([0-9]*\) samples, \([0-9]*\) dropped.*/\1/p' "$tmp/comments")
dropped=$(sed -n 's/.* \([0-9]*\) samples, \([0-9]*\) dropped.*/\2/p' "$tmp/comments")
lost=$(sed -n 's/.*streamed: \([0-9]*\) records lost on the wire (\([0-9]*\) datagrams).*/\1/p' "$tmp/comments")
dgrams=$(sed -n 's/.*streamed: \([0-9]*\) records lost on the wire (\([0-9]*\) datagrams).*/\2/p' "$tmp/comments")
check "pprof -comments: samples + lost on the wire = 1200 ($samples + $lost)" \
  eval '[ -n "$samples" ] && [ -n "$lost" ] && [ $((samples + lost)) = 1200 ] && [ "$lost" -gt 0 ]'
check "pprof -comments: datagrams lost counted ($dgrams)" eval '[ -n "$dgrams" ] && [ "$dgrams" -gt 0 ]'
check "pprof -comments: 4 CPUs x 3 dropped in the kernel" [ "$dropped" = 12 ]
"$PROF" report -i "$tmp/lossy.raw" -e "$ELF" -o "$tmp/lossy.folded" 2> "$tmp/err2"
folded=$(awk '{ n += $NF } END { print n }' "$tmp/lossy.folded" 2>/dev/null)
check "-r keeps a raw profile that report reads ($folded samples)" [ "$folded" = "$samples" ]

# ---- forged datagrams from the kernel's address (issue 26) -----------------
# An unknown stream id (a restart, only if its shell says so: it does
# not), seqs 2^31 and a window ahead, a pid above INT32_MAX, a task name
# holding " samples=", another build id: the count is still exact, the
# refusals are said, and the profile parses.
fake pf --cpus 4 --hz 100 --forge 10
rec -d 3s -r "$tmp/forged.raw" -e "$ELF" -o "$tmp/forged.txt" "127.0.0.1:$pf"
check "forged datagrams: exit 0" [ "$(rc)" = 0 ]
check "forged datagrams: still 1200 samples, none dropped" has "$tmp/forged.txt" "^1200 samples on 4 cpus, 0 dropped"
check "forged datagrams: nothing lost on the wire, the refusals counted" \
  has "$tmp/forged.txt" "^streamed: 0 records lost on the wire (0 datagrams); refused [1-9][0-9]* datagrams (forged or not sane), 1 records (a field out of range)$"
check "forged datagrams: not taken for a restart" eval '! has "$tmp/err" "restarted"'
check "forged datagrams: said on stderr" has "$tmp/err" "kernel 127.0.0.1:$pf: datagrams from its address that are not its stream's"
"$PROF" report -i "$tmp/forged.raw" -e "$ELF" -o "$tmp/forged.folded" 2> "$tmp/err2"
folded=$(awk '{ n += $NF } END { print n }' "$tmp/forged.folded" 2>/dev/null)
check "forged datagrams: the raw profile reads back ($folded samples)" [ "$folded" = 1200 ]

# ---- three kernels, one dies halfway ------------------------------------
fake a --cpus 1; fake b --cpus 1 --die-after 1.5; fake c --cpus 1
rec -d 3s -e "$ELF" -o "$tmp/fleet.txt" "127.0.0.1:$a" "127.0.0.1:$b" "127.0.0.1:$c"
check "a fleet with one kernel lost exits 0" [ "$(rc)" = 0 ]
check "the lost kernel is named on stderr" has "$tmp/err" "kernel 127.0.0.1:$b stopped answering at 1\.[0-9] s"
check "and in its report" has "$tmp/fleet.txt" "stopped answering at 1\.[0-9] s"
n300=$(grep -c "^300 samples on 1 cpus, 0 dropped" "$tmp/fleet.txt")
check "the other two are complete (300 samples each)" [ "$n300" = 2 ]
check "every kernel has its report" [ "$(grep -c '^kernel 127.0.0.1:' "$tmp/fleet.txt")" = 3 ]
rec -d 3s -e "$ELF" -o "$tmp/fleet.pb.gz" "127.0.0.1:$a" "127.0.0.1:$c"
go tool pprof -symbolize=none -tags "$tmp/fleet.pb.gz" > "$tmp/tags" 2>&1
check "pprof -tags: the kernel label names both" eval 'has "$tmp/tags" "127.0.0.1:$a" && has "$tmp/tags" "127.0.0.1:$c"'

# ---- version skew: kernels that answer without the control line, or in another version
fake g1 --cpus 1; fake o1 --cpus 1 --old; fake v2 --cpus 1 --ctl-version 2; fake g2 --cpus 1
rec -d 3s -e "$ELF" -o "$tmp/skew.txt" "127.0.0.1:$g1" "127.0.0.1:$o1" "127.0.0.1:$v2" "127.0.0.1:$g2"
check "a fleet with kernels of other control versions exits 0" [ "$(rc)" = 0 ]
check "the old kernel is named once on stderr, with the versions" \
  eval '[ "$(grep -c "kernel 127.0.0.1:$o1 answers without a stream control line: it is older than stream control version 1, and this collector speaks version 1 only: left out" "$tmp/err")" = 1 ]'
check "the version-2 kernel is named once, with both versions" \
  eval '[ "$(grep -c "kernel 127.0.0.1:$v2 speaks stream control version 2, this collector version 1: left out" "$tmp/err")" = 1 ]'
check "the other two stream on, complete (300 samples each)" \
  [ "$(grep -c "^300 samples on 1 cpus, 0 dropped" "$tmp/skew.txt")" = 2 ]
check "nothing else is said of them" \
  eval '[ "$(grep -c "kernel 127.0.0.1:$o1" "$tmp/err")" = 1 ] && [ "$(grep -c "kernel 127.0.0.1:$v2" "$tmp/err")" = 1 ]'
rec -d 3s -e "$ELF" -o "$tmp/skew1.txt" "127.0.0.1:$o1"
check "a lone old kernel: exit 1, said" \
  eval '[ "$(rc)" = 1 ] && has "$tmp/err" "kernel 127.0.0.1:$o1 answers without a stream control line"'

# ---- an END that never came ----------------------------------------------
fake d --cpus 2 --no-end
rec -d 3s -e "$ELF" -o "$tmp/noend.txt" "127.0.0.1:$d"
check "no END: exit 0, said on stderr" eval '[ "$(rc)" = 0 ] && has "$tmp/err" "kernel 127.0.0.1:$d: its END never came"'
check "no END: said in the report" has "$tmp/noend.txt" "its END never came"

# ---- refusals and usage ----------------------------------------------------
fake e --cpus 1
build/host/sonde-sh "127.0.0.1:$e" profile stream 9 0 all > /dev/null
rec -d 3s -e "$ELF" -o "$tmp/busy.txt" "127.0.0.1:$e" "127.0.0.1:$a"
check "a busy kernel: exit 1, quoted, no output" \
  eval '[ "$(rc)" = 1 ] && has "$tmp/err" "127.0.0.1:$e said: profile: busy" && [ ! -e "$tmp/busy.txt" ]'
rec -d 5x -e "$ELF" -o "$tmp/x.txt" "127.0.0.1:$a"
check "-d 5x: exit 2 naming the units" eval '[ "$(rc)" = 2 ] && has "$tmp/err" "\"500ms\", \"10s\""'
rec -d 90000s -e "$ELF" -o "$tmp/x.txt" "127.0.0.1:$a"
check "-d 90000s: over a day, exit 2" [ "$(rc)" = 2 ]

finish
