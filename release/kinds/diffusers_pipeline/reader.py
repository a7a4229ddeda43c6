"""A diffusers pipeline as `DiffusionPipeline.save_pretrained` writes it: `model_index.json` and one folder per
component.

`model_index.json` holds `_class_name` (the pipeline), `_diffusers_version` and one `name: [library, class]` entry
per component (`[null, null]` for an optional one left out; other keys are the pipeline's own arguments). Each
named component's folder must hold what its loader reads: a diffusers model its `config.json` (whose `_class_name`
is the class named) and `diffusion_pytorch_model.safetensors` (or `model.safetensors`, or shards with their index, or
a variant such as `.fp16.safetensors`); a transformers model a transformers `config.json` and `model.safetensors`
(checked as a transformers model); a scheduler `scheduler_config.json`; a tokenizer its vocabulary files; a
feature extractor / image processor `preprocessor_config.json`. Input: the release's files, path_in_repo → local path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from release.errors import Problem
from release.formats.common import Files, join, one_line, read_json_object, under
from release.formats.safetensors_header import Weights, read_safetensors_header, read_weights
from release.formats.transformers_config import read_transformers_model

MAX_COMPONENTS = 64
WEIGHT_STEMS = ("diffusion_pytorch_model", "model")
VARIANT = re.compile(r"^(?:diffusion_pytorch_model|model)\.(?P<variant>[A-Za-z0-9_-]+)\.safetensors$")
VOCABULARY = ("tokenizer.json", "vocab.json", "vocab.txt", "spiece.model", "tokenizer.model", "sentencepiece.bpe.model")
FIX = "save the pipeline again with diffusers' save_pretrained"
# The pipeline class → the Hub's pipeline_tag; the first pattern that matches wins (task words before model families).
PIPELINE_TAGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), tag)
    for p, tag in (
        (
            r"(Img2Img|ImageToImage|Inpaint|InstructPix2Pix|Upscale|ControlNetImg2Img|Kontext|Edit|Layered)",
            "image-to-image",
        ),
        (r"(ImageToVideo|Img2Vid|I2V|StableVideoDiffusion)", "image-to-video"),
        (r"(TextToVideo|Text2Video|Video|^AnimateDiff|^CogVideoX|^Wan|^LTX|^Mochi|^Allegro|^Latte)", "text-to-video"),
        (r"(AudioLDM|MusicLDM|StableAudio)", "text-to-audio"),
        (
            r"^(DDPM|DDIM|PNDM|ScoreSdeVe|KarrasVe|LDMSuperResolution|LDM|DiT|Consistency|DanceDiffusion)Pipeline$",
            "unconditional-image-generation",
        ),
        (
            r"^(StableDiffusion|Flux|PixArt|Sana|Kandinsky|Wuerstchen|StableCascade|IF|Kolors|HunyuanDiT|Lumina|AuraFlow|"
            r"LatentConsistencyModel|QwenImage|CogView|HiDream|Chroma|Cosmos|Amused|UniDiffuser|LDMTextToImage|AltDiffusion|Ideogram|"
            r"Krea|GlmImage|NucleusMoEImage|ZImage|OvisImage|PRX|Helios)",
            "text-to-image",
        ),
    )
)


@dataclass(frozen=True)
class Component:
    name: str  # the folder, as model_index.json names it ("unet", "text_encoder", …)
    library: str  # "diffusers", "transformers", …
    class_name: str  # as model_index.json names it
    role: str  # "model", "scheduler", "tokenizer", "processor" or "other"
    config_file: str | None  # its config, path in the repo
    weight_files: tuple[str, ...]  # safetensors files read (models)
    variant: str | None  # e.g. "fp16" for diffusion_pytorch_model.fp16.safetensors
    parameter_count: int | None  # from the safetensors headers (models)
    dtype: str | None  # the dtype holding most parameters (models)


@dataclass(frozen=True)
class PipelineFacts:
    pipeline_class: str  # `_class_name`
    diffusers_version: str | None
    pipeline_tag: str | None  # from the pipeline class; None when the table does not know it
    components: tuple[Component, ...]
    absent: tuple[str, ...]  # components saved as [null, null]

    @property
    def parameter_count(self) -> int:
        return sum(c.parameter_count or 0 for c in self.components)


def component_folders(index: object) -> frozenset[str]:
    """The component folders model_index.json names (`name: [library, class]`; none when it is not a JSON object):
    init gives every file in them role `component` (the registry's `named_by`), leniently, since
    `read_diffusers_pipeline` says what is wrong with an entry."""
    if not isinstance(index, dict):
        return frozenset()
    return frozenset(k for k, v in index.items() if not k.startswith("_") and isinstance(v, list) and v != [None, None])


def pipeline_tag_for(class_name: str) -> str | None:
    return next((tag for pattern, tag in PIPELINE_TAGS if pattern.search(class_name)), None)


def _role(library: str, class_name: str) -> str:
    if library == "transformers":
        if class_name.endswith(("Tokenizer", "TokenizerFast")):
            return "tokenizer"
        return "processor" if class_name.endswith(("ImageProcessor", "FeatureExtractor", "Processor")) else "model"
    if library == "diffusers":
        return "scheduler" if class_name.endswith("Scheduler") else "model"
    return "other"


def _weights(files: Files, folder: str, class_name: str) -> tuple[Weights | None, str | None, list[Problem]]:
    weights, problems = read_weights(files, folder, WEIGHT_STEMS)
    if weights is not None or problems:
        return weights, None, problems
    for name in sorted(under(files, folder)):
        match = VARIANT.match(name)
        if match:
            label = join(folder, name)
            header, problems = read_safetensors_header(files[label], label)
            return (Weights((label,), None, header.tensors) if header else None), match["variant"], problems
    pickle = any(n.endswith(".bin") for n in under(files, folder))
    return (
        None,
        None,
        [
            Problem(
                join(folder, f"{WEIGHT_STEMS[0]}.safetensors"),
                f"is missing: {folder}/ has no weights for its "
                f"{class_name}"
                + (" (only a pickle .bin, which hf-release does not read)" if pickle else "")
                + f"; {FIX} (safe_serialization=True, the default)",
            )
        ],
    )


def _component(files: Files, folder: str, name: str, library: str, class_name: str) -> tuple[Component, list[Problem]]:
    role = _role(library, class_name)
    key, name = name, join(folder, name)  # the component's name in model_index.json; its folder, as a path in the repo
    inside = under(files, name)
    config_name = {
        "scheduler": "scheduler_config.json",
        "processor": "preprocessor_config.json",
        "tokenizer": "tokenizer_config.json",
    }.get(role, "config.json")
    config_file = join(name, config_name)
    if not inside:
        return Component(key, library, class_name, role, None, (), None, None, None), [
            Problem(
                name + "/",
                f"is missing: model_index.json names component '{key}' ({library} {class_name}) but the release "
                f"has no {name}/ folder; add it, or set '{key}' to [null, null] if the pipeline runs without it",
            )
        ]
    problems: list[Problem] = []
    config_class = None
    if role not in ("other", "tokenizer"):
        if config_name not in inside:
            problems.append(
                Problem(
                    config_file,
                    f"is missing: model_index.json names component '{key}' ({library} "
                    f"{class_name}), which {library} loads from it; {FIX}",
                )
            )
        elif not (role == "model" and library == "transformers"):
            config, problem = read_json_object(files[config_file], config_file)
            problems += [problem] if problem else []
            config_class = config.get("_class_name") if config else None
            if role == "model" and config is not None and config_class != class_name:
                problems.append(
                    Problem(
                        config_file,
                        f"has _class_name {config_class!r}, but model_index.json names '{key}' a "
                        f"{class_name}; diffusers would build a {class_name} from it, so {FIX}",
                    )
                )
    weights, variant = None, None
    if role == "model":
        if library == "transformers":  # checked as the transformers model it is (its config, layers, embedding)
            problems += read_transformers_model(files, name)[1]
        weights, variant, weight_problems = _weights(files, name, class_name)
        problems = list(dict.fromkeys(problems + weight_problems))  # a damaged header is read by both
    elif role == "tokenizer" and not any(v in inside for v in VOCABULARY):
        problems.append(
            Problem(
                join(name, "tokenizer.json"),
                f"is missing: {name}/ holds none of {', '.join(VOCABULARY)}, so "
                f"transformers' {class_name} has no vocabulary to load; {FIX}",
            )
        )
    return Component(
        key,
        library,
        class_name,
        role,
        config_file if config_name in inside else None,
        weights.files if weights else (),
        variant,
        weights.parameter_count if weights else None,
        weights.dtype if weights else None,
    ), problems


@one_line
def read_diffusers_pipeline(files: Files, folder: str = "") -> tuple[PipelineFacts | None, list[Problem]]:
    """`folder/model_index.json` and every component it names (`folder` "" for a pipeline at the repo's root)."""
    label = join(folder, "model_index.json")
    if label not in files:
        return None, [Problem(label, f"is missing; diffusers' DiffusionPipeline reads it first, so {FIX}")]
    index, problem = read_json_object(files[label], label)
    if problem is not None or index is None:
        return None, [problem] if problem else []
    pipeline = index.get("_class_name")
    if not isinstance(pipeline, str) or not pipeline:
        return None, [Problem(label, f"has no _class_name (the pipeline class, e.g. StableDiffusionPipeline); {FIX}")]
    entries = {k: v for k, v in index.items() if not k.startswith("_") and isinstance(v, list)}
    if len(entries) > MAX_COMPONENTS:
        return None, [
            Problem(label, f"names {len(entries):,} components, more than hf-release reads ({MAX_COMPONENTS}); {FIX}")
        ]
    problems: list[Problem] = []
    components, absent = [], []
    for name, entry in entries.items():
        if entry == [None, None]:
            absent.append(name)
            continue
        if (
            len(entry) != 2
            or not all(isinstance(part, str) and part for part in entry)
            or "/" in name
            or name in ("", ".", "..")
        ):
            problems.append(
                Problem(
                    label,
                    f"component '{name}' is {str(entry)[:80]}; diffusers expects [library, class] "
                    f"(or [null, null]); {FIX}",
                )
            )
            continue
        component, component_problems = _component(files, folder, name, entry[0], entry[1])
        components.append(component)
        problems += component_problems
    version = index.get("_diffusers_version")
    return PipelineFacts(
        pipeline,
        version if isinstance(version, str) else None,
        pipeline_tag_for(pipeline),
        tuple(components),
        tuple(absent),
    ), problems
