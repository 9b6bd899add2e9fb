"""Human labels: what careful people said about model answers and about gold SQL.

Two JSONL formats, one object per line, told apart by their fields:

* an **adjudication label** judges one model answer: ``question_id``, the candidate's
  ``model`` and/or ``sql``, ``label`` (``correct`` or ``incorrect``), optionally a
  ``category`` among the jury's four verdicts, the ``annotator`` and the ``source``;
* a **gold label** judges one gold query: ``question_id``, ``gold_defective`` (true or
  false), optionally ``defect_type``, ``corrected_sql``, and ``annotator``, ``source``.

Both may carry a free-text ``note``. Their JSON Schemas are in ``verdicts/schema/``
(``labels-adjudication-v1`` and ``labels-gold-v1``); ``jury labels import`` writes them
from the public sets and ``jury calibrate`` reads them.

>>> lab = AdjudicationLabel(question_id="7", model="m", label="correct", annotator="A", source="s")
>>> lab.question_id, lab.credited
(7, True)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from jury.errors import InputError
from jury.inputs.io import first_error, jsonl_objects, read_text, refuse_wrong_kind
from jury.inputs.records import QuestionId, normalise_qid
from jury.vocab import CATEGORIES, CREDITED_VERDICTS, DefectType, Verdict

LABEL_FORMAT_VERSION = 1
CONSENSUS = "consensus"  # the annotator name of a set's agreed label, when it publishes one


class AnswerJudgement(BaseModel):
    """What a human label and a recorded judge's judgment of one model answer
    (jury.inputs.judgments) share: the answer named by ``model`` and/or ``sql``, a ``label``
    (correct or incorrect) and, when given, a ``category`` among the four verdicts. Each
    subclass declares the fields and says what it is in ``_what`` (for the error messages)."""

    model_config = ConfigDict(extra="forbid", use_enum_values=True)
    _what: ClassVar[str]
    if TYPE_CHECKING:  # the subclasses' fields
        model: str | None
        sql: str | None
        label: str

    @field_validator("category", check_fields=False)
    @classmethod
    def _one_of_the_four(cls, value: Verdict | None) -> Verdict | None:
        if value is not None and value not in CATEGORIES:  # never no_majority/undecided
            raise ValueError(f"category must be one of the four verdict categories, not {value!r}")
        return value

    @model_validator(mode="after")
    def _names_a_candidate(self) -> Self:
        if self.model is None and self.sql is None:
            raise ValueError(f"{self._what} names the candidate: give `model` or `sql` (or both)")
        return self

    @model_validator(mode="after")
    def _label_agrees_with_category(self) -> Self:
        """gold_defect and format_equivalence credit the answer (label correct), genuine_error
        does not (label incorrect); ambiguous goes with either."""
        category = getattr(self, "category", None)
        if category is None or category == Verdict.AMBIGUOUS:
            return self
        credited = Verdict(category).credited
        if credited != self.credited:
            raise ValueError(
                f"label {self.label!r} contradicts category {str(category)!r} "
                f"({category} {'credits the answer: label correct' if credited else 'does not: label incorrect'})"
            )
        return self

    @property
    def credited(self) -> bool:
        return self.label == "correct"


class AdjudicationLabel(AnswerJudgement):
    """A human judgement of one model answer."""

    _what = "an adjudication label"

    question_id: QuestionId = Field(description="The BIRD question_id of the gold item.")
    model: str | None = Field(None, min_length=1, description="The model whose answer is judged (as in the run file).")
    sql: str | None = Field(None, description="The candidate SQL judged (when no model name identifies it).")
    label: Literal["correct", "incorrect"] = Field(description="Whether the answer is a right answer to the question.")
    category: Verdict | None = Field(
        None, description="One of the jury's four verdict categories (gold_defect, format_equivalence, genuine_error, ambiguous)."
    )
    annotator: str = Field(min_length=1, description=f"Who judged: a person's tag, or {CONSENSUS!r} for an agreed label.")
    source: str = Field(min_length=1, description="Where the label comes from (a published set, a review round).")
    note: str | None = None

    _qid = field_validator("question_id", mode="before")(normalise_qid)


class GoldLabel(BaseModel):
    """A human judgement of one gold query."""

    model_config = ConfigDict(extra="forbid", use_enum_values=True)

    question_id: QuestionId = Field(description="The BIRD question_id of the gold item.")
    gold_defective: bool = Field(strict=True, description="Whether the gold SQL is a wrong answer to its question.")
    defect_type: DefectType | None = Field(None, description="What kind of defect (only when gold_defective).")
    corrected_sql: str | None = Field(None, description="A corrected gold query, when the annotator wrote one.")
    annotator: str = Field(min_length=1)
    source: str = Field(min_length=1)
    note: str | None = None

    _qid = field_validator("question_id", mode="before")(normalise_qid)


Label = AdjudicationLabel | GoldLabel


class Labels(BaseModel):
    """Every label of one or more files, by kind, in file order."""

    adjudication: list[AdjudicationLabel] = Field(default_factory=list)
    gold: list[GoldLabel] = Field(default_factory=list)

    def annotators(self, kind: str) -> list[str]:
        return list(dict.fromkeys(lab.annotator for lab in getattr(self, kind)))

    def sources(self, kind: str) -> list[str]:
        return list(dict.fromkeys(lab.source for lab in getattr(self, kind)))


def parse_label(obj: Any, where: str) -> Label:
    """One label object; InputError naming `where` and the first problem."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a label object, got {type(obj).__name__}")
    if "gold_defective" in obj:
        model: type[GoldLabel] | type[AdjudicationLabel] = GoldLabel
    elif "label" in obj:
        model = AdjudicationLabel
    else:
        raise InputError(f"{where}: not a label: an adjudication label has `label`, a gold label `gold_defective`")
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise InputError(f"{where}: {first_error(exc)}") from None


