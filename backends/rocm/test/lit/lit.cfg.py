# lit configuration of the ROCm backend's FileCheck tests: every *.tk file
# here, compiled by tk-compile --backend rocm (no AMD GPU needed). What every
# suite of tk shares is in tests/lit/lit.common.py.
import os

config.name = "tk-rocm"
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.tk_rocm_lit_obj_root
config.available_features.add("rocm")
lit_config.load_config(
    config, os.path.join(config.tk_src_root, "tests", "lit", "lit.common.py"))
