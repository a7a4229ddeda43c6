"""One build derives the card's facts once, from evidence assembled once, and lints what it rendered."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from release.builder import build
from release.card import facts
from release.card.evidence import Evidence
from release.spec import load_spec
from tests.helpers import EXAMPLE


def test_one_build_derives_the_card_facts_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"derive": 0, "Evidence.of": 0}
    derive, of = facts.derive, Evidence.of.__func__

    def counted_derive(*args: Any, **kwargs: Any) -> Any:
        calls["derive"] += 1
        return derive(*args, **kwargs)

    def counted_of(cls: type[Evidence], *args: Any, **kwargs: Any) -> Evidence:
        calls["Evidence.of"] += 1
        return of(cls, *args, **kwargs)

    for module in [
        m for name, m in sys.modules.items() if name.startswith("release.") and getattr(m, "derive", None) is derive
    ]:
        monkeypatch.setattr(module, "derive", counted_derive)  # every module that imported it by name
    monkeypatch.setattr(Evidence, "of", classmethod(counted_of))
    result = build(load_spec(EXAMPLE / "release.toml"), tmp_path / "dist")
    assert (result.dist / "README.md").is_file() and result.manifest.card is not None
    assert calls == {"derive": 1, "Evidence.of": 1}
