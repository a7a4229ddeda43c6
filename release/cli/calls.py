"""Each command as one typed call, without the command line: the click commands (release/cli/<command>.py) parse
their options and call these; the Python API (release/api, installed as `hf_release`) calls them too. Each
returns the result its command prints (release/cli/results.py: the JSON output is its `document()`) and raises
the typed errors of the exit-code table (release/errors.py).

A token given here is registered as a secret first, so no message can quote it; None leaves HF_TOKEN and the
login cache to huggingface_hub, as the command line does."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from release.cli.options import project_paths, spec_for, staged_release
from release.cli.results import Built, Initialized, Pushed, RemoteVerified, Signed, StatusReport, Verified
from release.errors import InputError, Problem, register_secret

if TYPE_CHECKING:
    from release.attestation import ProvenanceChecked
    from release.sign import SignatureKeys
    from release.staged import StagedRelease


def build(
    version: str | None = None,
    *,
    spec: Path | None = None,
    template: Path | None = None,
    since: str | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    root: Path | None = None,
    dist: Path | None = None,
    progress: bool = False,
    prove_with: str | None = None,
    trust_remote_code: bool = False,
) -> Built:
    """Stage, check, hash and describe a release into DIST/VERSION; `prove_with` names the Python whose library
    proves the card's code loads it, `trust_remote_code` lets that load run the release's own code."""
    from release.builder import build as run_build

    register_secret(token)

    def hub() -> Any:  # connects (and imports the Hub client) only when the previous version is read from the Hub
        from release.hub.client import connect

        return connect(endpoint, token)

    project, dist = project_paths(root, dist)
    return Built(
        run_build(
            spec_for(version, spec, project),
            dist,
            template=template,
            progress=progress,
            since=since,
            hub=hub,
            prove_with=prove_with,
            trust_remote_code=trust_remote_code,
        )
    )


def verify(
    version: str | None = None,
    *,
    remote: bool = False,
    download: bool = False,
    revision: str | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    signature: Path | None = None,
    public_key: Path | None = None,
    certificate_chain: tuple[Path, ...] = (),
    identity: str | None = None,
    oidc_issuer: str | None = None,
    peers: tuple[Path, ...] = (),
    allow_partial: bool = False,
    provenance: Path | None = None,
    trusted_root: Path | None = None,
    root: Path | None = None,
    dist: Path | None = None,
    progress: bool = False,
) -> Verified:
    """Prove the staged release matches its manifest, byte for byte; `remote` checks the Hub's listing at the
    tag, `remote` with `download` every byte the Hub serves."""
    from release.verify import verify_staged

    register_secret(token)
    if download and not remote:
        raise InputError("--download checks the Hub's copy: give it with --remote", file="--download")
    if revision is not None and not remote:
        raise InputError("--revision names what to check on the Hub; add --remote", file="--revision")
    if allow_partial and not peers:
        raise InputError("--allow-partial is about --peer lists: give one", file="--allow-partial")
    if trusted_root is not None and provenance is None:
        raise InputError("--trusted-root is what --provenance is checked against: give a bundle", file="--trusted-root")
    result = verify_staged(
        staged_release(version, root, dist),
        progress=progress,
        peers=list(peers),
        version=version,
        allow_partial=allow_partial,
    )
    m = result.manifest
    keys: SignatureKeys = {
        "public_key": public_key,
        "certificate_chain": tuple(certificate_chain),
        "identity": identity,
        "oidc_issuer": oidc_issuer,
    }
    if signature:
        from release.sign import verify_signature

        verify_signature(result.dist, signature=signature, **keys)
    attested = _provenance(result.staged, provenance, trusted_root, root) if provenance is not None else None
    if not remote:
        return Verified(result, signature, provenance=attested)

    from release.hub.client import connect
    from release.publish.verify_remote import verify_remote

    hub = connect(endpoint, token)
    at_revision = revision or m.version
    at = verify_remote(hub, result.staged, revision=at_revision, download=download)
    if signature:
        from release.sign import verify_remote_signature

        verify_remote_signature(hub, m, revision=at_revision, signature_name=signature.name, **keys)
    return Verified(
        result,
        signature,
        RemoteVerified(
            hub.repo_url(m.repo_id),
            revision,
            at["commit"],
            download,
            int(at["downloaded"]),
            signature.name if signature else None,
            int(at["reconstructed"]),
        ),
        provenance=attested,
    )


def _provenance(staged: StagedRelease, bundle: Path, trusted_root: Path | None, root: Path | None) -> ProvenanceChecked:
    """`verify --provenance`: the bundle checked against the repository the version's spec names in
    [card.attestation] (the card's `gh attestation verify --repo`)."""
    from release.attestation import verify_provenance

    project, _ = project_paths(root, None)
    spec = spec_for(staged.manifest.version, None, project)
    attestation = spec.card.get("attestation")
    if not isinstance(attestation, dict):
        raise InputError(
            "--provenance checks the release workflow's attestation, but the spec declares no [card.attestation] "
            "repository: add it (docs/github-actions.md)",
            file=str(spec.path),
        )
    return verify_provenance(staged, bundle, repository=attestation["repository"], trusted_root=trusted_root)


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
    root: Path | None = None,
    dist: Path | None = None,
    progress: bool = False,
) -> Pushed:
    """Publish the staged release: one atomic commit on main plus the version tag, then verify it remotely."""
    from release.publish.push import PushOptions
    from release.publish.push import push as run_push
    from release.spec import SPEC_NAME
    from release.spec.project import ARTIFACTS

    register_secret(token)
    staged = staged_release(version, root, dist)
    options = PushOptions(
        # the staged version's spec, wherever --dist is: its sources are compared with the staging
        spec=project_paths(root, dist)[0] / ARTIFACTS / staged.name / SPEC_NAME,
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
        progress=progress,
        message=message,
    )
    return Pushed(run_push(staged, options, version=version), dry_run)


