"""What `init --files` leaves out of a folder, and why: hf-release's own output (a staged release, a spec folder,
the project's dist/ and artifacts/), what a trainer leaves beside the model (checkpoint-N/, optimizer, scheduler and
RNG states, training_args.bin, the run's metrics files, event files and log folders, training scripts), and the
`--exclude` patterns; with `--include`, only what its patterns name (as `hf upload --include/--exclude`). What a
default rule leaves out comes back only through an --include pattern that names it — its folder or its name written
out (`checkpoint-4/`, `train.py`), never a wildcard alone (`--include "*.json"` takes no checkpoint's config). A file a
library loads — the code an auto_map names, and what that code imports relatively — is never left out by a default
rule: only by a pattern the user gave.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from release.init.loaded import code_roles
from release.spec import SPEC_NAME
from release.spec.project import ARTIFACTS, DIST
from release.util.jsonio import read_json_or_none

# Each group of files a default rule leaves out, as the one line init prints for it
OWN = "hf-release's own output (a staged release or a spec folder): never a source"
CHECKPOINT = "a trainer's checkpoint folder (its own config and weights, optimizer state)"
STATE = "a trainer's states (optimizer, scheduler, RNG, trainer_state.json)"
ARGS = "the trainer's training_args.bin (a pickle of its arguments)"
LOGS = "training logs (TensorBoard event files, runs/, wandb/, lightning_logs/)"
SCRIPT = "a training script"
METRICS = "a trainer's metrics of the run (Trainer.save_metrics)"
NOT_INCLUDED = "named by no --include pattern"

CHECKPOINT_DIR = re.compile(r"^(checkpoint|global_step|epoch)[-_]?\d+$")  # Trainer, DeepSpeed, Lightning-style
STATE_FILE = re.compile(
    r"^(optimizer|scheduler|scaler|lr_scheduler)\.(pt|bin|pth)$"
    r"|^rng_state(_\d+)?\.pth$|^random_states_\d+\.pkl$|^trainer_state\.json$"
)
LOG_DIRS = frozenset({"runs", "wandb", "lightning_logs", "mlruns"})
EVENT_FILE = re.compile(r"^events\.out\.tfevents\.")
# Trainer.save_metrics(split, metrics) writes SPLIT_results.json and all_results.json: a flat object of numbers
METRICS_FILE = re.compile(r"^(all|train|eval|test|predict)_results\.json$")
METRICS_READ_LIMIT = 1024 * 1024
SCRIPT_FILE = re.compile(r"^(train|finetune|fine_tune|pretrain|sft)([_-]\w*)?\.(py|sh)$|^\w+_train\.(py|sh)$")


@dataclass(frozen=True)
class LeftOut:
    path: str  # relative to the folder, POSIX
    reason: str  # one of the groups above, or the --exclude pattern that named it
    unit: str = ""  # what was left out whole, as init lists it: the folder a rule names ("run/checkpoint-4/"), else ""

    @property
    def shown(self) -> str:
        return self.unit or self.path


def select(
    folder: Path, files: Sequence[Path], root: Path, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> tuple[list[Path], list[LeftOut]]:
    """The files init takes from `folder` and those it leaves out (with why), in path order."""
    rel = {p: p.relative_to(folder).as_posix() for p in files}
    own = _own_folders(folder, root, files)
    kept: list[Path] = []
    left: list[LeftOut] = []
    # the code a kept config's auto_map reaches is the model's own: no default rule takes it away
    candidates = [p for p in files if not _in_any(rel[p], own) and _checkpoint(rel[p]) is None]
    loaded = set(code_roles(folder, candidates))
    for path in files:
        name = rel[path]
        if _in_any(name, own):  # never a source, whatever the patterns say
            left.append(LeftOut(name, OWN, next(f for f in own if name.startswith(f + "/")) + "/"))
            continue
        excluded = next((p for p in exclude if _matches(name, p)), None)
        included = [p for p in include if _matches(name, p)]
        leftover = None if path in loaded else _trainer_leftover(name, path)
        if excluded is not None:
            left.append(LeftOut(name, f"--exclude {excluded}"))
        elif include and not included:
            left.append(LeftOut(name, NOT_INCLUDED))
        elif leftover is not None and not any(leftover[1] in p for p in included):
            left.append(LeftOut(name, leftover[0], _folder_named(name, leftover[1])))
        else:
            kept.append(path)
    return kept, left


def _matches(path: str, pattern: str) -> bool:
    """`hf upload`'s rule (huggingface_hub.utils.filter_repo_objects): fnmatch on the path relative to the folder, a
    pattern ending in '/' standing for everything under that folder."""
    if pattern.endswith("/"):
        pattern += "*"
    return fnmatch.fnmatch(path, pattern)


def _own_folders(folder: Path, root: Path, files: Sequence[Path]) -> list[str]:
    """The folders under `folder` that hf-release wrote: the project's dist/ and artifacts/ when they lie inside it,
    and, wherever the staging or spec folder was configured, each staged release (release.json beside SHA256SUMS)
    and each spec folder (a release.toml) below the folder's top."""
    found: list[str] = []
    here = folder.resolve()
    for name in (DIST, ARTIFACTS):
        mine = (root / name).resolve()
        if mine != here and mine.is_relative_to(here):
            found.append(mine.relative_to(here).as_posix())
    for path in files:
        parent = path.parent
        if parent == folder:
            continue
        staged = path.name == "release.json" and (parent / "SHA256SUMS").is_file()
        if staged or path.name == SPEC_NAME:
            found.append(parent.relative_to(folder).as_posix())
    return found


