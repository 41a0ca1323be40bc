# Two entry points: `make run` and `make test`. Each sets up its own
# virtual environment in .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint hardening bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/sahrat serve

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

# The browser tests run on their own: Playwright's sync API keeps an event loop
# running in its process, which the asyncio-based tests must not share.
test: lint
	$(BIN)/pytest -n 2 -q -m "not browser"
	$(BIN)/pytest -q -m browser

# Every hardening test at its full count (docs/hardening.md); make test runs them small.
hardening: $(STAMP)
	SAHRAT_FUZZ_COMMANDS=100000 SAHRAT_LEAK_MATCHES=500 SAHRAT_REST_FUZZ_EXAMPLES=300 \
	SAHRAT_FAULT_TABLES=100 SAHRAT_FAULT_KILLS=10 SAHRAT_REPLAY_ACTIONS=40000 \
	$(BIN)/pytest tests/hardening -q -s

bench: $(STAMP)
	$(BIN)/pip install --quiet -r bench/requirements.txt
	$(BIN)/python bench/bench_konkan.py
	$(BIN)/python bench/bench_conquian.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
