# lit configuration of the Xe backend's FileCheck tests: every *.tk file
# here, compiled by tk-compile --backend xe (no Intel GPU needed). What every
# suite of tk shares is in tests/lit/lit.common.py.
import os

config.name = "tk-xe"
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.tk_xe_lit_obj_root
config.available_features.add("xe")
lit_config.load_config(
    config, os.path.join(config.tk_src_root, "tests", "lit", "lit.common.py"))
