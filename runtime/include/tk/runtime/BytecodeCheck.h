//===- BytecodeCheck.h - bytecode read first in another process -*- C++ -*-===//
//
// MLIR's bytecode reader ends the process (report_fatal_error) or allocates
// without bound on some malformed files, so bytecode a caller hands tk is
// read and verified first by tk-bytecode-check, a process of its own with a
// time and memory limit. Bytecode that passed is remembered (by SHA-256)
// for the life of the process, so a kernel created again costs no process.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_BYTECODECHECK_H_
#define TK_RUNTIME_BYTECODECHECK_H_

#include "tk/runtime/Status.h"

#include "llvm/ADT/StringRef.h"

namespace tk::runtime {

/// Success when tk-bytecode-check reads and verifies `bytes`.
/// TK_ERROR_INVALID_IR with its diagnostics when it refuses them, or saying
/// that it crashed or ran out of time or memory; TK_ERROR_NOT_FOUND when the
/// program is not beside libtk.so (or where TK_BYTECODE_CHECK says);
/// TK_ERROR_IO when its temporary files cannot be written.
Status checkBytecodeApart(llvm::StringRef bytes);

} // namespace tk::runtime

#endif // TK_RUNTIME_BYTECODECHECK_H_
