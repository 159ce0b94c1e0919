"""import_items and import_demographics: good files land whole, bad files change nothing and name the line.

import_ratings, which also stores LLM pools, is tested in tests/evalhub/imports/test_rating_import.py.
"""
from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotations.models import Item, Rater
from tests.support.import_files import snapshot, write

STORY_HEADER = "id,group,story,prompt\n"


def test_items_import_from_csv_keeps_fields_and_order(story_study, tmp_path):
    path = write(tmp_path, "items.csv", STORY_HEADER + 'a,human,"Once, upon a time.",P1\nb,gpt2,Story two,P2\n')
    call_command("import_items", "story", str(path))
    items = list(Item.objects.order_by("position"))
    assert [(i.external_id, i.group, i.fields) for i in items] == [
        ("a", "human", {"story": "Once, upon a time.", "prompt": "P1"}),
        ("b", "gpt2", {"story": "Story two", "prompt": "P2"}),
    ]


def test_items_import_from_jsonl_and_a_utf8_bom_csv(story_study, tmp_path):
    lines = [{"id": "j1", "group": "human", "story": "Ünïcode “quotes”", "prompt": "p"},
             {"id": 2, "group": "gpt2", "story": "s", "prompt": "p"}]
    call_command("import_items", "story", str(write(tmp_path, "i.jsonl", "\n".join(map(json.dumps, lines)) + "\n")))
    call_command("import_items", "story", str(write(tmp_path, "bom.csv", "\ufeff" + STORY_HEADER + "c,human,s,p\n")))
    assert sorted(Item.objects.values_list("external_id", flat=True)) == ["2", "c", "j1"]
    assert Item.objects.get(external_id="j1").fields["story"] == "Ünïcode “quotes”"


def test_items_import_accepts_semicolon_and_tab_delimiters(story_study, tmp_path):
    call_command("import_items", "story", str(write(tmp_path, "semi.csv", "id;group;story;prompt\nx;human;s;p\n")))
    call_command("import_items", "story", str(write(tmp_path, "tab.tsv", "id\tgroup\tstory\tprompt\ny\tgpt2\ts\tp\n")))
    assert Item.objects.count() == 2


BAD_ITEM_FILES = [
    ("empty.csv", "", "the file is empty"),
    ("blank.csv", "\n\n  \n", "the file is empty"),
    ("header-only.csv", STORY_HEADER, "header but no rows"),
    ("missing.csv", "id,group,story\na,human,s\n", "line 2: missing column(s) prompt"),
    ("extra.csv", "id,group,story,prompt,author\na,human,s,p,me\n", "line 2: unknown column(s) author"),
    ("dup.csv", STORY_HEADER + "a,human,s,p\na,gpt2,s,p\n", "line 3: duplicate id 'a'"),
    ("group.csv", STORY_HEADER + "a,human,s,p\nb,robot,s,p\n", "line 3: unknown group 'robot'"),
    ("noid.csv", STORY_HEADER + ",human,s,p\n", "line 2: empty id"),
    ("nostory.csv", STORY_HEADER + "a,human,,p\n", "line 2: empty field 'story'"),
    ("ragged.csv", STORY_HEADER + "a,human,s\n", "line 2: expected 4 values, found 3"),
    ("latin1.csv", (STORY_HEADER + "a,human,caf\xe9,p\n").encode("latin-1"), "line 2: not valid UTF-8"),
    ("bad.jsonl", '{"id": "a", "group": "human", "story": "s", "prompt": "p"}\n{"id": "b", "group"\n',
     "line 2: invalid JSON"),
    ("list.jsonl", '{"id": "a", "group": "human", "story": "s", "prompt": "p"}\n[1, 2]\n',
     "line 2: each line must be a JSON object"),
    ("nested.jsonl", '{"id": "a", "group": "human", "story": {"x": 1}, "prompt": "p"}\n',
     "line 1: field 'story' must be a string or number"),
    ("dupheader.csv", "id,group,story,story,prompt\na,human,s,s,p\n", "line 1: duplicate column names"),
]


@pytest.mark.parametrize(("name", "content", "reason"), BAD_ITEM_FILES, ids=[b[0] for b in BAD_ITEM_FILES])
def test_bad_item_files_are_refused_with_the_line_and_change_nothing(story_study, tmp_path, name, content, reason):
    call_command("import_items", "story", str(write(tmp_path, "ok.csv", STORY_HEADER + "existing,human,s,p\n")))
    before = snapshot()
    with pytest.raises(CommandError) as excinfo:
        call_command("import_items", "story", str(write(tmp_path, name, content)))
    assert reason in str(excinfo.value)
    assert "nothing was imported" in str(excinfo.value)
    assert "\n" not in str(excinfo.value)
    assert snapshot() == before


def test_items_already_in_the_study_are_refused(story_study, tmp_path):
    call_command("import_items", "story", str(write(tmp_path, "a.csv", STORY_HEADER + "a,human,s,p\n")))
    with pytest.raises(CommandError, match="line 3: item 'a' already exists"):
        call_command("import_items", "story", str(write(tmp_path, "b.csv", STORY_HEADER + "b,human,s,p\na,human,s,p\n")))
    assert list(Item.objects.values_list("external_id", flat=True)) == ["a"]


