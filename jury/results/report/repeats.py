"""A panel asked R times (``jury adjudicate --repeats R``): per adjudication file with R >= 2,
each juror's test-retest agreement, the verdicts that change between repeats and the adjudicated
column's spread over repeats (issue 44, item 2). Pure computations, no I/O.

A record's ``votes`` are repeat 0's, its ``repeat_votes`` the others' (jury.judging.rules.repeats_of).

- **test-retest**: per juror, its repeats as raters of the records
  (:func:`jury.stats.repeats.juror_retest`): R = 2, Cohen's kappa between the two repeats with a
  bootstrap interval (:data:`RESAMPLES` resamples, the report's seed); R > 2, Fleiss' kappa over
  the repeats. A vote counts as its effective category
  (:func:`jury.judging.agreement.effective_category`: abstained, skipped and inconsistent votes
  are missing).
- **verdicts that change**: the records whose verdict, each repeat's votes alone under the
  adjudication rule (:func:`jury.judging.rules.repeat_verdict`), is not the same in every repeat
  (:func:`jury.stats.repeats.verdict_stability`, with a Wilson interval); no majority and
  undecided are verdicts of their own here.
- **the column's spread**: per model judged in the file, its adjudicated accuracy with each
  repeat's verdicts for the file's records (the published credit for records of other files),
  and their mean, sample SD and range (:func:`jury.stats.repeats.column_spread`).

The published verdicts and the adjudicated column are repeat 0's. Reviewed strict matches
(``--review-passes``) are left out: they are not failures.

An audit file asked R >= 2 times (``jury audit-gold --repeats R``) gets the same per juror
test-retest kappa on its flag votes (defective / valid; abstentions missing); the flags that
change: the gold queries whose flag, each repeat's votes alone under the file's quorum
(:func:`jury.judging.rules.audit_flag`), is not the same in every repeat; the share of queries
flagged in each repeat and its spread; and with run files, the gold-clean column of each model
in each repeat (the flags of the file's repeat, the published flags of other audit files) and
its spread. The published flags and the gold-clean column are repeat 0's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jury.judging.agreement import effective_category
from jury.judging.rules import audit_flag, is_credited, repeat_verdict, repeats_of
from jury.results.columns import gold_clean, routed_by_model
from jury.stats.repeats import VerdictStability, column_spread, juror_retest, verdict_stability
from jury.vocab import CATEGORIES, JURY_ELIGIBLE, Outcome, Verdict

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult
    from jury.verdicts.documents import AdjudicationFile, AdjudicationRecord, AuditFile

RESAMPLES = 2000
"""Bootstrap resamples of the R = 2 test-retest kappa interval."""
CONFIDENCE = 0.95
METHOD = (
    "each juror's repeats as raters of the records: R = 2, Cohen's kappa with a bootstrap interval over the records; "
    "R > 2, Fleiss' kappa; the verdict of each repeat is the adjudication rule on that repeat's votes alone "
    "(an audit file's flag: the file's quorum on that repeat's votes alone)"
)
_FLAG = {"valid": 0, "defective": 1}
_CLASS = {str(c): i for i, c in enumerate(CATEGORIES)}
_NO_VERDICT = {str(Verdict.NO_MAJORITY): -1, str(Verdict.UNDECIDED): -2}


def repeat_count(doc: AdjudicationFile | AuditFile) -> int:
    """R: the repeats the file's records hold (1 for a panel asked once)."""
    return max((len(repeats_of(r)) for r in doc.records), default=1)


def _verdict_code(verdict: str) -> int:
    return _CLASS[verdict] if verdict in _CLASS else _NO_VERDICT.get(verdict, -3)


