"""The system checks that the commands which read and print the analysis run before they start."""
from __future__ import annotations

from django.core.checks import Tags

# Every tag but the URL checks. Those import the whole URL conf, so every view, the API and its schema generator
# (0.3 s, about the rest of the start-up together), to check routes that a command reading the database never
# uses. `manage.py check`, migrate, runserver and the test suite still check the URLs.
WITHOUT_URL_CHECKS: list[str] = [
    tag for name, tag in vars(Tags).items() if not name.startswith("_") and tag != Tags.urls
]
