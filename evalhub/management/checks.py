"""The system checks that the commands which read and print the analysis run before they start."""
from __future__ import annotations

from django.core.checks import Tags

# Every tag but the checks of what serves pages. The URL checks import the whole URL conf (every view, the API and
# its schema generator); the template and admin checks start the template engine, which imports every template tag
# library (DRF's among them): 0.5 s together, more than the rest of the start-up, for pages that a command reading
# the database never serves. `manage.py check`, migrate, runserver and the test suite still run them.
PAGE_TAGS = (Tags.urls, Tags.templates, Tags.admin)
COMMAND_CHECKS: list[str] = [
    tag for name, tag in vars(Tags).items() if not name.startswith("_") and tag not in PAGE_TAGS
]
