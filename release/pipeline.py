"""A release is an ordered list of steps sharing one context (GoReleaser's shape).

Each step has a name and one `run(ctx)`; a step that does not apply returns `Skipped`.
Data flows one way: spec → staged files → checks and digests → card → manifest (last: it holds the
card's digest).
Problems are collected, not raised, so one run reports all of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from release.errors import CheckFailed, Problem
from release.history.compare import Changes, Snapshot, Unread
from release.spec import ReleaseSpec
from release.staged.manifest import Manifest
from release.staged.staged_file import StagedFile

if TYPE_CHECKING:
    from release.kinds.kind import Kind
    from release.staged.digest_record import DigestRecord


@dataclass(frozen=True)
class Sources:
    """The spec's [[files]] sources, each resolved once before anything is staged (builder/collect.py
    resolve_sources): build's check_destination keeps the staging out of their folders; Collect stages their files."""

    named: list[tuple[list[str], str | None]]  # per [[files]] entry: its files, or why it names none usable
    targets: dict[str, str]  # a file → its real path (the file to link), where that is not its name
    folders: list[set[str]]  # per [[files]] entry: the real folder of each file (and folder) it matched


class ChartDrawer(Protocol):
    """The card's charts drawn beside the build (release/card/chart.py Drawer), as the card's steps see it."""

    def ask(self, wanted: list[tuple[str, dict[str, Any], str]]) -> None: ...

    def remember(self) -> None: ...

    def close(self) -> None: ...


class BackgroundHashing(Protocol):
    """The hashing Collect begins and the Digest step finishes (release/builder/hashing.py Hashing), as the
    steps between them see it."""

    @property
    def todo(self) -> Sized: ...  # the files still to hash

    @property
    def stalls_beside_python(self) -> bool: ...

    def cancel(self) -> None: ...


class PreviousSpec(Protocol):
    """A previous version known by its spec, hashed at the comparison (release/builder/previous_spec.py)."""

    def snapshot(self, known: Mapping[tuple[int, int, int, int], str]) -> Snapshot: ...


@dataclass(frozen=True)
class Done:
    detail: str = ""


@dataclass(frozen=True)
class Skipped:
    reason: str


StepResult = Done | Skipped


class Step(Protocol):
    name: str

    def run(self, ctx: Context) -> StepResult: ...


T = TypeVar("T")


class Parsed:
    """What the checks parsed, stored by type: `parsed.of(BenchRun)` is {path_in_repo: BenchRun}.

    Keyed by the parsed value's own class, so a reader gets the type it asks for, and this module
    needs to import none of the checks that define those types.
    """

    def __init__(self) -> None:
        self._by_type: dict[type, dict[str, Any]] = {}

    def add(self, path_in_repo: str, value: object) -> None:
        self._by_type.setdefault(type(value), {})[path_in_repo] = value

    def of(self, kind: type[T]) -> dict[str, T]:
        """The parsed values of one type by path (a copy, in the order they were added)."""
        return dict(self._by_type.get(kind, {}))

    def one(self, kind: type[T]) -> T | None:
        """The value of this type when the release has exactly one."""
        found = self._by_type.get(kind, {})
        return next(iter(found.values())) if len(found) == 1 else None


