# Sourced by .ci/run: `phase NAME COMMAND...` runs COMMAND and records how
# many seconds it took; at exit a table of every phase is printed (and
# written to build/ci-phases.txt), the failing phase marked, so a slow or
# broken CI says where its time went.

tk_phase_names=()
tk_phase_seconds=()
tk_phase_status=()
tk_phase_start=$SECONDS

phase() {
  local name=$1
  shift
  local start=$SECONDS status=0
  echo "== ci: $name"
  "$@" || status=$?
  tk_phase_names+=("$name")
  tk_phase_seconds+=($((SECONDS - start)))
  tk_phase_status+=("$status")
  if [ "$status" -ne 0 ]; then
    echo "== ci: $name FAILED (exit $status)"
    exit "$status"
  fi
}

tk_phase_table() {
  local i total=$((SECONDS - tk_phase_start))
  local file=${TK_CI_PHASES_FILE:-build/ci-phases.txt}
  mkdir -p "$(dirname "$file")"
  {
    printf '%-34s %8s  %s\n' phase seconds status
    for i in "${!tk_phase_names[@]}"; do
      printf '%-34s %8d  %s\n' "${tk_phase_names[$i]}" \
        "${tk_phase_seconds[$i]}" \
        "$([ "${tk_phase_status[$i]}" -eq 0 ] && echo ok || echo "FAILED (${tk_phase_status[$i]})")"
    done
    printf '%-34s %8d  (%dm %02ds)\n' total "$total" $((total / 60)) \
      $((total % 60))
  } | tee "$file"
}
trap tk_phase_table EXIT
