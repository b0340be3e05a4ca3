#!/usr/bin/env bash
# Seed corpora for the fuzz targets, made from the tree and by tk's own
# tools (so they follow the formats as they change):
#
#   tests/fuzz/make-seeds.sh BUILD_DIR OUT_DIR
#
#   tk-fuzz-ir-text      the example kernels, the lit tests' .tk and .mlir
#                        files, the bad-input catalogue's IR
#   tk-fuzz-ir-bytecode  the example kernels as MLIR bytecode (tk-opt)
#   tk-fuzz-ir-ttir      the TTIR corpus and the importer's lit tests
#   tk-fuzz-package      each example kernel compiled by tk-compile for cuda
#                        (sm_90a), rocm (gfx942), vulkan (sg16) and xe (pvc),
#                        and the cpu object of hello's vector_add, each
#                        behind its selector byte (PackageFuzzer.cpp)
#   tk-fuzz-tkpkg        a package of the example kernels for cuda, rocm,
#                        vulkan and xe (tk-compile --package), and one of
#                        vector_add for the cpu alone
#   tk-fuzz-kernel-cache hello's cache entry, behind each repair byte
#   tk-fuzz-launch       none: its input is a stream of choices
set -euo pipefail
build=$1 out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=$build/bin
for target in ir-text ir-bytecode ir-ttir package tkpkg kernel-cache launch; do
  rm -rf "$out/tk-fuzz-$target"
  mkdir -p "$out/tk-fuzz-$target"
done

# Text: a file name per path.
while IFS= read -r file; do
  cp "$file" "$out/tk-fuzz-ir-text/$(echo "${file#"$src"/}" | tr / _)"
done < <(find "$src/examples/kernels" "$src/tests/bad_inputs/ir" \
              "$src/tests/lit" "$src/backends" \
              \( -name '*.tk' -o -name '*.mlir' \) | sort)

# TTIR: what Triton wrote, and the importer's lit tests.
while IFS= read -r file; do
  cp "$file" "$out/tk-fuzz-ir-ttir/$(echo "${file#"$src"/}" | tr / _)"
done < <(find "$src/tests/ttir/corpus" -name '*.ttir'; \
         find "$src/tests/lit/ttir" -name '*.mlir' | sort)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
selector() { printf "\\x$(printf %02x "$1")"; }
backends=$("$bin/tk-compile" --help 2>&1 || true)
for kernel in "$src"/examples/kernels/*.tk; do
  name=$(basename "$kernel" .tk)
  "$bin/tk-opt" --emit-bytecode "$kernel" -o "$out/tk-fuzz-ir-bytecode/$name.mlirbc"
  index=0
  for target in cuda:sm_90a rocm:gfx942 vulkan:sg16 xe:pvc; do
    backend=${target%%:*} arch=${target#*:}
    index=$((index + 1))
    # A build without this backend (TK_BACKENDS) seeds the others.
    if ! grep -q "^  $backend:" <<< "$backends"; then
      echo "make-seeds: no $backend backend in this build; none of its packages" >&2
      continue
    fi
    if ! "$bin/tk-compile" "$kernel" --backend "$backend" --arch "$arch" \
         --entry "$name" --emit package -o "$scratch/package" 2> "$scratch/log"; then
      echo "make-seeds: tk-compile of $name for $backend $arch failed:" >&2
      cat "$scratch/log" >&2
      exit 1
    fi
    { selector $((index - 1)); cat "$scratch/package"; } > "$out/tk-fuzz-package/$backend-$name"
  done
done

# Packages: vector_add and softmax for the GPU backends this build has, and
# vector_add for the cpu; each as a file (selector 0) and as its payload
# behind the header the fuzzer makes (1).
pkg_targets=()
for target in cuda:sm_90a rocm:gfx942 vulkan:sg16 xe:pvc; do
  grep -q "^  ${target%%:*}:" <<< "$backends" && pkg_targets+=(--target "$target")
done
export TK_BACKEND_PATH="$build/lib" TK_CACHE_DIR="$scratch/cache"
package() { # name, tk-compile's arguments
  local name=$1
  shift
  "$bin/tk-compile" --package "$scratch/$name.tkpkg" "$@" 2> "$scratch/log" ||
    { echo "make-seeds: tk-compile --package failed:" >&2; cat "$scratch/log" >&2; exit 1; }
  { selector 0; cat "$scratch/$name.tkpkg"; } > "$out/tk-fuzz-tkpkg/$name"
  { selector 1; tail -c +33 "$scratch/$name.tkpkg"; } > "$out/tk-fuzz-tkpkg/$name-payload"
}
if [ ${#pkg_targets[@]} -gt 0 ]; then
  package gpu "${pkg_targets[@]}" "$src/examples/kernels/vector_add.tk" \
    "$src/examples/kernels/softmax.tk:softmax"
fi
TK_BACKEND=cpu package cpu --target cpu "$src/examples/kernels/vector_add.tk"
unset TK_BACKEND_PATH TK_CACHE_DIR

# hello's vector_add through the cpu backend, into an empty cache: the
# entry, and the object inside it (after the 64-byte header and 16 bytes of
# metadata).
TK_BACKEND=cpu TK_BACKEND_PATH="$build/lib" TK_CACHE_DIR="$scratch/cache" \
  "$bin/hello" > /dev/null
entries=("$scratch"/cache/*.tkbin)
[ -f "${entries[0]}" ] || { echo "make-seeds: hello left no cache entry" >&2; exit 1; }
for repairs in 0 1 3; do
  { selector $repairs; cat "${entries[0]}"; } > "$out/tk-fuzz-kernel-cache/vector_add-$repairs"
done
{ selector 4; tail -c +81 "${entries[0]}"; } > "$out/tk-fuzz-package/cpu-vector_add"

for dir in "$out"/tk-fuzz-*; do
  echo "make-seeds: $(basename "$dir"): $(find "$dir" -type f | wc -l) seeds"
done
