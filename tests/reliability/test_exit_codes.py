"""`hf-release push` exit codes, per the README's table: 2 bad input, 3 remote failures (auth included),
4 refusals; when several apply, the README's precedence (2, 3, 4, 1) picks the code and every problem is
printed. Each failure is one line naming what is wrong, with the Hub's own reason, never a traceback."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import httpx2
import pytest
from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils import hf_raise_for_status

import release.publish.commit_stream
from release.localhub import LocalHub
from tests.helpers import EXAMPLE, READ_TOKEN, REPO, TOKEN, cli, local_hub
from tests.reliability.helpers import main_and_tags, token_args


def push_args(dist: Path, endpoint: str, *extra: str) -> list[str | Path]:
    return ["push", "v5", "--dist", dist.parent, "--endpoint", endpoint, *extra]


def nothing_written(hub: LocalHub) -> bool:
    return not HfApi(endpoint=hub.url, token=TOKEN).repo_exists(REPO)


def test_remote_failures_exit_3(hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unreachable = cli(capsys, *push_args(dist, "http://127.0.0.1:9", *token_args(TOKEN)))
    assert unreachable.code == 3 and "cannot reach the Hub" in unreachable.err
    wrong = cli(capsys, *push_args(dist, hub.url, *token_args("hf_not_a_token_of_this_hub_0000")))
    assert wrong.code == 3 and "HTTP 401" in wrong.err
    assert "Invalid credentials" in wrong.err or "nvalid" in wrong.err  # the Hub's own reason, not just the status
    read_only = cli(capsys, *push_args(dist, hub.url, *token_args(READ_TOKEN)))  # auth: 3, as the table says
    assert (
        read_only.code == 3
        and read_only.err.strip() == "token: is read-only for local-user; use a token with write access"
    )
    as_json = cli(capsys, *push_args(dist, "http://127.0.0.1:9", *token_args(TOKEN), "--format", "json"))
    document = json.loads(as_json.out)
    assert as_json.code == 3 and document["exit_code"] == 3 and document["error"] == "remote-error"
    assert nothing_written(hub)


def test_refusals_exit_4(hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    info = api.create_commit(
        REPO,
        [CommitOperationAdd("README.md", b"---\nlicense: mit\n---\n# Written by hand\n")],
        commit_message="by hand",
    )
    hand_edited = cli(capsys, *push_args(dist, hub.url, *token_args(TOKEN)))
    assert hand_edited.code == 4 and "edited by hand" in hand_edited.err and "--overwrite-card" in hand_edited.err

    api.create_tag(REPO, tag="v5", revision=info.oid)  # v5 already published, with other files
    taken = cli(capsys, *push_args(dist, hub.url, *token_args(TOKEN), "--overwrite-card", "--format", "json"))
    assert taken.code == 4 and "already published" in taken.err and "--force-tag" in taken.err
    assert json.loads(taken.out)["error"] == "refused"
    assert api.list_repo_refs(REPO).branches[0].target_commit == info.oid  # nothing was written


def test_several_failures_exit_by_precedence_and_are_all_printed(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    api.create_tag(REPO, tag="v5")  # refusal (4): v5 published with other files
    both = cli(capsys, *push_args(dist, hub.url, *token_args(READ_TOKEN), "--format", "json"))
    assert both.code == 3, both  # auth (3) wins over the refusal (4)
    assert "read-only" in both.err and "already published" in both.err
    assert [p["file"] for p in json.loads(both.out)["problems"]] == ["token", f"{REPO}@v5"]


def test_a_path_huggingface_hub_refuses_exits_2_before_any_write(
    hub: LocalHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """huggingface_hub refuses a '.cache' (or '.git') folder anywhere in a path: found in the preflight,
    before the repo is created, with the other problems of the run."""
    artifacts = tmp_path / "artifacts" / "v5"
    shutil.copytree(EXAMPLE, artifacts)
    (artifacts / "notes.txt").write_text("kept beside the weights\n")
    spec = artifacts / "release.toml"
    spec.write_text(
        spec.read_text().replace(
            '[[files]]\nsource = "LICENSE"',
            '[[files]]\nsource = "notes.txt"\npath_in_repo = "extras/.cache/notes.txt"\nrole = '
            '"extra"\n\n[[files]]\nsource = "LICENSE"',
            1,
        )
    )
    dist = tmp_path / "dist"
    built = cli(capsys, "build", "v5", "--spec", spec, "--dist", dist)
    assert built.code == 0, built.err
    pushed = cli(capsys, "push", "v5", "--dist", dist, "--endpoint", hub.url, *token_args(READ_TOKEN))
    assert pushed.code == 2, pushed  # input (2) wins over the read-only token (3)
    assert (
        "extras/.cache/notes.txt: huggingface_hub refuses this path_in_repo" in pushed.err and "read-only" in pushed.err
    )
    assert "Traceback" not in pushed.err and nothing_written(hub)


def test_a_repo_id_huggingface_hub_refuses_exits_2_before_any_request(
    hub: LocalHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    artifacts = tmp_path / "artifacts" / "v5"
    shutil.copytree(EXAMPLE, artifacts)
    for name in ("release.toml", "launch-glm53-dflash2-tp4-v5.sh"):  # the launcher serves this repo
        (artifacts / name).write_text((artifacts / name).read_text().replace(REPO, "spark-lab/GLM-5.3--Flash"))
    spec = artifacts / "release.toml"
    dist = tmp_path / "dist"
    refused = cli(capsys, "build", "v5", "--spec", spec, "--dist", dist)  # found when the spec is read
    assert (
        refused.code == 2
        and "release.repo_id: 'spark-lab/GLM-5.3--Flash' is not a repo id the Hub accepts" in refused.err
    )
    # a staged release that names it anyway (an older hf-release built it): push still refuses before any request
    import release.spec

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(release.spec, "repo_id_problem", lambda repo_id: None)
        assert cli(capsys, "build", "v5", "--spec", spec, "--dist", dist).code == 0
    requests = sum(hub.stats.requests.values())
    pushed = cli(capsys, "push", "v5", "--dist", dist, "--endpoint", hub.url, *token_args(TOKEN))
    assert pushed.code == 2, pushed
    assert pushed.err.startswith("spark-lab/GLM-5.3--Flash: huggingface_hub refuses this repo_id (Cannot have -- or ..")
    assert "Traceback" not in pushed.err and sum(hub.stats.requests.values()) == requests
    verified = cli(capsys, "verify", "v5", "--remote", "--dist", dist, "--endpoint", hub.url, *token_args(TOKEN))
    assert verified.code == 2 and "huggingface_hub refuses it (Cannot have -- or .." in verified.err, verified


@pytest.mark.parametrize("kind", ["503", "drop"])
def test_an_lfs_upload_failing_beyond_the_retries_exits_3_naming_the_file(
    tmp_path: Path, dist: Path, sleeps: list[float], capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """Every upload of an LFS file fails (a 503, or the Hub dying mid-upload): huggingface_hub gives up
    with a RuntimeError; hf-release reports the file and the Hub's reason, exit 3, and commits nothing."""
    with local_hub(tmp_path / "hub", f"PUT:{kind}:1000:^/_lfs/") as hub:
        failed = cli(capsys, *push_args(dist, hub.url, *token_args(TOKEN)))
        assert failed.code == 3, failed
        (line,) = [line for line in failed.err.splitlines() if line.startswith(f"{REPO}: ")]  # besides the retry log
        assert re.match(
            f"{REPO}: committing the release: Error while uploading "
            "'(model.safetensors|assets/bench.png|assets/honest-note.png)' "
            "to the Hub: ",
            line,
        ), line
        assert ("Injected fault: HTTP 503" in line) if kind == "503" else ("cannot reach the Hub" in line)
        api = HfApi(endpoint=hub.url, token=TOKEN)
        assert hub.stats.commits == 0 and main_and_tags(api)[1] == {}


