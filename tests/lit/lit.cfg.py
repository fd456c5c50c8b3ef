# lit configuration for Sinter's FileCheck tests.
import os

import lit.formats

config.name = "Sinter"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)

site_config = lit_config.params.get("sinter_site_config")
if site_config is None:
    lit_config.fatal("run lit through ctest, or pass --param sinter_site_config=<build>/tests/lit/lit.site.cfg.py")
exec(open(site_config).read())
config.test_exec_root = config.sinter_obj_root

tool_dirs = [
    os.path.join(config.sinter_tools_dir, "sinter-opt"),
    os.path.join(config.sinter_tools_dir, "sinter-translate"),
    os.path.join(config.sinter_tools_dir, "sinter-dump-step"),
    config.llvm_tools_dir,
]
config.environment["PATH"] = os.pathsep.join(tool_dirs + [config.environment.get("PATH", os.environ.get("PATH", ""))])
