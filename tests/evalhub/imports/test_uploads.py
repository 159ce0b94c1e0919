"""The one rule for an uploaded file (evalhub/imports/uploads.py): up to IMPORT_TASK_THRESHOLD_BYTES it is
imported in the request; above, the study page hands it to a job and the API and the admin refuse it."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotations.importing.services import ImportFileError, ImportResult
from annotations.models import ImportJob, Item
from evalhub.imports.uploads import UploadTooLarge, upload_import

ITEMS = b"id,group,story,prompt\na,human,S1,P1\nb,gpt2,S2,P2\n"


@pytest.fixture
def threshold(settings, tmp_path):
    settings.IMPORT_TASK_THRESHOLD_BYTES = len(ITEMS)
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    return settings


def _items(data: bytes = ITEMS) -> SimpleUploadedFile:
    return SimpleUploadedFile("items.csv", data)


@pytest.mark.parametrize("background", [False, True])
def test_a_file_at_the_threshold_is_imported_now_whoever_calls(story_study, researcher, threshold, background):
    result = upload_import(study=story_study, kind="items", upload=_items(), options={}, user=researcher,
                           background=background)
    assert isinstance(result, ImportResult) and result.created_items == 2
    assert sorted(Item.objects.values_list("external_id", flat=True)) == ["a", "b"]
    assert not ImportJob.objects.exists()


def test_a_file_one_byte_above_is_handed_to_a_job_when_the_caller_shows_jobs(story_study, researcher, threshold):
    job = upload_import(study=story_study, kind="items", upload=_items(ITEMS + b"\n"), options={}, user=researcher,
                        background=True)
    assert isinstance(job, ImportJob)
    assert (job.kind, job.status, job.size_bytes, job.created_by) == ("items", "pending", len(ITEMS) + 1, researcher)
    assert not Item.objects.exists()  # the task imports it, after the request commits


def test_a_file_one_byte_above_is_refused_by_a_caller_that_imports_only_now(story_study, researcher, threshold):
    with pytest.raises(UploadTooLarge) as refused:
        upload_import(study=story_study, kind="items", upload=_items(ITEMS + b"\n"), options={}, user=researcher,
                      background=False)
    assert (refused.value.size, refused.value.limit) == (len(ITEMS) + 1, len(ITEMS))
    assert "IMPORT_TASK_THRESHOLD_BYTES" in str(refused.value) and "study's page" in str(refused.value)
    assert isinstance(refused.value, ImportFileError)  # callers that only say "nothing was imported" catch it too
    assert not Item.objects.exists() and not ImportJob.objects.exists()


def test_a_refused_small_file_imports_nothing_and_says_why(story_study, researcher, threshold):
    bad = b"id,group,story,prompt\na,robot,S1,P1\n"
    with pytest.raises(ImportFileError, match="line 2") as refused:
        upload_import(study=story_study, kind="items", upload=_items(bad), options={}, user=researcher,
                      background=True)
    assert not isinstance(refused.value, UploadTooLarge)
    assert not Item.objects.exists() and not ImportJob.objects.exists()


@pytest.mark.parametrize("replace", [False, True])
def test_the_form_options_reach_the_service(rater, researcher, threshold, replace):
    rater.demographics = {"age": "20"}
    rater.save()
    upload = SimpleUploadedFile("d.csv", b"rater,age\nrater-a,30\n")
    if replace:
        upload_import(study=rater.study, kind="demographics", upload=upload, options={"replace": True},
                      user=researcher, background=False)
    else:
        with pytest.raises(ImportFileError, match="rater-a"):
            upload_import(study=rater.study, kind="demographics", upload=upload, options={"replace": False},
                          user=researcher, background=False)
    rater.refresh_from_db()
    assert rater.demographics == {"age": "30" if replace else "20"}
