"""The security promises: inert HTML, CSV formula injection, API keys, invitation tokens, login rate limit."""
from __future__ import annotations

import csv
import inspect
import io
import json
import logging
import math
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from annotations import models as annotation_models
from annotations.models import HumanRating, Item, Rater, Study
from evalhub.imports.exports import TABLE_COLUMNS
from llmjudge.models import Judge, JudgeRun, LLMRating
from llmjudge.runs import lifecycle as judging
from tests.evalhub.server.test_settings import run_settings
from tests.reliability.access import RAW_XSS_MARKERS, XSS, World
from tests.reliability.test_access_matrix import MATRIX
from tests.support.openai_server import Behaviour, OpenAIServer
from tests.support.raterkit import page_key
from tests.support.snapshots import database_snapshot

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]

ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
FORMULAS = ["=1+2", "+1+2", "-1+2", "@SUM(A1)", "\t=1+2", "\r=1+2"]
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def _body(response) -> str:
    return b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()


# ---------------------------------------------------------------------------------------------------------
# HTML and JavaScript in any text a user or a model can write are shown as text


@pytest.fixture
def hostile(world) -> World:
    """Markup wherever text comes from outside: story, title, group, rater id, comments, judge name, LLM answer."""
    groups = [f"{XSS}g", f"{XSS}h"]
    Study.objects.filter(pk=world.study.pk).update(title=XSS, groups=groups)
    for n, item in enumerate(world.study.items.order_by("position")):
        Item.objects.filter(pk=item.pk).update(group=groups[n % 2])
    Rater.objects.filter(pk=world.rater_b.pk).update(external_id=XSS)
    HumanRating.objects.filter(rater=world.rater_b).update(comment=XSS)
    Judge.objects.filter(pk=world.judge.pk).update(name=XSS)
    LLMRating.objects.filter(run=world.run).update(raw=XSS, rationale=XSS)
    world.study.refresh_from_db()
    return world


def _pages(w: World) -> dict[str, str]:
    item = w.study.items.order_by("position").first()
    rating = LLMRating.objects.filter(run=w.run).first()
    return {
        "rater page": f"/r/{w.rater_a.token}/",
        "home": "/",
        "dashboard": f"/studies/{w.study.slug}/",
        "raters page": f"/studies/{w.study.slug}/raters/",
        "judge index": "/llm/",
        "study runs": f"/llm/studies/{w.study.slug}/",
        "judge preview": f"/llm/studies/{w.study.slug}/preview/?item={item.pk}&judge={w.judge.pk}",
        "run detail": f"/llm/runs/{w.run.pk}/",
        "admin study list": "/admin/annotations/study/",
        "admin study change": f"/admin/annotations/study/{w.study.pk}/change/",
        "admin item list": "/admin/annotations/item/",
        "admin item change": f"/admin/annotations/item/{item.pk}/change/",
        "admin rater list": "/admin/annotations/rater/",
        "admin rating list": "/admin/annotations/humanrating/",
        "admin judge list": "/admin/llmjudge/judge/",
        "admin run list": "/admin/llmjudge/judgerun/",
        "admin llm rating change": f"/admin/llmjudge/llmrating/{rating.pk}/change/",
    }


def test_markup_in_every_text_is_escaped_on_every_html_page(hostile):
    staff = hostile.client("staff")
    shown_escaped = []
    for name, url in _pages(hostile).items():
        response = staff.get(url)
        assert response.status_code == 200, f"{name}: {response.status_code}"
        html = response.content.decode()
        assert not [m for m in RAW_XSS_MARKERS if m in html], f"{name} renders markup from data"
        if ESCAPED in html or ESCAPED.replace("&#x27;", "'") in html:
            shown_escaped.append(name)
    # The test means something only if the hostile text was on the pages, escaped.
    for name in ("rater page", "home", "dashboard", "raters page", "judge preview", "run detail",
                 "admin study list", "admin item change", "admin rating list", "admin llm rating change"):
        assert name in shown_escaped, f"{name} did not show the hostile text at all"


