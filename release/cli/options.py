"""The options several commands share, and what they resolve to: the project and its staged releases,
the release spec, the Hub token (read bounded, registered as a secret before anything could echo it)."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from release.cli.output import warn
from release.errors import InputError, register_secret

if TYPE_CHECKING:
    from release.spec import ReleaseSpec


def examples(*commands: str) -> str:
    """A command's help epilog: examples to copy, as `hf`'s help ends (huggingface_hub cli/_cli_utils.py
    generate_epilog). click's "\\b" keeps it from re-wrapping them into one paragraph."""
    return "\b\nExamples:\n" + "\n".join(f"  $ {command}" for command in commands)


def DIST(command: Any) -> Any:  # noqa: N802 - used as a decorator, like the options below
    """--root (the project: nearest folder upward holding artifacts/) and --dist (its staged releases)."""
    command = click.option(
        "--dist",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="Folder holding staged releases, one subfolder per version (default: ROOT/dist).",
    )(command)
    return click.option(
        "--root",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="The project folder holding artifacts/ (default: the nearest such folder from here upward).",
    )(command)


VERSION = click.argument("version", required=False)
SPEC = click.option(
    "--spec",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The release spec (default: artifacts/VERSION/release.toml).",
)
TEMPLATE = click.option(
    "--template",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A card template instead of the spec's or the default.",
)


def secret(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Option callback: the value (or each value) is a secret, hub serve's TOKEN:ROLE included."""
    for item in value if isinstance(value, tuple) else [value]:
        register_secret(item)  # before anything, even a usage error, could echo it
        register_secret(item and item.rpartition(":")[0])
    return value


def _endpoint(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value:
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(value)
        except ValueError:  # not a URL at all: publish/client.py's resolve_endpoint says so (redacted)
            return value
        register_secret(parts.password)  # before a usage error could echo the URL
        register_secret(parts.username)
    return value


TOKEN_FILE_LIMIT = 16 * 1024  # bytes: a token file is one short line
ON_COMMAND_LINE = "warning: {} puts the {} in the process list (ps) of this machine; use {} instead"


def warn_on_command_line(option: str, what: str, instead: str) -> None:
    warn(ON_COMMAND_LINE.format(option, what, instead))


def read_secret_lines(source: Path | None, from_stdin: bool, label: str) -> list[str]:
    """The non-empty lines of a token file or of standard input (bounded), each registered as a secret."""
    return [line for _, line in numbered_secret_lines(source, from_stdin, label)]


def numbered_secret_lines(source: Path | None, from_stdin: bool, label: str) -> list[tuple[int, str]]:
    """read_secret_lines, each line with its number in the file (for a message naming FILE:LINE)."""
    try:
        if from_stdin:
            data = sys.stdin.buffer.read(TOKEN_FILE_LIMIT + 1)
        else:
            assert source is not None
            with source.open("rb") as handle:
                data = handle.read(TOKEN_FILE_LIMIT + 1)
    except OSError as exc:
        raise InputError(f"cannot read the token: {exc.strerror or exc}", file=label) from None
    if len(data) > TOKEN_FILE_LIMIT:
        raise InputError(f"is larger than {TOKEN_FILE_LIMIT} bytes; a token file holds one token a line", file=label)
    text = data.decode("utf-8", errors="replace")
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    for _, line in lines:
        if not line.startswith(":"):  # `:write` holds no token, and hiding it would hide the word `:write` too
            register_secret(line)
        register_secret(line.rpartition(":")[0])
    if not lines:
        raise InputError("holds no token", file=label)
    return lines


def _token(token: str | None, token_file: Path | None, token_stdin: bool) -> str | None:
    """The token from --token (warned about), --token-file or --token-stdin; None leaves HF_TOKEN and the
    login cache to huggingface_hub."""
    given = [
        name
        for name, value in (("--token", token), ("--token-file", token_file), ("--token-stdin", token_stdin))
        if value
    ]
    if len(given) > 1:
        raise InputError(f"give the token one way, not {' and '.join(given)}", file="token")
    if token:
        warn_on_command_line("--token", "token", "HF_TOKEN, --token-file or --token-stdin")
        return token
    if token_file or token_stdin:
        label = str(token_file or "standard input")
        number, line = numbered_secret_lines(token_file, token_stdin, label)[0]
        if line.rpartition(":")[2] in ("read", "write"):  # `hub serve --token-file`'s TOKEN:ROLE: a sure 401
            raise InputError(
                f"holds TOKEN:{line.rpartition(':')[2]}, the form of `hf-release hub serve --token-file`; this "
                "--token-file holds the token alone: remove the role and its colon",
                file=f"{label}:{number}",
            )
        return line
    return None


def HUB_OPTIONS(command: Any) -> Any:  # noqa: N802 - used as a decorator, like the options above
    """--endpoint and the token options, resolved as the hf CLI resolves them; the command gets `token`."""

    @functools.wraps(command)
    def with_token(*args: Any, token: str | None, token_file: Path | None, token_stdin: bool, **kwargs: Any) -> Any:
        return command(*args, token=_token(token, token_file, token_stdin), **kwargs)

    with_token = click.option("--token-stdin", is_flag=True, help="Read the Hub token from standard input.")(with_token)
    with_token = click.option(
        "--token-file",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Read the Hub token from the first line of this file.",
    )(with_token)
    with_token = click.option(
        "--token",
        default=None,
        callback=secret,
        help="Hub token (visible in the process list: prefer the default HF_TOKEN, then the "
        "login cache, or --token-file / --token-stdin). Never printed.",
    )(with_token)
    return click.option(
        "--endpoint",
        default=None,
        callback=_endpoint,
        help="Hub URL (default: HF_ENDPOINT, then https://huggingface.co).",
    )(with_token)


def project_paths(root: Path | None, dist: Path | None) -> tuple[Path, Path]:
    """The project root and its dist folder, from --root/--dist or found upward from here."""
    from release.spec.project import DIST as DIST_NAME
    from release.spec.project import project_root

    found = project_root(root)
    if dist is None:
        dist = found / DIST_NAME
        if dist.is_relative_to(Path.cwd().resolve()):  # messages name `dist/v5`, not a long absolute path
            dist = dist.relative_to(Path.cwd().resolve())
    return found, dist


def spec_for(version: str | None, spec: Path | None, root: Path) -> ReleaseSpec:
    """The release spec named by --spec, else by VERSION (imported here: only build and card need it)."""
    from release.spec import find_spec, load_spec

    loaded = load_spec(spec if spec is not None else find_spec(version, root))
    if spec is not None and version is not None and version != loaded.version:
        raise InputError(
            f"says version {loaded.version!r}, the command line {version!r}; make them agree", file=str(spec)
        )
    return loaded


def staged_release(version: str | None, root: Path | None, dist: Path | None) -> Path:
    """The staged release of VERSION (or the only one staged) under the project's dist folder. The command
    reads it once, and refuses one holding another version's release (release/staged/__init__.py read_staged)."""
    from release.spec.versions import version_problem
    from release.staged.names import MANIFEST_NAME

    _, dist = project_paths(root, dist)
    if version:
        why = version_problem(version)
        if why:
            raise InputError(
                f"version {version!r} {why}; name a version such as v5, 1.0.0 or 2026-11-30", file="VERSION"
            )
        return dist / version
    staged = sorted(p for p in dist.iterdir() if (p / MANIFEST_NAME).is_file()) if dist.is_dir() else []
    if len(staged) != 1:
        raise InputError(f"found {len(staged)} staged releases; name the version, e.g. `v5`", file=str(dist))
    return staged[0]
