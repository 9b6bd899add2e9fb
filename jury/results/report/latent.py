"""The adjudicated column with the jury's own uncertainty: a latent-class fit per verdict file
and the "questions + jury" interval per model (issue 44, item 1). Pure computations, no I/O.

The published adjudicated value stays the documented majority rule, with its Wilson interval
(sampling of questions only). Beside it, per model:

- **expected**: the adjudicated accuracy a Dawid–Skene fit of the votes expects on these
  questions: (strict matches + the sum over the model's jury records of P(credited)) / n,
  where P(credited) is the record's posterior of gold_defect plus format_equivalence
  (:func:`jury.stats.uncertainty.jury_bootstrap`'s ``expected``);
- **questions + jury**: the 95% percentile interval of a bootstrap over questions in which
  every jury record's verdict is drawn from its latent-class posterior
  (:func:`jury.stats.uncertainty.jury_bootstrap`, :data:`RESAMPLES` resamples, the report's
  seed): plug-in posteriors for a verdict file of :data:`JOINT_BELOW` records or more, joint
  Gibbs draws of classes and parameters (:func:`jury.stats.latent.sample_classes`, seed
  ``seed + i`` for the i-th adjudication file, 0-based) for a smaller file, where plug-in
  posteriors are over-confident;
- **expected credit changes**: the expected number of its records whose credit differs from
  the published rule's, ``sum |credited - P(credited)|`` (:func:`jury.stats.uncertainty.verdict_changes`).

Per verdict file: the fit (one per file: files have their own jurors), each juror's estimated
accuracy and confusion matrix, and the records whose latent-class (MAP) verdict differs from
the majority's, with their votes. Votes: a juror's effective category
(:func:`jury.judging.agreement.effective_category`: abstained, skipped and inconsistent votes
are missing), class index its position in :data:`jury.vocab.CATEGORIES`. Records of reviewed
strict matches (``--review-passes``) are left out: they are not failures.

Every fitted file also gets the check that its jurors err independently given the class, the
interval's assumption (:func:`jury.stats.dependence.dependence_check`, :data:`DEPENDENCE_RESAMPLES`
resamples, seed ``seed + i``): pairwise observed vs implied agreement and a parametric-bootstrap
p-value. It cannot see a mistake the whole panel shares, nor dependence among only three jurors
(docs/report.md). A file with records people labelled (``--review``: the fit's anchors) is also
checked on them (:func:`jury.stats.dependence.people_check`, conditioned on each record's
majority-rule verdict): there a shared mistake shows, since the class is known.

A fit is refused, and the file's verdicts are kept as published (certain, in the interval),
when fewer than three jurors voted (a single juror's errors cannot be told from the class, and
two jurors' votes do not identify the model: :data:`MIN_JURORS`), when
fewer than :data:`MIN_RECORDS` records have two votes or more (the confusion matrices would be
mostly the smoothing prior) or when it did not converge (its estimates are where the iterations
stopped). The gold-clean column's questions + jury interval, from a fit of each audit file, is
:mod:`jury.results.report.audit_fit`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jury.judging.agreement import effective_category
from jury.judging.rules import adjudication_verdict
from jury.stats.dependence import ALPHA, DependenceCheck, PeopleCheck, dependence_check, people_check
from jury.stats.dependence import METHOD as DEPENDENCE_METHOD
from jury.stats.latent import LatentClassFit, dawid_skene, sample_classes
from jury.stats.uncertainty import (
    METHOD,
    ClassDraws,
    JuryInterval,
    ModelRecords,
    RankInterval,
    jury_bootstrap,
    jury_intervals,
    jury_ranks,
    verdict_changes,
)
from jury.vocab import CATEGORIES, CREDITED_VERDICTS, JURY_ELIGIBLE, Outcome

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult
    from jury.verdicts.documents import AdjudicationFile, AdjudicationRecord, AuditRecord

RESAMPLES = 2000
"""Resamples of the questions + jury bootstrap."""
JOINT_BELOW = 200
"""A verdict file with fewer records than this gets joint parameter draws (sample_classes)."""
MIN_RECORDS = 10
"""The fewest records with at least two votes a fit needs."""
MIN_JURORS = 3
"""The fewest jurors a fit needs: the Dawid–Skene model is identified from three conditionally
independent jurors (Allman, Matias & Rhodes 2009), not from two: two jurors' votes have K² − 1
free frequencies, the model K − 1 + 2K(K − 1) parameters, so many sets of priors and confusion
matrices give the same votes, and EM returns one of them (tests/test_stats_latent.py: ballots with
the exact vote frequencies of two auditors and a defect share of 0.15 are fitted at 0.217)."""
CONFIDENCE = 0.95
DEPENDENCE_RESAMPLES = 200
"""Parametric-bootstrap resamples of the jurors' dependence check (seed ``seed + i``)."""
CREDITED = tuple(CATEGORIES.index(v) for v in CREDITED_VERDICTS)
_CLASS = {str(c): i for i, c in enumerate(CATEGORIES)}


