"""Serve EvalHub on a port against DATABASE_URL with one open study and one rater, for fault tests.

    DATABASE_URL=postgresql://... python -m tests.support.rater_app PORT

Migrates the (empty) database, creates the study (four items, no consent, no demographics, no
attention checks) and a rater, prints ``{"url": "/r/<token>/"}`` on one line, then serves with
Django's threaded WSGI server until killed. One process, so Django starts once.
"""
from __future__ import annotations

import json
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.core.servers.basehttp import get_internal_wsgi_application, run

    from annotations.models import Rater
    from annotations.studies import study_create_from_template
    from tests.support.raterkit import add_story_items, open_study

    call_command("migrate", verbosity=0)
    owner = get_user_model().objects.create_user(username="owner", password="pw-owner-123")
    study = study_create_from_template(slug="restart", template="story-likert", owner=owner)
    add_story_items(study)
    open_study(study, consent_text="", ask_demographics=False, attention_positions=[])
    rater = Rater.objects.create(study=study, external_id="rater-a")
    print(json.dumps({"url": f"/r/{rater.token}/"}), flush=True)
    run("127.0.0.1", int(sys.argv[1]), get_internal_wsgi_application(), threading=True)


if __name__ == "__main__":
    main()
