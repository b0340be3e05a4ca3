# Sourced by the GPU scripts: a summary file in OUTDIR, steps named in it,
# and each step's exit status recorded; `failures` counts the non-zero ones.
#
#   out=OUTDIR; source backends/cuda/test/gpu/steps.sh
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"
failures=0
step() { echo "== $*" | tee -a "$summary"; }
# Records a step's exit status; any non-zero one fails the script.
record() { # name, status
  echo "$1 exit $2" >>"$summary"
  [ "$2" -eq 0 ] || { failures=$((failures + 1)); echo "FAILED: $1" | tee -a "$summary"; }
}
