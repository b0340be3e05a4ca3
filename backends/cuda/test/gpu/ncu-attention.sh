#!/usr/bin/env bash
# On the GPU machine, with the kit of package-kit.sh carried as .dvR: ncu's
# sections for attention candidates of the benchmark (one launch each, after
# one to warm up), to OUTDIR/<label>.txt.
#
#   bash backends/cuda/test/gpu/ncu-attention.sh OUTDIR "attention f16 128x4096x128" \
#     "128x64 w8 s2" "128x64 w8 s2 overlap"
set -uo pipefail
res=${1:?give an output folder}
figure=${2:?give a figure}
shift 2
work=$(mktemp -d)
mkdir -p "$res"
# shellcheck source=backends/common/gpu/kit.sh
source backends/common/gpu/kit.sh
gpu_kit_unpack .dvR "$work"
xz -dc .dvR/gpu/bench.tkpkg.xz >"$work/bench.tkpkg"
status=0
for label in "$@"; do
  TK_BACKEND=cuda TK_LIBRARY=$work/rt/build/lib/libtk_runtime.so \
    timeout 240 ncu --clock-control none --kernel-name "regex:^figure[0-9]+_candidate" \
    --launch-skip 1 --launch-count 1 --section SpeedOfLight \
    --section ComputeWorkloadAnalysis --section SchedulerStats \
    --section WarpStateStats --section Occupancy --section LaunchStats \
    python3 backends/cuda/test/gpu/attention_candidate.py \
    --package "$work/bench.tkpkg" --manifest .dvR/gpu/manifest \
    --figure "$figure" --label "$label" --launches 2 \
    >"$res/${label// /_}.txt" 2>&1 || status=1
done
exit $status
