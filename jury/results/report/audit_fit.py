"""The gold-clean column with the jury's uncertainty: a latent-class fit per audit file and the
"questions + jury" interval per model (issue 44, item 1, the audits' part). Pure computations, no I/O.

The published gold-clean value stays the documented rule (strict without the questions an audit's
majority flagged, :func:`jury.judging.rules.audit_flag`), with its Wilson interval (sampling of
questions only). Beside it, per model:

- **expected**: the gold-clean accuracy a Dawid–Skene fit of the audits' votes expects on these
  questions: its matches weighted by P(valid) over its included questions weighted the same
  (:func:`jury.stats.uncertainty.jury_bootstrap`'s ``expected``);
- **questions + jury**: the 95% percentile interval of a bootstrap over questions in which every
  audited question's flag is drawn from its latent-class posterior (a flagged question leaves the
  model's numerator and denominator), :data:`RESAMPLES` resamples, the report's seed (the
  adjudicated column's question resamples): plug-in posteriors when the audit files hold
  :data:`jury.results.report.latent.JOINT_BELOW` records or more together, joint Gibbs draws of
  classes and parameters (:func:`jury.stats.latent.sample_classes`, seed ``seed + i`` for the
  i-th audit file, 0-based) otherwise;
- **expected flag changes**: the expected number of its included questions whose flag is not the
  published one, ``sum |flagged - P(defective)|``;
- its gold-clean **rank** under the same resamples.

Per audit file: the fit (two classes, :data:`jury.vocab.AUDIT_VOTES`' order: valid, defective),
each juror's estimated accuracy and confusion matrix, the check that its jurors err independently
(:func:`jury.stats.dependence.dependence_check`, seed ``seed + i``) and the questions whose
latent-class (MAP) flag is not the published one, with their votes. Votes: each juror's effective
vote of repeat 0 (the record's ``votes``, as the adjudication fit reads them; ``--repeats``' other
asks are jury.results.report.repeats's), abstentions missing. A fit is refused as an adjudication
file's is (:func:`jury.results.report.latent.fit_refusal`); a refused file's flags are kept as
published, certain in the interval.

A question audited by several files is flagged in a resample when any file's draw flags it, the
files drawn independently (:func:`jury.stats.uncertainty.any_flag`), as the published rule flags it
when any file does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jury.results.columns import flagged_questions
from jury.results.report.latent import (
    CONFIDENCE,
    DEPENDENCE_RESAMPLES,
    JOINT_BELOW,
    RESAMPLES,
    VoteFit,
    bootstrap_settings,
    cast_votes,
    dependence_section,
    fit_votes,
    juror_fits,
    jury_cells,
)
from jury.stats.latent import sample_classes
from jury.stats.uncertainty import (
    ClassDraws,
    JuryBootstrap,
    ModelRecords,
    any_flag,
    jury_bootstrap,
    jury_intervals,
    jury_ranks,
    verdict_changes,
)
from jury.vocab import AUDIT_VOTES, AuditVote, Outcome

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult
    from jury.verdicts.documents import AuditFile

CLASSES = tuple(str(v) for v in AUDIT_VOTES)
DEFECTIVE = CLASSES.index(AuditVote.DEFECTIVE)
_CLASS = {c: i for i, c in enumerate(CLASSES)}


@dataclass
class _Audit(VoteFit):
    """One audit file's votes and fit (None when refused)."""

    path: str | None
    doc: AuditFile

    def published(self) -> np.ndarray:
        """Per record its published class: defective when flagged."""
        return np.array([DEFECTIVE if r.flagged else 1 - DEFECTIVE for r in self.doc.records], dtype=np.int64)


def _fit_audit(path: str | None, doc: AuditFile, seed: int, resamples: int) -> _Audit:
    return _Audit(**vars(fit_votes(doc.records, _CLASS, seed=seed, resamples=resamples)), path=path, doc=doc)


def _differs(a: _Audit) -> list[dict[str, Any]]:
    assert a.fit is not None
    published = a.published()
    out = []
    for i in verdict_changes(a.fit.posterior, published, (DEFECTIVE,)).differ.tolist():
        r = a.doc.records[i]
        out.append(
            {
                "question_id": r.question_id,
                "published": CLASSES[int(published[i])],
                "decided": r.decided,
                "latent": CLASSES[int(a.fit.verdict[i])],
                "posterior": {c: float(p) for c, p in zip(CLASSES, a.fit.posterior[i])},
                "votes": cast_votes(r),
            }
        )
    return out


def _file_section(a: _Audit) -> dict[str, Any]:
    base: dict[str, Any] = {
        "path": a.path,
        "content_sha256": a.doc.content_sha256,
        "records": len(a.doc.records),
        "fitted": a.fit is not None,
        "refused": a.refused,
        "classes": list(CLASSES),
    }
    if a.fit is None:
        return {**base, "priors": None, "iterations": None, "converged": None, "jurors": [], "expected_changes": None}
    return {
        **base,
        "priors": [float(x) for x in a.fit.priors],
        "iterations": a.fit.iterations,
        "converged": a.fit.converged,
        "jurors": juror_fits(a.fit, a.names),
        "expected_changes": verdict_changes(a.fit.posterior, a.published(), (DEFECTIVE,)).expected,
        "differs": _differs(a),
        "dependence": dependence_section(a.dependence, a.names),
    }


