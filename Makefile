# Two commands: `make run` starts everything; `make test` runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint install install-test browser

$(VENV)/.installed: pyproject.toml scripts/install.sh
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/install.sh
	touch $@

install: $(VENV)/.installed

run: install
	$(PY) manage.py migrate --noinput
	HOST=$(HOST) PORT=$(PORT) $(PY) -m kernelweb.serve

test: install
	WITH_TEST=1 PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/install.sh
	$(VENV)/bin/ruff check .
	# Two workers, one test file each at a time (a file's fixtures and builds stay together).
	$(PY) -m pytest -q -n 2 --dist loadfile

lint: install
	$(VENV)/bin/ruff check .
