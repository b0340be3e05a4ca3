// Every seed kernel in examples/kernels must survive the three round-trips
// tk promises (DESIGN.md §2): print -> parse -> print gives the same text, and
// so do the bytecode route and the generic-form route. The loop picks up
// whatever .tk files exist; it fails (naming the kernel) on any difference.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: set -e; count=0; \
// RUN: for kernel in %examples/kernels/*.tk; do \
// RUN:   name=$(basename "$kernel" .tk); count=$((count + 1)); \
// RUN:   tk-opt "$kernel" -o %t/$name.1.mlir; \
// RUN:   tk-opt %t/$name.1.mlir -o %t/$name.2.mlir; \
// RUN:   diff -u %t/$name.1.mlir %t/$name.2.mlir || { echo "text round-trip changed $kernel"; exit 1; }; \
// RUN:   tk-opt "$kernel" --emit-bytecode -o %t/$name.mlirbc; \
// RUN:   tk-opt %t/$name.mlirbc -o %t/$name.3.mlir; \
// RUN:   diff -u %t/$name.1.mlir %t/$name.3.mlir || { echo "bytecode round-trip changed $kernel"; exit 1; }; \
// RUN:   tk-opt "$kernel" --mlir-print-op-generic -o %t/$name.generic.mlir; \
// RUN:   tk-opt %t/$name.generic.mlir -o %t/$name.4.mlir; \
// RUN:   diff -u %t/$name.1.mlir %t/$name.4.mlir || { echo "generic-form round-trip changed $kernel"; exit 1; }; \
// RUN: done; \
// RUN: test "$count" -gt 0 || { echo "no kernels in %examples/kernels"; exit 1; }
