// `tk-opt --help` is tk's usage and tk's passes, each with its options, not
// mlir-opt's hundreds of options; `--help-all` is mlir-opt's, upstream
// passes included.
//
// RUN: tk-opt --help | FileCheck %s
// RUN: tk-opt --help-all | FileCheck %s --check-prefix=ALL

// CHECK: usage: tk-opt [--from tk|ttir]
// CHECK: the presets here: {{.*}}cuda-sm80
// CHECK: --tk-allocate-shared-memory
// CHECK: --tk-assign-linear-layouts
// CHECK: --num-warps=
// CHECK: --tk-convert-registers-to-simt
// CHECK: --tk-convert-tt-to-tk
// CHECK: --tk-insert-barriers
// CHECK: --tk-remove-layout-conversions
// CHECK-NOT: --canonicalize
// CHECK-NOT: --mlir-print-debuginfo

// ALL: --canonicalize
// ALL: --tk-assign-linear-layouts
