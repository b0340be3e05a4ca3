#!/usr/bin/env bash
# --shard I/N --shard-only NAMES divides only the named kernels' cells: the
# two halves of bench_softmax are disjoint and make up the whole, every
# vector_add cell runs in both, and the option is refused without --shard or
# with a pattern that names no kernel.
#
#   shard-only.sh TK_CONFORMANCE OUT_DIR
set -euo pipefail
tool=$1 out=$2
cells() { # the cells of a report, one "kernel dtype shape" a line
  sed -n 's/.*"kernel": "\([^"]*\)", "dtype": "\([^"]*\)", "shape": "\([^"]*\)".*/\1 \2 \3/p' \
    "$1/conformance.json" | sort
}
run() { "$tool" --backend cpu --kernel bench_softmax,vector_add "$@" >/dev/null 2>&1; }
run --out "$out/whole"
run --shard 0/2 --shard-only 'bench_*' --out "$out/half0"
run --shard 1/2 --shard-only 'bench_*' --out "$out/half1"
whole=$(cells "$out/whole")
half0=$(cells "$out/half0")
half1=$(cells "$out/half1")
fail() { echo "shard-only.sh: $*"; exit 1; }
[ "$(grep -c '^bench_softmax ' <<<"$whole")" -ge 2 ] || fail "too few bench_softmax cells to divide"
[ "$(grep '^vector_add ' <<<"$half0")" = "$(grep '^vector_add ' <<<"$whole")" ] ||
  fail "shard 0 left out vector_add cells"
[ "$(grep '^vector_add ' <<<"$half1")" = "$(grep '^vector_add ' <<<"$whole")" ] ||
  fail "shard 1 left out vector_add cells"
[ -z "$(comm -12 <(grep '^bench_' <<<"$half0") <(grep '^bench_' <<<"$half1"))" ] ||
  fail "the halves share bench_softmax cells"
[ "$(sort <(grep '^bench_' <<<"$half0") <(grep '^bench_' <<<"$half1"))" = \
  "$(grep '^bench_' <<<"$whole")" ] || fail "the halves do not make up the whole"
status=0; "$tool" --backend cpu --shard-only 'bench_*' --out "$out/bad" 2>/dev/null || status=$?
[ "$status" = 2 ] || fail "--shard-only without --shard: status $status, not 2"
status=0; "$tool" --backend cpu --shard 0/2 --shard-only 'bnch_*' --out "$out/bad" 2>/dev/null || status=$?
[ "$status" = 2 ] || fail "--shard-only naming no kernel: status $status, not 2"
echo "shard-only.sh: the bench_softmax cells split in two, vector_add whole in both"
