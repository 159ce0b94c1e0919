"""create_judge --kind with the kind's options, validated through llmjudge/kinds/options.py."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def test_create_judge_stores_a_personalized_judge_with_its_profile_size(capsys, admin_user):
    from llmjudge.models import Judge

    call_command("create_judge", "perse", "--kind", "personalized", "--profile-size", "4", "--option", "split_seed=3")
    judge = Judge.objects.get(name="perse")
    assert judge.kind == "personalized"
    assert judge.options == {"profile_size": 4, "split_seed": 3}
    assert "created judge 'perse' owned by admin (personalized" in capsys.readouterr().out


def test_create_judge_reads_json_option_values_and_keeps_backend_options(admin_user):
    from llmjudge.models import Judge

    call_command("create_judge", "panel", "--kind", "roleplay", "--option", "dynamic_roles=0",
                 "--option", "static_roles_preset=summarization", "--endpoint", "completions")
    assert Judge.objects.get(name="panel").options == {
        "endpoint": "completions", "dynamic_roles": 0, "static_roles_preset": "summarization"
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "personalized", "--option", "profile_sise=3"], "unknown option.*profile_sise"),
        (["--kind", "persona", "--option", "method=telepathy"], "'method' must be one of"),
        (["--kind", "rubric", "--option", "version=v9"], "version"),
        (["--kind", "plain", "--profile-size", "3"], "plain judge takes no options"),
        (["--kind", "oracle"], "--kind 'oracle': unknown judge kind"),
        (["--kind", "persona", "--option", "novalue"], "KEY=VALUE"),
    ],
)
def test_create_judge_refuses_bad_kind_options_naming_the_option(args, message, admin_user):
    from llmjudge.models import Judge

    with pytest.raises(CommandError, match=message):
        call_command("create_judge", "bad", *args)
    assert not Judge.objects.filter(name="bad").exists()
