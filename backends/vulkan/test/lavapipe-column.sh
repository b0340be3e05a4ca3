#!/usr/bin/env bash
# The vulkan column of tk-conformance on Mesa's lavapipe at a given subgroup
# size, with Khronos' validation layer on (ctest's conformance-vulkan-sg*).
#
#   lavapipe-column.sh BIN_DIR OUT_DIR LANES [TK-CONFORMANCE ARGUMENTS...]
#
# (ctest passes `--shard I/2 --shard-only bench_*,attention_*`: each width
# runs half of the bench_* cells, the autotuner's candidates, and of the
# attention cells, and every other cell.)
#
# LANES 8 is lavapipe's default (LP_NATIVE_VECTOR_WIDTH=256); 16 needs
# LP_NATIVE_VECTOR_WIDTH=512, which lavapipe honours only on an AVX-512
# host: elsewhere the column runs at 4 lanes (=128) and says so. Fails
# unless the device reports the lanes asked for, every cell the backend
# does not declare (or refuse as) unsupported passes, and the validation
# layer said nothing.
set -euo pipefail
bin=$1 out=$2 lanes=$3
shift 3
case $lanes in
  4) width=128 ;;
  8) width=256 ;;
  16) width=512 ;;
  *) echo "lavapipe-column.sh: lanes must be 4, 8 or 16, not $lanes" >&2; exit 2 ;;
esac
if [ "$lanes" = 16 ] && ! grep -qw avx512f /proc/cpuinfo; then
  echo "lavapipe-column.sh: this host has no AVX-512, so lavapipe cannot run" \
       "subgroups of 16; running subgroups of 4 (LP_NATIVE_VECTOR_WIDTH=128)"
  lanes=4 width=128
fi
# Lavapipe compiles each pipeline with LLVM, which is most of a column's
# time on a machine whose Mesa shader cache is empty (CI's): without LLVM's
# optimisation passes (GALLIVM_PERF=nopt) a cold column at 8 lanes took 272 s
# instead of 362 (session 28). The cells are small: running unoptimised code
# costs them less than optimising it.
export GALLIVM_PERF=${GALLIVM_PERF:-nopt}
export LP_NATIVE_VECTOR_WIDTH=$width TK_BACKEND=vulkan TK_VULKAN_VALIDATION=1
mkdir -p "$out"

# The device must run the subgroup size this column claims.
info=$("$bin/tk-info" 2>&1) || { echo "$info"; exit 1; }
if ! grep -Eq "warp size +$lanes\$" <<<"$info"; then
  echo "lavapipe-column.sh: the vulkan device does not report subgroups of" \
       "$lanes at LP_NATIVE_VECTOR_WIDTH=$width:"
  echo "$info"
  exit 1
fi

status=0
"$bin/tk-conformance" --backend vulkan --expect pass --out "$out" "$@" \
  2> "$out/stderr.txt" || status=$?
cat "$out/stderr.txt" >&2
messages=$(grep -c "tk-vulkan: validation:" "$out/stderr.txt" || true)
echo "lavapipe-column.sh: subgroups of $lanes, $messages validation message(s)"
if [ "$messages" != 0 ]; then
  exit 1
fi
exit $status
