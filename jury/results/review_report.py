"""Human review in the results: decisions take precedence over the jury, and how far people agree.

A locked review file (jury/verdicts/review.py) settles an item when its reviewers reach a
strict majority (one reviewer: their decision). A settled adjudication item gets the
people's category (and its credit) in place of the jury's verdict; a settled gold item is
flagged or not as the people decided. A decision made on another answer or gold query
than the verdict it reviews is refused, like a stale verdict. Agreement: Cohen's kappa
between each pair of reviewers and between each reviewer and the jury.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired

from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.errors import InputError
from jury.stats.agreement import cohen_kappa, pairwise_kappas
from jury.vocab import CATEGORIES, CREDITED_VERDICTS, AuditVote, ReviewItemKind

if TYPE_CHECKING:
    from jury.verdicts.documents import AdjudicationFile, AdjudicationRecord, AuditFile
    from jury.verdicts.review import ReviewFile, ReviewRecord


def _majority(values: list[str | None]) -> str | None:
    top = Counter(values).most_common()
    if top and top[0][1] * 2 > len(values):
        return top[0][0]
    return None


def _by_item(review: ReviewFile) -> dict[tuple[Any, ...], list[Any]]:
    out: dict[tuple[Any, ...], list[Any]] = {}
    for r in review.records:
        out.setdefault(r.item(), []).append(r)
    return out


def _people(recs: Sequence[ReviewRecord]) -> str | None:
    return _majority([r.category if r.kind == ReviewItemKind.ADJUDICATION else r.choice for r in recs])


def people_labels(
    review: ReviewFile, adj_docs: Sequence[tuple[str | Path, AdjudicationFile]]
) -> list[dict[tuple[Any, Any], str]]:
    """Per adjudication file, (model, question id) -> the category its reviewers settled (their
    majority, as apply_review uses it; an item they split on is left out)."""
    items = _by_item(review)
    out = []
    for _path, doc in adj_docs:
        labels = {}
        for r in doc.records:
            recs = items.get((ReviewItemKind.ADJUDICATION, doc.content_sha256, r.model, r.question_id))
            category = _people(recs) if recs and not r.review_pass else None
            if category is not None:
                labels[(r.model, r.question_id)] = category
        out.append(labels)
    return out


def _check_same_answer(review_path: str | Path, path: str | Path, r: AdjudicationRecord, recs: Sequence[ReviewRecord]) -> None:
    """An InputError when a reviewer judged another answer or gold query than the record holds."""
    for h in recs:
        if (h.answer_key and r.answer_key and h.answer_key != r.answer_key) or (
            h.gold_key and r.gold_key and h.gold_key != r.gold_key
        ):
            raise InputError(
                f"{review_path}: reviewer {h.reviewer!r} judged another answer or gold query for model "
                f"{r.model!r} question {r.question_id!r} than {path} holds; review the current verdicts"
            )


class ReviewerPair(TypedDict):
    """Cohen's kappa between two reviewers over the n items of one kind both rated."""

    a: str
    b: str
    kappa: float | None
    n: int
    kind: NotRequired[str]  # gold or adjudication: two scales, a kappa each (absent in reports before it)


class ReviewerVsJury(TypedDict):
    """Cohen's kappa and plain agreement between a reviewer and the jury, over the n items of one
    kind the reviewer rated where the jury reached a verdict."""

    reviewer: str
    kappa: float | None
    n: int
    agreement: float | None
    kind: NotRequired[str]  # gold or adjudication (absent in reports before it)


class ReviewKappas(TypedDict):
    """:func:`review_agreement`: between each pair of reviewers and each reviewer and the jury."""

    between_reviewers: list[ReviewerPair]
    reviewers_vs_jury: list[ReviewerVsJury]


class SettledByKind(TypedDict):
    """Items people settled, by kind: adjudication verdicts and gold queries."""

    adjudication: int
    gold: int


class ReviewInfo(TypedDict):
    """:func:`apply_review`'s summary of a human review file applied to the verdicts."""

    file: str
    settled_by_people: int
    settled: SettledByKind
    reviewers_split: int
    not_in_these_verdicts: int
    agreement: ReviewKappas


