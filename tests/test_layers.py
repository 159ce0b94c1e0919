"""The apps' layers, read from every import statement (function-level imports and migrations included):
annotations imports neither llmjudge nor evalhub; llmjudge imports from evalhub only its framework-free
statistics. What spans both pools lives in evalhub, the layer that sees both."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, wherever it stands (top level, function, class)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from evalhub import stats` imports evalhub.stats: name the submodule, not the package.
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def crossings(app: str, allowed: tuple[str, ...], forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in sorted((REPO / app).rglob("*.py")):
        for line, module in imported_modules(path):
            top = module.split(".")[0]
            if top in forbidden and not any(module == a or module.startswith(f"{a}.") for a in allowed):
                bad.append(f"{path.relative_to(REPO)}:{line}: {module}")
    return bad


def test_the_import_reader_sees_function_level_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from llmjudge.models import Judge\n    import evalhub.celery\n")
    assert imported_modules(module) == [(2, "llmjudge.models.Judge"), (3, "evalhub.celery")]


@pytest.mark.parametrize(("app", "allowed", "forbidden"), [
    ("annotations", (), ("llmjudge", "evalhub")),
    ("llmjudge", ("evalhub.stats",), ("evalhub",)),
])
def test_an_app_imports_nothing_from_the_layers_above_it(app, allowed, forbidden):
    assert crossings(app, allowed, forbidden) == []
