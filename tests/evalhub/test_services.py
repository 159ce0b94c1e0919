"""When CI runs the suite against PostgreSQL and Redis, prove that is what it talks to."""
from __future__ import annotations

import pytest
import redis
from django.conf import settings
from django.db import connection


@pytest.mark.django_db
@pytest.mark.services("postgresql")
def test_database_is_postgresql_when_services_are_required():
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        assert cursor.fetchone()[0].startswith("PostgreSQL")


@pytest.mark.services("redis")
def test_redis_answers_and_is_the_broker_when_services_are_required():
    assert settings.CELERY_BROKER_URL == settings.REDIS_URL
    client = redis.Redis.from_url(settings.REDIS_URL)
    assert client.ping() is True
