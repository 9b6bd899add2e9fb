"""The gold-clean and adjudicated columns, from locked verdict files: pure functions.

gold-clean: strict accuracy with the audit's flagged questions removed from numerator
and denominator (a flagged question never counts as a success).
adjudicated: (strict matches + credited verdicts) / routed questions, where every
jury-eligible failure must have a verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from jury.errors import InputError
from jury.stats.core import ProportionDict, ranks, two_sided_accuracy, wilson
from jury.vocab import CREDITED_VERDICTS, JURY_ELIGIBLE, VERDICTS, Outcome, Verdict

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult
    from jury.inputs.records import GoldItem, QuestionId
    from jury.results.scoring import ModelScore
    from jury.verdicts.documents import AdjudicationFile, AdjudicationRecord, AuditFile


def check_audit_gold(
    path: str | Path, doc: AuditFile, gold: Mapping[QuestionId, GoldItem], databases: dict[str, Any], gold_sha256: str | None
) -> None:
    """Refuse an audit file made for another gold: each audited question must be in the gold
    given now, on the same database, and its record's ``gold_key`` (sha256 of the database's
    sha256 and the gold SQL, as execution keys are made) must match the gold query and
    database given now. Files written before audit records carried ``gold_key`` are
    accepted only while the gold file and the databases are byte-identical to the ones the
    file binds; otherwise they must be re-run."""
    from jury.compare.outcomes import gold_result_key

    legacy_dbs = set()
    for r in doc.records:
        item = gold.get(r.question_id)
        if item is None:
            raise InputError(
                f"{path}: audits question {r.question_id!r}, which is not in the gold file given now: the audit "
                f"was made for another gold file ({doc.inputs.gold.path}); pass the audit of this gold or re-run `jury audit-gold`"
            )
        if item.db_id != r.db_id:
            raise InputError(
                f"{path}: question {r.question_id!r} was audited on database {r.db_id!r}, but the gold given now puts it "
                f"on {item.db_id!r}; re-run `jury audit-gold` on this gold"
            )
        if r.gold_key is None:
            legacy_dbs.add(r.db_id)
            continue
        expected = gold_result_key(item, databases)
        if expected is not None and r.gold_key != expected:
            raise InputError(
                f"{path}: question {r.question_id!r}: the audit judged another gold query or database than the one "
                "given now; re-run `jury audit-gold` on this gold"
            )
    if legacy_dbs:
        changed = [] if gold_sha256 == doc.inputs.gold.sha256 else [f"gold file (bound {doc.inputs.gold.path})"]
        for db_id in sorted(legacy_dbs):
            bound, now = doc.inputs.databases.get(db_id), databases.get(db_id)
            if now is not None and (bound is None or bound.sha256 != now[1]):
                changed.append(f"database {db_id}")
        if changed:
            raise InputError(
                f"{path}: written before audit records named the gold query they judged, and the {', '.join(changed)} "
                "differs from the one it bound; re-run `jury audit-gold` on this gold"
            )


def flagged_questions(audit_docs: Iterable[AuditFile]) -> set[Any]:
    flagged = set()
    for doc in audit_docs:
        flagged |= {r.question_id for r in doc.records if r.flagged}
    return flagged


def verdict_index(adj_docs: Iterable[tuple[str | Path, AdjudicationFile]]) -> dict[tuple[Any, ...], AdjudicationRecord]:
    """(model, question_id) -> record, from (path, document) pairs; a pair judged twice is an error."""
    index: dict[tuple[Any, ...], AdjudicationRecord] = {}
    where: dict[tuple[Any, ...], str] = {}
    for path, doc in adj_docs:
        for r in doc.records:
            if r.review_pass:  # a reviewed strict match: see pass_reviews
                continue
            key = (r.model, r.question_id)
            if key in index:
                raise InputError(
                    f"model {r.model!r} question {r.question_id!r} is judged in both {where[key]} and {path}; "
                    "pass one verdict file per failure"
                )
            index[key], where[key] = r, str(path)
    return index


def pass_reviews(
    pairs: Iterable[PairResult], adj_docs: Iterable[tuple[str | Path, AdjudicationFile]]
) -> dict[str, dict[str, Any]]:
    """model -> its reviewed strict matches (--review-passes): how many were sampled, how many the
    jury found genuine errors (false passes), the false-pass rate with its Wilson interval, and
    the matches the sample was drawn from. Only reviews of answers that still match count; a
    review of another answer or gold is an error, like a stale verdict."""
    current = {(p.model, p.question_id): p for p in pairs if p.outcome == Outcome.MATCH}
    matches: dict[str, int] = {}
    for m, _q in current:
        matches[m] = matches.get(m, 0) + 1
    seen: dict[str, list[Any]] = {}
    for path, doc in adj_docs:
        for r in doc.records:
            if not r.review_pass:
                continue
            p = current.get((r.model, r.question_id))
            if p is None or (r.answer_key and r.answer_key != p.pred_key) or (r.gold_key and r.gold_key != p.gold_key):
                raise InputError(
                    f"{path}: reviews model {r.model!r} question {r.question_id!r} as a strict match, but it is not "
                    "the same matching answer now; re-run `jury adjudicate --review-passes` for the current run"
                )
            seen.setdefault(r.model, []).append(r)
    out = {}
    for model, recs in seen.items():
        decided = [r for r in recs if r.verdict not in (Verdict.NO_MAJORITY, Verdict.UNDECIDED)]
        false = sum(r.false_pass for r in decided)
        out[model] = {
            "sampled": len(recs),
            "decided": len(decided),
            "false_passes": false,
            "matches": matches.get(model, 0),
            "false_pass_rate": wilson(false, len(decided)).as_dict(),
        }
    return out


def two_sided(
    adjudicated_column: Mapping[str, ProportionDict], reviews: dict[str, dict[str, Any]], routed: dict[str, int]
) -> dict[str, dict[str, Any]]:
    """The adjudicated column with false passes estimated from the review sample and taken off.

    For a model with n routed questions, A adjudicated-correct answers (strict matches plus
    credited failures), M strict matches and false-pass rate f = false passes / m decided
    reviews: value = (A - M f) / n, with the 95% interval of :func:`jury.stats.core.two_sided_accuracy`
    (the Wilson interval of the value at n and the false-pass rate's Wilson interval with the
    finite-population correction (M - m)/(M - 1), combined in quadrature). Reviewing every
    match and finding no false pass leaves the adjudicated column's value and interval
    unchanged. Models without a decided review keep no value."""
    out = {}
    for model, rev in reviews.items():
        adj, n = adjudicated_column.get(model), routed.get(model, 0)
        if adj is None or not n or not rev["decided"]:
            continue
        est = two_sided_accuracy(adj["k"], n, rev["matches"], rev["decided"], rev["false_passes"])
        out[model] = {
            "value": est.value,
            "low": est.low,
            "high": est.high,
            "n": n,
            "estimated_false_passes": est.estimated_false_passes,
        }
    return out


def adjudication_cost(model: str, adj_docs: Iterable[tuple[str | Path, AdjudicationFile]]) -> float | None:
    """Sum of summary.cost_by_model over the files; None when a file judging the model lacks it."""
    total, known = 0.0, False
    for _path, doc in adj_docs:
        costs = (doc.summary or {}).get("cost_by_model")
        if not isinstance(costs, dict):
            if any(r.model == model for r in doc.records):
                return None
            continue
        known = True
        if model in costs and costs[model] is None:  # a call litellm could not price: unknown
            return None
        total += float(costs.get(model, 0.0) or 0.0)
    return round(total, 6) if known else None


def unpriced_jurors(model: str, adj_docs: Iterable[tuple[str | Path, AdjudicationFile]]) -> list[str]:
    """Juror models litellm could not price that judged ``model`` (totals.unpriced_models
    of its files, narrowed to the votes on its records)."""
    out: set[str] = set()
    for _path, doc in adj_docs:
        unpriced = set(doc.totals.unpriced_models or ())
        if unpriced:
            out |= {v.model for r in doc.records if r.model == model for v in r.votes if v.model in unpriced and not v.skipped}
    return sorted(out)


def routed_by_model(pairs: Iterable[PairResult]) -> dict[str, list[PairResult]]:
    """model -> its routed pairs (gold errors left out), in run order: one pass over the pairs."""
    out: dict[str, list[Any]] = {}
    for p in pairs:
        bucket = out.setdefault(p.model, [])
        if not p.excluded and p.routed:
            bucket.append(p)
    return out


def gold_clean(pairs: Iterable[PairResult], flagged: set[Any]) -> dict[str, ProportionDict]:
    out = {}
    for model, routed in routed_by_model(pairs).items():
        kept = [p for p in routed if p.question_id not in flagged]
        out[model] = wilson(sum(p.outcome == "match" for p in kept), len(kept)).as_dict()
    return out


def adjudicated(pairs: Iterable[PairResult], index: Mapping[tuple[Any, ...], AdjudicationRecord]) -> dict[str, ProportionDict]:
    out = {}
    judged_by_model: dict[str, list[Any]] = {}
    for m, q in index:
        judged_by_model.setdefault(m, []).append(q)
    for model, routed in routed_by_model(pairs).items():
        eligible = [p for p in routed if p.outcome == JURY_ELIGIBLE]
        missing = [p.question_id for p in eligible if (model, p.question_id) not in index]
        if missing:
            raise InputError(
                f"model {model!r}: {len(missing)} jury-eligible failures have no verdict in the given files "
                f"(first: question {missing[0]!r}); run `jury adjudicate` for them or score without --verdicts"
            )
        eligible_ids = {p.question_id for p in eligible}
        for q in judged_by_model.get(model, ()):
            if q not in eligible_ids:
                raise InputError(
                    f"verdicts judge model {model!r} question {q!r}, which is not a jury-eligible failure under "
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
        matches = sum(p.outcome == Outcome.MATCH for p in routed)
        out[model] = wilson(matches + credited, len(routed)).as_dict()
    return out


def with_ranks(column: Mapping[str, ProportionDict]) -> dict[str, int | None]:
    models = list(column)
    return dict(zip(models, ranks([column[m]["value"] for m in models])))


class Proportion(BaseModel):
    """k successes out of n with its Wilson 95% interval (value, low, high null when n = 0)."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(ge=0)
    n: int = Field(ge=0)
    value: float | None
    low: float | None
    high: float | None


