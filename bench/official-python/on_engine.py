"""Run one of the official SDK's bench programs (``client.py``, ``agent.py``) unmodified
on acp_engine.compat: ``python on_engine.py SCRIPT [ARGS...]``.

What ``python -m acp_engine.compat SCRIPT`` does, but timed as the official SDK is:
``-m`` imports the package (the engine, pydantic, the models) before the program runs,
so before its clock starts, while the official SDK's import is inside its ``setup``.
Here ``import acp`` is made to mean ``acp_engine.compat`` by the package's own alias
(``acp_engine.compat.as_acp``, which imports no more than the packages' tables: see
python/tests/test_lazy_packages.py), and the package is imported when the program
imports ``acp``.
"""

import os
import runpy
import sys

import acp_engine.compat.as_acp as alias

if __name__ == "__main__":
    alias.install()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))  # as `python SCRIPT` does
    runpy.run_path(script, run_name="__main__")
