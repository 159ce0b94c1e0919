"""Peak memory of 200 MB imports: the task's peak RSS above its baseline, and the web worker's RSS around a
200 MB upload through a real gunicorn server (issue 18, part 4).

    .venv/bin/python tests/bench/bench_import_memory.py [MB]          # embedded: SQLite in a temporary folder
    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/<db> REDIS_URL=redis://127.0.0.1:6379/<n> \\
        .venv/bin/python tests/bench/bench_import_memory.py [MB]

It writes an items file and a ratings file of MB megabytes each (200 by default) in a temporary folder,
and a malformed file of each kind (its last line is bad: a group the study does not have, a score off
the scale), which must be read whole, refused, and change nothing;
starts gunicorn (one sync worker) on the same database, logs a researcher in and uploads each file to the
study page: the upload is above IMPORT_TASK_THRESHOLD_BYTES, so the web worker only moves it to the upload
folder and queues the task. Nothing consumes the queue: the task's function (evalhub.imports.tasks.import_file)
then runs in a fresh process per file, which reports its RSS after start-up (the baseline) and its peak RSS
(ru_maxrss). Linux only (/proc).
"""
from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

REPO = Path(__file__).resolve().parents[2]
MB = 1024 * 1024
STORY = ("The lighthouse keeper still climbs the hundred and twelve steps each evening, polishes the lens and writes "
         "the weather in a logbook nobody collects. ")


def rss_bytes(pid: int | str = "self", field: str = "VmRSS") -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", status, re.M).group(1)) * 1024  # type: ignore[union-attr]


def write_items(path: Path, size: int, prefix: str = "i") -> int:
    n = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("id,group,story,prompt\n")
        while out.tell() < size:
            out.write(f'{prefix}{n},{"human" if n % 2 else "gpt2"},"{STORY * 7} (story {n})",A lighthouse at night\n')
            n += 1
    return n


RATIONALE = ("The story keeps its focus on the keeper and the lighthouse; the second half repeats the opening image, "
             "which weakens the ending a little, but the sentences connect and the events follow from each other. ")
COMMENT = "Reads well; the ending repeats the opening image."


