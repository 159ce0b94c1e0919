"""A value from the environment, or from the file ``NAME_FILE`` names (Docker and Kubernetes secrets).

One rule for every reader: the settings' helpers (evalhub.server.envconfig) and the judge backends' API keys
(llmjudge.backends.registry). Free of Django, so settings may import it before Django is set up; it lives in
annotations, the lowest layer, so that llmjudge and evalhub may both import it.

The rule:

- ``$NAME`` wins when it holds something other than whitespace; the value is stripped (a key pasted
  with its newline is the key);
- otherwise ``$NAME_FILE``, when set, must name a readable file, whose stripped text is the value. A
  path that names nothing is an error naming the variable and the path: a mounted secret that is
  missing must stop the start-up or the run, not pass for "no value";
- an empty value (unset, blank, or an empty file) is ``None``: callers apply their default.
"""
from __future__ import annotations

import os
from pathlib import Path


class SecretFileError(ValueError):
    """``NAME_FILE`` is set but names no readable file."""


def env_or_file(name: str) -> str | None:
    """The stripped value of ``$NAME``, or of the file ``$NAME_FILE`` names; None when there is none.

    Raises SecretFileError when ``$NAME_FILE`` names no readable file (and ``$NAME`` is blank).
    """
    value = (os.environ.get(name) or "").strip()
    if value:
        return value
    file_name = os.environ.get(f"{name}_FILE")
    if not file_name:
        return None
    path = Path(file_name)
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        raise SecretFileError(f"{name}_FILE points to {file_name!r}, which is not a readable file") from None
    return text or None
