#!/usr/bin/env bash
# The runtime without a compiler, as built: libtk_runtime.so and the
# driver-only plugins (libtk_driver_<name>.so) need no LLVM, MLIR or other
# compiler library (their ELF NEEDED entries, recursively as ldd resolves
# them), nor do the programs given after LIBDIR (tk-runtime-only,
# tk-conformance-run), libtk_runtime.so exports the whole C API libtk.so
# does, and it is under 2 MB stripped.
#
#   check-runtime.sh LIBDIR [PROGRAM...]
set -euo pipefail
libdir=${1:?usage: check-runtime.sh LIBDIR [PROGRAM...]}
shift
failures=0
shopt -s nullglob
libraries=("$libdir"/libtk_runtime.so "$libdir"/libtk_driver_*.so "$@")
[ -f "$libdir/libtk_runtime.so" ] || { echo "no $libdir/libtk_runtime.so"; exit 1; }
[ ${#libraries[@]} -ge 2 ] || { echo "no driver-only plugin in $libdir"; exit 1; }
for library in "${libraries[@]}"; do
  compilers=$(ldd "$library" | grep -E -i "libLLVM|libMLIR|libclang|libLTO|libz3" || true)
  if [ -n "$compilers" ]; then
    echo "FAILED: $(basename "$library") loads a compiler:"; echo "$compilers"
    failures=$((failures + 1))
  else
    echo "$(basename "$library"): $(ldd "$library" | awk '{print $1}' | grep -v vdso | tr '\n' ' ')"
  fi
done
# The same C API as libtk.so: every tk_ function it exports.
if [ -f "$libdir/libtk.so" ]; then
  missing=$(comm -23 \
    <(nm -D --defined-only "$libdir/libtk.so" | awk '$3 ~ /^tk_/ {print $3}' | sort) \
    <(nm -D --defined-only "$libdir/libtk_runtime.so" | awk '$3 ~ /^tk_/ {print $3}' | sort))
  if [ -n "$missing" ]; then
    echo "FAILED: libtk_runtime.so lacks what libtk.so exports:" $missing
    failures=$((failures + 1))
  else
    echo "libtk_runtime.so exports every tk_ function libtk.so does"
  fi
fi
stripped=$(mktemp)
trap 'rm -f "$stripped"' EXIT
strip --strip-unneeded -o "$stripped" "$libdir/libtk_runtime.so"
bytes=$(stat -c %s "$stripped")
echo "libtk_runtime.so stripped: $bytes bytes"
if [ "$bytes" -ge $((2 * 1024 * 1024)) ]; then
  echo "FAILED: libtk_runtime.so is over 2 MB stripped"
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