def _in_any(path: str, folders: Sequence[str]) -> bool:
    return any(path.startswith(f + "/") for f in folders)


def _checkpoint(path: str) -> str | None:
    return next((part for part in path.split("/")[:-1] if CHECKPOINT_DIR.match(part)), None)


def _trainer_leftover(path: str, file: Path) -> tuple[str, str] | None:
    """The group of what a trainer leaves that `path` belongs to, and what an --include pattern must write out to
    take it in (its folder's or its own name); None: not such a file."""
    parts = path.split("/")
    name = parts[-1]
    if (checkpoint := _checkpoint(path)) is not None:
        return CHECKPOINT, checkpoint
    if (logs := next((part for part in parts[:-1] if part in LOG_DIRS), None)) is not None:
        return LOGS, logs
    if EVENT_FILE.match(name):
        return LOGS, "events.out.tfevents"
    if STATE_FILE.match(name):
        return STATE, name
    if name == "training_args.bin":
        return ARGS, name
    if SCRIPT_FILE.match(name):
        return SCRIPT, name
    if METRICS_FILE.match(name) and _numbers_only(file):
        return METRICS, name
    return None


def _numbers_only(file: Path) -> bool:
    """What save_metrics writes: a JSON object of numbers (train_loss, eval_runtime, epoch); an eval_results.json of
    another shape (a benchmark's own results) is not the trainer's."""
    data = read_json_or_none(file, max_bytes=METRICS_READ_LIMIT)
    return (
        isinstance(data, dict)
        and bool(data)
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in data.values())
    )


def summary(left: Sequence[LeftOut]) -> list[str]:
    """One line per reason: how many files, which (a folder a rule left out whole, once), and why."""
    groups: dict[str, list[str]] = {}
    for item in left:
        groups.setdefault(item.reason, []).append(item.shown)
    lines = []
    for reason, shown in groups.items():
        lines.append(f"{len(shown)} file{'s' if len(shown) != 1 else ''} ({_shown(shown)}): {reason}")
    return lines


def _folder_named(path: str, unit: str) -> str:
    """The folder of `path` that a rule left out whole (`unit` one of its parts: "run/checkpoint-4/"), else ""."""
    parts = path.split("/")[:-1]
    return "/".join(parts[: parts.index(unit) + 1]) + "/" if unit in parts else ""


def _shown(shown: list[str]) -> str:
    """Each file, or the folder it was left out with, once; at most 6 shown."""
    unique = list(dict.fromkeys(shown))
    more = len(unique) - 6
    return ", ".join(unique[:6]) + (f", and {more} more" if more > 0 else "")
