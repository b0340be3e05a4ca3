//===- FuzzSupport.h - what every tk fuzz target checks ---------*- C++ -*-===//
//
// A fuzz target feeds one kind of untrusted input to tk and checks more than
// "it did not crash": a refusal is one of the statuses that entry point
// documents, with a message; an acceptance gives a usable result. A broken
// invariant prints what broke and traps, so libFuzzer saves the input.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TESTS_FUZZ_FUZZSUPPORT_H_
#define TK_TESTS_FUZZ_FUZZSUPPORT_H_

#include "tk/tk.h"

#include <cstdio>
#include <initializer_list>
#include <string>

namespace tk::fuzz {

/// Traps with `what` when `condition` is false.
inline void require(bool condition, const std::string &what) {
  if (condition)
    return;
  std::fprintf(stderr, "tk fuzz: invariant broken: %s\n", what.c_str());
  __builtin_trap();
}

/// A refusal must carry one of `allowed` and say something.
inline void requireRefusal(tk_status status, const std::string &message,
                           std::initializer_list<tk_status> allowed) {
  bool known = false;
  for (tk_status code : allowed)
    known |= code == status;
  // By number: the package target does not link libtk (tk_status_string).
  std::string code = "status " + std::to_string(static_cast<int>(status));
  require(known, "unexpected " + code + ": " + message);
  require(!message.empty(), code + " without a message");
}

} // namespace tk::fuzz

#endif // TK_TESTS_FUZZ_FUZZSUPPORT_H_
