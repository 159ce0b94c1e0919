"""Load test of the rater pages: gunicorn + PostgreSQL, C simulated raters for D seconds (issue 8, item 1).

    .venv/bin/python tests/bench/load_raters.py --raters 128 --seconds 60          # full size
    .venv/bin/python tests/bench/load_raters.py --raters 64 --seconds 30 --think 2  # raters who read

The full-size run also measures latency the way raters meet it (--latency-raters 64 --latency-think 2:
64 more raters who each read for 0-4 s before every submit, after the throughput phase, on a second
study of the same shape): with no reading time at all, p95 is only queueing (128 clients / throughput),
not the server's response time.

The script creates (drops first) the PostgreSQL database --database, migrates it, creates the story
study with --items items (default 1000; 3 raters per item, blocked order, so raters compete for the same seats) and
invites --raters raters through the services. It starts gunicorn on the real `evalhub.wsgi` (gthread:
--workers processes x --threads threads, DEBUG=false, EVALHUB_BENCH_VIEWS=1), then:

1. the ceiling: C clients GET /_bench/bare (full middleware stack, no database) for D seconds, then
   /_bench/lookup/<token> for D seconds (the same plus the one query every rater page starts with: what
   a single ORM query costs against that ceiling);
2. the raters: C clients, one per invitation link, each looping GET its page, parse the form (CSRF
   token, hidden `page` key, radio names), POST an answer to every radio group, follow the redirect.

What counts as a **confirmation**: a POST of page K answered 302 to the rater's own URL, followed by a
GET of that URL answered 200 that shows a page other than K. A POST is applied only while K is the
rater's current page, and the page only moves on once the answers are stored, and one client is the
only user of its link: so a page that moved on is proof that this POST was saved. A 302 whose next
page is still K (nothing saved: stale page) is not one; a 200 to a POST is a refused form; a timeout
or connection error is "in doubt" (it may or may not have been applied).

Afterwards the database must hold exactly the confirmed (rater, item, question) keys and attention
checks: confirmed <= stored <= confirmed + in-doubt, none duplicated, no 5xx. Importable:
tests/reliability/test_load.py runs the short version against the pytest database.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

_PAGE = re.compile(r'name="page" value="([^"]*)"')
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]*)"')
_RADIO = re.compile(r'type="radio" name="([^"]+)"')


@dataclass
class Phase:
    """Latencies (seconds) and statuses of one kind of request during one phase."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)

    def add(self, seconds: float, status: int) -> None:
        self.latencies.append(seconds)
        self.statuses[status] += 1

    def percentile(self, p: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]

    def summary(self, seconds: float) -> dict[str, object]:
        return {
            "requests": len(self.latencies),
            "per_second": round(len(self.latencies) / seconds, 1),
            "p50_ms": round(self.percentile(50) * 1000, 1),
            "p95_ms": round(self.percentile(95) * 1000, 1),
            "p99_ms": round(self.percentile(99) * 1000, 1),
            "statuses": dict(sorted(self.statuses.items())),
        }


@dataclass
class RaterResults:
    submits: Phase = field(default_factory=Phase)  # the POSTs
    pages: Phase = field(default_factory=Phase)  # the GETs
    confirmed_ratings: set[tuple[str, int, str]] = field(default_factory=set)  # (token, item pk, question key)
    confirmed_checks: set[tuple[str, int]] = field(default_factory=set)  # (token, position)
    in_doubt: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # unexpected: a 200 to a POST, a 4xx, a page that did not move
    confirmed_submits: int = 0
    finished: int = 0  # raters who reached "done"


# --- the client ---------------------------------------------------------------------------------------


async def _rater(client: httpx.AsyncClient, token: str, deadline: float, think: float, out: RaterResults,
                 rng: random.Random) -> None:
    url = f"/r/{token}/"
    if think:  # raters who read also arrive at different moments, not all in the same millisecond
        await asyncio.sleep(rng.uniform(0, 2 * think))
    response = await _get(client, url, out)
    while response is not None and time.monotonic() < deadline:
        html = response.text
        page = _PAGE.search(html)
        if page is None:
            if "nothing to rate" in html.lower():  # the wait page: every item it could take is held
                await asyncio.sleep(0.5)
                response = await _get(client, url, out)
                continue
            out.finished += 1
            return
        key = page.group(1)
        radios = sorted(set(_RADIO.findall(html)))
        data = {"csrfmiddlewaretoken": _CSRF.search(html).group(1), "page": key}
        for name in radios:
            data[name] = str(rng.randint(1, 5))
        if think:
            await asyncio.sleep(rng.uniform(0, 2 * think))
        started = time.perf_counter()
        try:
            posted = await client.post(url, data=data)
        except httpx.HTTPError as exc:
            out.in_doubt.append(f"{token[:6]} {key}: {type(exc).__name__}")
            return
        out.submits.add(time.perf_counter() - started, posted.status_code)
        if posted.status_code != 302 or posted.headers.get("location") != url:
            out.refused.append(f"{token[:6]} {key}: POST answered {posted.status_code}")
            return
        response = await _get(client, url, out)
        if response is None:  # the POST was answered 302: saved or stale, we cannot tell without the page
            out.in_doubt.append(f"{token[:6]} {key}: GET after the POST failed")
            return
        next_page = _PAGE.search(response.text)
        if next_page is not None and next_page.group(1) == key:
            out.refused.append(f"{token[:6]} {key}: the page did not move on")
            continue
        out.confirmed_submits += 1
        kind, ident, *_ = key.split(":")
        if kind == "item":
            out.confirmed_ratings.update((token, int(ident), name.removeprefix("q_")) for name in radios)
        elif kind == "check":
            out.confirmed_checks.add((token, int(ident)))


