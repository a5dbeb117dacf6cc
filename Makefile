# Two commands to get going: `make demo` (install + ask the demo database) and `make test`.
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
QUESTION ?= How many clients are there?

.PHONY: demo test test-fast lint console install check-wheel fakesnow

demo: $(VENV)/.installed
	$(PY) -m bot ask "$(QUESTION)"

# The tests run in two processes per core (pytest-xdist): a third of the suite's time is spent
# waiting (processes starting, leases running out, fake servers answering), and a waiting worker
# leaves its core to another. Idle workers steal queued tests from busy ones (`worksteal`), so a
# long test near the end does not hold the run up. None is pinned to a worker: the tests on the
# shared PostgreSQL and MariaDB servers use names of their own, as other checkouts use the same
# servers at the same time. `make test PARALLEL=` runs everything in one process.
WORKERS  ?= $(shell echo $$(( 2 * $$(nproc 2>/dev/null || echo 1) )))
PARALLEL ?= -n $(WORKERS) --dist worksteal
# Bytecode is cached in __pycache__ (ignored by git) even where PYTHONDONTWRITEBYTECODE is set: without
# it every worker rewrote the asserts of all test modules again on every run (pytest keeps rewritten
# modules only as .pyc files), about 3.5 s of CPU per worker before the first test.
PYTEST  = PYTHONDONTWRITEBYTECODE= $(VENV)/bin/pytest

test: $(VENV)/.installed
	$(PYTEST) $(PARALLEL)

# Everything but the tests marked slow: under a minute.
test-fast: $(VENV)/.installed
	$(PYTEST) $(PARALLEL) -m "not slow"

# ruff, then mypy on core/ and bot/ (settings in pyproject.toml [tool.mypy]; cache in .mypy_cache).
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy

# Build sdist and wheel, install the wheel in a fresh venv, ask the demo question from an empty directory.
check-wheel: $(VENV)/.installed
	bash .ci/check_wheel

console: $(VENV)/.installed
	$(PY) -m bot console

install: $(VENV)/.installed

# fakesnow (Snowflake emulated on DuckDB) in a virtualenv of its own: it pins sqlglot and
# snowflake-connector-python versions Askbase does not use. tests/test_snowflake.py runs it as a
# server on 127.0.0.1 and skips without it; .ci/run makes it.
FAKESNOW = .venv-fakesnow
fakesnow: $(FAKESNOW)/.installed

$(FAKESNOW)/.installed:
	$(PYTHON) -m venv $(FAKESNOW)
	$(FAKESNOW)/bin/pip install --quiet 'fakesnow[server]==0.12.1' 'snowflake-connector-python>=4,<5'
	touch $@

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	# dbt, for tests/test_definitions_import.py only, in a venv of its own (its pins clash with mypy's)
	$(PYTHON) -m venv .venv-dbt
	.venv-dbt/bin/pip install --quiet 'dbt-core~=1.10.0' dbt-postgres
	touch $@
