#!/usr/bin/env bash
# The second of two GPU calls, for when a kit with every binary is over the
# run tool's 64 MiB carry limit (the LLVM/MLIR debs alone are 51 MiB): the
# steps of cuda-suite.sh that need tk-compile and tk-bench-kernels (the
# unheld dot against torch, the tensor-core instructions in the SASS), then
# cuda-bench.sh. Writes OUTDIR/steps.txt, bench.log, bench.json and
# launch.json; exits non-zero when a step fails. The first call runs
# cuda-suite.sh with a kit of the other binaries (those two steps fail
# there for want of theirs).
#
#   # here: a kit of tk-info alone, and the rest as one tar.xz (half the
#   # size of the kit's gzip) in a folder .git/info/exclude ignores
#   ../shared/device/kit.sh pack build/bin/tk-info
#   mkdir -p .gpu && tar -cJf .gpu/extra.txz build/bin/tk-compile \
#     build/bin/tk-bench-kernels build/bin/tk-bench-cuda build/lib/libtk.so \
#     build/lib/libtk_backend_cuda.so build/lib/tk-bytecode-check   # stripped
#   # there (carry .device and .gpu):
#   python3 -c "import tarfile; tarfile.open('.gpu/extra.txz').extractall('.')"
#   bash .device/run.sh bash backends/cuda/test/gpu/compile-and-bench.sh OUTDIR
set -uo pipefail
res=${1:-${OUT:?give an output folder}}
mkdir -p "$res"
work=$(mktemp -d)
export TK_CACHE_DIR
TK_CACHE_DIR=$(mktemp -d)
failures=0
{
  echo "== a dot the unit does not hold (mma.sync's emit path) against torch"
  TK_BACKEND=cuda TK_LIBRARY="$PWD/build/lib/libtk.so" timeout 120 \
    python3 backends/cuda/test/gpu/unheld-dot.py || failures=$((failures + 1))
  echo "== SASS of the fp16 matmul"
  for arch in sm_80 sm_90a; do
    ./build/bin/tk-compile examples/kernels/matmul.tk --backend cuda \
      --entry matmul --arch "$arch" --num-warps 4 --emit binary \
      -o "$work/matmul.cubin" || failures=$((failures + 1))
    sass=$(cuobjdump -sass "$work/matmul.cubin")
    echo "$arch: $(grep -c HMMA <<<"$sass") HMMA, $(grep -c HGMMA <<<"$sass") HGMMA"
    grep -qE "HMMA|HGMMA" <<<"$sass" || failures=$((failures + 1))
  done
  nvidia-smi -L
} >"$res/steps.txt" 2>&1
bash backends/cuda/test/gpu/cuda-bench.sh "$work/bench" >"$res/bench.log" 2>&1 ||
  failures=$((failures + 1))
cp "$work/bench/bench.json" "$work/bench/launch.json" "$res/" 2>/dev/null
echo "failures: $failures" | tee -a "$res/steps.txt"
[ "$failures" -eq 0 ]
