"""Hash-locked verdict files: the document models and their JSON Schema.

A verdict file is one JSON document (an adjudication of model failures, or an audit of
gold SQL) that binds the exact inputs it was computed from (gold, runs, databases,
prompts, panel: path and sha256 each), the panel and settings, and every juror's vote.
It is *locked*: ``content_sha256`` is ``"sha256:" + sha256(canonical JSON of everything
else)``, RFC 8785 for ``format_version`` 2 (jury/verdicts/lock.py: lock, write, read).
Binding inputs and ``jury verify`` are in jury/verdicts/verify.py.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticUndefined

from jury.errors import VerdictError
from jury.inputs.records import normalise_qid
from jury.inputs.writer import write_output
from jury.vocab import CREDITED_VERDICTS, GoldCheck, Verdict, VerdictName

FORMAT_VERSION = 2  # 2: locked with RFC 8785; 1: jury's first canonical JSON (still read)
KINDS: tuple[str, ...] = ("adjudication", "audit")
LOCK_KEY = "content_sha256"

Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
PrefixedSha256 = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
#: One reviewed item: (kind, verdict file content_sha256, model or None, question id).
ReviewItem = tuple[str, str, str | None, int | str]
D = TypeVar("D")


def schema_filename(kind: str) -> str:
    return f"{kind}-v{FORMAT_VERSION}.schema.json"


def schema_field(kind: str | None = None) -> Any:
    """The ``$schema`` field of a locked document (the relative file name of its JSON Schema):
    ``schema/<kind>-v2.schema.json`` by default when ``kind`` is given, else required."""
    default = PydanticUndefined if kind is None else f"schema/{schema_filename(kind)}"
    return Field(default, alias="$schema", title="$schema", description="Relative file name of this document's JSON Schema.")


def iso_time(value: str) -> str:
    """A pydantic validator: the value must be an ISO 8601 time."""
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not an ISO 8601 time: {value!r}") from None
    return value


# ------------------------------------------------------------------ document models


class DocumentModel(BaseModel):
    """A part of a verdict or review document: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class OmitUnused(DocumentModel):
    """A model whose newer optional keys (``_OPTIONAL``) are written only when used, so files
    made without them stay byte-identical to before."""

    _OPTIONAL: ClassVar[tuple[str, ...]] = ()  # a class attribute, not pydantic's private one copied per instance

    @model_serializer(mode="wrap")
    def _omit_unused(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)  # a model serializes to a dict
        for key in self._OPTIONAL:
            if data.get(key) is None:
                data.pop(key, None)
        return data


class FileBinding(DocumentModel):
    """One input file: its path and the sha256 of its bytes when the verdicts were made."""

    path: str = Field(
        description="As given: relative to the verdict file's folder when possible, else absolute; POSIX separators."
    )
    sha256: Sha256Hex = Field(description="Hex sha256 of the file's bytes.")


class RunBinding(FileBinding, OmitUnused):
    """One run file: a FileBinding, with the model a prediction file was read as when it was
    given as NAME=PATH (written only then: a re-run reads the file as that model again)."""

    _OPTIONAL = ("model",)

    model: str | None = Field(
        None, min_length=1, description="NAME of NAME=PATH: the model this prediction file was read as (absent: its file name's)."
    )


class Inputs(DocumentModel):
    gold: FileBinding
    runs: list[RunBinding] = []
    databases: dict[str, FileBinding] = Field(default={}, description="db_id -> database file.")


class PanelBinding(DocumentModel):
    """The jury panel: its definition file (if any), ballot style and jurors."""

    name: str
    path: str | None = None
    sha256: Sha256Hex | None = None
    ballot_style: str
    k: int = Field(ge=1, description="Jurors on the panel.")
    quorum: str | int | None = None
    show_evidence: bool = True
    jurors: list[dict[str, Any]] = Field(
        description="Each juror's public description (name, model, family, api_base, params, ...)."
    )