def test_json_and_csv_are_served_as_data_not_html(hostile):
    staff = hostile.client("staff")
    for url in (f"/studies/{hostile.study.slug}/analysis.json", f"/llm/runs/{hostile.run.pk}/progress.json",
                f"/api/studies/{hostile.study.slug}/", "/api/studies/"):
        response = staff.get(url)
        assert response.status_code == 200 and response["Content-Type"].startswith("application/json"), url
        json.loads(response.content)
    for url in (f"/studies/{hostile.study.slug}/export/ratings.csv", f"/studies/{hostile.study.slug}/export/all.csv"):
        response = staff.get(url)
        assert response["Content-Type"].startswith("text/csv") and "attachment" in response["Content-Disposition"]
    assert staff.get("/").headers["X-Content-Type-Options"] == "nosniff"  # no sniffing a JSON body as HTML


# ---------------------------------------------------------------------------------------------------------
# CSV formula injection


@pytest.fixture
def formulas(world) -> World:
    groups = ["=grp+1", "@grp"]
    Study.objects.filter(pk=world.study.pk).update(groups=groups)
    for n, item in enumerate(world.study.items.order_by("position")):
        Item.objects.filter(pk=item.pk).update(group=groups[n % 2], external_id=f"{FORMULAS[n]}item")
    Rater.objects.filter(pk=world.rater_b.pk).update(external_id="-rater-b")
    for n, rating in enumerate(HumanRating.objects.filter(rater=world.rater_b).order_by("pk")):
        HumanRating.objects.filter(pk=rating.pk).update(comment=FORMULAS[n % len(FORMULAS)] + "cmd")
    for n, rating in enumerate(LLMRating.objects.filter(run=world.run).order_by("pk")):
        LLMRating.objects.filter(pk=rating.pk).update(rationale=FORMULAS[n % len(FORMULAS)] + "cmd")
    Judge.objects.filter(pk=world.judge.pk).update(name="+judge")
    return world


def _assert_no_formula(text: str, where: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) > 1, f"{where} is empty"
    for row in rows:
        for cell in row:
            if cell.startswith(DANGEROUS):
                try:  # numbers we compute ourselves (a negative alpha or tau) stay numbers
                    assert math.isfinite(float(cell))
                except ValueError:
                    pytest.fail(f"{where}: cell {cell!r} would be a formula in a spreadsheet")
    return rows


def test_every_csv_export_neutralises_formulas(formulas, tmp_path):
    staff = formulas.client("staff")
    slug = formulas.study.slug
    # The majority table exists for pairwise studies only (tests/evalhub/analysis/test_pairwise_analysis.py), and
    # position_bias for pairwise runs with a swap share (tests/llmjudge/runs/test_swapping.py).
    tables = [t for t in TABLE_COLUMNS if t not in ("majority", "position_bias")]
    exports = {f"{t}.csv": _body(staff.get(f"/studies/{slug}/export/{t}.csv")) for t in [*tables, "all"]}
    exports["ratings.csv"] = _body(staff.get(f"/studies/{slug}/export/ratings.csv"))
    exports["admin action"] = _body(staff.post("/admin/annotations/study/", {
        "action": "export_ratings_csv", "_selected_action": [formulas.study.pk]}))
    for what in ("ratings", "tables"):
        out = tmp_path / f"{what}.csv"
        call_command("export", slug, "--what", what, "--out", str(out))
        exports[f"manage.py export --what {what}"] = out.read_text(encoding="utf-8")
    for where, text in exports.items():
        _assert_no_formula(text, where)
    ratings = exports["ratings.csv"]
    for formula in FORMULAS:  # the hostile values are exported, with a leading quote
        assert f"'{formula}cmd" in ratings.replace("\r\n", "\n") or formula.startswith("\r")
    assert "'-rater-b" in ratings and "'=grp+1" in ratings and "'+judge" in ratings
    assert "'=grp+1" in exports["rater_means.csv"]


