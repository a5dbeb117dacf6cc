# Two commands to get going: `make demo` (install + ask the demo database) and `make test`.
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
QUESTION ?= How many clients are there?

.PHONY: demo test test-fast lint console install check-wheel fakesnow lock

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

# The tests come in three levels (tests/README.md): tests/unit (one stage or module, SQLite files
# and in-process fakes), tests/integration (real PostgreSQL, MariaDB, DuckDB, the Snowflake
# emulation, processes started, the model's HTTP server), tests/e2e (the Slack and Teams harnesses:
# signed requests in, every Web API call and activity out). `make test` runs all three, `make
# test-fast` the unit level: under a minute.
test-fast: $(VENV)/.installed
	$(PYTEST) $(PARALLEL) tests/unit

# ruff, then mypy on core/ and bot/ (settings in pyproject.toml [tool.mypy]; cache in .mypy_cache).
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy

# Build sdist and wheel, install the wheel in a fresh venv, ask the demo question from an empty directory.
check-wheel: $(VENV)/.installed
	bash .ci/check_wheel

console: $(VENV)/.installed
	$(PY) -m bot console

install: $(VENV)/.installed

# Lockfiles: the exact versions `make install` and CI install, so a fresh machine gets what CI
# tested. requirements/dev.lock is resolved from pyproject.toml (the dev extra, which pulls in every
# other), requirements/{fakesnow,dbt}.lock from their .in files, for every platform (uv's universal
# resolution) on Python 3.11. Askbase itself is installed on top with --no-deps.
# To change a dependency: edit pyproject.toml (or the .in file), `make lock`, `make install`, commit
# the .lock files with it (tests/integration/test_package_edges.py fails while the lock does not satisfy
# pyproject.toml). `make lock` keeps every pin it can; `make lock UPGRADE=--upgrade` moves all to
# the newest releases allowed, `UPGRADE="--upgrade-package sqlglot"` one. uv runs from a venv of its own.
UV      = .venv-uv/bin/uv
UV_PIN  = uv==0.13.9
UPGRADE ?=
COMPILE = $(UV) pip compile --quiet --universal --python-version 3.11 --custom-compile-command "make lock" $(UPGRADE)

lock: $(UV)
	$(COMPILE) pyproject.toml --extra dev -o requirements/dev.lock
	$(COMPILE) requirements/fakesnow.in -o requirements/fakesnow.lock
	$(COMPILE) requirements/dbt.in -o requirements/dbt.lock

$(UV):
	$(PYTHON) -m venv .venv-uv
	.venv-uv/bin/pip install --quiet '$(UV_PIN)'

# fakesnow (Snowflake emulated on DuckDB) in a virtualenv of its own: it pins sqlglot and
# snowflake-connector-python versions Askbase does not use. tests/integration/test_snowflake.py runs it as a
# server on 127.0.0.1 and skips without it; .ci/run makes it.
FAKESNOW = .venv-fakesnow
fakesnow: $(FAKESNOW)/.installed

$(FAKESNOW)/.installed: requirements/fakesnow.lock
	$(PYTHON) -m venv $(FAKESNOW)
	$(FAKESNOW)/bin/pip install --quiet -r requirements/fakesnow.lock
	touch $@

$(VENV)/.installed: pyproject.toml requirements/dev.lock requirements/dbt.lock
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r requirements/dev.lock
	$(VENV)/bin/pip install --quiet --no-deps -e .
	# dbt, for tests/integration/test_definitions_import.py only, in a venv of its own (its pins clash with mypy's)
	$(PYTHON) -m venv .venv-dbt
	.venv-dbt/bin/pip install --quiet -r requirements/dbt.lock
	touch $@
