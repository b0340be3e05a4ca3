# lit configuration of the Vulkan backend's FileCheck tests: every *.tk file
# here, compiled by tk-compile (no device needed). The suite exists
# only where the backend is built (it is skipped without Vulkan's headers).
# What every suite of tk shares is in tests/lit/lit.common.py.
import os

config.name = "tk-vulkan"
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.tk_vulkan_lit_obj_root
config.available_features.add("vulkan")
lit_config.load_config(
    config, os.path.join(config.tk_src_root, "tests", "lit", "lit.common.py"))