class RunCalls(DocumentModel):
    """What the one run that wrote a file called (``Totals.this_run``)."""

    ballots_asked: int = Field(ge=0, description="Ballots this run sent requests for.")
    requests: int = Field(ge=0, description="Requests this run sent, retries included.")
    votes_reused: int = Field(ge=0, description="Votes this run took from the store instead of calling (unchanged jurors).")
    cost_usd: float = Field(ge=0, description="Cost of this run's calls that litellm could price.")


class Totals(OmitUnused):
    _OPTIONAL = ("ballots_asked", "retries", "this_run")

    calls: int = Field(
        0,
        ge=0,
        description="Requests sent to jurors for this file's ballots, retries included: every logged attempt, "
        "in any run, process or shard.",
    )
    ballots_asked: int | None = Field(
        None, ge=0, description="Ballots (distinct requests) at least one request was sent for; absent in older files."
    )
    retries: int | None = Field(
        None,
        ge=0,
        description="calls - ballots_asked: requests that repeated an earlier one of the same ballot (a rate limit, "
        "server error or timeout retried, or a rerun after a failure); absent in older files.",
    )
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    cost_usd: float = Field(
        0.0, ge=0, description="Cost of the calls litellm could price (unpriced_models' calls are not in it)."
    )
    unpriced_models: list[str] | None = Field(
        None,
        description="Juror models (litellm strings) with calls litellm could not price, so cost_usd leaves them out; "
        "null in files written before it was recorded.",
    )
    this_run: RunCalls | None = Field(
        None,
        description="A file that supersedes another (jury reaudit): what the run that wrote it called; the fields "
        "above count every call made for the file's ballots, the votes it reused from the store included. Absent in "
        "other files.",
    )


class SwappedVote(DocumentModel):
    """With --swap: the same juror's ballot with the answers in the other order."""

    order: Literal["gold_first", "candidate_first"]
    raw_verdict: str | None = None
    category: str | None = None
    reasoning: str | None = None
    abstained: bool = False
    reason: str | None = None
    request_sha256: str | None = None


class Vote(OmitUnused):
    """One juror's ballot on one question (or why there is none)."""

    _OPTIONAL = ("error_category", "via", "repeat")

    juror: str = Field(description="Juror name.")
    family: str = Field(description="Juror's model family.")
    model: str = Field(description="litellm model string.")
    order: Literal["gold_first", "candidate_first"] | None = Field(
        None, description="Adjudication only: which answer was shown first."
    )
    raw_verdict: str | None = Field(None, description="Exactly what the juror answered.")
    category: str | None = Field(
        None,
        description="Mapped verdict: gold_defect, format_equivalence, genuine_error, ambiguous (adjudication); valid, defective (audit).",
    )
    defect_type: str | None = Field(None, description="Audit only.")
    reasoning: str | None = None
    abstained: bool = False
    reason: str | None = Field(None, description="Why the juror abstained (failed after retries, unparseable, ...).")
    skipped: bool = Field(False, description="Early stop: not asked because the majority was already settled.")
    request_sha256: str | None = Field(None, description="Hash of the request, linking to the store's call log.")
    swapped: SwappedVote | None = Field(
        None,
        description="--swap only: the juror's ballot with the answers in the other order. The vote counts only when "
        "both orders give the same category; otherwise it abstains as inconsistent.",
    )
    inconsistent: bool = Field(False, description="--swap only: the two orders gave different categories (an abstention).")
    error_category: str | None = Field(
        None,
        description="--taxonomy only (absent otherwise): the error category this juror picked with a genuine_error vote "
        "(an id of the taxonomy named in settings.taxonomy).",
    )
    via: Literal["batch"] | None = Field(
        None,
        description="--batch only (absent otherwise): the juror's reply came through its provider's batch API "
        "(the same request, at the batch price).",
    )
    repeat: int | None = Field(
        None,
        ge=1,
        description="--repeats only (absent otherwise, and in repeat 0): the repeat of the panel this vote belongs to "
        "(a record's repeat_votes).",
    )


