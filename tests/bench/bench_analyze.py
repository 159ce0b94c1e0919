"""Time `analyze` and the dashboard on a study of 1,000,000 ratings (a script, not a test).

Run: .venv/bin/python tests/bench/bench_analyze.py [--rebuild]
     DATABASE_URL=postgresql://postgres@127.0.0.1:5432/bench .venv/bin/python tests/bench/bench_analyze.py

Each backend runs in a child process: SQLite always (a file under var/bench/), PostgreSQL too when
DATABASE_URL is set (the database is created if missing; the study "bench-1m" in it is replaced).
The study: the paper's story design (4 questions, groups human/gpt2), 50,000 items, 3 human raters
rating everything (600,000 ratings) and one judge run with 2 samples (400,000 ratings, about 1 %
of them refused, so not counted). Budgets (issue 5): analyze < 3 s and no more than about twice the
baseline, which is the same two queries fetched without any statistics; the dashboard < 3 s.

The cache (issue 22): what the dashboard's cache stores, timed on this study's result, both ways the cache
could hold it: the typed result pickled (what ``study_analysis_cached`` stores), or its JSON pickled and rebuilt
into the types on a hit (``rebuilt_from_json`` below, written here only to be measured).

Start-up (issue 22): django.setup() and `manage.py help` in fresh processes (median and best of 7, after a
first run that writes the bytecode caches), and `manage.py analyze bench-1m --format json` as a whole process
(5 runs, in turns with the in-process figures). Budgets: start-up (median) <= 0.5 s; the whole analyze no more
than twice the baseline plus `manage.py help`, median against medians and best against bests, each printed as a
ratio to its budget, in wall time (the budget) and in CPU time (what a loaded machine changes least).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import io
import os
import pickle
import resource
import statistics
import subprocess
import sys
import time
import types
import typing
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
N_ITEMS = 50_000
HUMAN_RATERS = 3
SAMPLES = 2
SLUG = "bench-1m"
STARTUP_RUNS = 7
REPEATS = 5  # of each in-process figure and of the whole `manage.py analyze`, in turns
SETUP = [sys.executable, "-c", "import django; django.setup()"]
HELP = [sys.executable, str(REPO / "manage.py"), "help"]
ANALYZE = [sys.executable, str(REPO / "manage.py"), "analyze", SLUG, "--format", "json"]


def in_turns(repeats: int, *functions) -> list[list[tuple[float, float]]]:
    """(wall, CPU) seconds of every run of each function, run in turns so that load from other processes on a
    shared machine hits all of them alike."""
    runs: list[list[tuple[float, float]]] = [[] for _ in functions]
    for _ in range(repeats):
        for k, function in enumerate(functions):
            wall, cpu = time.perf_counter(), time.process_time()
            result = function()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            # A function run as a child process returns the child's own (wall, CPU).
            runs[k].append(result if isinstance(result, tuple) else (wall, cpu))
    return runs


def best_of(repeats: int, *functions) -> list[tuple[float, float]]:
    """Best (wall, CPU) seconds of each function (``in_turns``)."""
    return [(min(w for w, _ in runs), min(c for _, c in runs)) for runs in in_turns(repeats, *functions)]


def medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


@functools.cache
def _hints(kind: type) -> dict[str, typing.Any]:
    return typing.get_type_hints(kind)


def rebuilt_from_json(kind: typing.Any, value: typing.Any) -> typing.Any:
    """The analysis JSON (or a part of it) rebuilt into the result types ``kind``: the cache's other option."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if dataclasses.is_dataclass(kind):
        hints = _hints(kind)
        fields = {}
        for f in dataclasses.fields(kind):
            if "flatten" in f.metadata:  # a statistic's own result, its keys spread in the row
                nested = {g.name: value.get(g.name) for g in dataclasses.fields(hints[f.name])}
                for key in f.metadata["flatten"]:  # left out of the JSON: a Welch test's reason, in every note
                    nested[key] = next(iter((value.get("notes") or {}).values()), None)
                fields[f.name] = rebuilt_from_json(hints[f.name], nested)
            else:
                fields[f.name] = rebuilt_from_json(hints[f.name], value.get(f.name))
        return kind(**fields)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        return rebuilt_from_json(next(a for a in args if a is not type(None)), value)
    if origin is tuple:
        item_kinds = [args[0]] * len(value) if len(args) == 2 and args[1] is Ellipsis else list(args)
        return tuple(rebuilt_from_json(k, v) for k, v in zip(item_kinds, value, strict=True))
    if origin is dict:
        return {k: rebuilt_from_json(args[1], v) for k, v in value.items()}
    return value  # str, int, float, bool, a Literal, a Hashable: as JSON has it


