//===- ToolRunner.h - run a vendor's or LLVM's tool -------------*- C++ -*-===//
//
// Backends hand their binaries to external tools (ptxas, ld.lld,
// llvm-objdump, spirv-val, ocloc, iga64): find the tool, run it with a time
// limit, and keep what it printed for the error message. Header-only, LLVM
// Support only.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_TOOLRUNNER_H_
#define TK_BACKENDS_COMMON_TOOLRUNNER_H_

#include "common/LLVMCodegen.h"
#include "tk/core/CompileSupport.h"
#include "tk/tk.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

extern char **environ;

namespace tk::plugin {

/// `program` as a path: the value of `envVar` when set (it must be
/// executable), else the first of `names` found on PATH. Empty, with
/// `error` naming where it looked, when there is none.
inline std::string findTool(const char *envVar,
                            llvm::ArrayRef<std::string> names,
                            std::string &error) {
  if (const char *set = std::getenv(envVar); set && *set) {
    if (llvm::sys::fs::can_execute(set))
      return set;
    error = std::string(envVar) + "=" + set + " is not an executable";
    return "";
  }
  std::string looked;
  for (const std::string &name : names) {
    if (llvm::sys::fs::can_execute(name))
      return name;
    if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(name))
      return *found;
    looked += (looked.empty() ? "" : ", ") + name;
  }
  error = "none of " + looked + " found on PATH (or set " + envVar + ")";
  return "";
}

/// An LLVM tool of the LLVM tk is built with (`llc`, `ld.lld`,
/// `llvm-objdump`): the path in `envVar` when set, LLVM's own bin folder
/// (/usr/lib/llvm-<major>/bin), then `<name>-<major>` and `<name>` on PATH.
/// TK_ERROR_NOT_FOUND, naming where it looked, otherwise.
inline tk_status findLLVMTool(const std::string &name, const char *envVar,
                              std::string &path, std::string &error) {
  if (const char *set = std::getenv(envVar); set && *set) {
    if (llvm::sys::fs::can_execute(set)) {
      path = set;
      return TK_SUCCESS;
    }
    error = std::string(envVar) + "=" + set + " is not an executable";
    return TK_ERROR_NOT_FOUND;
  }
  std::string major = std::to_string(LLVM_VERSION_MAJOR);
  std::string own = "/usr/lib/llvm-" + major + "/bin/" + name;
  if (llvm::sys::fs::can_execute(own)) {
    path = own;
    return TK_SUCCESS;
  }
  for (const std::string &candidate : {name + "-" + major, name})
    if (llvm::ErrorOr<std::string> found =
            llvm::sys::findProgramByName(candidate)) {
      path = *found;
      return TK_SUCCESS;
    }
  error = name + " not found (looked for " + own + ", and " + name + "-" +
          major + " and " + name + " on PATH); install llvm-" + major +
          " (or lld-" + major + "), or set " + envVar;
  return TK_ERROR_NOT_FOUND;
}

/// The outcome of a run: its exit code (-1 when it could not start or was
/// killed) and everything it printed, stdout and stderr together.
struct ToolRun {
  int exitCode = -1;
  std::string output;
  /// Why it did not start or was stopped, when it did not.
  std::string failure;

  bool succeeded() const { return exitCode == 0; }
  /// "ocloc failed (exit code 2): <output>" and the like.
  std::string describe(llvm::StringRef tool) const {
    std::string why =
        !failure.empty() ? failure : "exit code " + std::to_string(exitCode);
    return tool.str() + " failed (" + why + ")" +
           (output.empty() ? "" : ": " + output);
  }
};

/// Runs `program` with `args` (args[0] is the program's name), with the
/// process's environment plus `extraEnv` ("NAME=value"), for at most
/// `seconds`. Never throws; a tool that cannot be started is a ToolRun with
/// the reason.
inline ToolRun runTool(const std::string &program,
                       llvm::ArrayRef<std::string> args,
                       llvm::ArrayRef<std::string> extraEnv = {},
                       unsigned seconds = 120) {
  ToolRun run;
  TemporaryFile log;
  if (std::error_code ec = log.create("tk-tool", "log")) {
    run.failure = "cannot create a temporary file: " + ec.message();
    return run;
  }
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::ArrayRef<llvm::StringRef>> env;
  std::vector<std::string> envStorage;
  std::vector<llvm::StringRef> envRefs;
  if (!extraEnv.empty()) {
    for (char **entry = environ; entry && *entry; ++entry)
      envStorage.emplace_back(*entry);
    envStorage.insert(envStorage.end(), extraEnv.begin(), extraEnv.end());
    envRefs.assign(envStorage.begin(), envStorage.end());
    env = envRefs;
  }
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef("/dev/null"),
                                                llvm::StringRef(log.path),
                                                llvm::StringRef(log.path)};
  bool launchFailed = false;
  run.exitCode = llvm::sys::ExecuteAndWait(
      program, argv, env, redirects, seconds, 0, &run.failure, &launchFailed);
  if (launchFailed && run.failure.empty())
    run.failure = "could not be started";
  if (auto buffer = llvm::MemoryBuffer::getFile(log.path))
    run.output = (*buffer)->getBuffer().str();
  return run;
}

/// `ld.lld -shared [flags] object [libraries]`: the relocatable `object`
/// linked into the shared object `out` (ROCm's code objects, the CPU's
/// kernels), with what it needs of the archives `libraries`. `who` and
/// `envVar` ("tk-rocm", "TK_ROCM_LLD") name the caller in errors and the
/// variable that may name another ld.lld.
inline tk_status linkSharedObject(const char *who, const char *envVar,
                                  llvm::StringRef object,
                                  llvm::ArrayRef<std::string> flags,
                                  std::string &out, std::string &error,
                                  llvm::ArrayRef<std::string> libraries = {}) {
  std::string lld;
  if (tk_status status = findLLVMTool("ld.lld", envVar, lld, error)) {
    error = std::string(who) + ": " + error;
    return status;
  }
  TemporaryFile input, output;
  for (auto [file, suffix] : {std::pair{&input, "o"}, std::pair{&output, "so"}})
    if (std::error_code ec = file->create(who, suffix)) {
      error = std::string(who) +
              ": cannot create a temporary file for "
              "ld.lld: " +
              ec.message();
      return TK_ERROR_IO;
    }
  if (std::error_code ec = tk::writeWholeFile(input.path, object)) {
    error = std::string(who) + ": cannot write " + std::string(input.path) +
            ": " + ec.message();
    return TK_ERROR_IO;
  }
  std::vector<std::string> args = {lld, "-flavor", "gnu", "-shared"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(),
              {"-o", std::string(output.path), std::string(input.path)});
  args.insert(args.end(), libraries.begin(), libraries.end());
  ToolRun run = runTool(lld, args);
  if (!run.succeeded()) {
    error = std::string(who) + ": " + run.describe(lld);
    return TK_ERROR_COMPILATION;
  }
  auto linked = llvm::MemoryBuffer::getFile(output.path);
  if (!linked) {
    error = std::string(who) +
            ": ld.lld wrote no shared object: " + linked.getError().message();
    return TK_ERROR_COMPILATION;
  }
  out = (*linked)->getBuffer().str();
  return TK_SUCCESS;
}

} // namespace tk::plugin

#endif // TK_BACKENDS_COMMON_TOOLRUNNER_H_
