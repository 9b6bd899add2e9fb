"""``jury.review_agreement``: two reviewers' locked review files compared.

Each file must hold one reviewer's decisions (``jury review lock --reviewer NAME``), the two
reviewers different, and both lock and bindings are checked first (``load_review``). Items are
matched by (kind, verdict file, model, question); a reviewer's label is the category their
choice maps to (adjudication: through the answer order they were shown) or ``valid`` /
``defective`` (gold). Over the items both decided: agreement, Cohen's kappa (bootstrap and
Fleiss–Cohen–Everitt Wald intervals) and Krippendorff's alpha with its interval
(:func:`jury.stats.panels.pair_agreement`), the confusion table and the disagreements. Gold
queries and answers are two scales: with both, each kind gets its own kappa and alpha (pooled,
the kind alone would agree) and the overall ones are None.

>>> import jury
>>> print(jury.review_agreement("verdicts/review-ann.json", "verdicts/review-bob.json"))  # doctest: +SKIP
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.errors import InputError
from jury.inputs.records import QuestionId
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.review import ReviewAgreementOptions
from jury.pipeline.project import PathLike
from jury.version import __version__, provenance


class ReviewerFile(TypedDict):
    """One side of :class:`ReviewAgreement`: the reviewer, their file, its lock and how many decisions it holds."""

    reviewer: str
    path: str
    content_sha256: str | None
    decisions: int


class KappaSummary(TypedDict):
    """Cohen's kappa with its bootstrap interval, Fleiss–Cohen–Everitt SE and Wald interval."""

    value: float | None
    interval: list[float | None]
    se: float | None
    wald: list[float] | None


class AlphaSummary(TypedDict):
    """Krippendorff's alpha with its bootstrap interval."""

    value: float | None
    interval: list[float | None]


class KindAgreement(TypedDict):
    """The agreement over the items of one kind (gold queries, or adjudicated answers): their own
    scale, so their own kappa and alpha."""

    kind: str
    n: int
    agreement: float | None
    kappa: KappaSummary
    alpha: AlphaSummary


class ReviewDisagreement(TypedDict):
    """An item both reviewers decided differently, and their two labels."""

    kind: str
    verdict_file: str
    model: str | None
    question_id: QuestionId
    a: str | None
    b: str | None


class ReviewAgreement(Result):
    """Two reviewers compared: ``a`` and ``b`` (reviewer, file, lock, decisions), ``n`` items
    both decided, ``only_a`` / ``only_b``, ``agreement``, ``kappa`` (value, bootstrap interval,
    SE, Wald interval), ``alpha`` (value, interval), ``labels`` and ``confusion`` (rows a,
    columns b), ``kinds`` (the same per kind of item: gold queries and answers are two scales, so
    with both kinds the overall kappa and alpha are None and each kind has its own) and
    ``disagreements`` (the item and both labels)."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json", "md")

    a: ReviewerFile
    b: ReviewerFile
    n: int
    only_a: int
    only_b: int
    agreement: float | None
    kappa: KappaSummary
    alpha: AlphaSummary
    labels: list[str]
    confusion: list[list[int]]
    kinds: list[KindAgreement]
    disagreements: list[ReviewDisagreement]

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        if fmt == "json":
            from jury.results.render import to_json

            return to_json(self.model_dump(mode="json"))
        from jury.results.render import safe

        def num(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.3f}"

        def ci(pair: Any) -> str:
            return "[n/a]" if not pair or pair[0] is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"

        def coefficients(k: KappaSummary, al: AlphaSummary, indent: str = "") -> list[str]:
            return [
                f"{indent}Cohen's kappa {num(k['value'])} {ci(k['interval'])} (bootstrap; Wald {ci(k['wald'])}, SE {num(k['se'])})",
                f"{indent}Krippendorff's alpha {num(al['value'])} {ci(al['interval'])}",
            ]

        lines = [
            f"{safe(self.a['reviewer'])} vs {safe(self.b['reviewer'])}: {self.n} items both decided"
            f" ({self.only_a} only by {safe(self.a['reviewer'])}, {self.only_b} only by {safe(self.b['reviewer'])})",
            f"agreement {num(self.agreement)}",
        ]
        if len(self.kinds) > 1:  # two scales: a kappa each
            lines.append("Cohen's kappa and Krippendorff's alpha per kind (gold queries and answers are two scales):")
            for g in self.kinds:
                lines.append(f"  {g['kind']}: {g['n']} items, agreement {num(g['agreement'])}")
                lines += coefficients(g["kappa"], g["alpha"], "    ")
        else:
            lines += coefficients(self.kappa, self.alpha)
        lines.append(f"{len(self.disagreements)} disagreements:")
        for d in self.disagreements:
            who = f", model {safe(d['model'])}" if d.get("model") else ""
            lines.append(f"  {d['kind']} question {safe(d['question_id'])}{who}: {safe(d['a'])} vs {safe(d['b'])}")
        text = "".join(line + "\n" for line in lines)
        return text.replace("\n", "  \n") if fmt == "md" else text


def _coefficients(pair: Any) -> tuple[KappaSummary, AlphaSummary]:
    """A :class:`jury.stats.panels.PairAgreement`'s kappa and alpha, as the result holds them."""
    kappa: KappaSummary = {
        "value": pair.kappa.value,
        "interval": [pair.kappa.low, pair.kappa.high],
        "se": pair.kappa_se,
        "wald": list(pair.kappa_wald) if pair.kappa_wald else None,
    }
    return kappa, {"value": pair.alpha, "interval": [pair.alpha_interval.low, pair.alpha_interval.high]}


