"""`jury report`: what a benchmark maintainer publishes. Pure computations, no I/O.

Three columns per model, each a Wilson 95% interval over the questions the model routed
to the right database (gold errors left out everywhere):

- **strict**: the chosen comparator's execution match (``jury.results.scoring``);
- **gold-clean**: strict with the audit's flagged questions removed from numerator and
  denominator (``jury.results.columns.gold_clean``);
- **adjudicated**: strict matches plus the jury's credited verdicts (gold defect, format
  equivalence) over the same denominator (``jury.results.columns.adjudicated``).

Around them: ranks and rank shifts (strict → adjudicated), the composition of each
model's adjudicated misses, near misses and non-executed answers (which never reach the
jury), the difficulty of each model's denominator, correlations across models, format
equivalence by model family, a negative control, the oracle-routing table (the three
columns on the questions every model routed correctly, so models share one denominator),
and juror agreement and position bias per verdict file (``jury.results.report.agreement``).
Every statistic comes from the ``jury.stats`` package. The rendering (table, csv, json, md) is in
``jury.results.report.render``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import InputError
from jury.results.aifunc_columns import execution_error_column
from jury.results.columns import (
    adjudicated,
    adjudication_cost,
    flagged_questions,
    gold_clean,
    pass_reviews,
    two_sided,
    unpriced_jurors,
    verdict_index,
    with_ranks,
)
from jury.results.ranks import DEFAULT_RESAMPLES, question_order, rank_stability
from jury.results.report.agreement import agreement_sets
from jury.results.report.audit_fit import audit_uncertainty
from jury.results.report.jurors import juror_sections
from jury.results.report.latent import adjudication_uncertainty
from jury.results.report.model import ReportDocument
from jury.results.report.render import as_report_dict, rank_cell, rank_stability_table, render_report, report_rows
from jury.results.report.repeats import repeat_stability
from jury.results.report.taxonomy import category_counts
from jury.results.review_report import people_labels
from jury.results.score_table import run_provenance
from jury.results.scoring import ModelScore, score_all
from jury.stats.core import pearson, rank_delta, rank_shift, spearman
from jury.version import __version__
from jury.vocab import COLUMNS, COMPOSITION, JURY_ELIGIBLE, NOT_EXECUTED, Column, Outcome, Verdict

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation, PairResult
    from jury.inputs.records import GoldItem, QuestionId
    from jury.judging.families import FamilyRegistry
    from jury.results.scoring import ExecutionErrors
    from jury.stats.core import ProportionDict
    from jury.verdicts.documents import AdjudicationFile, AdjudicationRecord, AuditFile
    from jury.verdicts.review import ReviewFile


STRENGTHS = (Column.ADJUDICATED, Column.STRICT, Column.GOLD_CLEAN)  # the order --strength's error lists them in
DIFFICULTY = {"simple": 1, "moderate": 2, "challenging": 3}

__all__ = ["build_report", "STRENGTHS", "DIFFICULTY", "as_report_dict", "report_rows", "render_report", "rank_cell"]
__all__ += ["rank_stability_table"]


# ------------------------------------------------------------------ building the report


def build_report(
    ev: Evaluation,
    gold: Mapping[QuestionId, GoldItem],
    *,
    audit_docs: Sequence[AuditFile | tuple[str | Path, AuditFile]] = (),
    adj_docs: Sequence[tuple[str | Path, AdjudicationFile]] = (),
    strength: str | None = None,
    control: str | None = None,
    registry: FamilyRegistry | None = None,
    rank_resamples: int | None = DEFAULT_RESAMPLES,
    seed: int = 0,
    review: ReviewFile | None = None,
) -> ReportDocument:
    """The report (``ReportDocument``; ``.model_dump(mode="json")`` is what ``--format json`` writes).

    ``adj_docs``: (path, VerdictFile) pairs of adjudication files; ``audit_docs``: audit
    VerdictFiles, or (path, VerdictFile) pairs (the report then names their paths). ``strength`` is the column the gold-defect share is correlated with;
    None picks adjudicated, else gold_clean, else strict, by which verdicts were given.
    ``rank_resamples`` (None: none) and ``seed``: the rank-stability bootstrap (jury.results.ranks);
    ``seed`` also seeds the questions + jury bootstrap of the adjudicated and gold-clean columns
    (jury.results.report.latent, jury.results.report.audit_fit).
    ``review``: the review file whose decisions ``adj_docs`` carry (--review): each juror's
    agreement with people in the report's ``jurors`` (jury.results.report.jurors).
    """
    audit_paths, audits = _split_audit_docs(audit_docs)
    named_audits = list(zip(audit_paths, audits))
    adj_docs = list(adj_docs)
    _check_kinds(audits, adj_docs)
    strength = _choose_strength(strength, bool(audits), bool(adj_docs))
    models = ev.models()
    _check_control(control, models, bool(adj_docs))
    cols = _columns(ev.pairs, audits, adj_docs)
    rows = _model_rows(ev, gold, cols, adj_docs, registry)
    uncertainty = _adjudicated_jury(rows, ev, cols, adj_docs, seed, review)
    audit_fit = _gold_clean_jury(rows, ev, named_audits, seed)
    return ReportDocument.model_validate(
        {
            "jury_version": __version__,
            "provenance": run_provenance(None, ev),
            "settings": _settings(ev, strength, control),
            "verdict_files": _verdict_files(audit_paths, audits, adj_docs),
            "models": rows,
            "correlations": _correlations(rows, strength),
            "families": _family_shares(rows),
            "control": _control(rows, control),
            "oracle_routing": _oracle(ev.pairs, models, cols.flagged, cols.index),
            "gold_errors": [{"question_id": q, "error": e} for q, e in ev.gold_errors.items()],
            "agreement": agreement_sets(audits, adj_docs, audit_paths),  # from the records, never the summaries
            "error_categories": category_counts(adj_docs),  # --taxonomy files only
            "rank_stability": None if rank_resamples is None else _rank_stability(ev, cols, rank_resamples, seed),
            "adjudication_uncertainty": uncertainty,
            "audit_uncertainty": audit_fit,
            "jurors": juror_sections(adj_docs, uncertainty, _people(review, adj_docs), named_audits, audit_fit),
            "repeat_stability": repeat_stability(ev.pairs, cols.index, adj_docs, audit_docs=named_audits, seed=seed),
        }
    )


def _split_audit_docs(
    audit_docs: Sequence[AuditFile | tuple[str | Path, AuditFile]],
) -> tuple[list[str | None], list[AuditFile]]:
    """``audit_docs`` as their paths (None where only the file was given) and their files."""
    audit_paths = [str(d[0]) if isinstance(d, tuple) and d[0] is not None else None for d in audit_docs]
    audits = [d[1] if isinstance(d, tuple) else d for d in audit_docs]
    return audit_paths, audits


def _people(
    review: ReviewFile | None, adj_docs: Sequence[tuple[str | Path, AdjudicationFile]]
) -> list[dict[tuple[Any, Any], str]] | None:
    """The people's labels of ``review`` per adjudication file (jury.results.review_report), None without one."""
    return people_labels(review, adj_docs) if review is not None else None


