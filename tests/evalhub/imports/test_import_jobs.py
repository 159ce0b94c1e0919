"""Uploads above IMPORT_TASK_THRESHOLD_BYTES go through a Celery task (evalhub/imports/jobs.py): the study
page shows the job and its progress, a malformed file changes nothing, and the file is removed."""
from __future__ import annotations

import subprocess
import sys

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse

from annotations.importing import file_rows
from annotations.models import ImportJob, Item
from evalhub.imports import job_run as import_jobs
from tests.support.celery_worker import REPO, celery_broker, service_env, stop_worker, wait_for
from tests.support.import_files import snapshot

ITEMS = "id,group,story,prompt\n"
RATINGS = "item,group,question,pool,rater,score\n"


def items_csv(n: int, bad_line: int | None = None, prefix: str = "i") -> bytes:
    rows = [f"{prefix}{k},human,Story {k} goes on for a while.,p\n" for k in range(n)]
    if bad_line is not None:
        rows[bad_line - 2] = f"{prefix}{bad_line},robot,s,p\n"
    return (ITEMS + "".join(rows)).encode()


@pytest.fixture
def eager():
    from evalhub.celery import app

    old = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = old


@pytest.fixture
def big_uploads(settings, tmp_path):
    settings.IMPORT_TASK_THRESHOLD_BYTES = 1000
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    return settings.IMPORT_UPLOAD_DIR


def _upload(client, what: str, data: bytes, name: str = "big.csv"):
    return client.post(reverse("study_upload", args=["story", what]), {f"{what}-file": SimpleUploadedFile(name, data)})


def test_an_upload_above_the_threshold_is_imported_by_the_task_and_the_page_shows_it(
        client, researcher, story_study, big_uploads, eager, django_capture_on_commit_callbacks):
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(client, "items", items_csv(60))
    assert response.status_code == 302
    job = ImportJob.objects.get()
    assert (job.status, job.kind, job.file_name, job.percent) == ("done", "items", "big.csv", 100)
    assert job.summary == "big.csv: Imported 60 items and 0 ratings."
    assert Item.objects.filter(study=story_study).count() == 60
    assert list(big_uploads.iterdir()) == []  # the file is removed when the job ends
    page = client.get(reverse("study_home", args=["story"]))
    html = page.content.decode()
    assert f'id="import-{job.pk}"' in html and "Imported 60 items" in html
    nonce = page.wsgi_request.csp_nonce
    assert f'<script nonce="{nonce}">' in html and "Reconnecting" in html
    progress = client.get(reverse("import_progress", args=["story", job.pk])).json()
    assert (progress["status"], progress["percent"], progress["live"]) == ("done", 100, False)


def test_a_small_upload_is_still_imported_in_the_request(client, researcher, story_study, big_uploads):
    client.force_login(researcher)
    assert _upload(client, "items", items_csv(3)).status_code == 302
    assert Item.objects.count() == 3 and not ImportJob.objects.exists()


def test_a_malformed_big_file_changes_nothing_and_the_page_names_the_line(
        client, researcher, story_study, big_uploads, eager, django_capture_on_commit_callbacks):
    client.force_login(researcher)
    before = snapshot()
    with django_capture_on_commit_callbacks(execute=True):
        _upload(client, "items", items_csv(60, bad_line=50))
    job = ImportJob.objects.get()
    assert job.status == "failed"
    assert job.error.startswith("big.csv: line 50: unknown group 'robot'") and job.error.endswith("Nothing was imported.")
    assert snapshot() == before and list(big_uploads.iterdir()) == []
    with django_capture_on_commit_callbacks(execute=True):
        _upload(client, "ratings", (RATINGS + "s1,human,cohesiveness,human,t,3\n" * 40).encode())
    ratings = ImportJob.objects.filter(kind="ratings").get()
    assert ratings.status == "failed" and "line 3: duplicate rating: item 's1'" in ratings.error
    assert snapshot() == before
    assert "line 50: unknown group" in client.get(reverse("study_home", args=["story"])).content.decode()