# ---------------------------------------------------------------------------------------------------------
# API keys


SECRET = "sk-evalhub-secret-key-q7-0123456789abcdef"


def test_an_api_key_is_never_stored_shown_exported_or_logged(world, monkeypatch, settings, caplog, capsys):
    settings.LLM_BACKOFF_BASE, settings.LLM_BACKOFF_CAP, settings.LLM_TIMEOUT = 0.02, 0.2, 2
    settings.JUDGE_KEY_VARIABLES = ["EVALHUB_JUDGE_KEY_*=user:owner"]  # granted to the judge's owner
    monkeypatch.setenv("EVALHUB_JUDGE_KEY_TEST_Q7", SECRET)
    caplog.set_level(logging.DEBUG)
    for name in ("openai", "httpx", "httpcore", "llmjudge", "celery"):
        caplog.set_level(logging.DEBUG, logger=name)
    with OpenAIServer(Behaviour()) as server:
        judge = Judge.objects.create(name="keyed", backend=Judge.Backend.OPENAI_COMPATIBLE, model="test-model",
                                     base_url=f"{server.url}/v1", api_key_env="EVALHUB_JUDGE_KEY_TEST_Q7", samples=1,
                                     owner=world.owner)
        run = judging.judge_run_start(study=world.study, judge=judge, enqueue=False)
        judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE and run.ratings.filter(status="ok").exists()

    assert SECRET not in repr(database_snapshot()), "the key reached the database"
    staff, owner = world.client("staff"), world.client("owner")
    urls = [row.url(world) for row in MATRIX.values() if row.method == "GET"]
    urls += [f"/llm/runs/{run.pk}/", f"/llm/runs/{run.pk}/progress.json", f"/studies/{world.study.slug}/export/all.csv",
             f"/llm/studies/{world.study.slug}/preview/?judge={judge.pk}", f"/admin/llmjudge/judge/{judge.pk}/change/",
             f"/admin/llmjudge/judgerun/{run.pk}/change/", "/admin/llmjudge/llmrating/", "/admin/llmjudge/judge/",
             f"/admin/llmjudge/llmrating/{run.ratings.first().pk}/change/", "/api/studies/"]
    for client in (staff, owner):
        for url in urls:
            assert SECRET not in _body(client.get(url)), url
    assert "EVALHUB_JUDGE_KEY_TEST_Q7" in _body(staff.get(f"/admin/llmjudge/judge/{judge.pk}/change/"))  # the name only
    captured = capsys.readouterr()
    assert SECRET not in caplog.text + captured.out + captured.err


