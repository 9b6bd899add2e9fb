"""``jury.review_corrected``: the panel's rate over the frame corrected by two reviewers'
decisions on a locked sample (Rogan–Gladen, :func:`jury.stats.correction.corrected_rate`).

The frame and its strata are the sample file's (its frame files rechecked, each record's
stratum recomputed from its ``by`` keys, jury/jobs/review_sample.py); the panel's label of a
record is its flag (a gold query flagged defective; an answer credited). A sampled record's
human label is the two reviewers' label where they agree, else the adjudication round's
settled label; a disagreement the round does not settle, or a round of other review files,
is refused. Gold queries: "defective" is positive; adjudicated answers: a credited category.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from jury.errors import InputError
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.review import ReviewCorrectedOptions
from jury.pipeline.project import PathLike
from jury.vocab import CREDITED_VERDICTS

if TYPE_CHECKING:
    from jury.stats.correction import CorrectedRate


class ReviewCorrected(Result):
    """The corrected rate: ``apparent`` (the panel's), ``value`` with its delta interval
    (``low``, ``high``) and bootstrap interval, the panel's Se and Sp on the sample, the
    reviewers, N and n."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json")

    kind: str  # "gold" (defect rate) or "adjudication" (credited rate)
    reviewers: list[str]
    population: int
    sample: int
    apparent: float
    value: float | None
    low: float | None
    high: float | None
    bootstrap: list[float | None]
    sensitivity: float | None
    specificity: float | None
    reason: str | None

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        if fmt == "json":
            from jury.results.render import to_json

            return to_json(self.model_dump(mode="json"))
        from jury.results.corrected import rate_line

        line = rate_line(self.kind, len(self.reviewers), self.apparent, self.sample, self.value, self.low, self.high, self.reason)
        return line + "\n"


@dataclass(frozen=True)
class Correction:
    """What :func:`correction` computes: the reviewers' names, the corrected rate (Se and Sp
    with their intervals in ``rate.accuracy``), the gold file the sample's frame binds, the
    files read, and what the rate was computed from (``flags``: the panel's flag of every
    record of the frame, ``strata`` theirs, ``positions`` the decided sampled records' places
    in the frame and ``truth`` their human label; ``owners`` every record's model (None for a
    gold query); ``verdict_files``: the content_sha256 of the files of this kind the sample
    binds (one holding only reviewed passes too, though no record of it is in the frame); ``by``: the sample's strata keys), for a caller that corrects more than the frame's rate."""

    kind: str
    reviewers: list[str]
    rate: CorrectedRate
    gold_path: Path
    inputs: list[Path]
    flags: list[bool]
    strata: list[str]
    positions: list[int]
    truth: list[bool]
    owners: list[str | None]
    verdict_files: list[str]
    by: list[str]


def review_corrected(
    sample: PathLike,
    a: PathLike,
    b: PathLike,
    options: ReviewCorrectedOptions | None = None,
    **overrides: Any,
) -> ReviewCorrected:
    """Correct the panel's rate over the sample's frame by two reviewers (the module doc).

    Args:
        sample: the locked sample file the reviewers decided.
        a: reviewer A's locked review file.
        b: reviewer B's.
        options: a ``ReviewCorrectedOptions`` (jury.options.review: ``settled``, the adjudication round file
            (jury review settle) settling their disagreements, needed when they disagree; ``kind``,
            ``gold`` (the defect rate of the audited gold) or ``adjudication`` (the credited rate); the
            bootstrap's ``resamples``, ``seed`` and ``confidence``), or none.
        overrides: its fields as keyword arguments (``kind=``, ``settled=``, ...), over ``options``'.
    """
    o = job_options(ReviewCorrectedOptions, "review_corrected", options, overrides)
    kind = o.kind
    c = correction(sample, a, b, o)
    got = c.rate
    return ReviewCorrected(
        kind=kind,
        reviewers=c.reviewers,
        **got.headline(),
        bootstrap=[got.bootstrap.low, got.bootstrap.high],
        sensitivity=got.accuracy.sensitivity.value,
        specificity=got.accuracy.specificity.value,
        inputs=c.inputs,
    )


