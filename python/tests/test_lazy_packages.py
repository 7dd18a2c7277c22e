"""The packages ``acp_engine`` and ``acp_engine.compat`` import their API on first
use (PEP 562, acp_engine._lazy): importing a submodule, above all the ``import
acp`` alias a ``.pth`` line runs in every process, imports nothing else; each
public name is the object its module defines; and the names type checkers read
(the ``if TYPE_CHECKING:`` imports) are the ones served at run time."""

import ast
import importlib
import inspect
import json
import pathlib
import subprocess
import sys
import textwrap
from typing import Dict, List, Tuple

import pytest

import acp_engine
import acp_engine.compat


def modules_imported_by(code: str) -> List[str]:
    """The modules a fresh interpreter has after ``code`` that it had not before it."""
    program = textwrap.dedent(f"""
        import json, sys
        before = set(sys.modules)
        {code}
        print(json.dumps(sorted(set(sys.modules) - before)))
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_acp_alias_imports_only_itself_and_the_package_tables() -> None:
    imported = modules_imported_by("import acp_engine.compat.as_acp as alias; alias.install()")
    assert [name for name in imported if name.startswith("acp_engine")] == [
        "acp_engine",
        "acp_engine._lazy",
        "acp_engine.compat",
        "acp_engine.compat._exports",
        "acp_engine.compat.as_acp",
    ]
    # Of the standard library, the import system's own modules (importlib is frozen
    # into the interpreter) and `from __future__ import annotations`: no typing,
    # asyncio or pydantic.
    assert set(imported) - set(name for name in imported if name.startswith("acp_engine")) <= {
        "__future__",
        "importlib",
        "importlib._bootstrap",
        "importlib._bootstrap_external",
        "importlib.machinery",
        "warnings",
    }


def test_a_compat_program_does_not_import_the_native_api() -> None:
    imported = modules_imported_by("from acp_engine.compat import run_agent")
    assert "acp_engine.compat.core" in imported and "acp_engine._connection" in imported
    assert "acp_engine._generated.methods" not in imported  # the native Agent / Client classes
    assert "acp_engine._server" not in imported


def type_checking_imports(package: object) -> Tuple[Dict[str, str], List[str]]:
    """What a package's ``if TYPE_CHECKING:`` block imports: each name and its
    module (relative, as written), and the modules it star-imports."""
    tree = ast.parse(inspect.getsource(package))  # type: ignore[arg-type]
    names: Dict[str, str] = {}
    stars: List[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module != "typing":
                    module = "." * statement.level + (statement.module or "")
                    for alias in statement.names:
                        if alias.name == "*":
                            stars.append(module)
                        elif module == ".":
                            names[alias.name] = "." + alias.name  # a submodule
                        else:
                            names[alias.name] = module
    return names, stars


@pytest.mark.parametrize("package", [acp_engine, acp_engine.compat], ids=lambda p: p.__name__)
def test_type_checkers_read_the_names_served_at_run_time(package: object) -> None:
    names, stars = type_checking_imports(package)
    where = dict(package._WHERE)  # type: ignore[attr-defined]
    for star in stars:
        exported = importlib.import_module(star, package.__name__).__all__  # type: ignore[attr-defined]
        if star == "._exports":  # the models, re-exported from .schema, served from it
            names.update(dict.fromkeys(exported, ".schema"))
        else:  # the 0.x builders: served by the package's fallback, not its table
            for name in exported:
                assert getattr(package, name) is getattr(importlib.import_module(star, package.__name__), name)
    assert names == where


@pytest.mark.parametrize("package", [acp_engine, acp_engine.compat], ids=lambda p: p.__name__)
def test_every_public_name_is_its_module_s_object(package: object) -> None:
    for name in package.__all__:  # type: ignore[attr-defined]
        module_name = package._WHERE.get(name)  # type: ignore[attr-defined]
        if module_name is None:  # defined in the package itself
            assert name in vars(package)
            continue
        module = importlib.import_module(module_name, package.__name__)  # type: ignore[attr-defined]
        expected = module if module_name == "." + name else getattr(module, name)
        assert getattr(package, name) is expected, name
    assert set(package.__all__) <= set(dir(package))  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="no attribute 'NotAName'|no attribute NotAName"):
        getattr(package, "NotAName")


def test_compat_submodules_are_attributes_of_the_package_as_in_the_official_one() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import acp_engine.compat as acp; print(acp.core.__name__, acp.helpers.text_block('x').text)"],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["acp_engine.compat.core", "x"]


def test_a_pth_line_makes_import_acp_the_compat_package(tmp_path: pathlib.Path) -> None:
    # The README's line, in a site directory of its own (site.addsitedir runs its
    # .pth files as the interpreter does for site-packages at start).
    (tmp_path / "acp_engine_alias.pth").write_text("import acp_engine.compat.as_acp as a; a.install()\n")
    program = textwrap.dedent(f"""
        import site, sys
        site.addsitedir({str(tmp_path)!r})
        print("pydantic" in sys.modules)
        import acp
        from acp.schema import TextContentBlock
        print(acp.__name__, TextContentBlock(text="x", type="text").text)
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "acp_engine.compat", "x"]
