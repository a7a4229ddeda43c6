#!/usr/bin/env bash
# Run huggingface_hub's own tests against the local Hub (`hf-release hub serve`): how far a rehearsal
# here predicts the real Hub. Not part of `make test`: the suite is fetched, not vendored.
#
#   scripts/hub_conformance.sh TESTS_DIR      # the `tests/` folder of a huggingface_hub checkout
#
# The suite (written for the Hub's CI server) runs unchanged with the installed client: `httpx` is
# aliased to the client's `httpx2`, the suite's staging endpoint is pointed at the local Hub, its
# CI tokens are accepted (write access, one user each), Xet is off except for the suite's Xet tests
# (marked `xet`: its conftest switches hf_xet on for them; hf_xet is in the test extra) and production
# tests are deselected. Tests left out are listed, with the reason, in scripts/hub_conformance_excluded.txt.
# Prints the figure; teardown errors count as failures. Exit 0 when at least 95% pass.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 TESTS_DIR [PYTEST_ARGS…] (TESTS_DIR: the tests/ folder of a huggingface_hub checkout)" >&2; exit 2; }
SRC=$(realpath "$1"); shift
[ -d "$SRC/tests" ] && SRC="$SRC/tests"
[ -f "$SRC/testing_constants.py" ] || { echo "$SRC: not huggingface_hub's tests/ folder (no testing_constants.py)" >&2; exit 2; }
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/.venv/bin
[ -x "$BIN/python" ] || { echo "no .venv: run 'make .venv/.installed' first" >&2; exit 2; }
# The suite's own fixtures need pytest-mock; everything else it uses is installed with hf-release.
"$BIN/python" -c 'import pytest_mock' 2>/dev/null || "$BIN/pip" install --quiet pytest-mock

WORK=$(mktemp -d)
trap 'kill "${HUB_PID:-}" 2>/dev/null || true; wait "${HUB_PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
cp -r "$SRC" "$WORK/tests"
mkdir -p "$WORK/shim" "$WORK/home"
# The suite imports httpx; huggingface_hub 2.4 ships its fork under the name httpx2.
printf 'import sys\nimport httpx2\nsys.modules["httpx"] = httpx2\n' > "$WORK/shim/httpx.py"
# Every name of the suite's own `tests` package must resolve to the copy, so it is run as a package.
touch "$WORK/tests/__init__.py"
# Version skew: test_hf_api.py imports a helper that 2.x removed (only TestParseHFUrl, not run, uses it).
{ printf 'import huggingface_hub.hf_api as _hf_api\n'
  printf '_hf_api.__dict__.setdefault("repo_type_and_id_from_hf_id", None)\n'
  cat "$SRC/conftest.py"; } > "$WORK/tests/conftest.py"

PORT=$("$BIN/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ENDPOINT="http://127.0.0.1:$PORT"
export HF_HOME="$WORK/home" HF_HUB_DISABLE_XET=1 HF_HUB_DISABLE_TELEMETRY=1 HF_TOKEN= HUGGING_FACE_HUB_TOKEN=
echo '{"standardEnvVars": [], "harnesses": {}}' > "$HF_HOME/.agent_harnesses.json"

# The suite's CI accounts become local users: each token writes as its own user.
"$BIN/python" - "$WORK/hub" "$PORT" "$WORK/tests" <<'PY' &
import sys
sys.path.insert(0, sys.argv[3] + "/..")
from tests import testing_constants as c
from pathlib import Path
from release.localhub import Account, serve
accounts = {
    c.TOKEN: Account(c.USER, orgs={"valid_org_hub": "Dummy Hub Org"}, fullname=c.FULL_NAME),
    c.OTHER_TOKEN: Account(c.OTHER_USER, orgs={}),
    c.ENTERPRISE_TOKEN: Account(c.ENTERPRISE_USER, orgs={c.ENTERPRISE_ORG: c.ENTERPRISE_ORG}),
}
serve(Path(sys.argv[1]), port=int(sys.argv[2]), tokens=accounts)
PY
HUB_PID=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

cat >> "$WORK/tests/testing_constants.py" <<PY

# hub_conformance.sh: the staging Hub is the local Hub.
ENDPOINT_STAGING = "$ENDPOINT"
ENDPOINT_PRODUCTION_URL_SCHEME = ENDPOINT_STAGING + "/{repo_id}/resolve/{revision}/{filename}"
PY
cat > "$WORK/pytest.ini" <<INI
[pytest]
addopts = -p no:cacheprovider --strict-markers -Werror::FutureWarning
markers =
    xet: requires hf_xet
    no_xet: must run without hf_xet
    inference: inference
    production: production Hub
    deprecated: expects a FutureWarning
    git_lfs: requires git-lfs
    vcr: recorded HTTP
INI

DESELECT=()
while read -r test _; do
  [ -n "$test" ] && [ "${test:0:1}" != "#" ] && DESELECT+=(--deselect "tests/$test")
done < "$ROOT/scripts/hub_conformance_excluded.txt"
mapfile -t CLASSES < <(grep -v '^#' "$ROOT/scripts/hub_conformance_selected.txt" | grep .)

cd "$WORK"
set +e
PYTHONPATH="$WORK/shim" HF_ENDPOINT="$ENDPOINT" "$BIN/python" -m pytest -q -rfE --tb=line --timeout=300 \
  -m "not production" --junitxml="$WORK/junit.xml" "${CLASSES[@]/#/tests/}" "${DESELECT[@]}" "$@"
set -e
"$BIN/python" "$ROOT/scripts/hub_conformance_summary.py" "$WORK/junit.xml" "$ROOT/scripts/hub_conformance_excluded.txt"
