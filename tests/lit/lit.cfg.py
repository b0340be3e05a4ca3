# lit configuration of tk's FileCheck tests: every *.tk and *.mlir file under
# tests/lit, plus the seed kernels of examples/kernels (round-trips). What the
# backends' suites share with this one is in lit.common.py.
import os

config.name = "tk"
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tk_obj_root, "tests", "lit")
lit_config.load_config(config, os.path.join(config.test_source_root, "lit.common.py"))
