"""Config-vs-weights rules transformers enforces at load time ("size mismatch for …"), read from the headers alone:
a classifier head has one row per label (`id2label`), and Whisper's first convolution takes `num_mel_bins` channels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from release.errors import Problem

# heads with one row per label; the first found is the head (RoBERTa's classifier.out_proj before classifier.dense)
CLASSIFIER_SUFFIXES = (
    "ForSequenceClassification",
    "ForImageClassification",
    "ForTokenClassification",
    "ForAudioClassification",
)
HEAD_TENSORS = ("classifier.out_proj.weight", "score.weight", "classifier.weight")
MEL_CONV = "encoder.conv1.weight"  # [d_model, num_mel_bins, 3] in Whisper (model.encoder.conv1.weight)


def head_problems(config: Mapping[str, Any], tensors: Mapping[str, Any], config_label: str) -> list[Problem]:
    problems = []
    arch = config.get("architectures")
    name = arch[0] if isinstance(arch, list) and arch and isinstance(arch[0], str) else ""
    labels = config.get("id2label")
    if name.endswith(CLASSIFIER_SUFFIXES) and isinstance(labels, dict) and labels:
        head = next(
            (t for suffix in HEAD_TENSORS for t in sorted(tensors) if t == suffix or t.endswith("." + suffix)), None
        )
        shape = getattr(tensors.get(head), "shape", None) if head else None
        if shape and shape[0] != len(labels):
            problems.append(
                Problem(
                    config_label,
                    f"id2label has {len(labels)} labels, but the classifier head {head} has {shape[0]} rows; "
                    f"transformers: 'size mismatch for {head}'; give id2label the head's labels, or save the model "
                    "again with save_pretrained",
                )
            )
    mels = config.get("num_mel_bins")
    conv = next((t for t in sorted(tensors) if t == MEL_CONV or t.endswith("." + MEL_CONV)), None)
    shape = getattr(tensors.get(conv), "shape", None) if conv else None
    if isinstance(mels, int) and not isinstance(mels, bool) and shape and len(shape) == 3 and shape[1] != mels:
        problems.append(
            Problem(
                config_label,
                f"num_mel_bins is {mels}, but {conv} takes {shape[1]} channels; transformers: 'size mismatch for "
                f"{conv}'; make num_mel_bins the feature extractor's feature_size the model was trained with",
            )
        )
    return problems
