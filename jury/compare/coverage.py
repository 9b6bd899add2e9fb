"""How much of the gold each model's run answers, and BIRD's rule for what it does not.

``gold_coverage`` counts per model the gold's questions, those its run answers with SQL and
those it has a line for; ``with_missing_answers`` (``--missing fail``) gives every question a
model has no line for a line without SQL, a ``missing`` answer (jury.compare.outcomes.evaluate).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jury.inputs.records import GoldItem, QuestionId, RunRecord
from jury.vocab import MissingRule


@dataclass
class Coverage:
    """How much of the gold one model's run answers (before the missing rule applies)."""

    gold_questions: int  # the gold file's questions
    answered: int  # questions the run has a line with SQL for
    lines: int  # questions the run has a line for, with SQL or without (a `missing` answer)
    filled: int = 0  # questions with no line, scored as `missing` answers (--missing fail)

    @property
    def complete(self) -> bool:
        return self.answered >= self.gold_questions


def gold_coverage(gold: dict[QuestionId, GoldItem], records: list[RunRecord]) -> dict[str, Coverage]:
    """Per model (first-seen order): the gold's questions, those its run answers with SQL and
    those it has a line for."""
    lines: dict[str, set] = {}
    answered: dict[str, set] = {}
    for r in records:
        lines.setdefault(r.model, set()).add(r.question_id)
        if r.sql is not None and r.sql.strip():
            answered.setdefault(r.model, set()).add(r.question_id)
    return {m: Coverage(len(gold), len(answered.get(m, ())), len(qs)) for m, qs in lines.items()}


def with_missing_answers(gold: dict[QuestionId, GoldItem], records: list[RunRecord], coverage: dict[str, Coverage]):
    """BIRD's rule (--missing fail): every gold question a model has no line for becomes a line
    without SQL (a `missing` answer, wrong), after the run's own lines, in gold order; the
    model's family is its run's. ``coverage[model].filled`` counts them."""
    have: dict[str, set] = {}
    family: dict[str, Any] = {}
    for r in records:
        have.setdefault(r.model, set()).add(r.question_id)
        family.setdefault(r.model, r.family)
    filled = list(records)
    for model, seen in have.items():
        absent = [q for q in gold if q not in seen]
        filled += [RunRecord(model=model, question_id=q, sql=None, family=family[model]) for q in absent]
        coverage[model].filled = len(absent)
    return filled


def apply_missing_rule(gold: dict[QuestionId, GoldItem], records: list[RunRecord], rule: str):
    """(the records to score, each model's coverage) under ``rule`` (jury.vocab.MissingRule)."""
    coverage = gold_coverage(gold, records)
    return (with_missing_answers(gold, records, coverage) if rule == MissingRule.FAIL else records), coverage
