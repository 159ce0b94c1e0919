"""Judge-run throughput against the local OpenAI-protocol server (a script, not a test).

Run: .venv/bin/python tests/bench/bench_judge.py [--calls 2560] [--latency 0.2] [--full]
     (set DATABASE_URL / REDIS_URL to measure against PostgreSQL and Redis)

(a) Efficiency: N calls to a server answering after a fixed latency, at concurrency 64, through the
    whole pipeline (pending rows, engine, limiter, conditional UPDATEs). Ideal wall time is
    calls x latency / concurrency; target >= 0.8 of ideal. The run's wall time counts from
    judge_run_start (creating the pending rows included) to the run being done. Baselines, measured
    in the same run against the same server: the same number of calls made bare (no database) with
    the SDK's ``chat.completions.create`` in a 64-thread pool, with ``client.post`` (the backend's
    call) in a 64-thread pool, and with the async client. CPU milliseconds per call are printed for
    this process, the server process and (in-process run) this process's PostgreSQL backend: the
    machine's 2 cores are shared, so the CPU per call is what decides, and it is robust to other
    load where the wall time is not (the load average is printed with every figure).
(b) --full: the issue's 4,800-call run (400 items x 4 questions x 3 samples) with 10 % 429, 10 % 500
    and 5 % timeouts: exactly one rating per key, counts per status, wall time.

The script creates and drops its own test database (Django's test-database machinery), so it never
touches the configured one.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
# The benchmark's server listens on a free loopback port, which the default (vLLM's port only) refuses; the
# Celery workers it starts inherit this.
os.environ.setdefault("JUDGE_BASE_URL_HOSTS", "localhost,127.0.0.1,::1,vllm")

import django  # noqa: E402

django.setup()

import openai  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

CONCURRENCY = 64
PROMPT = "How well do the sentences in the story fragment fit together? (on a scale of 1-5, with 1 being the lowest)"


def bare_async(url: str, calls: int) -> float:
    async def go() -> float:
        client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(i: int) -> None:
            async with gate:
                await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"{PROMPT} {i}"}], max_tokens=64
                )

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(calls)))
        elapsed = time.perf_counter() - started
        await client.close()
        return elapsed

    return asyncio.run(go())


def bare_threads(url: str, calls: int) -> float:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)

    def one(i: int) -> None:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"{PROMPT} {i}"}], max_tokens=64)

    started = time.perf_counter()
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        list(pool.map(one, range(calls)))
    return time.perf_counter() - started


def bare_threads_post(url: str, calls: int) -> float:
    """The backend's own call (``client.post`` on the SDK, JSON read by hand), bare, in 64 threads."""
    import httpx

    client = openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)

    def one(i: int) -> None:
        body = {"model": "m", "messages": [{"role": "user", "content": f"{PROMPT} {i}"}], "max_tokens": 64}
        client.post("/chat/completions", body=body, cast_to=httpx.Response).json()

    started = time.perf_counter()
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        list(pool.map(one, range(calls)))
    return time.perf_counter() - started


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (Linux /proc), 0 where unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _session_cpu(session: int) -> float:
    """CPU of every live process of a session (a Celery worker and its pool processes)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session:
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def make_study(items: int):
    from annotations.models import Item
    from annotations.studies import study_create_from_template

    study = study_create_from_template(slug=f"bench-{items}-{time.monotonic_ns()}", template="story-likert")
    Item.objects.bulk_create(
        Item(study=study, external_id=f"b{i}", group="human" if i % 2 else "gpt2", position=i,
             fields={"story": f"Story {i}. It was a dark and stormy night, number {i}.", "prompt": f"Prompt {i}."})
        for i in range(items)
    )
    return study


def pipeline(url: str, items: int, samples: int, **judge_fields) -> tuple[float, object]:
    from llmjudge.models import Judge
    from llmjudge.runs import lifecycle as judging

    study = make_study(items)
    judge = Judge.objects.create(
        name=f"bench-{time.monotonic_ns()}", backend="openai-compatible", base_url=f"{url}/v1", model="m",
        samples=samples, concurrency=CONCURRENCY, max_tokens=64, **judge_fields,
    )
    started = time.perf_counter()
    run = judging.judge_run_start(study=study, judge=judge, enqueue=False)
    created = time.perf_counter()
    judging.judge_run_execute_inline(run=run)
    elapsed = time.perf_counter() - started
    print(f"    (creating {run.calls_total} pending rows took {created - started:.2f} s)")
    run.refresh_from_db()
    return elapsed, run


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


class ServerProcess:
    """The test server in its own process, as a real provider is: it must not share our GIL."""

    def __init__(self, *args: str) -> None:
        self.args = args

    def __enter__(self) -> ServerProcess:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.openai_server", "--port", "0", *self.args],
            cwd=REPO, stdout=subprocess.PIPE, text=True,
            # A script started in the background inherits an ignored SIGINT; the server needs it.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        self.url = self.process.stdout.readline().strip()
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.send_signal(signal.SIGINT)  # the server prints its counters on Ctrl-C
        try:
            self.stats = self.process.communicate(timeout=15)[0].strip()
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            self.stats = "(server did not stop on SIGINT; killed, no counters)"


def start_workers(processes: int) -> subprocess.Popen:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    env = {**os.environ, "DATABASE_URL": f"postgresql://{auth}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
           "DEBUG": "false", "SECRET_KEY": "bench", "ALLOWED_HOSTS": "localhost", "LOG_LEVEL": "WARNING",
           "LLM_TIMEOUT": str(settings.LLM_TIMEOUT)}
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalhub", "worker", "-Q", "llm", "-c", str(processes),
         "--loglevel", "WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=REPO, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def through_workers(url: str, items: int, processes: int) -> tuple[float, object, float]:
    """The production path: chunks on the `llm` queue, a Celery worker with ``processes`` processes."""
    from llmjudge.models import Judge
    from llmjudge.runs import lifecycle as judging

    study = make_study(items)
    judge = Judge.objects.create(
        name=f"bench-w-{time.monotonic_ns()}", backend="openai-compatible", base_url=f"{url}/v1", model="m",
        samples=3, concurrency=CONCURRENCY, max_tokens=64,
    )
    worker = start_workers(processes)
    try:
        time.sleep(6)  # let the worker start before the clock does
        cpu = _session_cpu(worker.pid)
        started = time.perf_counter()
        run = judging.judge_run_start(study=study, judge=judge)  # autocommit: chunks leave at once
        while run.status == "running":
            time.sleep(0.05)
            run.refresh_from_db(fields=["status"])
        elapsed = time.perf_counter() - started
        cpu = _session_cpu(worker.pid) - cpu
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
    run.refresh_from_db()
    return elapsed, run, cpu


def efficiency(calls: int, latency: float) -> None:
    with ServerProcess("--latency", str(latency)) as server:
        ideal = calls * latency / CONCURRENCY
        print(f"(a) {calls} calls, latency {latency} s, concurrency {CONCURRENCY}: ideal {ideal:.2f} s ({_load()})")
        bare: dict[str, float] = {}
        for name, function in (
            ("bare SDK create, 64 threads", bare_threads),
            ("bare SDK post, 64 threads", bare_threads_post),
            ("bare AsyncOpenAI create", bare_async),
        ):
            cpu, server_cpu = time.process_time(), _cpu_seconds(server.process.pid)
            elapsed = function(server.url, calls)
            cpu, server_cpu = time.process_time() - cpu, _cpu_seconds(server.process.pid) - server_cpu
            bare[name] = elapsed
            print(f"    {name:32s} {elapsed:6.2f} s  efficiency {ideal / elapsed:.2f}  "
                  f"cpu/call: client {1000 * cpu / calls:.2f} ms, server {1000 * server_cpu / calls:.2f} ms  ({_load()})")
        baseline = bare["bare SDK create, 64 threads"]
        # 4 questions x 3 samples per item.
        backend = _backend_pid() if connection.vendor == "postgresql" else 0
        cpu, server_cpu, db_cpu = time.process_time(), _cpu_seconds(server.process.pid), _cpu_seconds(backend)
        elapsed, run = pipeline(server.url, items=calls // 12, samples=3)
        n = run.ratings.count()
        cpu, server_cpu = time.process_time() - cpu, _cpu_seconds(server.process.pid) - server_cpu
        db_cpu = _cpu_seconds(backend) - db_cpu
        ideal = n * latency / CONCURRENCY
        print(f"    {'pipeline in-process':32s} {elapsed:6.2f} s  efficiency {ideal / elapsed:.2f}"
              f"  ({n} ratings, run {run.status}; throughput {baseline / elapsed * calls / n:.2f} of bare SDK create, "
              f"{bare['bare SDK post, 64 threads'] / elapsed * calls / n:.2f} of bare SDK post)")
        print(f"    {'':32s} cpu/call: client {1000 * cpu / n:.2f} ms, server {1000 * server_cpu / n:.2f} ms, "
              f"PostgreSQL backend {1000 * db_cpu / n:.2f} ms  ({_load()})")
        if connection.vendor == "postgresql" and settings.REDIS_URL:
            for processes in (1, 2):
                elapsed, run, cpu = through_workers(server.url, calls // 12, processes)
                print(f"    {f'Celery worker -c {processes}':32s} {elapsed:6.2f} s  efficiency {ideal / elapsed:.2f}"
                      f"  ({run.ratings.count()} ratings, run {run.status}; throughput"
                      f" {baseline / elapsed * calls / n:.2f} of bare SDK create; worker cpu/call {1000 * cpu / n:.2f} ms;"
                      f" {_load()})")
    print(f"    server: {server.stats}")


def full_run() -> None:
    from llmjudge.selectors import run_progress

    timeout = float(settings.LLM_TIMEOUT)
    with ServerProcess("--latency", "0.05,0.3", "--rate-429", "0.1", "--rate-500", "0.1", "--rate-timeout", "0.05",
                       "--timeout-seconds", str(timeout + 2), "--retry-after", "1", "--seed", "2023") as server:
        elapsed, run = pipeline(server.url, items=400, samples=3)
        keys = list(run.ratings.values_list("item_id", "question_id", "sample"))
        progress = run_progress(run=run)
        statuses = Counter(run.ratings.values_list("status", flat=True))
    print(f"(b) 4,800-call run with 10 % 429 + 10 % 500 + 5 % timeouts (client timeout {timeout:g} s):")
    print(f"    ratings {len(keys)}, distinct keys {len(set(keys))}, statuses {dict(statuses)}")
    print(f"    calls {progress.calls}, wall time {elapsed:.1f} s, run {run.status}")
    print(f"    server: {server.stats}")
    assert len(keys) == len(set(keys)) == 4800 and statuses.get("pending", 0) == 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2560)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--full", action="store_true", help="also the 4,800-call run with faults")
    args = parser.parse_args()
    settings.LLM_TIMEOUT = int(os.environ.get("LLM_TIMEOUT", "3"))
    settings.DEBUG = False  # as in production workers: no per-query logging
    if os.environ.get("SWITCH"):
        sys.setswitchinterval(float(os.environ["SWITCH"]))
    setup_test_environment()
    # Its own database name: the test suite's test_<name> may be in use at the same time.
    if connection.vendor == "postgresql":
        connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_{connection.settings_dict['NAME']}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        print(f"database: {connection.vendor}; limiter: {'Redis' if settings.REDIS_URL else 'process-local'}; "
              f"cpus: {os.cpu_count()}")
        efficiency(args.calls, args.latency)
        if args.full:
            full_run()
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
