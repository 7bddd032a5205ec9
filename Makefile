# traceidx: `make demo` and `make test` set everything up from a bare Python 3.11.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# what the demo needs alone: the runtime dependencies and the html extra (no test tooling)
DEMO_STAMP := $(VENV)/.installed-demo
# the mypyc-compiled install (what `pip install .` gives a user) beside the editable pure one
COMPILED := build/compiled
BUILT    := $(COMPILED)/.built
# the test suite's copy that runs against the compiled install (no traceidx/ beside it)
CHECK    := build/check
# what runs against the compiled install: compiled vs pure on mutated traces, the golden
# cases of every runtime, the command line (the whole suite runs once, on the pure modules)
SMOKE    := tests/test_compiled.py tests/corpus/test_golden.py tests/cli/test_cli.py
CORPUS   ?= $(abspath ../shared/corpus)

.PHONY: setup compiled demo test lint typecheck chromium unit unit-compiled bench bench-paired bench-runtimes notebooks \
	screenshot clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	TRACEIDX_PURE=1 $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	TRACEIDX_PURE=1 $(BIN)/python -m pip install --quiet -e '.[html]'
	touch $(DEMO_STAMP)

setup: $(STAMP)

$(BUILT): $(STAMP) setup.py $(shell find traceidx -name '*.py')
	rm -rf $(COMPILED)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation --target $(COMPILED) .
	$(BIN)/python -c "import sys; sys.path.insert(0, '$(COMPILED)'); import traceidx; \
		sys.exit(0 if traceidx.compiled() else 'mypyc did not compile traceidx (see above)')"
	touch $@

compiled: $(BUILT)

demo: $(DEMO_STAMP)
	$(BIN)/traceidx demo

lint: $(STAMP)
	$(BIN)/ruff check setup.py traceidx tests benchmarks notebooks
	$(BIN)/ruff format --check setup.py traceidx tests benchmarks notebooks

typecheck: $(STAMP)
	$(BIN)/mypy

# the browser the HTML report tests open it in (Debian's chromium; installed as root where missing)
chromium:
	@test -x /usr/bin/chromium || [ "$$(id -u)" != 0 ] || \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)

unit: $(STAMP) chromium
	TRACEIDX_BUILD=pure $(BIN)/python -m pytest

unit-compiled: $(BUILT)
	rm -rf $(CHECK) && mkdir -p $(CHECK)
	cp -r tests benchmarks notebooks pyproject.toml README.md $(CHECK)/
	cd $(CHECK) && TRACEIDX_BUILD=compiled TRACEIDX_CORPUS=$(CORPUS) \
		PYTHONPATH=$(abspath $(COMPILED)) $(abspath $(BIN))/python -m pytest $(SMOKE)

test: lint typecheck unit unit-compiled

screenshot: $(STAMP) chromium
	$(BIN)/python -m tests.support.screenshot docs/report.png

notebooks: $(STAMP)
	$(BIN)/python notebooks/execute.py --save

bench: $(BUILT)
	PYTHONPATH=$(COMPILED) $(BIN)/python benchmarks/run.py --megabytes 1000 --real-copies 40 --ccusage --repeat 3

# cold builds of an earlier commit (BASE) against the working tree, alternated on one corpus
BASE ?= 646eaaa
bench-paired: $(STAMP)
	$(BIN)/python benchmarks/paired.py --base $(BASE) --repeat 7 --ccusage

bench-runtimes: $(STAMP)
	$(BIN)/python benchmarks/runtimes.py --out benchmarks/results/runtimes-latest.json

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
