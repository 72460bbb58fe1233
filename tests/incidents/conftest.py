import pytest


@pytest.fixture
def burst_worker_thread(_test_redis):
    """The burst worker (scripts/run_all.sh runs one): a real Celery worker consuming the burst
    queue from Redis, in a thread of this process."""
    from celery.contrib.testing.worker import start_worker
    from django.conf import settings

    from dashboard.celery import app

    with start_worker(app, pool="threads", concurrency=4, perform_ping_check=False, hostname="bursts@test",
                      queues=[settings.INNOWATCH_BURST_QUEUE], shutdown_timeout=30) as worker:
        yield worker