@dataclass
class VoteFit:
    """A verdict file's votes (:func:`vote_arrays`) and their fit (None when refused, with why)."""

    items: np.ndarray
    jurors: np.ndarray
    labels: np.ndarray
    names: list[str]
    fit: LatentClassFit | None
    refused: str | None
    dependence: DependenceCheck | None


@dataclass
class _File(VoteFit):
    """One adjudication file's records, votes and fit (None when refused)."""

    path: str
    doc: AdjudicationFile
    records: list[AdjudicationRecord]
    known: np.ndarray | None = None  # per record: the class people gave it (-1: none), the fit's anchors
    people_check: PeopleCheck | None = None  # the dependence check on the records people labelled


def vote_arrays(
    records: Sequence[AdjudicationRecord | AuditRecord], classes: Mapping[str, int] = _CLASS
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(items, jurors, labels, juror names) of the records' votes (repeat 0's, ``votes``): one
    entry per vote, its label the class index ``classes`` gives its effective category, -1 when
    it does not count."""
    names: dict[str, int] = {}
    items: list[int] = []
    jurors: list[int] = []
    labels: list[int] = []
    for i, r in enumerate(records):
        for v in r.votes:
            j = names.setdefault(v.juror, len(names))
            cat = effective_category(v)
            items.append(i)
            jurors.append(j)
            labels.append(classes.get(cat, -1) if cat is not None else -1)
    return (
        np.array(items, dtype=np.int64),
        np.array(jurors, dtype=np.int64),
        np.array(labels, dtype=np.int64),
        list(names),
    )


def fit_refusal(items: np.ndarray, jurors: np.ndarray, labels: np.ndarray) -> str | None:
    """Why a fit of these votes is refused (None: it is not): fewer than :data:`MIN_JURORS`
    jurors voted, or fewer than :data:`MIN_RECORDS` items have two counted votes or more."""
    counted = labels >= 0
    voters = np.unique(jurors[counted]).size
    if voters < 2:
        return f"{voters} juror{'' if voters == 1 else 's'} voted: a single juror's errors cannot be told from the class"
    if voters < MIN_JURORS:
        return (
            f"{voters} jurors voted: with two, the latent-class model is not identified "
            f"(its fit does not recover the jurors' errors, however many records)"
        )
    per_item = np.bincount(items[counted]) if counted.any() else np.zeros(0, dtype=np.int64)
    paired = int((per_item >= 2).sum())
    if paired < MIN_RECORDS:
        return f"{paired} records with two votes or more, fewer than {MIN_RECORDS}"
    return None


def _fit_file(
    path: str, doc: AdjudicationFile, seed: int, resamples: int, people: Mapping[tuple[Any, Any], str] | None = None
) -> _File:
    """One file's fit; ``people``: (model, question id) -> the category people gave a record
    (--review), clamped in the fit as an anchor (jury.stats.latent's semi-supervised fit)."""
    records = [r for r in doc.records if not r.review_pass]
    known = np.array([_CLASS.get(str((people or {}).get((r.model, r.question_id))), -1) for r in records], dtype=np.int64)
    votes = fit_votes(records, _CLASS, seed=seed, resamples=resamples, known=known)
    checked = None
    if votes.fit is not None and (known >= 0).any():
        checked = people_check(votes.fit.confusion, votes.items, votes.jurors, votes.labels, known, _verdict_of(records))
    return _File(**vars(votes), path=path, doc=doc, records=records, known=known, people_check=checked)


def fit_votes(
    records: Sequence[AdjudicationRecord | AuditRecord],
    classes: Mapping[str, int],
    *,
    seed: int,
    resamples: int,
    known: np.ndarray | None = None,
) -> VoteFit:
    """The records' votes (classes: category -> class index) and their Dawid–Skene fit with its
    dependence check (``resamples`` resamples, ``seed``), unless :func:`fit_refusal` refuses it;
    ``known``: per record a class people gave (-1: none), clamped in the fit."""
    items, jurors, labels, names = vote_arrays(records, classes)
    refused = fit_refusal(items, jurors, labels)
    fit, dependence = None, None
    if refused is None:
        fit = dawid_skene(items, jurors, labels, n_classes=len(classes), n_items=len(records), n_jurors=len(names), known=known)
        if not fit.converged:  # its estimates are wherever the iterations stopped: not reported
            refused, fit = f"the fit did not converge in {fit.iterations} iterations", None
    if fit is not None:
        dependence = dependence_check(fit, resamples=resamples, seed=seed)
    return VoteFit(items, jurors, labels, names, fit, refused, dependence)


def _verdict_of(records: Sequence[AdjudicationRecord]) -> Callable[[int, tuple[int, ...]], str]:
    """The people check's condition: the verdict the majority rule gives a record whose counted
    votes per class are ``counts`` (its abstentions and ballot count as they are): a review
    sample stratified by the published verdict selects on the votes through this alone."""

    def verdict(i: int, counts: tuple[int, ...]) -> str:
        votes = records[i].votes
        abstained = sum(1 for v in votes if not v.skipped and effective_category(v) is None)
        cats: list[str | None] = [str(CATEGORIES[c]) for c, n in enumerate(counts) for _ in range(n)]
        return adjudication_verdict(cats + [None] * abstained, len(votes))

    return verdict


def dependence_section(d: DependenceCheck | None, names: Sequence[str]) -> dict[str, Any] | None:
    """The report's ``dependence`` of a fit (JurorDependence), jurors by name."""
    if d is None:
        return None
    return {
        "resamples": d.resamples,
        "seed": d.seed,
        "min_common": d.min_common,
        "alpha": ALPHA,
        "statistic": d.statistic,
        "p_value": d.p_value,
        "largest": None if d.largest is None else [names[d.largest.a], names[d.largest.b]],
        "pairs": [
            {
                "jurors": [names[p.a], names[p.b]],
                "common": p.common,
                "observed": p.observed,
                "expected": p.expected,
                "excess": p.excess,
                "z": p.z,
            }
            for p in d.pairs
        ],
    }


def juror_fits(fit: LatentClassFit, names: Sequence[str]) -> list[dict[str, Any]]:
    """The report's ``jurors`` of a fit (JurorFit): votes used, accuracy and confusion matrix."""
    return [
        {
            "juror": name,
            "votes": int(fit.votes_per_juror[j]),
            "accuracy": float(fit.accuracy[j]),
            "confusion": [[float(x) for x in row] for row in fit.confusion[j]],
        }
        for j, name in enumerate(names)
    ]


def cast_votes(r: AdjudicationRecord | AuditRecord) -> list[dict[str, Any]]:
    """A record's votes as the report lists them (LatentVote): juror and effective category."""
    return [{"juror": v.juror, "category": effective_category(v)} for v in r.votes]


def _published(r: AdjudicationRecord) -> int:
    return _CLASS.get(str(r.verdict), -1)


def _differs(f: _File) -> list[dict[str, Any]]:
    assert f.fit is not None
    fit = f.fit
    pub = np.array([_published(r) for r in f.records], dtype=np.int64)
    changes = verdict_changes(fit.posterior, pub, CREDITED)
    out = []
    for i in changes.differ.tolist():
        r = f.records[i]
        out.append(
            {
                "model": r.model,
                "question_id": r.question_id,
                "published": str(r.verdict),
                "latent": str(CATEGORIES[int(fit.verdict[i])]),
                "posterior": {str(c): float(p) for c, p in zip(CATEGORIES, fit.posterior[i])},
                "votes": cast_votes(r),
            }
        )
    return out


def _file_section(f: _File, draws: str | None) -> dict[str, Any]:
    base: dict[str, Any] = {
        "path": f.path,
        "content_sha256": f.doc.content_sha256,
        "records": len(f.records),
        "fitted": f.fit is not None,
        "refused": f.refused,
        "draws": draws,
        "classes": [str(c) for c in CATEGORIES],
        "anchors": int((f.known >= 0).sum()) if f.known is not None and f.fit is not None else 0,
    }
    if f.fit is None:
        return {**base, "priors": None, "iterations": None, "converged": None, "jurors": [], "expected_changes": None}
    fit = f.fit
    pub = np.array([_published(r) for r in f.records], dtype=np.int64)
    changes = verdict_changes(fit.posterior, pub, CREDITED)
    differs = _differs(f)
    return {
        **base,
        "priors": [float(x) for x in fit.priors],
        "iterations": fit.iterations,
        "converged": fit.converged,
        "jurors": juror_fits(fit, f.names),
        "expected_changes": changes.expected,
        "expected_credit_changes": changes.expected_credit,
        "without_verdict": changes.without_verdict,
        "differs": differs,
        "dependence": dependence_section(f.dependence, f.names),
        "people_dependence": None
        if f.people_check is None
        else {
            "records": f.people_check.items,
            "observed": f.people_check.observed,
            "expected": f.people_check.expected,
            "p_value": f.people_check.p_value,
            "alpha": ALPHA,
        },
    }


def bootstrap_settings(resamples: int, seed: int) -> dict[str, Any]:
    """The settings of a questions + jury bootstrap and of the fits behind it, as the report states them."""
    return {
        "method": METHOD,
        "resamples": resamples,
        "seed": seed,
        "confidence": CONFIDENCE,
        "joint_below": JOINT_BELOW,
        "min_records": MIN_RECORDS,
        "dependence_method": DEPENDENCE_METHOD,
    }


def jury_cells(model: str, iv: JuryInterval, rank: RankInterval) -> dict[str, Any]:
    """A model's expected value, questions + jury interval and rank under the same resamples
    (its ``rank`` left None: the caller fills in the report's rank)."""
    return {
        "expected": iv.expected,
        "low": iv.questions_jury.low,
        "high": iv.questions_jury.high,
        "degenerate_resamples": iv.questions_jury.degenerate,
        "rank": {
            "model": model,
            "rank": None,
            "low": rank.low,
            "high": rank.high,
            "probabilities": list(rank.probabilities),
            "undefined_resamples": rank.undefined_resamples,
        },
    }


def adjudication_uncertainty(
    pairs: Sequence[PairResult],
    models: list[str],
    questions: list[Any],
    index: Mapping[tuple[Any, ...], AdjudicationRecord],
    adj_docs: Sequence[tuple[str | Path, AdjudicationFile]],
    *,
    seed: int = 0,
    resamples: int = RESAMPLES,
    dependence_resamples: int = DEPENDENCE_RESAMPLES,
    people: Sequence[Mapping[tuple[Any, Any], str]] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(model -> its ``adjudicated_jury`` row field, the report's ``adjudication_uncertainty``).

    ``questions``: the report's questions in order of first appearance (gold errors left out,
    :func:`jury.results.ranks.question_order`); ``index``: (model, question) -> verdict record;
    ``people``: per file, (model, question id) -> the category people gave the record (--review,
    jury.results.review_report.people_labels), the fit's anchors (counted in each file's ``anchors``).
    """
    files = [
        _fit_file(str(p), doc, seed + i, dependence_resamples, people[i] if people is not None else None)
        for i, (p, doc) in enumerate(adj_docs)
    ]
    m_at = {m: i for i, m in enumerate(models)}
    q_at = {q: j for j, q in enumerate(questions)}
    included, strict, jury, majority, credit = _pair_matrices(pairs, m_at, q_at, index)
    kinds, where, verdicts = _fitted_credit(files, m_at, q_at, jury, credit, resamples, seed)
    records = ModelRecords(included=included, strict=strict, jury=jury, credit=credit, majority_credit=majority)
    boot = jury_bootstrap(records, resamples=resamples, seed=seed, verdicts=verdicts)
    intervals = jury_intervals(records, boot, "adjudicated", confidence=CONFIDENCE)
    ranks = jury_ranks(boot, "adjudicated", confidence=CONFIDENCE)  # the same resamples
    per_model = _model_rows(models, where, jury, majority, credit, intervals, ranks)
    section = {**bootstrap_settings(resamples, seed), "files": [_file_section(f, k) for f, k in zip(files, kinds)]}
    return per_model, section


_Cell = tuple[int, int]
"""(model, question): a pair's row and column in the report's matrices."""


def _pair_matrices(
    pairs: Sequence[PairResult],
    m_at: Mapping[str, int],
    q_at: Mapping[Any, int],
    index: Mapping[tuple[Any, ...], AdjudicationRecord],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pairs as (M, Q) matrices: (included, strict, jury, majority credit, credit), the
    credit of a jury pair starting at its published one (the fits overwrite the fitted ones)."""
    shape = (len(m_at), len(q_at))
    included, strict, jury = np.zeros(shape, bool), np.zeros(shape, bool), np.zeros(shape, bool)
    majority = np.zeros(shape, bool)
    credit = np.zeros(shape)
    for p in pairs:
        if p.excluded or not p.routed:
            continue
        i, j = m_at[p.model], q_at[p.question_id]
        included[i, j] = True
        strict[i, j] = p.outcome == Outcome.MATCH
        rec = index.get((p.model, p.question_id)) if p.outcome == JURY_ELIGIBLE else None
        if rec is not None:
            jury[i, j] = True
            majority[i, j] = credit[i, j] = rec.credited
    return included, strict, jury, majority, credit


def _fitted_records(
    f: _File,
    fi: int,
    m_at: Mapping[str, int],
    q_at: Mapping[Any, int],
    jury: np.ndarray,
    credit: np.ndarray,
    where: dict[_Cell, _Cell],
) -> tuple[list[int], list[_Cell]]:
    """A fitted file's records that are jury pairs of the report: their credit set to the
    posterior's credited mass and their place noted in ``where``; returns (records, cells)."""
    assert f.fit is not None
    rows, cols = [], []
    for ri, r in enumerate(f.records):
        at = (m_at.get(r.model), q_at.get(r.question_id))
        if at[0] is None or at[1] is None or not jury[at[0], at[1]]:
            continue  # a record of a model or question not in this report
        mi, qj = int(at[0]), int(at[1])
        credit[mi, qj] = float(f.fit.posterior[ri, list(CREDITED)].sum())
        where[(mi, qj)] = (fi, ri)
        rows.append(ri)
        cols.append((mi, qj))
    return rows, cols


def _fitted_credit(
    files: Sequence[_File],
    m_at: Mapping[str, int],
    q_at: Mapping[Any, int],
    jury: np.ndarray,
    credit: np.ndarray,
    resamples: int,
    seed: int,
) -> tuple[list[str | None], dict[_Cell, _Cell], ClassDraws | None]:
    """The posteriors of the fitted files into ``credit``; joint draws for the small ones.
    Returns each file's draws (``"joint"``, ``"plug-in"`` or None when not fitted), (model,
    question) -> (file, record) of the fitted records, and the joint draws (None without)."""
    draw_rows, draw_q, draw_m = [], [], []
    kinds: list[str | None] = []
    where: dict[_Cell, _Cell] = {}  # (model, question) -> (file, record)
    for fi, f in enumerate(files):
        if f.fit is None:
            kinds.append(None)
            continue
        rows, cols = _fitted_records(f, fi, m_at, q_at, jury, credit, where)
        joint = len(f.records) < JOINT_BELOW
        kinds.append("joint" if joint else "plug-in")
        if joint and rows:
            d = sample_classes(f.fit, draws=resamples, seed=seed + fi)
            draw_rows.append(d[:, rows])
            draw_m += [c[0] for c in cols]
            draw_q += [c[1] for c in cols]
    verdicts = None
    if draw_rows:
        verdicts = ClassDraws(
            draws=np.concatenate(draw_rows, axis=1),
            question=np.array(draw_q, dtype=np.int64),
            model=np.array(draw_m, dtype=np.int64),
            positive=CREDITED,
        )
    return kinds, where, verdicts


def _model_rows(
    models: Sequence[str],
    where: Mapping[_Cell, _Cell],
    jury: np.ndarray,
    majority: np.ndarray,
    credit: np.ndarray,
    intervals: Sequence[JuryInterval],
    ranks: Sequence[RankInterval],
) -> dict[str, dict[str, Any]]:
    """model -> its ``adjudicated_jury`` row field."""
    per_model = {}
    for i, m in enumerate(models):
        mine = [(mq, fr) for mq, fr in where.items() if mq[0] == i]
        changes = sum(abs(float(majority[mq]) - float(credit[mq])) for mq, _ in mine)
        per_model[m] = {
            **jury_cells(m, intervals[i], ranks[i]),  # the rank's "rank": the report's adjudicated rank, build_report's
            "expected_credit_changes": changes,
            "records_fitted": len(mine),
            "records_published": int(jury[i].sum()) - len(mine),
        }
    return per_model
