"""`hf-release init`: start a release spec from a folder of files, or the next version from the previous one.

Sources are referenced where they are, never copied: relative to the spec inside the project's
artifacts/ tree (a sibling version folder included), absolute otherwise (weights on a node's disk). The spec is
written once and never overwritten; tomlkit keeps the previous spec's comments in `--from`.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import tomlkit
from tomlkit.items import String, StringType, Table

from release.errors import InputError, Problem
from release.init.detect import Detected, detect_kind, list_files, scan
from release.init.leave_out import LeftOut, select, summary
from release.kinds import role_kind
from release.kinds.kind import Kind
from release.spec import SPEC_NAME, load_spec, repo_id_problem, repo_id_refusal
from release.spec.placeholders import SUMMARY_MARK, init_summary
from release.spec.project import ARTIFACTS
from release.spec.versions import version_problem
from release.staged.names import RESERVED
from release.util.jsonio import read_json

# Card prose that names the release's own version (re-derived for the next one); file names and
# patterns (bench files, evidence) name files and are re-pointed, never rewritten.
VERSION_BEARING = ("title", "summary", "what", "text")

# The [card] keys of the sections below (release.card.headings.PROSE_SECTIONS: init sits below card)
READER_PROSE = ("intended_use", "limitations", "training_data")
# What readers of a model card look for that only the authors can say: each its own section of the card
# (headings.PROSE_SECTIONS), left out until written.
READER_SECTIONS = (
    "What readers of a model card expect; each is its own section, left out until written (Markdown):",
    'intended_use = "What it is for, and what it is not for."',
    'limitations = "Known failure modes, biases and risks."',
    'training_data = "What the weights were trained or fine-tuned on."',
)

PLACEHOLDERS = """\
# Words only you can write; the card leaves out what is not given. Uncomment and fill in:
# [card.lineage]
# intro = "What this release builds on:"
# [[card.lineage.entries]]
# role = "base-model"
# name = "org/base-model"
# by = "its authors"
# link = "https://huggingface.co/org/base-model"
# credit = "what it contributed"
# [[card.citations]]
# key = "author2026title"
# title = "Paper title"
# authors = ["First Author"]
# year = 2026
"""


# No library writes a LICENSE: without one init cannot tell the license, and build refuses the spec
# ("'license' is required") until [card.license] is given.
LICENSE_PLACEHOLDER = """\
# No LICENSE file in {folder} (no library writes one): build refuses this spec until [card.license] is
# given. Put the license text beside the files (e.g. LICENSE, added to [[files]] with role "license"), then:
# [card.license]
# id = "apache-2.0"                 # the Hub's license id
# text = "Apache License 2.0; see [LICENSE](LICENSE)."

"""
# The Hub metadata a library's own README.md may carry in its front matter (libraries that save a card beside the
# files write one), kept where [card.metadata] allows the value; its prose ("[More Information Needed]") is not.
CARRIED_METADATA = ("base_model", "library_name", "pipeline_tag", "tags", "language", "datasets")


# A claim only the authors can make, for a kind that requires it (build says so until it is given).
HONEST_NOTE = """\
# [card.honest_note]                # required by the {kind} kind
# label = "what kind of claim"
# subject = "what changed, e.g. the adapter"
# text = "What the evidence does and does not show."
"""


@dataclass(frozen=True)
class InitResult:
    spec: Path
    kind: str
    files: list[Detected]
    previous: str | None = None
    reused: list[str] | None = None  # path_in_repo of files found in the previous version's folder
    unlisted: list[str] | None = None  # files in the new version's folder that no source names (e.g. new eval results)
    left_out: list[LeftOut] | None = None  # files in --files that init did not take, each with why
    folder: Path | None = None  # --files
    no_license: bool = False  # no LICENSE among the files: build refuses the spec until [card.license] is given
    copied_prose: list[str] | None = None  # --from: the [card] prose keys copied with numbers in them


def one_line(text: object) -> str:
    """Text for a TOML comment: a newline (or any control character) in a folder's or a file's name would end the
    comment and write TOML of its own, so each is written escaped, as Python writes it (\\n)."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in str(text))


def _comment(text: str) -> Any:
    return tomlkit.comment(one_line(text))