def _check_control(control: str | None, models: list[str], adjudicated: bool) -> None:
    """An InputError unless ``control`` (when given) is a model of the runs and there are adjudications."""
    if control is not None and control not in models:
        raise InputError(f"control {control!r} is not a model in the runs; models: {', '.join(models)}")
    if control is not None and not adjudicated:
        raise InputError("control needs adjudication verdicts: the control is the strict → adjudicated lift")


def _model_rows(
    ev: Evaluation,
    gold: Mapping[QuestionId, GoldItem],
    cols: _Columns,
    adj_docs: Sequence[tuple[str | Path, AdjudicationFile]],
    registry: FamilyRegistry | None,
) -> list[dict[str, Any]]:
    """One row per model, in the evaluation's model order."""
    models = ev.models()
    by_model: dict[str, list[PairResult]] = {m: [] for m in models}
    for p in ev.pairs:  # each model's answers, in the evaluation's order (one pass, not one per model)
        by_model[p.model].append(p)
    return [_model_row(m, by_model[m], ev, gold, cols, adj_docs, registry) for m in models]


def _adjudicated_jury(
    rows: list[dict[str, Any]],
    ev: Evaluation,
    cols: _Columns,
    adj_docs: Sequence[tuple[str | Path, AdjudicationFile]],
    seed: int,
    review: ReviewFile | None,
) -> dict[str, Any] | None:
    """The adjudicated column with the jury's uncertainty (jury.results.report.latent): each
    row's ``adjudicated_jury`` set, the report's ``adjudication_uncertainty`` returned (None
    without an adjudicated column)."""
    if cols.index is None:
        return None
    people = _people(review, adj_docs)  # the fit's anchors
    per_model, uncertainty = adjudication_uncertainty(
        ev.pairs, ev.models(), question_order(ev.pairs), cols.index, adj_docs, seed=seed, people=people
    )
    for row in rows:
        row["adjudicated_jury"] = per_model[row["model"]]
        row["adjudicated_jury"]["rank"]["rank"] = row["adjudicated_rank"]
    return uncertainty


