#!/usr/bin/env bash
# Columns run from a package, without a compiler: tk-conformance
# --write-package compiles a selection of the suite (builder kernels, TTIR,
# every dtype) for the cpu (an x86-64 psABI level, as a package for other
# machines holds) and for lavapipe's subgroups of 8, and tk-conformance-run,
# linked against libtk_runtime.so alone, runs those cells on the cpu and on
# lavapipe against the same references. Every cell must PASS or be
# UNSUPPORTED as the compiling column has it. Then the runner's refusals: no
# package, a corrupt one.
#
#   package-column.sh BINDIR OUTDIR
set -euo pipefail
bin=${1:?usage: package-column.sh BINDIR OUTDIR} out=${2:?usage: package-column.sh BINDIR OUTDIR}
kernels=vector_add,softmax,layernorm,matmul,reduce_sum,argmax,cumsum,sin,where,int_arith,atomic_cas,block_ptr,attention_fwd,ttir_matmul_f16,ttir_layernorm_forward,ttir_cumsum_rows
rm -rf "$out" && mkdir -p "$out"
package=$out/cells.tkpkg

"$bin/tk-conformance" --write-package "$package" \
  --target cpu:x86-64-v2,vulkan:8 --kernel "$kernels"
[ -s "$package" ] && [ -f "$package.refused" ] ||
  { echo "package-column.sh: no package or no refusals file"; exit 1; }

"$bin/tk-conformance-run" --package "$package" --backend cpu \
  --kernel "$kernels" --expect pass --out "$out/cpu"
TK_BACKEND=vulkan LP_NATIVE_VECTOR_WIDTH=256 TK_VULKAN_VALIDATION=1 \
  "$bin/tk-conformance-run" --package "$package" --backend vulkan \
  --kernel "$kernels" --expect pass --out "$out/vulkan" 2> "$out/vulkan.txt" ||
  { cat "$out/vulkan.txt"; exit 1; }
if grep -q "tk-vulkan: validation:" "$out/vulkan.txt"; then
  grep "tk-vulkan: validation:" "$out/vulkan.txt"
  exit 1
fi

# Refusals: each a usage error (2) with a message naming the problem.
expect_refusal() {
  local want=$1; shift
  local status=0 output
  output=$("$bin/tk-conformance-run" "$@" 2>&1) || status=$?
  if [ "$status" != 2 ] || ! grep -q -- "$want" <<<"$output"; then
    echo "package-column.sh: tk-conformance-run $* gave status $status:"
    echo "$output"
    exit 1
  fi
}
expect_refusal "--package is required" --backend cpu
expect_refusal "cannot read" --package "$out/missing.tkpkg" --backend cpu
head -c 100 "$package" > "$out/truncated.tkpkg"
expect_refusal "is not a package" --package "$out/truncated.tkpkg" --backend cpu
printf 'vector_add_f32\tnot a code\tx\n' > "$out/truncated.tkpkg.refused"
cp "$package" "$out/badrefusals.tkpkg"
cp "$out/truncated.tkpkg.refused" "$out/badrefusals.tkpkg.refused"
expect_refusal "refused:1: not" --package "$out/badrefusals.tkpkg" --backend cpu
echo "package-column.sh: the cpu and lavapipe columns ran from $package"