class AdjudicationRecord(OmitUnused):
    _OPTIONAL = ("error_category", "test", "episode", "turn", "repeat_votes")

    question_id: int | str
    db_id: str
    model: str = Field(description="The model whose failure was adjudicated.")
    families: list[str] = Field(description="That model's families (excluded from its panel).")
    jurors: list[str]
    votes: list[Vote]
    verdict: VerdictName
    credited: bool = Field(description="Whether the answer counts as correct in the adjudicated column.")
    gold_also_wrong: bool = False
    answer_key: str | None = Field(None, description="sha256 of (database sha256, the model's SQL): the answer that was judged.")
    gold_key: str | None = Field(None, description="sha256 of (database sha256, the gold SQL) it was judged against.")
    review_pass: bool = Field(
        False,
        description="--review-passes: a sampled strict MATCH sent to the jury (not a failure); a genuine_error verdict "
        "makes it a false pass. It never changes the one-sided adjudicated column.",
    )

    error_category: str | None = Field(
        None,
        description="--taxonomy only (absent otherwise): the error category a strict majority of the genuine_error "
        "votes picked (null without one, or when the verdict is not genuine_error).",
    )
    test: str | None = Field(
        None,
        description="Test-suite runs only (absent otherwise): the failing test whose expected and actual outputs were "
        "judged for format equivalence, or (panel ballot_style classify) whose error was classified.",
    )
    episode: str | int | None = Field(
        None, description="Test-suite runs, turns of an episode only (absent otherwise): the episode of the judged test."
    )
    turn: int | None = Field(None, description="Test-suite runs, turns of an episode only (absent otherwise): its turn.")
    repeat_votes: list[Vote] | None = Field(
        None,
        description="--repeats R > 1 only (absent otherwise): the votes of repeats 1..R-1, repeat by repeat, each with "
        "its repeat (each repeat's ballots drew their own answer order). votes, verdict and credited are repeat 0's.",
    )

    _qid = field_validator("question_id", mode="before")(normalise_qid)

    @property
    def false_pass(self) -> bool:
        return self.review_pass and self.verdict == Verdict.GENUINE_ERROR.value

    @model_validator(mode="after")
    def _credit_follows_verdict(self) -> AdjudicationRecord:
        if self.credited != (self.verdict in CREDITED_VERDICTS):
            raise ValueError(f"credited={self.credited} contradicts verdict {self.verdict!r}")
        return self


class CheckFact(DocumentModel):
    """One deterministic gold check that flagged the query (`jury check-gold`), with its evidence."""

    name: GoldCheck = Field(description="The check (jury check-gold's names).")
    evidence: str = Field(description="What shows it: the differing results, the tied rows, the error.")


class AuditRecord(OmitUnused):
    _OPTIONAL = ("checks", "repeat_votes")

    question_id: int | str
    db_id: str
    difficulty: str | None = None
    split: str | None = None
    jurors: list[str]
    votes: list[Vote]
    flagged: bool = Field(description="The panel's majority found the gold SQL defective.")
    decided: bool = Field(description="False when abstentions left no majority either way.")
    defect_types: list[str] = []
    gold_key: str | None = Field(
        None,
        description="sha256 of (database sha256, the gold SQL) that was judged; null in files written before it was recorded.",
    )
    checks: list[CheckFact] | None = Field(
        None,
        description="The deterministic checks that flagged the gold query (empty: none did), run before any juror "
        "call (settings.checks); absent when they were not run (--no-checks, a recorded gold result, older files).",
    )
    repeat_votes: list[Vote] | None = Field(
        None,
        description="--repeats R > 1 only (absent otherwise): the votes of repeats 1..R-1, repeat by repeat, each with "
        "its repeat (the same ballot, asked again). votes, flagged, decided and defect_types are repeat 0's.",
    )

    _qid = field_validator("question_id", mode="before")(normalise_qid)


