#!/usr/bin/env bash
# cpack -G DEB, then the package as Debian sees it: its declared dependencies
# name LLVM/MLIR 22 and spdlog, its files unpack into a scratch root, and the
# tk-info there runs on the cpu plugin there (no TK_BACKEND_PATH).
#
#   deb-test.sh BUILD_DIR SCRATCH_DIR
set -euo pipefail
build=$1 scratch=$2
rm -rf "$scratch" && mkdir -p "$scratch"
unset TK_BACKEND_PATH
export TK_BACKEND=cpu TK_CACHE_DIR=$scratch/cache TK_LOG_LEVEL=error

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$scratch/out" \
  > "$scratch/cpack.log" 2>&1 || { cat "$scratch/cpack.log"; exit 1; }
deb=$(find "$scratch/out" -maxdepth 1 -name '*.deb' | head -1)
[ -n "$deb" ] || { echo "deb-test: cpack made no .deb"; cat "$scratch/cpack.log"; exit 1; }
echo "deb-test: $(basename "$deb"), $(du -h "$deb" | cut -f1)"

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for library in libmlir-22 libllvm22 libspdlog; do
  grep -q "$library" <<<"$depends" ||
    { echo "deb-test: Depends does not name $library"; exit 1; }
done

# Debian's tk-dev (the Tk toolkit) owns libtk.so and tk.pc too.
[ "$(dpkg-deb -f "$deb" Conflicts)" = "tk-dev" ] ||
  { echo "deb-test: the package does not declare its conflict with tk-dev"; exit 1; }

root=$scratch/root
dpkg-deb -x "$deb" "$root"
info=$(find "$root" -path '*/bin/tk-info' | head -1)
[ -n "$info" ] || { echo "deb-test: no tk-info in the package"; exit 1; }
out=$("$info")
libdir=$(dirname "$(find "$root" -name libtk.so | head -1)")
grep -q "$libdir/tk/libtk_backend_cpu.so" <<<"$out" ||
  { echo "deb-test: tk-info did not use the package's cpu plugin:"; echo "$out"; exit 1; }
grep -q "selected backend: cpu" <<<"$out" ||
  { echo "deb-test: no backend selected:"; echo "$out"; exit 1; }
echo "deb-test: ok ($root)"
