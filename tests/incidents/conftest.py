import pytest

from tests.conftest import worker_thread


@pytest.fixture
def burst_worker_thread(_test_redis):
    """The burst worker (scripts/run_all.sh runs one): a real Celery worker consuming the burst
    queue from Redis, in a thread of this process."""
    from django.conf import settings

    with worker_thread(pool="threads", concurrency=4, hostname="bursts@test",
                       queues=[settings.INNOWATCH_BURST_QUEUE]) as worker:
        yield worker
