"""Log-in limits cannot be dodged: look-alike spellings of a name share its count, and behind a trusted
reverse proxy the client (not the proxy) is counted, while a forged X-Forwarded-For is ignored."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory

from annotations.guards.client_address import client_address
from tests.evalhub.server.test_settings import run_settings

pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.fixture
def owner(db):
    return get_user_model().objects.create_user("resB", password="pw-resB-123", is_staff=True)


def _fail(client: Client, url: str, username: str, **extra: str):
    return client.post(url, {"username": username, "password": "wrong"}, **extra)


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_full_width_and_other_look_alike_names_share_the_plain_names_limit(owner, settings, url):
    settings.LOGIN_RATE_LIMIT = 3
    client = Client()
    # Full-width letters, a ligature-free compatibility form and another case: Django logs all of them in
    # as "resB" (NFKC), so they are one name to the limit.
    for name in ("ｒｅｓB", "resB", "ＲＥＳＢ"):
        assert _fail(client, url, name).status_code == 200
    limited = client.post(url, {"username": "ｒｅｓＢ", "password": "pw-resB-123"})
    assert limited.status_code == 429 and "_auth_user_id" not in client.session
    assert client.post(url, {"username": "resB", "password": "pw-resB-123"}).status_code == 429


def test_a_full_width_name_logs_in_as_the_plain_name_so_the_count_is_the_same_account(owner):
    client = Client()
    assert client.post("/accounts/login/", {"username": "ｒｅｓB", "password": "pw-resB-123"}).status_code == 302
    assert client.session["_auth_user_id"] == str(owner.pk)


def _request(remote: str, forwarded: str | None = None):
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **extra)


def test_without_trusted_proxies_x_forwarded_for_is_ignored(settings):
    settings.TRUSTED_PROXIES = []
    assert client_address(_request("203.0.113.7", "198.51.100.1")) == "203.0.113.7"


def test_behind_a_trusted_proxy_the_rightmost_untrusted_hop_is_the_client(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8", "172.18.0.2"]
    # The client may forge the left part; the proxies append what they saw on the right.
    assert client_address(_request("172.18.0.2", "1.2.3.4, 198.51.100.9, 10.1.1.1")) == "198.51.100.9"
    assert client_address(_request("172.18.0.2", "198.51.100.9")) == "198.51.100.9"
    # A peer that is not a trusted proxy is the client, whatever it forwards.
    assert client_address(_request("203.0.113.7", "198.51.100.9")) == "203.0.113.7"
    # Nothing usable forwarded: the proxy itself.
    assert client_address(_request("10.2.3.4", "")) == "10.2.3.4"
    assert client_address(_request("10.2.3.4", "not-an-ip")) == "10.2.3.4"


def test_behind_a_trusted_proxy_one_client_cannot_lock_out_the_others(owner, settings):
    settings.LOGIN_RATE_LIMIT, settings.LOGIN_RATE_LIMIT_PER_ADDRESS = 2, 3
    settings.TRUSTED_PROXIES = ["172.18.0.2"]
    proxy = {"REMOTE_ADDR": "172.18.0.2"}
    client = Client()
    for name in ("a", "b", "c"):
        _fail(client, "/accounts/login/", name, HTTP_X_FORWARDED_FOR="198.51.100.9", **proxy)
    assert _fail(client, "/accounts/login/", "d", HTTP_X_FORWARDED_FOR="198.51.100.9", **proxy).status_code == 429
    other = Client().post("/accounts/login/", {"username": "resB", "password": "pw-resB-123"},
                          HTTP_X_FORWARDED_FOR="198.51.100.20", **proxy)
    assert other.status_code == 302


def test_bad_trusted_proxies_stop_start_up(tmp_path):
    result = run_settings(tmp_path, TRUSTED_PROXIES="10.0.0.0/8, proxy.local")
    assert result.returncode != 0 and "TRUSTED_PROXIES: 'proxy.local' is not an IP address or network" in result.stderr
