# What every lit suite of tk shares (tests/lit, and each backend's own under
# backends/<name>/test/lit), loaded by their lit.cfg.py files with
# lit_config.load_config. Each suite's lit.cfg.py sets its name,
# test_source_root and test_exec_root (__file__ here names this file, not the
# suite's); its lit.site.cfg.py (filled in by CMake) sets tk_src_root,
# tk_tools_dir and llvm_tools_dir.
import os
import lit.formats

config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".tk"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.common.py",
                   "lit.site.cfg.py.in", "Inputs"]
config.substitutions.append(("%examples", os.path.join(config.tk_src_root, "examples")))
# The tools under test (tk-opt, tk-compile, ...) and LLVM's (FileCheck,
# not, count).
config.environment["PATH"] = os.pathsep.join(
    [config.tk_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