async def _get(client: httpx.AsyncClient, url: str, out: RaterResults) -> httpx.Response | None:
    started = time.perf_counter()
    try:
        response = await client.get(url)
    except httpx.HTTPError as exc:
        out.refused.append(f"GET {url[:9]}: {type(exc).__name__}")
        return None
    out.pages.add(time.perf_counter() - started, response.status_code)
    return response if response.status_code == 200 else None


async def _bare(client: httpx.AsyncClient, url: str, deadline: float, out: Phase) -> None:
    while time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            response = await client.get(url)
        except httpx.HTTPError:
            out.add(time.perf_counter() - started, 599)
            continue
        out.add(time.perf_counter() - started, response.status_code)


def _clients(base_url: str, count: int) -> list[httpx.AsyncClient]:
    # One client (cookie jar, connection) per simulated rater, as browsers are.
    return [httpx.AsyncClient(base_url=base_url, timeout=30, limits=httpx.Limits(max_connections=1))
            for _ in range(count)]


async def _run_bare(base_url: str, urls: list[str], seconds: float) -> Phase:
    """One client per URL, each requesting its URL in a loop for `seconds`."""
    clients, out = _clients(base_url, len(urls)), Phase()
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(_bare(c, url, deadline, out) for c, url in zip(clients, urls, strict=True)))
    await asyncio.gather(*(c.aclose() for c in clients))
    return out


async def _run_raters(base_url: str, tokens: list[str], seconds: float, think: float, seed: int) -> RaterResults:
    clients, out = _clients(base_url, len(tokens)), RaterResults()
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(_rater(c, t, deadline, think, out, random.Random(f"{seed}:{t}"))
                           for c, t in zip(clients, tokens, strict=True)))
    await asyncio.gather(*(c.aclose() for c in clients))
    return out


def run_load(*, base_url: str, tokens: list[str], seconds: float, think: float = 0.0, bare_seconds: float | None = None,
             seed: int = 0) -> dict[str, object]:
    """Both phases against a running server; returns the figures (and the raw results under "_results")."""
    bare_seconds = seconds if bare_seconds is None else bare_seconds
    bare = asyncio.run(_run_bare(base_url, ["/_bench/bare"] * len(tokens), bare_seconds)) if bare_seconds > 0 else Phase()
    lookup = asyncio.run(_run_bare(base_url, [f"/_bench/lookup/{t}" for t in tokens], bare_seconds)) \
        if bare_seconds > 0 else Phase()
    started = time.monotonic()
    results = asyncio.run(_run_raters(base_url, tokens, seconds, think, seed))
    elapsed = time.monotonic() - started
    bare_rate = len(bare.latencies) / bare_seconds if bare_seconds > 0 else float("nan")
    figures = {
        "raters": len(tokens),
        "seconds": round(elapsed, 1),
        "think_s": think,
        "bare": bare.summary(bare_seconds) if bare_seconds > 0 else None,
        "lookup": lookup.summary(bare_seconds) if bare_seconds > 0 else None,
        "lookup_vs_bare": round(len(lookup.latencies) / bare_seconds / bare_rate, 3) if bare_seconds > 0 else None,
        "submit": results.submits.summary(elapsed),
        "page_get": results.pages.summary(elapsed),
        "confirmed_submits": results.confirmed_submits,
        "confirmed_ratings": len(results.confirmed_ratings),
        "confirmed_checks": len(results.confirmed_checks),
        "in_doubt": len(results.in_doubt),
        "refused": results.refused[:10],
        "finished_raters": results.finished,
        "submit_vs_bare": round(results.confirmed_submits / elapsed / bare_rate, 3),
        "rater_requests_vs_bare": round(
            (len(results.submits.latencies) + len(results.pages.latencies)) / elapsed / bare_rate, 3),
        "load_average": os.getloadavg(),
    }
    figures["_results"] = results
    return figures


# --- the database side --------------------------------------------------------------------------------


def seed_study(*, raters: int, items: int, slug: str = "load") -> list[str]:
    """An open story study with `items` items (3 raters each, blocked order) and `raters` invitations."""
    from annotations import services
    from annotations.models import Item, Study
    from annotations.studies import study_create_from_template

    study = study_create_from_template(slug=slug, template="story-likert")
    groups = ["gpt2", "human"]
    Item.objects.bulk_create(
        Item(study=study, external_id=f"s{n}", group=groups[n % 2], position=n,
             fields={"story": f"Story {n}. The lighthouse keeper climbs the steps.", "prompt": f"Prompt {n}."})
        for n in range(items)
    )
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    return [r.token for r in services.invitations_create(study=study, count=raters)]


