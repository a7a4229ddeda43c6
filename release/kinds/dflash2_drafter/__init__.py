"""The DFlash2 drafter kind (the seed's release): a speculative-decoding drafter served by vLLM.

Its config.json schema and cross-field rules, its tensor inventory (release/schemas/dflash2-inventory.json,
checked over all shards together), its launcher rules (`method` "dflash", num_speculative_tokens =
block_size − 1), and the vLLM usage snippet of its card, whose speculative-decoding part is speculative.py.
Its card must have the honest note and the target model (init asks for both). How a config.json shows a
drafter is the registry's rule (release/kinds/registry.py REGISTRY).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from release.card.speculative import speculative_part
from release.card.text import CODE_WIDTH
from release.checks.common import schema_problems
from release.errors import Problem
from release.formats.safetensors_layout import CONFIG_DTYPES
from release.kinds.dflash2_drafter.inventory import expected_tensors
from release.kinds.draft_words import DRAFT_WORDS
from release.kinds.kind import Kind
from release.spec import ReleaseSpec


def config_problems(config: dict[str, Any], label: str) -> list[Problem]:
    problems = schema_problems("dflash2-config.schema.json", config, label)
    return problems or cross_field_problems(config, label)


def cross_field_problems(config: dict[str, Any], label: str) -> list[Problem]:
    problems = []
    layers, types = config["num_hidden_layers"], config["layer_types"]
    if len(types) != layers:
        problems.append(
            Problem(label, f"layer_types has {len(types)} entries but num_hidden_layers is {layers}; they must match")
        )
    dflash = config["dflash_config"]
    beyond = [i for i in dflash["target_layer_ids"] if i >= config["num_target_layers"]]
    if beyond:
        problems.append(
            Problem(
                label,
                f"dflash_config.target_layer_ids {beyond} are not below num_target_layers "
                f"{config['num_target_layers']}",
            )
        )
    if dflash["mask_token_id"] >= config["vocab_size"]:
        problems.append(
            Problem(
                label,
                f"dflash_config.mask_token_id {dflash['mask_token_id']} is not below vocab_size {config['vocab_size']}",
            )
        )
    dtypes = {config[k] for k in ("dtype", "torch_dtype") if k in config}
    if len(dtypes) > 1:
        problems.append(Problem(label, f"dtype and torch_dtype disagree ({' vs '.join(sorted(dtypes))})"))
    return problems


def tensor_problems(
    config: dict[str, Any], tensors: Mapping[str, Any], label: str, check_shapes: bool
) -> list[Problem]:
    """Names, count, dtypes and (optionally) shapes of all the weights against what config.json implies."""
    try:
        expected = expected_tensors(config)
    except ValueError as exc:
        return [Problem(label, f"cannot derive the tensor inventory from config.json: {exc}")]
    problems = []
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        detail = []
        if missing:
            detail.append(f"missing {len(missing)} ({few(missing)})")
        if unexpected:
            detail.append(f"unexpected {len(unexpected)} ({few(unexpected)})")
        problems.append(
            Problem(
                label,
                f"has {len(tensors)} tensors, config.json implies {len(expected)}: {'; '.join(detail)}; these weights "
                "do not belong to this config.json",
            )
        )
    want_dtype = CONFIG_DTYPES.get(config.get("dtype") or config.get("torch_dtype", ""), None)
    wrong_dtype = sorted(n for n, t in tensors.items() if want_dtype and t.dtype != want_dtype)
    if wrong_dtype:
        problems.append(
            Problem(
                label,
                f"{len(wrong_dtype)} tensors are not {want_dtype} as config.json says ({few(wrong_dtype)}); convert "
                "them or correct the dtype",
            )
        )
    if check_shapes:
        for name in sorted(set(expected) & set(tensors)):
            shape = expected[name][0]
            if tensors[name].shape != shape:
                problems.append(
                    Problem(
                        label,
                        f"tensor {name} has shape {list(tensors[name].shape)}, config.json implies {list(shape)}; the "
                        "weights and config.json disagree",
                    )
                )
    return problems


def few(names: list[str], limit: int = 3) -> str:
    return ", ".join(names[:limit]) + (f", … {len(names) - limit} more" if len(names) > limit else "")


def launcher_problems(launcher: Any, config: dict[str, Any] | None, label: str, repo_id: str) -> list[Problem]:
    """vLLM must run this drafter (this repo) as DFlash, drafting block_size − 1 tokens per step."""
    spec_config = launcher.spec_config
    if spec_config is None:
        return [
            Problem(
                label,
                f"line {launcher.serve_line}: `vllm serve` has no --speculative-config; "
                "a drafter is served through vLLM's speculative decoding",
            )
        ]
    problems = []
    if spec_config.get("model") != repo_id:
        problems.append(
            Problem(
                label,
                f"--speculative-config model is {spec_config.get('model')!r}; expected this release's repo {repo_id!r}",
            )
        )
    method = spec_config.get("method")
    if method != "dflash":
        problems.append(Problem(label, f"--speculative-config method is {method!r}; expected 'dflash'"))
    k = spec_config.get("num_speculative_tokens")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        problems.append(
            Problem(label, f"--speculative-config num_speculative_tokens is {k!r}; expected a positive integer")
        )
    elif config is not None and config["dflash_config"]["block_size"] - 1 != k:
        block = config["dflash_config"]["block_size"]
        problems.append(
            Problem(
                label, f"num_speculative_tokens {k} must be config.json's dflash_config.block_size − 1 = {block - 1}"
            )
        )
    return problems


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """The card's vLLM snippet: the launcher's --speculative-config, pinned to this repo and version."""
    spec_config = facts.kind_facts.spec_config
    config: dict[str, Any] = {"method": "dflash", "model": spec.repo_id}
    if spec_config:
        try:
            parsed = json.loads(spec_config)
            if isinstance(parsed, dict):
                config = dict(parsed)
        except ValueError:
            pass
    config["model"] = spec.repo_id
    config["revision"] = spec.version
    spec_json = json.dumps(config, ensure_ascii=False)  # `"revision": "v5"` either way: what usage_pins looks for
    # one key a line, to fit the card's code box: JSON over several lines is still JSON, and bash keeps the newlines
    if len(spec_json) > CODE_WIDTH - len("  --speculative-config ''"):
        lines = json.dumps(config, indent=2, ensure_ascii=False).splitlines()
        spec_json = "\n".join("  " + line if n else line for n, line in enumerate(lines))
    target = spec.card["usage"]["target_model"]
    quoted = spec_json.replace("'", "'\\''")
    return {"vllm": f"```bash\nvllm serve {target} \\\n  --speculative-config '{quoted}'\n```"}


KIND = Kind(
    name="dflash2-drafter",
    template="modelcard.md.j2",
    config_problems=config_problems,
    tensor_problems=tensor_problems,
    card_part=speculative_part(DRAFT_WORDS),
    launcher_problems=launcher_problems,
    card_requires=("honest_note", "usage.target_model"),
    weights_need_config=True,
    weights_format="pt",  # transformers' from_pretrained reads safetensors whose __metadata__.format is 'pt'
    card_context=card_context,
    usage_pins=('revision="{version}"', '"revision": "{version}"'),
)
