"""A package's public names, imported on first use (PEP 562).

A package ``__init__`` that imports its API eagerly makes every import of any
of its submodules pay for all of it: ``import acp_engine.compat.as_acp`` (the
``import acp`` alias, which a ``.pth`` line runs in every Python process of an
environment) would import asyncio, the engine, pydantic and the models. So
the ``__init__``s name where each public name lives, and the name's module is
imported when the name is first read. Type checkers read the same names from
the ``__init__``'s ``if TYPE_CHECKING:`` imports (a test checks both agree).
Imports nothing but importlib."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers know the name)
if TYPE_CHECKING:
    from typing import Any, Callable, List, Mapping, MutableMapping, Tuple


def lazy_attributes(
    namespace: MutableMapping[str, Any], where: Mapping[str, str]
) -> Tuple[Callable[[str], Any], Callable[[], List[str]]]:
    """A package's ``__getattr__`` and ``__dir__``. ``where``: each public name
    and the module that defines it, relative to the package (``"._connection"``);
    a name that is its own module (``"schema": ".schema"``) is that module. A
    name read once is kept in ``namespace`` (the package's globals), so the
    ``__getattr__`` runs once per name."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module_name = where.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(module_name, package)
        value = module if module_name == "." + name else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> List[str]:
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__
