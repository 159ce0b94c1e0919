"""Operators decide who spends which key and reaches which port (issue 23, finding 9): any researcher could name
OPENAI_API_KEY and spend the operator's key, base URLs on 127.0.0.1:6379 and :5432 were accepted, and up to 500
characters of a judge server's error body came back on the run page, to anyone who could read the run.

Grants are owner scopes on JUDGE_KEY_VARIABLES entries (``NAME=user:alice|group:lab-2|superusers``), checked for
the judge's owner at creation and again at call time; JUDGE_BASE_URL_HOSTS entries may name a port."""
from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ImproperlyConfigured

from annotations.models import Item
from evalhub import settings as project_settings
from evalhub.server.envconfig import env_hosts, env_key_grants
from llmjudge.backends.endpoint_rules import EndpointRefused, KeyHolder, check_base_url, check_key_variable
from llmjudge.models import Judge, JudgeRun
from llmjudge.runs import lifecycle as judging
from llmjudge.services import JudgeSpecError, judge_create
from tests.support.openai_server import Behaviour, OpenAIServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def defaults(settings):
    """The production defaults (the suite's autouse fixture opens every loopback port for its test servers)."""
    settings.JUDGE_KEY_VARIABLES = list(project_settings.DEFAULT_JUDGE_KEY_VARIABLES)
    settings.JUDGE_BASE_URL_HOSTS = list(project_settings.DEFAULT_JUDGE_BASE_URL_HOSTS)
    return settings


# --- key grants --------------------------------------------------------------------------------------------


def test_by_default_the_operators_paid_keys_are_the_superusers(defaults, researcher, django_user_model):
    root = django_user_model.objects.create_superuser(username="root", password="pw-root-123")
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "EVALHUB_JUDGE_KEY_LAB2"):
        with pytest.raises(JudgeSpecError, match=f"key variable '{name}' is not granted to owner"):
            judge_create(name=f"j-{name}", owner=researcher, backend="openai", model="m", api_key_env=name)
        judge_create(name=f"j-{name}", owner=root, backend="openai", model="m", api_key_env=name)
    # The shipped vLLM's key is everyone's (a local server, no bill).
    judge_create(name="local", owner=researcher, backend="openai", model="m", api_key_env="VLLM_API_KEY")


def test_an_entry_grants_a_key_to_named_users_and_groups(settings, researcher, other_researcher):
    settings.JUDGE_KEY_VARIABLES = ["EVALHUB_JUDGE_KEY_LAB2=group:lab-2|user:other", "OPENAI_API_KEY=superusers"]
    lab = Group.objects.create(name="lab-2")
    assert not KeyHolder.of(researcher).granted(frozenset({"group:lab-2", "user:other"}))
    with pytest.raises(EndpointRefused, match="not granted to owner: the operator grants keys per user or group"):
        check_key_variable("EVALHUB_JUDGE_KEY_LAB2", KeyHolder.of(researcher))
    check_key_variable("EVALHUB_JUDGE_KEY_LAB2", KeyHolder.of(other_researcher))
    researcher.groups.add(lab)
    check_key_variable("EVALHUB_JUDGE_KEY_LAB2", KeyHolder.of(researcher))
    with pytest.raises(EndpointRefused) as refused:
        check_key_variable("OPENAI_API_KEY", KeyHolder.of(researcher))
    assert "superusers" not in str(refused.value) and "other" not in str(refused.value)  # who holds it: not said


def test_the_admin_checks_the_grant_for_the_judges_owner(defaults, client, django_user_model):
    staffer = django_user_model.objects.create_user(username="staffer", password="pw-staffer-1", is_staff=True)
    staffer.user_permissions.set(Permission.objects.filter(content_type__app_label="llmjudge"))
    client.force_login(staffer)
    form = {"name": "spend", "kind": "plain", "backend": "openai", "model": "m", "temperature": "1.0",
            "top_p": "0.9", "max_tokens": "256", "samples": "1", "variant": "original", "mode": "completion",
            "concurrency": "4", "options": "{}", "api_key_env": "OPENAI_API_KEY"}
    response = client.post("/admin/llmjudge/judge/add/", form)
    assert response.status_code == 200 and "is not granted to staffer" in response.content.decode()
    assert not Judge.objects.filter(name="spend").exists()


