"""Juror panels (TOML files in ``panels/``) and family-disjoint juror selection."""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import socket
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jury.errors import ConfigError, InputError, did_you_mean
from jury.inputs.reader import MAX_CONFIG_BYTES, read_bounded
from jury.judging.ballots import Template, check_template
from jury.judging.juror import JurorSpec
from jury.vocab import LOCAL_MODELS

if TYPE_CHECKING:
    from jury.inputs.records import RunRecord


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
SCHEMA_VIEW_PROMPT = "audit-v2.md"  # the default template of an audit panel whose schema is not "touched"
DEFAULT_SCHEMA_BUDGET = 8000  # tokens of a `database` or `linked` schema view (o200k_base, as --plan counts)


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
    show_checks: bool = False  # audit: show the deterministic gold checks to the jurors as facts
    # audit: defective votes needed to flag, 1..len(jurors); None: a strict majority of the panel, abstentions included
    quorum: int | None = None
    swap: bool = False  # adjudication: each juror judges both answer orders (doubles the calls)
    prompt_path: Path = field(default_factory=lambda: PROMPTS_DIR / DEFAULT_PROMPTS["blind"])
    template: Template | None = None  # the prompt template as validated at load
    taxonomy: str | None = None  # adjudication: error taxonomy (a name in panels/taxonomies/ or a path)
    schema: str = "touched"  # audit: touched | database | linked (jury.execution.schema_views)
    schema_budget: int = DEFAULT_SCHEMA_BUDGET  # audit: tokens of a database or linked view

    def __setattr__(self, name: str, value: object) -> None:
        if name == "quorum":  # however it is set (panel file, --quorum, jury.toml, a re-audit): 1..panel size
            check_quorum(value, len(self.jurors), f"panel {self.name!r}")
        super().__setattr__(name, value)

    def juror(self, name: str) -> JurorSpec:
        return next(j for j in self.jurors if j.name == name)

    def binding(self) -> dict[str, Any]:
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


def check_quorum(quorum: object, jurors: int, where: str) -> None:
    """A quorum is None (a strict majority of the panel) or a whole number of defective votes
    from 1 to the number of jurors: more could never flag, so every query would pass as
    decided. A one-line ConfigError otherwise."""
    if quorum is None:
        return
    if type(quorum) is not int:
        raise ConfigError(f"quorum {quorum!r} is not a whole number of defective votes ({where})")
    if not 1 <= quorum <= jurors:
        raise ConfigError(
            f"quorum {quorum} is outside 1..{jurors}: {where} has {jurors} jurors, so a query could "
            f"{'never be flagged' if quorum > jurors else 'be flagged without a defective vote'}"
        )


def resolve_panel_path(value: str | Path | None, default: str, base: Path | None = None) -> Path:
    """Where a panel is: ``value`` as a path (relative to ``base``: jury.toml's folder for the file's
    value; else the working directory) when it is one, else the name of a file in ``panels/``
    (``default`` when ``value`` is None). The one place a panel's name or path is decided."""
    if value is None:
        return PANELS_DIR / default
    p = base / value if base is not None else Path(value)
    if p.suffix != ".toml" and not p.exists():
        p = PANELS_DIR / f"{value}.toml"
    return p


class _PanelKeys(BaseModel):
    """The top-level keys of a panel file, strictly typed (TOML true is not 1, "no" is not false)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(min_length=1)
    ballot_style: Literal["blind", "labelled", "audit"] = "blind"
    k: int | None = Field(None, ge=1)  # default: 3, or every juror for an audit panel
    show_evidence: bool = True
    show_preview: bool = False
    show_checks: bool = False
    quorum: int | None = Field(None, ge=1)
    swap: bool = False
    prompt: str | None = None
    taxonomy: str | None = Field(None, min_length=1)
    schema_view: Literal["touched", "database", "linked"] = Field("touched", alias="schema")
    schema_budget: int = Field(DEFAULT_SCHEMA_BUDGET, ge=200)
    jurors: list[Any] = Field(min_length=1)


# the keys a Panel takes as the file wrote them
_AS_WRITTEN = {"show_evidence", "show_preview", "show_checks", "quorum", "swap", "taxonomy", "schema_budget"}
PANEL_KEYS = tuple(f.alias or n for n, f in _PanelKeys.model_fields.items())
JUROR_KEYS = tuple(k for k in JurorSpec.model_fields if k != "recorded_sha256")  # that one jury sets


def _shown(value: object) -> str:
    """A value as the panel file spells it: TOML booleans lower-case, strings quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, (dict, list)):
        return _shortened_repr(value)
    return repr(value)


