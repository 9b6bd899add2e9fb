"""Intervals that carry the jury's uncertainty: a bootstrap over questions in which every
record's verdict, and every gold flag, is drawn from its posterior ("questions + jury").

A report's adjudicated column credits a model's failure when the panel's published rule
(majority) credits it; its gold-clean column leaves out the questions the audit flagged. Both
are point estimates conditional on the panel being right, and their Wilson interval
(:func:`jury.stats.core.wilson`) carries only the sampling of questions. Here each resample
draws the questions with replacement, as :mod:`jury.results.ranks` does, and also draws each
(model, question) record's verdict from its posterior (credited with probability
``credit[m, q]``) and each question's gold flag from its posterior (``flag[q]``), so the
interval carries both.

What it estimates: the accuracy a model would have over questions drawn like these ones,
with every verdict and flag the true one (a superpopulation parameter: the bootstrap over
questions targets it). The posteriors come from a latent-class model
(:mod:`jury.stats.latent`). Two ways to draw the verdicts:

- plug-in (the default): each record independently from its fitted posterior, the model's
  parameters taken as known;
- joint (``verdicts=`` / ``flags=``, :class:`ClassDraws` from
  :func:`jury.stats.latent.sample_classes`): resample b takes Gibbs draw b of all the records'
  classes together, which also carries the uncertainty of the fitted parameters (shared by
  all the records of a draw).

Columns, as the report computes them: over a model's included pairs (routed, gold errors left
out), ``strict`` counts its matches; ``adjudicated`` its matches plus its credited jury
records; ``gold_clean`` its matches over the included pairs of unflagged questions.

Seed scheme (so an independent implementation draws the same numbers): Q questions in the
order of the matrices' columns; resample b (0-based) draws the questions from
``numpy.random.default_rng([seed, b]).integers(0, Q, size=Q)`` (:mod:`jury.results.ranks`'s
scheme, so with certain verdicts the ranks are that module's), and the verdicts and flags
from the same generator's next ``M * Q + Q`` uniforms ``u = rng.random(M * Q + Q)``: record (m, q) is
credited when ``u[m * Q + q] < credit[m, q]``, question q flagged when ``u[M * Q + q] < flag[q]``.
A question drawn twice in a resample keeps one verdict per record: the verdict belongs to the
record, not to the draw.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from jury.stats.core import BootstrapInterval, ProportionEstimate, percentile_interval, rank_interval, wilson

__all__ = ["ModelRecords", "ClassDraws", "JuryBootstrap", "JuryInterval", "RankInterval", "VerdictChanges"]
__all__ += ["any_flag", "credit_probability", "jury_bootstrap", "jury_intervals", "jury_ranks", "verdict_changes"]

COLUMNS = ("strict", "gold_clean", "adjudicated")
METHOD = "questions + jury"
_CHUNK = 64  # resamples per batch: memory stays at about _CHUNK x models x questions floats


def credit_probability(posterior: ArrayLike, credited: ArrayLike) -> np.ndarray:
    """The probability each record's verdict is a credited one: its posterior summed over the
    credited classes. ``posterior`` is ``(..., K)``; ``credited`` the credited class indices."""
    post = np.asarray(posterior, dtype=float)
    idx = np.asarray(credited, dtype=np.int64)
    if post.ndim < 1 or idx.ndim != 1 or np.any(idx < 0) or np.any(idx >= post.shape[-1]):
        raise ValueError("credited must be class indices of the posterior's last axis")
    credit: np.ndarray = post[..., idx].sum(axis=-1)
    return credit


def any_flag(flags: ArrayLike) -> np.ndarray:
    """``(Q,)``: the probability that at least one of F independent flags of a question is
    raised, ``1 - prod_f (1 - flags[f, q])``, from ``(F, Q)`` probabilities (several audits
    of one question: the published rule flags it when any audit does).

    >>> any_flag([[0.5, 0.0], [0.5, 1.0]]).tolist()
    [0.75, 1.0]
    """
    p = np.asarray(flags, dtype=float)
    if p.ndim != 2 or not np.all((p >= 0) & (p <= 1)):
        raise ValueError("flags must be (F, Q) probabilities in [0, 1]")
    raised: np.ndarray = 1.0 - np.prod(1.0 - p, axis=0)
    return raised


@dataclass(frozen=True)
class ModelRecords:
    """The pairs of a report as models x questions matrices (M x Q), built by the caller.

    :ivar included: ``(M, Q)`` bool: the pair is in the model's denominator (routed, no gold error).
    :ivar strict: ``(M, Q)`` bool: a strict match.
    :ivar jury: ``(M, Q)`` bool: a failure that reached the jury (its verdict can credit it).
    :ivar credit: ``(M, Q)`` float: P(the record's verdict is credited) under the latent-class
        model (:func:`credit_probability`); read only where ``jury``.
    :ivar majority_credit: ``(M, Q)`` bool: credited under the published rule.
    :ivar flag: ``(Q,)`` float or None: P(the question's gold is defective) under the audit's
        latent-class model; None without an audit (no gold-clean column).
    :ivar majority_flag: ``(Q,)`` bool or None: flagged under the published rule.
    """

    included: np.ndarray
    strict: np.ndarray
    jury: np.ndarray
    credit: np.ndarray
    majority_credit: np.ndarray
    flag: np.ndarray | None = None
    majority_flag: np.ndarray | None = None

    def __post_init__(self) -> None:
        shape = np.shape(self.included)
        if len(shape) != 2:
            raise ValueError(f"included must be models x questions, got shape {shape}")
        for name in ("strict", "jury", "credit", "majority_credit"):
            if np.shape(getattr(self, name)) != shape:
                raise ValueError(f"{name} has shape {np.shape(getattr(self, name))}, not {shape}")
        if (self.flag is None) != (self.majority_flag is None):
            raise ValueError("flag and majority_flag go together")
        if self.flag is not None and (np.shape(self.flag) != shape[1:] or np.shape(np.asarray(self.majority_flag)) != shape[1:]):
            raise ValueError(f"flag and majority_flag need one entry per question ({shape[1]})")
        for name in ("credit", "flag"):
            value = getattr(self, name)
            if value is not None and not np.all((np.asarray(value) >= 0) & (np.asarray(value) <= 1)):
                raise ValueError(f"{name} must be probabilities in [0, 1]")
        if np.any(np.asarray(self.strict, bool) & ~np.asarray(self.included, bool)):
            raise ValueError("a strict match outside the included pairs")

    @property
    def shape(self) -> tuple[int, int]:
        """(M, Q)."""
        m, q = np.shape(self.included)
        return int(m), int(q)

    def columns(self) -> tuple[str, ...]:
        """The columns these records give: strict and adjudicated, and gold-clean with an audit."""
        return COLUMNS if self.flag is not None else ("strict", "adjudicated")

    def published(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """Per model (k, n) of ``column`` under the published rule (majority verdicts and flags)."""
        inc, strict = np.asarray(self.included, bool), np.asarray(self.strict, bool)
        if column == "strict":
            return strict.sum(axis=1), inc.sum(axis=1)
        if column == "adjudicated":
            credited = strict | (np.asarray(self.jury, bool) & np.asarray(self.majority_credit, bool) & inc)
            return credited.sum(axis=1), inc.sum(axis=1)
        if column == "gold_clean" and self.majority_flag is not None:
            clean = ~np.asarray(self.majority_flag, bool)[None, :]
            return (strict & clean).sum(axis=1), (inc & clean).sum(axis=1)
        raise ValueError(f"no column {column!r} in these records")


@dataclass(frozen=True)
class ClassDraws:
    """Joint draws of the records' true classes (:func:`jury.stats.latent.sample_classes`),
    with where each record sits, so resample b takes its verdicts (or flags) from draw b.

    :ivar draws: ``(resamples, R)`` class indices, one row per resample.
    :ivar question: ``(R,)`` each record's question (column of the matrices).
    :ivar model: ``(R,)`` each record's model (row), or None for an audit (one record per question).
    :ivar positive: the classes that count: the credited verdicts, or the audit's flag class.
    """

    draws: np.ndarray
    question: np.ndarray
    model: np.ndarray | None
    positive: tuple[int, ...]

    def hits(self, start: int, stop: int) -> np.ndarray:
        """``(stop - start, R)`` bool: the records whose drawn class counts, in draws start..stop-1."""
        return np.isin(np.asarray(self.draws[start:stop]), np.asarray(self.positive, dtype=np.int64))


@dataclass(frozen=True)
class JuryBootstrap:
    """The joint resampling's distributions: ``accuracy[column]`` is ``(resamples, M)``, NaN
    where the model had no included question in the resample; ``expected[column]`` is ``(M,)``,
    the latent-class model's estimate on the questions as they are (adjudicated: matches plus
    expected credits over included pairs; gold-clean: matches weighted by P(not flagged) over
    included pairs weighted the same); ``jury_draws`` says where the verdicts came from
    (``"plug-in"``: independent draws from the fitted posteriors; ``"joint"``: joint draws
    carrying the model's parameter uncertainty)."""

    accuracy: dict[str, np.ndarray]
    expected: dict[str, np.ndarray]
    resamples: int
    seed: int
    jury_draws: str
    method: str = field(default=METHOD)


def _check_draws(d: ClassDraws | None, what: str, resamples: int, m: int, q: int, audit: bool) -> None:
    if d is None:
        return
    draws = np.asarray(d.draws)
    if draws.ndim != 2 or draws.shape[0] < resamples or draws.shape[1] != np.size(d.question):
        raise ValueError(f"{what}: need (at least {resamples} resamples, R records) draws and one question per record")
    qs = np.asarray(d.question)
    if qs.size and (qs.min() < 0 or qs.max() >= q):
        raise ValueError(f"{what}: a question index beyond Q={q}")
    if audit != (d.model is None):
        raise ValueError(f"{what}: {'an audit has one record per question, no model' if audit else 'records need their model'}")
    if d.model is not None:
        ms = np.asarray(d.model)
        if ms.shape != qs.shape or (ms.size and (ms.min() < 0 or ms.max() >= m)):
            raise ValueError(f"{what}: need one model index below M={m} per record")


def jury_bootstrap(
    records: ModelRecords,
    *,
    resamples: int = 2000,
    seed: int = 0,
    verdicts: ClassDraws | None = None,
    flags: ClassDraws | None = None,
) -> JuryBootstrap:
    """Resample questions and draw verdicts and flags (the module doc's scheme) ``resamples`` times.

    Args:
        records: the models x questions matrices.
        resamples: how many resamples.
        seed: the seed of the question resamples and of the plug-in draws.
        verdicts: joint draws of the jury records' classes: resample b credits record (m, q)
            when its class in draw b is credited (instead of drawing from ``records.credit``);
            records not in the draws keep ``records.credit``.
        flags: joint draws of the audit's classes per question, likewise for the gold flags.

    Returns:
        the :class:`JuryBootstrap`.
    """
    m, q = records.shape
    resamples = _checked_resamples(records, resamples, verdicts, flags)
    inc = np.asarray(records.included, bool).astype(np.int64)
    strict = np.asarray(records.strict, bool).astype(np.int64)
    jury = np.asarray(records.jury, bool) & np.asarray(records.included, bool) & ~np.asarray(records.strict, bool)
    credit = np.where(jury, np.asarray(records.credit, float), 0.0)
    flag = None if records.flag is None else np.asarray(records.flag, float)
    columns = records.columns()
    acc = {c: np.full((resamples, m), np.nan) for c in columns}
    cells = _JuryCells.of(jury, credit, verdicts)
    # the uniforms read: the jury cells' (from the first to the last) and the flags'
    spans = ((cells.first, cells.first + cells.span), (m * q, m * q + (q if flag is not None else 0)))
    for start in range(0, resamples, _CHUNK):
        stop = min(start + _CHUNK, resamples)
        counts, (u_cells, u_flags) = _draws(seed, start, stop, q, spans)
        n_inc = (counts @ inc.T).astype(float)  # (n_b, M); whole numbers (no BLAS: its threads cost CPU)
        strict_hits = (counts @ strict.T).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            acc["strict"][start:stop] = np.where(n_inc > 0, strict_hits / n_inc, np.nan)
            adj = strict_hits + cells.credited(counts, u_cells, start, stop)
            acc["adjudicated"][start:stop] = np.where(n_inc > 0, adj / n_inc, np.nan)
            if flag is not None:
                acc["gold_clean"][start:stop] = _gold_clean(counts, u_flags, flag, flags, inc, strict, start, stop)
    expected = _expected(inc.astype(float), strict.astype(float), credit, flag)
    kind = "joint" if verdicts is not None or flags is not None else "plug-in"
    return JuryBootstrap(acc, expected, resamples, int(seed), kind)


def _checked_resamples(records: ModelRecords, resamples: int, verdicts: ClassDraws | None, flags: ClassDraws | None) -> int:
    """:func:`jury_bootstrap`'s resamples as an int, its draws checked against the records."""
    m, q = records.shape
    if int(resamples) < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    resamples = int(resamples)
    _check_draws(verdicts, "verdicts", resamples, m, q, audit=False)
    _check_draws(flags, "flags", resamples, m, q, audit=True)
    if flags is not None and records.flag is None:
        raise ValueError("flags: the records have no gold flags")
    return resamples


def _gold_clean(
    counts: np.ndarray,
    u_flags: np.ndarray,
    flag: np.ndarray,
    flags: ClassDraws | None,
    inc: np.ndarray,
    strict: np.ndarray,
    start: int,
    stop: int,
) -> np.ndarray:
    """``(n_b, M)``: the gold-clean accuracy of resamples start..stop-1, a question's gold flagged
    when its uniform is below its flag probability (or its class in the joint draw counts)."""
    f = np.broadcast_to(flag, (stop - start, counts.shape[1])).copy()
    if flags is not None:
        f[:, np.asarray(flags.question)] = flags.hits(start, stop)
    clean_w = counts * (u_flags >= f)
    n_clean = (clean_w @ inc.T).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        clean: np.ndarray = np.where(n_clean > 0, (clean_w @ strict.T).astype(float) / n_clean, np.nan)
    return clean


def _expected(inc: np.ndarray, strict: np.ndarray, credit: np.ndarray, flag: np.ndarray | None) -> dict[str, np.ndarray]:
    """The latent-class model's estimate per column on the questions as they are (``inc`` and
    ``strict`` as floats)."""
    n_all = inc.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = {
            "strict": np.where(n_all > 0, strict.sum(axis=1) / n_all, np.nan),
            "adjudicated": np.where(n_all > 0, (strict + credit).sum(axis=1) / n_all, np.nan),
        }
        if flag is not None:
            clean_p = 1.0 - flag
            n_clean = inc @ clean_p
            expected["gold_clean"] = np.where(n_clean > 0, (strict @ clean_p) / n_clean, np.nan)
    return expected


def _draws(seed: int, start: int, stop: int, q: int, spans: tuple[tuple[int, int], ...]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Resamples start..stop-1: ``(n_b, Q)`` question counts and, per span ``[lo, hi)`` of
    ``spans`` (sorted, disjoint), ``(n_b, hi - lo)`` uniforms: resample b draws from its own
    generator ``default_rng([seed, b])`` its Q questions then ``M * Q + Q`` uniforms (a cell's
    then a question's flag), of which only those in the spans are kept. The others are not
    drawn but skipped (``PCG64.advance``: one 64-bit step per double), so the stream's position
    is as if they had been and the uniforms kept are the same numbers."""
    counts = np.zeros((stop - start, q), dtype=np.int64)
    uni = [np.empty((stop - start, hi - lo)) for lo, hi in spans]
    for row, b in enumerate(range(start, stop)):
        bits = np.random.PCG64([seed, b])  # default_rng([seed, b])'s generator
        rng = np.random.Generator(bits)
        counts[row] = np.bincount(rng.integers(0, q, size=q), minlength=q)
        at = 0
        for (lo, hi), u in zip(spans, uni, strict=True):
            if lo > at:
                bits.advance(lo - at)
            rng.random(out=u[row])
            at = hi
    return counts, uni


@dataclass(frozen=True)
class _JuryCells:
    """The jury cells of the (M, Q) matrices (the only ones a draw can credit), flat indices
    ``cell`` into M x Q, their question and model (``model_start``: each model's first), the
    cells ``first`` to ``first + span - 1`` they lie in, ``credit`` their probability, and, with joint
    draws, ``at``: for each verdict record the jury cell it sets (-1: not a jury cell, ignored).
    Every sum the bootstrap takes is of whole numbers (counts times 0/1), so summing over these
    cells only gives the numbers a sum over every cell gives, to the bit."""

    cell: np.ndarray
    question: np.ndarray
    model_start: np.ndarray
    first: int
    span: int
    credit: np.ndarray
    verdicts: ClassDraws | None
    at: np.ndarray | None

    @classmethod
    def of(cls, jury: np.ndarray, credit: np.ndarray, verdicts: ClassDraws | None) -> _JuryCells:
        m, q = jury.shape
        cell = np.flatnonzero(jury)  # row-major: grouped by model
        at = None
        if verdicts is not None and verdicts.model is not None:
            where = np.full(m * q, -1, dtype=np.int64)
            where[cell] = np.arange(cell.size)
            at = where[np.asarray(verdicts.model, dtype=np.int64) * q + np.asarray(verdicts.question, dtype=np.int64)]
        else:
            verdicts = None
        starts = np.searchsorted(cell // q, np.arange(m))
        first = int(cell[0]) if cell.size else 0
        span = int(cell[-1]) + 1 - first if cell.size else 0
        return cls(cell, cell % q, starts, first, span, credit.reshape(-1)[cell], verdicts, at)

    def credited(self, counts: np.ndarray, uni: np.ndarray, start: int, stop: int) -> np.ndarray:
        """``(n_b, M)``: per resample and model, the question counts of its credited jury cells
        (a cell is credited when its uniform falls below its probability, or its joint draw's
        class is credited); ``uni``: the cells' uniforms from cell ``first`` on (:func:`_draws`)."""
        hit = np.take(uni, self.cell - self.first, axis=1) < self.credit
        if self.verdicts is not None and self.at is not None:
            keep = self.at >= 0
            # a drawn class credited or not: as a probability of 1 or 0, which every uniform in
            # [0, 1) is below or not
            hit[:, self.at[keep]] = self.verdicts.hits(start, stop)[:, keep]
        hits = np.take(counts, self.question, axis=1) * hit  # whole numbers
        out = np.zeros((stop - start, self.model_start.size), dtype=np.int64)
        some = np.flatnonzero(np.diff(self.model_start, append=self.cell.size) > 0)  # models with a jury cell
        if some.size:
            out[:, some] = np.add.reduceat(hits, self.model_start[some], axis=1)
        return out.astype(float)


@dataclass(frozen=True)
class JuryInterval:
    """One model's column with both intervals.

    :ivar sampling: the published rule's k/n with its Wilson interval (questions only).
    :ivar expected: the latent-class model's expected accuracy on these questions.
    :ivar questions_jury: the percentile interval of the joint resampling (questions + jury),
        under :func:`jury.stats.core.percentile_interval`'s policy.
    """

    sampling: ProportionEstimate
    expected: float | None
    questions_jury: BootstrapInterval


def jury_intervals(records: ModelRecords, boot: JuryBootstrap, column: str, *, confidence: float = 0.95) -> list[JuryInterval]:
    """Per model (rows of the matrices), ``column``'s published value with its Wilson interval
    (sampling only) and the questions + jury interval from ``boot``.

    Args:
        records: the records ``boot`` resampled.
        boot: :func:`jury_bootstrap`'s distributions.
        column: ``"strict"``, ``"gold_clean"`` or ``"adjudicated"``.
        confidence: the nominal coverage of both intervals.
    """
    if column not in boot.accuracy:
        raise ValueError(f"no column {column!r} in the bootstrap (has {sorted(boot.accuracy)})")
    k, n = records.published(column)
    out = []
    for i in range(records.shape[0]):
        e = float(boot.expected[column][i])
        out.append(
            JuryInterval(
                sampling=wilson(int(k[i]), int(n[i]), confidence),
                expected=e if np.isfinite(e) else None,
                questions_jury=percentile_interval(boot.accuracy[column][:, i], confidence),
            )
        )
    return out


@dataclass(frozen=True)
class RankInterval:
    """One model's rank (1 = best, "min" ties) in a column under the joint resampling.

    :ivar low: the lower end of the rank interval (a rank a resample gave), None if never ranked.
    :ivar high: the upper end.
    :ivar probabilities: ``probabilities[r - 1]`` = the share of the ranked resamples giving rank r.
    :ivar undefined_resamples: resamples where the model had no included question.
    """

    low: int | None
    high: int | None
    probabilities: tuple[float, ...]
    undefined_resamples: int


def jury_ranks(boot: JuryBootstrap, column: str, *, confidence: float = 0.95) -> list[RankInterval]:
    """Per model, the rank interval and rank probabilities of ``column`` under the joint
    resampling, with :mod:`jury.results.ranks`' definitions: each resample ranks the models by
    accuracy (``scipy.stats.rankdata(-accuracy, method="min", nan_policy="omit")``, best = 1);
    the interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of a
    model's ranks by the inverted empirical CDF (:func:`jury.stats.core.rank_interval`),
    over the resamples where it had a rank; the probabilities run over ranks 1..M."""
    from scipy.stats import rankdata

    if column not in boot.accuracy:
        raise ValueError(f"no column {column!r} in the bootstrap (has {sorted(boot.accuracy)})")
    acc = boot.accuracy[column]
    m = acc.shape[1]
    ranks = rankdata(-acc, method="min", axis=1, nan_policy="omit") if m else acc
    out = []
    for i in range(m):
        col = ranks[:, i]
        defined = col[np.isfinite(col)].astype(int)
        if not defined.size:
            out.append(RankInterval(None, None, (), int(col.size)))
            continue
        low, high = rank_interval(defined, confidence)
        freq = np.bincount(defined, minlength=m + 1)[1 : m + 1] / defined.size
        out.append(RankInterval(int(low), int(high), tuple(float(x) for x in freq), int(col.size - defined.size)))
    return out


@dataclass(frozen=True)
class VerdictChanges:
    """Records whose verdict the latent-class model would change from the published rule's.

    :ivar differ: indices of the records whose MAP class differs from the published verdict
        (records without a published verdict included: the model always gives one).
    :ivar expected: the expected number of records whose true class is not the published
        verdict, ``sum(1 - posterior[r, published[r]])`` over the records with a verdict, plus
        every record without one.
    :ivar expected_credit: the expected number whose credit (counted or not in the adjudicated
        column) is not the published rule's: ``sum |credited_r - P(credited)_r|``.
    :ivar without_verdict: records the published rule gave no verdict (no majority).
    """

    differ: np.ndarray
    expected: float
    expected_credit: float
    without_verdict: int


def verdict_changes(posterior: ArrayLike, published: ArrayLike, credited: ArrayLike) -> VerdictChanges:
    """Compare the latent-class model's verdicts with the published rule's.

    Args:
        posterior: ``(R, K)`` each record's posterior.
        published: ``(R,)`` the published verdict's class index, negative for no verdict
            (no majority, undecided: never credited).
        credited: the credited class indices.
    """
    post = np.asarray(posterior, dtype=float)
    pub = np.asarray(published, dtype=np.int64)
    if post.ndim != 2 or pub.shape != (post.shape[0],) or np.any(pub >= post.shape[1]):
        raise ValueError("need posterior (R, K) and published (R,) class indices below K")
    has = pub >= 0
    right = np.where(has, post[np.arange(pub.size), np.where(has, pub, 0)], 0.0)
    p_credit = credit_probability(post, credited)
    pub_credit = np.isin(pub, np.asarray(credited)) & has
    return VerdictChanges(
        differ=np.flatnonzero(np.argmax(post, axis=1) != pub),
        expected=float((1.0 - right).sum()),
        expected_credit=float(np.abs(pub_credit - p_credit).sum()),
        without_verdict=int((~has).sum()),
    )
