"""How much of the gold each model's run answers, and the one rule for what it does not.

Every gold question a model has no usable answer for is classified by cause
(jury.vocab.Unanswered): ``absent`` (no line in run JSONL, no entry in BIRD's JSON, past the
last line of a one-SQL-per-line file), ``not_string`` (``"sql": null``, BIRD's entry ``0``) or
``empty`` (blank SQL). :func:`apply_missing_rule` is the one place the rule applies, the same
for every cause and every file kind: ``--missing exclude`` leaves them out of that model's
denominators (no pair), ``--missing fail`` makes each a ``missing`` answer, wrong, in every
denominator (jury.compare.outcomes.evaluate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from jury.inputs.records import GoldItem, QuestionId, RunRecord
from jury.vocab import UNANSWERED_LABELS, MissingRule, Unanswered


@dataclass
class Coverage:
    """How much of the gold one model's run answers, and what the rule did with the rest."""

    gold_questions: int  # the gold file's questions
    answered: int  # questions the run answers with SQL (a non-blank string)
    unanswered: dict[str, int] = field(default_factory=lambda: {c.value: 0 for c in Unanswered})  # by cause
    rule: str = MissingRule.EXCLUDE  # what the unanswered counted as (jury.vocab.MissingRule)

    @property
    def complete(self) -> bool:
        return self.answered >= self.gold_questions

    @property
    def left_out(self) -> dict[str, int]:
        """Unanswered questions left out of the denominators, by cause (all zero under fail)."""
        return dict(self.unanswered) if self.rule == MissingRule.EXCLUDE else {c.value: 0 for c in Unanswered}

    @property
    def counted_wrong(self) -> dict[str, int]:
        """Unanswered questions counted as wrong `missing` answers, by cause (all zero under exclude)."""
        return dict(self.unanswered) if self.rule == MissingRule.FAIL else {c.value: 0 for c in Unanswered}


def unanswered_cause(record: RunRecord) -> Unanswered | None:
    """Why ``record`` is no usable answer (None: it has SQL to run)."""
    if record.sql is None:
        return Unanswered.NOT_STRING
    if not record.sql.strip():
        return Unanswered.EMPTY
    return None


def by_cause(counts: dict[str, int]) -> str:
    """``"29 absent, 5 not a string"``: the non-zero causes of ``counts`` (jury.vocab.Unanswered)."""
    return ", ".join(f"{counts[c]:,} {UNANSWERED_LABELS[c]}" for c in Unanswered if counts.get(c.value))


def apply_missing_rule(
    gold: Mapping[QuestionId, GoldItem], records: Sequence[RunRecord], rule: str
) -> tuple[list[RunRecord], dict[str, Coverage]]:
    """(the records to score, each model's coverage in first-seen order) under ``rule``
    (jury.vocab.MissingRule), the same for every cause of an unanswered question.

    ``exclude``: the records without usable SQL are dropped and the absent questions get none,
    so neither is in any denominator. ``fail``: every absent question becomes a record without
    SQL (after the run's own, in gold order; the model's family is its run's), and every record
    without usable SQL is routed (its db_id dropped: an answer that is not there chose no
    database), so each is a `missing` answer, wrong, in every denominator."""
    fail = rule == MissingRule.FAIL
    kept: list[RunRecord] = []
    have: dict[str, set[QuestionId]] = {}
    family: dict[str, str | list[str] | None] = {}
    coverage: dict[str, Coverage] = {}
    for r in records:
        c = coverage.get(r.model)
        if c is None:  # a model's first record: its Coverage, question set and family, built once (issue 46)
            c = coverage[r.model] = Coverage(len(gold), 0, rule=MissingRule(rule))
            have[r.model], family[r.model] = set(), r.family
        have[r.model].add(r.question_id)
        cause = unanswered_cause(r)
        if cause is None:
            c.answered += 1
            kept.append(r)
            continue
        c.unanswered[cause] += 1
        if fail:
            kept.append(r if r.db_id is None else r.model_copy(update={"db_id": None}))
    for model, seen in have.items():
        absent = [q for q in gold if q not in seen]
        coverage[model].unanswered[Unanswered.ABSENT] = len(absent)
        if fail:
            kept += [RunRecord(model=model, question_id=q, sql=None, family=family[model]) for q in absent]
    return kept, coverage
