"""Request bodies are bounded before they are read (evalhub/server/body_limit.py): an anonymous 300 MB multipart
POST to a rater URL was read in full (issue 18, finding 3); now it gets 413 from its Content-Length."""
from __future__ import annotations

import http.client
import time
from urllib.parse import urlparse

import pytest
from django.urls import reverse

from annotations.models import HumanRating

HUGE = 300 * 1024 * 1024
MULTIPART = "multipart/form-data; boundary=xyz"


class _Unreadable:
    """A wsgi.input that fails the test if anything reads it."""

    def read(self, *args: object) -> bytes:
        pytest.fail("the body was read")

    readline = read


def _post(client, path: str, length: int, **extra: object):
    return client.generic("POST", path, data=b"x", content_type=MULTIPART,
                          **{"CONTENT_LENGTH": str(length), "wsgi.input": _Unreadable(), **extra})


@pytest.mark.parametrize("where", ["rate", "open_link"])
def test_an_oversized_body_to_a_rater_url_is_refused_before_it_is_read(client, rater, where):
    token = rater.token if where == "rate" else rater.study.open_token
    response = _post(client, reverse(f"annotations:{where}", args=[token]), HUGE)
    assert response.status_code == 413
    assert b"above the limit of 262144 bytes" in response.content
    assert not HumanRating.objects.exists()


def test_a_real_multipart_body_just_above_the_limit_gets_413_and_just_below_does_not(client, rater):
    url = reverse("annotations:rate", args=[rater.token])
    big = client.post(url, {"note": "x" * (256 * 1024)})  # the test client encodes and sends the whole body
    assert big.status_code == 413
    assert int(big.wsgi_request.META["CONTENT_LENGTH"]) > 256 * 1024
    assert client.post(url, {"note": "x" * (255 * 1024)}).status_code != 413


def test_a_logged_in_researcher_gets_the_same_limit_on_rater_urls(client, researcher, rater):
    client.force_login(researcher)
    assert _post(client, reverse("annotations:rate", args=[rater.token]), 300 * 1024).status_code == 413


def test_anonymous_bodies_anywhere_are_bounded_and_the_api_answers_json(client, db):
    assert _post(client, reverse("login"), HUGE).status_code == 413
    response = _post(client, "/api/studies/", HUGE)
    assert response.status_code == 413 and response.json()["detail"].startswith("the request body is 314572800 bytes")


def test_a_researcher_may_upload_up_to_the_import_limit_but_not_beyond(client, researcher, story_study, settings):
    settings.IMPORT_MAX_BYTES = 2 * 1024 * 1024
    client.force_login(researcher)
    upload = reverse("study_upload", args=["story", "items"])
    assert _post(client, upload, settings.IMPORT_MAX_BYTES + 2 * 1024 * 1024).status_code == 413
    # 1 MB, above the anonymous limit: read and handled by the view (400: not a valid multipart form).
    small = client.generic("POST", upload, data=b"x" * (1024 * 1024), content_type="application/octet-stream")
    assert small.status_code == 400


def test_a_rater_form_of_normal_size_still_goes_through(client, rater):
    response = client.post(reverse("annotations:rate", args=[rater.token]), {"note": "x" * 1000})
    assert response.status_code != 413


def test_a_live_server_answers_413_without_waiting_for_the_body(live_server, rater):
    url = urlparse(live_server.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    started = time.monotonic()
    connection.putrequest("POST", f"/r/{rater.token}/")
    connection.putheader("Content-Type", MULTIPART)
    connection.putheader("Content-Length", str(HUGE))
    connection.endheaders()
    connection.send(b"--xyz\r\n" + b"x" * 64 * 1024)  # 64 KB of the announced 300 MB, then wait for the answer
    response = connection.getresponse()
    assert response.status == 413
    assert b"above the limit" in response.read()
    assert time.monotonic() - started < 5
    connection.close()


# --- issue 23, finding 6: the larger limit goes by identity, not by a header ---------------------------------

# Above the anonymous limit and within the default import limit (200 MB), where the header alone lifted the limit.
ATTACK = 150 * 1024 * 1024


@pytest.mark.parametrize("header", ["x", "Token x", "Bearer " + "a" * 40, "Token " + "0" * 40, "Token " + "G" * 40])
def test_an_authorization_header_alone_does_not_lift_the_anonymous_limit(client, db, header):
    # The attack: an anonymous POST to /accounts/login/ with "Authorization: x" uploaded 209 MB (a view that
    # reads the body fails this test: _Unreadable).
    assert _post(client, reverse("login"), ATTACK, HTTP_AUTHORIZATION=header).status_code == 413
    assert _post(client, "/api/studies/", ATTACK, HTTP_AUTHORIZATION=header).status_code == 413


def test_a_valid_api_token_gets_the_import_limit_on_api_paths_only(client, researcher, story_study, settings):
    from rest_framework.authtoken.models import Token

    settings.IMPORT_MAX_BYTES = 2 * 1024 * 1024
    key = Token.objects.create(user=researcher).key
    items = f"/api/studies/{story_study.slug}/items/"
    # 1 MB, above the anonymous limit and within the import limit: read and answered by the API itself.
    body = client.generic("POST", items, data=b"x" * (1024 * 1024), content_type="application/octet-stream",
                          HTTP_AUTHORIZATION=f"Token {key}")
    assert body.status_code not in (401, 413)
    lower = client.generic("POST", items, data=b"x" * (1024 * 1024), content_type="application/octet-stream",
                           HTTP_AUTHORIZATION=f"token {key}")  # DRF accepts the keyword in any case
    assert lower.status_code not in (401, 413)
    assert _post(client, items, settings.IMPORT_MAX_BYTES + 2 * 1024 * 1024,
                 HTTP_AUTHORIZATION=f"Token {key}").status_code == 413
    assert _post(client, reverse("login"), ATTACK, HTTP_AUTHORIZATION=f"Token {key}").status_code == 413
    researcher.is_active = False
    researcher.save()
    assert _post(client, items, 1024 * 1024, HTTP_AUTHORIZATION=f"Token {key}").status_code == 413
