"""Judge secrets and addresses by allow-list (issue 18, finding 1): the one rule in llmjudge/backends/endpoint_rules.py,
reached from the model, the admin, the command, the judge-creation service and the backend at call time."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from llmjudge.backends.endpoint_rules import (
    EndpointRefused,
    check_base_url,
    check_base_url_resolved,
    check_key_variable,
)
from llmjudge.backends.protocol import BackendConfig, BackendError
from llmjudge.backends.registry import backend_for
from llmjudge.models import Judge, JudgeRun
from llmjudge.runs import lifecycle as judging
from llmjudge.services import JudgeSpecError, judge_create

DEPLOYMENT_SECRETS = ["SECRET_KEY", "DATABASE_URL", "REDIS_URL", "POSTGRES_PASSWORD", "FLOWER_PASSWORD",
                      "HUGGING_FACE_HUB_TOKEN", "SECRET_KEY_FILE", "DJANGO_SUPERUSER_PASSWORD", "SMTP_SECRET"]
METADATA_URLS = ["http://169.254.169.254/latest/meta-data/", "http://metadata.google.internal/v1",
                 "http://[fd00:ec2::254]/v1", "http://169.254.1.1:8000/v1", "http://[fe80::1]:8000/v1",
                 "http://[::ffff:169.254.169.254]/v1"]


@pytest.mark.parametrize("name", DEPLOYMENT_SECRETS)
def test_a_deployment_secret_is_refused_even_when_the_operator_lists_it(name, settings):
    settings.JUDGE_KEY_VARIABLES = [name, "*"]
    with pytest.raises(EndpointRefused, match="can never be sent"):
        check_key_variable(name)


def test_a_key_variable_must_be_listed_by_name_or_pattern(settings):
    settings.JUDGE_KEY_VARIABLES = ["OPENAI_API_KEY", "EVALHUB_JUDGE_KEY_*"]
    check_key_variable("OPENAI_API_KEY")
    check_key_variable("EVALHUB_JUDGE_KEY_LAB2")
    check_key_variable("")  # no key: nothing is sent
    with pytest.raises(EndpointRefused, match="JUDGE_KEY_VARIABLES lists OPENAI_API_KEY, EVALHUB_JUDGE_KEY_"):
        check_key_variable("HOME")


@pytest.mark.parametrize("url", METADATA_URLS)
def test_link_local_and_metadata_addresses_are_refused_even_when_listed(url, settings):
    settings.JUDGE_BASE_URL_HOSTS = ["169.254.169.254", "metadata.google.internal", "fd00:ec2::254", "169.254.0.0/16",
                                     "fe80::1", "::ffff:169.254.169.254"]
    with pytest.raises(EndpointRefused, match="link-local and cloud-metadata"):
        check_base_url(url)


def test_a_base_url_host_must_be_listed(settings):
    settings.JUDGE_BASE_URL_HOSTS = ["localhost", "127.0.0.1", "::1", "vllm", "10.1.0.0/16", "*.example.org"]
    for url in ("http://localhost:8000/v1", "http://127.0.0.1:9/v1", "http://[::1]:8000/v1", "http://vllm:8000/v1",
                "http://10.1.2.3:8000/v1", "https://llm.example.org/v1"):
        check_base_url(url)
    for url in ("http://10.2.0.1:5432/", "http://redis:6379/", "http://db:5432/", "http://attacker.test/v1",
                "http://192.168.1.1/"):
        with pytest.raises(EndpointRefused, match="JUDGE_BASE_URL_HOSTS lists"):
            check_base_url(url)


def test_a_listed_name_resolving_to_a_metadata_address_is_refused_at_call_time(settings):
    settings.JUDGE_BASE_URL_HOSTS = ["vllm"]
    with pytest.raises(EndpointRefused, match="resolves to 169.254.169.254"):
        check_base_url_resolved("http://vllm:8000/v1", resolve=lambda host: ["10.0.0.7", "169.254.169.254"])
    check_base_url_resolved("http://vllm:8000/v1", resolve=lambda host: ["10.0.0.7"])  # listed by name: allowed


def test_a_wildcard_host_may_not_resolve_to_an_internal_address(settings):
    settings.JUDGE_BASE_URL_HOSTS = ["*.example.org"]
    with pytest.raises(EndpointRefused, match="internal address 127.0.0.1"):
        check_base_url_resolved("https://llm.example.org/v1", resolve=lambda host: ["127.0.0.1"])
    check_base_url_resolved("https://llm.example.org/v1", resolve=lambda host: ["93.184.215.14"])


@pytest.mark.django_db
@pytest.mark.parametrize(("field", "value"), [("api_key_env", "SECRET_KEY"),
                                              ("base_url", "http://169.254.169.254/v1"),
                                              ("base_url", "http://db:5432/v1")])
def test_the_model_refuses_a_secret_key_variable_and_an_unlisted_address(field, value, researcher):
    judge = Judge(name="leak", backend="openai-compatible", model="m", owner=researcher,
                  **{"base_url": "http://127.0.0.1:8000/v1", field: value})
    with pytest.raises(ValidationError) as caught:
        judge.full_clean()
    assert field in caught.value.message_dict


@pytest.mark.django_db
def test_the_service_and_the_command_refuse_the_secret_key_judge(researcher):
    with pytest.raises(JudgeSpecError, match="--api-key-env: key variable 'SECRET_KEY' is refused"):
        judge_create(name="leak", owner=researcher, backend="openai-compatible", model="m",
                     base_url="http://127.0.0.1:8000/v1", api_key_env="SECRET_KEY")
    with pytest.raises(CommandError, match="SECRET_KEY"):
        call_command("create_judge", "leak", "--backend", "openai-compatible", "--model", "m", "--owner", "owner",
                     "--base-url", "http://127.0.0.1:8000/v1", "--api-key-env", "SECRET_KEY")
    with pytest.raises(CommandError, match="169.254.169.254"):
        call_command("create_judge", "leak", "--backend", "openai-compatible", "--model", "m", "--owner", "owner",
                     "--base-url", "http://169.254.169.254/v1")
    assert not Judge.objects.exists()


def _admin_add(client: Client, **fields: str) -> str:
    data = {"name": "leak", "kind": "plain", "backend": "openai-compatible", "base_url": "http://127.0.0.1:8000/v1",
            "model": "m", "api_key_env": "", "temperature": "1", "top_p": "0.9", "max_tokens": "256", "samples": "1",
            "variant": "original", "mode": "completion", "concurrency": "4", "options": "{}", **fields}
    return client.post("/admin/llmjudge/judge/add/", data).content.decode()


@pytest.mark.django_db
def test_the_admin_refuses_the_secret_key_judge_from_staff_and_from_a_superuser():
    users = get_user_model().objects
    staff = users.create_user(username="staffer", password="pw-staff-123", is_staff=True)
    staff.user_permissions.add(*Permission.objects.filter(codename__in=["add_judge", "change_judge", "view_judge"]))
    admin = users.create_superuser(username="root", password="pw-root-123", email="")
    for user in (staff, admin):
        client = Client()
        client.force_login(user)
        body = _admin_add(client, api_key_env="SECRET_KEY")
        assert "key variable &#x27;SECRET_KEY&#x27; is refused" in body
        body = _admin_add(client, base_url="http://metadata.google.internal/v1")
        assert "link-local and cloud-metadata" in body
    assert not Judge.objects.exists()
    _admin_add(client, api_key_env="OPENAI_API_KEY")  # the control: a listed variable is accepted
    assert Judge.objects.get(name="leak").owner == admin  # and the admin fills in the owner


@pytest.mark.django_db
def test_the_backend_refuses_at_call_time_a_judge_saved_before_the_rule(story_with_items, researcher, openai_server,
                                                                         monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "the-deployments-secret")
    # Written straight into the table, as a judge saved before the rule was: no validator ran.
    judge = Judge.objects.create(name="old", backend="openai-compatible", model="m", owner=researcher, samples=1,
                                 base_url=f"{openai_server.url}/v1", api_key_env="SECRET_KEY")
    run = judging.judge_run_start(study=story_with_items, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and "'SECRET_KEY' is refused" in run.error
    assert openai_server.stats.requests == 0  # nothing was sent, the secret least of all


@pytest.mark.django_db
def test_the_backend_refuses_at_call_time_an_address_saved_before_the_rule(settings):
    with pytest.raises(BackendError, match="link-local and cloud-metadata") as caught:
        backend_for(BackendConfig(backend="openai-compatible", model="m", base_url="http://169.254.169.254/v1"))
    assert caught.value.fatal
    settings.JUDGE_BASE_URL_HOSTS = ["127.0.0.1"]
    with pytest.raises(BackendError, match="JUDGE_BASE_URL_HOSTS lists 127.0.0.1"):
        backend_for(BackendConfig(backend="openai-compatible", model="m", base_url="http://localhost:6379/v1"))


def test_the_backend_does_not_follow_a_redirect_to_an_address_it_never_checked(openai_server):
    """The openai SDK's client follows redirects by default; a listed host answering 307 must not carry the
    call (and its key) elsewhere. Here "elsewhere" is a second local server that counts what reaches it."""
    import asyncio
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from llmjudge.backends.protocol import BackendRequest

    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.send_response(307)
            self.send_header("Location", f"{openai_server.url}/v1/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    redirector = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=redirector.serve_forever, daemon=True).start()
    try:
        backend = backend_for(BackendConfig(backend="openai-compatible", model="m", timeout=2.0,
                                            base_url=f"http://127.0.0.1:{redirector.server_port}/v1"))
        request = BackendRequest(messages=[{"role": "user", "content": "hi"}], model="m", temperature=0, top_p=1,
                                 max_tokens=5, scale=(1, 5))

        async def go():
            try:
                return await backend.complete(request)
            finally:
                await backend.aclose()

        with pytest.raises(BackendError, match="HTTP 307"):
            asyncio.run(go())
    finally:
        redirector.shutdown()
    assert openai_server.stats.requests == 0
