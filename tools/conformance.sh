#!/usr/bin/env bash
# make conformance: every conformance column whole, with each backend's
# validators, on what this machine has (a GPU column runs where its device
# is; elsewhere its cells are compiled and validated: NO_DEVICE). ctest runs
# the rocm and xe columns on a stated part of their cells (--shard); this
# runs them all.
#
#   tools/conformance.sh BUILD_DIR [COLUMN...]
#
# Columns: cpu cpu-guard-pages vulkan-sg8 vulkan-sg16 cuda rocm-gfx942
# rocm-gfx1100 xe-pvc xe-dg2 (default: those whose plugin was built).
# Reports in BUILD_DIR/conformance/<column>/; a line per column at the end;
# non-zero when any column misses its floor.
set -euo pipefail
build=$(cd "${1:?usage: conformance.sh BUILD_DIR [COLUMN...]}" && pwd)
shift
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$build/bin lib=$build/lib out=$build/conformance
all=(cpu cpu-guard-pages vulkan-sg8 vulkan-sg16 cuda rocm-gfx942 rocm-gfx1100 xe-pvc xe-dg2)
columns=("$@")
if [ ${#columns[@]} -eq 0 ]; then
  for column in "${all[@]}"; do
    [ -f "$lib/libtk_backend_${column%%-*}.so" ] && columns+=("$column")
  done
fi

export TK_BACKEND_PATH=$lib TK_LOG_LEVEL=error
declare -A results
status=0
for column in "${columns[@]}"; do
  dir=$out/$column
  mkdir -p "$dir"
  export TK_CACHE_DIR=$dir/cache
  args=(--out "$dir")
  case $column in
    cpu) run=("$bin/tk-conformance" --backend cpu --expect pass) ;;
    cpu-guard-pages) run=("$bin/tk-conformance" --backend cpu --expect pass --guard-pages) ;;
    vulkan-sg8|vulkan-sg16)
      run=(bash "$src/backends/vulkan/test/lavapipe-column.sh" "$bin" "$dir" "${column#vulkan-sg}")
      args=() ;;
    cuda) run=("$bin/tk-conformance" --backend cuda --expect checked) ;;
    rocm-*) run=(env "TK_ROCM_ARCH=${column#rocm-}" TK_ROCM_VALIDATION=1
                 "$bin/tk-conformance" --backend rocm --expect checked) ;;
    xe-*) run=(env "TK_XE_ARCH=${column#xe-}" TK_XE_NATIVE=0 TK_XE_VALIDATION=1
               "$bin/tk-conformance" --backend xe --expect checked) ;;
    *) echo "conformance.sh: no column '$column' (columns: ${all[*]})" >&2; exit 2 ;;
  esac
  echo "== $column"
  start=$SECONDS
  if "${run[@]}" "${args[@]}" > "$dir/log.txt" 2>&1; then
    results[$column]="met"
  else
    results[$column]="NOT MET (exit $?)"
    status=1
  fi
  floor=$(grep -E "floor [0-9]+" "$dir/log.txt" | tail -1 || true)
  results[$column]="${results[$column]} in $((SECONDS - start)) s; ${floor:-no floor line: see $dir/log.txt}"
  echo "$column: ${results[$column]}"
done
echo
echo "== conformance columns (reports in $out/<column>)"
for column in "${columns[@]}"; do
  echo "$column: ${results[$column]}"
done
exit $status