def test_a_400_keeps_the_hubs_reason(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client announces an oid the uploaded bytes do not have: the Hub refuses the upload with 400 and says
    why; that reason reaches the user, not just "HTTP 400: Bad request:". (Weights changed on disk during the
    push are refused by push itself, exit 4: tests/reliability/test_concurrent_edits.py.)"""
    real = release.publish.commit_stream._operation

    def announcing_another_oid(ctx: Any, path: str, xet: bool) -> Any:
        op = real(ctx, path, xet)
        if path == "model.safetensors":
            op.upload_info.sha256 = bytes(32)
        return op

    monkeypatch.setattr(release.publish.commit_stream, "_operation", announcing_another_oid)
    failed = cli(capsys, *push_args(dist, hub.url, *token_args(TOKEN)))
    assert failed.code == 3, failed
    assert "model.safetensors" in failed.err and "HTTP 400: sha256 mismatch: the uploaded content is not" in failed.err
    assert re.search(r"\(request id Root=1-[0-9a-f]{32}\)$", failed.err.strip()), (
        failed.err
    )  # to quote to the Hub's support
    assert hub.stats.commits == 0


def test_the_hubs_reason_and_request_id_are_quoted() -> None:
    """huggingface_hub's own parsing of a Hub error answer, as the real Hub words one."""
    from release.hub.library_errors import hub_answer

    request = httpx2.Request("POST", f"https://hub.example/api/models/{REPO}/commit/main")
    response = httpx2.Response(
        400,
        request=request,
        headers={"x-request-id": "Root=1-6746b0e3-0a1b2c"},
        json={"error": 'Invalid metadata in README.md.\n- "license" must be a string'},
    )
    with pytest.raises(HfHubHTTPError) as exc:
        hf_raise_for_status(response)
    assert hub_answer(exc.value) == (
        'the Hub answered HTTP 400: Invalid metadata in README.md.; - "license" must be a '
        "string (request id Root=1-6746b0e3-0a1b2c)"
    )


def test_bad_input_exits_2(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("release.hub.client.get_token", lambda: None)  # no login cache either
    no_token = cli(capsys, *push_args(dist, hub.url))
    assert no_token.code == 2 and "no Hugging Face token" in no_token.err
    assert cli(capsys, "push", "v9", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN)).code == 2
    two_ways = cli(capsys, *push_args(dist, hub.url, "--token", TOKEN, *token_args(TOKEN)))
    assert two_ways.code == 2 and "not --token and --token-file" in two_ways.err
    empty = dist.parent / "empty-token"
    empty.write_text("\n")
    assert cli(capsys, *push_args(dist, hub.url, "--token-file", empty)).err.endswith("empty-token: holds no token\n")
