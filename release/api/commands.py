"""The API's functions: each command's one typed call (release/cli/calls.py), with paths given as str or Path,
and the exceptions of the libraries underneath (huggingface_hub's, the OS's) raised as the typed error the
command line would report for them (release/hub/library_errors.py), the library's exception as its cause."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import ParamSpec, TypeVar

from release.cli import calls
from release.cli.results import Built, Initialized, Pushed, Signed, StatusReport, Verified
from release.errors import ReleaseError

PathLike = str | os.PathLike[str]
P = ParamSpec("P")
R = TypeVar("R")


def _typed_errors(call: Callable[P, R]) -> Callable[P, R]:
    """`call`, raising a library's exception as the ReleaseError the command line maps it to (one that no rule
    maps, a bug, is raised as it is)."""

    @functools.wraps(call)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return call(*args, **kwargs)
        except ReleaseError:
            raise
        except Exception as exc:
            from release.hub.library_errors import translate

            translated = translate(exc)
            if translated is None:
                raise
            raise translated.raised() from exc

    return wrapped


def _path(value: PathLike | None) -> Path | None:
    return None if value is None else Path(value)


def _paths(values: Iterable[PathLike]) -> tuple[Path, ...]:
    if isinstance(values, (str, os.PathLike)):  # one path given where several may be
        return (Path(values),)
    return tuple(Path(v) for v in values)


@_typed_errors
def build(
    version: str | None = None,
    *,
    spec: PathLike | None = None,
    template: PathLike | None = None,
    since: str | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    root: PathLike | None = None,
    dist: PathLike | None = None,
    prove_with: PathLike | None = None,
    trust_remote_code: bool = False,
) -> Built:
    """`hf-release build`: stage, check, hash and describe a release into DIST/VERSION (`prove_with`: the Python
    whose library proves the card's code loads the release; `trust_remote_code`: that load may run its code)."""
    return calls.build(
        version,
        spec=_path(spec),
        template=_path(template),
        since=since,
        endpoint=endpoint,
        token=token,
        root=_path(root),
        dist=_path(dist),
        prove_with=str(prove_with) if prove_with is not None else None,
        trust_remote_code=trust_remote_code,
    )


@_typed_errors
def verify(
    version: str | None = None,
    *,
    remote: bool = False,
    download: bool = False,
    revision: str | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    signature: PathLike | None = None,
    public_key: PathLike | None = None,
    certificate_chain: Iterable[PathLike] = (),
    identity: str | None = None,
    oidc_issuer: str | None = None,
    peers: Iterable[PathLike] = (),
    allow_partial: bool = False,
    provenance: PathLike | None = None,
    trusted_root: PathLike | None = None,
    root: PathLike | None = None,
    dist: PathLike | None = None,
) -> Verified:
    """`hf-release verify`: the staged release against its manifest; its signature, peers' digest lists, build
    provenance bundle (`provenance`) and the Hub's copy (`remote`, `download`) when asked."""
    return calls.verify(
        version,
        remote=remote,
        download=download,
        revision=revision,
        endpoint=endpoint,
        token=token,
        signature=_path(signature),
        public_key=_path(public_key),
        certificate_chain=_paths(certificate_chain),
        identity=identity,
        oidc_issuer=oidc_issuer,
        peers=_paths(peers),
        allow_partial=allow_partial,
        provenance=_path(provenance),
        trusted_root=_path(trusted_root),
        root=_path(root),
        dist=_path(dist),
    )


@_typed_errors
def push(
    version: str | None = None,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    dry_run: bool = False,
    force_tag: bool = False,
    keep_extra: bool = False,
    delete_extra: bool = False,
    create_pr: bool = False,
    private: bool | None = None,
    overwrite_card: bool = False,
    allow_older: bool = False,
    allow_placeholder: bool = False,
    message: str | None = None,
    root: PathLike | None = None,
    dist: PathLike | None = None,
) -> Pushed:
    """`hf-release push`: one atomic commit on main plus the version tag, then the Hub's copy verified."""
    return calls.push(
        version,
        endpoint=endpoint,
        token=token,
        dry_run=dry_run,
        force_tag=force_tag,
        keep_extra=keep_extra,
        delete_extra=delete_extra,
        create_pr=create_pr,
        private=private,
        overwrite_card=overwrite_card,
        allow_older=allow_older,
        allow_placeholder=allow_placeholder,
        message=message,
        root=_path(root),
        dist=_path(dist),
    )


@_typed_errors
def status(
    *,
    local: bool = False,
    endpoint: str | None = None,
    token: str | None = None,
    root: PathLike | None = None,
    dist: PathLike | None = None,
) -> StatusReport:
    """`hf-release status`: every version's spec, staged release and Hub state; `local` asks no Hub."""
    return calls.status(local=local, endpoint=endpoint, token=token, root=_path(root), dist=_path(dist))


@_typed_errors
def init(
    version: str,
    *,
    files: PathLike | None = None,
    repo_id: str | None = None,
    previous: str | None = None,
    root: PathLike | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Initialized:
    """`hf-release init`: write artifacts/VERSION/release.toml from a folder of files (`files` + `repo_id`;
    `include`/`exclude`: patterns as `hf upload` has them) or from the `previous` version's spec."""
    return calls.init(
        version,
        files=_path(files),
        repo_id=repo_id,
        previous=previous,
        root=_path(root),
        include=tuple(include),
        exclude=tuple(exclude),
    )


@_typed_errors
def sign(
    version: str | None = None,
    *,
    private_key: PathLike,
    password: str | None = None,
    certificate: PathLike | None = None,
    certificate_chain: Iterable[PathLike] = (),
    root: PathLike | None = None,
    dist: PathLike | None = None,
) -> Signed:
    """`hf-release sign`: sign the staged release with an offline EC key (OpenSSF model signing)."""
    return calls.sign(
        version,
        private_key=Path(private_key),
        password=password,
        certificate=_path(certificate),
        certificate_chain=_paths(certificate_chain),
        root=_path(root),
        dist=_path(dist),
    )
