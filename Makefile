# Two commands to get going: `make demo` (install + ask the demo database) and `make test`.
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
QUESTION ?= How many clients are there?

.PHONY: demo test test-fast lint console install check-wheel

demo: $(VENV)/.installed
	$(PY) -m bot ask "$(QUESTION)"

# The tests run in one process per core (pytest-xdist, `--dist loadgroup`). The ones on the shared
# PostgreSQL server run in one worker, one after another, those on MariaDB in one, and the slow
# ones (real processes, servers, one-second ticks) in one: see tests/conftest.py.
# `make test PARALLEL=` runs everything in one process.
PARALLEL ?= -n auto --dist loadgroup

test: $(VENV)/.installed
	$(VENV)/bin/pytest $(PARALLEL)

# Everything but the tests marked slow: under a minute.
test-fast: $(VENV)/.installed
	$(VENV)/bin/pytest $(PARALLEL) -m "not slow"

# ruff, then mypy on core/ and bot/ (settings in pyproject.toml [tool.mypy]; cache in .mypy_cache).
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy

# Build sdist and wheel, install the wheel in a fresh venv, ask the demo question from an empty directory.
check-wheel: $(VENV)/.installed
	bash .ci/check_wheel

console: $(VENV)/.installed
	$(PY) -m bot console

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@