class AdjudicatedModel(BaseModel):
    """One model's row of ``jury.adjudicate``: strict vs adjudicated accuracy (Wilson 95%) and
    its adjudicated failures by verdict."""

    model: str
    routed: int = Field(ge=0, description="Questions routed to the gold's database.")
    strict: Proportion = Field(description="Strict matches over routed questions.")
    adjudicated: Proportion = Field(description="Strict matches plus the credited verdicts.")
    adjudicated_failures: int = Field(ge=0, description="Failures with a verdict in the file (reviewed passes aside).")
    credited: int = Field(ge=0, description="Those credited (gold defect, format equivalence).")
    composition: dict[str, int] = Field(description="Verdict -> failures, every verdict listed.")
    reviewed_passes: int = Field(ge=0, description="--review-passes: strict matches the jury judged.")
    false_passes: int = Field(ge=0, description="Those the majority judged a genuine error.")


def adjudication_summary(
    records: list[dict[str, Any]], scores: Sequence[ModelScore], judged: Iterable[str] | None = None
) -> list[AdjudicatedModel]:
    """Per model: strict vs adjudicated accuracy and the composition of adjudicated misses.

    judged: the models this adjudication covered (--model); the others are left out rather
    than listed with 0 adjudicated failures. None: every model scored."""
    by_model: dict[str, Counter[str]] = {}
    passes: dict[str, Counter[bool]] = {}
    for rec in records:
        if rec.get("review_pass"):
            passes.setdefault(rec["model"], Counter())[rec["verdict"] == Verdict.GENUINE_ERROR] += 1
            continue
        by_model.setdefault(rec["model"], Counter())[rec["verdict"]] += 1
    rows: list[AdjudicatedModel] = []
    for s in scores:
        if judged is not None and s.model not in judged:
            continue
        comp = by_model.get(s.model, Counter())
        credited = sum(comp[v] for v in CREDITED_VERDICTS)
        adj = wilson(s.strict["k"] + credited, s.routed).as_dict()
        rows.append(
            AdjudicatedModel(
                model=s.model,
                routed=s.routed,
                strict=Proportion.model_validate(s.strict),
                adjudicated=Proportion.model_validate(adj),
                adjudicated_failures=sum(comp.values()),
                credited=credited,
                composition={str(c): comp[c] for c in VERDICTS},
                reviewed_passes=sum(passes.get(s.model, Counter()).values()),
                false_passes=passes.get(s.model, Counter())[True],
            )
        )
    return rows
