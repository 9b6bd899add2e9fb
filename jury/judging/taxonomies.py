"""Error taxonomies: TOML files in panels/taxonomies/ naming the categories of genuine errors.

A taxonomy file::

    name = "plsqlbench"
    description = "..."
    [[categories]]          # at least two; ids unique
    id = "grounding"
    label = "interface or schema grounding"
    definition = "..."
    [[rules]]               # optional: error string (regex, Python syntax) -> category
    pattern = '(?i)ORA-00942|no such table'
    category = "grounding"

With ``--taxonomy NAME`` a juror who votes genuine error also picks one category id (the
reply's ``error_category``); a record's category is the one a strict majority of its
genuine-error votes picked. Rules classify error strings (test-suite runs) without a juror:
an error is classified only when the rules that match it all name one category; an error no
rule matches, or one matched by rules of two categories, is left to jurors.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from jury.errors import ConfigError, did_you_mean
from jury.inputs.reader import MAX_CONFIG_BYTES, read_bounded
from jury.judging.panels import PANELS_DIR
from jury.vocab import Verdict

TAXONOMIES_DIR = PANELS_DIR / "taxonomies"
_ID = r"^[A-Za-z0-9_.-]{1,40}$"


class _Category(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(pattern=_ID)
    label: str = Field(min_length=1)
    definition: str = Field(min_length=1)


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    pattern: str = Field(min_length=1)
    category: str = Field(min_length=1)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression ({exc})") from None
        return value


class _TaxonomyFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=_ID)
    description: str = ""
    categories: list[_Category] = Field(min_length=2)
    rules: list[_Rule] = []


@dataclass(frozen=True)
class Taxonomy:
    name: str
    path: Path
    sha256: str
    description: str
    categories: tuple[tuple[str, str, str], ...]  # (id, label, definition)
    rules: tuple[tuple[str, str], ...]  # (pattern, category id)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(c[0] for c in self.categories)

    def binding(self) -> dict[str, str | list[str]]:
        """What a verdict file's settings record of the taxonomy."""
        return {"name": self.name, "sha256": self.sha256, "categories": list(self.ids)}

    def classify(self, error: str) -> str | None:
        """The one category the matching rules name, or None (no rule, or rules disagree)."""
        named = {cat for pattern, cat in self.rules if re.search(pattern, error)}
        return named.pop() if len(named) == 1 else None

    def block(self) -> str:
        """The ballot text asking a juror for a category (fills ``$taxonomy_block``)."""
        lines = "\n".join(f'- "{i}" ({label}): {definition}' for i, label, definition in self.categories)
        return (
            "\nError category: when you judge an answer wrong (only one answer correct, or neither), also name the "
            'category of that error in "error_category" (for "neither": the error of the answer further off); '
            "otherwise set it to null. The categories:\n" + lines + "\n"
            'Reply then with {"reasoning": "...", "verdict": "...", "error_category": "<a category id or null>"}.\n'
        )


def resolve_taxonomy_path(value: str | Path) -> Path:
    """A taxonomy given as a path, or as the bare name of a file in panels/taxonomies/."""
    p = Path(value)
    if p.suffix != ".toml" and not p.exists():
        p = TAXONOMIES_DIR / f"{value}.toml"
    return p


def _where(err: ErrorDetails, data: dict[str, Any]) -> str:
    loc = list(err["loc"])
    name = ".".join(str(x) for x in loc) or "taxonomy"
    if len(loc) >= 2 and loc[0] in ("categories", "rules") and isinstance(loc[1], int):
        name = f"{loc[0]}[{loc[1]}]" + "".join(f".{x}" for x in loc[2:])
    return name


def load_taxonomy(value: str | Path) -> Taxonomy:
    """Load and check a taxonomy; a one-line ConfigError naming the file and key."""
    p = resolve_taxonomy_path(value)
    if not os.path.lexists(p):
        shipped = sorted(x.stem for x in TAXONOMIES_DIR.glob("*.toml"))
        raise ConfigError(
            f"{p}: taxonomy file not found (shipped taxonomies: {', '.join(shipped) or 'none'}){did_you_mean(p.stem, shipped)}"
        )
    raw = read_bounded(p, MAX_CONFIG_BYTES, what="a taxonomy file", error=ConfigError)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{p}: line {line}: not valid UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None
    try:
        doc = _TaxonomyFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = err["msg"].removeprefix("Value error, ")
        shown = "" if isinstance(err.get("input"), (dict, list)) else f" (got {err.get('input')!r:.60})"
        raise ConfigError(f"{p}: {_where(err, data)}: {msg}{shown}") from None
    ids = [c.id for c in doc.categories]
    for i, c in enumerate(ids):
        if ids.index(c) != i:
            raise ConfigError(f"{p}: categories[{i}].id: {c!r} is given twice")
    for i, rule in enumerate(doc.rules):
        if rule.category not in ids:
            raise ConfigError(f"{p}: rules[{i}].category: {rule.category!r} is not a category id (ids: {', '.join(ids)})")
    return Taxonomy(
        doc.name,
        p,
        hashlib.sha256(raw).hexdigest(),
        doc.description,
        tuple((c.id, c.label, c.definition) for c in doc.categories),
        tuple((r.pattern, r.category) for r in doc.rules),
    )


