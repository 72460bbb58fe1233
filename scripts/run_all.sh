#!/usr/bin/env bash
# Web, workers and beat in the foreground; Ctrl-C (or any one of them dying) stops them all.
set -u
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
mkdir -p var
# Two malloc arenas for the threaded workers: with one per thread, each kept the largest transient
# it ever served (a batch of alert evaluation, a rollup), and the soak's worker grew 317 → 450 MiB
# in steps; with two it stayed at 265-303 MiB (docs/capacity.md).
export MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}
trap 'trap - INT TERM EXIT; kill 0 2>/dev/null; wait' INT TERM EXIT
"$VENV/bin/python" manage.py check --database default || exit 1
"$VENV/bin/gunicorn" dashboard.wsgi:application --bind "${INNOWATCH_BIND:-127.0.0.1:8000}" \
  --workers "${INNOWATCH_WEB_WORKERS:-2}" --access-logfile - &
"$VENV/bin/celery" -A dashboard worker -Q "innowatch${INNOWATCH_EXTRA_QUEUES:+,$INNOWATCH_EXTRA_QUEUES}" \
  --concurrency "${INNOWATCH_WORKER_CONCURRENCY:-4}" --loglevel INFO &
# The burst worker: one-second captures, in threads (each tick waits on the server, not the CPU),
# one per burst allowed at once, so a capture never queues behind the polls nor they behind it.
"$VENV/bin/celery" -A dashboard worker -Q "${INNOWATCH_BURST_QUEUE:-innowatch-bursts}" -n "bursts@%h" --pool threads \
  --concurrency "${INNOWATCH_BURST_MAX_CONCURRENT:-4}" --loglevel INFO &
# Alert evaluation, rollups and the spool's drain on a worker of their own when
# INNOWATCH_PERIODIC_QUEUE names their queue (the poll worker does them otherwise).
if [ -n "${INNOWATCH_PERIODIC_QUEUE:-}" ]; then
  "$VENV/bin/celery" -A dashboard worker -Q "$INNOWATCH_PERIODIC_QUEUE" -n "periodic@%h" --pool threads \
    --concurrency 2 --loglevel INFO &
fi
"$VENV/bin/celery" -A dashboard beat --schedule var/celerybeat-schedule --loglevel INFO &
echo "innowatch: http://${INNOWATCH_BIND:-127.0.0.1:8000}/ (Ctrl-C stops web, worker and beat)"
wait -n
