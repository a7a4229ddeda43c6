"""Plain helpers for tests (fixtures live in conftest.py)."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pytest

    from release.localhub import Account, FaultPlan, LocalHub
    from release.publish.push import PushOptions

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "artifacts" / "v5"
REPO = "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"  # the example's repo id

# The tokens every local Hub in the tests accepts: TOKEN writes, READ_TOKEN only reads. Random and
# distinctive, so a "the token appears nowhere" check cannot pass by accident.
TOKEN = "hf_testwrite_" + secrets.token_hex(16)
READ_TOKEN = "hf_testread_" + secrets.token_hex(16)
TOKENS = {TOKEN: "write", READ_TOKEN: "read"}


class Run(NamedTuple):
    """What one in-process run did: its exit code and output (`code, out, err = cli(...)` unpacks it)."""

    code: int
    out: str
    err: str


def push_options(hub: LocalHub, **options: Any) -> PushOptions:
    """Push options for the local Hub `hub` with the tests' write token."""
    from release.publish.push import PushOptions

    return PushOptions(endpoint=hub.url, token=TOKEN, **options)


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> Run:
    """`hf-release ARGS` in process, through `main` (the single error handler, which always exits): the exit code
    (as the shell sees it: None is 0, anything not a number 1) and what it printed."""
    import pytest

    from release.cli import main

    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main([str(a) for a in args])
    captured = capsys.readouterr()
    code = exit_.value.code
    return Run(0 if code is None else code if isinstance(code, int) else 1, captured.out, captured.err)


def default_sigint() -> None:
    """In the child: Ctrl-C as a terminal delivers it. pytest started with SIGINT ignored (a background job)
    would pass that on, and an ignored SIGINT is honoured by hf-release (and Python) by design."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def problem_lines(err: str) -> list[str]:
    """A failed build's stderr without the steps it ran (shown first, down to the line naming the step that
    stopped it): its problem lines."""
    lines = err.splitlines()
    stop = next((i for i, line in enumerate(lines) if " stopped the build: " in line), -1)
    return lines[stop + 1 :]


@contextlib.contextmanager
def local_hub(
    root: Path, faults: str | FaultPlan | None = None, *, tokens: Mapping[str, str | Account] = TOKENS, **options: Any
) -> Iterator[LocalHub]:
    """The local Hub on a free loopback port over `root` for the duration of the block, accepting TOKENS
    unless told otherwise; `faults` is a plan or its CLI spelling (METHOD:KIND:COUNT:REGEX;...). The one way the
    tests start a Hub: the `hub` fixture (tests/conftest.py) starts it too."""
    from release.localhub import FaultPlan, running_hub

    plan = FaultPlan.parse(faults) if isinstance(faults, str) else faults
    with running_hub(root, tokens, plan, **options) as hub:
        yield hub


def write_summary(
    spec: Path, summary: str = "A small model for tests; its card's words are the author's, not init's."
) -> None:
    """Replace init's placeholder summary in a spec init wrote (build warns and push refuses while it is there)."""
    import re

    text, found = re.subn(
        r'^summary = ".*"(?: #.*)?$', f'summary = "{summary}"', spec.read_text(), count=1, flags=re.MULTILINE
    )
    assert found == 1, f"no summary line in {spec}"
    spec.write_text(text)


def edit(path: Path, old: str, new: str) -> None:
    """Replace text in a file, failing loudly if `old` is not there (so a test cannot silently test nothing)."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


# What an install of hf-release reads from the checkout (pyproject maps templates/ into the package).
PACKAGE_SOURCES = ("pyproject.toml", "README.md", "release", "templates")


def copy_sources(dest: Path, names: tuple[str, ...] = PACKAGE_SOURCES) -> Path:
    """Copy parts of the checkout: tests build and install from the copy, never in the checkout itself."""
    import shutil

    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif source.exists():
            shutil.copy2(source, dest / name)
    return dest


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder `make` fills once per test session, shared by pytest-xdist's workers (they share the parent of
    their base temp folders): the first to ask makes it under a lock while the others wait, then all reuse it."""
    import os
    import shutil

    from release.staged.locks import held

    base = factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        base = base.parent
    folder = base / f"made-once-{name}"
    with held(base / f"made-once-{name}.lock", f"pytest: {name}", what=f"the session's {name}", wait=600):
        if not (folder / ".made").exists():
            shutil.rmtree(folder, ignore_errors=True)  # a maker that failed half-way
            folder.mkdir()
            make(folder)
            (folder / ".made").touch()
    return folder


def load_script(path: Path) -> dict[str, Any]:
    """The names a helper script defines, run as a script (runpy): unlike an import, it leaves no __pycache__
    beside the script."""
    import runpy

    return runpy.run_path(str(path))


