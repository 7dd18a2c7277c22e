"""Run code written for the official SDK unmodified: after :func:`install`,
``import acp`` (and ``acp.schema``, ``acp.core``, ...) is this package.

``python -m acp_engine.compat SCRIPT [ARGS...]`` (or ``-m MODULE``) does that
for a whole program; a ``.pth`` line ``import acp_engine.compat.as_acp as a;
a.install()`` does it for every Python process of an environment."""

from __future__ import annotations

import importlib
import importlib.machinery
import sys

# Only what the interpreter has loaded already: a ``.pth`` line runs this in every
# process of its environment (typing, importlib.abc and importlib.util would cost
# ~30 ms each time).
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import types
    from importlib.abc import Loader as _Loader
    from typing import Dict, Optional, Sequence
else:
    _Loader = object

__all__ = ["install"]

_OFFICIAL = "acp"
_OURS = "acp_engine.compat"


class _AcpAlias(_Loader):
    """``acp`` and ``acp.X`` resolve to ``acp_engine.compat`` and its ``X``:
    the same module objects, imported only when first asked for. A meta path
    finder and a loader (an importlib.abc.Loader for type checkers only)."""

    def find_spec(
        self, fullname: str, path: Optional[Sequence[str]] = None, target: Optional[types.ModuleType] = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname == _OFFICIAL or fullname.startswith(_OFFICIAL + "."):
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def __init__(self) -> None:
        self._own_specs: Dict[str, Optional[importlib.machinery.ModuleSpec]] = {}

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(_OURS + spec.name[len(_OFFICIAL) :])
        self._own_specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # Already executed under its own name. The import system has just given it
        # the alias's spec: it keeps its own (its relative imports resolve by it).
        module.__spec__ = self._own_specs.pop(module.__name__)


def install() -> None:
    """Make ``import acp`` give this package (idempotent)."""
    if not any(isinstance(finder, _AcpAlias) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AcpAlias())
