#!/usr/bin/env bash
# The main job on the shipped example, offline: build → verify → push to a local Hub → verify --remote.
# The local Hub stands in for huggingface.co (this machine cannot reach it); the push is the real
# huggingface_hub client doing one commit plus the tag v5.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
HUB_ROOT=$(mktemp -d)
# A throwaway huggingface_hub home, with the "agent harnesses" registry it would otherwise fetch
# from the public Hub already cached (empty): the demo talks to the local Hub only.
export HF_HOME="$HUB_ROOT/hf-home"
mkdir -p "$HF_HOME" && echo '{"standardEnvVars": [], "harnesses": {}}' > "$HF_HOME/.agent_harnesses.json"
export HF_HUB_DISABLE_XET=1
export HF_TOKEN="demo-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
PORT=$($BIN/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export HF_ENDPOINT="http://127.0.0.1:$PORT"

# Tokens come from the environment (HF_TOKEN, a write token for the Hub too), never from the command
# line: a command line is visible to every user of the machine in `ps`.
$BIN/hf-release hub serve --root "$HUB_ROOT/hub" --port "$PORT" &
HUB_PID=$!
trap 'kill $HUB_PID 2>/dev/null; rm -rf "$HUB_ROOT"' EXIT
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

set -x
$BIN/hf-release build v5
(cd dist/v5 && sha256sum -c --quiet SHA256SUMS)
$BIN/hf-release verify v5
$BIN/hf-release push v5 --dry-run
$BIN/hf-release push v5
$BIN/hf-release push v5            # a second push is a no-op: no commit, no file data sent
$BIN/hf-release verify v5 --remote              # the Hub's listing: paths, sizes, recorded hashes
$BIN/hf-release verify v5 --remote --download   # every byte the Hub serves, streamed and hashed
set +x
# What this rehearsal did not prove: the local Hub says so on every answer (X-Local-Hub).
$BIN/python - <<'PY'
import os
import httpx2

seen = httpx2.get(os.environ["HF_ENDPOINT"] + "/api/whoami-v2").headers.get("X-Local-Hub", "")
if "xet=unavailable" in seen:
    print("note: the endpoint was the local Hub; files went over LFS and Xet was not exercised")
elif "xet=local" in seen:
    print("note: the endpoint was the local Hub; its Xet is its own CAS, not the Hub's storage")
PY