def _gold_clean_jury(
    rows: list[dict[str, Any]], ev: Evaluation, named_audits: list[tuple[str | None, AuditFile]], seed: int
) -> dict[str, Any] | None:
    """The gold-clean column with the jury's uncertainty (jury.results.report.audit_fit): each
    row's ``gold_clean_jury`` set, the report's ``audit_uncertainty`` returned (None without audits)."""
    if not named_audits:
        return None
    per_audit, audit_fit = audit_uncertainty(ev.pairs, ev.models(), question_order(ev.pairs), named_audits, seed=seed)
    for row in rows:
        row["gold_clean_jury"] = per_audit[row["model"]]
        row["gold_clean_jury"]["rank"]["rank"] = row["gold_clean_rank"]
    return audit_fit


def _settings(ev: Evaluation, strength: str, control: str | None) -> dict[str, Any]:
    """The report's ``settings``: the evaluation's, the strength column and the control."""
    return {
        **ev.settings.describe(),
        "strength": strength,
        "control": control,
        "missing": str(ev.settings.missing),
        "gold_errors": str(ev.settings.gold_errors),
    }


@dataclass
class _Columns:
    """The report's three columns of every model, their ranks and the review of passes."""

    scores: dict[str, ModelScore]
    flagged: set[Any] | None  # the audit's flagged questions (None without an audit)
    index: dict[tuple[Any, ...], AdjudicationRecord] | None  # (model, question id) -> verdict record
    clean: dict[str, ProportionDict] | None
    adj: dict[str, ProportionDict] | None
    clean_rank: dict[str, int | None]
    adj_rank: dict[str, int | None]
    reviews: dict[str, dict[str, Any]]
    both: dict[str, dict[str, Any]]
    errors: dict[str, ExecutionErrors]  # each model's execution-error rate (jury.results.aifunc_columns)


def _columns(
    pairs: Sequence[PairResult], audits: Sequence[AuditFile], adj_docs: Sequence[tuple[str | Path, AdjudicationFile]]
) -> _Columns:
    scores = {s.model: s for s in score_all(pairs)}
    flagged = flagged_questions(audits) if audits else None
    index = verdict_index(adj_docs) if adj_docs else None
    clean = gold_clean(pairs, flagged) if flagged is not None else None
    adj = adjudicated(pairs, index) if index is not None else None  # errors on an unjudged failure
    reviews = pass_reviews(pairs, adj_docs) if adj_docs else {}
    return _Columns(
        scores=scores,
        flagged=flagged,
        index=index,
        clean=clean,
        adj=adj,
        clean_rank=with_ranks(clean) if clean is not None else {},
        adj_rank=with_ranks(adj) if adj is not None else {},
        reviews=reviews,
        both=two_sided(adj or {}, reviews, {m: s.routed for m, s in scores.items()}),
        errors=execution_error_column(list(pairs)),
    )


