"""The one YAML reader: every YAML document hf-release reads (a card's front matter, a launcher's
`--config` file, the local Hub's view of a README) goes through `load`.

- safe: PyYAML's safe loader, in libyaml's C implementation where PyYAML was built with it (its wheels
  are); PyYAML's pure-Python parser takes ~10x as long, 40 ms for the example card's front matter;
- depth: mappings and sequences nested more than `max_depth` deep are refused from the event stream,
  before anything is composed (the composers recurse per level: Python's raises RecursionError);
- errors are yaml.YAMLError in the words of PyYAML's pure-Python loader, which quotes the offending text
  (libyaml's messages say less: "found undefined alias", without the alias). A document libyaml refuses is
  read again by the pure-Python loader, depth checked first, and what it says (or returns) is the answer.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 64  # front matter and serving configs nest a handful of levels
_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class TooDeep(yaml.YAMLError):
    """Mappings or sequences nested deeper than the bound."""


class Aliased(yaml.YAMLError):
    """An alias (`*name`) in a document read with aliases=False."""


def load(text: str, *, max_depth: int = MAX_DEPTH, aliases: bool = True) -> Any:
    """The one YAML document in `text`; TooDeep past `max_depth` levels; yaml.YAMLError for what the
    parser refuses; Aliased for any alias when `aliases` is false."""
    try:
        return _load(text, _LOADER, max_depth, aliases)
    except (TooDeep, Aliased):
        raise
    except yaml.YAMLError:
        if _LOADER is yaml.SafeLoader:
            raise
        return _load(text, yaml.SafeLoader, max_depth, aliases)


def _load(text: str, loader: type, max_depth: int, aliases: bool) -> Any:
    _check_events(text, loader, max_depth, aliases)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader


def _check_events(text: str, loader: type, max_depth: int, aliases: bool) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise TooDeep(f"nested deeper than {max_depth} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif not aliases and isinstance(event, yaml.AliasEvent):
            raise Aliased("uses YAML aliases")
