"""Hash-locked verdict files: every jury verdict set behind a published number.

A verdict file is one JSON document (an adjudication of model failures, or an audit of
gold SQL) that binds the exact inputs it was computed from (gold, runs, databases,
prompts, panel: path and sha256 each), the panel and settings, and every juror's vote.
It is *locked*: ``content_sha256`` is ``"sha256:" + sha256(canonical JSON of everything
else)``, where canonical JSON is sorted keys, compact separators, UTF-8 (see
``canonical_json``). Whitespace and key order therefore do not matter; any change to a
value does. Every reader goes through ``load_locked``, which checks the lock before it
trusts anything in the file. A locked file is never rewritten: a correction is a new
file that names its predecessor's ``content_sha256`` in ``supersedes``.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from jury.errors import InputError, JuryError
from jury.inputs.io import file_errors, read_text, sha256_file, write_atomic
from jury.inputs.records import _normalise_qid

FORMAT_VERSION = 1
KINDS: tuple[str, ...] = ("adjudication", "audit")
LOCK_KEY = "content_sha256"
_NEVER_REWRITTEN = "a locked verdict file is never rewritten: write a new file"

Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
PrefixedSha256 = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]


class VerdictError(JuryError):
    """A verdict file is unlocked, tampered with, malformed, or would be overwritten."""


# ------------------------------------------------------------------ document models


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FileBinding(_Model):
    """One input file: its path and the sha256 of its bytes when the verdicts were made."""

    path: str = Field(description="As given: relative to the verdict file's folder when possible, else absolute; POSIX separators.")
    sha256: Sha256Hex = Field(description="Hex sha256 of the file's bytes.")


class Inputs(_Model):
    gold: FileBinding
    runs: list[FileBinding] = []
    databases: dict[str, FileBinding] = Field(default={}, description="db_id -> database file.")


class PanelBinding(_Model):
    """The jury panel: its definition file (if any), ballot style and jurors."""

    name: str
    path: str | None = None
    sha256: Sha256Hex | None = None
    ballot_style: str
    k: int = Field(ge=1, description="Jurors on the panel.")
    quorum: str | int | None = None
    show_evidence: bool = True
    jurors: list[dict[str, Any]] = Field(description="Each juror's public description (name, model, family, api_base, params, ...).")


class Totals(_Model):
    calls: int = Field(0, ge=0)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    cost_usd: float = Field(0.0, ge=0, description="Cost of the calls litellm could price (unpriced_models' calls are not in it).")
    unpriced_models: list[str] | None = Field(
        None, description="Juror models (litellm strings) with calls litellm could not price, so cost_usd leaves them out; "
        "null in files written before it was recorded.")


class Vote(_Model):
    """One juror's ballot on one question (or why there is none)."""

    juror: str = Field(description="Juror name.")
    family: str = Field(description="Juror's model family.")
    model: str = Field(description="litellm model string.")
    order: Literal["gold_first", "candidate_first"] | None = Field(None, description="Adjudication only: which answer was shown first.")
    raw_verdict: str | None = Field(None, description="Exactly what the juror answered.")
    category: str | None = Field(None, description="Mapped verdict: gold_defect, format_equivalence, genuine_error, ambiguous (adjudication); valid, defective (audit).")
    defect_type: str | None = Field(None, description="Audit only.")
    reasoning: str | None = None
    abstained: bool = False
    reason: str | None = Field(None, description="Why the juror abstained (failed after retries, unparseable, ...).")
    skipped: bool = Field(False, description="Early stop: not asked because the majority was already settled.")
    request_sha256: str | None = Field(None, description="Hash of the request, linking to the store's call log.")


