"""The Hub's URL checked without importing huggingface_hub: its import reads HF_ENDPOINT and raises a bare
ValueError for one it cannot parse (urllib's), so a malformed HF_ENDPOINT is refused before that import."""

from __future__ import annotations

import os
from urllib.parse import SplitResult, urlsplit

from release.errors import InputError, first_line, redact, register_secret

DEFAULT_ENDPOINT = "https://huggingface.co"
ENV = "HF_ENDPOINT"


def checked_endpoint(url: str, label: str) -> str:
    """`url` without its trailing slash, or InputError naming `label` (--endpoint or HF_ENDPOINT). Credentials
    in the URL (user:password@, for a proxy) are registered as secrets before anything can print them."""
    url = url.rstrip("/")
    parts = _parsed(url, label)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{redact(url)} is not an http(s) URL; {_fix(label)}", file=label)
    return url


def _parsed(url: str, label: str) -> SplitResult:
    try:
        parts = urlsplit(url)
        register_secret(parts.password)
        register_secret(parts.username)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0-65535
    except ValueError as exc:  # e.g. http://[::1 (an unclosed IPv6 address), http://host:99999
        raise InputError(f"{redact(url)} is not a valid URL ({first_line(exc)}); {_fix(label)}", file=label) from None
    return parts


def _fix(label: str) -> str:
    return "pass e.g. https://huggingface.co" if label != ENV else "set it to e.g. https://huggingface.co, or unset it"


def check_env_endpoint() -> None:
    """Refuse a malformed HF_ENDPOINT in one line (exit 2) before huggingface_hub is imported: its import would
    end in a traceback, even where --endpoint names a good URL (the import reads the variable regardless). Only
    what breaks that import is refused here; the scheme is checked where the endpoint is used."""
    value = os.environ.get(ENV)
    if value:
        _parsed(value.rstrip("/"), ENV)