def _shortened_repr(value: object, limit: int = 80) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_error(exc: ValidationError, data: dict[str, Any]) -> str:
    """`loc = value: message` for the first problem pydantic found."""
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err["loc"])
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "value_error":  # our own validators name the key and value themselves
        return msg if msg.startswith(loc) else f"{loc}: {msg}"
    if err["type"] == "missing":
        return f"{loc} is required"
    return f"{loc} = {_shown(err.get('input'))}: {msg}"


def _read_panel(p: Path) -> tuple[bytes, dict[str, Any]]:
    if p.is_dir():
        raise ConfigError(f"{p}: is a folder, not a panel file; give a panel .toml file or the name of one in {PANELS_DIR}")
    if not os.path.lexists(p):
        shipped = sorted(x.stem for x in PANELS_DIR.glob("*.toml") if x.name != "families.toml")
        raise ConfigError(
            f"{p}: panel file not found{did_you_mean(p.stem, shipped)} (shipped panels: {', '.join(shipped) or 'none'})"
        )
    raw = read_bounded(p, MAX_CONFIG_BYTES, what="a panel file", error=ConfigError)
    try:
        return raw, tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{p}: line {line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: {exc}") from None


def resolve_prompt(panel_path: Path, prompt: str) -> Path:
    """A template named by a panel: a bare file name, looked up in the `prompts/` folder beside
    the panel file, then in the shipped prompts folder. No paths, no symlinks leading out."""
    folders = (panel_path.parent / "prompts", PROMPTS_DIR)
    where = " or ".join(str(f) for f in folders)
    if not prompt or prompt in (".", "..") or Path(prompt).name != prompt or "/" in prompt or "\\" in prompt:
        raise ConfigError(f"{panel_path}: prompt = {prompt!r}: give the file name of a template in {where} (no folders)")
    for folder in folders:
        candidate = folder / prompt
        if not (candidate.exists() or candidate.is_symlink()):
            continue
        home = folder.resolve()
        target = candidate.resolve()
        if not target.is_relative_to(home):
            raise ConfigError(f"{panel_path}: prompt = {prompt!r}: {candidate} leads outside {folder}")
        if not target.is_file():
            raise ConfigError(f"{panel_path}: prompt = {prompt!r}: {candidate} is not a file")
        return candidate
    raise ConfigError(f"{panel_path}: prompt template {prompt!r} not found in {where}")


def _same_judge(a: JurorSpec, b: JurorSpec) -> bool:
    """Two jurors are one judge when they ask the same model (its own name, after any
    provider route, case-insensitively) at the same api_base (both unset is the same).
    Generation params and structured_output do not make a second judge: the same model at
    another temperature is the same judge sampled twice, and its votes are not independent."""

    def model(j: JurorSpec) -> str:
        return j.model.strip().rstrip("/").rsplit("/", 1)[-1].lower()

    def base(j: JurorSpec) -> str | None:
        return j.api_base.strip().rstrip("/").lower() if j.api_base else None

    return model(a) == model(b) and base(a) == base(b)


def load_panel(path: str | Path) -> Panel:
    """Read and validate a panel file completely: keys and types, every juror, the prompt
    template (its folder, header and placeholders) and that the jurors are distinct judges.
    Any problem is a ConfigError of one line naming the file and the key or juror."""
    p = Path(path)
    raw, data = _read_panel(p)
    keys = _panel_keys(p, data)
    style = keys.ballot_style
    jurors = _jurors(p, keys)
    _check_distinct_judges(p, jurors)
    k = keys.k if keys.k is not None else (3 if style != "audit" else len(jurors))
    _check_counts_and_options(p, keys, k, len(jurors))
    prompt_path, template = _template(p, keys)
    return Panel(
        name=keys.name,
        path=p,
        sha256=hashlib.sha256(raw).hexdigest(),
        ballot_style=style,
        k=k,
        jurors=jurors,
        prompt_path=prompt_path,
        template=template,
        schema=keys.schema_view,
        **keys.model_dump(include=_AS_WRITTEN),
    )


def _panel_keys(p: Path, data: dict[str, Any]) -> _PanelKeys:
    """The panel file's keys validated (unknown keys, no juror and wrong types refused)."""
    unknown = sorted(set(data) - set(PANEL_KEYS))
    if unknown:
        raise ConfigError(f"{p}: unknown panel key {unknown[0]!r}; allowed: {', '.join(PANEL_KEYS)}")
    if not data.get("jurors"):
        raise ConfigError(f"{p}: a panel needs at least one [[jurors]] entry")
    try:
        return _PanelKeys.model_validate({"name": p.stem, **data})
    except ValidationError as exc:
        raise ConfigError(f"{p}: {_first_error(exc, data)}") from None


def _jurors(p: Path, keys: _PanelKeys) -> list[JurorSpec]:
    """Each [[jurors]] table validated as a JurorSpec, a recorded juror bound to its file."""
    jurors: list[JurorSpec] = []
    for i, row in enumerate(keys.jurors, start=1):
        if not isinstance(row, dict):
            raise ConfigError(f"{p}: juror {i}: expected a [[jurors]] table, got {_shown(row)}")
        label = f"juror {i} ({row['name']!r})" if isinstance(row.get("name"), str) else f"juror {i}"
        extra = sorted(set(row) - set(JUROR_KEYS))
        if extra:
            raise ConfigError(f"{p}: {label}: unknown key {extra[0]!r}; allowed: {', '.join(JUROR_KEYS)}")
        try:
            jurors.append(JurorSpec.model_validate(row, strict=True))
        except ValidationError as exc:
            raise ConfigError(f"{p}: {label}: {_first_error(exc, row)}") from None
    from jury.judging.recorded import bind_recorded_juror

    return [bind_recorded_juror(j, p, keys.ballot_style) for j in jurors]


def _check_distinct_judges(p: Path, jurors: list[JurorSpec]) -> None:
    """A ConfigError when two jurors share a name or are one judge (same model and endpoint)."""
    seen: dict[str, JurorSpec] = {}
    for j in jurors:
        if j.name in seen:
            raise ConfigError(f"{p}: juror name {j.name!r} appears twice")
        seen[j.name] = j
    for i, a in enumerate(jurors):
        for b in jurors[i + 1 :]:
            if _same_judge(a, b):
                raise ConfigError(
                    f"{p}: jurors {a.name!r} and {b.name!r} are one judge: both ask "
                    f"{a.model!r}{'' if a.model == b.model else ' / ' + repr(b.model)} at "
                    f"{a.api_base or 'the provider default endpoint'} (other params do not make a second judge); "
                    "remove one"
                )


def _check_counts_and_options(p: Path, keys: _PanelKeys, k: int, n_jurors: int) -> None:
    """A ConfigError when k or the quorum exceeds the jurors, or an option does not apply to
    the panel's ballot style."""
    style = keys.ballot_style
    if k > n_jurors:
        raise ConfigError(f"{p}: k = {k} but the panel has {n_jurors} jurors")
    if keys.quorum is not None and keys.quorum > n_jurors:
        raise ConfigError(f"{p}: quorum = {keys.quorum} but the panel has {n_jurors} jurors")
    if keys.swap and style == "audit":
        raise ConfigError(f"{p}: swap = true applies to adjudication panels (an audit ballot shows one query)")
    if keys.show_checks and style != "audit":
        raise ConfigError(f"{p}: show_checks = true applies to audit panels (the gold checks of `jury audit-gold`)")
    if keys.schema_view != "touched" and style != "audit":
        raise ConfigError(f'{p}: schema = {keys.schema_view!r} applies to audit panels (ballot_style = "audit")')


def _template(p: Path, keys: _PanelKeys) -> tuple[Path, Template]:
    """The prompt template's path (the panel's prompt, else the default of its style and schema
    view) and the template, checked for the style (and for a schema view, its heading)."""
    style = keys.ballot_style
    if keys.prompt is not None:
        prompt_path = resolve_prompt(p, keys.prompt)
    elif keys.schema_view != "touched":
        prompt_path = PROMPTS_DIR / SCHEMA_VIEW_PROMPT
    else:
        prompt_path = PROMPTS_DIR / DEFAULT_PROMPTS[style]
    try:
        template = Template.load(prompt_path)
        check_template(template, style)
    except ConfigError as exc:
        raise ConfigError(f"{p}: prompt template {exc}") from None
    if keys.schema_view != "touched" and not re.search(r"\$(schema_heading\b|\{schema_heading\})", template.text):
        raise ConfigError(
            f"{p}: schema = {keys.schema_view!r} needs a template that says which view it shows ($schema_heading, "
            f"as {SCHEMA_VIEW_PROMPT}); {prompt_path.name} heads the schema as the touched tables"
        )
    return prompt_path, template


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


# Before any call: can this panel be asked now (keys, servers, prices, params)?


def warn_unknown_params(panel: Panel) -> None:
    """One stderr line per juror whose params litellm does not know for its provider (a typo
    such as `temprature` would otherwise be sent unchecked). Before any call, and in --plan."""

    from jury.judging.providers.params import unknown_params

    for juror in panel.jurors:
        unknown = unknown_params(juror)
        if unknown:
            print(
                f"Warning: panel {panel.name!r}, juror {juror.name!r} ({juror.model}): params "
                f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not known to litellm for this "
                "provider (a typo?); sent as given",
                file=sys.stderr,
                flush=True,
            )


def require_keys(panel: Panel, jurors: Iterable[JurorSpec]) -> None:
    """Before any call: every juror's key is set and every juror served on this machine answers
    (require_servers)."""
    chosen = list(jurors)
    missing = panel.missing_keys(chosen)
    if missing:
        raise InputError(
            f"no API key for panel {panel.name!r}: set {', '.join(missing)} (nothing was called); "
            "--plan prices the ballots without calling, and --panel local-demo runs without keys "
            "on two tiny local models (`jury local-juror start` first; pip install 'jury-sql[local]')"
        )
    require_servers(panel, chosen)


def require_priced(panel: Panel, jurors: Iterable[JurorSpec], max_cost: float | None) -> None:
    """With a cost cap, every juror has a price: a juror litellm cannot price counted $0 against
    the cap, so the cap did not bound what the run spends. A juror declared ``free`` (your own
    server) or recorded costs nothing and passes."""
    if max_cost is None:
        return
    from jury.judging.providers.prices import has_price

    unpriced = [j for j in jurors if not j.costs_nothing and not has_price(j.model)]
    if unpriced:
        j = unpriced[0]
        more = f" (and {len(unpriced) - 1} more juror{'s' if len(unpriced) > 2 else ''})" if len(unpriced) > 1 else ""
        raise InputError(
            f"panel {panel.name!r}, juror {j.name!r}: litellm has no price for model {j.model!r}{more}, so a "
            f"cost cap (max_cost ${max_cost:g}) cannot count its calls (nothing was run); check the model's "
            "name, declare it `free = true` in the panel file if it runs on your own server, or drop the cap"
        )


class FamilyLookup(Protocol):
    """What jurors_to_ask reads of a family registry (jury.judging.families.FamilyRegistry, which
    imports this module: a Protocol, not an import circle)."""

    def families_of(self, model: str, declared: list[str] | None = None) -> list[str]: ...


def jurors_to_ask(
    panel: Panel, registry: FamilyLookup, records: Iterable[RunRecord], models: list[str] | None = None
) -> list[JurorSpec]:
    """Every juror of ``panel`` that a ballot of these run records could go to: for each model
    (of ``models``, when given), the family-disjoint jurors jury.judging.panels.select_jurors
    picks. Known from the run files alone, so keys, servers and prices are checked before any
    SQL is executed."""
    wanted = set(models) if models else None
    declared: dict[str, list[str]] = {}
    for rec in records:
        if wanted is None or rec.model in wanted:
            declared.setdefault(rec.model, rec.families())
    chosen = {j.name for model, families in declared.items() for j in select_jurors(panel, registry.families_of(model, families))}
    return [j for j in panel.jurors if j.name in chosen]  # in the panel's order


LOOPBACK_PROBE_S = 1.0
"""How long a juror's loopback server has to accept a connection before a run is refused."""


def require_servers(panel: Panel, jurors: Iterable[JurorSpec]) -> None:
    """A juror whose api_base is on this machine (a loopback address) must accept a TCP
    connection before anything is asked: a server that is not running was a 24-second
    litellm retry ending in "HTTP 500 ... Connection error". One connection per server, for
    at most LOOPBACK_PROBE_S; remote providers are not probed (their own errors say why)."""

    seen: set[tuple[str, int]] = set()
    for j in jurors:
        if not j.api_base or j.recorded is not None:
            continue
        try:
            parts = urlsplit(j.api_base)
            host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            continue  # litellm reports a malformed api_base itself
        if host is None:
            continue
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback or (host, port) in seen:
            continue
        seen.add((host, port))
        try:
            socket.create_connection((host, port), timeout=LOOPBACK_PROBE_S).close()
        except OSError as exc:
            alias = j.model.split("/", 1)[-1]
            how = (
                "start it: `jury local-juror start`"
                if alias in LOCAL_MODELS
                else "start the server it names (Ollama, vLLM, llama.cpp, ...)"
            )
            raise InputError(
                f"panel {panel.name!r}, juror {j.name!r}: nothing answers at {j.api_base} "
                f"({exc.strerror or type(exc).__name__}; nothing was called); {how}"
            ) from None
