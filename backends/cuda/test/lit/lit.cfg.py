# lit configuration of the CUDA backend's FileCheck tests: every *.tk file
# here, compiled by tk-compile (no GPU needed). The suite exists only
# where the backend is built (backends/cuda is skipped without cuda.h), so
# the `cuda` feature their `REQUIRES: cuda` lines ask for is always there.
# What every suite of tk shares is in tests/lit/lit.common.py.
import os

config.name = "tk-cuda"
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.tk_cuda_lit_obj_root
config.available_features.add("cuda")
lit_config.load_config(
    config, os.path.join(config.tk_src_root, "tests", "lit", "lit.common.py"))
