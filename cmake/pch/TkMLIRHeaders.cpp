// The translation unit that owns the precompiled TkMLIRHeaders.h, which tk's
// libraries reuse (cmake/TkHelpers.cmake, tk_reuse_mlir_headers).
