#!/bin/sh
# Serve the site on one machine: a local Celery worker in the background (on the
# embedded filesystem broker unless CELERY_BROKER_URL says otherwise) and gunicorn
# in the foreground. Ctrl-C stops both.
set -eu
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
PY=${PY:-.venv/bin/python}
mkdir -p var/log

"$PY" -m celery -A config worker --loglevel=INFO --concurrency=2 \
    --logfile=var/log/worker.log &
worker=$!
trap 'kill $worker 2>/dev/null; wait $worker 2>/dev/null' EXIT INT TERM

cat <<MSG

  The service is starting on http://$HOST:$PORT/
    campaigns        http://$HOST:$PORT/
    demo campaign    http://$HOST:$PORT/campaigns/demo-movies/
    demo runs        http://$HOST:$PORT/campaigns/demo-movies/runs/   (sign in as olga)
    REST API         http://$HOST:$PORT/api/v1/campaigns/
    API docs         http://$HOST:$PORT/api/docs/
    health           http://$HOST:$PORT/healthz
    admin            http://$HOST:$PORT/admin/   (organiser olga, password above)
  Worker log: var/log/worker.log. Stop with Ctrl-C.

MSG
"$PY" -m gunicorn config.wsgi:application -c deploy/gunicorn.conf.py --bind "$HOST:$PORT"
