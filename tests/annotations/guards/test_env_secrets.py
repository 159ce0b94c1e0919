"""The one NAME / NAME_FILE rule (annotations.guards.env_secrets), read by the settings and the judge backends alike."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from annotations.guards import env_secrets
from annotations.guards.env_secrets import SecretFileError, env_or_file

NAME = "EVALHUB_TEST_SECRET_Z9"


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    monkeypatch.delenv(f"{NAME}_FILE", raising=False)


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "secret"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("value", "file_text", "expected"),
    [
        (None, None, None),  # neither: no value, the caller's default applies
        ("sk-env", None, "sk-env"),
        ("  sk-env\n", None, "sk-env"),  # stripped: a key pasted with its newline is the key
        ("sk-env", "sk-file\n", "sk-env"),  # NAME wins over NAME_FILE
        (None, "sk-file\n", "sk-file"),
        ("", "sk-file\n", "sk-file"),  # a blank NAME (compose's `NAME=`) falls through to the file
        ("   ", "sk-file", "sk-file"),
        (None, "  \n", None),  # an empty file is no value
        ("", None, None),
    ],
)
def test_name_then_name_file_stripped_and_blank_is_none(monkeypatch, tmp_path, value, file_text, expected):
    if value is not None:
        monkeypatch.setenv(NAME, value)
    if file_text is not None:
        monkeypatch.setenv(f"{NAME}_FILE", _file(tmp_path, file_text))
    assert env_or_file(NAME) == expected


@pytest.mark.parametrize("target", ["missing", "directory"])
def test_a_name_file_that_names_no_readable_file_is_an_error_naming_the_variable(monkeypatch, tmp_path, target):
    path = tmp_path / "nothing-here" if target == "missing" else tmp_path
    monkeypatch.setenv(f"{NAME}_FILE", str(path))
    with pytest.raises(SecretFileError) as caught:
        env_or_file(NAME)
    assert str(caught.value) == f"{NAME}_FILE points to {str(path)!r}, which is not a readable file"


def test_a_set_name_does_not_read_a_broken_name_file(monkeypatch, tmp_path):
    monkeypatch.setenv(NAME, "sk-env")
    monkeypatch.setenv(f"{NAME}_FILE", str(tmp_path / "nothing-here"))
    assert env_or_file(NAME) == "sk-env"


def test_settings_and_backends_read_secrets_through_this_one_rule(monkeypatch, tmp_path, settings):
    from django.core.exceptions import ImproperlyConfigured

    settings.JUDGE_KEY_VARIABLES = [NAME]  # a judge may name it (llmjudge/backends/endpoint_rules.py)
    from evalhub.server.envconfig import env_str
    from llmjudge.backends.registry import BackendError, api_key_from_env

    monkeypatch.setenv(NAME, "")
    monkeypatch.setenv(f"{NAME}_FILE", _file(tmp_path, " sk-file\n"))
    assert env_str(NAME) == api_key_from_env(NAME) == "sk-file"
    monkeypatch.setenv(f"{NAME}_FILE", str(tmp_path / "nothing-here"))
    with pytest.raises(ImproperlyConfigured, match=f"{NAME}_FILE points to"):
        env_str(NAME)
    with pytest.raises(BackendError, match=f"{NAME}_FILE points to") as caught:
        api_key_from_env(NAME)
    assert caught.value.fatal and not caught.value.transient


def test_the_module_imports_nothing_but_the_standard_library():
    # Settings import it before Django is set up, and llmjudge's backends (which know nothing of Django) too.
    tree = ast.parse(Path(env_secrets.__file__).read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported == {"__future__", "os", "pathlib"}