def _per_kind(items: list[Any], la: list[str | None], lb: list[str | None], **options: Any) -> list[KindAgreement]:
    """The agreement over each kind's items both reviewers decided (gold, then adjudication)."""
    from jury.stats.panels import pair_agreement

    out: list[KindAgreement] = []
    for kind in sorted(
        {str(k[0]) for k, x, y in zip(items, la, lb) if x is not None and y is not None}, key=("gold", "adjudication").index
    ):
        at = [i for i, k in enumerate(items) if str(k[0]) == kind]
        pair = pair_agreement([la[i] for i in at], [lb[i] for i in at], **options)
        kappa, alpha = _coefficients(pair)
        out.append({"kind": kind, "n": pair.n, "agreement": pair.agreement, "kappa": kappa, "alpha": alpha})
    return out


def label_of(record: Any) -> str:
    """A review decision's label: its category (adjudication) or its choice (gold)."""
    return str(record.category) if record.kind == "adjudication" else str(record.choice)


def review_agreement(
    a: PathLike, b: PathLike, options: ReviewAgreementOptions | None = None, **overrides: Any
) -> ReviewAgreement:
    """Compare two reviewers' locked review files (the module doc).

    Args:
        a: reviewer A's review file (one reviewer).
        b: reviewer B's review file (one other reviewer).
        options: an ``ReviewAgreementOptions`` (jury.options.review: the intervals' bootstrap, ``resamples``,
            ``seed`` and ``confidence``), or none.
        overrides: its fields as keyword arguments (``resamples=``, ...), over ``options``'.

    Raises:
        InputError: a file with other than one reviewer, the same file, a copy or the same reviewer twice
            (jury.verdicts.review.load_two_reviews), no item in common.
        VerdictError: a file unlocked, changed, or binding files that changed.
    """
    from jury.stats.panels import pair_agreement
    from jury.verdicts.review import load_two_reviews

    o = job_options(ReviewAgreementOptions, "review_agreement", options, overrides)
    resamples, seed, confidence = o.resamples, o.seed, o.confidence
    (pa, da), (pb, db) = load_two_reviews(a, b)
    by_a = {r.item(): r for r in da.records}
    by_b = {r.item(): r for r in db.records}
    items = [*by_a, *(k for k in by_b if k not in by_a)]
    if not any(k in by_b for k in by_a):
        raise InputError(f"{pa} and {pb}: no item both reviewers decided")
    la = [label_of(by_a[k]) if k in by_a else None for k in items]
    lb = [label_of(by_b[k]) if k in by_b else None for k in items]
    kinds = _per_kind(items, la, lb, resamples=resamples, seed=seed, confidence=confidence)
    pooled = len(kinds) > 1  # answers and gold queries: the pooled coefficients are not shown, so not bootstrapped
    pair = pair_agreement(la, lb, resamples=0 if pooled else resamples, seed=seed, confidence=confidence)
    kappa, alpha = _coefficients(pair)
    if pooled:  # answers and gold queries are two scales: pooled, the kind alone would agree
        kappa, alpha = (
            {"value": None, "interval": [None, None], "se": None, "wald": None},
            {"value": None, "interval": [None, None]},
        )
    disagreements: list[ReviewDisagreement] = []
    for i in pair.disagreements:
        kind, vf, model, qid = items[int(i)]
        disagreements.append(
            {"kind": str(kind), "verdict_file": vf, "model": model, "question_id": qid, "a": la[int(i)], "b": lb[int(i)]}
        )
    return ReviewAgreement(
        a={"reviewer": da.reviewers[0], "path": str(pa), "content_sha256": da.content_sha256, "decisions": len(da.records)},
        b={"reviewer": db.reviewers[0], "path": str(pb), "content_sha256": db.content_sha256, "decisions": len(db.records)},
        n=pair.n,
        only_a=sum(1 for k in by_a if k not in by_b),
        only_b=sum(1 for k in by_b if k not in by_a),
        agreement=pair.agreement,
        kappa=kappa,
        alpha=alpha,
        labels=[str(x) for x in pair.labels],
        confusion=pair.confusion.tolist(),
        kinds=kinds,
        disagreements=disagreements,
        inputs=[pa, pb],
    )