def fresh_venv(path: Path) -> Path:
    """A new venv (made with --system-site-packages) that sees this venv's installed dependencies
    through a .pth line — but not hf-release itself, whose editable hook is a .pth the new venv
    does not process. So installing needs no registry; returns the venv's bin folder."""
    import subprocess
    import sys
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(path)], check=True)
    purelib = Path(
        subprocess.run(
            [str(path / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (purelib / "_dev_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return path / "bin"


def copy_as_version(spec: Path, version: str) -> Path:
    """The example's folder copied as another version, its version-bearing card text edited by hand
    (title, revision to pin; the bench files, measured on v5, keep their label); returns the new spec."""
    import shutil

    folder = spec.parent.with_name(version)
    shutil.copytree(spec.parent, folder)
    new = folder / "release.toml"
    edit(new, 'version = "v5"', f'version = "{version}"')
    edit(new, "Champion Drafter (v5)", f"Champion Drafter ({version})")
    edit(new, "Pin the revision: `v5`", f"Pin the revision: `{version}`")
    return new


def transformers_folder(folder: Path, shards: int = 3) -> Path:
    """A small Llama-style model: shards + index, config, generation config, tokenizer, license, eval."""
    import json

    import numpy as np
    from identify.vendor.licenses import LICENSES
    from safetensors.numpy import save_file

    folder.mkdir(parents=True)
    weight_map, total = {}, 0
    for n in range(shards):
        name = f"model-{n + 1:05d}-of-{shards:05d}.safetensors"
        tensors = {f"model.layers.{n}.mlp.up_proj.weight": np.ones((4, 8), dtype=np.float32)}
        save_file(tensors, str(folder / name), metadata={"format": "pt"})
        weight_map.update({t: name for t in tensors})
        total += sum(t.nbytes for t in tensors.values())
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map})
    )
    (folder / "config.json").write_text(
        json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": shards})
    )
    (folder / "generation_config.json").write_text(json.dumps({"do_sample": False}))
    (folder / "tokenizer.json").write_text(json.dumps({"model": {"type": "BPE", "vocab": {}, "merges": []}}))
    (folder / "tokenizer_config.json").write_text("{}")
    (folder / "special_tokens_map.json").write_text("{}")
    (folder / "LICENSE").write_text(
        dict(LICENSES)["Apache-2.0"]
    )  # the full text, as the license check's matcher knows it
    (folder / "results_2026-11-30.json").write_text(
        json.dumps(
            {"results": {"hellaswag": {"acc,none": 0.5}}, "versions": {"hellaswag": 1}, "n-shot": {"hellaswag": 0}}
        )
    )
    (folder / "notes.md").write_text("training notes\n")
    return folder


def with_extra_files(spec: Path, count: int, size: int = 100, sparse: bool = False) -> None:
    """`count` more files (`size` bytes each; holes when `sparse`) in the spec's folder under extra/, added to
    the spec by one glob entry (role extra)."""
    extra = spec.parent / "extra"
    extra.mkdir()
    for i in range(count):
        with open(extra / f"{i:03}.bin", "wb") as f:
            f.truncate(size) if sparse else f.write(bytes([i % 256]) * size)
    spec.write_text(spec.read_text() + '\n[[files]]\nsource = "extra/*.bin"\npath_in_repo = "extra/"\nrole = "extra"\n')


def edit_json(path: Path, **changes: Any) -> None:
    """Set top-level keys of a JSON file (indented, as the libraries write their configs)."""
    import json

    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}, indent=2))


def edit_config(folder: Path, **changes: Any) -> None:
    """Set top-level keys of the folder's config.json."""
    edit_json(folder / "config.json", **changes)


def write_file(path: Path, content: str | bytes) -> Path:
    """Write bytes, or text as UTF-8 (lone surrogates kept, so tests can write invalid UTF-8 too); returns the path."""
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", errors="surrogatepass"))
    return path


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released): connecting to it is refused."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def writes(hub: LocalHub) -> int:
    """Requests that change or upload anything (preupload and LFS batch included: they precede any byte sent)."""
    return sum(
        n for route, n in hub.stats.requests.items() if not route.startswith(("GET", "HEAD")) and "whoami" not in route
    )


def bytes_read(pid: int) -> int:
    """Bytes the process and its children have read so far (every read() call), from /proc; OSError once the
    process is gone.

    The children count too: the build hashes large files in a forked child, and the kernel adds a reaped
    child's reads to its parent's count, so the parent's count alone jumps by all the child ever read (before
    a signal too) the moment it is reaped. The parent is read first: a child reaped between the two looks is
    then missed once, never counted twice."""
    total = int(Path(f"/proc/{pid}/io").read_text().split("rchar:")[1].split()[0])
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except FileNotFoundError:  # the thread has ended
            continue
        for child in children:
            with contextlib.suppress(OSError):  # reaped meanwhile: in the parent's count from the next look
                total += bytes_read(int(child))
    return total
