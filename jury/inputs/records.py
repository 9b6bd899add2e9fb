"""The records that flow through jury: gold items, run records, execution results.

Everything downstream (execution, comparison, jury, store, verdicts, scoring) takes and
returns these pydantic models, so a field means the same thing everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

QuestionId = int | str
ModelT = TypeVar("ModelT", bound=BaseModel)
# The largest integer an RFC 8785 (I-JSON) number holds exactly: ids must survive the verdict lock.
MAX_EXACT_INT = 2**53 - 1


def _normalise_id(value: Any, what: str = "question_id") -> Any:
    """BIRD ids are integers; a JSONL writer may quote them. "717" and 717 are one question
    (and, for test-suite records, "1" and 1 one episode)."""
    if isinstance(value, bool):
        raise ValueError(f"{what} must be an integer or a string, not a boolean")
    if isinstance(value, float):  # 1.0 is not the id 1: ids are exact
        raise ValueError(f"{what} must be an integer or a string, not a number with a decimal point ({value!r})")
    if isinstance(value, str):
        digits = value.strip().removeprefix("-")
        if digits.isascii() and digits.isdigit():
            if len(digits) > 16:
                raise ValueError(f"{what} of {len(digits)} digits is out of range (at most {MAX_EXACT_INT})")
            value = int(value.strip())
    if isinstance(value, int) and not -MAX_EXACT_INT <= value <= MAX_EXACT_INT:
        raise ValueError(
            f"{what} is out of range (an integer id must be within ±{MAX_EXACT_INT}, "
            "the integers JSON numbers hold exactly; use a string id)"
        )
    return value


def normalise_qid(value: Any) -> Any:
    return _normalise_id(value)


def _normalise_episode(value: Any) -> Any:
    return None if value is None else _normalise_id(value, "episode")


def not_blank(message: str) -> Callable[[str], str]:
    """A field validator that refuses a value of only whitespace with ``message``."""

    def check(value: str) -> str:
        if not value.strip():
            raise ValueError(message)
        return value

    return check


Finite = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]
"""A finite, non-negative number (an int or a float, never a bool or a string)."""


class RecordedResult(BaseModel):
    """A query result recorded elsewhere (an engine jury cannot open), compared exactly as an
    executed one: `columns`, the full `rows`, or the `error` the query raised."""

    model_config = ConfigDict(extra="forbid")

    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    error: str | None = None


class RecordedOutcome(BaseModel):
    """What another evaluation recorded: its execution-match outcome `match` (used as the
    strict outcome; a gold item has none) and the result as `preview` text (shown to jurors)."""

    model_config = ConfigDict(extra="forbid")

    match: bool | None = None
    preview: str = Field(max_length=100_000)


def _one_recording(obj: Any) -> Any:
    if getattr(obj, "result", None) is not None and getattr(obj, "recorded", None) is not None:
        raise ValueError("give either `result` (a structured result) or `recorded` (a recorded outcome), not both")
    return obj


class GoldItem(BaseModel):
    """One benchmark question with its gold SQL (BIRD's dev.json item)."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    question_id: QuestionId
    db_id: str
    question: str = ""
    evidence: str = ""
    sql: str = Field(validation_alias=AliasChoices("SQL", "sql"))
    difficulty: str | None = None
    order_matters: bool | None = None
    split: str | None = None
    schema_text: str | None = None
    result: RecordedResult | None = None
    recorded: RecordedOutcome | None = None

    _qid = field_validator("question_id", mode="before")(normalise_qid)
    _one = model_validator(mode="after")(_one_recording)

    @field_validator("recorded")
    @classmethod
    def _gold_has_no_match(cls, value: RecordedOutcome | None) -> RecordedOutcome | None:
        if value is not None and value.match is not None:
            raise ValueError("a gold item's `recorded` holds only `preview` (`match` belongs to a run record)")
        return value

    @property
    def has_recording(self) -> bool:
        return self.result is not None or self.recorded is not None


class SuiteTest(BaseModel):
    """One recorded test of a test-suite run (PLSQLBench): its name, whether it passed, and
    optionally the expected and actual outputs and the error it raised."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(min_length=1)
    passed: bool
    expected: str | None = None
    actual: str | None = None
    error: str | None = None

    @model_validator(mode="after")
    def _error_fails(self) -> SuiteTest:
        if self.passed and self.error is not None:
            raise ValueError(f"test {self.name!r} has passed true and an error (a test that errored did not pass)")
        return self


def _suite_fields(obj: Any) -> Any:
    """A record carries recorded `tests` (a test-suite run) or SQL/recorded results, not both."""
    if obj.tests is None:
        for key in ("episode", "turn", "reference_error", "subset", "split"):
            if getattr(obj, key) is not None:
                raise ValueError(f"`{key}` belongs to a test-suite record: give `tests` too")
        return obj
    for key in ("sql", "result", "recorded"):
        if getattr(obj, key) is not None:
            raise ValueError(f"give either `tests` (recorded test outcomes) or `{key}`, not both")
    if not obj.tests:
        raise ValueError("`tests` is empty: a test-suite record lists at least one test")
    names = [t.name for t in obj.tests]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ValueError(f"test {dup!r} is listed twice")
    if obj.turn is not None and obj.episode is None:
        raise ValueError("`turn` needs `episode` (the episode the turn belongs to)")
    if obj.split is not None and obj.subset is None:
        raise ValueError("`split` needs `subset` (the test set the split belongs to)")
    return obj


class RunRecord(BaseModel):
    """One model's answer to one question (one line of a run JSONL file)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, strict=True)
    question_id: QuestionId
    db_id: str | None = None
    sql: str | None = None
    family: str | list[str] | None = None
    cost_usd: Finite | None = None
    latency_s: Finite | None = None
    meta: dict[str, Any] | None = None
    result: RecordedResult | None = None
    recorded: RecordedOutcome | None = None
    episode: Annotated[str, Field(strict=True, min_length=1)] | Annotated[int, Field(strict=True)] | None = None
    turn: Annotated[int, Field(strict=True, ge=1)] | None = None
    tests: list[SuiteTest] | None = None
    reference_error: Annotated[bool, Field(strict=True)] | None = None
    subset: Annotated[str, Field(strict=True, min_length=1)] | None = None  # the benchmark's test set, e.g. Spider2-ST
    split: Annotated[str, Field(strict=True, min_length=1)] | None = None  # the subset's split, e.g. dev or test

    _qid = field_validator("question_id", mode="before")(normalise_qid)
    _episode = field_validator("episode", mode="before")(_normalise_episode)
    _one = model_validator(mode="after")(_one_recording)
    _suite = model_validator(mode="after")(_suite_fields)

    @field_validator("recorded")
    @classmethod
    def _run_needs_match(cls, value: RecordedOutcome | None) -> RecordedOutcome | None:
        if value is not None and value.match is None:
            raise ValueError("`recorded` of a run record needs `match` (true or false: the recorded execution-match outcome)")
        return value

    @property
    def has_recording(self) -> bool:
        return self.result is not None or self.recorded is not None

    _model_named = field_validator("model")(not_blank("model must name the model (got only whitespace)"))

    def families(self) -> list[str]:
        if self.family is None:
            return []
        return [self.family] if isinstance(self.family, str) else list(self.family)


_DEFAULTS: dict[type, tuple[tuple[str, Any, bool], ...]] = {}  # model -> (field, default or factory, is a factory)
_NAMES: dict[type, tuple[tuple[str, ...], frozenset[str]]] = {}  # model -> its fields in order, and as a set


def constructed(cls: type[ModelT], **values: Any) -> ModelT:
    """``cls.model_construct(**values)`` (no validation: every value is of its field's type
    already), for the models built in bulk on a warm score (stored results, scored pairs).

    The same model as model_construct's (``__dict__`` in field order, the fields set, no
    extra, no private attributes; a field not given takes its default, a mutable one a fresh
    copy) at a fraction of its cost: the defaults are read once per class, and when every field
    is given (a stored result) no default is looked at. For models without extra fields,
    private attributes, aliases or a post-init hook (checked)."""
    defaults = _DEFAULTS.get(cls)
    if defaults is None:
        assert cls.model_config.get("extra") != "allow" and not cls.__private_attributes__ and not cls.__pydantic_post_init__
        assert not any(f.alias or f.validation_alias for f in cls.model_fields.values())
        defaults = _DEFAULTS[cls] = tuple(
            (name, f.default_factory, True) if f.default_factory is not None else (name, f.default, False)
            for name, f in cls.model_fields.items()
        )
        _NAMES[cls] = (tuple(cls.model_fields), frozenset(cls.model_fields))
    names, every = _NAMES[cls]
    if values.keys() == every:
        body = {name: values[name] for name in names}
    else:
        body = {}
        for name, default, factory in defaults:
            if name in values:
                body[name] = values[name]
            elif factory:
                body[name] = default()
            else:
                body[name] = default.copy() if isinstance(default, dict | list | set) else default
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", body)
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


ExecStatus = Literal["ok", "error", "timeout"]


class ExecResult(BaseModel):
    """The result of executing one SQL text on one database file.

    `rows` holds at most the row cap; `row_count` is the true count and `truncated` says
    whether rows were dropped. `result_sha256` is an order-independent hash of the full
    set of rows and `ordered_sha256` a hash of the full row list (order and duplicates
    count), so two truncated results can still be compared exactly as sets or as lists.
    """

    # a warm score rebuilds stored results with model_construct: validator and serializer on first use (issue 46)
    model_config = ConfigDict(defer_build=True)

    status: ExecStatus
    columns: list[str] = Field(default_factory=list)
    rows: list[tuple[Any, ...]] = Field(default_factory=list)
    row_count: int = 0
    truncated: bool = False
    result_sha256: str | None = None
    ordered_sha256: str | None = None
    # An engine's result: the set digest of its rows as the driver returned them (DECIMAL as
    # Decimal, dates as dates), which BIRD's rule compares; "unhashable" when a value cannot be
    # in a Python set. None on SQLite (and for a recorded result), whose values are its rows'.
    raw_sha256: str | None = None
    error: str | None = None
    elapsed_s: float = 0.0
    recorded_preview: str | None = None  # a result recorded elsewhere, known only as preview text

    @property
    def ok(self) -> bool:
        return self.status == "ok"
