"""The release spec: one declarative TOML file per version, validated against a JSON Schema."""

from __future__ import annotations

import difflib
import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from release.errors import InputError, Problem, first_line
from release.spec.project import ARTIFACTS
from release.spec.versions import version_problem
from release.util.schemas import load_schema

if TYPE_CHECKING:  # jsonschema and referencing are imported where a schema is checked: ~0.1 s of every start-up
    import jsonschema
    from referencing import Registry

SPEC_NAME = "release.toml"
HUB_LISTS = "hub-licenses.json"
REPO_ID_FORMAT = "hf-repo-id"  # a JSON Schema format: a string repo_id_problem finds nothing wrong with
MAX_SPEC_BYTES = 1024 * 1024


@dataclass(frozen=True)
class FileSpec:
    """One `[[files]]` entry: where a file comes from, where it lands, what it is."""

    source: str
    role: str
    path_in_repo: str | None = None
    digests: tuple[str, ...] = ()
    expect: dict[str, str] = field(default_factory=dict)
    check_shapes: bool = True


@dataclass(frozen=True)
class ReleaseSpec:
    path: Path
    sha256: str
    repo_id: str
    version: str
    files: tuple[FileSpec, ...]
    card: dict[str, Any]
    kind: str | None = None  # `[release] kind`; None: detected from the files

    @property
    def root(self) -> Path:
        """The folder relative sources are resolved against."""
        return self.path.parent

    @property
    def reach(self) -> Path:
        """The folder relative sources may not escape: the artifacts/ tree for a spec at
        artifacts/VERSION/release.toml (so v6 may reuse v5's files), else the spec's own folder."""
        return self.root.parent if self.path.name == SPEC_NAME and self.root.parent.name == ARTIFACTS else self.root


def spec_schema() -> dict[str, Any]:
    """spec.schema.json with [card]'s schema, and its `kind` and `role` enums generated from the kinds registry
    (at each load, never cached: a kind registered at run time is allowed at once)."""
    schema = with_registry_enums(load_schema("spec.schema.json"))
    schema["properties"] = {**schema["properties"], "card": load_schema("card.schema.json")}
    return schema


def hub_lists() -> dict[str, Any]:
    """The Hub's license ids and base-model relations (hub-licenses.json), as the schemas refer to them."""
    return load_schema(HUB_LISTS)["$defs"]


def _registry() -> Registry:
    """What the spec schema's $refs resolve to: the Hub's lists, one file read by the card lint and the local Hub
    too."""
    from referencing import Registry, Resource

    return Registry().with_resource(f"hf-release/{HUB_LISTS}", Resource.from_contents(load_schema(HUB_LISTS)))


def with_registry_enums(schema: dict[str, Any]) -> dict[str, Any]:
    """The spec schema with `[release] kind` = every registered kind and `[[files]] role` = the core roles
    (the file's `$defs.core_role`) + the roles the kinds' files take (release/kinds/ REGISTRY): the shipped file
    holds no copy of the registry's lists, so adding a kind never edits it."""
    import copy

    from release.kinds.registry import kind_roles, names

    schema = copy.deepcopy(schema)
    release = schema["properties"]["release"]["properties"]
    release["kind"]["enum"] = names()
    role = schema["properties"]["files"]["items"]["properties"]["role"]
    role["enum"] = [*schema["$defs"]["core_role"]["enum"], *dict.fromkeys(r.name for r in kind_roles())]
    return schema


def find_spec(version_or_path: str | None, base: Path) -> Path:
    """`v5` → `artifacts/v5/release.toml`; a path to a .toml or a folder is taken as given."""
    if version_or_path is None:
        candidates = sorted(base.glob(f"artifacts/*/{SPEC_NAME}"))
        if len(candidates) != 1:
            raise InputError(
                f"found {len(candidates)} specs under artifacts/*/{SPEC_NAME}; name the version, e.g. `v5`",
                file=str(base / "artifacts"),
            )
        return candidates[0]
    given = Path(version_or_path)
    if given.suffix == ".toml":
        return given
    if given.is_dir():
        return given / SPEC_NAME
    why = version_problem(version_or_path)
    if why:
        raise InputError(
            f"version {version_or_path!r} {why}; name a version such as v5, 1.0.0 or 2026-11-30", file="VERSION"
        )
    return base / "artifacts" / version_or_path / SPEC_NAME


