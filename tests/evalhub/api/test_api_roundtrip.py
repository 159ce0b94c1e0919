"""The API round trip on PostgreSQL + Redis with a real Celery worker: create a study, upload items,
start a fake-backend run, wait for it, fetch the analysis and the ratings CSV."""
from __future__ import annotations

import io
import os
import signal

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from llmjudge.models import Judge
from tests.support.celery_worker import service_env, start_worker, wait_for


@pytest.mark.services("postgresql", "redis", reason="the test and a real worker share the database and the broker")
def test_api_round_trip_through_a_real_worker(transactional_db, researcher, settings):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    assert api.post("/api/studies/", {"slug": "trip", "template": "story-likert"}, format="json").status_code == 201
    items = io.BytesIO(b"id,group,story,prompt\n"
                       b"a,human,The keeper climbs the steps.,A lighthouse\n"
                       b"b,gpt2,The light is on and the light is on.,A lighthouse\n"
                       b"c,human,She bakes rye for the mayor.,A bakery\n")
    items.name = "items.csv"
    assert api.post("/api/studies/trip/items/", {"file": items}, format="multipart").json() == {"created_items": 3}
    Judge.objects.create(name="offline", backend="fake", model="fake", samples=3, owner=researcher)
    worker = start_worker("roundtrip", service_env(redis_url=settings.REDIS_URL))
    try:
        started = api.post("/api/studies/trip/runs/", {"judge": "offline"}, format="json")
        assert started.status_code == 201, started.content
        run_id = started.json()["id"]

        def finished() -> bool:
            return api.get(f"/api/runs/{run_id}/").json()["status"] == "done"

        wait_for(finished, 60, "the worker to finish the run")
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
    progress = api.get(f"/api/runs/{run_id}/").json()
    assert (progress["total"], progress["done"], progress["pending"], progress["percent"]) == (36, 36, 0, 100.0)
    assert progress["ok"] + progress["unparseable"] + progress["refused"] + progress["failed"] == 36
    analysis = api.get("/api/studies/trip/analysis/").json()
    assert sum(c["n_ratings"] for c in analysis["cells"] if c["pool"] == "offline") == progress["ok"]
    csv_lines = b"".join(api.get("/api/studies/trip/ratings.csv").streaming_content).decode().splitlines()
    assert len(csv_lines) == 1 + 36
    assert sum(",offline,sample-" in line for line in csv_lines) == 36