def apply_review(
    review_path: str | Path,
    review: ReviewFile,
    adj_docs: Sequence[tuple[str | Path, AdjudicationFile]],
    audit_docs: Sequence[AuditFile],
) -> tuple[list[Any], list[Any], ReviewInfo]:
    """(adj_docs, audit_docs) with the people's decisions in place of the jury's, and a summary:
    items settled by people, by kind, and those left to the jury (reviewers split)."""
    items = _by_item(review)
    used: set[tuple[Any, ...]] = set()
    settled: SettledByKind = {"adjudication": 0, "gold": 0}
    split = 0
    new_adj = []
    for path, doc in adj_docs:
        records = []
        for r in doc.records:
            key: tuple[Any, ...] = (ReviewItemKind.ADJUDICATION, doc.content_sha256, r.model, r.question_id)
            recs = items.get(key) if not r.review_pass else None
            if recs:
                used.add(key)
                _check_same_answer(review_path, path, r, recs)
                category = _people(recs)
                if category is None:
                    split += 1
                else:
                    settled["adjudication"] += 1
                    r = r.model_copy(update={"verdict": category, "credited": category in CREDITED_VERDICTS})
            records.append(r)
        new_adj.append((path, doc.model_copy(update={"records": records})))
    new_audit = []
    for audit in audit_docs:
        audit_records = []
        for a in audit.records:
            key = (ReviewItemKind.GOLD, audit.content_sha256, None, a.question_id)
            recs = items.get(key)
            if recs:
                used.add(key)
                choice = _people(recs)
                if choice is None:
                    split += 1
                else:
                    settled["gold"] += 1
                    a = a.model_copy(update={"flagged": choice == AuditVote.DEFECTIVE, "decided": True})
            audit_records.append(a)
        new_audit.append(audit.model_copy(update={"records": audit_records}))
    info: ReviewInfo = {
        "file": str(review_path),
        "settled_by_people": settled["adjudication"] + settled["gold"],
        "settled": settled,
        "reviewers_split": split,
        "not_in_these_verdicts": len(set(items) - used),
        "agreement": review_agreement(review),
    }
    return new_adj, new_audit, info


def _rating(r: ReviewRecord) -> str | None:
    return r.category if r.kind == ReviewItemKind.ADJUDICATION else r.choice


def _jury_rating(r: ReviewRecord) -> str | None:
    if r.kind == ReviewItemKind.ADJUDICATION:
        return r.jury_verdict if r.jury_verdict in CATEGORIES else None
    return {"flagged": AuditVote.DEFECTIVE.value, "not_flagged": AuditVote.VALID.value}.get(r.jury_verdict)


def review_agreement(review: ReviewFile) -> ReviewKappas:
    """Cohen's kappa between each pair of reviewers and between each reviewer and the jury
    (over the items where the jury reached a verdict), with n, for each kind of item apart: gold
    queries (valid / defective) and answers (a verdict) are two scales, and pooled, the kind alone
    would count as agreement."""
    between: list[ReviewerPair] = []
    with_jury: list[ReviewerVsJury] = []
    for kind in (ReviewItemKind.GOLD, ReviewItemKind.ADJUDICATION):
        records = [r for r in review.records if r.kind == kind]
        ratings: dict[str, dict[Any, Any]] = {}
        for r in records:
            ratings.setdefault(r.reviewer, {})[r.item()] = _rating(r)
        between += [
            {"a": p.a, "b": p.b, "kappa": p.value, "n": p.n, "kind": str(kind)} for p in pairwise_kappas(ratings) if p.n
        ]  # pairs with no common item say nothing
        for who in ratings:
            pairs = [(_rating(r), _jury_rating(r)) for r in records if r.reviewer == who and _jury_rating(r) is not None]
            people, jury = [p for p, _ in pairs], [j for _, j in pairs]
            agree = sum(p == j for p, j in pairs)
            with_jury.append(
                {
                    "reviewer": who,
                    "kappa": cohen_kappa(people, jury),
                    "n": len(pairs),
                    "agreement": agree / len(pairs) if pairs else None,
                    "kind": str(kind),
                }
            )
    return {"between_reviewers": between, "reviewers_vs_jury": with_jury}


def _on(entry: ReviewerPair | ReviewerVsJury) -> str:
    kind = entry.get("kind")
    return "" if kind is None else " on gold queries" if kind == ReviewItemKind.GOLD else " on answers"


def _k(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def render_review(info: ReviewInfo, fmt: str) -> str:
    """The review section for table/md outputs (plain lines; md as a list)."""
    s = info["settled"]
    bullet = "- " if fmt == "md" else ""
    lines = [
        f"{bullet}Human review ({info['file']}): {info['settled_by_people']} items settled by people "
        f"({s['adjudication']} verdicts, {s['gold']} gold queries); {info['reviewers_split']} left to the jury (reviewers split)"
    ]
    for p in info["agreement"]["between_reviewers"]:
        lines.append(f"{bullet}κ between reviewers {p['a']} and {p['b']}{_on(p)}: {_k(p['kappa'])} (n={p['n']})")
    for j in info["agreement"]["reviewers_vs_jury"]:
        lines.append(f"{bullet}κ between reviewer {j['reviewer']} and the jury{_on(j)}: {_k(j['kappa'])} (n={j['n']})")
    return "\n".join(lines) + "\n"


def summary_line(info: ReviewInfo) -> str:
    s = info["settled"]
    return (
        f"human review {info['file']}: {info['settled_by_people']} items settled by people "
        f"({s['adjudication']} verdicts, {s['gold']} gold queries; their decisions take precedence over the jury's)"
    )
