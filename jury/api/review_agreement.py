"""``jury.review_agreement``: two reviewers' locked review files compared.

Each file must hold one reviewer's decisions (``jury review lock --reviewer NAME``), the two
reviewers different, and both lock and bindings are checked first (``load_review``). Items are
matched by (kind, verdict file, model, question); a reviewer's label is the category their
choice maps to (adjudication: through the answer order they were shown) or ``valid`` /
``defective`` (gold). Over the items both decided: agreement, Cohen's kappa (bootstrap and
Fleiss–Cohen–Everitt Wald intervals) and Krippendorff's alpha with its interval
(:func:`jury.stats_panels.pair_agreement`), the confusion table and the disagreements.

>>> import jury
>>> print(jury.review_agreement("verdicts/review-ann.json", "verdicts/review-bob.json"))  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from jury.api.result import Result
from jury.pipeline.project import PathLike


class ReviewAgreement(Result):
    """Two reviewers compared: ``a`` and ``b`` (reviewer, file, lock, decisions), ``n`` items
    both decided, ``only_a`` / ``only_b``, ``agreement``, ``kappa`` (value, bootstrap interval,
    SE, Wald interval), ``alpha`` (value, interval), ``labels`` and ``confusion`` (rows a,
    columns b) and ``disagreements`` (the item and both labels)."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json", "md")

    a: dict[str, Any]
    b: dict[str, Any]
    n: int
    only_a: int
    only_b: int
    agreement: float | None
    kappa: dict[str, Any]
    alpha: dict[str, Any]
    labels: list[str]
    confusion: list[list[int]]
    disagreements: list[dict[str, Any]]

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        if fmt == "json":
            from jury.results.render import to_json

            return to_json(self.model_dump(mode="json"))
        from jury.results.render import safe

        def num(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.3f}"

        def ci(pair: Any) -> str:
            return "[n/a]" if not pair or pair[0] is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"

        k, al = self.kappa, self.alpha
        lines = [
            f"{safe(self.a['reviewer'])} vs {safe(self.b['reviewer'])}: {self.n} items both decided"
            f" ({self.only_a} only by {safe(self.a['reviewer'])}, {self.only_b} only by {safe(self.b['reviewer'])})",
            f"agreement {num(self.agreement)}",
            f"Cohen's kappa {num(k['value'])} {ci(k['interval'])} (bootstrap; Wald {ci(k['wald'])}, SE {num(k['se'])})",
            f"Krippendorff's alpha {num(al['value'])} {ci(al['interval'])}",
            f"{len(self.disagreements)} disagreements:",
        ]
        for d in self.disagreements:
            who = f", model {safe(d['model'])}" if d.get("model") else ""
            lines.append(f"  {d['kind']} question {safe(d['question_id'])}{who}: {safe(d['a'])} vs {safe(d['b'])}")
        text = "".join(line + "\n" for line in lines)
        return text.replace("\n", "  \n") if fmt == "md" else text


def label_of(record: Any) -> str:
    """A review decision's label: its category (adjudication) or its choice (gold)."""
    return str(record.category) if record.kind == "adjudication" else str(record.choice)


def review_agreement(
    a: PathLike, b: PathLike, *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> ReviewAgreement:
    """Compare two reviewers' locked review files (the module doc).

    Args:
        a: reviewer A's review file (one reviewer).
        b: reviewer B's review file (one other reviewer).
        resamples: bootstrap resamples of the intervals.
        seed: the bootstrap's seed.
        confidence: the intervals' nominal coverage.

    Raises:
        InputError: a file with other than one reviewer, the same reviewer twice, no item in common.
        VerdictError: a file unlocked, changed, or binding files that changed.
    """
    from jury.errors import InputError
    from jury.stats_panels import pair_agreement
    from jury.verdicts.review import load_review

    docs = []
    for path in (Path(a), Path(b)):
        if not path.is_file():
            raise InputError(f"{path}: no such review file")
        doc = load_review(path)
        if len(doc.reviewers) != 1:
            raise InputError(
                f"{path}: holds {len(doc.reviewers)} reviewers' decisions; lock one file per reviewer (jury review lock --reviewer)"
            )
        docs.append((path, doc))
    (pa, da), (pb, db) = docs
    if da.reviewers == db.reviewers:
        raise InputError(f"{pa} and {pb}: both are {da.reviewers[0]!r}'s decisions; compare two reviewers")
    by_a = {r.item(): r for r in da.records}
    by_b = {r.item(): r for r in db.records}
    items = [*by_a, *(k for k in by_b if k not in by_a)]
    if not any(k in by_b for k in by_a):
        raise InputError(f"{pa} and {pb}: no item both reviewers decided")
    la = [label_of(by_a[k]) if k in by_a else None for k in items]
    lb = [label_of(by_b[k]) if k in by_b else None for k in items]
    pair = pair_agreement(la, lb, resamples=resamples, seed=seed, confidence=confidence)
    disagreements = []
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
        kappa={
            "value": pair.kappa.value,
            "interval": [pair.kappa.low, pair.kappa.high],
            "se": pair.kappa_se,
            "wald": list(pair.kappa_wald) if pair.kappa_wald else None,
        },
        alpha={"value": pair.alpha, "interval": [pair.alpha_interval.low, pair.alpha_interval.high]},
        labels=[str(x) for x in pair.labels],
        confusion=pair.confusion.tolist(),
        disagreements=disagreements,
        inputs=[pa, pb],
    )
