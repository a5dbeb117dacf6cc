# Two commands to get going: `make demo` (install + ask the demo database) and `make test`.
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
QUESTION ?= How many clients are there?

.PHONY: demo test lint console install

demo: $(VENV)/.installed
	$(PY) -m bot ask "$(QUESTION)"

test: $(VENV)/.installed
	$(VENV)/bin/pytest

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

console: $(VENV)/.installed
	$(PY) -m bot console

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@
