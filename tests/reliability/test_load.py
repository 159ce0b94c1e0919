"""The short load test: 16 raters for 5 s against gunicorn + PostgreSQL lose, duplicate and fail nothing.

Only correctness is asserted here (the speed is tests/bench/load_raters.py's job, on an idle machine).
gunicorn is a separate process, so it needs a database server: skipped on SQLite, a failure when
EVALHUB_REQUIRE_SERVICES=1 (the services marker).
"""
from __future__ import annotations

import httpx
import pytest
from django.db import connection
from django.test import Client

from tests.bench.load_raters import check_database, free_port, run_load, seed_study, start_gunicorn, stop_gunicorn

RATERS, SECONDS = 16, 5


@pytest.fixture
def server(transactional_db):
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    url = f"postgresql://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    port = free_port()
    process = start_gunicorn(database_url=url, port=port, workers=2, threads=4)
    yield f"http://127.0.0.1:{port}"
    stop_gunicorn(process)


@pytest.mark.services("postgresql", reason="gunicorn and the test share the database")
def test_every_confirmed_rating_is_stored_once_and_nothing_else_is(server):
    base_url = server
    tokens = seed_study(raters=RATERS, items=200)

    figures = run_load(base_url=base_url, tokens=tokens, seconds=SECONDS, bare_seconds=1)

    results = figures["_results"]
    database = check_database(tokens=tokens, results=results)
    statuses = {**results.submits.statuses, **results.pages.statuses}
    assert not [s for s in statuses if s >= 500], statuses
    assert set(results.submits.statuses) == {302}, results.refused
    assert results.refused == [] and results.in_doubt == []
    assert results.confirmed_submits >= RATERS, "every rater should get at least one page through"
    assert database == {"stored_ratings": len(results.confirmed_ratings), "duplicates": 0, "lost": [],
                        "unconfirmed": 0}


@pytest.mark.services("postgresql", reason="gunicorn and the test share the database")
def test_the_bench_views_answer_only_when_enabled(server):
    base_url = server
    token = seed_study(raters=1, items=1)[0]
    # the server runs with EVALHUB_BENCH_VIEWS=1
    assert httpx.get(f"{base_url}/_bench/bare").text == "ok"
    assert httpx.get(f"{base_url}/_bench/lookup/{token}").text == "ok"
    assert httpx.get(f"{base_url}/_bench/lookup/nosuchtoken").text == "no"


def test_the_bench_views_are_not_served_by_default(db):
    assert Client().get("/_bench/bare").status_code == 404
    assert Client().get("/_bench/lookup/abc").status_code == 404
