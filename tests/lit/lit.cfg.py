# lit configuration of tk's FileCheck tests: every *.tk and *.mlir file under
# tests/lit, plus the seed kernels of examples/kernels (round-trips).
import os
import lit.formats

config.name = "tk"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".tk"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tk_obj_root, "tests", "lit")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
config.substitutions.append(("%examples", os.path.join(config.tk_src_root, "examples")))
config.environment["PATH"] = os.pathsep.join(
    [config.tk_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# Tests that compile for NVIDIA GPUs need tk-cuda-compile (built only where
# cuda.h was found; no GPU needed).
if getattr(config, "tk_cuda", False):
    config.available_features.add("cuda")
