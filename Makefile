# EvalHub: `make run` serves the demo with a worker beside it; `make test` runs the suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
ADDR ?= 127.0.0.1:8000

.PHONY: install install-gpu run test lint migrate demo clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: requirements-dev.lock pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements-dev.lock
	touch $@

install: $(VENV)/.installed

# The local transformers worker's packages (torch, transformers): large, so not part of `install`.
$(VENV)/.installed-gpu: requirements-gpu.lock | $(VENV)/.installed
	$(BIN)/pip install --quiet -r requirements-gpu.lock
	touch $@

install-gpu: $(VENV)/.installed-gpu

migrate: install
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py load_demo

run: demo
	$(BIN)/python manage.py rundev $(ADDR)

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .

clean:
	rm -rf var
