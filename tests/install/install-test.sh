#!/usr/bin/env bash
# cmake --install into a scratch prefix, then use it as a user would, with
# nothing of the build tree in reach (no TK_BACKEND_PATH):
#   1. hello.c built by CMake with find_package(tk CONFIG) and run;
#   2. hello.c built by cc with pkg-config's flags and run;
#   3. the installed tk-info loads libtk.so and the cpu plugin from the prefix;
#   4. a C++ program that builds its kernel with the installed builder
#      (find_package(tk COMPONENTS builder)) built and run;
#   5. a C program whose kernels tk_add_kernels compiled into a package for
#      five backends at build time, launched through its typed launchers;
#   6. a C program of libtk_runtime.so alone (pkg-config tk-runtime) running
#      a package on the cpu and on lavapipe through the driver-only plugins.
#
#   install-test.sh BUILD_DIR SCRATCH_DIR
set -euo pipefail
build=$1 scratch=$2
source_dir=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch" && mkdir -p "$scratch"
prefix=$scratch/prefix
unset TK_BACKEND_PATH
export TK_BACKEND=cpu TK_CACHE_DIR=$scratch/cache TK_LOG_LEVEL=error

cmake --install "$build" --prefix "$prefix" > "$scratch/install.log"
libdir=$(find "$prefix" -name libtk.so -printf '%h\n' | head -1)
[ -n "$libdir" ] || { echo "install-test: no libtk.so under $prefix"; exit 1; }
for file in "$prefix/include/tk/tk.h" "$prefix/include/tk/tk_plugin.h" \
            "$prefix/include/tk/ir/Builder.h" "$prefix/include/tk/ir/TkOps.h.inc" \
            "$libdir/libTkIR.a" \
            "$libdir/tk/libtk_backend_cpu.so" "$libdir/cmake/tk/tkConfig.cmake" \
            "$libdir/pkgconfig/tk.pc" "$prefix/bin/tk-info"; do
  [ -f "$file" ] || { echo "install-test: $file was not installed"; exit 1; }
done

# 1. CMake, find_package.
cmake -S "$source_dir/consumer" -B "$scratch/cmake-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" > "$scratch/cmake-configure.log" ||
  { cat "$scratch/cmake-configure.log"; exit 1; }
cmake --build "$scratch/cmake-build" > "$scratch/cmake-build.log" ||
  { cat "$scratch/cmake-build.log"; exit 1; }
out=$("$scratch/cmake-build/hello")
echo "find_package: $out"
grep -q "correct" <<<"$out" || { echo "install-test: hello (CMake) said: $out"; exit 1; }

# 2. pkg-config.
export PKG_CONFIG_PATH=$libdir/pkgconfig
pc_libdir=$(pkg-config --variable=libdir tk)
kernels=$(pkg-config --variable=kernelsdir tk)
# shellcheck disable=SC2046 # the flags are words
cc -std=c99 -pedantic -Wall -o "$scratch/hello-pc" "$prefix/share/tk/examples/hello.c" \
  -DTK_VECTOR_ADD_PATH="\"$kernels/vector_add.tk\"" \
  $(pkg-config --cflags --libs tk) -lm -Wl,-rpath,"$pc_libdir"
out=$("$scratch/hello-pc")
echo "pkg-config: $out"
grep -q "correct" <<<"$out" || { echo "install-test: hello (pkg-config) said: $out"; exit 1; }

# 3. The installed tools use the installed library and plugins.
loaded=$(ldd "$prefix/bin/tk-info" | awk '$1 == "libtk.so" { print $3 }')
[ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "$libdir/libtk.so")" ] ||
  { echo "install-test: tk-info does not load the installed libtk.so:"; ldd "$prefix/bin/tk-info"; exit 1; }
info=$("$prefix/bin/tk-info")
grep -q "$(realpath "$libdir")/tk/libtk_backend_cpu.so" <<<"$info" ||
  { echo "install-test: tk-info did not load the installed cpu plugin:"; echo "$info"; exit 1; }

