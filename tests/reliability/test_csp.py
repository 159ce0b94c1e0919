"""A Content-Security-Policy on every page: scripts run only from this site or with the response's nonce."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.reliability.test_access_matrix import MATRIX, _request, admin_routes

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


def _nonce(response) -> str:
    policy = response["Content-Security-Policy"]
    assert "object-src 'none'" in policy and "frame-ancestors 'none'" in policy and "form-action 'self'" in policy
    match = re.search(r"script-src 'self' 'nonce-([A-Za-z0-9_-]{20,})'", policy)
    assert match, policy
    assert "unsafe-inline" not in policy.split("script-src", 1)[1].split(";", 1)[0]
    return match.group(1)


@pytest.mark.parametrize("route", sorted(MATRIX))
def test_every_route_answers_with_the_policy_for_owner_and_anonymous(world, route):
    for client in (world.client("owner"), Client()):
        _nonce(_request(client, MATRIX[route], world))


def test_every_admin_page_and_a_404_answer_with_the_policy(world):
    client = world.client("staff")
    for _route, url in admin_routes():
        _nonce(client.get(url))
    _nonce(Client().get("/no/such/page/"))


def test_inline_scripts_carry_the_nonce_of_their_response_and_nonces_are_fresh(world):
    client = world.client("owner")
    pages = [f"/r/{world.rater_a.token}/", f"/llm/runs/{world.run.pk}/"]
    seen = set()
    for url in pages * 2:
        response = client.get(url)
        assert response.status_code == 200, url
        nonce = _nonce(response)
        scripts = re.findall(r"<script([^>]*)>", response.content.decode())
        assert scripts, f"{url} has no inline script to check"
        assert all(f'nonce="{nonce}"' in attributes for attributes in scripts), (url, scripts)
        seen.add(nonce)
    assert len(seen) == 4


def test_no_template_uses_an_inline_event_handler_the_policy_would_block():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "templates"
    handlers = [
        f"{path.relative_to(root)}: {match.group(0)}"
        for path in root.rglob("*.html")
        for match in re.finditer(r"\son[a-z]+\s*=\s*[\"']", path.read_text())
    ]
    assert not handlers, handlers