_LabelKey = tuple[str, QuestionId, str | None, str | None, str, str] | tuple[str, QuestionId, str, str]
"""A label's identity: ("adj", question_id, model, sql, annotator, source) or ("gold", question_id,
annotator, source)."""


def load_labels(paths: Iterable[str | Path]) -> Labels:
    """Read label JSONL files. The same (question, candidate, annotator, source) twice is an
    error, whatever the labels say: a set is never silently overwritten."""
    out = Labels()
    seen: dict[_LabelKey, str] = {}
    paths = list(paths)
    for path in paths:
        p = Path(path)
        refuse_wrong_kind(p, "label")
        for lineno, obj in jsonl_objects(p, read_text(p)):
            where = f"{p}:{lineno}"
            lab = parse_label(obj, where)
            if isinstance(lab, AdjudicationLabel):
                key: _LabelKey = ("adj", lab.question_id, lab.model, lab.sql, lab.annotator, lab.source)
                out.adjudication.append(lab)
            else:
                key = ("gold", lab.question_id, lab.annotator, lab.source)
                out.gold.append(lab)
            if key in seen:
                raise InputError(
                    f"{where}: duplicate label for question {lab.question_id!r} by annotator {lab.annotator!r} "
                    f"of source {lab.source!r} (first at {seen[key]})"
                )
            seen[key] = where
    if not out.adjudication and not out.gold:
        raise InputError("no labels in " + ", ".join(str(p) for p in paths))
    return out


def dump_labels(labels: Iterable[Label]) -> str:
    return "".join(lab.model_dump_json(exclude_none=True) + "\n" for lab in labels)


LABEL_AGREES_WITH_CATEGORY: list[dict[str, Any]] = [
    {
        "if": {"required": ["category"], "properties": {"category": {"enum": [str(c) for c in CREDITED_VERDICTS]}}},
        "then": {"properties": {"label": {"const": "correct"}}},
    },
    {
        "if": {"required": ["category"], "properties": {"category": {"const": str(Verdict.GENUINE_ERROR)}}},
        "then": {"properties": {"label": {"const": "incorrect"}}},
    },
]
"""A label's (and a judgment's) label and category agree (AnswerJudgement), as JSON Schema."""


def label_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one line of a label file of `kind` ('adjudication' or 'gold')."""
    models: dict[str, type[BaseModel]] = {"adjudication": AdjudicationLabel, "gold": GoldLabel}
    schema = models[kind].model_json_schema()
    if "Verdict" in schema.get("$defs", {}):  # a label's category is one of the four, never no_majority/undecided
        schema["$defs"]["Verdict"]["enum"] = [str(c) for c in CATEGORIES]
    if kind == "adjudication":
        schema["allOf"] = LABEL_AGREES_WITH_CATEGORY
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def label_schema_filename(kind: str) -> str:
    return f"labels-{kind}-v{LABEL_FORMAT_VERSION}.schema.json"