class MergedStore(DocumentModel):
    """A store `jury store merge` merged into the store a verdict file was written from."""

    path: str = Field(description="The merged store file as it was on the merging machine (absolute).")
    sha256: Sha256Hex = Field(description="Hex sha256 of that store file's bytes when it was merged.")
    size: int | None = Field(None, description="Its size in bytes.")
    signed_by: str | None = Field(
        None, description="Fingerprint of the trusted key whose signature (<store>.sig) was checked (merge --trusted-key)."
    )
    trust_executions: bool = Field(
        description="True if its executions (and timings, gold orders, database checks) were merged "
        "(merge --trust-executions); false: they were computed again from the databases."
    )


class Provenance(OmitUnused):
    """The software behind a file (``jury.version.provenance()``): not part of what makes two
    verdict sets the same (see jury/verdicts/assemble.py)."""

    _OPTIONAL = ("merged_stores", "privileged_logins")

    jury_version: str
    litellm_version: str | None = Field(description="litellm's installed version; null if it was not installed.")
    git_revision: str | None = Field(
        description="HEAD of the git checkout jury ran from; null when installed from a package or when git was unavailable."
    )
    merged_stores: list[MergedStore] | None = Field(
        None,
        description="The stores merged (`jury store merge`) into the store this file was written from, with their "
        "sha256; absent when it was never merged into.",
    )
    privileged_logins: list[str] | None = Field(
        None,
        description="The engine databases (URLs, no query) executed through a login allowed to do more than read "
        "(--allow-privileged-login); absent when every login could only read.",
    )


class PeopleDocument(DocumentModel):
    """The head of a locked file of people's work (a review sample, an adjudication round):
    its kind, format version 2, jury's version and provenance and when it was written."""

    kind: str
    format_version: Literal[2] = 2
    jury_version: str
    provenance: Provenance | None = None
    created_at: str

    _iso_time = field_validator("created_at")(iso_time)


def record_key(record: DocumentModel) -> tuple[str | int | None, ...]:
    if isinstance(record, AdjudicationRecord):
        if record.test is None:
            return (record.model, record.question_id)
        return (record.model, record.question_id, record.episode, record.turn, record.test)
    assert isinstance(record, AuditRecord)
    return (record.split, record.question_id)


