"""The one error the local Hub's code raises: it carries the HTTP answer the server gives for it."""

from __future__ import annotations

from collections.abc import Mapping


class HubError(Exception):
    """An error with the HTTP status, Hub error code and message the server should answer with."""

    def __init__(
        self, status: int, message: str, code: str | None = None, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = dict(headers or {})


def repo_not_found(repo_id: str) -> HubError:
    # The Hub's exact text: the client folds it into its own "Repository Not Found for url: …" line.
    return HubError(404, "Repository not found", "RepoNotFound")


def revision_not_found(revision: str) -> HubError:
    return HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
