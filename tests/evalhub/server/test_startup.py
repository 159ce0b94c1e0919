"""Every process starts light (issue 22, STYLE 15): django.setup(), `manage.py help` and the management
commands' modules import no statistics library, no LLM SDK and no numpy at module level.

Each check runs in a fresh interpreter, because this test process has imported everything already. The
time itself is measured by tests/bench/bench_analyze.py, not asserted here (no timed assertions in tests);
what is asserted is what made it slow: scipy.stats took 0.7 s to import, openai 0.7 s, numpy 0.07 s.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

# What the web worker, the Celery worker and every command paid for at start-up before issue 22.
HEAVY = ("scipy", "scipy.stats", "scipy.special", "numpy", "openai", "httpx2", "krippendorff", "torch",
         "transformers", "sentence_transformers")
# Commands that compute the analysis need numpy (the analysis' arrays) at module level; nothing heavier.
HEAVY_FOR_COMMANDS = tuple(name for name in HEAVY if name != "numpy")

PROBE = """
import contextlib, io, json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
{body}
print(json.dumps(sorted(sys.modules)))
"""
SETUP = "import django\ndjango.setup()"
HELP = """
from django.core.management import execute_from_command_line
with contextlib.redirect_stdout(io.StringIO()) as out:
    execute_from_command_line(["manage.py", "help"])
assert "analyze" in out.getvalue(), out.getvalue()
"""
COMMANDS = """
import importlib
import django
django.setup()
from django.core.management import get_commands
ours = sorted((name, app) for name, app in get_commands().items() if app in ("annotations", "llmjudge", "evalhub"))
assert len(ours) > 10, ours
for name, app in ours:
    importlib.import_module(f"{app}.management.commands.{name}")
"""


def modules_after(body: str) -> set[str]:
    """The module names a fresh interpreter holds after running ``body`` with the project's settings."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "evalhub.settings"}
    result = subprocess.run([sys.executable, "-c", PROBE.format(body=body)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_django_setup_imports_no_statistics_library_sdk_or_numpy():
    modules = modules_after(SETUP)
    # The probe did start Django: the admin's autodiscovery imported every app's admin module.
    assert {"evalhub.admin", "annotations.admin", "llmjudge.admin"} <= modules
    assert sorted(modules.intersection(HEAVY)) == []
    # Celery and its app (0.1 s): only a process that queues or runs a task loads them, through a tasks module.
    assert sorted(name for name in modules if name.split(".")[0] in ("celery", "kombu") or name == "evalhub.celery") \
        == []
    # The parser compiles its ten languages' word lists at import (0.1 s): only what parses imports it.
    assert "llmjudge.parsing" not in modules


BINDING = """
import json, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
import django
django.setup()
from django.conf import settings
from {module} import {task} as task
print(json.dumps({{"expected": settings.CELERY_BROKER_URL, "name": task.name, "app": task.app.main,
                   "broker": task.app.conf.broker_url}}))
"""


@pytest.mark.parametrize("module, task", [("llmjudge.tasks", "judge_chunk"),
                                          ("annotations.prolific.tasks", "prolific_sync_study"),
                                          ("evalhub.imports.tasks", "import_file")])
def test_a_process_that_imports_a_tasks_module_binds_its_tasks_to_the_project_app(module: str, task: str):
    """django.setup() leaves the Celery app unloaded; each tasks module loads it, so a shared task queued from a
    command or the web goes to the project's broker, not to Celery's default app (amqp://localhost). Each module
    in its own interpreter: the first one loaded would bind the others."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "evalhub.settings"}
    result = subprocess.run([sys.executable, "-c", BINDING.format(module=module, task=task)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["app"] == "evalhub"
    assert found["broker"] == found["expected"]
    assert not found["expected"].startswith("amqp")


def test_manage_py_help_imports_no_statistics_library_sdk_or_numpy():
    modules = modules_after(HELP)
    assert "llmjudge.admin" in modules
    assert sorted(modules.intersection(HEAVY)) == []


def test_the_management_commands_modules_import_no_statistics_library_or_sdk():
    modules = modules_after(COMMANDS)
    assert {"evalhub.management.commands.analyze", "llmjudge.management.commands.run_judge"} <= modules
    assert sorted(modules.intersection(HEAVY_FOR_COMMANDS)) == []

CHECKS = """
import django
django.setup()
from django.core.checks import Tags
from django.core.management import load_command_class
for name in ("analyze", "export", "plan_alt_test"):
    command = load_command_class("evalhub", name)
    assert Tags.models in command.requires_system_checks
    assert not {Tags.urls, Tags.templates, Tags.admin} & set(command.requires_system_checks)
    command.check(tags=command.requires_system_checks)  # what `manage.py analyze` runs before handle()
"""


def test_the_analysis_commands_skip_only_the_checks_of_pages_which_import_every_view_and_tag_library():
    modules = modules_after(CHECKS)
    assert "django.core.checks.model_checks" in modules
    pages = {"evalhub.urls", "evalhub.api.views", "drf_spectacular.views", "rest_framework.templatetags.rest_framework",
             "evalhub.templatetags.evalhub_format"}
    assert sorted(modules.intersection(pages)) == []
