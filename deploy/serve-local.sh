#!/bin/sh
# Serve the site on one machine: a local Celery worker in the background (on the
# embedded filesystem broker unless CELERY_BROKER_URL says otherwise) and gunicorn
# in the foreground. Ctrl-C stops both. With GRADER_BASE_URL unset, the worker starts
# the embedded judge as it starts (or uses the one `manage.py serve_llm` runs), one
# server for both its processes.
#
# Everything it writes goes under VAR_DIR (default: var/ in the clone), as in
# config/settings.py: the static files, the worker's log, and (through the settings)
# the SQLite database, the embedded broker's queues and the uploaded runs.
set -eu
# A relative VAR_DIR is taken from where the script is started, before moving to the clone.
case ${VAR_DIR:-} in
    "") VAR_DIR=$(cd "$(dirname "$0")/.." && pwd)/var ;;
    /*) ;;
    *) VAR_DIR=$PWD/$VAR_DIR ;;
esac
export VAR_DIR
cd "$(dirname "$0")/.."
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
PY=${PY:-.venv/bin/python}
mkdir -p "$VAR_DIR/log"

# The pages' CSS and scripts, served by whitenoise from VAR_DIR/static.
"$PY" manage.py collectstatic --noinput --verbosity 0

# One worker for the three queues (config/settings.py, CELERY_TASK_ROUTES). -B runs beat
# inside it, which sends the reaper (grading/reaper.py) every GRADING_REAP_EVERY seconds:
# on one machine with one worker that is all beat needs to be; with several workers,
# run one `celery -A config beat` apart instead (each -B would schedule its own reaper).
"$PY" -m celery -A config worker --loglevel=INFO --concurrency=2 \
    -Q celery,grading,scoring -B --logfile="$VAR_DIR/log/worker.log" &
worker=$!
trap 'kill $worker 2>/dev/null; wait $worker 2>/dev/null' EXIT INT TERM

cat <<MSG

  The service is starting on http://$HOST:$PORT/
    campaigns        http://$HOST:$PORT/
    demo campaigns (after make demo; sign in as olga with the password it printed):
      R2C2           http://$HOST:$PORT/campaigns/demo-movies/
        results      http://$HOST:$PORT/campaigns/demo-movies/results/
        review queue http://$HOST:$PORT/campaigns/demo-movies/judgments/?to_review=1
      RUBRIC         http://$HOST:$PORT/campaigns/demo-rubric/
        results      http://$HOST:$PORT/campaigns/demo-rubric/results/
        test bank    http://$HOST:$PORT/campaigns/demo-rubric/testbank/
        grid         http://$HOST:$PORT/campaigns/demo-rubric/tracks/ranking/grid/
      dashboards     http://$HOST:$PORT/campaigns/demo-movies/dashboard/ and .../demo-rubric/dashboard/
    REST API         http://$HOST:$PORT/api/v1/campaigns/
    API docs         http://$HOST:$PORT/api/docs/
    health           http://$HOST:$PORT/healthz   (signed in as an organiser: every part; ?worker=1 also pings the worker)
    admin            http://$HOST:$PORT/admin/
  Data: $VAR_DIR. Worker log: $VAR_DIR/log/worker.log. Stop with Ctrl-C.

MSG
"$PY" -m gunicorn config.wsgi:application -c deploy/gunicorn.conf.py --bind "$HOST:$PORT"