class AdjudicationRecord(_Model):
    question_id: int | str
    db_id: str
    model: str = Field(description="The model whose failure was adjudicated.")
    families: list[str] = Field(description="That model's families (excluded from its panel).")
    jurors: list[str]
    votes: list[Vote]
    verdict: Literal["gold_defect", "format_equivalence", "genuine_error", "ambiguous", "no_majority", "undecided"]
    credited: bool = Field(description="Whether the answer counts as correct in the adjudicated column.")
    gold_also_wrong: bool = False
    answer_key: str | None = Field(None, description="sha256 of (database sha256, the model's SQL): the answer that was judged.")
    gold_key: str | None = Field(None, description="sha256 of (database sha256, the gold SQL) it was judged against.")

    _qid = field_validator("question_id", mode="before")(_normalise_qid)

    @model_validator(mode="after")
    def _credit_follows_verdict(self) -> AdjudicationRecord:
        if self.credited != (self.verdict in ("gold_defect", "format_equivalence")):
            raise ValueError(f"credited={self.credited} contradicts verdict {self.verdict!r}")
        return self


class AuditRecord(_Model):
    question_id: int | str
    db_id: str
    difficulty: str | None = None
    split: str | None = None
    jurors: list[str]
    votes: list[Vote]
    flagged: bool = Field(description="The panel's majority found the gold SQL defective.")
    decided: bool = Field(description="False when abstentions left no majority either way.")
    defect_types: list[str] = []
    gold_key: str | None = Field(None, description="sha256 of (database sha256, the gold SQL) that was judged; null in files "
                                 "written before it was recorded.")

    _qid = field_validator("question_id", mode="before")(_normalise_qid)


def _record_key(record: AdjudicationRecord | AuditRecord) -> tuple:
    if isinstance(record, AdjudicationRecord):
        return (record.model, record.question_id)
    return (record.split, record.question_id)


class VerdictFile(_Model):
    """A hash-locked set of verdicts (see jury/verdicts/documents.py and verdicts/README.md)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(alias="$schema", title="$schema", description="Relative file name of this document's JSON Schema.")
    kind: Literal["adjudication", "audit"]
    format_version: Literal[1] = 1
    jury_version: str
    created_at: str = Field(description="ISO 8601 time, UTC.")
    supersedes: PrefixedSha256 | None = Field(None, description="content_sha256 of the file this one replaces.")
    inputs: Inputs
    prompts: dict[str, FileBinding] = Field(description="Prompt name -> template file.")
    panel: PanelBinding
    settings: dict[str, Any] = Field(description="Comparator, thresholds, seed, early_stop, ... (free-form JSON).")
    totals: Totals
    summary: dict[str, Any] = {}
    records: list[AdjudicationRecord] | list[AuditRecord]
    content_sha256: PrefixedSha256 | None = Field(None, description="The lock: 'sha256:' + sha256 of the canonical JSON of everything else.")

    @field_validator("created_at")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"not an ISO 8601 time: {value!r}") from None
        return value

    @model_validator(mode="after")
    def _records_fit_kind(self) -> VerdictFile:
        expected = AdjudicationRecord if self.kind == "adjudication" else AuditRecord
        for i, record in enumerate(self.records):
            if not isinstance(record, expected):
                raise ValueError(f"records.{i} is not an {self.kind} record")
        seen: dict[tuple, int] = {}
        for i, record in enumerate(self.records):
            key = _record_key(record)
            if key in seen:
                raise ValueError(f"records.{i} repeats records.{seen[key]} ({key!r})")
            seen[key] = i
        return self


class AdjudicationFile(VerdictFile):
    """A hash-locked jury adjudication of model failures (jury verdict file, format 1)."""

    schema_: str = Field("schema/adjudication-v1.schema.json", alias="$schema", title="$schema", description="Relative file name of this document's JSON Schema.")
    kind: Literal["adjudication"]
    records: list[AdjudicationRecord]


class AuditFile(VerdictFile):
    """A hash-locked jury audit of gold SQL (jury verdict file, format 1)."""

    schema_: str = Field("schema/audit-v1.schema.json", alias="$schema", title="$schema", description="Relative file name of this document's JSON Schema.")
    kind: Literal["audit"]
    records: list[AuditRecord]


_FILE_MODELS: dict[str, type[VerdictFile]] = {"adjudication": AdjudicationFile, "audit": AuditFile}
_ADAPTER: TypeAdapter = TypeAdapter(Annotated[AdjudicationFile | AuditFile, Field(discriminator="kind")])


def _validation_message(exc: ValidationError) -> str:
    errors = exc.errors()
    err = errors[0]
    loc = list(err["loc"])
    if loc and loc[0] in KINDS:  # the discriminated union's tag
        loc = loc[1:]
    if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
        loc = [*loc, "kind"]
    where = ".".join(str(x) for x in loc) or "document"
    value = err.get("input")
    shown = "" if isinstance(value, (dict, list)) else f" (got {json.dumps(value, default=str)[:80]})"
    more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
    return f"{where}: {err['msg']}{shown}{more}"


def validate_document(data: dict[str, Any], source: str = "verdict document") -> VerdictFile:
    """Validate a verdict document (an AdjudicationFile or AuditFile by ``kind``); no lock check."""
    if not isinstance(data, dict):
        raise VerdictError(f"{source}: expected a JSON object, got {type(data).__name__}")
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise VerdictError(f"{source}: {_validation_message(exc)}") from None


# ------------------------------------------------------------------ the lock


def canonical_json(obj: Any) -> bytes:
    """The bytes the lock hashes: sorted keys, compact separators, UTF-8, no NaN/Infinity."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def content_hash(doc: dict[str, Any]) -> str:
    """``"sha256:<hex>"`` of the canonical JSON of ``doc`` without its ``content_sha256`` key."""
    body = {k: v for k, v in doc.items() if k != LOCK_KEY}
    try:
        data = canonical_json(body)
    except (ValueError, UnicodeEncodeError) as exc:
        raise VerdictError(f"verdict document is not canonical JSON: {exc}") from None
    return "sha256:" + hashlib.sha256(data).hexdigest()