def _model_row(
    m: str,
    answers: Sequence[PairResult],
    ev: Evaluation,
    gold: Mapping[QuestionId, GoldItem],
    cols: _Columns,
    adj_docs: Sequence[tuple[str | Path, AdjudicationFile]],
    registry: FamilyRegistry | None,
) -> dict[str, Any]:
    """Model m's row of the report (a ModelRow's fields); ``answers``: its pairs of the evaluation."""
    s, index = cols.scores[m], cols.index
    mine = [p for p in answers if not p.excluded]
    routed = [p for p in mine if p.routed]
    outcomes = Counter(p.outcome for p in routed)
    recs = [
        index[(m, p.question_id)]
        for p in routed
        if index is not None and p.outcome == JURY_ELIGIBLE and (m, p.question_id) in index
    ]
    comp = Counter(Verdict.NO_MAJORITY if r.verdict == Verdict.UNDECIDED.value else r.verdict for r in recs)
    composition = {c: comp[c] for c in COMPOSITION}
    reached = len(recs)
    difficulties = [_difficulty(gold, p.question_id) for p in routed]
    known = [d for d in difficulties if d is not None]
    adj_rank = cols.adj_rank.get(m)
    return {
        "model": m,
        "families": _families(m, recs, mine, registry),
        "questions": s.questions,
        "gold_questions": ev.coverage[m].gold_questions if m in ev.coverage else None,
        "answered": ev.coverage[m].answered if m in ev.coverage else None,
        "left_out": ev.coverage[m].left_out if m in ev.coverage else None,
        "counted_wrong": ev.coverage[m].counted_wrong if m in ev.coverage else None,
        "routed": s.routed,
        "routing_accuracy": s.routing_accuracy,
        "strict": s.strict,
        "strict_rank": s.strict_rank,
        "gold_clean": cols.clean[m] if cols.clean is not None else None,
        "gold_clean_rank": cols.clean_rank.get(m),
        "adjudicated": cols.adj[m] if cols.adj is not None else None,
        "adjudicated_rank": adj_rank,
        "rank_shift": rank_shift(s.strict_rank, adj_rank),
        "rank_delta": rank_delta(s.strict_rank, adj_rank),
        "composition": composition,
        "composition_pct": {c: _share(composition[c], reached) for c in COMPOSITION},
        "jury_reached": reached,
        "near_miss": outcomes[Outcome.NEAR_MISS],
        "not_executed": sum(outcomes[o] for o in NOT_EXECUTED),
        "execution_errors": {k: cols.errors[m][k] for k in ("k", "n", "value", "low", "high")},
        "gold_defect_share": _share(composition[Verdict.GOLD_DEFECT], reached),
        "adjudication_cost_usd": adjudication_cost(m, adj_docs),
        "adjudication_unpriced_models": unpriced_jurors(m, adj_docs),
        "challenging_share": _share(sum(d == 3 for d in known), len(known)),
        "mean_difficulty": sum(known) / len(known) if known else None,
        "pass_review": cols.reviews.get(m),
        "two_sided_adjudicated": cols.both.get(m),
    }


def _verdict_files(
    audit_paths: Sequence[str | None], audits: Sequence[AuditFile], adj_docs: Sequence[tuple[str | Path, AdjudicationFile]]
) -> list[dict[str, Any]]:
    """The report's verdict_files: the audits, then the adjudication files."""
    return [
        {"kind": "audit", "path": p, "content_sha256": d.content_sha256, "panel": d.panel.name}
        for p, d in zip(audit_paths, audits)
    ] + [{"kind": "adjudication", "path": str(p), "content_sha256": d.content_sha256, "panel": d.panel.name} for p, d in adj_docs]


def _rank_stability(ev: Evaluation, cols: _Columns, resamples: int, seed: int) -> dict[str, Any]:
    models = ev.models()
    return rank_stability(
        ev.pairs,
        models,
        {
            Column.STRICT: {m: cols.scores[m].strict_rank for m in models},
            Column.GOLD_CLEAN: cols.clean_rank,
            Column.ADJUDICATED: cols.adj_rank,
        },
        flagged=cols.flagged,
        index=cols.index,
        resamples=resamples,
        seed=seed,
    )


def _check_kinds(audit_docs: Sequence[AuditFile], adj_docs: Sequence[tuple[str | Path, AdjudicationFile]]) -> None:
    for audit in audit_docs:
        if audit.kind != "audit":
            raise InputError(f"an {audit.kind} file was given as an audit")
    for path, doc in adj_docs:
        if doc.kind != "adjudication":
            raise InputError(f"{path}: is an {doc.kind} file, not an adjudication")


def _choose_strength(strength: str | None, have_audit: bool, have_adj: bool) -> str:
    if strength is None:
        return Column.ADJUDICATED if have_adj else Column.GOLD_CLEAN if have_audit else Column.STRICT
    if strength not in STRENGTHS:
        raise InputError(f"unknown strength {strength!r}; choose one of: {', '.join(STRENGTHS)}")
    if strength == Column.ADJUDICATED and not have_adj:
        raise InputError("strength adjudicated needs adjudication verdicts: give verdicts, or strength strict or gold_clean")
    if strength == Column.GOLD_CLEAN and not have_audit:
        raise InputError("strength gold_clean needs an audit: give an audit, or strength strict")
    return strength


def _share(k: int, n: int) -> float | None:
    return k / n if n else None