def correction(
    sample: PathLike,
    a: PathLike,
    b: PathLike,
    o: ReviewCorrectedOptions,
) -> Correction:
    """:func:`review_corrected`'s computation (its arguments), for a caller that needs more than
    its result (``jury.report``'s corrected section: Se and Sp intervals, the frame's gold)."""
    from jury.inputs.io import load_gold
    from jury.jobs.review_agreement import label_of
    from jury.jobs.review_sample import frame_records, stratum_label
    from jury.pipeline.review_queue import load_sources
    from jury.stats.correction import corrected_rate
    from jury.verdicts.sample import load_sample

    kind, settled = o.kind, o.settled
    if kind not in ("gold", "adjudication"):
        raise InputError(f"kind: {kind!r} is not gold or adjudication")
    sp = Path(sample)
    drawn = load_sample(sp)
    paths = [Path(f.path) if Path(f.path).is_absolute() else sp.parent / f.path for f in drawn.frame]
    source = load_sources(
        [p for p, f in zip(paths, drawn.frame) if f.kind == "adjudication"],
        next((p for p, f in zip(paths, drawn.frame) if f.kind == "audit"), None),
    )
    gold = load_gold(source.gold_path) if any(d.kind == "adjudication" for _p, d in source.verdict_files) else None
    whole = frame_records(source, gold)
    _strata_as_drawn(drawn, whole, sp)  # the design weights are the draw's, or nothing is corrected
    frame = [r for r in whole if r["kind"] == kind]
    if not frame:
        raise InputError(f"{sp}: its frame holds no {kind} records")
    position = {(r["kind"], r["verdict_file"], r["model"], r["question_id"]): i for i, r in enumerate(frame)}
    reviews = _sample_reviews(a, b, drawn, sp)
    names = [doc.reviewers[0] for doc in reviews]
    labels = [{(str(r.kind), r.verdict_file, r.model, r.question_id): label_of(r) for r in doc.records} for doc in reviews]
    by_round = _settled_labels(settled, reviews, a, b) if settled is not None else {}
    idx, truth = [], []
    for rec in drawn.records:
        key = (str(rec.kind), rec.verdict_file, rec.model, rec.question_id)
        if str(rec.kind) != kind:
            continue
        la, lb = labels[0].get(key), labels[1].get(key)
        if la is None or lb is None:
            continue  # not decided by both: missing at random within its stratum
        label = la if la == lb else by_round.get(key)
        if label is None:
            raise InputError(
                f"question {rec.question_id!r}: the reviewers disagree ({la} vs {lb}); settle it first (jury review settle)"
            )
        idx.append(position[key])
        truth.append(label == "defective" if kind == "gold" else label in CREDITED_VERDICTS)
    if not idx:
        raise InputError(f"no sampled {kind} record was decided by both reviewers")
    strata = [stratum_label(r["values"], drawn.by) for r in frame]
    flags = [bool(r["flag"]) for r in frame]
    got = corrected_rate(flags, strata, idx, truth, resamples=o.resamples, seed=o.seed, confidence=o.confidence)
    files = [f.content_sha256 for f in drawn.frame if f.kind == ("audit" if kind == "gold" else "adjudication")]
    return Correction(kind, names, got, Path(source.gold_path), [sp, Path(a), Path(b)], flags, strata, idx, truth,
                      [r["model"] for r in frame], files, list(drawn.by))  # fmt: skip


def _strata_as_drawn(drawn: Any, whole: list[dict[str, Any]], sample: Path) -> None:
    """Refuse a frame whose strata, recomputed from the files now, are not the ones the sample was
    drawn with: every stratum's N_h as the sample file says, every sampled record in its stratum.
    The frame files are locked, but a record's stratum can also come from the gold (its difficulty),
    which the sample does not bind: edited since the draw, the inclusion probabilities n_h / N_h
    recomputed from it are not the draw's and the correction would be silently another one."""
    from jury.jobs.review_sample import stratum_label

    now = {(r["kind"], r["verdict_file"], r["model"], r["question_id"]): stratum_label(r["values"], drawn.by) for r in whole}
    sizes = Counter(now.values())
    then = {stratum_label(s.values, drawn.by): s.size for s in drawn.strata}
    differs = next((h for h in [*then, *sizes] if sizes[h] != then.get(h, 0)), None)
    moved = [
        rec.question_id
        for rec in drawn.records
        if now.get((str(rec.kind), rec.verdict_file, rec.model, rec.question_id))
        != stratum_label(drawn.strata[rec.stratum].values, drawn.by)
    ]
    if differs is not None or moved:
        what = (
            f"stratum {differs!r} holds {sizes[differs]} records of the frame now, {then.get(differs, 0)} when drawn"
            if differs is not None
            else f"question {moved[0]!r} is in another stratum now"
        )
        raise InputError(
            f"{sample}: its strata are not the ones it was drawn with ({what}): the gold (a difficulty) or jury's "
            "strata changed since; draw the sample again (jury review sample)"
        )


def _sample_reviews(a: PathLike, b: PathLike, drawn: Any, sample: Path) -> list[Any]:
    """The two reviewers' locked review files (jury.verdicts.review.load_two_reviews), each a review
    of this sample."""
    from jury.verdicts.review import load_two_reviews

    (_, da), (_, db) = load_two_reviews(a, b)  # two people's files: the one loader of every command
    reviews = [da, db]
    for path, doc in zip((a, b), reviews):
        of = doc.settings.get("sample_file")
        if of != drawn.content_sha256:
            what = f"a review of the sample {of}" if of else "not a review of a sample (jury review lock --sample)"
            raise InputError(f"{path}: is {what}, not of {sample} ({drawn.content_sha256})")
    return reviews


def _settled_labels(settled: Path, reviews: list[Any], a: PathLike, b: PathLike) -> dict[tuple[Any, ...], str]:
    """The labels an adjudication round of these two reviews settled, by item."""
    from jury.verdicts.adjudication_round import load_round

    rd = load_round(settled)
    if {r.content_sha256 for r in rd.reviews} != {doc.content_sha256 for doc in reviews}:
        raise InputError(f"{settled}: settles other review files than {a} and {b}")
    return {(str(r.kind), r.verdict_file, r.model, r.question_id): r.label for r in rd.records}
