"""Run one of the official SDK's bench programs (``client.py``, ``agent.py``) unmodified
on acp_engine.compat: ``python on_engine.py SCRIPT [ARGS...]``.

What ``python -m acp_engine.compat SCRIPT`` does, but timed as the official SDK is:
``-m`` imports the package (the engine, pydantic, the models) before the program runs,
so before its clock starts, while the official SDK's import is inside its ``setup``.
Here ``import acp`` is made to mean ``acp_engine.compat`` by the package's own alias
(``acp_engine/compat/as_acp.py``, loaded from its file, which imports only the standard
library), and the package is imported when the program imports ``acp``.
"""

import importlib.util
import os
import runpy
import sys


def install_alias() -> None:
    engine = importlib.util.find_spec("acp_engine")  # found, not imported
    assert engine is not None and engine.submodule_search_locations, "acp_engine is not installed"
    path = os.path.join(list(engine.submodule_search_locations)[0], "compat", "as_acp.py")
    spec = importlib.util.spec_from_file_location("_acp_engine_alias", path)
    assert spec is not None and spec.loader is not None
    alias = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(alias)
    alias.install()


if __name__ == "__main__":
    install_alias()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))  # as `python SCRIPT` does
    runpy.run_path(script, run_name="__main__")
