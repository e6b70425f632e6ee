# tests/tools/check_offcpu_prof.sh: sonde-prof on an off-CPU profile (kind=offcpu,
# `profile off ... raw`), sourced by check_sonde_prof.sh with its helpers
# (ELF, PROF, tmp, run, rc, ret_after, ok/bad): a raw profile made from
# real return addresses of burn wait's chains, then every output read
# with the tool people would read it with: go tool pprof picks the
# off_cpu sample type and shows the reason as the leaf and the waker as
# labels; folded stacks end in the reason, in µs; the SVG colours the
# reason frames apart; the text is `profile off`'s report with file:line.
r_wq=$(ret_after waitq_wait schedule)
r_bq=$(ret_after burn_wait_queue waitq_wait)
r_bt=$(ret_after burn_wait_task burn_wait_queue)
r_sl=$(ret_after sleep_until schedule)
r_bs=$(ret_after burn_wait_sleep sleep_ms)
r_bt2=$(ret_after burn_wait_task burn_wait_sleep)
r_wk=$(ret_after burn_waker_task waitq_wake_all)
if [ -z "$r_wq" ] || [ -z "$r_bq" ] || [ -z "$r_bt" ] || [ -z "$r_sl" ] || [ -z "$r_bs" ] ||
   [ -z "$r_bt2" ] || [ -z "$r_wk" ]; then
  bad "off-CPU: burn wait's return addresses from objdump" "$r_wq $r_bq $r_bt $r_sl $r_bs $r_bt2 $r_wk"
else
cat > "$tmp/off.raw" <<EOF
# sonde raw build-id=$bid source=sched samples=6 dropped=1 cpus=1 ms=1000 kind=offcpu
3:300000000 6 burn-wait 1 why=waitq:burn-q waker=7:burn-waker $r_wq $r_bq $r_bt | $r_wk
2:200000000 6 burn-wait 1 why=sleep waker=0 $r_sl $r_bs $r_bt2
1:1500 6 burn-wait 1 why=runnable $r_wq $r_bq $r_bt
EOF
run -i "$tmp/off.raw" -e "$ELF" -o "$tmp/off.pb.gz"
check "off-CPU: report -o .pb.gz exits 0" [ "$(rc)" = 0 ]
top=$(go tool pprof -symbolize=none -top -sample_index=off_cpu "$tmp/off.pb.gz" 2>&1)
if printf '%s\n' "$top" | grep -q "^Type: off_cpu$" &&
   printf '%s\n' "$top" | grep -qE "Total samples = 500(\.0015)?ms" &&
   printf '%s\n' "$top" | awk '/flat%/ { getline; exit !($1 == "300ms" && $6 == "[waitq" && $7 == "burn-q]") }'; then
  ok "off-CPU: pprof -sample_index=off_cpu: 500 ms, [waitq burn-q] the heaviest leaf"
else bad "off-CPU: pprof -sample_index=off_cpu: 500 ms, [waitq burn-q] the heaviest leaf" "$top"; fi
types=$(go tool pprof -symbolize=none -raw "$tmp/off.pb.gz" 2>&1 | sed -n '/^Samples:/,/^ *[0-9]/p' | head -3)
if printf '%s\n' "$types" | grep -q "samples/count cpu/nanoseconds off_cpu/nanoseconds\[dflt\] wall/nanoseconds"; then
  ok "off-CPU: pprof sample types samples, cpu, off_cpu (the default) and wall"
else bad "off-CPU: pprof sample types samples, cpu, off_cpu (the default) and wall" "$types"; fi
wall=$(go tool pprof -symbolize=none -top -sample_index=wall "$tmp/off.pb.gz" 2>&1)
if printf '%s\n' "$wall" | grep -q "^Type: wall$" &&
   printf '%s\n' "$wall" | grep -qE "Total samples = 500(\.0015)?ms"; then ok "off-CPU: -sample_index=wall is the same time"
else bad "off-CPU: -sample_index=wall is the same time" "$wall"; fi
tags=$(go tool pprof -symbolize=none -tags "$tmp/off.pb.gz" 2>&1)
if printf '%s\n' "$tags" | grep -qE "300(\.0)?ms \( *60(\.00)?%\): 7 burn-waker" &&
   printf '%s\n' "$tags" | grep -qE "200(\.0)?ms \( *40(\.00)?%\): the tick" &&
   printf '%s\n' "$tags" | grep -qE "waker_stack: Total 300(\.0)?ms" &&
   printf '%s\n' "$tags" | grep -q "burn_waker_task"; then
  ok "off-CPU: pprof labels waker (7 burn-waker, the tick) and waker_stack"
