"""The token never appears in any output, log, exception message, manifest, card or JSON document, on
success and on every HTTP error path, nor in any file under dist/ or the Hub's root; and the local Hub
refuses writes without a valid token (401) and with a read-only one (403)."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx2
import huggingface_hub.constants
import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from release.localhub import LocalHub
from tests.helpers import EXAMPLE, READ_TOKEN, REPO, TOKEN, local_hub
from tests.reliability.helpers import TALLY, Run, card_of_another_release, cli, main_and_tags

WRONG = "hf_relwrong_" + TOKEN[-16:][::-1] + "0000"  # a token the Hub does not know: must not leak either
SECRETS = (TOKEN, READ_TOKEN, WRONG)


def leaks(label: str, text: str | bytes) -> list[str]:
    data = text if isinstance(text, bytes) else text.encode("utf-8", "replace")
    return [f"{label} contains {secret[:12]}…" for secret in SECRETS if secret.encode() in data]


def files_under(*roots: Path) -> Iterable[Path]:
    for root in roots:
        if root.exists():
            yield from (p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def test_the_token_appears_nowhere_in_process(
    hub: LocalHub,
    tmp_path: Path,
    sleeps: list[float],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)  # in the environment of every command, build included
    monkeypatch.setattr(huggingface_hub.constants, "HF_DEBUG", True)  # huggingface_hub logs each request as curl
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="huggingface_hub")
    shutil.copytree(EXAMPLE, tmp_path / "artifacts" / "v5")
    dist = tmp_path / "dist"
    at = ("--dist", dist, "--endpoint", hub.url)
    runs: dict[str, Run] = {}

    def run(label: str, expected: int, *args: str | Path) -> None:
        runs[label] = cli(capsys, *args)
        assert runs[label].code == expected, (label, runs[label])

    run("build", 0, "build", "v5", "--spec", tmp_path / "artifacts" / "v5" / "release.toml", "--dist", dist)
    run("verify", 0, "verify", "v5", "--dist", dist)
    run("push", 0, "push", "v5", *at, "--token", TOKEN)
    run("push again, token from HF_TOKEN, JSON", 0, "push", "v5", *at, "--format", "json")
    run("verify --remote", 0, "verify", "v5", "--remote", *at, "--token", TOKEN)
    run("verify --remote, JSON", 0, "verify", "v5", "--remote", *at, "--format", "json")
    # Every HTTP error path: 401, a refusal, a 403 from the Hub, 5xx beyond the retries, no Hub at all.
    run("wrong token (401)", 3, "push", "v5", *at, "--token", WRONG)
    run("wrong token (401), JSON", 3, "verify", "v5", "--remote", *at, "--token", WRONG, "--format", "json")
    with local_hub(tmp_path / "faulty-hub", "POST:503:99:/commit/;GET:429:1:/api/whoami-v2") as faulty:
        run(
            "read-only token (refused)",
            3,
            "push",
            "v5",
            "--dist",
            dist,
            "--endpoint",
            faulty.url,
            "--token",
            READ_TOKEN,
        )
        with monkeypatch.context() as m:  # let a read-only token past the preflight: the Hub itself answers 403
            m.setattr("release.publish.preflight.TokenCanWrite.run", lambda self, ctx: None)
            run(
                "read-only token (403 on write)",
                3,
                "push",
                "v5",
                "--dist",
                dist,
                "--endpoint",
                faulty.url,
                "--token",
                READ_TOKEN,
            )
        run("5xx beyond the retries", 3, "push", "v5", "--dist", dist, "--endpoint", faulty.url, "--token", TOKEN)
        run(
            "5xx beyond the retries, JSON",
            3,
            "push",
            "v5",
            "--dist",
            dist,
            "--endpoint",
            faulty.url,
            "--format",
            "json",
        )
    run("unreachable Hub", 3, "push", "v5", "--dist", dist, "--endpoint", "http://127.0.0.1:9", "--token", TOKEN)

    assert "HTTP 403" in runs["read-only token (403 on write)"].err
    assert "HTTP 401" in runs["wrong token (401)"].err and "HTTP 503" in runs["5xx beyond the retries"].err
    assert any("Authorization" in r.getMessage() for r in caplog.records)  # the debug log did log requests
    found = [
        leak for label, r in runs.items() for leak in leaks(f"{label} stdout", r.out) + leaks(f"{label} stderr", r.err)
    ]
    found += leaks("log", caplog.text)
    found += [
        leak
        for r in caplog.records
        for leak in leaks(f"log record {r.name}", f"{r.getMessage()} {r.args!r} {r.exc_text or ''}")
    ]
    scanned = list(
        files_under(tmp_path / "dist", hub.root, faulty.root, Path(os.environ.get("HF_HOME", tmp_path / "none")))
    )
    found += [leak for path in scanned for leak in leaks(str(path), path.read_bytes())]
    assert not found, found
    assert any(p.name == "release.json" for p in scanned) and any(p.name == "README.md" for p in scanned)
    assert any(p.name == "refs.json" for p in scanned)
    TALLY["commands and files searched for the token"] += len(runs) + len(scanned)


@pytest.mark.hub("POST:503:1:/preupload/;POST:429:1:/tag/")
def test_the_token_appears_nowhere_from_a_subprocess(hub: LocalHub, dist: Path, tmp_path: Path) -> None:
    """The installed command, with huggingface_hub's debug log on and real (unpatched) backoff waits; the
    token from standard input, HF_TOKEN and a file: never from the command line."""
    env = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"} | {"HF_DEBUG": "1", "HF_HUB_DISABLE_XET": "1"}
    exe = Path(sys.executable).parent / "hf-release"
    at = ["--dist", str(dist.parent), "--endpoint", hub.url]
    wrong = tmp_path / "wrong-token"
    wrong.write_text(WRONG + "\n")
    results = {
        "push": subprocess.run(
            [exe, "push", "v5", *at, "--token-stdin"],
            input=TOKEN + "\n",
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        ),
        "verify --remote": subprocess.run(
            [exe, "verify", "v5", "--remote", *at, "--format", "json"],
            capture_output=True,
            text=True,
            env=env | {"HF_TOKEN": TOKEN},
            timeout=120,
        ),
        "wrong token": subprocess.run(
            [exe, "push", "v5", *at, "--token-file", wrong, "--format", "json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        ),
    }
    assert [r.returncode for r in results.values()] == [0, 0, 3], {k: r.stderr for k, r in results.items()}
    assert sum(hub.stats.faults.values()) == 2 and "Send: curl" in results["push"].stderr  # retried; debug log on
    found = [
        leak
        for label, r in results.items()
        for leak in leaks(f"{label} stdout", r.stdout) + leaks(f"{label} stderr", r.stderr)
    ]
    found += [leak for path in files_under(dist.parent, hub.root) for leak in leaks(str(path), path.read_bytes())]
    assert not found, found


def command_line(proc: subprocess.Popen[Any]) -> bytes:
    """What `ps` shows any user of this machine for a running process (once it has exec'd hf-release)."""
    for _ in range(500):
        shown = Path(f"/proc/{proc.pid}/cmdline").read_bytes().replace(b"\0", b" ")
        if b"hf-release " in shown:
            return shown
        time.sleep(0.01)
    raise AssertionError(f"process {proc.pid} never showed an hf-release command line")


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_no_token_in_the_process_list(hub: LocalHub, dist: Path, tmp_path: Path) -> None:
    """hub serve and push read their tokens from a file and from standard input: `ps` shows neither. --token
    still works, but shows in `ps`, which is why it warns."""
    exe = str(Path(sys.executable).parent / "hf-release")
    env = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"}
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN}:write\n{READ_TOKEN}:read\n")
    serve = subprocess.Popen(
        [exe, "hub", "serve", "--root", tmp_path / "hub", "--token-file", tokens],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert serve.stdout is not None
        url = serve.stdout.readline().rsplit(" at ", 1)[1].strip()
        assert not leaks("hub serve's command line", command_line(serve))
        push = subprocess.Popen(
            [exe, "push", "v5", "--dist", dist.parent, "--endpoint", url, "--token-stdin"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        shown = command_line(push)  # waiting for its token on standard input
        out, err = push.communicate(TOKEN + "\n", timeout=120)
        assert push.returncode == 0, err
        assert not leaks("push's command line", shown) and not leaks("push's output", out + err)
        assert HfApi(endpoint=url, token=READ_TOKEN).list_repo_refs(REPO).tags[0].name == "v5"  # both tokens accepted
        visible = subprocess.Popen(
            [exe, "verify", "v5", "--remote", "--dist", dist.parent, "--endpoint", url, "--token", TOKEN],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert leaks("verify's command line", command_line(visible))  # what the warning is about
        out, err = visible.communicate(timeout=120)
        assert visible.returncode == 0 and "warning: --token puts the token in the process list" in err
        assert not leaks("verify's output", out + err)
    finally:
        serve.terminate()
        serve.communicate(timeout=30)


def test_the_demo_puts_no_token_on_a_command_line() -> None:
    from tests.helpers import ROOT

    demo = ROOT / "scripts" / "demo.sh"
    assert subprocess.run(["bash", "-n", demo], capture_output=True).returncode == 0
    commands = [
        line for line in demo.read_text().splitlines() if "hf-release" in line and not line.lstrip().startswith("#")
    ]
    assert any(" hub serve " in line for line in commands) and any(" push " in line for line in commands)
    assert not [line for line in commands if "--token " in line or "--token=" in line], commands


@pytest.mark.parametrize("fmt", ["human", "json"])
def test_credentials_in_the_endpoint_url_appear_nowhere(
    hub: LocalHub,
    dist: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "HF_DEBUG", True)  # huggingface_hub logs each request as curl
    caplog.set_level(logging.DEBUG, logger="huggingface_hub")
    password = "pw-" + TOKEN[-12:]
    at = ("--dist", dist.parent, "--format", fmt, "--token-file")
    token = dist.parent / "token"
    token.write_text(TOKEN)
    host = hub.url.removeprefix("http://")
    runs = {
        "unreachable": cli(capsys, "push", "v5", *at, token, "--endpoint", f"http://proxy-user:{password}@127.0.0.1:9"),
        "refused (the URL's basic auth replaces the token)": cli(
            capsys, "push", "v5", *at, token, "--endpoint", f"http://proxy-user:{password}@{host}"
        ),
        "verify --remote": cli(
            capsys, "verify", "v5", "--remote", *at, token, "--endpoint", f"http://{password}@{host}"
        ),
        "not a URL": cli(capsys, "push", "v5", *at, token, "--endpoint", f"ftp://proxy-user:{password}@{host}"),
    }
    assert [r.code for r in runs.values()] == [3, 3, 3, 2], runs
    for label, run in runs.items():
        assert password not in run.out + run.err, (label, run)
    assert f"ftp://***@{host} is not an http(s) URL" in runs["not a URL"].err
    assert f"http://***@{host}/api/whoami-v2" in caplog.text and password not in caplog.text


WRITES = [
    ("POST", "/api/repos/create", {"name": "other", "organization": "spark-lab"}),
    ("POST", f"/api/models/{REPO}/preupload/main", {"files": []}),
    ("POST", f"/api/models/{REPO}/commit/main", None),
    ("POST", f"/api/models/{REPO}/tag/main", {"tag": "v9"}),
    ("DELETE", f"/api/models/{REPO}/tag/v1", None),
    ("POST", f"/api/models/{REPO}/branch/dev", {}),
    ("POST", f"/{REPO}.git/info/lfs/objects/batch", {"operation": "upload", "objects": []}),
]


def test_the_local_hub_refuses_writes_without_a_valid_token(hub: LocalHub) -> None:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    api.create_tag(REPO, tag="v1")
    before = main_and_tags(api)
    with httpx2.Client(timeout=10) as client:  # one client: each one built loads every CA certificate
        for credentials, status in [(None, 401), (WRONG, 401), (READ_TOKEN, 403)]:
            headers = {"authorization": f"Bearer {credentials}"} if credentials else {}
            for method, path, body in WRITES:
                response = client.request(method, hub.url + path, json=body, headers=headers)
                assert response.status_code == status, (credentials and credentials[:12], method, path, response.text)
                assert not leaks("response", response.content)
    assert main_and_tags(api) == before and not api.repo_exists("spark-lab/other")
    assert hub.stats.commits == 0


def test_the_token_is_sent_to_the_chosen_endpoint_only(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request goes to --endpoint, and those carrying the token only there. (huggingface_hub would
    fetch an agent registry from its default endpoint once per process; the suite caches it, see conftest.)"""
    import huggingface_hub.utils._detect_agent as detect_agent

    sent: list[tuple[str, str, bool]] = []
    real = httpx2.Client.send

    def recorded(self: httpx2.Client, request: httpx2.Request, *args: Any, **kwargs: Any) -> Any:
        sent.append((request.url.host, request.url.path, "authorization" in request.headers))
        return real(self, request, *args, **kwargs)

    monkeypatch.setattr(httpx2.Client, "send", recorded)
    monkeypatch.setattr(detect_agent, "_registry", None)  # as in a fresh process
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    api.create_commit(REPO, [CommitOperationAdd("README.md", card_of_another_release(dist))], commit_message="v4")
    at = ("--dist", dist.parent, "--endpoint", hub.url, "--token", TOKEN)
    assert cli(capsys, "push", "v5", *at).code == 0  # reads the Hub's card (hf_hub_download) first
    assert cli(capsys, "verify", "v5", "--remote", *at).code == 0
    with_token = {(host, path) for host, path, auth in sent if auth}
    assert with_token and {host for host, _ in with_token} == {"127.0.0.1"}, with_token
    elsewhere = {(host, path) for host, path, auth in sent if host != "127.0.0.1"}
    assert elsewhere == set(), elsewhere  # tests/conftest.py caches huggingface_hub's agent registry
    assert any("/resolve/" in path for _, path in with_token)