class VerdictFile(DocumentModel):
    """A hash-locked set of verdicts (see jury/verdicts/lock.py and verdicts/README.md)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = schema_field()
    kind: Literal["adjudication", "audit"]
    format_version: Literal[1, 2] = Field(
        2,
        description="How content_sha256 was computed: 2 = RFC 8785 (JCS) canonical JSON, "
        "1 = files written before (sorted keys, compact separators, Python's number format).",
    )
    jury_version: str
    provenance: Provenance | None = Field(
        None, description="jury and litellm versions and jury's git revision; null in files written before it was recorded."
    )
    created_at: str = Field(description="ISO 8601 time, UTC.")
    supersedes: PrefixedSha256 | None = Field(None, description="content_sha256 of the file this one replaces.")
    inputs: Inputs
    prompts: dict[str, FileBinding] = Field(description="Prompt name -> template file.")
    panel: PanelBinding
    settings: dict[str, Any] = Field(description="Comparator, thresholds, seed, early_stop, ... (free-form JSON).")
    totals: Totals
    summary: dict[str, Any] = {}
    records: list[AdjudicationRecord] | list[AuditRecord]
    content_sha256: PrefixedSha256 | None = Field(
        None, description="The lock: 'sha256:' + sha256 of the canonical JSON (by format_version) of everything else."
    )

    _iso_time = field_validator("created_at")(iso_time)

    @model_validator(mode="after")
    def _records_fit_kind(self) -> VerdictFile:
        expected = AdjudicationRecord if self.kind == "adjudication" else AuditRecord
        for i, record in enumerate(self.records):
            if not isinstance(record, expected):
                raise ValueError(f"records.{i} is not an {self.kind} record")
        seen: dict[tuple[str | int | None, ...], int] = {}
        for i, record in enumerate(self.records):
            key = record_key(record)
            if key in seen:
                raise ValueError(f"records.{i} repeats records.{seen[key]} ({key!r})")
            seen[key] = i
        return self


class AdjudicationFile(VerdictFile):
    """A hash-locked jury adjudication of model failures (jury verdict file)."""

    schema_: str = schema_field("adjudication")
    kind: Literal["adjudication"]
    records: list[AdjudicationRecord]


class AuditFile(VerdictFile):
    """A hash-locked jury audit of gold SQL (jury verdict file)."""

    schema_: str = schema_field("audit")
    kind: Literal["audit"]
    records: list[AuditRecord]


_FILE_MODELS: dict[str, type[VerdictFile]] = {"adjudication": AdjudicationFile, "audit": AuditFile}
_ADAPTER: TypeAdapter[AdjudicationFile | AuditFile] = TypeAdapter(
    Annotated[AdjudicationFile | AuditFile, Field(discriminator="kind")]
)


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


def parse_document(validate: Callable[[dict[str, Any]], D], data: dict[str, Any], source: str) -> D:
    """``validate(data)``, with a document that is not a JSON object or does not fit its model
    refused in one line naming ``source`` and the first problem (a VerdictError)."""
    if not isinstance(data, dict):
        raise VerdictError(f"{source}: expected a JSON object, got {type(data).__name__}")
    try:
        return validate(data)
    except ValidationError as exc:
        raise VerdictError(f"{source}: {_validation_message(exc)}") from None


def validate_document(data: dict[str, Any], source: str = "verdict document") -> VerdictFile:
    """Validate a verdict document (an AdjudicationFile or AuditFile by ``kind``); no lock check."""
    return parse_document(_ADAPTER.validate_python, data, source)


def check_made_for(
    verdict_files: Iterable[tuple[str | Path, VerdictFile]], gold_file: str | Path, run_files: Collection[str | os.PathLike[str]]
) -> None:
    """Refuse, naming the input, verdict files bound to another gold or run file than the ones
    given now (``verdict_files``: (path, VerdictFile) pairs). Callers ask this when the
    verdicts do not fit the evaluation (unjudged failures, verdicts on other answers), so the
    error says why ("made for another gold file") instead of counting missing verdicts."""
    from jury.inputs.io import sha256_file

    def shown(path: str | Path, binding: FileBinding) -> str:  # bound paths are relative to the verdict file's folder
        bound = Path(binding.path)
        return os.path.normpath(bound if bound.is_absolute() else Path(path).parent / bound)

    gold_sha = sha256_file(gold_file)
    given_runs = {sha256_file(p): p for p in run_files}
    for path, doc in verdict_files:
        bound = doc.inputs.gold
        if bound.sha256 != gold_sha:
            raise VerdictError(
                f"{path} was made for another gold file: it binds {shown(path, bound)} (sha256 {bound.sha256[:12]}), but the "
                f"gold given now, {gold_file}, has sha256 {gold_sha[:12]}; give the gold it binds or re-run `jury adjudicate`"
            )
        for run in doc.inputs.runs:
            if run.sha256 not in given_runs:
                raise VerdictError(
                    f"{path} was made for another run file: it binds {shown(path, run)} (sha256 {run.sha256[:12]}), and no run "
                    f"given now ({', '.join(str(p) for p in run_files)}) has those bytes; give that run or re-run `jury adjudicate`"
                )


# ------------------------------------------------------------------ JSON files and JSON Schema


GROUP = 256  # the records (and long list items) encoded together


class RecordDumps:
    """A verdict document's records as its JSON dict holds them (each validated by ``model``
    and dumped: aliases, JSON types, unused optional keys left out), made a group at a time
    whenever they are encoded, never all at once (issue 46: the records given, their models
    and their dumps were three copies of the document's biggest part at the peak of
    `jury adjudicate`). ``records``: JSON dicts or record models; they are not copied."""

    def __init__(self, records: Sequence[Any], model: type[DocumentModel]) -> None:
        self.records = records
        self.model = model

    def __len__(self) -> int:
        return len(self.records)

    def dumped(self, record: Any) -> dict[str, Any]:
        data = record.model_dump(by_alias=True, mode="json") if isinstance(record, BaseModel) else record
        out: dict[str, Any] = self.model.model_validate(data).model_dump(by_alias=True, mode="json")
        return out

    def groups(self, size: int = GROUP) -> Iterator[list[dict[str, Any]]]:
        """The dumped records, ``size`` at a time."""
        for start in range(0, len(self.records), size):
            yield [self.dumped(r) for r in self.records[start : start + size]]

    def materialized(self) -> list[dict[str, Any]]:
        return [r for group in self.groups() for r in group]


def materialized(data: Any) -> Any:
    """``data`` with every RecordDumps value of a top-level dict made a list (the whole document)."""
    if type(data) is not dict or not any(isinstance(v, RecordDumps) for v in data.values()):
        return data
    return {k: v.materialized() if isinstance(v, RecordDumps) else v for k, v in data.items()}


def dumps_pretty(data: Any) -> str:
    """How jury writes JSON files: indent 2, sorted keys, UTF-8 text, trailing newline."""
    return json.dumps(materialized(data), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def pretty_chunks(data: Any, size: int = 1 << 20) -> Iterator[bytes]:
    """``dumps_pretty(data)`` as UTF-8, in chunks of about ``size`` characters: the same bytes
    (json.dumps with an indent joins this same encoder's pieces), never the whole text at once
    (a verdict file of BIRD's size is tens of MB; issue 46). A top-level RecordDumps value is
    encoded a group of records at a time, never dumped whole."""
    held: list[str] = []
    count = 0
    for piece in _pretty_pieces(data):
        held.append(piece)
        count += len(piece)
        if count >= size:
            yield "".join(held).encode("utf-8")
            held.clear()
            count = 0
    held.append("\n")
    yield "".join(held).encode("utf-8")


def _pretty_pieces(data: Any) -> Iterator[str]:
    encoder = json.JSONEncoder(indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    lazy = [k for k, v in data.items() if isinstance(v, RecordDumps)] if type(data) is dict else []
    if not lazy:
        yield from encoder.iterencode(data)
        return
    # the document with each RecordDumps value a marker string (json escapes its NULs): its text,
    # small without the records, is cut at the markers, where the records are encoded one by one
    # at the indent of a top-level value's items (an item's text at level 0 with each of its
    # newlines, all structural since JSON escapes those of strings, indented two levels more)
    nonce = secrets.token_hex(8)
    marked = {k: f"\x00{nonce}:{lazy.index(k)}\x00" if k in lazy else v for k, v in data.items()}
    parts = re.split(f'"\\\\u0000{nonce}:(\\d+)\\\\u0000"', encoder.encode(marked))
    for n, part in enumerate(parts):
        if n % 2 == 0:
            yield part
            continue
        records: RecordDumps = data[lazy[int(part)]]
        if not len(records):
            yield "[]"
            continue
        yield "["
        first = True
        for group in records.groups():
            for record in group:
                yield ("\n    " if first else ",\n    ") + encoder.encode(record).replace("\n", "\n    ")
                first = False
        yield "\n  ]"


def schema_for(kind: str) -> dict[str, Any]:
    """The JSON Schema of a verdict file of ``kind`` (what verdicts/schema/ holds)."""
    if kind not in _FILE_MODELS:
        raise VerdictError(f"unknown verdict kind {kind!r}; expected one of: {', '.join(KINDS)}")
    schema = _FILE_MODELS[kind].model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def write_schemas(directory: str | Path) -> list[Path]:
    """(Re)write ``<directory>/<kind>-v2.schema.json`` for every kind (its schema accepts
    format_version 1 and 2; the ``-v1`` files that format 1 documents name are left as they are)."""
    written = []
    for kind in KINDS:
        target = Path(directory) / schema_filename(kind)
        write_output(target, dumps_pretty(schema_for(kind)))
        written.append(target)
    return written