def write_ratings(path: Path, size: int, items: int, questions: list[str]) -> int:
    """Human raters (with a comment) and an LLM pool (with its rationale) over the items already imported,
    as a study's ratings file would be."""
    rows = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("item,group,question,pool,rater,score,rationale\n")
        n = 0
        while out.tell() < size:
            item, group = f"i{n % items}", "human" if n % items % 2 else "gpt2"
            for question in questions:
                for rater in range(3):
                    index = (n // items) * 3 + rater
                    out.write(f'{item},{group},{question},human,rater-{index},{1 + (n + rater) % 5},"{COMMENT}"\n')
                    out.write(f'{item},{group},{question},gpt-judge,{index},{1 + n % 5},"{RATIONALE}"\n')
                    rows += 2
            n += 1
    return rows


def run_job(job_id: int) -> None:
    """In a fresh process: the task's function on one job; prints baseline and peak RSS as JSON."""
    import django

    django.setup()
    from django.conf import settings

    from annotations.models import ImportJob
    from evalhub.imports.tasks import import_file

    job = ImportJob.objects.select_related("study").get(pk=job_id)
    list(job.study.questions.all())
    baseline = rss_bytes()
    started = time.perf_counter()
    import_file(job_id)  # the task's body, as a worker runs it
    seconds = time.perf_counter() - started
    job.refresh_from_db()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert not settings.DEBUG, "DEBUG keeps every query in memory: measure as in production"
    print(json.dumps({"baseline": baseline, "peak": peak, "seconds": seconds, "status": job.status,
                      "summary": job.summary, "error": job.error}))


def _counts() -> tuple[int, ...]:
    from annotations.models import HumanRating, Item, Rater
    from llmjudge.models import JudgeRun, LLMRating

    return tuple(model.objects.count() for model in (Item, Rater, HumanRating, JudgeRun, LLMRating))


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def main(size_mb: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-import-"))
    env = {**os.environ, "EVALHUB_VAR_DIR": str(tmp / "var"), "IMPORT_UPLOAD_DIR": str(tmp / "uploads"),
           "IMPORT_MAX_BYTES": str(max(size_mb + 10, 200) * MB), "DJANGO_SETTINGS_MODULE": "evalhub.settings",
           "LOG_LEVEL": "WARNING",
           # As in production: with DEBUG on, Django keeps each connection's last 9,000 queries (a batch of
           # ratings is a long INSERT), which Celery warns about; plain HTTP on localhost.
           "DEBUG": "false", "SECRET_KEY": "bench-import-memory", "ALLOWED_HOSTS": "127.0.0.1",
           "SECURE_SSL_REDIRECT": "false", "SECURE_COOKIES": "false", "SECURE_HSTS_SECONDS": "0"}
    os.environ.update(env)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.conf import settings

    from annotations.models import Study

    uploads = _study_and_files(tmp, size_mb)
    rows = _uploads_measured(env, uploads)
    _print_table(rows, settings.IMPORT_TASK_THRESHOLD_BYTES)
    Study.objects.filter(slug="bench-import").delete()


def _study_and_files(tmp: Path, size_mb: int) -> list[tuple[str, Path, str]]:
    """The bench's researcher and study, and its four files: (what, path, the job's expected outcome)."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from annotations.models import Study
    from annotations.studies import study_create_from_template

    call_command("migrate", verbosity=0)
    call_command("collectstatic", "--noinput", verbosity=0)  # DEBUG off: the pages need the manifest
    Study.objects.filter(slug="bench-import").delete()
    user, _ = get_user_model().objects.get_or_create(username="bench-import")
    user.set_password("bench-import-pw")
    user.save()
    study = study_create_from_template(slug="bench-import", template="story-likert", owner=user)
    questions = [q.key for q in study.questions.all()]
    items_path, ratings_path = tmp / "items.csv", tmp / "ratings.csv"
    n_items = write_items(items_path, size_mb * MB)
    n_ratings = write_ratings(ratings_path, size_mb * MB, n_items, questions)
    # Malformed files of both kinds, refused on their last line: read whole, then nothing may change.
    bad_items, bad_ratings = tmp / "bad-items.csv", tmp / "bad-ratings.csv"
    write_items(bad_items, size_mb * MB, prefix="m")
    with bad_items.open("a", encoding="utf-8") as out:
        out.write("m-last,robot,a story,a prompt\n")
    shutil.copyfile(ratings_path, bad_ratings)
    with bad_ratings.open("a", encoding="utf-8") as out:
        out.write(f"i0,gpt2,{questions[0]},human,rater-0,9,\"off the scale\"\n")
    print(f"database {connection.vendor}; items file {items_path.stat().st_size / MB:.0f} MB ({n_items} items), "
          f"ratings file {ratings_path.stat().st_size / MB:.0f} MB ({n_ratings} ratings)")
    connection.close()
    return [("items", items_path, "done"), ("ratings", ratings_path, "done"),
            ("items", bad_items, "failed"), ("ratings", bad_ratings, "failed")]


def _uploads_measured(env: dict[str, str], uploads: list[tuple[str, Path, str]]) -> list[tuple]:
    """Each file uploaded to a real gunicorn worker (its RSS around the upload), then its job run in a fresh
    process (the task's RSS); a malformed file must leave the database as it was."""
    import httpx
    from django.db import connection

    from annotations.models import ImportJob

    port = 8765
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "evalhub.wsgi:application", "--bind", f"127.0.0.1:{port}",
                               "--workers", "1", "--timeout", "300"], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    rows = []
    try:
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=600) as client:
            worker = _logged_in(client, server.pid)
            for what, path, outcome in uploads:
                counts = _counts()
                home = client.get("/studies/bench-import/home/")
                token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', home.text).group(1)  # type: ignore[union-attr]
                before = rss_bytes(worker)
                started = time.perf_counter()
                with path.open("rb") as handle:
                    response = client.post(f"/studies/bench-import/upload/{what}/",
                                           data={"csrfmiddlewaretoken": token}, files={f"{what}-file": (path.name, handle)},
                                           headers={"Referer": f"{base}/studies/bench-import/home/"})
                upload_seconds = time.perf_counter() - started
                assert response.status_code in (200, 302), (response.status_code, response.text[:500])
                after, web_peak = rss_bytes(worker), rss_bytes(worker, "VmHWM")
                job = ImportJob.objects.filter(study__slug="bench-import", kind=what).latest("pk")
                connection.close()
                out = subprocess.run([sys.executable, __file__, "--run-job", str(job.pk)], cwd=REPO, env=env,
                                     capture_output=True, text=True, check=True)
                task = json.loads(out.stdout.strip().splitlines()[-1])
                assert task["status"] == outcome, task
                if outcome == "failed":
                    assert _counts() == counts, "a malformed file changed the database"
                    task["summary"] = f"{task['error']} (database unchanged)"
                rows.append((what, path.stat().st_size, before, after, web_peak, upload_seconds, task))
    finally:
        server.terminate()
        server.wait(timeout=30)
    return rows


def _logged_in(client: httpx.Client, server_pid: int) -> int:
    """Wait for the server, log the bench's researcher in; returns the gunicorn worker's pid."""
    import httpx

    for _ in range(100):
        try:
            client.get("/healthz")
            break
        except httpx.TransportError:
            time.sleep(0.2)
    login = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text).group(1)  # type: ignore[union-attr]
    client.post("/accounts/login/", data={"username": "bench-import", "password": "bench-import-pw",
                                          "csrfmiddlewaretoken": token})
    return _children(server_pid)[0]


def _print_table(rows: list[tuple], threshold: int) -> None:
    print(f"\n{'file':<12} {'size MB':>8} {'web RSS before':>15} {'after':>8} {'web peak':>9} {'upload s':>9} "
          f"{'task base':>10} {'task peak':>10} {'above base':>11} {'/ file':>7} {'task s':>7}")
    for what, size, before, after, web_peak, upload_seconds, task in rows:
        what = what if task["status"] == "done" else f"bad {what}"
        above = task["peak"] - task["baseline"]
        print(f"{what:<12} {size / MB:>8.0f} {before / MB:>14.0f}M {after / MB:>7.0f}M {web_peak / MB:>8.0f}M "
              f"{upload_seconds:>9.1f} {task['baseline'] / MB:>9.0f}M {task['peak'] / MB:>9.0f}M {above / MB:>10.0f}M "
              f"{above / size:>7.2f} {task['seconds']:>7.1f}")
        print(f"             {task['summary']}")
    print(f"\n(web peak = the gunicorn worker's VmHWM after the upload, since it started; threshold "
          f"{threshold} bytes)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--run-job":
        sys.path.insert(0, str(REPO))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
        run_job(int(sys.argv[2]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
