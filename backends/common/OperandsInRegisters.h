//===- OperandsInRegisters.h - staged operand or registers ------*- C++ -*-===//
//
// tk-dot-operand-layouts stages in workgroup memory an invariant dot operand
// that its estimate says the loop's registers would not hold. Whether they
// would is the register allocator's answer, so the backends that can read
// it (CUDA's ptxas log, ROCm's assembly comments) compile such a kernel a
// second time with the operand in registers and keep the better code.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_OPERANDSINREGISTERS_H_
#define TK_BACKENDS_COMMON_OPERANDSINREGISTERS_H_

#include "tk/tk.h"

#include <string>
#include <utility>

namespace tk::plugin {

/// Compiles `input` again with its operands in registers (its
/// `options.stageOperands` off, its stages dumped under
/// operands-in-registers/), by `compileOnce(input, compiled, error)`, and
/// replaces `staged` with that code where `keepHeld(staged, held)` says so.
/// A second compile that fails leaves `staged` as it is.
template <typename Input, typename Compiled, typename CompileFn,
          typename KeepFn>
void compareWithOperandsInRegisters(const Input &input, Compiled &staged,
                                    CompileFn compileOnce, KeepFn keepHeld) {
  Input inRegisters = input;
  inRegisters.options.stageOperands = false;
  if (!input.dumpDir.empty())
    inRegisters.dumpDir = input.dumpDir + "/operands-in-registers";
  Compiled held;
  std::string error;
  if (compileOnce(inRegisters, held, error) != TK_SUCCESS)
    return;
  if (keepHeld(staged, held))
    staged = std::move(held);
}

} // namespace tk::plugin

#endif // TK_BACKENDS_COMMON_OPERANDSINREGISTERS_H_