def init_from_files(
    root: Path,
    version: str,
    files_dir: Path,
    repo_id: str,
    include: tuple[str, ...] | list[str] = (),
    exclude: tuple[str, ...] | list[str] = (),
) -> InitResult:
    """Write ROOT/artifacts/VERSION/release.toml for the files in FILES_DIR, roles and kind detected; what
    hf-release wrote and what a trainer leaves are left out (release/init/leave_out.py), and, as `hf upload` has
    them, what no `include` pattern names and what an `exclude` pattern names."""
    spec_path = _new_spec_path(root, version)
    why = repo_id_problem(repo_id)
    if why:
        raise InputError(f"{repo_id!r} {why}", file="--repo-id")
    if not files_dir.is_dir():
        raise InputError("is not a folder; pass the folder holding the release's files", file=str(files_dir))
    try:
        listed = list_files(files_dir)
    except ValueError as exc:
        raise InputError(f"{exc}; point --files at the release's own folder", file=str(files_dir)) from None
    taken, left_out = select(files_dir, listed, root, include, exclude)
    detected = [d for d in scan(files_dir, taken) if d.path.name != SPEC_NAME]  # an older spec is input, not a file
    _refuse_links_leaving(files_dir, detected)
    _refuse_names_not_utf8(files_dir, detected)
    # hf-release writes these itself (a README.md in the folder is the author's old card: its words go into [card])
    generated = [d for d in detected if d.path.relative_to(files_dir).as_posix().casefold() in RESERVED]
    detected = [d for d in detected if d not in generated]
    if not detected:
        held = f"holds no files init takes ({len(left_out)} left out: see --include)" if left_out else "holds no files"
        raise InputError(f"{held}; pass the folder holding the release's files", file=str(files_dir))
    carried = {
        k: v for d in generated if d.path.name.casefold() == "readme.md" for k, v in readme_metadata(d.path).items()
    }
    kind, why = detect_kind(detected, files_dir)  # the rule build uses
    told, told_why = detect_kind(detected, files_dir, list(carried.get("tags", ())))
    pinned = told.name != kind.name  # a kind only the left-out README shows: build cannot see it, so the spec names it
    kind, why = (told, told_why) if pinned else (kind, why)
    detected = _roles_of_the_kind(detected, kind.name, why)

    doc = tomlkit.document()
    doc.add(_comment(f"The release spec of {repo_id} {version}, written by `hf-release init` from {files_dir}."))
    doc.add(_comment("Each file's role was detected from its name and contents; check them, then `hf-release build`."))
    for left in generated:
        doc.add(_comment(f"Left out: {left.path.name} — hf-release generates it (put a README's words into [card])."))
    if carried:
        doc.add(_comment(f"Its front matter's {', '.join(carried)} are carried into [card.metadata]."))
    for line in summary(left_out):  # said where the author checks the spec: a [[files]] entry takes one in after all
        doc.add(_comment(f"Left out: {line}"))
    doc.add(tomlkit.nl())
    release = tomlkit.table()
    release.add("repo_id", repo_id)
    release.add("version", version)
    if pinned:
        release.add(
            "kind", tomlkit.item(kind.name).comment(one_line(f"detected: {why} (build does not see that README)"))
        )
    else:
        release.add(_comment(f'kind = "{kind.name}"  # detected: {why}; uncomment to fix it'))
    doc.add("release", release)
    files = tomlkit.aot()
    for found in detected:
        entry = tomlkit.table()
        source = _source_for(found.path, spec_path.parent, root)
        entry.add("source", source)
        entry.add("role", tomlkit.item(found.role).comment(one_line(found.why)))
        in_repo = found.path.relative_to(files_dir).as_posix()
        if in_repo != _default_path_in_repo(source):
            entry.add("path_in_repo", in_repo)
        files.append(entry)
    doc.add("files", files)
    doc.add(tomlkit.nl())
    card = _card_table(repo_id, kind, detected, files_dir)
    if carried:
        card.add("metadata", carried)
    _kind_values(card, kind, {d.path.relative_to(files_dir).as_posix(): d.path for d in [*detected, *generated]})
    doc.add("card", card)
    note = HONEST_NOTE.format(kind=kind.name) if "honest_note" in kind.card_requires else ""
    licensed = any(d.role == "license" for d in detected)
    no_license = "" if licensed else LICENSE_PLACEHOLDER.format(folder=one_line(files_dir))
    benchmarks = eval_results_proposal([d.path for d in detected if d.role == "eval"])
    _write_new(spec_path, tomlkit.dumps(doc) + "\n" + no_license + PLACEHOLDERS + note + benchmarks)
    return InitResult(spec_path, kind.name, detected, left_out=left_out, folder=files_dir, no_license=not licensed)