def _flags(
    audits: Sequence[_Audit], q_at: dict[Any, int], joint: bool, seed: int, resamples: int
) -> tuple[np.ndarray, np.ndarray, ClassDraws | None]:
    """(P(flagged) per question, whether a fit drew it, the joint draws of the drawn questions or None)."""
    q = len(q_at)
    per_file = np.zeros((len(audits), q))
    fitted = np.zeros(q, bool)
    hits = np.zeros((resamples, q), bool) if joint else None
    for fi, a in enumerate(audits):
        rows = [(ri, q_at[r.question_id]) for ri, r in enumerate(a.doc.records) if r.question_id in q_at]
        ri, qj = np.array([x[0] for x in rows], dtype=np.int64), np.array([x[1] for x in rows], dtype=np.int64)
        if a.fit is None:
            per_file[fi, qj] = a.published()[ri] == DEFECTIVE
            if hits is not None:
                hits[:, qj] |= per_file[fi, qj].astype(bool)[None, :]
            continue
        per_file[fi, qj] = a.fit.posterior[ri, DEFECTIVE]
        fitted[qj] = True
        if hits is not None:
            d = sample_classes(a.fit, draws=resamples, seed=seed + fi)
            hits[:, qj] |= d[:, ri] == DEFECTIVE
    draws = None
    if hits is not None and fitted.any():
        cols = np.flatnonzero(fitted)
        draws = ClassDraws(draws=hits[:, cols].astype(np.int8), question=cols, model=None, positive=(1,))
    return any_flag(per_file) if len(audits) else np.zeros(q), fitted, draws


def _records(
    pairs: Sequence[PairResult], models: list[str], q_at: dict[Any, int], flag: np.ndarray, flagged: set[Any]
) -> ModelRecords:
    shape = (len(models), len(q_at))
    m_at = {m: i for i, m in enumerate(models)}
    included, strict = np.zeros(shape, bool), np.zeros(shape, bool)
    for p in pairs:
        if p.excluded or not p.routed:
            continue
        i, j = m_at[p.model], q_at[p.question_id]
        included[i, j], strict[i, j] = True, p.outcome == Outcome.MATCH
    majority = np.array([q in flagged for q in q_at], dtype=bool)
    none = np.zeros(shape)
    return ModelRecords(included, strict, none.astype(bool), none, none.astype(bool), flag=flag, majority_flag=majority)


def audit_uncertainty(
    pairs: Sequence[PairResult],
    models: list[str],
    questions: list[Any],
    audit_docs: Sequence[tuple[str | Path | None, AuditFile]],
    *,
    seed: int = 0,
    resamples: int = RESAMPLES,
    dependence_resamples: int = DEPENDENCE_RESAMPLES,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(model -> its ``gold_clean_jury`` row field, the report's ``audit_uncertainty``).

    ``questions``: the report's questions in order of first appearance (gold errors left out,
    :func:`jury.results.ranks.question_order`); ``audit_docs``: (path or None, audit file) pairs.
    """
    audits = [
        _fit_audit(None if p is None else str(p), doc, seed + i, dependence_resamples) for i, (p, doc) in enumerate(audit_docs)
    ]
    q_at = {q: j for j, q in enumerate(questions)}
    joint = sum(len(a.doc.records) for a in audits) < JOINT_BELOW
    flag, fitted, draws = _flags(audits, q_at, joint, seed, resamples)
    records = _records(pairs, models, q_at, flag, flagged_questions(doc for _p, doc in audit_docs))
    boot = jury_bootstrap(records, resamples=resamples, seed=seed, flags=draws)
    audited = np.zeros(len(q_at), bool)
    for a in audits:
        audited[[q_at[r.question_id] for r in a.doc.records if r.question_id in q_at]] = True
    section = {
        **bootstrap_settings(resamples, seed),
        "draws": "joint" if joint else "plug-in",
        "files": [_file_section(a) for a in audits],
    }
    return _per_model(models, records, boot, fitted, audited), section


def _per_model(
    models: list[str], records: ModelRecords, boot: JuryBootstrap, fitted: np.ndarray, audited: np.ndarray
) -> dict[str, dict[str, Any]]:
    """model -> its gold_clean_jury (GoldCleanJury)."""
    intervals = jury_intervals(records, boot, "gold_clean", confidence=CONFIDENCE)
    ranks = jury_ranks(boot, "gold_clean", confidence=CONFIDENCE)  # the same resamples
    flag = np.asarray(records.flag, float)
    changes = np.abs(np.asarray(records.majority_flag, float) - flag)
    per_model = {}
    for i, m in enumerate(models):
        inc = np.asarray(records.included[i], bool)
        per_model[m] = {
            **jury_cells(m, intervals[i], ranks[i]),  # the rank's "rank": the report's gold-clean rank, build_report's
            "expected_flag_changes": float(changes[inc].sum()),
            "questions_fitted": int((inc & fitted).sum()),
            "questions_published": int((inc & audited & ~fitted).sum()),
        }
    return per_model
