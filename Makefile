# The two commands of the README: `make demo` and `make test`.
# Each sets up its own virtualenv under .venv/ (safe to run again: it only
# reinstalls when a requirements file changed).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test lint serve venv clean chromium

venv: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $@

test: $(STAMP) chromium
	$(PY) -m pytest

# The browser tests drive Debian's Chromium; installed here once if missing.
chromium:
	@sh tests/e2e/install-chromium.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports

demo: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_campaign demo/campaign.yaml
	$(PY) manage.py demo_accounts demo-movies
	$(PY) manage.py submit_runs demo-movies --as olga --keep-going \
	    demo/runs/*-PG-* demo/runs/*-PO-* demo/runs/*-AC-*
	$(PY) manage.py grade demo-movies
	# --force: the demo publishes even where the judge doubted, and says how many such
	# judgments no one reviewed (a real campaign reviews them on the dashboard first).
	$(PY) manage.py publish_leaderboards demo-movies --as olga --force
	HOST=$(HOST) PORT=$(PORT) PY=$(PY) sh deploy/serve-local.sh

serve: $(STAMP)
	HOST=$(HOST) PORT=$(PORT) PY=$(PY) sh deploy/serve-local.sh

clean:
	rm -rf $(VENV) var