def load_spec(path: Path) -> ReleaseSpec:
    """Read and validate a spec; every schema problem is reported at once with its key path and line."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_SPEC_BYTES + 1)  # bounded: a spec is a page of TOML, never megabytes
    except FileNotFoundError:
        artifacts = path.parent.parent
        if artifacts.name == "artifacts" and not artifacts.is_dir():  # not in a project at all
            raise InputError(
                "release spec not found: no artifacts/ folder here or above; run hf-release from your project's "
                "folder, pass --root, or start a release with `hf-release init`",
                file=str(artifacts.parent),
            ) from None
        raise InputError("release spec not found; create it or pass --spec", file=str(path)) from None
    except OSError as exc:
        raise InputError(
            f"cannot be read ({exc.strerror}); pass the path of a readable release.toml", file=str(path)
        ) from None
    if len(raw) > MAX_SPEC_BYTES:
        raise InputError(
            f"is larger than {MAX_SPEC_BYTES // 1024} KiB; a release spec names files and words, not data — "
            "move long content into a file of the release",
            file=str(path),
        )
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text; save the spec as UTF-8", file=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", file=str(path)) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4300 digits, arrays nested too deeply
        reason = str(exc).split(";")[0] or "nested too deeply"  # drop Python's advice about its own limits
        raise InputError(f"not valid TOML: {reason}; shorten or fix that value", file=str(path)) from None

    import jsonschema

    validator = jsonschema.Draft202012Validator(spec_schema(), format_checker=_format_checker(), registry=_registry())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    meant = _knock_on(errors)
    problems = [
        Problem(_where(path, text, list(err.absolute_path)), _describe(err))
        for err in errors
        if not (
            err.validator == "required"
            and _missing(err)
            and all((tuple(err.absolute_path), name) in meant for name in _missing(err))
        )
    ]
    if problems:
        raise InputError(problems)

    release = data["release"]
    _check_version(path, text, release["version"])
    _check_signer_tag(path, text, data["card"].get("signature"), release["version"])
    files = tuple(
        FileSpec(
            source=f["source"],
            role=f["role"],
            path_in_repo=f.get("path_in_repo"),
            digests=tuple(f.get("digests", ())),
            expect=dict(f.get("expect", {})),
            check_shapes=f.get("check_shapes", True),
        )
        for f in data["files"]
    )
    return ReleaseSpec(
        path=path.resolve(),
        sha256=hashlib.sha256(raw).hexdigest(),
        repo_id=release["repo_id"],
        version=release["version"],
        files=files,
        card=data["card"],
        kind=release.get("kind"),
    )


def _check_version(path: Path, text: str, version: str) -> None:
    """The version is a valid tag and, for artifacts/VERSION/release.toml, the folder's name."""
    where = _where(path, text, ["release", "version"])
    why = version_problem(version)
    if why:
        raise InputError(
            f"{version!r} {why}; a version is also the Hub tag: use e.g. v5, 1.0.0 or 2026-11-30", file=where
        )
    folder = path.resolve().parent
    if path.name == SPEC_NAME and folder.parent.name == ARTIFACTS and folder.name != version:
        raise InputError(
            f"says {version!r} but the spec is in artifacts/{folder.name}/; make the folder name and the version agree",
            file=where,
        )


# A keyless signer that is a workflow run for a tag: `…/release.yml@refs/tags/v5` (GitHub's workflow ref).
SIGNER_TAG = re.compile(r"@refs/tags/([^/@\s]+)$")


def _check_signer_tag(path: Path, text: str, signature: dict[str, Any] | None, version: str) -> None:
    """A keyless identity naming a tag names this version's: the v6 tag's workflow signs as …@refs/tags/v6,
    and a card telling readers to verify against refs/tags/v5 would fail every reader's check."""
    match = SIGNER_TAG.search((signature or {}).get("identity") or "")
    if match and match.group(1) != version:
        raise InputError(
            f"names the tag {match.group(1)}, but this release is {version}: "
            f"the workflow run of tag {version} signs as …@refs/tags/{version}; "
            "fix the identity (init --from re-derives it)",
            file=_where(path, text, ["card", "signature", "identity"]),
        )


# Ids that validate_repo_id accepts, by its own rules (1–96 of [A-Za-z0-9_.-] a part, starting and ending with a
# word character; no '--' or '..'; not ending in '.git'), with a namespace and letters or digits at both ends of
# each part: answered without importing huggingface_hub's errors, which load its HTTP client (~0.2 s of the card
# lint). Any other id is asked of validate_repo_id itself, for its verdict and its words.
PLAIN_REPO_ID = re.compile(r"[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9])?/[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9])?", re.ASCII)


def repo_id_refusal(repo_id: str) -> str | None:
    """Why the Hub refuses `repo_id` as a repo's ORG/NAME, in huggingface_hub's words, or None.

    The one rule for every repo id hf-release takes (the spec's repo_id and the card's base_model, datasets
    and target model, `init --repo-id`, push's preflight): huggingface_hub's validate_repo_id, with the
    namespace it leaves optional required (a release is a repo of an org or a user)."""
    if (
        PLAIN_REPO_ID.fullmatch(repo_id)
        and "--" not in repo_id
        and ".." not in repo_id
        and not repo_id.endswith(".git")
    ):
        return None
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:  # its words, without the id it repeats (the message quotes it already)
        return (
            first_line(exc)
            .removesuffix(f": '{repo_id}'.")
            .removesuffix(f": '{repo_id}'. Use `repo_type` argument if needed.")
        )
    if repo_id.count("/") != 1:
        return "Repo id must be in the form 'namespace/repo_name'"
    return None