def cache_round_trips(result: typing.Any) -> None:
    """Time both ways of caching ``result`` (see the module docstring); best of 5."""
    from evalhub.analysis.result import AnalysisResult

    as_pickle = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
    as_json = pickle.dumps(result.to_json(), pickle.HIGHEST_PROTOCOL)
    assert rebuilt_from_json(AnalysisResult, pickle.loads(as_json)) == result  # the two hold the same result
    (set_typed, _), (get_typed, _), (set_json, _), (get_json, _) = best_of(
        5, lambda: pickle.dumps(result, pickle.HIGHEST_PROTOCOL), lambda: pickle.loads(as_pickle),
        lambda: pickle.dumps(result.to_json(), pickle.HIGHEST_PROTOCOL),
        lambda: rebuilt_from_json(AnalysisResult, pickle.loads(as_json)))
    print(f"  cache, the typed result pickled:  set {1000 * set_typed:6.2f} ms, get {1000 * get_typed:6.2f} ms, "
          f"{len(as_pickle):,} bytes")
    print(f"  cache, its JSON rebuilt on a hit: set {1000 * set_json:6.2f} ms, get {1000 * get_json:6.2f} ms, "
          f"{len(as_json):,} bytes")
def run_process(argv: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``argv`` as a fresh process, output discarded; CPU is the child's user + system."""
    # Bytecode caches are written even when this shell says PYTHONDONTWRITEBYTECODE: a checkout that runs
    # `make run` has them, and without them every process compiles the project's modules again.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def startup(argv: list[str]) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of ``argv`` in STARTUP_RUNS fresh processes."""
    run_process(argv)  # writes the project's bytecode caches, as any first run does
    return [run_process(argv) for _ in range(STARTUP_RUNS)]


def build(rebuild: bool) -> None:
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone

    from annotations.models import HumanRating, Item, Rater, Study
    from annotations.studies import study_create_from_template
    from llmjudge.models import Judge, JudgeRun, LLMRating

    call_command("migrate", verbosity=0)
    existing = Study.objects.filter(slug=SLUG).first()
    if existing is not None and not rebuild:
        n = HumanRating.objects.filter(item__study=existing).count() + LLMRating.objects.filter(
            run__study=existing).count()
        if n == N_ITEMS * 4 * (HUMAN_RATERS + SAMPLES):
            return
    started = time.perf_counter()
    with transaction.atomic():
        Study.objects.filter(slug=SLUG).delete()
        owner, _ = get_user_model().objects.get_or_create(username="bench", defaults={"is_staff": True})
        study = study_create_from_template(slug=SLUG, template="story-likert", owner=owner)
        Item.objects.bulk_create(
            [Item(study=study, external_id=f"i{n}", group="human" if n % 2 else "gpt2", fields={}, position=n)
             for n in range(N_ITEMS)], batch_size=5000)
        items = list(Item.objects.filter(study=study).order_by("id").values_list("id", flat=True))
        questions = list(study.questions.values_list("id", flat=True))
        raters = [Rater.objects.create(study=study, external_id=f"teacher-{k}", source="imported").pk
                  for k in range(1, HUMAN_RATERS + 1)]
        judge, _ = Judge.objects.get_or_create(name="bench-judge", defaults={"backend": "imported", "samples": 2})
        run = JudgeRun.objects.create(study=study, judge=judge, status="done")
        rng = np.random.default_rng(0)
        quality = rng.normal(3.5, 0.8, size=len(items)) - 0.8 * (np.arange(len(items)) % 2 == 0)
        now = timezone.now()
        human_rows, llm_rows = [], []
        for question in questions:
            truth = np.clip(quality + rng.normal(0, 0.3, size=len(items)), 1, 5)
            for rater in raters:
                scores = np.clip(np.rint(truth + rng.normal(0, 0.7, size=len(items))), 1, 5)
                human_rows += [(rater, item, question, float(s), "", False, now, now)
                               for item, s in zip(items, scores, strict=True)]
            for sample in range(SAMPLES):
                scores = np.clip(np.rint(2 * (truth + rng.normal(0.2, 0.6, size=len(items)))) / 2, 1, 5)
                refused = rng.random(len(items)) < 0.01
                llm_rows += [(run.pk, item, question, sample, None if r else float(s), "refused" if r else "ok",
                              "", "", "", "", "[]", "", "", 1, "bench", "{}", False, "", now, now)
                             for item, s, r in zip(items, scores, refused, strict=True)]
        human_sql = ("INSERT INTO annotations_humanrating (rater_id, item_id, question_id, score, comment, swapped, "
                     "created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)")
        llm_columns = ("run_id, item_id, question_id, sample, score, status, rationale, prompt, prompt_hash, "
                       "template_version, history, raw, reasoning, attempts, model, params, swapped, reason, created_at, updated_at")
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                with cursor.cursor.copy("COPY annotations_humanrating (rater_id, item_id, question_id, score, "
                                        "comment, swapped, created_at, updated_at) FROM STDIN") as copy:
                    for row in human_rows:
                        copy.write_row(row)
                with cursor.cursor.copy(f"COPY llmjudge_llmrating ({llm_columns}) FROM STDIN") as copy:
                    for row in llm_rows:
                        copy.write_row(row)
            else:
                cursor.executemany(human_sql, human_rows)
                cursor.executemany(f"INSERT INTO llmjudge_llmrating ({llm_columns}) VALUES "
                                   f"({', '.join(['%s'] * 20)})", llm_rows)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"  built {len(human_rows) + len(llm_rows):,} ratings in {time.perf_counter() - started:.1f} s")