# 4. The C++ builder, out of tree.
cmake -S "$source_dir/builder-consumer" -B "$scratch/builder-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" > "$scratch/builder-configure.log" ||
  { cat "$scratch/builder-configure.log"; exit 1; }
cmake --build "$scratch/builder-build" > "$scratch/builder-build.log" ||
  { cat "$scratch/builder-build.log"; exit 1; }
out=$("$scratch/builder-build/builder_vector_add")
echo "builder: $out"
grep -q "correct" <<<"$out" || { echo "install-test: builder_vector_add said: $out"; exit 1; }
# 5. Kernels compiled ahead of time, typed launchers.
cmake -S "$source_dir/packaged-consumer" -B "$scratch/packaged-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" > "$scratch/packaged-configure.log" ||
  { cat "$scratch/packaged-configure.log"; exit 1; }
cmake --build "$scratch/packaged-build" > "$scratch/packaged-build.log" 2>&1 ||
  { cat "$scratch/packaged-build.log"; exit 1; }
"$prefix/bin/tk-compile" --package-info \
  "$scratch/packaged-build/example_kernels/example_kernels.tkpkg" > "$scratch/package-info.txt"
for target in "cpu '" "cuda 'sm_90a'" "rocm 'gfx942" "xe 'pvc" "vulkan 'subgroup16"; do
  [ -f "$libdir/tk/libtk_backend_${target%% *}.so" ] || continue
  [ "$(grep -c "^  $target" "$scratch/package-info.txt")" = 2 ] ||
    { echo "install-test: the package lacks $target:"; cat "$scratch/package-info.txt"; exit 1; }
done
out=$("$scratch/packaged-build/packaged")
echo "packaged: $out"
grep -q "^correct (0 wrong); a released buffer: " <<<"$out" ||
  { echo "install-test: packaged said: $out"; exit 1; }
# The same launchers over libtk_runtime.so alone (tk_add_kernels RUNTIME).
ldd "$scratch/packaged-build/packaged_runtime" | grep -q "libtk\.so" &&
  { echo "install-test: packaged_runtime links libtk.so"; exit 1; }
out=$("$scratch/packaged-build/packaged_runtime")
echo "packaged, runtime only: $out"
grep -q "^correct (0 wrong); a released buffer: " <<<"$out" ||
  { echo "install-test: packaged_runtime said: $out"; exit 1; }

# 6. The runtime without a compiler: runtime_only.c built with tk-runtime's
# pkg-config flags (libtk_runtime.so alone) runs a package made by the
# installed tk-compile on the cpu (its x86-64-v2 binaries) and on lavapipe
# through the installed driver-only plugins.
if [ -f "$libdir/tk/libtk_driver_vulkan.so" ]; then
  for file in "$libdir/libtk_runtime.so" "$libdir/pkgconfig/tk-runtime.pc"; do
    [ -f "$file" ] || { echo "install-test: $file was not installed"; exit 1; }
  done
  # shellcheck disable=SC2046 # the flags are words
  cc -std=c99 -Wall -o "$scratch/runtime-only" "$source_dir/../runtime/runtime_only.c" \
    $(pkg-config --cflags --libs tk-runtime) -lm -Wl,-rpath,"$pc_libdir"
  ldd "$scratch/runtime-only" | grep -q "libtk\.so" &&
    { echo "install-test: runtime-only links libtk.so"; exit 1; }
  TK_BACKEND=vulkan "$prefix/bin/tk-compile" --package "$scratch/runtime.tkpkg" \
    --target vulkan --target cpu:x86-64-v2 \
    "$kernels/vector_add.tk" "$kernels/softmax.tk:softmax" \
    2> "$scratch/runtime-package.log" ||
    { cat "$scratch/runtime-package.log"; exit 1; }
  for backend in cpu vulkan; do
    out=$(TK_BACKEND=$backend "$scratch/runtime-only" "$scratch/runtime.tkpkg" 2>&1) ||
      { echo "install-test: runtime-only on $backend said: $out"; exit 1; }
    echo "runtime only, $backend: $(tail -1 <<<"$out")"
  done
fi
echo "install-test: ok ($prefix)"
