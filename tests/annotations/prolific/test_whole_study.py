"""A whole study against the local Prolific server (tests/support/prolific_server.py): publish, four
participants through the open link, one returning, one failing the attention check (rejected by the
researcher), approvals by rule, a bonus paid after a crash between create and pay. Afterwards the server holds
exactly one payment per bonus and the right transitions, and EvalHub's seats match Prolific's places."""
from __future__ import annotations

import logging

import pytest
from django.core.management import call_command

from annotations.models import ProlificStudy
from annotations.prolific.following import prolific_sync
from tests.support.prolific_participants import TOKEN_ENV, finish
from tests.support.prolific_story import check_the_rest, run_whole_study


@pytest.mark.django_db
def test_a_whole_study_on_prolific_pays_each_bonus_once_and_keeps_seats_in_step(prolific, study, researcher, caplog):
    caplog.set_level(logging.DEBUG)
    link, *arrivals = run_whole_study(prolific, study, researcher, lambda link: prolific_sync(link=link))
    check_the_rest(prolific, link, researcher, *arrivals, sync=lambda: prolific_sync(link=link))
    assert prolific.token not in caplog.text  # the token never reaches a log line


@pytest.mark.django_db
def test_the_commands_publish_and_sync(prolific, study, researcher):
    call_command("prolific_publish", study.slug, "--token-env", TOKEN_ENV, "--reward-cents", "120", "--minutes", "8")
    link = ProlificStudy.objects.get(study=study)
    assert prolific.study(link.prolific_id)["status"] == "ACTIVE"
    finish(prolific, link, "pid-erin")
    call_command("prolific_sync", study.slug)
    assert [s["status"] for s in map(prolific.submission, [prolific.transitions[-1].resource_id])] == ["APPROVED"]
