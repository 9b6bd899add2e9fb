"""Recorded judges: verdicts another tool's LLM judge (or a person's script) already gave.

A judgment file is JSONL, one object per judged answer:
``question_id``, the candidate's ``model`` and/or ``sql`` (as in a label), ``judge`` (the
judge's name, e.g. ``FLEX gpt-4o-2024-08-06``), ``label`` (``correct`` or ``incorrect``),
optionally a ``category`` among the jury's four verdicts, its ``reasoning``, the position
the candidate was shown in (``candidate_position`` 1 or 2, when the judge saw two answers in
an order) and a ``note``. Its JSON Schema is ``verdicts/schema/judgments-v1.schema.json``.

Judgments are never human labels: `jury calibrate --judgments` measures each judge against
the human reference beside the comparators, jurors and the panel, in a section of its own.

>>> j = JudgeRecord(question_id="7", model="m", judge="FLEX", label="correct")
>>> j.question_id, j.credited
(7, True)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from jury.errors import InputError
from jury.inputs.io import first_error, jsonl_objects, read_text
from jury.inputs.labels import LABEL_AGREES_WITH_CATEGORY, AnswerJudgement
from jury.inputs.records import QuestionId, normalise_qid, not_blank
from jury.vocab import CATEGORIES, Verdict

JUDGMENTS_SCHEMA_FILENAME = "judgments-v1.schema.json"


class JudgeRecord(AnswerJudgement):
    """One recorded judge's verdict on one model answer."""

    _what = "a judgment"

    question_id: QuestionId = Field(description="The BIRD question_id of the gold item.")
    model: str | None = Field(None, min_length=1, description="The model whose answer was judged (as in the run file).")
    sql: str | None = Field(None, description="The candidate SQL judged (matched whitespace-normalised).")
    judge: str = Field(min_length=1, description="The judge's name (a model and the tool that asked it).")
    label: Literal["correct", "incorrect"] = Field(description="The judge's verdict: is the answer a right answer?")
    category: Verdict | None = Field(None, description="One of the jury's four verdict categories, when the judge gave one.")
    reasoning: str | None = Field(None, description="The judge's own words.")
    candidate_position: Literal[1, 2] | None = Field(
        None, description="Where the judged answer was shown (1 = first, 2 = second), when the judge saw two answers."
    )
    note: str | None = None
    pooled_as: str | None = Field(
        None,
        min_length=1,
        description="A judge whose figures the source reports pooled with this one's: calibrate reports each judge "
        "apart and, beside them, the pool under that name (FLEX's one kappa over its judge with and without execution "
        "results).",
    )

    _qid = field_validator("question_id", mode="before")(normalise_qid)
    _judge_named = field_validator("judge")(not_blank("judge is blank: name the judge"))

    @field_validator("candidate_position", mode="before")
    @classmethod
    def _an_integer(cls, value: Any) -> Any:
        """1 or 2 as a JSON integer: never true (a bool is an int in Python), 1.0 or "1"."""
        if value is not None and type(value) is not int:
            raise ValueError(f"candidate_position must be the integer 1 or 2, not {type(value).__name__} {value!r:.20}")
        return value


def parse_judgment(obj: Any, where: str) -> JudgeRecord:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a judgment object, got {type(obj).__name__}")
    if "judge" not in obj:
        hint = " (a human label? pass it with --labels)" if "annotator" in obj else ""
        raise InputError(f"{where}: not a judgment: a judgment names its `judge`{hint}")
    try:
        return JudgeRecord.model_validate(obj)
    except ValidationError as exc:
        raise InputError(f"{where}: {first_error(exc)}") from None


def load_judgments(paths: Iterable[str | Path]) -> list[JudgeRecord]:
    """Read judgment JSONL files. The same judge on the same (question, candidate) twice is an
    error, whatever it said: a recorded verdict is never silently overwritten."""
    out: list[JudgeRecord] = []
    seen: dict[tuple[str, QuestionId, str | None, str], str] = {}  # (judge, question_id, model, sql's words)
    paths = list(paths)
    for path in paths:
        p = Path(path)
        for lineno, obj in jsonl_objects(p, read_text(p)):
            where = f"{p}:{lineno}"
            rec = parse_judgment(obj, where)
            key = (rec.judge, rec.question_id, rec.model, " ".join((rec.sql or "").split()))
            if key in seen:
                raise InputError(
                    f"{where}: judge {rec.judge!r} judged question {rec.question_id!r} "
                    f"({'model ' + repr(rec.model) if rec.model else 'this SQL'}) twice (first at {seen[key]})"
                )
            seen[key] = where
            out.append(rec)
    if not out:
        raise InputError("no judgments in " + ", ".join(str(p) for p in paths))
    return out


def dump_judgments(records: Iterable[JudgeRecord]) -> str:
    return "".join(r.model_dump_json(exclude_none=True) + "\n" for r in records)


def judgments_schema() -> dict[str, Any]:
    """The JSON Schema of one line of a judgment file."""
    schema = JudgeRecord.model_json_schema()
    if "Verdict" in schema.get("$defs", {}):
        schema["$defs"]["Verdict"]["enum"] = [str(c) for c in CATEGORIES]
    schema["anyOf"] = [{"required": ["model"]}, {"required": ["sql"]}]  # a judgment names its candidate
    schema["allOf"] = LABEL_AGREES_WITH_CATEGORY
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
