"""How transformers loads this release, from its files: the model's own code (`auto_map` → trust_remote_code), the
processor (AutoProcessor for a processor_config.json, AutoImageProcessor / AutoFeatureExtractor for a
preprocessor_config.json), a variant (only model.<variant>.safetensors → `variant=`), pickle weights. The card's
snippet is written from this, so that it loads what the release holds."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote

from release.formats.custom_code import auto_map_entries
from release.formats.pickle_weights import PICKLE_WEIGHTS, SAFETENSORS_VARIANT, variant_of


@dataclass(frozen=True)
class Loading:
    auto_map: tuple[str, ...] = ()  # the Auto classes config.json's auto_map names (the model's own code)
    code_files: tuple[str, ...] = ()  # the release's files of role `code`
    processor: str | None = None  # AutoProcessor, AutoImageProcessor or AutoFeatureExtractor
    variant: str | None = None  # every weights file is this variant's (fp16): from_pretrained needs variant=
    pickle: tuple[str, ...] = ()  # pickle weights files

    @property
    def trust_remote_code(self) -> bool:
        return bool(self.auto_map)

    def model_kwargs(self) -> str:
        """The from_pretrained arguments after revision: `, variant="fp16", trust_remote_code=True`."""
        return (f', variant="{self.variant}"' if self.variant else "") + (
            ", trust_remote_code=True" if self.trust_remote_code else ""
        )

    def auto_class(self, wanted: str) -> str:
        """The Auto class that loads the model: with its own code, one auto_map names (the head's when it does)."""
        if not self.auto_map or wanted in self.auto_map:
            return wanted
        models = [a for a in self.auto_map if a.startswith("AutoModel")]
        return models[0] if models else wanted

    def notes(self) -> list[str]:
        """The card's lines under the snippet: what the reader runs when loading this release."""
        out = []
        if self.trust_remote_code:
            files = ", ".join(f"`{f}`" for f in self.code_files) or "the code files config.json's auto_map names"
            out.append(
                f"This model ships its own code ({files}): `trust_remote_code=True` runs it on your machine, so "
                "review those files at this revision before loading."
            )
        if self.pickle:
            out.append(
                f"The weights are pickle files ({', '.join(f'`{f}`' for f in self.pickle)}), not safetensors: loading "
                "a pickle can run code; transformers loads them with `torch.load(weights_only=True)`."
            )
        return out


def loading_of(evidence: Any) -> Loading:
    """What config.json and a preprocessor config say (evidence: card/evidence.py Evidence); the files' roles are
    added by `with_files` once the card's files table is known."""
    config = next(iter(evidence.configs.values())).data if len(evidence.configs) == 1 else {}
    auto_map = tuple(dict.fromkeys(e.auto_class for e in auto_map_entries(config)))
    features = any(
        posixpath.basename(p) == "preprocessor_config.json" and "feature_extractor_type" in getattr(d, "data", {})
        for p, d in evidence.model_files.items()
    )
    return Loading(auto_map=auto_map, processor="AutoFeatureExtractor" if features else None)


def files_of(table: Any) -> list[tuple[str, str]]:
    """(path in repo, role) of each file row of the card's files table (card/facts.py files_table); a folder summed
    up in one row is left out."""
    out = []
    for row in table.rows:
        match = re.match(r"^\[.*\]\(([^)]+)\)$", row[0])
        if match is not None:
            out.append((unquote(match.group(1)), row[-1]))
    return out


def with_files(loading: Loading, files: list[tuple[str, str]]) -> Loading:
    """The loading with what the files' names and roles say: code files, the processor class, a variant, pickles."""
    roles = dict(files)
    names = {posixpath.basename(p) for p, r in roles.items() if r == "processor"}
    processor = None
    if "processor_config.json" in names:
        processor = "AutoProcessor"
    elif "preprocessor_config.json" in names:
        processor = loading.processor or "AutoImageProcessor"
    elif "video_preprocessor_config.json" in names:
        processor = "AutoVideoProcessor"
    weights = [posixpath.basename(p) for p, r in roles.items() if r == "weights"]
    variants = {variant_of(w) for w in weights}
    variant = None
    if weights and len(variants) == 1 and all(SAFETENSORS_VARIANT.match(w) or PICKLE_WEIGHTS.match(w) for w in weights):
        variant = variants.pop()
    return replace(
        loading,
        code_files=tuple(sorted(p for p, r in roles.items() if r == "code")),
        processor=processor,
        variant=variant,
        pickle=tuple(sorted(p for p, r in roles.items() if r == "weights" and p.endswith(".bin"))),
    )