@dataclass
class Context:
    """What the steps share. Each step reads what earlier steps wrote and adds its own."""

    spec: ReleaseSpec
    stage: Path  # the staging folder being written (renamed into place at the end)
    template: Path | None = None
    progress: bool = False
    files: list[StagedFile] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    kind: Kind | None = None  # the release kind (release/kinds/), set by SelectKind
    parsed: Parsed = field(default_factory=Parsed)  # what the checks parsed, by type
    derived: Parsed = field(
        default_factory=Parsed
    )  # what steps derived from it, by type: the card's facts (card/steps.py)
    release_digest: str = ""  # set by ReleaseDigest, quoted by the card
    card_record: dict[str, Any] | None = None  # set by RenderCard: what the card was derived from
    # what to compare with, found by build before staging: a Snapshot, a spec hashed at the comparison, or an
    # earlier version that exists but cannot be read here
    previous: tuple[str, Snapshot | PreviousSpec | Unread] | None = None
    sources: Sources | None = None  # resolved by build, staged by Collect
    digests: DigestRecord | None = None  # digests of files that cannot have changed (set by build)
    started_ns: int = 0  # the filesystem's time before any file was staged: the racy-timestamp rule's bound
    # builder/hashing.py Hashing, as the steps between Collect (which begins it) and Digest (which finishes it) see it
    hashing: BackgroundHashing | None = None
    drawer: ChartDrawer | None = None  # set by StartDrawing when the card can have charts, used by the card's steps
    changes: Changes | None = None  # set by CompareWithPrevious
    metrics: dict[str, float] | None = None  # set by CompareWithPrevious: this release's headline numbers
    evidence: dict[str, dict[str, str]] | None = (
        None  # set by CompareWithPrevious: which version measured each evidence file
    )
    manifest: Manifest | None = None  # set by WriteManifest, the last step
    # the load proof (builder/proof.py): the interpreter that has the kind's library (--prove-with), whether the
    # author lets this build run the model's own code (--trust-remote-code), and what ProveLoad found
    prove_with: str | None = None
    trust_remote_code: bool = False
    proof: dict[str, Any] | None = None
    log: list[tuple[str, StepResult]] = field(default_factory=list)

    def by_role(self, role: str) -> list[StagedFile]:
        return [f for f in self.files if f.role == role]

    def problem(self, file: str, message: str) -> None:
        self.problems.append(Problem(file, message))

    def selected_kind(self) -> Kind:
        """The kind, for the steps after SelectKind."""
        assert self.kind is not None, "SelectKind runs before this step"
        return self.kind


class StepLog(Protocol):
    """Any context a list of steps runs on: it records what each step did."""

    log: list[tuple[str, StepResult]]


C = TypeVar("C", bound=StepLog)


def run_steps(ctx: C, steps: Sequence[Any]) -> C:
    """Run every step in order, recording what each did."""
    for step in steps:
        ctx.log.append((step.name, step.run(ctx)))
    return ctx


@dataclass(frozen=True)
class StepsRan:
    """What a build that did not finish had done: the steps that ran (their results), the step it stopped in
    (None: after its last step, while the staging was moved into place) and whether that step is a gate (which
    stops on the problems the steps before it found)."""

    log: list[tuple[str, StepResult]]
    stopped: str | None
    gate: bool = False


STEPS_RAN = "hf_release_steps_ran"  # the attribute of the exception that stopped a build


def note_steps_ran(exc: BaseException, ctx: StepLog, steps: Sequence[Any]) -> None:
    """Tell `exc`, which stops a run of `steps`, what had run (read by the CLI: the steps are shown, the failed
    one named). run_steps appends a step's result once it returns: the next one in `steps` is where it stopped."""
    step = steps[len(ctx.log)] if len(ctx.log) < len(steps) else None
    ran = StepsRan(list(ctx.log), None if step is None else step.name, isinstance(step, Gate))
    setattr(exc, STEPS_RAN, ran)


def steps_ran(exc: BaseException) -> StepsRan | None:
    """What the build stopped by `exc` had run: on it, or on the exception it became (click re-raises a
    KeyboardInterrupt as its Abort; a second one can interrupt the cleanup of the first)."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain:  # a chain may loop back on itself
        ran = getattr(seen, STEPS_RAN, None)
        if isinstance(ran, StepsRan):
            return ran
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    return None


class Gate:
    """Stops the pipeline when earlier steps found problems, reporting all of them at once."""

    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, ctx: Context) -> StepResult:
        if ctx.problems:
            raise CheckFailed(sorted(set(ctx.problems)))
        return Done("no problems")
