# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench bench-smoke clean

$(STAMP): pyproject.toml tools/package-lock.json
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,hub]'
	npm ci --prefix tools --no-audit --no-fund --loglevel=error
	touch $(STAMP)

demo: $(STAMP)
	bash scripts/demo.sh

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

bench: $(STAMP)
	$(BIN)/python bench/run.py

bench-smoke: $(STAMP)  # the bench's quick mode runs end to end and prints every ratio (~90 s)
	$(BIN)/python -m pytest -q -p no:cacheprovider bench/test_smoke.py

clean:
	rm -rf dist $(VENV)
