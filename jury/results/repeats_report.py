"""A panel asked R times (``jury adjudicate --repeats R``): per adjudication file with R >= 2,
each juror's test-retest agreement, the verdicts that change between repeats and the adjudicated
column's spread over repeats (issue 44, item 2). Pure computations, no I/O.

A record's ``votes`` are repeat 0's, its ``repeat_votes`` the others' (jury.judging.rules.repeats_of).

- **test-retest**: per juror, its repeats as raters of the records
  (:func:`jury.stats_repeats.juror_retest`): R = 2, Cohen's kappa between the two repeats with a
  bootstrap interval (:data:`RESAMPLES` resamples, the report's seed); R > 2, Fleiss' kappa over
  the repeats. A vote counts as its effective category
  (:func:`jury.judging.agreement.effective_category`: abstained, skipped and inconsistent votes
  are missing).
- **verdicts that change**: the records whose verdict, each repeat's votes alone under the
  adjudication rule (:func:`jury.judging.rules.repeat_verdict`), is not the same in every repeat
  (:func:`jury.stats_repeats.verdict_stability`, with a Wilson interval); no majority and
  undecided are verdicts of their own here.
- **the column's spread**: per model judged in the file, its adjudicated accuracy with each
  repeat's verdicts for the file's records (the published credit for records of other files),
  and their mean, sample SD and range (:func:`jury.stats_repeats.column_spread`).

The published verdicts and the adjudicated column are repeat 0's. Reviewed strict matches
(``--review-passes``) are left out: they are not failures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jury.judging.agreement import effective_category
from jury.judging.rules import is_credited, repeat_verdict, repeats_of
from jury.results.columns import routed_by_model
from jury.stats_repeats import column_spread, juror_retest, verdict_stability
from jury.vocab import CATEGORIES, JURY_ELIGIBLE, Outcome, Verdict

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult
    from jury.verdicts.documents import AdjudicationFile, AdjudicationRecord

RESAMPLES = 2000
"""Bootstrap resamples of the R = 2 test-retest kappa interval."""
CONFIDENCE = 0.95
METHOD = (
    "each juror's repeats as raters of the records: R = 2, Cohen's kappa with a bootstrap interval over the records; "
    "R > 2, Fleiss' kappa; the verdict of each repeat is the adjudication rule on that repeat's votes alone"
)
_CLASS = {str(c): i for i, c in enumerate(CATEGORIES)}
_NO_VERDICT = {str(Verdict.NO_MAJORITY): -1, str(Verdict.UNDECIDED): -2}


def repeat_count(doc: AdjudicationFile) -> int:
    """R: the repeats the file's records hold (1 for a panel asked once)."""
    return max((len(repeats_of(r)) for r in doc.records), default=1)


def _label(category: str | None) -> int:
    return _CLASS.get(category, -1) if category is not None else -1


def _verdict_code(verdict: str) -> int:
    return _CLASS[verdict] if verdict in _CLASS else _NO_VERDICT.get(verdict, -3)


def repeat_file(
    path: str,
    doc: AdjudicationFile,
    pairs: Sequence[PairResult],
    index: Mapping[tuple[Any, ...], AdjudicationRecord],
    *,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, Any] | None:
    """One file's RepeatFile fields (jury.results.report_model), or None when R < 2."""
    r_count = repeat_count(doc)
    if r_count < 2:
        return None
    records = [r for r in doc.records if not r.review_pass]
    per_record = [repeats_of(r) for r in records]
    names: dict[str, int] = {}
    items: list[int] = []
    jurors: list[int] = []
    reps: list[int] = []
    labels: list[int] = []
    for i, repeats in enumerate(per_record):
        for rep, votes in enumerate(repeats):
            for v in votes:
                items.append(i)
                jurors.append(names.setdefault(v.juror, len(names)))
                reps.append(rep)
                labels.append(_label(effective_category(v)))
    retest = juror_retest(items, jurors, reps, labels, resamples=resamples, seed=seed, confidence=CONFIDENCE)
    juror_names = list(names)
    complete = [i for i, repeats in enumerate(per_record) if len(repeats) == r_count and all(repeats)]
    verdicts = np.array(
        [[_verdict_code(repeat_verdict(per_record[i][rep])) for i in complete] for rep in range(r_count)], dtype=np.int64
    ).reshape(r_count, len(complete))
    stability = verdict_stability(verdicts, confidence=CONFIDENCE)
    return {
        "path": path,
        "content_sha256": doc.content_sha256,
        "repeats": r_count,
        "records": len(records),
        "jurors": [
            {
                "juror": juror_names[j.juror],
                "items": j.items,
                "agreement": j.agreement,
                "kappa": j.kappa.value,
                "low": j.kappa.low,
                "high": j.kappa.high,
            }
            for j in retest
        ],
        "verdicts_changed": {
            "k": stability.changed.k,
            "n": stability.changed.n,
            "value": stability.changed.value,
            "low": stability.changed.low,
            "high": stability.changed.high,
        },
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


def repeat_stability(
    pairs: Sequence[PairResult],
    index: Mapping[tuple[Any, ...], AdjudicationRecord],
    adj_docs: Sequence[tuple[str | Path, AdjudicationFile]],
    *,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, Any] | None:
    """The report's ``repeat_stability`` (a RepeatStability's fields), or None when no
    adjudication file was asked more than once."""
    files = [repeat_file(str(path), doc, pairs, index, seed=seed, resamples=resamples) for path, doc in adj_docs]
    kept = [f for f in files if f is not None]
    if not kept:
        return None
    return {"method": METHOD, "resamples": resamples, "seed": seed, "confidence": CONFIDENCE, "files": kept}
