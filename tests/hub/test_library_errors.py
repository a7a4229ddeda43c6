"""The one table from library exceptions to exit codes and messages (release/hub/library_errors.py)."""

from __future__ import annotations

import subprocess
import sys

import click
import httpx2
import huggingface_hub.errors
import pytest

from release.errors import CheckFailed, InputError, Interrupted, RemoteError, UsageError
from release.hub.library_errors import LIBRARY_ERRORS, HubCall, Rule, Translated, translate

CALL = HubCall("org/model", "reading refs")


def test_every_oserror_huggingface_hub_defines_is_a_remote_failure_where_main_catches_it() -> None:
    """Not a local path's problem (exit 2) but the Hub's or its client's (exit 3), for each class the library has."""
    defined = [
        cls
        for cls in vars(huggingface_hub.errors).values()
        if isinstance(cls, type) and issubclass(cls, OSError) and cls.__module__.startswith("huggingface_hub")
    ]
    assert defined
    for cls in defined:
        rule = next(rule for rule in LIBRARY_ERRORS if not rule.in_hub_call and rule.matches(cls.__new__(cls)))
        assert rule.error is RemoteError, cls


def test_where_main_catches_it() -> None:
    missing = FileNotFoundError(2, "No such file or directory", "dist/v5/config.json")
    assert translate(missing) == Translated(
        InputError, "dist/v5/config.json", "No such file or directory; check the path, its permissions and free space"
    )
    assert translate(ConnectionResetError(104, "Connection reset by peer")).error is RemoteError
    assert translate(KeyboardInterrupt()) == Translated(Interrupted, "hf-release", "interrupted")
    assert translate(click.exceptions.Abort()) == Translated(Interrupted, "hf-release", "interrupted")
    assert translate(click.UsageError("No such command 'frobnicate'.")) == Translated(
        UsageError, "hf-release", "No such command 'frobnicate'."
    )
    assert translate(ValueError("a bug")) is None  # shown with its traceback, never hidden


def test_in_a_hub_call_the_line_names_the_repo_and_the_action() -> None:
    refused = translate(ConnectionRefusedError(111, "Connection refused"), CALL)
    assert refused == Translated(
        RemoteError,
        "org/model",
        "reading refs: cannot reach the Hub (ConnectionRefusedError: [Errno 111] Connection refused)",
    )
    timeout = translate(httpx2.ReadTimeout("timed out"), CALL)
    assert timeout is not None and timeout.message == "reading refs: cannot reach the Hub (ReadTimeout: timed out)"
    invalid = translate(huggingface_hub.errors.HFValidationError("Cannot have -- or .. in repo_id"), CALL)
    assert invalid == Translated(
        InputError, "org/model", "reading refs: huggingface_hub refuses it (Cannot have -- or .. in repo_id)"
    )
    assert translate(ValueError("a bug"), CALL) is None and translate(RuntimeError("a bug"), CALL) is None
    assert translate(KeyboardInterrupt(), CALL) is None  # Ctrl-C goes up to main untouched


def test_an_upload_given_up_is_reported_by_its_cause() -> None:
    try:
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except OSError as cause:
            raise RuntimeError("Error while uploading 'model.safetensors' to the Hub.") from cause
    except RuntimeError as exc:
        translated = translate(exc, CALL)
    assert translated == Translated(
        RemoteError,
        "org/model",
        "reading refs: Error while uploading 'model.safetensors' to the "
        "Hub: cannot reach the Hub (ConnectionResetError: [Errno 104] Connection reset by peer)",
    )


def test_the_hubs_refusal_of_the_card_metadata_is_a_check_that_failed() -> None:
    request = httpx2.Request("POST", "https://hub.example/api/models/org/model/commit/main")
    response = httpx2.Response(400, request=request, json={"error": "Invalid metadata in README.md."})
    try:
        try:
            raise huggingface_hub.errors.HfHubHTTPError("400", response=response)
        except huggingface_hub.errors.HfHubHTTPError as cause:
            raise ValueError('Invalid metadata in README.md.\n- "license" must be a string') from cause
    except ValueError as exc:
        translated = translate(exc, CALL)
    assert translated is not None and translated.error is CheckFailed and translated.file == "README.md"
    assert translated.message.startswith(
        'the Hub refuses the card\'s metadata ("license" must be a string); fix [card.metadata]'
    )
    assert translate(ValueError("Invalid metadata in README.md."), CALL) is None  # not the Hub's answer


def test_starting_the_cli_loads_no_library_to_match_its_exceptions() -> None:
    """The table names huggingface_hub's classes: `hf-release --version` pays for no huggingface_hub import."""
    code = (
        "import sys, release.cli; "
        "print(sorted(m for m in ('huggingface_hub', 'httpx2', 'jsonschema') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("rule", LIBRARY_ERRORS, ids=lambda rule: rule.catches[0])
def test_every_rule_names_classes_that_exist(rule: Rule) -> None:
    import importlib

    for name in rule.catches:
        module, _, cls = name.partition(":")
        assert isinstance(getattr(importlib.import_module(module), cls), type), name
