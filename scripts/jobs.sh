# scripts/jobs.sh: sourced by scripts/unit.sh and scripts/fuzz.sh.
#
# jobs_run N DEAD FN ARG...: runs FN ARG for every ARG, N at once, then
# prints each run's output whole, in the order of the ARGs, as if they had
# run one by one. FN's last line is "RESULT PASSED FAILED"; the sums go to
# $passed and $failed. A run that printed no RESULT (it died) counts DEAD
# failures, and says so.
jobs_run() {
  local n=$1 dead=$2 fn=$3; shift 3
  local dir; dir=$(mktemp -d)
  local i=0 a p q
  for a in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$n" ]; do wait -n; done
    "$fn" "$a" > "$dir/$i" 2>&1 &
    i=$((i + 1))
  done
  wait
  passed=0; failed=0; i=0
  for a in "$@"; do
    grep -v '^RESULT ' "$dir/$i"
    if read -r _ p q < <(grep '^RESULT ' "$dir/$i" | tail -1) && [ -n "$q" ]; then
      passed=$((passed + p)); failed=$((failed + q))
    else
      failed=$((failed + dead)); echo "$a: no result (the job died)"
    fi
    i=$((i + 1))
  done
  rm -rf "$dir"
}
