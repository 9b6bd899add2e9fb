"""Model families: who made a model, so that no juror judges its own family.

Families come from a run record's ``family`` field when present, otherwise from the
pattern registry (``panels/families.toml``). An unknown model is an error that says how
to declare it: jury never guesses.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from jury.errors import ConfigError
from jury.inputs.reader import MAX_CONFIG_BYTES, read_bounded


def _default_registry() -> Path:
    from jury.judging.panels import PANELS_DIR

    return PANELS_DIR / "families.toml"


@dataclass(frozen=True)
class FamilyRegistry:
    path: Path | None
    patterns: dict[str, tuple[re.Pattern[str], ...]]

    def families_of(self, model: str, declared: list[str] | None = None) -> list[str]:
        """The model's families: the declared ones, else every family whose pattern matches."""
        if declared:
            return sorted({f.strip().lower() for f in declared if f.strip()})
        name = model.rstrip("/").rsplit("/", 1)[-1]  # the model's own name, not its provider route
        found = [fam for fam, pats in self.patterns.items() if any(p.search(name) for p in pats)]
        if not found:
            where = self.path or "the family registry"
            raise ConfigError(
                f"model {model!r} has no known family: add a pattern for it under [families] in "
                f'{where}, or give "family" in its run records (jury never guesses)'
            )
        return sorted(found)


def load_registry(path: str | Path | None = None) -> FamilyRegistry:
    p = Path(path) if path else _default_registry()
    try:
        text = read_bounded(p, MAX_CONFIG_BYTES, what="a family registry", error=ConfigError).decode("utf-8")
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: {exc}") from None
    table = data.get("families")
    if not isinstance(table, dict) or not table:
        raise ConfigError(f"{p}: expected a [families] table of family = [patterns]")
    patterns: dict[str, tuple[re.Pattern[str], ...]] = {}
    for fam, pats in table.items():
        if isinstance(pats, str):
            pats = [pats]
        if not isinstance(pats, list) or not all(isinstance(x, str) for x in pats):
            raise ConfigError(f"{p}: family {fam!r}: expected a list of pattern strings")
        try:
            patterns[fam.lower()] = tuple(re.compile(x, re.IGNORECASE) for x in pats)
        except re.error as exc:
            raise ConfigError(f"{p}: family {fam!r}: bad pattern: {exc}") from None
    return FamilyRegistry(p, patterns)
