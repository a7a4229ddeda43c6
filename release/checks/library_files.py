"""Check the files a library loads beyond config and weights, by its loading rules: the release's own code (what
config's `auto_map` names, read with `ast`, never imported: release/formats/custom_code.py) and the processor
configs (AutoProcessor, AutoImageProcessor, AutoFeatureExtractor read them) — present where the architecture's task
takes inputs only a processor prepares (images, audio), and JSON objects."""

from __future__ import annotations

import posixpath
from pathlib import Path

from release.checks.common import read_json, run_per_file
from release.checks.model_files import JsonFile
from release.errors import CheckFailed, Problem
from release.formats import transformers_config as tc
from release.formats.custom_code import AUTO_MAP_FILES, code_files_named, parse_code
from release.pipeline import Context, Done, Skipped, StepResult

# the tasks whose inputs (pixels, waveforms) only a processor prepares: transformers' pipeline and the card's code
# load one from preprocessor_config.json / processor_config.json
PROCESSOR_TASKS = frozenset(
    {
        "image-classification",
        "object-detection",
        "zero-shot-object-detection",
        "image-segmentation",
        "image-text-to-text",
        "audio-classification",
        "automatic-speech-recognition",
    }
)
PROCESSOR_NAMES = ("preprocessor_config.json", "processor_config.json")


def load_processor(path: Path, label: str) -> JsonFile:
    data = read_json(path, label)
    if not isinstance(data, dict):
        raise CheckFailed(
            Problem(label, f"holds a JSON {type(data).__name__}; a processor config is a JSON object (save_pretrained)")
        )
    return JsonFile(data)


class CheckCode:
    """The code config.json's auto_map names is shipped, defines the classes named, and its relative imports are
    shipped too; every file of role `code` parses. Nothing is imported."""

    name = "check-code"

    def run(self, ctx: Context) -> StepResult:
        exists = {f.path_in_repo: f.staged for f in ctx.files}
        configs = []
        for f in ctx.files:
            if posixpath.basename(f.path_in_repo) in AUTO_MAP_FILES and f.role in ("config", "tokenizer", "processor"):
                try:
                    data = read_json(f.staged, f.path_in_repo)
                except CheckFailed:
                    continue  # the file's own check says it
                if isinstance(data, dict) and data.get("auto_map"):
                    configs.append((f.path_in_repo, data))
        code = ctx.by_role("code")
        if not configs and not code:
            return Skipped("no auto_map and no code files in this release")
        reached, problems = code_files_named(configs, exists)
        ctx.problems.extend(problems)
        for f in code:
            if f.path_in_repo not in reached:
                _, problem = parse_code(f.staged, f.path_in_repo)
                if problem is not None:
                    ctx.problems.append(problem)
        return Done(f"{len(reached)} code file(s) auto_map reaches, read statically (never imported)")


class CheckProcessor:
    name = "check-processor"

    def run(self, ctx: Context) -> StepResult:
        configs = [f for f in ctx.by_role("config") if posixpath.basename(f.path_in_repo) == "config.json"]
        if len(configs) == 1 and ctx.selected_kind().config_needs_processor:
            try:
                config = read_json(configs[0].staged, configs[0].path_in_repo)
            except CheckFailed:
                config = None
            arch = config.get("architectures") if isinstance(config, dict) else None
            if isinstance(config, dict) and isinstance(arch, list) and arch and isinstance(arch[0], str):
                task, _ = tc.head_of(arch[0], config)
                shipped = {posixpath.basename(f.path_in_repo) for f in ctx.by_role("processor")}
                if task in PROCESSOR_TASKS and not shipped & set(PROCESSOR_NAMES):
                    ctx.problem(
                        "preprocessor_config.json",
                        f"is missing: a {arch[0]} ({task}) takes inputs only its processor prepares, and transformers "
                        'cannot load one ("Can\'t load feature extractor / image processor"); save the processor '
                        "with save_pretrained beside the model",
                    )
        return run_per_file(ctx, "processor", load_processor)
