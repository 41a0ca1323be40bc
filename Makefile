# Two entry points: `make run` and `make test`. Each sets up its own
# virtual environment in .venv and installs what it needs (`make test` also
# TypeScript, from npm, for the check of the browser client: see jscheck).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

.PHONY: run test lint jscheck soak hardening bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# What the server needs, and nothing else: a player's first start stays quick.
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $(RUN_STAMP)

# ...and what the tests, linters and browser tests need too.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUN_STAMP)

run: $(RUN_STAMP)
	$(BIN)/sahrat serve

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

# The browser client's JavaScript, type-checked as it is served (no build step):
# TypeScript reads the JSDoc types in static/js (jsconfig.json). Node and npm are
# needed for this check alone; `make run` and the server never use them. TypeScript is
# installed, at the version tools/jscheck/package-lock.json pins, into
# tools/jscheck/node_modules, and again only when its package files change (Node and
# npm from apt when they are missing and this runs as root, as for Chromium).
JSCHECK := tools/jscheck
JSCHECK_STAMP := $(JSCHECK)/node_modules/.installed

$(JSCHECK_STAMP): $(JSCHECK)/package.json $(JSCHECK)/package-lock.json
	command -v npm >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y -qq nodejs npm; }
	cd $(JSCHECK) && npm ci --silent --no-audit --no-fund
	touch $(JSCHECK_STAMP)

jscheck: $(JSCHECK_STAMP)
	$(JSCHECK)/node_modules/.bin/tsc -p jsconfig.json

# The browser tests run on their own: Playwright's sync API keeps an event loop
# running in its process, which the asyncio-based tests must not share.
# Whole files to a worker (a module's shared servers start once, on one worker); four
# workers on two cores, since most server tests wait on timers and sockets, not the CPU.
test: lint jscheck
	$(BIN)/pytest -n 4 --dist loadfile -q -m "not browser"
	$(BIN)/pytest -n 2 -q -m browser

# The engines' seeded soaks at their full counts (over 2,000 Konkan rounds and 2,000
# Conquian deals); make test plays the first matches of the same seeds. Then the phone
# table's whole Konkan match at every size and language (make test plays two of them).
soak: $(STAMP)
	SAHRAT_SOAK_MATCHES=102 SAHRAT_SOAK_DEALS=2000 \
	$(BIN)/pytest -n 2 -q tests/test_konkan_soak.py tests/test_conquian_properties.py
	SAHRAT_SOAK_PHONES=1 $(BIN)/pytest -n 2 -q -m browser tests/browser/test_phone_table.py

# Every hardening test at its full count (docs/hardening.md); make test runs them small.
hardening: $(STAMP)
	SAHRAT_FUZZ_COMMANDS=100000 SAHRAT_LEAK_MATCHES=500 SAHRAT_REST_FUZZ_EXAMPLES=300 \
	SAHRAT_FAULT_TABLES=100 SAHRAT_FAULT_KILLS=10 SAHRAT_REPLAY_ACTIONS=40000 \
	SAHRAT_CHURN_ORDERS=60 SAHRAT_ENDLESS_MATCHES=500 SAHRAT_STRESS_MATCHES=33 \
	SAHRAT_LEAK_TOURNAMENTS=6 SAHRAT_TOURNAMENT_KILLS=10 \
	$(BIN)/pytest tests/hardening tests/server/test_seating.py tests/server/test_coin_stress.py -q -s
	# ...and on PostgreSQL too the server tests make test runs on SQLite only (ONE_DATABASE)
	SAHRAT_TEST_EVERY_DATABASE=1 $(BIN)/pytest -n 2 -q -k postgres $$(grep -l '^ONE_DATABASE' tests/server/test_*.py)

bench: $(STAMP)
	$(BIN)/pip install --quiet -r bench/requirements.txt
	$(BIN)/python bench/bench_konkan.py
	$(BIN)/python bench/bench_conquian.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(JSCHECK)/node_modules
