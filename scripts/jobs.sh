# scripts/jobs.sh: sourced by scripts/unit.sh and scripts/fuzz.sh.
#
# make_generated WHO LOG FILE...: the generated sources (under build/)
# that the FILEs' "// LINK:" lines name, made first, once, by one make, so
# that two jobs never build the same one at once; make's words go to LOG,
# and its last ones to the output, under WHO, when it failed.
make_generated() {
  local who=$1 log=$2 f src gen=(); shift 2
  for f in "$@"; do
    for src in $(sed -n 's,^// LINK:,,p' "$f" | head -1); do
      case $src in build/*) gen+=("$src") ;; esac
    done
  done
  if [ ${#gen[@]} -gt 0 ] && ! make -s $(printf '%s\n' "${gen[@]}" | sort -u) > "$log" 2>&1; then
    echo "$who: generated sources failed to build:"; sed 's/^/  /' "$log" | tail -30
  fi
}
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