def ppi_cost(data: typing.Any, baseline: float) -> bool:
    """PPI's own cost (issue 27) on this study, made one where PPI applies: declared a random subset, with the human
    ratings kept on a seeded 20 % of the items (in memory; the database is untouched). The analysis with its PPI
    rows against the same analysis without them (nothing declared: the note alone). True within the in-process
    budget (about 2 x reading the rows, the figure analyze is held to)."""
    import copy

    import numpy as np

    from evalhub import analysis

    subset = copy.deepcopy(data)
    human = next(p for p in subset.pools if p.kind == "human")
    keep = (np.random.default_rng(0).random(subset.item_ids.size) < 0.2)[human.item]
    for name in ("item", "question", "rater", "score", "rater_index"):
        setattr(human, name, getattr(human, name)[keep])
    options = analysis.AnalysisOptions()
    subset.study.human_subset = {}
    without, without_cpu = best_of(REPEATS, lambda: analysis.analysis_from_data(subset, options))[0]
    subset.study.human_subset = {"declared_random": True}
    with_ppi, with_cpu = best_of(REPEATS, lambda: analysis.analysis_from_data(subset, options))[0]
    result = analysis.analysis_from_data(subset, options)
    rows = len(result.ppi or ())
    print(f"  PPI, 20 % of items human-rated ({sum(p.score.size for p in subset.pools):,} ratings, {rows} rows): "
          f"analysis {with_ppi:.2f} s / {with_cpu:.2f} s CPU with PPI, {without:.2f} s / {without_cpu:.2f} s without "
          f"({1000 * (with_cpu - without_cpu):+.0f} ms CPU); "
          f"{with_ppi / baseline:.2f} x reading the full study's rows")
    return rows > 0 and with_ppi <= 2.2 * baseline