def _roles_of_the_kind(detected: list[Detected], kind: str, kind_why: str) -> list[Detected]:
    """A file that takes another kind's role by its name or folder (1_Pooling/ without the modules.json that makes a
    sentence-transformers release) is `extra` here, said why: the spec must build as the kind it was detected as."""
    return [
        Detected(d.path, "extra", f"{d.why}, but this release is {kind} ({kind_why})")
        if role_kind(d.role) not in (None, kind)
        else d
        for d in detected
    ]


EVAL_RESULTS_INTRO = """\
# The Hub's evaluation results (.eval_results/, shown on the model page and the benchmark's leaderboard): each
# lm-eval task whose dataset is a Hub dataset, proposed as that dataset's task. Only a dataset registered as a
# Benchmark on the Hub, with that task_id in its eval.yaml, shows a result; hf-release cannot tell offline which
# are. Check each on the Hub, fix dataset and task_id, then uncomment:
"""


def eval_results_proposal(paths: list[Path]) -> str:
    """Commented [[card.eval_results]] entries for the lm-eval results files' tasks on Hub datasets ("" if none)."""
    from release.evidence.eval_results import proposals
    from release.evidence.lm_eval import LmEvalError, load_results

    runs = []
    for path in paths:
        try:
            runs.append(load_results(path))
        except (LmEvalError, OSError):  # build names what is wrong with the file
            continue
    found = proposals(runs)
    if not found:
        return ""
    lines = [
        f"# [[card.eval_results]]\n# task = {_quoted(p['task'])}\n# metric = {_quoted(p['metric'])}\n"
        f"# dataset = {_quoted(p['dataset'])}\n# task_id = {_quoted(p['task_id'])}\n"
        for p in found
    ]
    return "\n" + EVAL_RESULTS_INTRO + "".join(lines)


def _quoted(value: str) -> str:
    return tomlkit.string(value).as_string()


def init_from_previous(root: Path, version: str, previous: str) -> InitResult:
    """Write the next version's spec from PREVIOUS's: version bumped, sources re-pointed, version-bearing text
    re-derived.

    A file of the same name already placed in the new version's folder replaces the previous one's;
    every other source points into the previous version's folder, so unchanged files are found where they are.
    """
    why = version_problem(previous)
    if why:  # a version names a folder under artifacts/, never a path out of it
        raise InputError(f"{previous!r} {why}; name the previous version, e.g. v5", file="--from")
    spec_path = _new_spec_path(root, version)
    old_path = root / ARTIFACTS / previous / SPEC_NAME
    if not old_path.is_file():  # load_spec's advice names build's --spec, which init has not
        have = sorted(p.parent.name for p in (root / ARTIFACTS).glob(f"*/{SPEC_NAME}"))
        raise InputError(
            f"no spec of {previous!r} at {old_path}; name a version that has one"
            + (f" ({', '.join(have)})" if have else "")
            + ", pass --root for another project, or start from files with --files DIR --repo-id ORG/NAME",
            file="--from",
        )
    old = load_spec(old_path)  # validated: the previous version must be a good spec
    doc = tomlkit.parse(old_path.read_text("utf-8"))
    doc["release"]["version"] = version
    reused: list[str] = []
    fresh: list[str] = []
    for entry, file_spec in zip(doc["files"], old.files, strict=True):
        new_source, from_previous = _repoint(file_spec.source, old_path.parent, spec_path.parent, root)
        default_before = file_spec.path_in_repo or _default_path_in_repo(file_spec.source)
        entry["source"] = new_source
        if (
            "path_in_repo" not in entry
            and default_before != _default_path_in_repo(new_source)
            and not glob.has_magic(new_source)
        ):
            entry["path_in_repo"] = default_before
        (reused if from_previous else fresh).append(default_before)
    _rederive_text(doc["card"], previous, version)
    _rederive_bench_label(doc["card"], previous, version, fresh)
    _rederive_signer(doc["card"], previous, version)
    copied = _prose_with_numbers(doc["card"], previous, version)
    _write_new(spec_path, tomlkit.dumps(doc))
    detected = [Detected(Path(f.source), f.role, "from " + previous) for f in old.files]
    # lm-eval names each results file by its time, so a new one never replaces the old by name: say so
    named = {
        (spec_path.parent / p).resolve()
        for f in doc["files"]
        for p in glob.glob(str(f["source"]), root_dir=spec_path.parent)
    }
    unlisted = sorted(
        p.name for p in spec_path.parent.iterdir() if p.is_file() and p.name != SPEC_NAME and p.resolve() not in named
    )
    return InitResult(
        spec_path,
        doc["release"].get("kind", "(detected at build)"),
        detected,
        previous,
        reused,
        unlisted,
        copied_prose=copied,
    )