class SettledRound(Result):
    """The adjudication round written: its path, lock, and who settled how many disagreements."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json")

    path: Path
    content_sha256: str
    settled: int
    settled_by: dict[str, int]

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        if fmt == "json":
            from jury.results.render import to_json

            return to_json(self.model_dump(mode="json"))
        from jury.results.render import safe

        who = ", ".join(f"{safe(k)}: {v}" for k, v in self.settled_by.items())
        return f"locked an adjudication round settling {self.settled} disagreements ({who}) in {safe(self.path)}\n"


Disagreements = dict[tuple[Any, ...], tuple[str, str]]
"""(kind, verdict file, model, question_id) -> (reviewer A's label, reviewer B's)."""


def _settled_record(i: int, entry: dict[str, Any], disagreements: Disagreements, a: PathLike, b: PathLike) -> dict[str, Any]:
    """The adjudication round's record of the ``i``-th settled entry: the one disagreement it names,
    both labels, the label settled and who settled it."""

    qid, model = entry.get("question_id"), entry.get("model") or None
    match = [k for k in disagreements if str(k[3]) == str(qid) and k[2] == model]
    if not match:
        raise InputError(f"settled entry {i + 1}: question {qid!r} model {model!r} is no disagreement of {a} and {b}")
    if len(match) > 1:
        raise InputError(f"settled entry {i + 1}: question {qid!r} names {len(match)} disagreements; give its model")
    kind, vf, _m, q = match[0]
    who = entry.get("settled_by")
    names = [w.strip() for w in (who.split("+") if isinstance(who, str) else list(who or [])) if w.strip()]
    if not names:
        raise InputError(f"settled entry {i + 1}: question {qid!r}: settled_by names nobody")
    return {
        "kind": kind,
        "verdict_file": vf,
        "model": model,
        "question_id": q,
        "a": disagreements[match[0]][0],
        "b": disagreements[match[0]][1],
        "label": str(entry.get("label", "")),
        "settled_by": names,
        "note": entry.get("note") or None,
    }


def adjudication_round(output: PathLike, a: PathLike, b: PathLike, *, settled: list[dict[str, Any]]) -> SettledRound:
    """Record the adjudication round of two reviewers' disagreements as a locked file
    ``output`` (kind "adjudication round", never overwritten): ``settled`` holds one entry per
    disagreement: ``question_id``, ``model`` (adjudication items), ``label`` (the settled
    category, or valid/defective for a gold query), ``settled_by`` (a name, or the names of
    the people who settled it together, e.g. both reviewers) and an optional ``note``. Every
    disagreement of :func:`review_agreement` must be settled exactly once.

    Raises:
        InputError: a disagreement left out or settled twice, an entry that is no
            disagreement, a label of another kind, an output that exists.
    """

    from jury.inputs.io import sha256_file
    from jury.verdicts.adjudication_round import ROUND_KIND, load_round, write_round
    from jury.verdicts.lock import utc_now
    from jury.verdicts.verify import bind_file

    out = Path(output)
    if os.path.lexists(out):
        raise InputError(f"{out}: already exists; an adjudication round is never overwritten (choose another -o)")
    comparison = review_agreement(a, b, resamples=0)
    disagreements = {
        (d["kind"], d["verdict_file"], d["model"], d["question_id"]): (str(d["a"]), str(d["b"])) for d in comparison.disagreements
    }
    records = [_settled_record(i, entry, disagreements, a, b) for i, entry in enumerate(settled)]
    folder = out.parent
    doc = {
        "kind": ROUND_KIND,
        "jury_version": __version__,
        "provenance": provenance(),
        "created_at": utc_now(),
        "reviews": [
            {
                **bind_file(p, folder, sha256_file(p)).model_dump(),
                "content_sha256": side["content_sha256"],
                "reviewer": side["reviewer"],
            }
            for p, side in ((Path(a), comparison.a), (Path(b), comparison.b))
        ],
        "records": records,
    }
    path = write_round(doc, out, disagreements)
    locked = load_round(path)
    counts: dict[str, int] = {}
    for r in locked.records:
        key = " + ".join(r.settled_by)
        counts[key] = counts.get(key, 0) + 1
    return SettledRound(
        path=path,
        content_sha256=str(locked.content_sha256),
        settled=len(locked.records),
        settled_by=counts,
        inputs=[Path(a), Path(b)],
    )
