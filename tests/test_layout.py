"""The house's layout rules (STYLE.md 14, issue 22), read from the files: rooms of at most 14 modules, no module
named like a package beside it, no import of another module's private names, no function over 80 lines."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APPS = ("annotations", "llmjudge", "evalhub")
MAX_MODULES = 14  # healthchecks' largest room (hc/api); a larger room says several jobs
MAX_FUNCTION_LINES = 80
# Being split on other branches of issue 22 (the typed analysis, the engine's hardening); remove an entry
# when its branch lands.
LONG_FUNCTIONS_BEING_SPLIT: set[tuple[str, str]] = set()
PRIVATE_IMPORTS_BEING_REMOVED: set[tuple[str, str]] = set()


def python_files(*roots: str) -> list[Path]:
    return sorted(p for root in roots for p in (REPO / root).rglob("*.py") if "migrations" not in p.parts)


def rooms(*roots: str) -> list[Path]:
    """Every package folder under the roots (migrations aside)."""
    return sorted({p.parent for p in python_files(*roots)})


def names_shared_with_a_package(folder: Path) -> set[str]:
    modules = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
    packages = {p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    return modules & packages


def is_module(dotted: str) -> bool:
    path = REPO.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def private_imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, module, name) of each first-party ``from module import _name``, and of each ``module._name``
    read through a first-party module the file imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, modules = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in APPS:
            found += [(node.lineno, node.module, a.name) for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
            modules.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names
                            if is_module(f"{node.module}.{a.name}")})
        elif isinstance(node, ast.Import):
            modules.update({a.asname: a.name for a in node.names if a.asname and a.name.split(".")[0] in APPS})
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append((node.lineno, modules[node.value.id], node.attr))
    return sorted(found)


def long_functions(path: Path) -> list[tuple[str, int]]:
    return [(node.name, node.end_lineno - node.lineno + 1)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def test_the_readers_see_what_they_look_for(tmp_path):
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "__init__.py").write_text("")
    (tmp_path / "jobs.py").write_text("from evalhub.pages.charts import _svg, colour\nfrom os import _exit\n"
                                      "from annotations import services as s\nfrom annotations.models import Item\n"
                                      "s._full_items, Item._meta\n"
                                      "def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES)
    assert names_shared_with_a_package(tmp_path) == {"jobs"}
    assert private_imports(tmp_path / "jobs.py") == [(1, "evalhub.pages.charts", "_svg"),
                                                     (5, "annotations.services", "_full_items")]
    assert long_functions(tmp_path / "jobs.py") == [("f", MAX_FUNCTION_LINES + 1)]


def test_no_module_shares_its_name_with_a_package_beside_it():
    shared = {str(room.relative_to(REPO)): names for room in rooms(*APPS, "tests")
              if (names := names_shared_with_a_package(room))}
    assert shared == {}


def test_every_room_holds_at_most_fourteen_modules():
    crowded = {str(room.relative_to(REPO)): n for room in rooms(*APPS)
               if (n := sum(1 for p in room.glob("*.py") if p.name != "__init__.py")) > MAX_MODULES}
    assert crowded == {}


def test_no_module_imports_another_modules_private_names():
    found = [f"{path.relative_to(REPO)}:{line}: from {module} import {name}"
             for path in python_files(*APPS) for line, module, name in private_imports(path)
             if (str(path.relative_to(REPO)), module) not in PRIVATE_IMPORTS_BEING_REMOVED]
    assert found == []


def test_no_function_is_longer_than_eighty_lines():
    found = [f"{path.relative_to(REPO)}: {name} ({lines} lines)"
             for path in python_files(*APPS, "tests") for name, lines in long_functions(path)
             if (str(path.relative_to(REPO)), name) not in LONG_FUNCTIONS_BEING_SPLIT]
    assert found == []
