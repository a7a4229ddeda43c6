"""Who a request acts as, and what it may see and write: the Hub's token and namespace rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from starlette.requests import Request

from release.localhub.errors import HubError, repo_not_found
from release.localhub.records import RepoId, RepoMeta
from release.localhub.storage import Storage
from release.localhub.wire import base_url

BAD_CREDENTIALS = "Invalid credentials in Authorization header"  # the client keys off this exact text
FORBIDDEN_READ_TOKEN = "You have read access but not the required permissions for this operation."


@dataclass(frozen=True)
class Account:
    """Who a token acts as. `orgs=None` (a one-user rehearsal) may write in every namespace; otherwise
    only in its own name and its orgs', as on the Hub."""

    name: str
    role: str = "write"  # "read" or "write"
    orgs: Mapping[str, str] | None = None  # org name -> its full name
    fullname: str = ""

    def member_of(self, namespace: str) -> bool:
        return self.orgs is None or namespace.lower() in {self.name.lower(), *(o.lower() for o in self.orgs)}


def accounts(tokens: Mapping[str, str | Account], username: str) -> dict[str, Account]:
    """Each token's account: a bare role ("read" or "write") acts as `username` in every namespace."""
    found = {t: a if isinstance(a, Account) else Account(username, a) for t, a in tokens.items()}
    bad_roles = {account.role for account in found.values() if account.role not in ("read", "write")}
    if bad_roles:
        raise ValueError(f"token roles must be 'read' or 'write', not {sorted(bad_roles)}")
    return found


def sees(account: Account | None, repo: RepoId, meta: RepoMeta) -> bool:
    """Whether the caller may know the repo exists: a private repo shows only to its namespace's members."""
    return not meta.private or (account is not None and account.member_of(repo.namespace))


class Auth:
    """The checks every route makes before it reads or writes, over the server's token -> account map."""

    def __init__(self, storage: Storage, tokens: Mapping[str, Account]) -> None:
        self.storage = storage
        self.tokens = tokens

    def account(self, request: Request) -> Account | None:
        """The caller, None if anonymous; a token we do not know is a 401 on every route."""
        header = request.headers.get("authorization")
        if header is None:
            return None
        scheme, _, token = header.partition(" ")
        account = self.tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if account is None:
            raise HubError(401, BAD_CREDENTIALS)
        return account

    def signed_in(self, request: Request) -> Account:
        account = self.account(request)
        if account is None:
            raise HubError(401, BAD_CREDENTIALS)
        return account

    def writable(
        self, request: Request, repo: RepoId | None = None, namespace: str | None = None, *, pull_request: bool = False
    ) -> Account:
        """The caller, allowed to write `repo` (which must exist) or to create repos in `namespace`.
        Anyone with a write token may open a pull request on a public repo."""
        account = self.signed_in(request)
        if repo is not None:
            meta = self.storage.repo_meta(repo)
            if meta is None or not sees(account, repo, meta):
                raise repo_not_found(repo.id)
            namespace = None if pull_request and not meta.private else repo.namespace
        if account.role != "write":
            raise HubError(403, FORBIDDEN_READ_TOKEN)
        if namespace is not None and not account.member_of(namespace):
            what = "create a repository" if repo is None else f"write to {repo.id}"
            raise HubError(403, f"You don't have the rights to {what} under the namespace {namespace}")
        return account

    def readable(self, request: Request, repo: RepoId) -> RepoMeta:
        account = self.account(request)
        meta = self.storage.repo_meta(repo)
        if meta is None or not sees(account, repo, meta):
            raise repo_not_found(repo.id)  # like the Hub, never confirm a private repo exists
        return meta

    def downloadable(self, request: Request, repo: RepoId) -> RepoMeta:
        """Readable, and for a gated repo the caller is a member (no access requests here)."""
        meta = self.readable(request, repo)
        account = self.account(request)
        if meta.gated and (account is None or not account.member_of(repo.namespace)):
            raise HubError(
                401 if account is None else 403,
                f"Access to {repo.type} {repo.id} is restricted and you are not in the authorized list. "
                f"Visit {base_url(request)}/{repo.url_prefix}{repo.id} to ask for access.",
                "GatedRepo",
            )
        return meta
