"""Step: the library proves the load. The card's loading code (the kind's usage block, the very text the card
prints) runs with the kind's library on the staged folder, in place of the repo id, before the card is rendered:
offline, in a child process bounded in time and address space, on the meta device above a small size (no weight
bytes read into memory), never running the model's own code unless this build was given --trust-remote-code.

The library comes from --prove-with PYTHON, else LIBRARY_PYTHON, else this interpreter when it can import it.
Without one the build goes on and says the load was not proven and how to prove it; the card then claims nothing.
A failed load is a problem (exit 1) in the library's own words."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import posixpath
import re
import resource
import signal
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from release.card.facts import released
from release.card.render import Derived
from release.card.steps import file_rows
from release.kinds.kind import Kind, LoadProof
from release.pipeline import Context, Done, Skipped, StepResult
from release.staged.names import CARD_NAME

logger = logging.getLogger(__name__)

TIME_LIMIT_S = 120  # the child is killed after this long (the library's import is ~3 s of it)
MEMORY_LIMIT = 8 << 30  # RLIMIT_AS: importing torch and the library maps ~3.3 GiB; a tiny load ~4 GiB
REAL_LOAD_MAX_BYTES = 256 << 20  # weights up to this load for real; above, on the meta device
WEIGHT_ROLES = ("weights", "component", "adapter-weights")
WORDS_MAX = 600  # the library's words on the problem's one line (its list of 300 known model types cut)
CHILD = Path(__file__).with_name("load_child.py")
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # transformers' load report is printed bold
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def loading_code(code_blocks: str, loaded_by: str = LoadProof.loaded_by) -> str:
    """The Python of the card's block up to the last line that `loaded_by` matches (by default the one that binds
    `model`): the load, not what it then runs."""
    lines = "\n".join(PYTHON_BLOCK.findall(code_blocks)).splitlines()
    last = max((n for n, line in enumerate(lines) if re.match(loaded_by, line)), default=len(lines) - 1)
    return "\n".join(lines[: last + 1]).strip() + "\n"


def library_python(library: str, prove_with: str | None) -> str | None:
    """The interpreter that proves the load: --prove-with, LIBRARY_PYTHON, else this one if it has the library."""
    named = prove_with or os.environ.get("LIBRARY_PYTHON")
    if named:
        return named
    return sys.executable if importlib.util.find_spec(library) is not None else None


def _limits(memory: int) -> None:  # in the child, before it runs
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_load(
    python: str,
    library: str,
    code: str,
    folder: Path,
    *,
    meta: bool,
    trust_remote_code: bool,
    load_reports: tuple[str, ...] = (),
    refusing_warnings: tuple[str, ...] = (),
    hub_cache: str | None = None,
    time_limit: float = TIME_LIMIT_S,
    memory: int = MEMORY_LIMIT,
) -> dict[str, Any]:
    """Run `code` with `python` in a bounded child, offline; its result: ok, version, loads (each model's load
    report), error (the library's words), said (its warnings), refusals (those of `refusing_warnings` it said),
    offline_miss (it failed on a file not in the cache); or ok False with why the child gave none. `hub_cache`: the
    Hugging Face cache the code may read other models from (else a fresh one: the release alone)."""
    with tempfile.TemporaryDirectory(prefix="hf-release-proof-") as scratch:
        home = Path(scratch)
        request = {
            "code": code,
            "library": library,
            "load_reports": load_reports,
            "refusing_warnings": refusing_warnings,
            "stage": str(folder.resolve()),
            "modules_cache": str(home / "modules"),
            "meta": meta,
            "trust_remote_code": trust_remote_code,
            "result": str(home / "result.json"),
        }
        (home / "request.json").write_text(json.dumps(request), "utf-8")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "HF_HOME": str(home / "hf"),
            "HF_MODULES_CACHE": str(home / "modules"),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1",  # a pickle only through torch's weights_only loader
            "CUDA_VISIBLE_DEVICES": "",
            "TOKENIZERS_PARALLELISM": "false",
            "OMP_NUM_THREADS": "1",
            **({"HF_HUB_CACHE": hub_cache} if hub_cache else {}),
        }
        try:
            child = subprocess.Popen(
                [python, "-I", str(CHILD), str(home / "request.json")],
                cwd=home,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                preexec_fn=lambda: _limits(memory),
                start_new_session=True,
            )
        except OSError as exc:
            return {"ok": False, "error": f"cannot run {python}: {exc.strerror}", "bound": True}
        try:
            out, _ = child.communicate(timeout=time_limit)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return {"ok": False, "error": f"the load took longer than {time_limit:g} s; it was stopped", "bound": True}
        except BaseException:  # Ctrl-C, SIGTERM: the child has a session of its own, so it is ended here
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise
        try:
            return dict(json.loads((home / "result.json").read_text("utf-8")))
        except (OSError, ValueError):
            tail = out.decode("utf-8", "replace").strip().splitlines()[-3:]
            why = f"the load stopped (exit {child.returncode}) within its {memory >> 30} GiB memory bound"
            return {"ok": False, "error": why + (": " + " / ".join(tail) if tail else ""), "bound": True}


HUB_LOAD = re.compile(r'from_pretrained\("([^"]+)"(?:, revision="([^"]+)")?')


def cached_models(code: str, repo_id: str) -> tuple[int, list[str]]:
    """The bytes of the models the card's code loads from the Hub (by id, not this release's), as this machine's
    cache holds them (huggingface_hub's snapshot_download, offline), and the ids the cache lacks."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    size, missing = 0, []
    for model, revision in sorted(set(HUB_LOAD.findall(code))):
        if model == repo_id:
            continue
        try:
            folder = Path(snapshot_download(model, revision=revision or None, local_files_only=True))
        except LocalEntryNotFoundError:
            missing.append(model)
            continue
        size += sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return size, missing


def hub_cache() -> str:
    """This machine's Hugging Face cache (huggingface_hub's own answer: HF_HUB_CACHE, HF_HOME, the default)."""
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def key_problems(loads: list[dict[str, Any]]) -> list[str]:
    return [
        f"{load['class']}: {key} keys {', '.join(load[key][:5])}{' …' if len(load[key]) > 5 else ''}"
        for load in loads
        for key in ("missing", "unexpected", "mismatched")
        if load[key]
    ]


def one_line(said: list[str]) -> str:
    """The library's warning on one line: a load report's table rows as `key STATUS`, its notes left out."""
    out = []
    for text in (ANSI.sub("", t) for t in said):
        for line in text.split("Notes:")[0].splitlines():
            cells = [c.strip() for c in line.split("|") if c.strip()]
            if cells and not set(line.strip()) <= set("-+| ") and cells[0] != "Key":
                out.append(" ".join(cells))
    return "; ".join(out)


def library_words(error: str, said: list[str]) -> str:
    """What the library said of the failed load: its error, and the load report it points to (transformers raises
    "…look at the above report!" on a size mismatch: the report's rows name the tensors and their shapes)."""
    report = one_line(said[-1:])
    if error and report and "report" in error:
        return f"{report} ({error})"
    return error or report


class ProveLoad:
    """Step: run the card's loading code with the kind's library on the staged folder; record `proof`."""

    name = "prove-load"

    def run(self, ctx: Context) -> StepResult:
        kind = ctx.selected_kind()
        proof = kind.load_proof
        if proof is None:
            # nothing the author can do about it: said in the step's line and release.json, not as a warning
            return self._unproven(ctx, f"hf-release does not prove the load of a {kind.name} release", warn=False)
        code = self._card_code(ctx, kind, proof)
        if not code:
            return self._unproven(ctx, "the card prints no loading code")
        trusted = "trust_remote_code=True" in code
        if trusted and not ctx.trust_remote_code:
            return self._unproven(
                ctx,
                "the model ships its own code, which build runs only when asked: review the code files, then "
                "build --trust-remote-code",
                trust=trusted,
            )
        python = library_python(proof.library, ctx.prove_with)
        if python is None:
            return self._unproven(
                ctx,
                f"{proof.name} is not importable here; install it (pip install {proof.install}) or name an "
                "interpreter that has it: build --prove-with PYTHON (or LIBRARY_PYTHON=PYTHON)",
                trust=trusted,
            )
        weights = sum(f.size for f in ctx.files if f.role in WEIGHT_ROLES)
        if proof.loads_from_hub and not proof.meta_device:  # the other models are read whole too: count them
            cached, missing = cached_models(code, ctx.spec.repo_id)
            if missing:
                return self._unproven(
                    ctx,
                    f"the card's code loads {', '.join(missing)} from the Hub, which is not in this machine's Hugging "
                    f"Face cache; download it once (hf download {missing[0]}), then build again",
                )
            weights += cached
        meta = (weights > REAL_LOAD_MAX_BYTES or proof.loads_from_hub) and proof.meta_device
        if weights > REAL_LOAD_MAX_BYTES and not proof.meta_device:
            with_hub = " with the cached models the card loads" if proof.loads_from_hub else ""
            return self._unproven(
                ctx,
                f"the weights ({weights:,} bytes{with_hub}) "
                f"are over the {REAL_LOAD_MAX_BYTES >> 20} MiB build loads for real, "
                f"and {proof.name} cannot load them without reading every byte; run the card's code on "
                "dist/<version> yourself",
                trust=trusted,
            )
        local = code.replace(f'"{ctx.spec.repo_id}"', repr(str(ctx.stage.resolve())))
        result = run_load(
            python,
            proof.library,
            local,
            ctx.stage,
            meta=meta,
            trust_remote_code=trusted,
            load_reports=proof.load_reports,
            refusing_warnings=proof.refusing_warnings,
            hub_cache=hub_cache() if proof.loads_from_hub else None,
        )
        version = result.get("version", "")
        if result.get("offline_miss"):
            words = self._words(ctx, result.get("error", ""))
            return self._unproven(
                ctx,
                f"the card's code loads a model from the Hub that is not in this machine's Hugging Face cache "
                f"({proof.name} {version}: {words}); download it once (hf download REPO_ID), then build again",
            )
        loads, refusals = result.get("loads", []), result.get("refusals", [])
        # another model the code loads (an adapter's base) may lack the head the adapter brings: only the loads
        # of the release's own files are judged by their keys, the adapter by its library's refusals
        stage = str(ctx.stage.resolve())
        judged = [x for x in loads if not proof.loads_from_hub or str(x.get("from", "")).startswith(stage)]
        keys = key_problems(judged) + refusals
        said = library_words(result.get("error", ""), result.get("said", []))
        words = self._words(
            ctx, "; ".join(refusals) if refusals and not result.get("error") else said or "; ".join(keys)
        )
        if not result.get("ok") or keys:
            ctx.proof = {"proven": False, "library": proof.library, "version": version, "error": words}
            where = self._named_file(ctx, words, weights=bool(keys))
            with_what = f"{proof.name} {version}".strip()
            ctx.problem(where, f"the card's code does not load this release with {with_what}: {words}")
            return Done(f"the load failed with {with_what}")
        ctx.proof = {
            "proven": True,
            "library": proof.library,
            "version": version,
            "call": code.strip().splitlines(),
            "device": "meta" if meta else "cpu",
            "trust_remote_code": trusted,
            "loads": [{k: v for k, v in load.items() if k not in ("errors", "from")} for load in loads],
        }
        self._card_line(ctx, f"Loaded by the code below with {proof.name} {version} before publishing.")
        return Done(f"loaded by the card's code with {proof.name} {version} ({ctx.proof['device']})")

    @staticmethod
    def _card_code(ctx: Context, kind: Kind, proof: LoadProof) -> str:
        derived = ctx.derived.one(Derived)
        if derived is None or kind.card_context is None:
            return ""
        facts = released(derived.facts, file_rows(ctx.files), None)
        blocks = kind.card_context(ctx.spec, facts)
        block = next((b for key in proof.usage_keys if (b := blocks.get(key))), None)
        return loading_code(block, proof.loaded_by) if block else ""

    @staticmethod
    def _unproven(ctx: Context, why: str, *, trust: bool = False, warn: bool = True) -> StepResult:
        ctx.proof = {"proven": False, "why": why, **({"trust_remote_code": False} if trust else {})}
        if warn:
            logger.warning("warning: the load was not proven: %s; the card claims nothing about it", why)
        return Skipped(f"the load was not proven: {why}")

    @staticmethod
    def _words(ctx: Context, text: str) -> str:
        """The library's words with the staging folder's path made the release's own."""
        for stage in (str(ctx.stage.resolve()), str(ctx.stage)):
            text = text.replace(f"{stage}/", "").replace(stage, "the release")
        text = " ".join(text.split())  # one line
        return text if len(text) <= WORDS_MAX else text[: WORDS_MAX - 1] + "…"

    @staticmethod
    def _named_file(ctx: Context, words: str, *, weights: bool) -> str:
        named = [f.path_in_repo for f in ctx.files if f.path_in_repo in words]
        if named:
            return max(named, key=len)
        if weights:  # keys missing from or unexpected in the weights: the weights (their index) hold them
            index = [f.path_in_repo for f in ctx.files if f.role == "weights-index"]
            held = index or sorted(
                (f.path_in_repo for f in ctx.files if f.role in WEIGHT_ROLES),
                # a weights file first, and first one in the folder the words name ("…checkpoint at unet")
                key=lambda p: (
                    not p.endswith((".safetensors", ".bin")),
                    re.search(rf"\b{re.escape(posixpath.dirname(p))}\b", words) is None if "/" in p else True,
                    p,
                ),
            )
            if held:
                return held[0]
        return next((f.path_in_repo for f in ctx.files if f.role == "config"), "README.md usage")

    @staticmethod
    def _card_line(ctx: Context, line: str) -> None:
        derived = ctx.derived.one(Derived)
        if derived is not None:
            ctx.derived.add(CARD_NAME, replace(derived, facts=replace(derived.facts, proof_line=line)))