# A number standing on its own (0.6016, 12%, 1,024 tok/s), not a digit inside a name (GLM-5.3-Flash, TP4, v5)
NUMBER = re.compile(r"(?<![\w.-])[-+]?\d[\d,.]*%?(?![\w-]|\.\w)")


def _prose_with_numbers(card: Any, old: str, new: str, prefix: str = "card") -> list[str]:
    """The dotted keys of the copied [card] prose that states numbers (a version's name aside): written about the
    previous version, they are the author's to re-read."""
    found: list[str] = []
    for key, value in card.items():
        dotted = f"{prefix}.{key}"
        if isinstance(value, str) and (key in VERSION_BEARING or key in READER_PROSE):
            if NUMBER.search(value.replace(old, "").replace(new, "")):
                found.append(dotted)
        elif isinstance(value, Table | dict) and key != "lineage":
            found += _prose_with_numbers(value, old, new, dotted)
    return found


def readme_metadata(path: Path) -> dict[str, Any]:
    """The Hub metadata of a README.md's YAML front matter that [card.metadata] allows (CARRIED_METADATA)."""
    import jsonschema
    import yaml

    from release.util import yamlio
    from release.util.schemas import load_schema

    try:
        text = path.read_text("utf-8") if path.stat().st_size <= 1024 * 1024 else ""
        match = re.match(r"^---\r?\n(.*?)\r?\n---\s*(\r?\n|$)", text, re.DOTALL)
        front = yamlio.load(match.group(1)) if match else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    if not isinstance(front, dict):
        return {}
    allowed = load_schema("card.schema.json")["properties"]["metadata"]["properties"]
    out: dict[str, Any] = {}
    for key in CARRIED_METADATA:
        value = front.get(key)
        if key == "tags" and isinstance(value, list):  # the Hub's own tags (base_model:adapter:ORG/NAME) have a '/'
            value = [t for t in value if jsonschema.Draft202012Validator(allowed[key]["items"]).is_valid(t)] or None
        if value is not None and jsonschema.Draft202012Validator(allowed[key]).is_valid(value):
            out[key] = value
    return out


def _new_spec_path(root: Path, version: str) -> Path:
    why = version_problem(version)
    if why:
        raise InputError(f"version {version!r} {why}; name a version such as v5, 1.0.0 or 2026-11-30", file="VERSION")
    spec_path = root / ARTIFACTS / version / SPEC_NAME
    if spec_path.exists():
        raise InputError(
            "already exists; init never overwrites a spec (edit it, or pick another version)", file=str(spec_path)
        )
    return spec_path


def _write_new(path: Path, text: str) -> None:
    data = text.encode("utf-8")  # before the file exists: a spec is written whole or not at all
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("xb") as f:  # "x": never replace a file that appeared meanwhile
        f.write(data)


def _refuse_links_leaving(files_dir: Path, detected: list[Detected]) -> None:
    """A symlink in the folder whose file lies outside it is never taken in unasked: `notes.txt ->
    ~/.cache/huggingface/token` would publish the token under the link's name."""
    folder = files_dir.resolve()
    leaving = [d.path for d in detected if not d.path.resolve().is_relative_to(folder)]
    if leaving:
        raise InputError(
            [
                Problem(
                    str(path),
                    f"is a symbolic link to {path.resolve()}, outside {files_dir}; init does not follow it: if that "
                    "file belongs in the release, copy it into the folder, or add it to the spec by hand "
                    "([[files]] source = its path); else remove the link",
                )
                for path in leaving
            ]
        )