def lock(doc: VerdictFile | dict[str, Any]) -> dict[str, Any]:
    """Validate ``doc`` and return its JSON dict (aliases, JSON types) with the lock set."""
    data = doc.model_dump(by_alias=True, mode="json") if isinstance(doc, BaseModel) else dict(doc)
    data.pop(LOCK_KEY, None)
    model = validate_document(data)
    out = model.model_dump(by_alias=True, mode="json")
    out.pop(LOCK_KEY, None)
    out[LOCK_KEY] = content_hash(out)
    return out


def dumps_pretty(data: Any) -> str:
    """How jury writes JSON files: indent 2, sorted keys, UTF-8 text, trailing newline."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def write_locked(doc: VerdictFile | dict[str, Any], path: str | Path) -> Path:
    """Lock ``doc`` and write it to ``path``, which must not exist yet.

    The write is atomic (a crash leaves no partial file) and, where the file system has
    hard links, the final step cannot replace a file another process wrote meanwhile.
    """
    p = Path(path)
    if p.exists():
        raise VerdictError(f"{p}: already exists; {_NEVER_REWRITTEN}")
    text = dumps_pretty(lock(doc))
    p.parent.mkdir(parents=True, exist_ok=True)
    staged = p.with_name(f".{p.name}.{secrets.token_hex(4)}.staged")
    write_atomic(staged, text)
    try:
        os.link(staged, p)  # fails if p appeared meanwhile: never replaces a file
    except FileExistsError:
        raise VerdictError(f"{p}: already exists; {_NEVER_REWRITTEN}") from None
    except OSError:  # no hard links here: fall back to check-then-rename
        if p.exists():
            raise VerdictError(f"{p}: already exists; {_NEVER_REWRITTEN}") from None
        os.replace(staged, p)
    finally:
        staged.unlink(missing_ok=True)
    return p


def utc_now() -> str:
    """The current time as jury stamps it: ``2026-11-29T20:00:00Z``."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_path(kind: str, verdicts_dir: str | Path, created_at: str | datetime) -> Path:
    """``<verdicts_dir>/<kind>-20261129T200000Z.json``, with -2, -3, ... if taken."""
    if kind not in KINDS:
        raise VerdictError(f"unknown verdict kind {kind!r}; expected one of: {', '.join(KINDS)}")
    when = created_at if isinstance(created_at, datetime) else datetime.fromisoformat(created_at)
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc)
    stem = f"{kind}-{when.strftime('%Y%m%dT%H%M%SZ')}"
    folder = Path(verdicts_dir)
    candidate, n = folder / f"{stem}.json", 1
    while candidate.exists():
        n += 1
        candidate = folder / f"{stem}-{n}.json"
    return candidate


