# scripts/jobs.sh: sourced by scripts/unit.sh and scripts/fuzz.sh.
#
# jobs_run N DEAD FN ARG...: runs FN ARG for every ARG, N at once, and
# prints each run's output whole, in the order of the ARGs, as soon as it
# and every run before it have ended (so a stage killed by its timeout
# has shown what had finished). FN's last line is "RESULT PASSED FAILED";
# the sums go to $passed and $failed. A run that printed no RESULT (it
# died) counts DEAD failures, and says so.
jobs_run() {
  local n=$1 dead=$2 fn=$3; shift 3
  local dir; dir=$(mktemp -d)
  local args=("$@") i=0 shown=0 p q
  passed=0; failed=0
  # Prints every finished run from $shown on, stopping at one still running.
  jobs_show() {
    while [ "$shown" -lt "$i" ] && [ -e "$dir/$shown.done" ]; do
      grep -v '^RESULT ' "$dir/$shown"
      if read -r _ p q < <(grep '^RESULT ' "$dir/$shown" | tail -1) && [ -n "$q" ]; then
        passed=$((passed + p)); failed=$((failed + q))
      else
        failed=$((failed + dead)); echo "${args[$shown]}: no result (the job died)"
      fi
      shown=$((shown + 1))
    done
  }
  for a in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$n" ]; do wait -n; jobs_show; done
    { "$fn" "$a" > "$dir/$i" 2>&1; : > "$dir/$i.done"; } &
    i=$((i + 1))
  done
  while [ "$shown" -lt "$i" ]; do
    [ -n "$(jobs -rp)" ] && wait -n
    jobs_show
    [ -z "$(jobs -rp)" ] && jobs_show && break
  done
  for ((; shown < i; shown++)); do     # killed before it could say it ended
    failed=$((failed + dead)); echo "${args[$shown]}: no result (the job died)"
  done
  rm -rf "$dir"
}