def shown_name(path: Path | str) -> str:
    """A path as text that can be printed and written: bytes that are not UTF-8 (os.fsdecode's surrogates) as \\xff."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _refuse_names_not_utf8(files_dir: Path, detected: list[Detected]) -> None:
    """A name that is not UTF-8 can be written neither in the spec (TOML is UTF-8) nor on the Hub: said for the folder
    once, else for each file, before anything is written (the spec would be left empty, and init never overwrites)."""
    if shown_name(files_dir.resolve()) != str(files_dir.resolve()):
        bad = [files_dir]
    else:
        bad = [d.path for d in detected if shown_name(d.path) != str(d.path)]
    if bad:
        raise InputError(
            [
                Problem(
                    shown_name(path),
                    "its name is not UTF-8, which neither a release spec (TOML) nor the Hub can hold; rename it",
                )
                for path in bad
            ]
        )


def _source_for(path: Path, spec_dir: Path, root: Path) -> str:
    """Relative to the spec inside the project's artifacts/ tree (how far a spec may reach), absolute otherwise."""
    real = path.resolve()
    if real.is_relative_to((root / ARTIFACTS).resolve()):
        return Path(os.path.relpath(real, spec_dir.resolve())).as_posix()
    return str(real)


def _default_path_in_repo(source: str) -> str:
    """Where collect puts a source without path_in_repo (see release/builder/collect.py)."""
    relative = not os.path.isabs(source) and ".." not in PurePosixPath(source).parts
    return PurePosixPath(source).as_posix() if relative and not glob.has_magic(source) else PurePosixPath(source).name


def _repoint(source: str, old_dir: Path, new_dir: Path, root: Path) -> tuple[str, bool]:
    """The new spec's source for an old one, and whether it still points into the previous version."""
    if not glob.has_magic(source) and (new_dir / PurePosixPath(source).name).is_file():
        return PurePosixPath(source).name, False  # the user put a new copy in the new folder
    if os.path.isabs(source):
        return source, True
    if glob.has_magic(source):  # a pattern cannot be resolved to a file: re-point it as text
        return Path(os.path.relpath(old_dir.resolve() / source, new_dir.resolve())).as_posix(), True
    return _source_for(old_dir / source, new_dir, root), True


def _rederive_text(card: Any, old: str, new: str) -> None:
    """Card prose naming the old version as this release names the new one; the current bench label too."""
    word = re.compile(rf"(?<![\w.-]){re.escape(old)}(?![\w-]|\.\w)")
    for key, value in list(card.items()):
        if isinstance(value, str) and key in VERSION_BEARING and word.search(value):
            style = value.type if isinstance(value, String) else StringType.SLB
            card[key] = tomlkit.string(word.sub(new, value), multiline=style.is_multiline(), literal=style.is_literal())
        elif isinstance(value, Table | dict) and key != "lineage":
            _rederive_text(value, old, new)


def _rederive_bench_label(card: Any, old: str, new: str, fresh: list[str]) -> None:
    """The current bench label names the new version only when a current bench file is new in its folder:
    files reused from the old version were measured on it, and the card labels them so."""
    current = card.get("bench", {}).get("current") if isinstance(card.get("bench"), Table | dict) else None
    measured_anew = current is not None and any(
        fnmatch.fnmatchcase(path, str(pattern)) for path in fresh for pattern in current.get("files", ())
    )
    if current is not None and current.get("label") == old and measured_anew:
        current["label"] = new


def _rederive_signer(card: Any, old: str, new: str) -> None:
    """A keyless signer that is the workflow run of the old version's tag (…@refs/tags/v5) becomes the new tag's run."""
    signature = card.get("signature")
    if isinstance(signature, Table | dict) and str(signature.get("identity", "")).endswith(f"@refs/tags/{old}"):
        signature["identity"] = str(signature["identity"]).removesuffix(old) + new


def _kind_values(card: Table, kind: Kind, files: dict[str, Path]) -> None:
    """The [card] values the kind reads from what its library wrote (Kind.init_card), then its marked placeholders
    for what only the author can give (Kind.card_placeholders), each under its dotted key with its comment."""
    values = dict(kind.init_card(files)) if kind.init_card is not None else {}
    values.update({p.key: (p.value, p.comment) for p in kind.card_placeholders})
    for dotted, (value, comment) in values.items():
        *tables, key = dotted.split(".")
        node = card
        for name in tables:
            if name not in node:
                node.add(name, tomlkit.table())
            node = node[name]
        node.add(key, tomlkit.item(value).comment(one_line(comment)))


