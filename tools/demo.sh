#!/usr/bin/env bash
# `make demo`: show the backend and device, then run the softmax and matmul
# seed kernels on the default backend (one line each: shape, error, PASS/FAIL).
set -euo pipefail
build=${1:-build}
echo "== tk-info =="
"$build/bin/tk-info"
echo
echo "== seed kernels on the default backend =="
"$build/bin/tk-examples" softmax matmul
"$build/bin/tk-examples" --dtype f16 softmax matmul
"$build/bin/tk-examples" --dtype bf16 softmax matmul
