# The two commands of the README: `make demo` and `make test`.
# Each sets up its own virtualenv under .venv/ (safe to run again: it only
# reinstalls when a requirements file changed).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test lint serve venv clean chromium engine

venv: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $@

test: $(STAMP) chromium engine
	$(PY) -m pytest

# llama.cpp compiled for this machine's CPU (AVX-512 and the like), once, for the embedded
# judge; where it cannot be built (no compiler), the prebuilt wheel serves and this says so.
engine: $(STAMP)
	@$(PY) -m embedded_judge.engines build

# The browser tests drive Debian's Chromium; installed here once if missing.
chromium:
	@sh tests/e2e/install-chromium.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports

# A run the judge could not grade does not stop the demo: `grade` names it and the
# command that grades it again, and the site serves everything else.
demo: $(STAMP) engine
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_campaign demo/campaign.yaml
	$(PY) manage.py demo_accounts demo-movies
	$(PY) manage.py submit_runs demo-movies --as olga --keep-going \
	    demo/runs/*-PG-* demo/runs/*-PO-* demo/runs/*-AC-*
	-$(PY) manage.py grade demo-movies
	# The organiser labels a blind sample of each kind (demo/blind-labels.jsonl: what a
	# careful assessor says of every nugget and answer, as demo/runs/README.md designs
	# them): agreement with people, and the confidence above which judgments stand
	# without a person. The escalated ones are settled from the same file, as a person
	# working through the review queue would; re-grading follows each round of labels,
	# since a nugget's new label changes what its answer's check is shown.
	$(PY) manage.py blind_labels demo-movies --as olga --labels demo/blind-labels.jsonl \
	    --draw entailment:40 --draw answer:22 --seed 2026 --settle-escalated
	-$(PY) manage.py grade demo-movies
	$(PY) manage.py blind_labels demo-movies --as olga --labels demo/blind-labels.jsonl \
	    --settle-escalated
	-$(PY) manage.py grade demo-movies
	$(PY) manage.py publish_leaderboards demo-movies --as olga
	# The RUBRIC campaign (demo/rubric/): the same people, so demo_accounts above serves it too.
	$(PY) manage.py load_campaign demo/rubric/campaign.yaml
	# Its test bank came with the campaign file for FH01-FH04; the embedded judge drafts two
	# nuggets for FH05, the query with none (the 1.5B model drafts nuggets far more reliably
	# than exam questions). Should the judge draft nothing, FH05 stays without items.
	$(PY) manage.py testbank_generate demo-rubric --n 2 || \
	    echo "FH05 has no test-bank items: add some on /campaigns/demo-rubric/testbank/"
	$(PY) manage.py submit_runs demo-rubric --as olga demo/rubric/runs/*
	-$(PY) manage.py grade demo-rubric
	$(PY) manage.py publish_leaderboards demo-rubric --as olga --force
	HOST=$(HOST) PORT=$(PORT) PY=$(PY) sh deploy/serve-local.sh

serve: $(STAMP)
	HOST=$(HOST) PORT=$(PORT) PY=$(PY) sh deploy/serve-local.sh

clean:
	rm -rf $(VENV) var