def test_a_missing_key_fails_the_run_naming_the_variable_not_a_value(world, monkeypatch, settings):
    monkeypatch.delenv("EVALHUB_JUDGE_KEY_UNSET_Q7", raising=False)
    judge = Judge.objects.create(name="unkeyed", backend=Judge.Backend.OPENAI_COMPATIBLE, model="m",
                                 base_url="http://127.0.0.1:9/v1", api_key_env="EVALHUB_JUDGE_KEY_UNSET_Q7", samples=1)
    run = judging.judge_run_start(study=world.study, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and "EVALHUB_JUDGE_KEY_UNSET_Q7" in run.error


# ---------------------------------------------------------------------------------------------------------
# Invitation tokens


def test_invitation_and_open_link_tokens_carry_at_least_128_random_bits():
    source = inspect.getsource(annotation_models.new_token)
    assert "secrets.token_urlsafe(24)" in source  # the OS CSPRNG; 24 bytes = 192 bits
    tokens = {annotation_models.new_token() for _ in range(2000)}
    assert len(tokens) == 2000
    assert all(len(t) == 32 and set(t) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
               for t in tokens)
    assert 6 * 32 >= 128
    fields = {f.name: f for f in Rater._meta.fields}
    assert fields["token"].default is annotation_models.new_token and not fields["token"].editable
    assert {f.name: f for f in Study._meta.fields}["open_token"].default is annotation_models.new_token


def test_a_revoked_link_answers_410_to_get_and_post_and_changes_nothing(world):
    client = Client()
    url = f"/r/{world.rater_a.token}/"
    page = client.get(url)
    # The token is in the URL: it must not travel in a Referer to another site (e.g. the completion redirect).
    assert page["Referrer-Policy"] == "same-origin"
    key = page_key(page.content.decode())
    world.client("owner").post(f"/studies/{world.study.slug}/raters/{world.rater_a.pk}/revoke/")
    before = database_snapshot()
    assert client.get(url).status_code == 410
    assert client.post(url, {"page": key, "q_grammaticality": "3"}).status_code == 410
    assert database_snapshot() == before


def test_a_revoked_open_link_participant_gets_410_and_unknown_tokens_404(world):
    study = world.study
    client = Client()
    response = client.get(f"/s/{study.open_token}/?PROLIFIC_PID=p-1")
    assert response.status_code == 302
    rater = Rater.objects.get(study=study, external_id="p-1")
    world.client("owner").post(f"/studies/{study.slug}/raters/{rater.pk}/revoke/")
    assert client.get(f"/s/{study.open_token}/?PROLIFIC_PID=p-1").status_code == 410
    assert client.post(f"/s/{study.open_token}/?PROLIFIC_PID=p-1").status_code == 410
    assert client.get(f"/r/{rater.token}/").status_code == 410
    assert client.get("/r/not-a-token/").status_code == 404
    assert client.post("/r/not-a-token/", {"page": "x"}).status_code == 404
    world.client("owner").post(f"/studies/{study.slug}/raters/open-link/", {"enabled": "0"})
    assert client.get(f"/s/{study.open_token}/").status_code == 404
    assert client.post(f"/s/{study.open_token}/?PROLIFIC_PID=p-2").status_code == 404
    assert not Rater.objects.filter(external_id="p-2").exists()
    imported = Rater.objects.create(study=study, source=Rater.Source.IMPORTED)
    assert client.get(f"/r/{imported.token}/").status_code == 404  # imported raters have no page


# ---------------------------------------------------------------------------------------------------------
# Login rate limit


def _fail(client: Client, url: str, username: str = "owner", **extra: str):
    return client.post(url, {"username": username, "password": "wrong"}, **extra)


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_failed_logins_beyond_the_limit_get_429_even_with_the_right_password(world, settings, url):
    settings.LOGIN_RATE_LIMIT = 3
    client = Client()
    for _ in range(3):
        assert _fail(client, url).status_code == 200
    limited = client.post(url, {"username": "OWNER ", "password": "pw-owner-123"})
    assert limited.status_code == 429 and "Too many failed log-ins" in limited.content.decode()
    assert limited["Retry-After"] == "900"
    assert "_auth_user_id" not in client.session
    # Another name, or the same name from another address, is not affected.
    assert _fail(client, url, "other").status_code == 200
    assert _fail(client, url, REMOTE_ADDR="10.0.0.9").status_code == 200


def test_a_successful_login_clears_the_count_and_the_window_ends(world, settings):
    settings.LOGIN_RATE_LIMIT, settings.LOGIN_RATE_LIMIT_WINDOW_SECONDS = 2, 1
    client = Client()
    _fail(client, "/accounts/login/")
    assert client.post("/accounts/login/", {"username": "owner", "password": "pw-owner-123"}).status_code == 302
    client = Client()
    _fail(client, "/accounts/login/")
    _fail(client, "/accounts/login/")
    assert _fail(client, "/accounts/login/").status_code == 429
    time.sleep(1.2)
    assert client.post("/accounts/login/", {"username": "owner", "password": "pw-owner-123"}).status_code == 302


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_one_address_trying_many_names_is_stopped_and_a_success_does_not_reset_it(world, settings, url):
    settings.LOGIN_RATE_LIMIT, settings.LOGIN_RATE_LIMIT_PER_ADDRESS = 3, 4
    get_user_model().objects.create_user("keeper", password="pw-keeper-123", is_staff=True)  # both pages
    right = {"username": "keeper", "password": "pw-keeper-123"}
    client = Client()
    for name in ("a", "b", "c"):  # one failure per name: the per-name limit never trips
        assert _fail(client, url, name).status_code == 200
    # a valid account logging in from that address does not clear the address's count
    assert client.post(url, right).status_code == 302
    client = Client()
    assert _fail(client, url, "d").status_code == 200  # the 4th failure from the address
    limited = client.post(url, right)
    assert limited.status_code == 429 and "_auth_user_id" not in client.session
    assert _fail(client, url, "e").status_code == 429
    # other addresses are not affected
    assert client.post(url, right, REMOTE_ADDR="10.0.0.9").status_code == 302


def test_researchers_who_are_not_staff_log_in_on_their_own_page_and_reach_their_dashboard(world):
    client = Client()
    response = client.get(f"/studies/{world.study.slug}/")
    assert response.status_code == 302 and response["Location"] == f"/accounts/login/?next=/studies/{world.study.slug}/"
    page = client.get(response["Location"])
    assert page.status_code == 200 and 'name="password"' in page.content.decode()
    response = client.post("/accounts/login/", {"username": "owner", "password": "pw-owner-123",
                                                "next": f"/studies/{world.study.slug}/"})
    assert response.status_code == 302 and response["Location"] == f"/studies/{world.study.slug}/"
    assert client.get(response["Location"]).status_code == 200
    evil = Client().post("/accounts/login/", {"username": "owner", "password": "pw-owner-123",
                                              "next": "https://evil.example/"})
    assert evil["Location"] == "/"  # no open redirect


@pytest.mark.parametrize(("env", "message"), [
    ({"LOGIN_RATE_LIMIT": "five"}, "LOGIN_RATE_LIMIT='five' is not an integer"),
    ({"LOGIN_RATE_LIMIT": "0"}, "LOGIN_RATE_LIMIT=0 must be at least 1"),
    ({"LOGIN_RATE_LIMIT_WINDOW_SECONDS": "-1"}, "LOGIN_RATE_LIMIT_WINDOW_SECONDS=-1 must be at least 1"),
    ({"LOGIN_RATE_LIMIT_PER_ADDRESS": "0"}, "LOGIN_RATE_LIMIT_PER_ADDRESS=0 must be at least 1"),
])
def test_bad_rate_limit_settings_stop_start_up(tmp_path, env, message):
    result = run_settings(tmp_path, **env)
    assert result.returncode != 0 and message in result.stderr


# ---------------------------------------------------------------------------------------------------------
# Holes found by this suite (500s from hand-edited URLs; PostgreSQL refuses NUL bytes in a query)


@pytest.mark.parametrize(("method", "url", "status"), [
    ("get", "/r/%00/", 404),
    ("post", "/r/%00/", 404),
    ("get", "/r/" + "a" * 65 + "/", 404),
    ("get", "/s/%00/", 404),
    ("post", "/s/%00/", 404),
    ("get", "/s/OPEN/?PROLIFIC_PID=p%00", 400),
    ("post", "/s/OPEN/?PROLIFIC_PID=p&SESSION_ID=%00", 400),
])
def test_hand_edited_rater_links_answer_4xx_not_500(world, method, url, status):
    before = database_snapshot()
    response = getattr(Client(), method)(url.replace("OPEN", world.study.open_token))
    assert response.status_code == status
    assert database_snapshot() == before


@pytest.mark.parametrize("query", ["item=abc", "item=%00", "item=²", "item=99999999999999999999", "judge=abc"])
def test_the_judge_preview_ignores_a_bad_item_or_judge_in_the_query(world, query):
    response = world.client("owner").get(f"/llm/studies/{world.study.slug}/preview/?{query}")
    assert response.status_code == 200
