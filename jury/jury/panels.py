"""Juror panels (TOML files in ``panels/``) and family-disjoint juror selection."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from jury.errors import ConfigError
from jury.jury.client import JurorSpec

def _shipped(name: str) -> Path:
    """A folder of shipped files: at the top of a source checkout, inside an installed package."""
    checkout = Path(__file__).resolve().parents[2] / name
    return checkout if checkout.is_dir() else Path(__file__).resolve().parents[1] / name


PANELS_DIR = _shipped("panels")
PROMPTS_DIR = _shipped("prompts")
BALLOT_STYLES = ("blind", "labelled", "audit")
DEFAULT_PROMPTS = {
    "blind": "adjudicate-blind-v1.md",
    "labelled": "adjudicate-labelled-v1.md",
    "audit": "audit-v1.md",
}


@dataclass
class Panel:
    name: str
    path: Path | None
    sha256: str | None
    ballot_style: str
    k: int
    jurors: list[JurorSpec]
    show_evidence: bool = True
    show_preview: bool = False  # audit: show a preview of the gold result
    quorum: int | None = None  # audit: defective votes needed to flag (None: strict majority of valid votes)
    prompt_path: Path = field(default_factory=lambda: PROMPTS_DIR / DEFAULT_PROMPTS["blind"])

    def juror(self, name: str) -> JurorSpec:
        return next(j for j in self.jurors if j.name == name)

    def binding(self) -> dict:
        return {
            "name": self.name,
            "path": str(self.path) if self.path else None,
            "sha256": self.sha256,
            "ballot_style": self.ballot_style,
            "k": self.k,
            "quorum": self.quorum,
            "show_evidence": self.show_evidence,
            "jurors": [j.public_dict() for j in self.jurors],
        }

    def missing_keys(self, jurors: list[JurorSpec] | None = None) -> list[str]:
        chosen = self.jurors if jurors is None else jurors
        return sorted({m for j in chosen if (m := j.missing_key())})


def resolve_panel_path(value: str | Path | None, default: str) -> Path:
    """A panel given as a path, or as a bare name of a file in ``panels/``."""
    if value is None:
        return PANELS_DIR / default
    p = Path(value)
    if p.suffix != ".toml" and not p.exists():
        p = PANELS_DIR / f"{value}.toml"
    return p


def load_panel(path: str | Path) -> Panel:
    p = Path(path)
    try:
        raw = p.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{p}: panel file not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: {exc}") from None
    known = {"name", "ballot_style", "k", "show_evidence", "show_preview", "quorum", "prompt", "jurors"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{p}: unknown panel key {unknown[0]!r}; known: {', '.join(sorted(known))}")
    style = data.get("ballot_style", "blind")
    if style not in BALLOT_STYLES:
        raise ConfigError(f"{p}: ballot_style {style!r}; choose one of: {', '.join(BALLOT_STYLES)}")
    rows = data.get("jurors")
    if not isinstance(rows, list) or not rows:
        raise ConfigError(f"{p}: a panel needs at least one [[jurors]] entry")
    jurors: list[JurorSpec] = []
    for i, row in enumerate(rows, start=1):
        try:
            jurors.append(JurorSpec.model_validate(row))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            raise ConfigError(f"{p}: juror {i}: {loc}: {err['msg']}") from None
    names = [j.name for j in jurors]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise ConfigError(f"{p}: juror name {dup!r} appears twice")
    k = data.get("k", 3 if style != "audit" else len(jurors))
    if not isinstance(k, int) or k < 1:
        raise ConfigError(f"{p}: k must be a positive integer, got {k!r}")
    prompt = data.get("prompt")
    prompt_path = (p.parent / prompt) if prompt else PROMPTS_DIR / DEFAULT_PROMPTS[style]
    if not prompt_path.is_file():
        raise ConfigError(f"{p}: prompt template not found: {prompt_path}")
    quorum = data.get("quorum")
    if quorum is not None and (not isinstance(quorum, int) or quorum < 1):
        raise ConfigError(f"{p}: quorum must be a positive integer, got {quorum!r}")
    return Panel(
        name=data.get("name", p.stem),
        path=p,
        sha256=hashlib.sha256(raw).hexdigest(),
        ballot_style=style,
        k=k,
        jurors=jurors,
        show_evidence=bool(data.get("show_evidence", True)),
        show_preview=bool(data.get("show_preview", False)),
        quorum=quorum,
        prompt_path=prompt_path,
    )


def select_jurors(panel: Panel, families: list[str], k: int | None = None) -> list[JurorSpec]:
    """The first k jurors whose families differ from the model's and from each other."""
    k = k or panel.k
    excluded = {f.lower() for f in families}
    chosen: list[JurorSpec] = []
    for j in panel.jurors:
        fam = j.family.lower()
        if fam in excluded:
            continue
        chosen.append(j)
        excluded.add(fam)
        if len(chosen) == k:
            return chosen
    have = sorted({j.family.lower() for j in panel.jurors} - {f.lower() for f in families})
    raise ConfigError(
        f"panel {panel.name!r} has {len(chosen)} juror families outside {sorted(set(families))} "
        f"but k = {k} are needed (available: {', '.join(have) or 'none'}); add jurors of "
        f"{k - len(chosen)} more famil{'y' if k - len(chosen) == 1 else 'ies'} to {panel.path}"
    )