def test_progress_is_written_outside_the_transaction_while_the_file_is_checked(story_study, big_uploads, monkeypatch):
    monkeypatch.setattr(file_rows, "READ_BLOCK", 512)
    monkeypatch.setattr(import_jobs, "PROGRESS_EVERY_SECONDS", 0)
    big_uploads.mkdir()
    path = big_uploads / "x.csv"
    path.write_bytes(items_csv(200))
    size = path.stat().st_size
    job = ImportJob.objects.create(study=story_study, kind="items", file_name="x.csv", path=str(path), size_bytes=size)
    updates: list[tuple[str, bool, tuple]] = []
    outer = len(connection.atomic_blocks)  # the test's own transaction

    def spy(execute, sql, params, many, context):  # every statement, as the database receives it
        if sql.startswith('UPDATE "annotations_importjob"'):
            updates.append((sql, len(connection.atomic_blocks) > outer, tuple(params or ())))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        import_jobs.import_job_run(job_id=job.pk)
    checking = [u for u in updates if "checking" in u[2]]
    assert len(checking) >= size // 512  # one per block read
    assert not any(in_transaction for _, in_transaction, _ in checking)  # visible to the page at once
    assert any("writing" in params for _, _, params in updates)
    assert [in_transaction for _, in_transaction, params in updates if "done" in params] == [True]
    job.refresh_from_db()
    assert job.status == "done" and Item.objects.count() == 200 and not path.exists()


def test_a_second_delivery_of_a_finished_job_does_nothing(story_study, big_uploads):
    job = ImportJob.objects.create(study=story_study, kind="items", file_name="x.csv", path=str(big_uploads / "gone"),
                                   size_bytes=10, status="done", summary="x")
    import_jobs.import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.summary, job.error) == ("done", "x", "")


def test_another_researcher_cannot_poll_the_job(client, other_researcher, story_study):
    job = ImportJob.objects.create(study=story_study, kind="items", file_name="x.csv", path="/nonexistent", size_bytes=1)
    client.force_login(other_researcher)
    assert client.get(reverse("import_progress", args=["story", job.pk])).status_code == 404


@pytest.mark.services("postgresql", "redis", reason="the web request and a real worker share the database, "
                                                    "the broker and the upload directory")
def test_a_big_upload_goes_through_a_real_worker(transactional_db, client, researcher, settings, tmp_path):
    from annotations.studies import study_create_from_template

    study_create_from_template(slug="story", template="story-likert", owner=researcher)
    settings.IMPORT_TASK_THRESHOLD_BYTES = 1000
    settings.IMPORT_UPLOAD_DIR = tmp_path
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalhub", "worker", "-Q", "default", "-c", "1", "-n", "imports@%h",
         "--loglevel", "WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=REPO, env=service_env(redis_url=settings.REDIS_URL, IMPORT_UPLOAD_DIR=str(tmp_path)),
        start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        client.force_login(researcher)
        assert _upload(client, "items", items_csv(500)).status_code == 302
        assert _upload(client, "items", items_csv(500, bad_line=400, prefix="j"), name="bad.csv").status_code == 302
        wait_for(lambda: not ImportJob.objects.filter(status__in=["pending", "checking", "writing"]).exists(), 60,
                 "the worker to finish both imports")
    finally:
        stop_worker(worker)
    good, bad = ImportJob.objects.order_by("pk")
    assert (good.status, bad.status) == ("done", "failed")
    assert "line 400: unknown group 'robot'" in bad.error
    assert Item.objects.count() == 500 and list(tmp_path.iterdir()) == []


def test_a_job_that_cannot_be_queued_fails_visibly_and_removes_its_file(
        client, researcher, story_study, big_uploads, django_capture_on_commit_callbacks):
    client.force_login(researcher)
    with celery_broker("redis://127.0.0.1:1/0"), django_capture_on_commit_callbacks(execute=True):  # nothing listens
        assert _upload(client, "items", items_csv(60)).status_code == 302
    job = ImportJob.objects.get()
    assert job.status == "failed" and "could not be queued" in job.error
    assert list(big_uploads.iterdir()) == [] and not Item.objects.exists()


def test_with_debug_on_the_task_keeps_no_query_of_the_import(story_study, big_uploads, settings):
    settings.DEBUG = True
    big_uploads.mkdir()
    path = big_uploads / "x.csv"
    path.write_bytes(items_csv(3000))
    job = ImportJob.objects.create(study=story_study, kind="items", file_name="x.csv", path=str(path),
                                   size_bytes=path.stat().st_size)
    connection.queries_log.clear()
    import_jobs.import_job_run(job_id=job.pk)
    assert Item.objects.count() == 3000
    assert len(connection.queries) <= 3  # the job's own reads and writes around the import, not its batches


def test_deleting_the_study_of_a_waiting_job_removes_its_file(client, researcher, story_study, big_uploads,
                                                             django_capture_on_commit_callbacks):
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=False):  # no worker took it yet
        assert _upload(client, "items", items_csv(60)).status_code == 302
    job = ImportJob.objects.get()
    assert job.status == "pending" and len(list(big_uploads.iterdir())) == 1
    story_study.delete()
    assert not ImportJob.objects.exists() and list(big_uploads.iterdir()) == []