def measure(rebuild: bool) -> None:
    import django

    django.setup()
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    from annotations.models import Study
    from evalhub import analysis

    build(rebuild)
    study = Study.objects.get(slug=SLUG)
    questions = list(study.questions.values_list("id", flat=True))
    run_ids = list(study.judge_runs.values_list("id", flat=True))

    def read_rows() -> None:
        # The baseline: the very queries analyze runs, rows fetched, nothing computed.
        with connection.cursor() as cursor:
            cursor.execute(*analysis.human_rows_sql(questions))
            cursor.fetchall()
            cursor.execute(*analysis.llm_rows_sql(run_ids, questions))
            cursor.fetchall()

    def analyze() -> None:
        call_command("analyze", SLUG, format="json", stdout=io.StringIO())

    read_rows()  # warm the database cache for both
    data = analysis.study_data(study=study, options=analysis.AnalysisOptions())
    n = sum(p.score.size for p in data.pools)

    setup_test_environment()
    client = Client()
    client.force_login(study.owner)
    url = f"/studies/{SLUG}/"
    assert client.get(url).status_code == 200
    load = os.getloadavg()
    setup = startup(SETUP)
    help_ = startup(HELP)

    def dashboard_cold() -> None:
        cache.clear()  # the dashboard caches analyses; measure the full render
        client.get(url)

    runs = in_turns(REPEATS, read_rows, analyze, lambda: analysis.analysis_from_data(data, analysis.AnalysisOptions()),
                    dashboard_cold, lambda: client.get(url), lambda: run_process(ANALYZE))
    (baseline, baseline_cpu), (total, total_cpu), (stats_only, _), (dashboard, dashboard_cpu), (warm, _), _ = [
        (min(w for w, _ in r), min(c for _, c in r)) for r in runs]

    print(f"  backend {connection.vendor}: {n:,} counted ratings; load average {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f} (1, 5, 15 min) -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (best of {REPEATS}, "
          "wall / CPU of this process)")
    print(f"  baseline (read the rows):         {baseline:6.2f} s / {baseline_cpu:5.2f} s")
    print(f"  analyze --format json:            {total:6.2f} s / {total_cpu:5.2f} s  "
          f"({total / baseline:.2f} x baseline wall, {total_cpu / baseline_cpu:.2f} x CPU)")
    print(f"    of which statistics on arrays:  {stats_only:6.2f} s")
    print(f"  dashboard GET /studies/{SLUG}/:  {dashboard:6.2f} s / {dashboard_cpu:5.2f} s  "
          f"(with the analysis cached: {warm:.2f} s)")
    cache_round_trips(analysis.analysis_from_data(data, analysis.AnalysisOptions(charts=True)))
    ppi_ok = ppi_cost(data, baseline)
    whole_ok = report_startup(setup, help_, read=runs[0], whole=runs[-1])
    verdict = total < 3 and total <= 2.2 * baseline and dashboard < 3 and whole_ok and ppi_ok
    print("  OK: within budget" if verdict else "  OVER budget (see the load average: the budget is for an idle machine)")


def report_startup(setup: list[tuple[float, float]], help_: list[tuple[float, float]], *,
                   read: list[tuple[float, float]], whole: list[tuple[float, float]]) -> bool:
    """Print the start-up figures and the whole `manage.py analyze` against its budget, twice reading the rows
    plus `manage.py help`: medians beside medians, bests beside bests, CPU beside CPU. Whether both wall
    figures are within budget and the start-up within 0.5 s."""
    for name, runs in (("django.setup()", setup), ("manage.py help", help_)):
        print(f"  {name + ', fresh process:':32s}  {medians(runs)[0]:6.2f} s / {medians(runs)[1]:5.2f} s  "
              f"(median of {len(runs)}; best {min(w for w, _ in runs):.2f} s / {min(c for _, c in runs):.2f} s)")
    print(f"  manage.py analyze --format json, the whole process, against 2 x reading the rows + manage.py help "
          f"({len(whole)} runs in turns with the rest):")
    ok = max(medians(setup)[0], medians(help_)[0]) <= 0.5
    pick = {"median": medians, "best": lambda runs: (min(w for w, _ in runs), min(c for _, c in runs))}
    for how, figure in pick.items():
        (process, process_cpu), (read_wall, read_cpu), (help_wall, help_cpu) = figure(whole), figure(read), figure(help_)
        budget, budget_cpu = 2 * read_wall + help_wall, 2 * read_cpu + help_cpu
        print(f"    {how:6s} wall {process:5.2f} s, budget 2 x {read_wall:.2f} + {help_wall:.2f} = {budget:.2f} s: "
              f"{process / budget:.2f} x budget;  CPU {process_cpu:5.2f} s, budget {budget_cpu:.2f} s: "
              f"{process_cpu / budget_cpu:.2f} x")
        ok = ok and process <= budget
    return ok


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rebuild", action="store_true", help="Rebuild the study even if it is there.")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
    if args.child:
        measure(args.rebuild)
        return
    backends = {"sqlite": f"sqlite:///{REPO / 'var' / 'bench' / 'bench.sqlite3'}"}
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        backends["postgresql"] = os.environ["DATABASE_URL"]
        _create_pg_database(os.environ["DATABASE_URL"])
    (REPO / "var" / "bench").mkdir(parents=True, exist_ok=True)
    for name, url in backends.items():
        print(f"{name}:")
        env = {**os.environ, "DATABASE_URL": url, "DEBUG": "true"}
        env.pop("REDIS_URL", None)
        subprocess.run([sys.executable, __file__, "--child", *(["--rebuild"] if args.rebuild else [])], env=env,
                       check=True)


def _create_pg_database(url: str) -> None:
    import psycopg

    base, _, name = url.rpartition("/")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


if __name__ == "__main__":
    main()
