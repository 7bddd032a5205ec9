# traceidx: `make demo` and `make test` set everything up from a bare Python 3.11.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# what the demo needs alone: the runtime dependencies and the html extra (no test tooling)
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: setup demo test check lint typecheck chromium inspector unit bench bench-paired \
	bench-runtimes notebooks screenshot clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[html]'
	touch $(DEMO_STAMP)

setup: $(STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/traceidx demo

lint: $(STAMP)
	$(BIN)/ruff check traceidx tests benchmarks notebooks
	$(BIN)/ruff format --check traceidx tests benchmarks notebooks

typecheck: $(STAMP)
	$(BIN)/mypy

# the browser the HTML report tests open it in (Debian's chromium; installed as root where missing)
chromium:
	@test -x /usr/bin/chromium || [ "$$(id -u)" != 0 ] || \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)

# the MCP Inspector's command line (npm, pinned), a JavaScript client the MCP tests drive the
# server with; installed into .node/ where node and npm are (else those tests skip)
inspector: $(STAMP)
	$(BIN)/python -m tests.support.inspector

# the whole suite on every core (pytest-xdist; a module's tests stay on one worker)
unit: $(STAMP) chromium inspector
	$(BIN)/python -m pytest -n auto --dist loadfile

# what CI runs: lint, types and every test
test: lint typecheck unit

# the developer's loop: lint, types and every test not marked slow (no browser, Ray, S3 server,
# wheel build, notebooks or benchmarks), on every core
check: lint typecheck
	$(BIN)/python -m pytest -n auto --dist loadfile -m "not slow"

screenshot: $(STAMP) chromium
	$(BIN)/python -m tests.support.screenshot docs/report.png

notebooks: $(STAMP)
	$(BIN)/python notebooks/execute.py --save

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --megabytes 1000 --real-copies 40 --ccusage --repeat 3

# cold builds of an earlier commit (BASE) against the working tree, alternated on one corpus
BASE ?= 646eaaa
bench-paired: $(STAMP)
	$(BIN)/python benchmarks/paired.py --base $(BASE) --repeat 7 --ccusage

bench-runtimes: $(STAMP)
	$(BIN)/python benchmarks/runtimes.py --out benchmarks/results/runtimes-latest.json

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .node
