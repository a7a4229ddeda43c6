"""Shared fixtures: a private copy of the example release, builds of it, and local Hubs."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# Every Hub the tests talk to is a local one on loopback, which does not speak Xet.
os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.pop("HF_TOKEN", None)
os.environ["HF_HUB_OFFLINE"] = "0"
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="hf-release-tests-home-")
# A test that forgets to name its local Hub reaches nothing off this machine: the discard port on loopback
# (a build of a next version with nothing staged looks for the previous one on the Hub).
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
# huggingface_hub 2.4 fetches an "agent harnesses" registry from the public Hub once a day unless a
# fresh copy is cached: cache an empty one, so no test ever reaches an address off this machine.
Path(os.environ["HF_HOME"], ".agent_harnesses.json").write_text('{"standardEnvVars": [], "harnesses": {}}')
# Its `hf` CLI (the card's download commands, run by tests/card/test_verify_commands.py) asks pypi.org for
# a newer huggingface_hub once a day per HF_HOME, which is new in every session: switched off.
os.environ["HF_HUB_DISABLE_UPDATE_CHECK"] = "1"
# Bytecode is cached for the suite even where PYTHONDONTWRITEBYTECODE is set (many container images set it):
# without the cache each xdist worker re-rewrites and recompiles every test module (~6 CPU-s), and each of the
# ~100 Python processes the suite starts (hf-release, pip, the workflow's steps) recompiles hf-release (~0.25 s).
# In the usual __pycache__ folders (git ignores them), not under a PYTHONPYCACHEPREFIX: with a prefix Python
# reads bytecode only there, so a fresh venv recompiled every library module the suite imports (~3,200, ~25 s
# of a fresh clone's run). artifacts/'s helper scripts are run as scripts, never imported (helpers.load_script).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

from tests.helpers import EXAMPLE, local_hub, made_once  # noqa: E402  (after the environment above)
from tests.reliability.helpers import TALLY  # noqa: E402

if TYPE_CHECKING:
    from release.localhub import LocalHub


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of artifacts/v5 (spec and files) that a test may change; returns the spec path."""
    dest = tmp_path / "artifacts" / "v5"
    shutil.copytree(EXAMPLE, dest)
    return dest / "release.toml"


@pytest.fixture
def build_example(example: Path, tmp_path: Path) -> Callable[..., Path]:
    """Build the copied example into tmp_path/dist; returns the staged folder."""
    from release.builder import build
    from release.spec import load_spec

    def run(spec: Path = example) -> Path:
        return build(load_spec(spec), tmp_path / "dist").dist

    return run


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example release built once per session, shared by pytest-xdist's workers (from a copy of
    artifacts/v5); returns dist/v5. Never modify it: tests that damage a release work on a copy of it."""
    from release.builder import build
    from release.spec import load_spec

    def make(root: Path) -> None:
        shutil.copytree(EXAMPLE, root / "artifacts" / "v5")
        build(load_spec(root / "artifacts" / "v5" / "release.toml"), root / "dist")

    return made_once(tmp_path_factory, "built", make) / "dist" / "v5"


@pytest.fixture
def built_copy(built: Path, tmp_path: Path) -> Path:
    """A private copy of the session's built project (artifacts/v5, dist/v5 and the records beside it) at
    tmp_path, the staged files hard links to the copied sources as build leaves them; returns tmp_path."""
    root = built.parent.parent
    copies: dict[tuple[int, int], str] = {}  # each inode copied once, linked thereafter
    for folder, _, files in os.walk(root):
        for name in files:
            source = os.path.join(folder, name)
            dest = tmp_path / os.path.relpath(source, root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            st = os.stat(source)
            first = copies.setdefault((st.st_dev, st.st_ino), str(dest))
            if first == str(dest):
                shutil.copy2(source, dest)
            else:
                os.link(first, dest)
    return tmp_path


@pytest.fixture
def dist(built: Path, tmp_path: Path) -> Path:
    """A private copy of the built release at tmp_path/dist/v5 that a test may damage."""
    dest = tmp_path / "dist" / built.name
    shutil.copytree(built, dest)
    return dest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "hub(faults=None, per_module=False, **options): the `hub` fixture's fault plan (METHOD:KIND:COUNT:REGEX;...)"
        " and app options, or per_module=True for the module's one Hub",
    )


@pytest.fixture
def hub(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LocalHub]:
    """The test's local Hub (started by `tests.helpers.local_hub`, the one way to start one, on tmp_path/"local-hub",
    accepting the tests' tokens). `@pytest.mark.hub(faults, **options)` on the test or its module passes a fault
    plan and app options; in a module marked `pytest.mark.hub(per_module=True)` it is the module's one Hub instead.
    A test that needs a Hub mid-way or a second one starts it with `local_hub` in a `with` block."""
    marker = request.node.get_closest_marker("hub")
    args, options = (marker.args, dict(marker.kwargs)) if marker else ((), {})
    if options.pop("per_module", False):
        yield request.getfixturevalue("module_hub")
        return
    with local_hub(tmp_path / "local-hub", *args, **options) as started:
        yield started


@pytest.fixture(scope="module")
def module_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHub]:
    """One local Hub for a whole module (its module-scoped fixtures publish to it once): `hub` in a module marked
    `pytest.mark.hub(per_module=True)`."""
    with local_hub(tmp_path_factory.mktemp("hub")) as started:
        yield started


@pytest.fixture(params=["xet", "lfs"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test runs twice: over Xet (huggingface_hub's default with hf_xet installed; the local Hub offers it)
    and over LFS (HF_HUB_DISABLE_XET=1, the suite's default above). For the scenarios where the transport matters."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", request.param == "lfs")
    return str(request.param)


# `make test` hands whole modules to its three workers (pytest-xdist --dist loadfile: a module's fixtures are made
# once), in collection order, each to the first worker free (three on two cores: the third runs while another
# waits on a subprocess, a server or a sleep). The longest modules go first, so the many short ones fill the
# end and the workers finish together; unlisted modules keep their order after these.
# CPU-s per module, measured 2026-12-01: workflows 60, kill 23, install 20, full size 16, secrets 10.
LONGEST_FIRST = (
    "tests/workflows/test_release_workflow.py",
    "tests/reliability/test_kill.py",
    "tests/test_install.py",
    "tests/test_fullsize.py",
    "tests/reliability/test_secrets.py",
    "tests/card/test_verify_commands.py",
    "tests/cli/test_contract.py",
    "tests/publish/test_push.py",
    "tests/cli/test_conventions.py",
    "tests/card/test_card_render.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    from tests.helpers import ROOT

    renamed = [module for module in LONGEST_FIRST if not (ROOT / module).is_file()]
    if renamed:
        raise pytest.UsageError(f"tests/conftest.py LONGEST_FIRST names modules that do not exist: {renamed}")
    rank = {module: n for n, module in enumerate(LONGEST_FIRST)}
    items.sort(
        key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank))
    )  # stable: order within a module kept


# The reliability tally (what the suite survived), summed over pytest-xdist's workers and printed at the end.
def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["tally"] = dict(TALLY)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    TALLY.update(getattr(node, "workeroutput", {}).get("tally", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TALLY:
        terminalreporter.write_line("reliability: " + ", ".join(f"{key} = {n}" for key, n in sorted(TALLY.items())))
