"""``jury.review_corrected``: the panel's rate over the frame corrected by two reviewers'
decisions on a locked sample (Rogan–Gladen, :func:`jury.stats_correction.corrected_rate`).

The frame and its strata are the sample file's (its frame files rechecked, each record's
stratum recomputed from its ``by`` keys, jury/api/review_sample.py); the panel's label of a
record is its flag (a gold query flagged defective; an answer credited). A sampled record's
human label is the two reviewers' label where they agree, else the adjudication round's
settled label; a disagreement the round does not settle, or a round of other review files,
is refused. Gold queries: "defective" is positive; adjudicated answers: a credited category.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from jury.api.result import Result
from jury.pipeline.project import PathLike


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
        what = "gold defect rate" if self.kind == "gold" else "credited rate"
        head = f"{what}: panel says {100 * self.apparent:.1f} %, corrected by {len(self.reviewers)} reviewers on {self.sample} items: "
        if self.value is None:
            return head + f"undefined ({self.reason})\n"
        return head + f"{100 * self.value:.1f} % [{100 * (self.low or 0):.1f}, {100 * (self.high or 0):.1f}]\n"


def review_corrected(
    sample: PathLike,
    a: PathLike,
    b: PathLike,
    *,
    settled: PathLike | None = None,
    kind: str = "gold",
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> ReviewCorrected:
    """Correct the panel's rate over the sample's frame by two reviewers (the module doc).

    Args:
        sample: the locked sample file the reviewers decided.
        a: reviewer A's locked review file.
        b: reviewer B's.
        settled: the adjudication round file (jury review settle) settling their disagreements (needed when they disagree).
        kind: ``gold`` (the defect rate of the audited gold) or ``adjudication`` (the credited rate).
        resamples: bootstrap resamples.
        seed: the bootstrap's seed.
        confidence: the intervals' nominal coverage.
    """
    from jury.api.review_agreement import label_of
    from jury.api.review_sample import SEPARATOR, frame_records
    from jury.errors import InputError
    from jury.inputs.io import load_gold
    from jury.pipeline.review_queue import load_sources
    from jury.stats_correction import corrected_rate
    from jury.verdicts.adjudication_round import load_round
    from jury.verdicts.review import load_review
    from jury.verdicts.sample import load_sample
    from jury.vocab import CREDITED_VERDICTS

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
    frame = [r for r in frame_records(source, gold) if r["kind"] == kind]
    if not frame:
        raise InputError(f"{sp}: its frame holds no {kind} records")
    position = {(r["kind"], r["verdict_file"], r["model"], r["question_id"]): i for i, r in enumerate(frame)}
    reviews = [load_review(a), load_review(b)]
    names = [doc.reviewers[0] if len(doc.reviewers) == 1 else "+".join(doc.reviewers) for doc in reviews]
    labels = [{(str(r.kind), r.verdict_file, r.model, r.question_id): label_of(r) for r in doc.records} for doc in reviews]
    by_round: dict[tuple[Any, ...], str] = {}
    if settled is not None:
        rd = load_round(settled)
        if {r.content_sha256 for r in rd.reviews} != {doc.content_sha256 for doc in reviews}:
            raise InputError(f"{settled}: settles other review files than {a} and {b}")
        by_round = {(str(r.kind), r.verdict_file, r.model, r.question_id): r.label for r in rd.records}
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
    strata = [SEPARATOR.join(r["values"][k] for k in drawn.by) for r in frame]
    got = corrected_rate(
        [bool(r["flag"]) for r in frame], strata, idx, truth, resamples=resamples, seed=seed, confidence=confidence
    )
    return ReviewCorrected(
        kind=kind,
        reviewers=names,
        population=got.population,
        sample=got.sample,
        apparent=got.apparent,
        value=got.value,
        low=got.low,
        high=got.high,
        bootstrap=[got.bootstrap.low, got.bootstrap.high],
        sensitivity=got.accuracy.sensitivity.value,
        specificity=got.accuracy.specificity.value,
        reason=got.reason,
        inputs=[sp, Path(a), Path(b)],
    )
