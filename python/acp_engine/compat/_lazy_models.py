"""A generated models module whose classes are created on first use.

Creating a pydantic model class is the costly part of importing the schema
(~0.25 ms each, 339 of them: most of a compat program's start), and a program
uses a few dozen. So the generated module guards each definition with
``if _defining("Name"):`` and runs nothing behind those guards on import. The
first time a name is asked for (``schema.Name``, ``from .schema import Name``),
the module's own code runs again in its own namespace with the guards open for
that name and every name it needs (its bases, the types of its fields, theirs,
...), not yet defined: each class is created once, in file order, by the
module's code as written (its line numbers, its cached bytecode), and type
checkers read the module as the plain list of definitions it is."""

from __future__ import annotations

import sys
import threading
from types import CodeType
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Tuple


class LazyModels:
    """The definitions of one generated module, created on first use."""

    def __init__(self, namespace: Dict[str, Any], code: CodeType, needs: Mapping[str, Tuple[str, ...]]) -> None:
        self._namespace = namespace
        self._code = code
        self._needs = needs
        self._opening: FrozenSet[str] = frozenset()
        # Re-entrant: a class's creation asking for another name (a validator of
        # its own, say) opens that one's guards within this run, not after it.
        self._lock = threading.RLock()

    @classmethod
    def of_module(cls, namespace: Dict[str, Any], needs: Mapping[str, Tuple[str, ...]]) -> "LazyModels":
        """The module's definitions: made on its first run (``needs``: the names each
        definition uses), the same object on the runs that create them."""
        existing = namespace.get("_lazy_models")
        if isinstance(existing, cls):
            return existing
        # The code object of the module being run: the caller's frame.
        return cls(namespace, sys._getframe(1).f_code, needs)

    def defining(self, name: str) -> bool:
        """Whether this run of the module creates ``name`` (the guards' test):
        asked for, and not created yet (by a run within this one)."""
        return name in self._opening and name not in self._namespace

    def attribute(self, name: str) -> Any:
        """The module's ``__getattr__``: a definition, created with what it needs."""
        if name not in self._needs:
            raise AttributeError(f"module {self._namespace['__name__']!r} has no attribute {name!r}")
        with self._lock:
            if name not in self._namespace:
                self._open(self._missing(name))
        return self._namespace[name]

    def every_name(self) -> List[str]:
        """The module's ``__dir__``: what it has and what it would create."""
        return sorted(set(self._namespace) | set(self._needs))

    def _missing(self, name: str) -> FrozenSet[str]:
        """``name`` and what it needs, transitively, that is not defined yet."""
        missing = set()
        stack = [name]
        while stack:
            current = stack.pop()
            if current in missing or current in self._namespace:
                continue
            missing.add(current)
            stack.extend(self._needs.get(current, ()))
        return frozenset(missing)

    def _open(self, names: Iterable[str]) -> None:
        outer = self._opening
        self._opening = frozenset(names)
        try:
            exec(self._code, self._namespace)
        finally:
            self._opening = outer