def status(
    *,
    local: bool = False,
    endpoint: str | None = None,
    token: str | None = None,
    root: Path | None = None,
    dist: Path | None = None,
) -> StatusReport:
    """Every version under artifacts/: spec, staged release (changed since build?), tag on the Hub, Hub files
    match. `local`: the Hub is not asked; HF_HUB_OFFLINE set: neither, and the report says so."""
    from huggingface_hub import constants

    from release.status import project_status

    register_secret(token)
    project, dist = project_paths(root, dist)
    hub = None
    offline = not local and constants.is_offline_mode()  # HF_HUB_OFFLINE=1: what can be seen here, not exit 3
    if not (local or offline):
        from release.hub.client import connect

        hub = connect(endpoint, token)
    hub_errors: list[Problem] = []  # the Hub out of reach: the local rows still, then its line (exit 3)
    versions = project_status(project, dist, hub, hub_errors)
    return StatusReport(project, versions, offline=offline, hub_errors=hub_errors)


def init(
    version: str,
    *,
    files: Path | None = None,
    repo_id: str | None = None,
    previous: str | None = None,
    root: Path | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
) -> Initialized:
    """Write artifacts/VERSION/release.toml: from a folder of files (`files` and `repo_id`: roles and kind
    detected; `include`/`exclude`: patterns as `hf upload` has them), or from the `previous` version's spec."""
    from release.init import init_from_files, init_from_previous
    from release.spec.project import project_root

    project = project_root(root)
    if (files is None) == (previous is None):
        raise InputError("give either --files DIR --repo-id ORG/NAME, or --from VERSION", file="hf-release init")
    if previous is not None:
        if include or exclude:
            raise InputError(
                "--include and --exclude choose among --files; --from takes no patterns", file="hf-release init"
            )
        return Initialized(init_from_previous(project, version, previous), version)
    if repo_id is None:
        raise InputError("--files needs --repo-id ORG/NAME (the Hub repo to publish to)", file="hf-release init")
    assert files is not None, "one of --files and --from, and not --from"
    return Initialized(init_from_files(project, version, files, repo_id, include, exclude), version)


def sign(
    version: str | None = None,
    *,
    private_key: Path,
    password: str | None = None,
    certificate: Path | None = None,
    certificate_chain: tuple[Path, ...] = (),
    root: Path | None = None,
    dist: Path | None = None,
) -> Signed:
    """Sign the staged release (OpenSSF model signing) with an offline EC key; model.sig is pushed with it."""
    from release.sign import sign_release

    register_secret(password)
    return Signed(
        sign_release(
            staged_release(version, root, dist),
            private_key=private_key,
            password=password,
            certificate=certificate,
            chain=tuple(certificate_chain),
            version=version,
        )
    )