@pytest.fixture
def keyed_server(monkeypatch) -> Iterator[OpenAIServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operators-own-key")
    with OpenAIServer(Behaviour()) as server:
        yield server


def test_a_judge_saved_before_the_grant_spends_nothing_at_call_time(settings, story_study, researcher,
                                                                   keyed_server):
    settings.JUDGE_KEY_VARIABLES = list(project_settings.DEFAULT_JUDGE_KEY_VARIABLES)
    Item.objects.create(study=story_study, external_id="s1", group="human", fields={"story": "s", "prompt": "p"})
    # The attack: any researcher named OPENAI_API_KEY and spent the operator's key.
    judge = Judge.objects.create(name="spender", owner=researcher, backend="openai-compatible", model="m",
                                 base_url=f"{keyed_server.url}/v1", api_key_env="OPENAI_API_KEY", samples=1)
    run = judging.judge_run_start(study=story_study, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and "'OPENAI_API_KEY' is not granted to owner" in run.error
    assert keyed_server.stats.requests == 0


def test_a_shared_judge_spends_its_owners_grant_whoever_runs_it(settings, story_study, researcher, other_researcher,
                                                              keyed_server):
    settings.JUDGE_KEY_VARIABLES = ["OPENAI_API_KEY=user:other"]
    Item.objects.create(study=story_study, external_id="s1", group="human", fields={"story": "s", "prompt": "p"})
    judge = judge_create(name="lab", owner=other_researcher, shared=True, backend="openai-compatible", model="m",
                         base_url=f"{keyed_server.url}/v1", api_key_env="OPENAI_API_KEY", samples=1)
    run = judging.judge_run_start(study=story_study, judge=judge, enqueue=False)  # the study is researcher's
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE and keyed_server.stats.requests == 4


# --- ports --------------------------------------------------------------------------------------------------


def test_by_default_only_the_shipped_vllm_port_is_reachable(defaults):
    for url in ("http://vllm:8000/v1", "http://127.0.0.1:8000/v1", "http://localhost:8000/v1", "http://[::1]:8000/v1"):
        check_base_url(url)
    # The attack: base URLs on the Redis and PostgreSQL ports of the same host were accepted.
    for url in ("http://127.0.0.1:6379/v1", "http://127.0.0.1:5432/v1", "http://localhost/v1", "http://vllm:6379/",
                "https://vllm/v1", "http://[::1]:5432/v1"):
        with pytest.raises(EndpointRefused, match="port .* is not allowed: JUDGE_BASE_URL_HOSTS lists vllm:8000"):
            check_base_url(url)


def test_host_entries_may_name_a_port_or_allow_every_port(settings):
    settings.JUDGE_BASE_URL_HOSTS = ["gpu-box", "10.0.5.0/24:8000", "[fd00::5]:8080", "*.example.org:443", "::1"]
    for url in ("http://gpu-box:1234/v1", "http://10.0.5.17:8000/v1", "http://[fd00::5]:8080/v1",
                "https://llm.example.org/v1", "http://[::1]:6379/v1"):
        check_base_url(url)
    for url in ("http://10.0.5.17:5432/v1", "http://[fd00::5]:8000/v1", "http://llm.example.org/v1",
                "http://gpu-box:99999/v1"):
        with pytest.raises(EndpointRefused):
            check_base_url(url)


def test_malformed_grants_and_hosts_stop_start_up_naming_the_variable(monkeypatch):
    for value in ("OPENAI_API_KEY=everyone", "OPENAI API KEY", "X=user:", "X=group:a|boss"):
        monkeypatch.setenv("JUDGE_KEY_VARIABLES", value)
        with pytest.raises(ImproperlyConfigured, match="JUDGE_KEY_VARIABLES"):
            env_key_grants("JUDGE_KEY_VARIABLES", [])
    for value in ("vllm:0", "vllm:65536", "vllm:http", "[::1]:x"):
        monkeypatch.setenv("JUDGE_BASE_URL_HOSTS", value)
        with pytest.raises(ImproperlyConfigured, match="JUDGE_BASE_URL_HOSTS"):
            env_hosts("JUDGE_BASE_URL_HOSTS", [])


# --- error bodies -------------------------------------------------------------------------------------------

BODY = "server-secret-words " * 30  # 600 characters of what the judge's server says


class _Refusing(http.server.BaseHTTPRequestHandler):
    status = 401
    body = BODY

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        payload = json.dumps({"error": {"message": self.body, "type": "invalid_request_error"}}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def refusing_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_judge_servers_error_body_is_cut_and_shown_to_the_judges_owner_only(story_study, researcher,
                                                                            refusing_server, client,
                                                                            django_user_model):
    Item.objects.create(study=story_study, external_id="s1", group="human", fields={"story": "s", "prompt": "p"})
    judge = Judge.objects.create(name="refused", owner=researcher, backend="openai-compatible", model="m",
                                 base_url=refusing_server, samples=1)
    run = judging.judge_run_start(study=story_study, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED
    # The SDK's words ("Error code: 401 - ") and the body, cut to 200 characters after the status.
    assert run.error.startswith("HTTP 401: Error code: 401 - server-secret-words")
    assert len(run.error) == len("HTTP 401: ") + 200

    client.force_login(researcher)
    assert "server-secret-words" in client.get(f"/llm/runs/{run.pk}/").content.decode()
    viewer = django_user_model.objects.create_user(username="viewer", password="pw-viewer-1", is_staff=True)
    viewer.user_permissions.set(Permission.objects.filter(codename__in=["view_all_studies", "view_judgerun",
                                                                        "view_llmrating"]))
    root = django_user_model.objects.create_superuser(username="root", password="pw-root-123")
    for user in (viewer, root):
        client.force_login(user)
        for url in (f"/llm/runs/{run.pk}/", f"/llm/runs/{run.pk}/progress.json", f"/api/runs/{run.pk}/",
                    f"/admin/llmjudge/judgerun/{run.pk}/change/"):
            page = client.get(url).content.decode()
            assert "server-secret-words" not in page, (user.username, url)
            assert "HTTP 401 (the server&#x27;s message is shown to the judge&#x27;s owner only)" in page or \
                "HTTP 401 (the server's message is shown to the judge's owner only)" in page, (user.username, url)


def test_a_rating_that_ended_on_an_error_body_shows_it_to_the_judges_owner_only(story_study, researcher,
                                                                              refusing_server, client,
                                                                              django_user_model, monkeypatch):
    monkeypatch.setattr(_Refusing, "status", 400)  # permanent: the rating ends in error, the run goes on
    Item.objects.create(study=story_study, external_id="s1", group="human", fields={"story": "s", "prompt": "p"})
    judge = Judge.objects.create(name="refused", owner=researcher, backend="openai-compatible", model="m",
                                 base_url=refusing_server, samples=1)
    run = judging.judge_run_start(study=story_study, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    rating = run.ratings.first()
    assert rating.status == "error" and rating.rationale.startswith("HTTP 400: Error code: 400 - server-secret")
    assert len(rating.rationale) == len("HTTP 400: ") + 200
    url = f"/admin/llmjudge/llmrating/{rating.pk}/change/"
    root = django_user_model.objects.create_superuser(username="root", password="pw-root-123")
    client.force_login(root)
    page = client.get(url).content.decode()
    assert "server-secret-words" not in page and "HTTP 400 (the server&#x27;s message is shown" in page
    researcher.is_staff = True
    researcher.save()
    researcher.user_permissions.set(Permission.objects.filter(codename="view_llmrating"))
    client.force_login(researcher)
    assert "server-secret-words" in client.get(url).content.decode()
    exported = client.get(f"/studies/{story_study.slug}/export/ratings.csv")
    text = b"".join(exported.streaming_content).decode() if exported.streaming else exported.content.decode()
    assert "HTTP 400 (the server's message is shown to the judge's owner only)" in text
    assert "server-secret-words" not in text  # a file that travels carries the status alone


def test_an_error_body_with_line_breaks_is_hidden_whole_and_not_searchable(story_study, researcher, refusing_server,
                                                                           client, django_user_model, monkeypatch):
    # Review of issue 23: the pattern hid only the first line; an admin search could guess hidden words.
    monkeypatch.setattr(_Refusing, "status", 400)
    monkeypatch.setattr(_Refusing, "body", "denied\nline-two-secret\r\nline-three-secret")
    Item.objects.create(study=story_study, external_id="s1", group="human", fields={"story": "s", "prompt": "p"})
    judge = Judge.objects.create(name="refused", owner=researcher, backend="openai-compatible", model="m",
                                 base_url=refusing_server, samples=1)
    run = judging.judge_run_start(study=story_study, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    rating = run.ratings.first()  # the study's questions, each ended on the same error body
    assert rating.status == "error" and "\n" not in rating.rationale and "line-two-secret" in rating.rationale
    root = django_user_model.objects.create_superuser(username="root", password="pw-root-123")
    client.force_login(root)
    for url in (f"/admin/llmjudge/llmrating/{rating.pk}/change/", f"/llm/runs/{run.pk}/",
                f"/studies/{story_study.slug}/export/ratings.csv"):
        response = client.get(url)
        text = b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()
        assert "line-two-secret" not in text and "line-three-secret" not in text, url
    searched = client.get("/admin/llmjudge/llmrating/", {"q": "line-two-secret"}).content.decode()
    assert "0 results (" in searched and ">4 total<" in searched  # found by nothing, though four exist


def test_errors_stored_before_the_fix_are_hidden_to_the_end_and_entry_by_entry():
    from llmjudge.selectors import history_words_hidden, server_words_hidden

    legacy = "HTTP 400: denied\nline-two-secret"
    assert server_words_hidden(legacy) == "HTTP 400 (the server's message is shown to the judge's owner only)"
    history = [{"attempt": 1, "error": legacy}, {"attempt": 2, "error": "timeout"}, "not a dict"]
    shown = json.loads(history_words_hidden(history))
    assert "line-two-secret" not in json.dumps(shown)
    assert shown[1] == {"attempt": 2, "error": "timeout"} and shown[2] == "not a dict"