def check_database(*, tokens: list[str], results: RaterResults) -> dict[str, object]:
    """Stored vs confirmed: every confirmed key stored, nothing stored beyond confirmed + in doubt, no duplicate."""
    from annotations.models import AttentionCheck, HumanRating

    ratings = list(HumanRating.objects.filter(rater__token__in=tokens)
                   .values_list("rater__token", "item_id", "question__key"))
    checks = list(AttentionCheck.objects.filter(assignment__rater__token__in=tokens)
                  .values_list("assignment__rater__token", "position"))
    stored, stored_checks = set(ratings), set(checks)
    return {
        "stored_ratings": len(ratings),
        "duplicates": len(ratings) - len(stored) + len(checks) - len(stored_checks),
        "lost": sorted(results.confirmed_ratings - stored)[:10] + sorted(results.confirmed_checks - stored_checks)[:10],
        "unconfirmed": len(stored - results.confirmed_ratings) + len(stored_checks - results.confirmed_checks),
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(*, database_url: str, port: int, workers: int = 3, threads: int = 4) -> subprocess.Popen:
    """gunicorn on the real WSGI app, production settings except TLS (plain HTTP on localhost)."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DEBUG": "false",
        "SECRET_KEY": "load-test-" + "k" * 50,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "false",
        "SECURE_COOKIES": "false",
        "SECURE_HSTS_SECONDS": "0",
        "EVALHUB_BENCH_VIEWS": "1",
        "LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "evalhub.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--worker-class", "gthread", "--workers", str(workers), "--threads", str(threads),
         "--keep-alive", "30", "--log-level", "warning"],
        cwd=REPO, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited: {process.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/_bench/bare", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop_gunicorn(process)
    raise RuntimeError("gunicorn did not answer /_bench/bare within 30 s")


def stop_gunicorn(process: subprocess.Popen) -> str:
    """Stop it (SIGTERM, then SIGKILL) and return its stderr (tracebacks of 5xx would be there)."""
    process.terminate()
    try:
        _, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return err.decode(errors="replace")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raters", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--bare-seconds", type=float, default=None, help="default: --seconds")
    parser.add_argument("--think", type=float, default=0.0, help="mean seconds a rater reads before each submit")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--latency-raters", type=int, default=64,
                        help="raters of the second phase, who read before submitting (0: no second phase)")
    parser.add_argument("--latency-think", type=float, default=2.0,
                        help="their mean seconds of reading before each submit")
    parser.add_argument("--database", default="evalhub_load")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432")
    args = parser.parse_args()

    database_url = f"{args.pg}/{args.database}"
    import psycopg

    with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{args.database}"')
        conn.execute(f'CREATE DATABASE "{args.database}"')
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)

    tokens = seed_study(raters=args.raters, items=args.items)
    # The readers get a study of their own, the same shape: measured on the first one they would meet its
    # leftovers (an almost full study, 128 claims abandoned mid-item), not the rater page's response time.
    readers = seed_study(raters=args.latency_raters, items=args.items, slug="load-readers") \
        if args.latency_raters else []
    server = start_gunicorn(database_url=database_url, port=(port := free_port()), workers=args.workers,
                            threads=args.threads)
    base_url = f"http://127.0.0.1:{port}"
    try:
        figures = run_load(base_url=base_url, tokens=tokens, seconds=args.seconds, think=args.think,
                           bare_seconds=args.bare_seconds)
        reading = run_load(base_url=base_url, tokens=readers, seconds=args.seconds, think=args.latency_think,
                           bare_seconds=0) if readers else None
    finally:
        log = stop_gunicorn(server)
    phases = [figures]
    figures["database"] = check_database(tokens=tokens, results=figures["_results"])
    if reading is not None:
        phases.append(reading)
        reading["database"] = check_database(tokens=readers, results=reading["_results"])
        figures["readers"] = {key: reading[key] for key in ("raters", "seconds", "think_s", "submit", "page_get",
                                                             "confirmed_submits", "in_doubt", "refused", "database")}
    results = [phase.pop("_results") for phase in phases]
    figures["server"] = f"gunicorn gthread {args.workers} workers x {args.threads} threads, {os.cpu_count()} cores"
    print(json.dumps(figures, indent=2, default=str))
    ok = True
    for phase, result in zip(phases, results, strict=True):
        errors = [s for s in (*result.submits.statuses, *result.pages.statuses) if s >= 500]
        db = phase["database"]
        ok = ok and not errors and not db["lost"] and not db["duplicates"] and db["unconfirmed"] <= len(result.in_doubt)
    if "Traceback" in log:
        print(log[-3000:], file=sys.stderr)
        ok = False
    print("OK: nothing lost, nothing duplicated, no 5xx" if ok else "FAILED", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