def repo_id_problem(repo_id: str) -> str | None:
    """Why the Hub would refuse this repo id, or None: found when the spec is read, not first by push
    after the card already names it."""
    why = repo_id_refusal(repo_id)
    return None if why is None else f"is not a repo id the Hub accepts ({why}); give it as ORG/NAME"


def _format_checker() -> jsonschema.FormatChecker:
    """The schemas' own formats only (jsonschema's would check e.g. "uri" where the schemas never asked)."""
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    # looked up when called, so the one rule is the function of this module's name (tests replace it)
    checker.checks(REPO_ID_FORMAT)(lambda value: not isinstance(value, str) or repo_id_problem(value) is None)
    return checker


def closest(word: str, allowed: list[str]) -> str | None:
    """The allowed word `word` is most likely a misspelling of (a value's, or a key's), or None."""
    near = difflib.get_close_matches(word.lower(), allowed, n=1, cutoff=0.6)
    return near[0] if near else None


def _knock_on(errors: list[jsonschema.ValidationError]) -> set[tuple[tuple[Any, ...], str]]:
    """(table's key path, key) of each required key that a misspelt key of the same table most likely meant: its
    "'summary' is required" follows from the misspelling, reported alone."""
    meant = set()
    for err in errors:
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            allowed = sorted(err.schema.get("properties", {}))
            for key in set(err.instance) - set(allowed):
                near = closest(key, allowed)
                if near and near not in err.instance:
                    meant.add((tuple(err.absolute_path), near))
                if near and isinstance(err.instance[key], dict):
                    # `[crad]` beside `[card.metadata]`: the keys written under the misspelt table are the ones
                    # `card` then lacks ("'summary' is required"), reported as the misspelling alone
                    meant |= {((*err.absolute_path, near), sub) for sub in err.instance[key]}
    return meant


def _missing(err: jsonschema.ValidationError) -> list[str]:
    return [name for name in err.validator_value if isinstance(err.instance, dict) and name not in err.instance]


def _describe(err: jsonschema.ValidationError) -> str:
    if err.validator == "format" and err.validator_value == REPO_ID_FORMAT:
        return f"{err.instance!r} {repo_id_problem(err.instance)}"
    if err.validator == "additionalProperties":
        unknown = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        allowed = sorted(err.schema.get("properties", {}))
        nears = {key: near for key in unknown if (near := closest(key, allowed))}
        if nears and len(nears) == len(unknown):  # as a value gets it: the closest key, not the whole list
            meant = ", ".join(f"{near!r}" + (f" for {key!r}" if len(nears) > 1 else "") for key, near in nears.items())
            return f"unknown key(s) {', '.join(unknown)}; check the spelling: did you mean {meant}?"
        return f"unknown key(s) {', '.join(unknown)}; check the spelling (allowed: {', '.join(allowed)})"
    if err.validator == "pattern":  # the schema's words for the form ("x-form"), never the raw regular expression
        return f"{err.instance!r} is not {err.schema.get('x-form', 'in the form this key takes')}"
    if err.validator == "required":
        # a schema property may say what to do when it is missing ("x-missing"): the fix, not only the rule
        missing = _missing(err)
        fixes = [err.schema.get("properties", {}).get(name, {}).get("x-missing") for name in missing]
        message = err.message.replace("is a required property", "is required")
        return "; ".join([message, *(fix for fix in fixes if fix)])
    if err.validator == "enum" and isinstance(err.instance, str):
        allowed = [str(v) for v in err.validator_value]
        near = closest(err.instance, allowed)
        hint = (
            f"did you mean {near!r}?"
            if near
            else f"allowed: {', '.join(allowed[:12])}{', …' if len(allowed) > 12 else ''}"
        )
        return f"{err.instance!r} is not one of the allowed values; {hint}"
    return err.message


def key_path(parts: list[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _where(path: Path, text: str, parts: list[Any]) -> str:
    """`release.toml:12 files[2].role` — the line is found by walking the key path through the text."""
    line = _locate(text, parts)
    label = key_path(parts) or "(top level)"
    return f"{path}:{line} {label}" if line else f"{path} {label}"


def _locate(text: str, parts: list[Any]) -> int | None:
    lines = text.splitlines()
    start, found = 0, None
    table: list[str] = []
    for part in parts:
        if isinstance(part, int):
            # the n-th [[array]] header of the table named so far
            header = re.compile(rf"^\s*\[\[\s*{re.escape('.'.join(table))}\s*\]\]")
            hits = [i for i in range(len(lines)) if header.match(lines[i])]
            if part >= len(hits):
                return found
            start, found = hits[part], hits[part] + 1
            continue
        table.append(str(part))
        key = re.compile(rf"^\s*(\[+\s*{re.escape('.'.join(table))}\s*\]|{re.escape(str(part))}\s*[=.])")
        for i in range(start, len(lines)):
            if key.match(lines[i]):
                start, found = i, i + 1
                break
    return found