# ------------------------------------------------------------------ reading


def _read_json(p: Path) -> Any:
    from jury.inputs.io import loads_document  # the one safe JSON loader: depth, size, duplicates, NaN

    text = read_text(p)
    try:
        return loads_document(text, str(p))
    except InputError as exc:  # malformed, duplicate key, NaN/Infinity, too deep, lone surrogate
        raise VerdictError(str(exc)) from None


def _check_lock(p: Path, data: Any) -> None:
    if not isinstance(data, dict):
        raise VerdictError(f"{p}: expected a JSON object, got {type(data).__name__}")
    claimed = data.get(LOCK_KEY)
    if claimed is None:
        raise VerdictError(f"{p}: not locked: no {LOCK_KEY}")
    try:
        actual = content_hash(data)
    except VerdictError as exc:
        raise VerdictError(f"{p}: {exc}") from None
    if claimed != actual:
        raise VerdictError(
            f"{p}: content hash mismatch: the file was changed after it was locked "
            f"(expected {claimed}, got {actual})"
        )


def is_locked_file(path: str | Path) -> bool:
    """Does this path hold a (claimed) locked verdict file? Commands never write over one."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        with open(p, "rb") as fh:
            head = fh.read(1 << 20)
    except OSError:
        return False
    return LOCK_KEY.encode() in head and b'"kind"' in head


def load_kind(path: str | Path, kind: str) -> VerdictFile:
    """load_locked, then refuse a file of another kind (an audit given as adjudication...)."""
    doc = load_locked(path)
    if doc.kind != kind:
        raise VerdictError(f"{path}: is an {doc.kind} file, not an {kind}")
    return doc


def superseded_by(path: str | Path, doc: VerdictFile) -> list[Path]:
    """The verdict files in the same folder that name ``doc`` in ``supersedes`` and hold
    their own lock (a re-audit writes its new file beside the old one)."""
    p = Path(path)
    out = []
    for other in sorted(p.parent.glob("*.json")):
        if not other.is_file() or other.resolve() == p.resolve():
            continue
        try:
            data = _read_json(other)
        except (OSError, VerdictError):
            continue  # not a verdict file, or a damaged one: `jury verify` reports it
        if not isinstance(data, dict) or data.get("kind") not in KINDS or data.get("supersedes") != doc.content_sha256:
            continue
        try:
            _check_lock(other, data)
        except VerdictError:
            continue
        out.append(other)
    return out


def load_current(path: str | Path, kind: str, *, allow_superseded: bool = False) -> VerdictFile:
    """load_kind, then refuse a file that a newer verdict file in its folder supersedes
    (its numbers are the old panel's) unless ``allow_superseded``."""
    doc = load_kind(path, kind)
    if not allow_superseded:
        newer = superseded_by(path, doc)
        if newer:
            raise VerdictError(
                f"{path}: superseded by {', '.join(str(n) for n in newer)} (re-run with a changed panel, prompt "
                "or inputs); use that file, or pass --allow-superseded to publish the old numbers anyway"
            )
    return doc


def load_locked(path: str | Path) -> VerdictFile:
    """Read a verdict file, check its lock, validate it, then recompute its verdicts from its
    votes (``check_rules``). Every verdict reader uses this."""
    p = Path(path)
    data = _read_json(p)
    _check_lock(p, data)
    doc = validate_document(data, source=str(p))
    check_rules(doc, p)
    return doc


def check_rules(doc: VerdictFile, source: str | Path = "verdict document") -> None:
    """Refuse a file whose verdicts, flags, credit or summary counts do not follow from its
    own votes under its own rules (k, early stop, quorum, ballot style; jury/judging/rules.py).
    The lock only proves the file is unchanged since it was locked, not that it is consistent."""
    from jury.judging.rules import check_document

    problem = check_document(doc)
    if problem:
        raise VerdictError(f"{source}: {problem}; refused: the verdicts must follow from the votes")


# ------------------------------------------------------------------ binding and verifying


def bind_file(path: str | Path, relative_to: str | Path, sha256: str | None = None) -> FileBinding:
    """Hash ``path`` (unless its ``sha256`` is already known) and name it relative to the
    folder ``relative_to`` when possible."""
    p = Path(path)
    with file_errors(p):
        digest = sha256 or sha256_file(p)
    absolute = p.resolve()
    try:
        shown = Path(os.path.relpath(absolute, Path(relative_to).resolve())).as_posix()
    except ValueError:  # another drive (Windows)
        shown = absolute.as_posix()
    return FileBinding(path=shown, sha256=digest)


SHIPPED_PROMPT = "jury:prompts/"  # a template shipped with jury, found by name in its prompts folder
PANEL_RELATIVE = "panel:"  # a template found relative to the panel file's folder


def bind_template(path: str | Path, panel_path: str | Path | None, relative_to: str | Path) -> FileBinding:
    """A prompt template bound by name and sha256: ``jury:prompts/<name>`` for a template
    shipped with jury (wherever jury is installed), ``panel:<path>`` relative to the panel
    file for any other; without a panel file, relative to ``relative_to`` like other inputs."""
    from jury.judging.panels import PROMPTS_DIR

    p = Path(path)
    with file_errors(p):
        digest = sha256_file(p)
    absolute = p.resolve()
    if absolute.parent == PROMPTS_DIR.resolve():
        return FileBinding(path=SHIPPED_PROMPT + absolute.name, sha256=digest)
    if panel_path is not None:
        try:
            rel = Path(os.path.relpath(absolute, Path(panel_path).resolve().parent)).as_posix()
            return FileBinding(path=PANEL_RELATIVE + rel, sha256=digest)
        except ValueError:  # another drive (Windows)
            pass
    return bind_file(p, relative_to)


def locate(binding: FileBinding, doc: VerdictFile, base: str | Path) -> Path:
    """Where a bound file is now: shipped templates in jury's prompts folder, panel-relative
    templates beside the bound panel file, anything else relative to ``base`` (the verdict
    file's folder) unless absolute."""
    path = binding.path
    if path.startswith(SHIPPED_PROMPT):
        from jury.judging.panels import PROMPTS_DIR

        return PROMPTS_DIR / path[len(SHIPPED_PROMPT):]
    if path.startswith(PANEL_RELATIVE):
        panel_dir = Path(base)
        if doc.panel.path is not None:
            panel = Path(doc.panel.path)
            panel_dir = (panel if panel.is_absolute() else Path(base) / panel).parent
        return panel_dir / path[len(PANEL_RELATIVE):]
    target = Path(path)
    return target if target.is_absolute() else Path(base) / target


def bindings(doc: VerdictFile) -> list[tuple[str, FileBinding]]:
    """Every bound input file as (role, binding): gold, runs, databases, prompts, panel."""
    out: list[tuple[str, FileBinding]] = [("gold", doc.inputs.gold)]
    out += [(f"runs[{i}]", b) for i, b in enumerate(doc.inputs.runs)]
    out += [(f"databases[{k}]", b) for k, b in sorted(doc.inputs.databases.items())]
    out += [(f"prompts[{k}]", b) for k, b in sorted(doc.prompts.items())]
    if doc.panel.path is not None and doc.panel.sha256 is not None:
        out.append(("panel", FileBinding(path=doc.panel.path, sha256=doc.panel.sha256)))
    return out


@dataclass
class VerifyReport:
    """What ``verify_file`` found. ``ok``: the lock holds and no present input changed."""

    path: Path
    ok: bool = False
    lock_ok: bool = False
    checked: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    superseded_by: list[Path] = field(default_factory=list)  # newer files in its folder that replace it


def _reason(message: str, p: Path) -> str:
    """An error message without its leading file name ("x.json:3: m" -> "line 3: m")."""
    if message.startswith(f"{p}: "):
        return message[len(f"{p}: "):]
    if message.startswith(f"{p}:"):
        return "line " + message[len(f"{p}:"):]
    return message


def verify_file(path: str | Path, *, base_dir: str | Path | None = None) -> VerifyReport:
    """Check a verdict file's lock, then re-hash every bound input present on disk.

    Bound paths are resolved against ``base_dir`` (default: the verdict file's folder)
    unless absolute (prompt templates: see ``locate``). A file that a newer verdict file in
    its folder supersedes is ok when its lock and rules hold: its bindings are not checked
    (its panel or inputs changed; that is why it was re-run) and ``superseded_by`` names
    the newer file. A changed input is ``mismatched`` (not ok); an absent one is listed
    in ``absent`` and is not a failure. A missing verdict file raises ``InputError``.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file" if not p.exists() else f"{p}: is not a file")
    report = VerifyReport(path=p)
    try:
        data = _read_json(p)
        _check_lock(p, data)
    except JuryError as exc:
        report.messages.append(_reason(str(exc), p))
        return report
    report.lock_ok = True
    try:
        doc = validate_document(data, source=str(p))
        check_rules(doc, p)
    except JuryError as exc:
        report.messages.append(_reason(str(exc), p))
        return report
    report.superseded_by = superseded_by(p, doc)
    if report.superseded_by:  # re-run because its panel or inputs changed: those changes are expected
        report.ok = True
        return report
    base = Path(base_dir) if base_dir is not None else p.parent
    for role, binding in bindings(doc):
        label = f"{role} {binding.path}"
        target = locate(binding, doc, base)
        if not target.exists():
            report.absent.append(label)
            continue
        report.checked.append(label)
        try:
            actual = sha256_file(target)
        except OSError as exc:
            report.mismatched.append(label)
            report.messages.append(f"{label}: cannot read: {exc.strerror or exc}")
            continue
        if actual != binding.sha256:
            report.mismatched.append(label)
            report.messages.append(
                f"{label} changed after the verdicts were made "
                f"(sha256 expected {binding.sha256[:12]}..., got {actual[:12]}...)"
            )
    report.ok = not report.mismatched
    return report


# ------------------------------------------------------------------ JSON Schema


def schema_for(kind: str) -> dict[str, Any]:
    """The JSON Schema of a verdict file of ``kind`` (what verdicts/schema/ holds)."""
    if kind not in _FILE_MODELS:
        raise VerdictError(f"unknown verdict kind {kind!r}; expected one of: {', '.join(KINDS)}")
    schema = _FILE_MODELS[kind].model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def schema_filename(kind: str) -> str:
    return f"{kind}-v{FORMAT_VERSION}.schema.json"


def write_schemas(directory: str | Path) -> list[Path]:
    """(Re)write ``<directory>/<kind>-v1.schema.json`` for every kind."""
    written = []
    for kind in KINDS:
        target = Path(directory) / schema_filename(kind)
        write_atomic(target, dumps_pretty(schema_for(kind)))
        written.append(target)
    return written