def _file_fields(
    path: str,
    doc: AdjudicationFile | AuditFile,
    r_count: int,
    records: Sequence[Any],
    per_record: Sequence[Sequence[Sequence[Any]]],
    classes: Mapping[str, int],
    *,
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    """The fields every repeat file opens with: the file, R, its records and the jurors' retest rows."""
    jurors = _retest_rows(per_record, classes, seed=seed, resamples=resamples)
    return {"path": path, "content_sha256": doc.content_sha256, "repeats": r_count, "records": len(records), "jurors": jurors}


def _changed(stability: VerdictStability) -> dict[str, Any]:
    """The share of the records whose verdict (or flag) changed between repeats, with its interval."""
    return {name: getattr(stability.changed, name) for name in ("k", "n", "value", "low", "high")}


def repeat_file(
    path: str,
    doc: AdjudicationFile,
    pairs: Sequence[PairResult],
    index: Mapping[tuple[Any, ...], AdjudicationRecord],
    *,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, Any] | None:
    """One file's RepeatFile fields (jury.results.report.model), or None when R < 2."""
    r_count = repeat_count(doc)
    if r_count < 2:
        return None
    records = [r for r in doc.records if not r.review_pass]
    per_record = [repeats_of(r) for r in records]
    complete = [i for i, repeats in enumerate(per_record) if len(repeats) == r_count and all(repeats)]
    verdicts = np.array(
        [[_verdict_code(repeat_verdict(per_record[i][rep])) for i in complete] for rep in range(r_count)], dtype=np.int64
    ).reshape(r_count, len(complete))
    stability = verdict_stability(verdicts, confidence=CONFIDENCE)
    return {
        **_file_fields(path, doc, r_count, records, per_record, _CLASS, seed=seed, resamples=resamples),
        "verdicts_changed": _changed(stability),
        "changed": [
            {"model": records[complete[i]].model, "question_id": records[complete[i]].question_id}
            for i in stability.indices.tolist()
        ],
        "column": _column(records, per_record, r_count, pairs, index),
    }


def _column(
    records: Sequence[AdjudicationRecord],
    per_record: Sequence[Sequence[Sequence[Any]]],
    r_count: int,
    pairs: Sequence[PairResult],
    index: Mapping[tuple[Any, ...], AdjudicationRecord],
) -> list[dict[str, Any]]:
    """Per model judged in the file: its adjudicated accuracy in each repeat, and their spread."""
    mine = {(r.model, r.question_id): repeats for r, repeats in zip(records, per_record)}
    models = list(dict.fromkeys(r.model for r in records))
    routed = routed_by_model(pairs)
    values = np.full((r_count, len(models)), np.nan)
    for m_at, model in enumerate(models):
        answers = routed.get(model, [])
        if not answers:
            continue
        matches = sum(p.outcome == Outcome.MATCH for p in answers)
        for rep in range(r_count):
            credited = 0
            for p in answers:
                if p.outcome != JURY_ELIGIBLE:
                    continue
                key = (model, p.question_id)
                if key in mine and rep < len(mine[key]) and mine[key][rep]:
                    credited += is_credited(repeat_verdict(mine[key][rep]))
                elif key in index:
                    credited += index[key].credited
            values[rep, m_at] = (matches + credited) / len(answers)
    spread = column_spread(values)

    def num(x: float) -> float | None:
        return None if np.isnan(x) else float(x)

    return [
        {
            "model": model,
            "values": [num(values[rep, m]) for rep in range(r_count)],
            "mean": num(spread.mean[m]),
            "sd": num(spread.sd[m]),
            "low": num(spread.low[m]),
            "high": num(spread.high[m]),
        }
        for m, model in enumerate(models)
    ]


def _retest_rows(
    per_record: Sequence[Sequence[Sequence[Any]]], code: Mapping[str, int], *, seed: int, resamples: int
) -> list[dict[str, Any]]:
    """Each juror's test-retest rows (JurorRetest fields) from the records' votes per repeat."""
    names: dict[str, int] = {}
    items: list[int] = []
    jurors: list[int] = []
    reps: list[int] = []
    labels: list[int] = []
    for i, repeats in enumerate(per_record):
        for rep, votes in enumerate(repeats):
            for v in votes:
                category = effective_category(v)
                items.append(i)
                jurors.append(names.setdefault(v.juror, len(names)))
                reps.append(rep)
                labels.append(code.get(category, -1) if category is not None else -1)
    retest = juror_retest(items, jurors, reps, labels, resamples=resamples, seed=seed, confidence=CONFIDENCE)
    juror_names = list(names)
    return [
        {
            "juror": juror_names[j.juror],
            "items": j.items,
            "agreement": j.agreement,
            "kappa": j.kappa.value,
            "low": j.kappa.low,
            "high": j.kappa.high,
        }
        for j in retest
    ]


def _spread_row(values: np.ndarray) -> dict[str, Any]:
    """``values``: (R,) one value per repeat (NaN: none): the values, mean, sample SD and range."""
    spread = column_spread(values.reshape(-1, 1))

    def num(x: float) -> float | None:
        return None if np.isnan(x) else float(x)

    return {
        "values": [num(x) for x in values],
        "mean": num(spread.mean[0]),
        "sd": num(spread.sd[0]),
        "low": num(spread.low[0]),
        "high": num(spread.high[0]),
    }


def audit_repeat_file(
    path: str,
    doc: AuditFile,
    pairs: Sequence[PairResult],
    others_flagged: set[Any],
    *,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, Any] | None:
    """One audit file's AuditRepeatFile fields (jury.results.report.model), or None when R < 2.
    ``others_flagged``: the questions the other audit files of the report flag (published);
    ``pairs``: the evaluation's (none: no gold-clean column)."""
    r_count = repeat_count(doc)
    if r_count < 2:
        return None
    records = list(doc.records)
    per_record = [repeats_of(r) for r in records]
    q = doc.panel.quorum if isinstance(doc.panel.quorum, int) and not isinstance(doc.panel.quorum, bool) else None
    complete = [i for i, repeats in enumerate(per_record) if len(repeats) == r_count and all(repeats)]
    flags = np.array(
        [
            [int(audit_flag([effective_category(v) for v in per_record[i][rep]], q)[0]) for i in complete]
            for rep in range(r_count)
        ],
        dtype=np.int64,
    ).reshape(r_count, len(complete))
    stability = verdict_stability(flags, confidence=CONFIDENCE)
    rate = np.array([flags[rep].mean() if len(complete) else np.nan for rep in range(r_count)], dtype=float)
    column = []
    if pairs:
        flagged_in = [
            others_flagged | {records[complete[i]].question_id for i in np.flatnonzero(flags[rep])} for rep in range(r_count)
        ]
        clean = [gold_clean(pairs, f) for f in flagged_in]
        for model in clean[0]:
            values = np.array([np.nan if c[model]["value"] is None else c[model]["value"] for c in clean], dtype=float)
            column.append({"model": model, **_spread_row(values)})
    return {
        **_file_fields(path, doc, r_count, records, per_record, _FLAG, seed=seed, resamples=resamples),
        "flags_changed": _changed(stability),
        "changed": [records[complete[i]].question_id for i in stability.indices.tolist()],
        "flag_rate": _spread_row(rate),
        "column": column,
    }


def repeat_stability(
    pairs: Sequence[PairResult],
    index: Mapping[tuple[Any, ...], AdjudicationRecord] | None,
    adj_docs: Sequence[tuple[str | Path, AdjudicationFile]],
    *,
    audit_docs: Sequence[tuple[str | None, AuditFile]] = (),
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, Any] | None:
    """The report's ``repeat_stability`` (a RepeatStability's fields), or None when no
    adjudication or audit file was asked more than once. ``index``: the adjudication files'
    verdict index (None without them); ``audit_docs``: (path or None, AuditFile) pairs."""
    files = []
    if index is not None:
        files = [repeat_file(str(path), doc, pairs, index, seed=seed, resamples=resamples) for path, doc in adj_docs]
    kept = [f for f in files if f is not None]
    audits = []
    for at, (path, doc) in enumerate(audit_docs):
        others = {r.question_id for n, (_p, d) in enumerate(audit_docs) if n != at for r in d.records if r.flagged}
        audits.append(audit_repeat_file(str(path or f"audit {at + 1}"), doc, pairs, others, seed=seed, resamples=resamples))
    audit_kept = [f for f in audits if f is not None]
    if not kept and not audit_kept:
        return None
    out: dict[str, Any] = {"method": METHOD, "resamples": resamples, "seed": seed, "confidence": CONFIDENCE, "files": kept}
    if audit_kept:  # written only then: reports of adjudication repeats alone are as before
        out["audits"] = audit_kept
    return out
