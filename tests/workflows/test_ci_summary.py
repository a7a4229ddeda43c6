"""scripts/ci_summary.py on hand-made documents: signed releases, failures, contradictions, escaping."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers import ROOT

SHA = "ab" * 32
COMMIT = "c0ffee" + "0" * 34
URL = "https://huggingface.co/acme/model"


def ci_summary_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_summary", ROOT / "scripts" / "ci_summary.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


ci_summary = ci_summary_module()


def build_doc(version: str = "v5", paths: tuple[str, ...] = ("model.safetensors",)) -> dict[str, Any]:
    files = [{"path_in_repo": p, "role": "weights", "sha256": SHA, "size": 2_342_169_824} for p in paths]
    return {
        "command": "build",
        "ok": True,
        "dist": "dist/v5",
        "copied": [],
        "manifest": {"repo_id": "acme/model", "version": version, "release_digest": "d" * 64, "files": files},
    }


def push_doc(commit: str = COMMIT, tag: str = "v5") -> dict[str, Any]:
    plan = {
        "repo_id": "acme/model",
        "version": tag,
        "add": [{"path": "model.safetensors", "size": 2_342_169_824}],
        "change": [],
        "delete": [],
        "unchanged": [],
        "tag": "create",
        "bytes_to_send": 2_342_169_824,
    }
    return {
        "command": "push",
        "ok": True,
        "url": URL,
        "commit": commit,
        "tag": tag,
        "plan": plan,
        "bytes_sent": 2_342_169_824,
        "verified": True,
    }


def error_doc(kind: str, code: int, message: str) -> dict[str, Any]:
    return {"ok": False, "error": kind, "exit_code": code, "problems": [{"file": "acme/model@v5", "message": message}]}


def summarize(
    tmp_path: Path,
    docs: dict[str, Any],
    *,
    tag: str = "v5",
    env: dict[str, str] | None = None,
    signed: bool = False,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[int, str, dict[str, str]]:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, doc in docs.items():
        (folder / f"{name}.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))
    dist = tmp_path / "dist" / "v5"
    dist.mkdir(parents=True)
    (dist / "release.json").write_text("{}\n")
    if signed:
        (dist / "model.sig").write_text("a Sigstore bundle")
    for key in ("GITHUB_SERVER_URL", "GITHUB_WORKFLOW_REF", "GITHUB_SHA"):
        monkeypatch.delenv(key, raising=False)
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    code = ci_summary.main(
        ["--dir", str(folder), "--dist", str(dist), "--tag", tag, "--summary", str(summary), "--output", str(output)]
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return code, summary.read_text(), outputs


def test_published_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, text, outputs = summarize(tmp_path, {"build": build_doc(), "push": push_doc()}, monkeypatch=monkeypatch)
    assert code == 0
    assert text.startswith("## Release v5 of acme/model: published\n")
    assert f"| `model.safetensors` | weights | 2,342,169,824 | `{SHA}` | added |" in text
    assert outputs == {
        "repo": "acme/model",
        "tag": "v5",
        "commit": COMMIT,
        "manifest_digest": outputs["manifest_digest"],
        "release_digest": "d" * 64,
        "url": URL,
        "card_url": f"{URL}/blob/v5/README.md",
    }


def test_a_signed_release_says_how_to_verify_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_WORKFLOW_REF": "acme/rel/.github/workflows/release.yml@refs/tags/v5",
    }
    code, text, _ = summarize(
        tmp_path, {"build": build_doc(), "push": push_doc()}, env=env, signed=True, monkeypatch=monkeypatch
    )
    assert code == 0
    identity = "https://github.com/acme/rel/.github/workflows/release.yml@refs/tags/v5"
    assert f"model.sig (Sigstore by `{identity}`)" in text
    assert "| `model.sig` | signature |" in text
    assert f"--identity {identity}" in text and "--oidc-issuer https://token.actions.githubusercontent.com" in text


def test_a_refused_push_is_reported_not_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = {
        "build": build_doc(),
        "verify": {"ok": True, "files": 1, "bytes": 5},
        "push": error_doc("refused", 4, "is already published (commit 123) with different files"),
    }
    code, text, outputs = summarize(tmp_path, docs, monkeypatch=monkeypatch)
    assert code == 0  # the push step already failed the job
    assert text.splitlines()[0] == "## Release v5 of acme/model: failed at push"
    assert "| push | ❌ refused (exit 4) |" in text
    assert "- acme/model@v5: is already published (commit 123) with different files" in text
    assert "commit" not in outputs and outputs["repo"] == "acme/model"


def test_a_crashed_step_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, text, _ = summarize(tmp_path, {"build": build_doc(), "push": ""}, monkeypatch=monkeypatch)
    assert code == 0
    assert "| push | ❌ printed no JSON document (did it crash?) |" in text


@pytest.mark.parametrize(
    ("docs", "tag", "message"),
    [
        ({"build": build_doc(version="v4")}, "v5", "the tag is v5 but the spec builds version v4"),
        (
            {
                "build": build_doc(),
                "push": push_doc(),
                "verify-remote": {"ok": True, "remote": {"url": URL, "tag": "v5", "commit": "f" * 40}},
            },
            "v5",
            f"the Hub's tag v5 is at {'f' * 40}, the push made {COMMIT}",
        ),
    ],
    ids=["tag-names-another-version", "tag-moved-after-push"],
)
def test_contradictions_fail_the_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, docs: dict[str, Any], tag: str, message: str
) -> None:
    code, text, _ = summarize(tmp_path, docs, tag=tag, monkeypatch=monkeypatch)
    assert code == 1
    assert f"- {message}" in text
    assert ": published" not in text.splitlines()[0]


def test_file_names_cannot_break_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = {"build": build_doc(paths=("a|b.bin", "<img src=x>.json"))}
    _, text, _ = summarize(tmp_path, docs, monkeypatch=monkeypatch)
    assert "| `a\\|b.bin` |" in text and "&lt;img src=x&gt;.json" in text and "<img" not in text


def test_outputs_refuse_line_breaks(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        ci_summary.write_outputs(tmp_path / "out", {"repo": "a\nmalicious=1"})