def test_missing_file_and_unknown_study_are_clear_errors(story_study, tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_items", "story", str(tmp_path / "nope.csv"))
    with pytest.raises(CommandError, match="no study 'ghost'"):
        call_command("import_items", "ghost", str(tmp_path / "nope.csv"))


def test_file_above_the_size_limit_is_refused_before_reading(story_study, tmp_path, settings):
    settings.IMPORT_MAX_BYTES = 100
    with pytest.raises(CommandError, match="above the limit of 100 bytes"):
        call_command("import_items", "story", str(write(tmp_path, "big.csv", STORY_HEADER + "a,human,s,p\n" * 20)))
    assert Item.objects.count() == 0


# --- demographics -----------------------------------------------------------------------------


@pytest.fixture
def imported_raters(story_study, tmp_path):
    """Raters t1 and t2 as the ratings import creates them, and t3 who gave demographics in the rater form."""
    from annotations.services import demographics_save

    call_command("import_ratings", "story", str(write(tmp_path, "r.csv", (
        "item,group,question,pool,rater,score\ns1,human,relevance,human,t1,4\ns1,human,relevance,human,t2,2\n"))))
    formed = Rater.objects.create(study=story_study, external_id="t3")
    demographics_save(rater=formed, answers={"age_band": "25-34", "gender": "woman"})
    return story_study


def demographics(name: str) -> dict:
    return Rater.objects.get(external_id=name).demographics


def test_demographics_import_sets_each_raters_fields_and_leaves_out_empty_values(imported_raters, tmp_path, capsys):
    path = write(tmp_path, "d.csv", "rater;age_band;education;region\nt1;35-44;master;\n t2 ; 18-24 ;; europe\n")
    call_command("import_demographics", "story", str(path))
    assert demographics("t1") == {"age_band": "35-44", "education": "master"}
    assert demographics("t2") == {"age_band": "18-24", "region": "europe"}
    assert demographics("t3") == {"age_band": "25-34", "gender": "woman"}  # not in the file: untouched
    assert "set the demographics of 2 raters in story (0 already had exactly these)" in capsys.readouterr().out


def test_importing_the_same_demographics_file_twice_changes_nothing_the_second_time(imported_raters, tmp_path, capsys):
    lines = [{"rater": "t1", "age": 41, "occupation": "nurse"}, {"rater": "t3", "age_band": "25-34", "gender": "woman"}]
    first = write(tmp_path, "d.jsonl", json.dumps(lines[0]) + "\n")
    call_command("import_demographics", "story", str(first))
    call_command("import_demographics", "story", str(first))
    assert demographics("t1") == {"age": "41", "occupation": "nurse"}  # JSON numbers are kept as text
    assert capsys.readouterr().out.splitlines()[-1].endswith("(1 already had exactly these)")
    # Equal to what the rater form stored: not an overwrite, so no --replace needed.
    call_command("import_demographics", "story", str(write(tmp_path, "e.jsonl", json.dumps(lines[1]) + "\n")))


def test_demographics_from_the_rater_form_are_replaced_only_with_replace_and_then_whole(imported_raters, tmp_path):
    path = write(tmp_path, "d.csv", "rater,age_band,education\nt1,45-54,bachelor\nt3,55-64,doctorate\n")
    before = snapshot(), demographics("t1"), demographics("t3")
    with pytest.raises(CommandError, match=r"line 3: rater 't3' already has demographics \(given in the rater form: "
                                           r"age_band, gender\); replace them with --replace; nothing was imported"):
        call_command("import_demographics", "story", str(path))
    assert (snapshot(), demographics("t1"), demographics("t3")) == before
    call_command("import_demographics", "story", str(path), "--replace")
    assert demographics("t3") == {"age_band": "55-64", "education": "doctorate"}  # gender is gone: replaced whole
    again = write(tmp_path, "again.csv", "rater,age_band\nt1,18-24\n")
    with pytest.raises(CommandError, match="already has demographics \\(imported earlier: age_band, education\\)"):
        call_command("import_demographics", "story", str(again))


def test_demographics_upload_in_the_admin_with_and_without_replace(imported_raters, client, django_user_model):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    client.force_login(django_user_model.objects.create_superuser(username="staff", password="pw-staff-123"))
    url = reverse("admin:annotations_study_import_demographics", args=[imported_raters.pk])
    data = b"rater,gender\nt2,man\nt3,non-binary\n"
    refused = client.post(url, {"file": SimpleUploadedFile("d.csv", data)})
    assert b"already has demographics" in refused.content and demographics("t2") == {}
    done = client.post(url, {"file": SimpleUploadedFile("d.csv", data), "replace": "on"}, follow=True)
    assert b"Set the demographics of 2 raters" in done.content
    assert (demographics("t2"), demographics("t3")) == ({"gender": "man"}, {"gender": "non-binary"})
    change = client.get(reverse("admin:annotations_study_change", args=[imported_raters.pk]))
    assert url.encode() in change.content