else bad "off-CPU: pprof labels waker (7 burn-waker, the tick) and waker_stack" "$tags"; fi
run -i "$tmp/off.raw" -e "$ELF" -o "$tmp/off.folded"
if [ "$(rc)" = 0 ] && grep -qE '^burn-wait;.*burn_wait_queue;waitq_wait;\[waitq burn-q\] 300000$' "$tmp/off.folded" &&
   grep -qE '^burn-wait;.*burn_wait_sleep;.*\[sleep\] 200000$' "$tmp/off.folded" &&
   grep -qE '^burn-wait;.*waitq_wait;\[runnable\] 2$' "$tmp/off.folded"; then
  ok "off-CPU: folded stacks end in the reason, weighted in µs"
else bad "off-CPU: folded stacks end in the reason, weighted in µs" "$(cat "$tmp/err" "$tmp/off.folded")"; fi
run -i "$tmp/off.raw" -e "$ELF" -o "$tmp/off.svg"
# The reason's rect: blue (B >= 190, R and G under 150); a function's: the hot palette (R >= 205).
rsn=$(grep -A1 '<title>\[waitq burn-q\] (300000 us' "$tmp/off.svg" | sed -n 's/.*fill="rgb(\([0-9]*\),\([0-9]*\),\([0-9]*\))".*/\1 \2 \3/p')
fn=$(grep -A1 '<title>burn_wait_queue ' "$tmp/off.svg" | sed -n 's/.*fill="rgb(\([0-9]*\),.*/\1/p')
if [ "$(rc)" = 0 ] && xmllint --noout "$tmp/off.svg" 2>/dev/null && [ -n "$rsn" ] && [ -n "$fn" ] &&
   echo "$rsn" | awk '{ exit !($3 >= 190 && $1 < 150 && $2 < 150) }' && [ "$fn" -ge 205 ]; then
  ok "off-CPU: svg draws [waitq burn-q] in blue, functions in the hot palette"
else bad "off-CPU: svg draws [waitq burn-q] in blue, functions in the hot palette" "reason rgb: $rsn; function red: $fn"; fi
run -i "$tmp/off.raw" -e "$ELF" -o "$tmp/off.txt"
if [ "$(rc)" = 0 ] && has "$tmp/off.txt" "^off-cpu profiled 1000 ms$" &&
   has "$tmp/off.txt" "^blocked 500.000 ms, runnable 0.002 ms, 1 tasks, 1 dropped$" &&
   has "$tmp/off.txt" "^60.0% 300.000 ms \[waitq burn-q\] task 6 burn-wait$" &&
   grep -qE '^        <- waitq_wait\+0x[0-9a-f]+ \(kernel/sched.c:[0-9]+\)$' "$tmp/off.txt" &&
   has "$tmp/off.txt" "^        woken by 7 burn-waker$" &&
   grep -qE '^            <- burn_waker_task\+0x[0-9a-f]+ \(kernel/cmd/burn_wait.c:[0-9]+\)$' "$tmp/off.txt" &&
   has "$tmp/off.txt" "^40.0% 200.000 ms \[sleep\] task 6 burn-wait$" &&
   has "$tmp/off.txt" "^        woken by the tick$" &&
   has "$tmp/off.txt" "^0.0% 0.002 ms \[runnable\] task 6 burn-wait$"; then
  ok "off-CPU: txt is profile off's report with file:line and the wakers"
else bad "off-CPU: txt is profile off's report with file:line and the wakers" "$(cat "$tmp/err" "$tmp/off.txt")"; fi
# A chain line without its reason is refused, naming the line.
sed 's/ why=sleep waker=0//' "$tmp/off.raw" > "$tmp/offbad.raw"
run -i "$tmp/offbad.raw" -e "$ELF" -o "$tmp/offbad.txt"
if [ "$(rc)" = 2 ] && grep -q 'line 3: expected " why="' "$tmp/err" && [ ! -e "$tmp/offbad.txt" ]; then
  ok "off-CPU: a chain without why= is refused with its line, no output"
else bad "off-CPU: a chain without why= is refused with its line, no output" "rc $(rc): $(cat "$tmp/err")"; fi
fi
