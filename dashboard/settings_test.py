"""Settings for the test suite: the real services, but Redis database 15 and a queue of its own,
so tests never touch a running innowatch's broker or poll-scheduling keys."""

import os

from dashboard.settings import *  # noqa: F403

REDIS_URL = os.environ.get("INNOWATCH_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
CELERY_BROKER_URL = REDIS_URL
CELERY_TASK_DEFAULT_QUEUE = "innowatch-test"
INNOWATCH_BURST_QUEUE = "innowatch-test-bursts"
