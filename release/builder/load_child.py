"""The load proof's child (run by path with the interpreter that has the library: builder/proof.py): runs the card's
loading code on the staged folder and writes what the library reported to a JSON file.

Imports nothing of release/ (that interpreter may not have hf-release), and the libraries only through importlib.
Offline, bounded and without the model's own code are the parent's doing (environment, rlimits, timeout); here:
- every `from_pretrained` of the library that reports loads (the kind's LoadProof.load_reports) reports its
  missing / unexpected / mismatched keys (output_loading_info),
  reads local files only, and loads on the meta device when the parent asks (no weight bytes in memory);
- without --trust-remote-code, opening a .py file of the release or of the modules cache is refused (an audit
  hook: the library copies a shipped code file before importing it), whatever the code asks.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import sys
from typing import Any


def _refuse_shipped_code(folders: list[str]) -> None:
    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and args and isinstance(args[0], str) and args[0].endswith(".py"):
            if any(args[0].startswith(folder) for folder in folders):
                raise PermissionError(f"{args[0]}: the model's own code runs only with --trust-remote-code")

    sys.addaudithook(hook)


def _hook_reports(where: str, meta: bool, reports: list[dict[str, Any]]) -> None:
    """Wrap a library's model base class's from_pretrained (`where`: "module:Class", transformers' PreTrainedModel,
    diffusers' ModelMixin; both take output_loading_info): every model the card's code loads records its load report
    (also a model another library loads through it)."""
    module, _, name = where.partition(":")
    pretrained = getattr(importlib.import_module(module), name)
    original = pretrained.from_pretrained.__func__

    def from_pretrained(cls: Any, *args: Any, **kwargs: Any) -> Any:
        asked = kwargs.get("output_loading_info", False)
        kwargs["output_loading_info"] = True
        kwargs.setdefault("local_files_only", True)
        if meta:
            kwargs.setdefault("device_map", "meta")
        model, info = original(cls, *args, **kwargs)
        source = args[0] if args else kwargs.get("pretrained_model_name_or_path", "")
        reports.append(
            {
                "class": type(model).__name__,
                "from": str(source),  # the release's folder, or another model's id (an adapter's base)
                "missing": sorted(map(str, info.get("missing_keys", ()))),
                "unexpected": sorted(map(str, info.get("unexpected_keys", ()))),
                "mismatched": sorted(str(m[0] if isinstance(m, tuple) else m) for m in info.get("mismatched_keys", ())),
                "errors": [str(e) for e in info.get("error_msgs", ())],
            }
        )
        return (model, info) if asked else model

    pretrained.from_pretrained = classmethod(from_pretrained)


class _Said(logging.Handler):
    """The library's own warnings during the load: its words when it loads with keys left out; those the kind names
    as refusals (LoadProof.refusing_warnings), from its logger or from `warnings.warn`, apart."""

    def __init__(self, refusing: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []
        self.refusals: list[str] = []
        self.refusing = refusing

    def emit(self, record: logging.LogRecord) -> None:
        self.heard(record.getMessage())

    def heard(self, message: str) -> None:
        self.lines.append(message[:2000])
        if any(words in message for words in self.refusing):
            self.refusals.append(message[:2000])

    def show(self, message: Warning | str, *args: Any, **kwargs: Any) -> None:  # warnings.showwarning's place
        # only a refusal: any library's other warnings (torch's meta-device no-ops, deprecations) are not the
        # words a failed load is told in
        if any(words in str(message) for words in self.refusing):
            self.heard(str(message))


OFFLINE_MISSES = ("LocalEntryNotFoundError", "OfflineModeIsEnabled")  # huggingface_hub's: not in the cache, offline


def _offline_miss(exc: BaseException) -> bool:
    """Whether the load failed only because a file it needs from the Hub is not in the cache (the library wraps
    huggingface_hub's error in its own: the chain is walked)."""
    seen: BaseException | None = exc
    for _ in range(20):
        if seen is None:
            return False
        if type(seen).__name__ in OFFLINE_MISSES:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def main(request_path: str) -> int:
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    result: dict[str, Any] = {"ok": False}
    reports: list[dict[str, Any]] = []
    said = _Said(request.get("refusing_warnings", []))
    if said.refusing:
        import warnings

        warnings.simplefilter("always")
        warnings.showwarning = said.show
    try:
        if not request["trust_remote_code"]:
            _refuse_shipped_code([request["stage"], request["modules_cache"]])
        library = importlib.import_module(request["library"])
        result["version"] = str(getattr(library, "__version__", "unknown"))
        for where in request["load_reports"]:
            top = where.split(".", 1)[0]
            if importlib.util.find_spec(top) is not None:
                _hook_reports(where, request["meta"], reports)
                logging.getLogger(top).addHandler(said)
        exec(compile(request["code"], "<the card's code>", "exec"), {"__name__": "__card__"})
        result["ok"] = True
    except BaseException as exc:  # the library's own words, whatever it raised
        result["error"] = f"{type(exc).__name__}: {exc}"[:4000]
        result["offline_miss"] = _offline_miss(exc)
    result["loads"], result["said"], result["refusals"] = reports, said.lines[-20:], said.refusals[:5]
    with open(request["result"], "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
