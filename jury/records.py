"""The records that flow through jury: gold items, run records, execution results.

Everything downstream (execution, comparison, jury, store, verdicts, scoring) takes and
returns these pydantic models, so a field means the same thing everywhere.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

QuestionId = int | str


def _normalise_qid(value: Any) -> Any:
    """BIRD ids are integers; a JSONL writer may quote them. "717" and 717 are one question."""
    if isinstance(value, bool):
        raise ValueError("question_id must be an integer or a string, not a boolean")
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return value


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

    _qid = field_validator("question_id", mode="before")(_normalise_qid)


class RunRecord(BaseModel):
    """One model's answer to one question (one line of a run JSONL file)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    question_id: QuestionId
    db_id: str | None = None
    sql: str | None = None
    family: str | list[str] | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    meta: dict[str, Any] | None = None

    _qid = field_validator("question_id", mode="before")(_normalise_qid)

    def families(self) -> list[str]:
        if self.family is None:
            return []
        return [self.family] if isinstance(self.family, str) else list(self.family)


ExecStatus = Literal["ok", "error", "timeout"]


class ExecResult(BaseModel):
    """The result of executing one SQL text on one database file.

    `rows` holds at most the row cap; `row_count` is the true count and `truncated` says
    whether rows were dropped. `result_sha256` is an order-independent hash of the full
    multiset of rows, so two truncated results can still be compared exactly as sets.
    """

    status: ExecStatus
    columns: list[str] = Field(default_factory=list)
    rows: list[tuple] = Field(default_factory=list)
    row_count: int = 0
    truncated: bool = False
    result_sha256: str | None = None
    error: str | None = None
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


Outcome = Literal[
    "match",
    "near_miss",
    "mismatch",
    "error",
    "timeout",
    "missing",
    "misrouted",
    "gold_error",
]

OUTCOMES: tuple[str, ...] = (
    "match",
    "near_miss",
    "mismatch",
    "error",
    "timeout",
    "missing",
    "misrouted",
    "gold_error",
)
