"""Bad input through the admin: a staff user uploading a bad file sees the reason and nothing changes."""
from __future__ import annotations

import html

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotations.models import HumanRating, Item
from tests.reliability.test_bad_imports import BAD
from tests.support.snapshots import database_snapshot

UPLOADED = ["latin-1", "utf-16-with-bom", "pipe-delimited", "unterminated-quote-mid-file", "duplicate-id-far-apart",
            "score-two-dots", "long-human-rater-id", "jsonl-escaped-nul", "json-array-of-objects", "whitespace-only",
            "demographics-column-with-a-space"]


@pytest.fixture
def staff_client(client, django_user_model, story_study):
    staff = django_user_model.objects.create_superuser(username="staff", password="pw-staff-123")
    client.force_login(staff)
    return client


@pytest.mark.parametrize("bad", [b for b in BAD if b.id in UPLOADED], ids=lambda b: b.id)
def test_a_bad_upload_shows_the_reason_and_changes_nothing(staff_client, story_study, bad):
    data = bad.data if isinstance(bad.data, bytes) else bad.data.encode("utf-8")
    url = reverse(f"admin:annotations_study_import_{bad.kind}", args=[story_study.pk])
    before = database_snapshot()

    response = staff_client.post(url, {"file": SimpleUploadedFile(bad.name, data)})

    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    line = f"line {bad.line}: " if bad.line is not None else ""
    # The admin capitalises messages ("X.csv: line 2: ...").
    assert f"{bad.name}: {line}".capitalize() in page and bad.reason in page and "Nothing was imported." in page
    assert database_snapshot() == before


def test_every_uploaded_case_is_in_the_corpus():
    assert {b.id for b in BAD} >= set(UPLOADED)


def test_a_good_upload_imports_and_redirects_to_the_study(staff_client, story_study):
    items = SimpleUploadedFile("items.csv", "\ufeffid;group;story;prompt\r\na;human;Once, upon a time;p\r\n".encode())
    ratings = SimpleUploadedFile("ratings.jsonl", b'{"item": "a", "group": "human", "question": "relevance", '
                                                  b'"pool": "human", "rater": "t1", "score": "4"}\n')

    first = staff_client.post(reverse("admin:annotations_study_import_items", args=[story_study.pk]), {"file": items})
    second = staff_client.post(reverse("admin:annotations_study_import_ratings", args=[story_study.pk]),
                               {"file": ratings})

    change = reverse("admin:annotations_study_change", args=[story_study.pk])
    assert (first.status_code, first.url, second.status_code, second.url) == (302, change, 302, change)
    assert list(Item.objects.values_list("external_id", "group", "fields")) == [
        ("a", "human", {"story": "Once, upon a time", "prompt": "p"})]
    assert list(HumanRating.objects.values_list("item__external_id", "question__key", "rater__external_id", "score")) == [
        ("a", "relevance", "t1", 4.0)]


def test_a_file_above_the_task_threshold_is_sent_to_the_study_page_and_changes_nothing(staff_client, story_study,
                                                                                      settings):
    # The admin imports inside the request; a large file belongs to the study page's background import.
    settings.IMPORT_TASK_THRESHOLD_BYTES = 50
    body = "id,group,story,prompt\n" + "".join(f"i{n},human,s,p\n" for n in range(10))
    before = database_snapshot()
    response = staff_client.post(reverse("admin:annotations_study_import_items", args=[story_study.pk]),
                                 {"file": SimpleUploadedFile("items.csv", body.encode())})
    assert response.status_code == 413
    page = html.unescape(response.content.decode())
    assert "IMPORT_TASK_THRESHOLD_BYTES" in page and "study's page" in page and "Nothing was imported." in page
    assert database_snapshot() == before