def majority_category(picks: list[str | None]) -> str | None:
    """The category a strict majority of the genuine-error votes picked (None marks a vote
    without a category), or None.

    >>> majority_category(["C1", "C1", "C3"]), majority_category(["C1", "C3"]), majority_category(["C2", None, "C2"])
    ('C1', None, 'C2')
    """
    counts = Counter(p for p in picks if p is not None)
    if not counts:
        return None
    label, top = counts.most_common(1)[0]
    return label if top >= len(picks) // 2 + 1 else None


def record_category(verdict: str, votes: Sequence[object]) -> str | None:
    """A record's error category: the majority pick among its counted genuine-error votes
    (dicts or Vote models), only when the verdict is genuine_error."""

    if verdict != Verdict.GENUINE_ERROR:
        return None

    def get(v: object, key: str) -> Any:  # a vote dict's value, or a Vote model's field
        return v.get(key) if isinstance(v, dict) else getattr(v, key)

    picks = [
        get(v, "error_category")
        for v in votes
        if get(v, "category") == Verdict.GENUINE_ERROR and not get(v, "abstained") and not get(v, "skipped")
    ]
    return majority_category(picks)


class _CheckedVote(Protocol):
    """What the checks below read of a verdict file's vote (jury.verdicts.documents.Vote)."""

    @property
    def juror(self) -> str: ...
    @property
    def category(self) -> str | None: ...
    @property
    def error_category(self) -> str | None: ...
    @property
    def raw_verdict(self) -> str | None: ...
    @property
    def abstained(self) -> bool: ...
    @property
    def skipped(self) -> bool: ...


class _CheckedRecord(Protocol):
    """What the checks below read of a verdict file's record (jury.verdicts.documents.AdjudicationRecord)."""

    @property
    def verdict(self) -> str: ...
    @property
    def error_category(self) -> str | None: ...
    @property
    def test(self) -> str | None: ...
    @property
    def votes(self) -> Sequence[_CheckedVote]: ...


def taxonomy_problem(record: _CheckedRecord, setting: object) -> str | None:
    """Does a record's error_category (and each vote's) follow from its votes under the file's
    settings.taxonomy? The first problem as text, or None."""

    picked = [(v.juror, v.error_category, v.category) for v in record.votes if v.error_category is not None]
    if not isinstance(setting, dict):
        if picked or record.error_category is not None:
            return "has an error_category but the file's settings name no taxonomy"
        return None
    ids = setting.get("categories") or []
    for juror, cat, category in picked:
        if cat not in ids:
            return f"juror {juror!r}'s error_category {cat!r} is not in taxonomy {setting.get('name')!r} ({', '.join(ids)})"
        if category != Verdict.GENUINE_ERROR:
            return f"juror {juror!r} has error_category {cat!r} without a genuine_error vote"
    want = record_category(record.verdict, record.votes)
    if record.error_category != want:
        return f"error_category {record.error_category!r} does not follow from its votes (the majority pick is {want!r})"
    return None


def classify_problem(record: _CheckedRecord, setting: object) -> str | None:
    """`jury suites --classify` files: a record names its test, the file its taxonomy, and a vote
    skipped by early stop was skipped only once a strict majority of the panel picked one answer."""
    if not isinstance(setting, dict):
        return "is an error classification but the file's settings name no taxonomy"
    if record.test is None:
        return "is an error classification without a test"
    if any(v.skipped for v in record.votes):
        picks = Counter(v.raw_verdict for v in record.votes if not (v.skipped or v.abstained) and v.raw_verdict is not None)
        if not picks or picks.most_common(1)[0][1] < len(record.votes) // 2 + 1:
            return "a vote is marked skipped but no strict majority of the panel picked one category"
    return None