def _difficulty(gold: Mapping[QuestionId, GoldItem], qid: QuestionId) -> int | None:
    item = gold.get(qid)
    raw = getattr(item, "difficulty", None) if item is not None else None
    return DIFFICULTY.get(raw.strip().lower()) if isinstance(raw, str) else None


def _families(
    model: str, recs: Sequence[AdjudicationRecord], pairs: Sequence[PairResult], registry: FamilyRegistry | None
) -> list[str]:
    """Families named by the adjudication records, else the registry's, else the run records'."""
    from_records = sorted({f for r in recs for f in r.families})
    if from_records:
        return from_records
    declared = sorted({f for p in pairs for f in p.families})
    if registry is not None:
        return list(registry.families_of(model, declared))  # an unknown model is a ConfigError
    return sorted({f.strip().lower() for f in declared if f.strip()})


def _value(row: dict[str, Any], column: str) -> float | None:
    p = row.get(column)
    return None if p is None else p["value"]


def _correlations(rows: list[dict[str, Any]], strength: str) -> dict[str, Any]:
    routing = [r["routing_accuracy"] for r in rows]
    return {
        "gold_defect_share_vs_strength": {
            **spearman([r["gold_defect_share"] for r in rows], [_value(r, strength) for r in rows]).as_dict(),
            "strength": strength,
        },
        "routing_vs_challenging_share": pearson(routing, [r["challenging_share"] for r in rows]).as_dict(),
        "routing_vs_mean_difficulty": pearson(routing, [r["mean_difficulty"] for r in rows]).as_dict(),
    }


def _family_shares(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Format-equivalent share of jury-reached misses per family (a model counts in each of its families)."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        for fam in r["families"]:
            f = out.setdefault(fam, {"jury_reached": 0, "format_equivalence": 0, "share": None})
            f["jury_reached"] += r["jury_reached"]
            f["format_equivalence"] += r["composition"]["format_equivalence"]
    for f in out.values():
        f["share"] = _share(f["format_equivalence"], f["jury_reached"])
    return dict(sorted(out.items()))


def _control(rows: list[dict[str, Any]], control: str | None) -> dict[str, Any] | None:
    if control is None:
        return None
    row = next(r for r in rows if r["model"] == control)
    strict, adj = row["strict"]["value"], row["adjudicated"]["value"]
    above = [r for r in rows if adj is not None and _value(r, "adjudicated") is not None and _value(r, "adjudicated") > adj]
    nxt = min(above, key=lambda r: r["adjudicated"]["value"]) if above else None  # first in run order on ties
    nxt_value = nxt["adjudicated"]["value"] if nxt else None
    return {
        "model": control,
        "strict": strict,
        "adjudicated": adj,
        "lift": adj - strict if adj is not None and strict is not None else None,
        "next_model": nxt["model"] if nxt else None,
        "next_adjudicated": nxt_value,
        "gap_to_next": nxt_value - adj if nxt_value is not None else None,
    }


def _oracle(
    pairs: Sequence[PairResult],
    models: list[str],
    flagged: set[Any] | None,
    index: Mapping[tuple[Any, ...], AdjudicationRecord] | None,
) -> dict[str, Any]:
    """The three columns on the questions every model routed correctly (gold errors out)."""
    routed_by: dict[str, set[Any]] = {m: set() for m in models}
    for p in pairs:
        if not p.excluded and p.routed:
            routed_by[p.model].add(p.question_id)
    common = set.intersection(*routed_by.values()) if routed_by else set()
    sub = [p for p in pairs if p.question_id in common]
    empty = {"k": 0, "n": 0, "value": None, "low": None, "high": None}
    columns = {
        Column.STRICT: {s.model: s.strict for s in score_all(sub)},
        Column.GOLD_CLEAN: gold_clean(sub, flagged) if flagged is not None else None,
        Column.ADJUDICATED: adjudicated(sub, {k: v for k, v in index.items() if k[1] in common}) if index is not None else None,
    }
    ranked = {c: with_ranks(col) if col else {} for c, col in columns.items()}
    out = []
    for m in models:
        row: dict[str, Any] = {"model": m}
        for c in COLUMNS:
            col = columns[c]
            row[c] = None if col is None else col.get(m, dict(empty))  # no common question: wilson(0, 0)
            row[f"{c}_rank"] = ranked[c].get(m)
        out.append(row)
    return {"questions": len(common), "models": out}
