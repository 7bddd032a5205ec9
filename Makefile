# traceidx: `make demo` and `make test` set everything up from a bare Python 3.11.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup demo test lint typecheck unit bench notebooks clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/traceidx demo

lint: $(STAMP)
	$(BIN)/ruff check traceidx tests benchmarks notebooks
	$(BIN)/ruff format --check traceidx tests benchmarks notebooks

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest

test: lint typecheck unit

notebooks: $(STAMP)
	$(BIN)/python notebooks/execute.py --save

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --megabytes 1000 --real-copies 40 --ccusage --repeat 3

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