def _card_table(repo_id: str, kind: Kind, detected: list[Detected], files_dir: Path) -> Table:
    """What the files give: the title, a factual summary, the license id from the LICENSE text, the evidence files."""
    card = tomlkit.table()
    card.add("title", repo_id)  # org/name, as the Hub's best cards title themselves
    card.add("summary", tomlkit.item(_summary(repo_id, kind, detected)).comment(SUMMARY_MARK))
    for line in READER_SECTIONS:
        card.add(tomlkit.comment(line))
    license_file = next((d for d in detected if d.role == "license"), None)
    if license_file is not None and license_file.license_id is not None:
        name = license_file.path.relative_to(files_dir).as_posix()
        card.add(
            "license", {"id": license_file.license_id, "text": f"{license_file.license_id}; see [{name}]({name})."}
        )
    elif license_file is not None:  # not a text hf-release knows: the repo's own license, linked
        name = license_file.path.relative_to(files_dir).as_posix()
        card.add(_comment(f"{name} was not recognised as a common license: check id and name"))
        card.add(
            "license",
            {
                "id": "other",
                "name": f"{repo_id.split('/', 1)[1].lower()}-license",
                "link": name,
                "text": f"See [{name}]({name}).",
            },
        )
    target = _target_model(detected) if "usage.target_model" in kind.card_requires else None
    if target is not None:
        card.add("usage", tomlkit.item({"target_model": target}))
        card["usage"].comment("the model the launcher serves")
    bench = _current_bench(d for d in detected if d.role == "bench")
    if bench:
        section = tomlkit.table()
        section.add("text", f"llm-inference-bench results ({len(bench)} file{'s' if len(bench) != 1 else ''}).")
        section.add("current", tomlkit.item({"label": "current", "files": bench}))
        section["current"].comment("the fullest grid; other bench files ship too, outside the table")
        card.add("bench", section)
    return card


def _current_bench(bench: Iterable[Detected]) -> list[str]:
    """The bench files the card's table shows: the fullest (then newest) grid first, then files adding only new cells
    (a cell measured twice — an older grid, a recheck — would make the table ambiguous)."""
    cells, stamps = {}, {}
    for d in bench:
        data = read_json(d.path)
        cells[d.path.name] = {(c.get("concurrency"), c.get("context_tokens")) for c in data.get("results", [])}
        stamps[d.path.name] = str(data.get("metadata", {}).get("timestamp", ""))
    chosen: list[str] = []
    taken: set[tuple[object, object]] = set()
    for name in sorted(cells, key=lambda n: (len(cells[n]), stamps[n], n), reverse=True):  # fullest, then newest
        if not cells[name] & taken:
            chosen.append(name)
            taken |= cells[name]
    return sorted(chosen)


def _target_model(detected: list[Detected]) -> str | None:
    """The ORG/NAME model the vLLM launcher serves: the target model a kind may require in [card.usage]."""
    from release.evidence.launcher import read_launcher, read_launcher_text

    for launcher in (d for d in detected if d.role == "launcher"):
        try:
            serves = read_launcher(read_launcher_text(launcher.path), launcher.path.parent).serves
        except (OSError, ValueError):
            continue
        model = next((s.model for s in serves if s.model and not repo_id_refusal(s.model)), None)
        if model:
            return model
    return None


def _summary(repo_id: str, kind: Kind, detected: list[Detected]) -> str:
    """One sentence of facts the files state (architecture, weight files), never a claim about quality."""
    config = next((d for d in detected if d.role == "config"), None)
    architectures: list[Any] = []  # config.json's, as it gives them
    if config is not None:
        try:
            data = read_json(config.path)
            architectures = data.get("architectures") or []
        except (OSError, ValueError, RecursionError, AttributeError):
            architectures = []
    shards = sum(d.role == "weights" for d in detected)
    if kind.describe is not None:
        what = kind.describe(detected, architectures)
    else:
        what = f"a {', '.join(map(str, architectures))} model" if architectures else "a model"
    return init_summary(repo_id.split("/", 1)[1], what, kind.name, shards)
