"""Per-judge limits: concurrency and requests per minute, shared through Redis by every worker."""
from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from django.conf import settings

from llmjudge.engine.limits import LocalLimiter, RedisLimiter

NEEDS_REDIS = pytest.mark.services("redis", reason="embedded runs keep limits process-local")


async def _max_in_flight(limiters, calls_each: int, hold: float = 0.03) -> int:
    in_flight = peak = 0

    async def call(limiter):
        nonlocal in_flight, peak
        async with limiter.slot():
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(hold)
            in_flight -= 1

    await asyncio.gather(*(call(limiter) for limiter in limiters for _ in range(calls_each)))
    for limiter in limiters:
        await limiter.aclose()
    return peak


def test_local_limiter_caps_concurrent_calls():
    assert asyncio.run(_max_in_flight([LocalLimiter(concurrency=3, rpm=None)], 20)) == 3


def test_local_limiter_paces_requests_per_minute():
    async def go():
        limiter = LocalLimiter(concurrency=50, rpm=1200)  # 20 per second, a burst of 20
        started = time.monotonic()
        await _max_in_flight([limiter], 40, hold=0)
        return time.monotonic() - started

    assert 0.9 <= asyncio.run(go()) < 3


@NEEDS_REDIS
def test_two_workers_share_one_concurrency_limit_through_redis():
    url, key = settings.REDIS_URL, f"test-{uuid.uuid4().hex}"

    async def go():
        workers = [RedisLimiter(url=url, judge_key=key, concurrency=4, rpm=None, lease_seconds=30) for _ in range(2)]
        return await _max_in_flight(workers, 15)

    assert asyncio.run(go()) == 4


@NEEDS_REDIS
def test_two_workers_share_one_requests_per_minute_limit_through_redis():
    url, key = settings.REDIS_URL, f"test-{uuid.uuid4().hex}"

    async def go():
        workers = [RedisLimiter(url=url, judge_key=key, concurrency=100, rpm=1200, lease_seconds=30) for _ in range(2)]
        started = time.monotonic()
        await _max_in_flight(workers, 20, hold=0)
        return time.monotonic() - started

    # 40 requests at 20 per second with a burst of 20: the second 20 wait about one second.
    assert 0.9 <= asyncio.run(go()) < 3


@NEEDS_REDIS
def test_a_lease_left_by_a_dead_worker_expires():
    url, key = settings.REDIS_URL, f"test-{uuid.uuid4().hex}"

    async def go():
        dead = RedisLimiter(url=url, judge_key=key, concurrency=1, rpm=None, lease_seconds=0.3)
        slot = dead.slot()
        await slot.__aenter__()  # taken and never released, as by a SIGKILLed worker
        alive = RedisLimiter(url=url, judge_key=key, concurrency=1, rpm=None, lease_seconds=0.3)
        started = time.monotonic()
        async with alive.slot():
            waited = time.monotonic() - started
        await alive.aclose()
        await dead.aclose()
        return waited

    assert 0.1 <= asyncio.run(go()) < 2


@NEEDS_REDIS
def test_one_redis_call_takes_leases_for_every_waiting_call_and_never_more_than_are_free():
    url, key = settings.REDIS_URL, f"test-{uuid.uuid4().hex}"

    async def go():
        other = RedisLimiter(url=url, judge_key=key, concurrency=10, rpm=None, lease_seconds=30)
        held = [other.slot() for _ in range(3)]
        for slot in held:
            await slot.__aenter__()  # another worker holds 3 of the 10 slots
        limiter = RedisLimiter(url=url, judge_key=key, concurrency=10, rpm=None, lease_seconds=30)
        grants = []
        acquire = limiter._acquire

        async def counted(**kwargs):
            grants.append(int(await acquire(**kwargs)))
            return grants[-1]

        limiter._acquire = counted
        peak = await _max_in_flight([limiter], 20, hold=0.05)
        live = await limiter.client.zcard(limiter.leases_key)
        for slot in held:
            await slot.__aexit__(None, None, None)
        await other.aclose()
        return peak, grants, live

    peak, grants, live = asyncio.run(go())
    assert peak == 7  # the 7 free slots, all used; the other worker's 3 untouched
    # The first round trip takes all 7 for the 20 waiting calls; later ones (waiters polling for
    # slots another worker might free) find none, the leases are handed over locally.
    assert grants[0] == 7 and sum(grants) == 7
    assert live == 3  # this worker's leases went back to Redis when it closed
