"""The gold-clean and adjudicated columns, from locked verdict files: pure functions.

gold-clean: strict accuracy with the audit's flagged questions removed from numerator
and denominator (a flagged question never counts as a success).
adjudicated: (strict matches + credited verdicts) / routed questions, where every
jury-eligible failure must have a verdict.
"""

from __future__ import annotations

from jury.errors import InputError
from jury.scoring import JURY_ELIGIBLE
from jury.stats import ranks, wilson


def flagged_questions(audit_docs) -> set:
    flagged = set()
    for doc in audit_docs:
        flagged |= {r.question_id for r in doc.records if r.flagged}
    return flagged


def verdict_index(adj_docs: list[tuple[str, object]]) -> dict[tuple, object]:
    """(model, question_id) -> record, from (path, document) pairs; a pair judged twice is an error."""
    index: dict[tuple, object] = {}
    where: dict[tuple, str] = {}
    for path, doc in adj_docs:
        for r in doc.records:
            key = (r.model, r.question_id)
            if key in index:
                raise InputError(
                    f"model {r.model!r} question {r.question_id!r} is judged in both {where[key]} and {path}; "
                    "pass one verdict file per failure"
                )
            index[key], where[key] = r, str(path)
    return index


def _routed(pairs, model):
    return [p for p in pairs if p.model == model and p.outcome != "gold_error" and p.routed]


def gold_clean(pairs, flagged: set) -> dict[str, dict]:
    out = {}
    for model in dict.fromkeys(p.model for p in pairs):
        kept = [p for p in _routed(pairs, model) if p.question_id not in flagged]
        out[model] = wilson(sum(p.outcome == "match" for p in kept), len(kept)).as_dict()
    return out


def adjudicated(pairs, index: dict[tuple, object]) -> dict[str, dict]:
    out = {}
    for model in dict.fromkeys(p.model for p in pairs):
        routed = _routed(pairs, model)
        eligible = [p for p in routed if p.outcome == JURY_ELIGIBLE]
        missing = [p.question_id for p in eligible if (model, p.question_id) not in index]
        if missing:
            raise InputError(
                f"model {model!r}: {len(missing)} jury-eligible failures have no verdict in the given files "
                f"(first: question {missing[0]!r}); run `jury adjudicate` for them or score without --verdicts"
            )
        for (m, q), rec in index.items():
            if m == model and not any(p.question_id == q and p.outcome == JURY_ELIGIBLE for p in routed):
                raise InputError(
                    f"verdicts judge model {m!r} question {q!r}, which is not a jury-eligible failure under "
                    "these settings (check --comparator and --near-miss against the verdict file's settings)"
                )
        for p in eligible:
            rec = index[(model, p.question_id)]
            if (rec.answer_key and rec.answer_key != p.pred_key) or (rec.gold_key and rec.gold_key != p.gold_key):
                raise InputError(
                    f"model {model!r} question {p.question_id!r}: the verdict judged another answer, gold "
                    "query or database than the one given now; re-run `jury adjudicate` for the current run"
                )
        credited = sum(index[(model, p.question_id)].credited for p in eligible)
        matches = sum(p.outcome == "match" for p in routed)
        out[model] = wilson(matches + credited, len(routed)).as_dict()
    return out


def with_ranks(column: dict[str, dict]) -> dict[str, int | None]:
    models = list(column)
    return dict(zip(models, ranks([column[m]["value"] for m in models])))
