#!/usr/bin/env bash
# Issue 24's checks on a machine with an NVIDIA GPU, run from tk's Debian
# package rather than a build tree:
#   - the .deb (make deb) unpacked into a scratch root: its tk-info finds the
#     cuda plugin beside its libtk.so (no TK_BACKEND_PATH) and the device,
#     and nothing the package's binaries link is missing;
#   - against that libtk: sixteen threads creating, launching (sync and on
#     their own streams), autotuning and releasing kernels on the GPU at
#     once, and eight threads releasing one handle, under compute-sanitizer
#     memcheck (CApiTest; correct outputs, no error, no deadlock: a timeout);
#   - two processes compiling one kernel into one empty cache at once.
# Results go to OUTDIR (default $OUT): summary.txt and each step's log.
#
#   make deb && ../shared/device/kit.sh pack build/packages build/bin/CApiTest build/bin/hello
#   bash .device/run.sh bash backends/cuda/test/gpu/cuda-hardening.sh OUTDIR
set -uo pipefail
out=${1:-${OUT:?give an output folder}}
source "$(dirname "$0")/steps.sh"

step "the Debian package"
deb=$(ls build/packages/*.deb | head -1)
root=$(mktemp -d)
dpkg-deb -x "$deb" "$root"
echo "$(basename "$deb"): $(dpkg-deb -f "$deb" Depends)" >>"$summary"
lib=$(dirname "$(find "$root" -name libtk.so | head -1)")
unset TK_BACKEND_PATH
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
missing=$(for f in "$root"/usr/bin/* "$lib"/libtk.so "$lib"/tk/*.so; do
            ldd "$f" | grep "not found" | sed "s|^|$(basename "$f"): |"; done)
echo "libraries not found: ${missing:-none}" >>"$summary"
[ -z "$missing" ]; record "every library the package links is found" $?
TK_BACKEND=cuda "$root/usr/bin/tk-info" >"$out/tk-info.log" 2>&1
record "the package's tk-info on cuda" $?
cat "$out/tk-info.log" >>"$summary"

step "concurrent threads on cuda, against the package's libtk, under memcheck"
export TK_CACHE_DIR
TK_CACHE_DIR=$(mktemp -d)
ldd build/bin/CApiTest | grep "libtk.so" >>"$summary"
TK_BACKEND=cuda TK_TEST_KERNELS_DIR=$PWD/examples/kernels timeout 300 \
  compute-sanitizer --tool memcheck --error-exitcode 3 build/bin/CApiTest \
  --gtest_filter='CApiCpuTest.SixteenThreads*:CApiCpuTest.ConcurrentReleases*:CApiCpuTest.VectorAdd*:CApiCpuTest.ReleasedHandlesAreRefused' \
  >"$out/threads.log" 2>&1
record "CApiTest threads on cuda (memcheck)" $?
grep -E "^\[  (PASSED|FAILED) |OK \]|ERROR SUMMARY" "$out/threads.log" >>"$summary"

step "two processes, one cache, on cuda"
TK_TEST_BACKEND=cuda timeout 300 bash tests/unit/two-processes-one-cache.sh \
  build/bin/hello "$(mktemp -d)" >"$out/two-processes.log" 2>&1
record "two processes one cache (cuda)" $?
tail -3 "$out/two-processes.log" >>"$summary"

echo "failures: $failures" | tee -a "$summary"
[ "$failures" -eq 0 ]
