"""Locked adjudication rounds: who settled each disagreement of two reviewers.

An adjudication-round file (``kind: "adjudication round"``) binds the two reviewers' locked
review files (path, sha256 of the bytes, their own ``content_sha256`` and reviewer) and holds
one record per item on which they disagreed: both labels, the settled label and who settled
it (a third person, or the two reviewers together: ``settled_by`` names every one of them).
Locked with the same RFC 8785 ``content_sha256`` (jury/verdicts/lock.py); the reader checks
the lock, then that every disagreement is settled exactly once with a label of its kind, then
that both review files are there unchanged with their locks holding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from jury.errors import InputError, JuryError, VerdictError
from jury.inputs.io import sha256_file
from jury.inputs.records import normalise_qid
from jury.verdicts.documents import DocumentModel, FileBinding, PeopleDocument, PrefixedSha256, ReviewItem, parse_document
from jury.verdicts.lock import read_locked_kind, write_locked
from jury.vocab import AUDIT_VOTES, CATEGORIES, ReviewItemKind

ROUND_KIND = "adjudication round"


class RoundReview(FileBinding):
    """One of the two review files the round settles."""

    content_sha256: PrefixedSha256
    reviewer: str = Field(min_length=1)


class SettledItem(DocumentModel):
    kind: ReviewItemKind
    verdict_file: PrefixedSha256
    model: str | None = None
    question_id: int | str
    a: str = Field(description="Reviewer A's label.")
    b: str = Field(description="Reviewer B's label.")
    label: str = Field(description="The settled label.")
    settled_by: list[str] = Field(min_length=1, description="Who settled it: a third person, or both reviewers.")
    note: str | None = None

    _qid = field_validator("question_id", mode="before")(normalise_qid)

    def item(self) -> ReviewItem:
        return (str(self.kind), self.verdict_file, self.model, self.question_id)


class AdjudicationRound(PeopleDocument):
    kind: Literal["adjudication round"]
    reviews: list[RoundReview] = Field(min_length=2, max_length=2)
    records: list[SettledItem]
    content_sha256: PrefixedSha256 | None = None


def validate_round(data: dict[str, Any], source: str = "adjudication round") -> AdjudicationRound:
    return parse_document(AdjudicationRound.model_validate, data, source)


def check_round(doc: AdjudicationRound, disagreements: dict[ReviewItem, tuple[str, str]]) -> str | None:
    """The first way the round fails to settle exactly the disagreements given ({item: (a, b)})."""
    seen: set[ReviewItem] = set()
    for i, r in enumerate(doc.records):
        where = f"records.{i} (question {r.question_id!r})"
        if r.item() not in disagreements:
            return f"{where}: is no disagreement of the two reviews"
        if r.item() in seen:
            return f"{where}: settled twice"
        seen.add(r.item())
        if (r.a, r.b) != disagreements[r.item()]:
            return f"{where}: labels {r.a!r}/{r.b!r} are not the reviews' {disagreements[r.item()]}"
        allowed = CATEGORIES if r.kind == ReviewItemKind.ADJUDICATION else AUDIT_VOTES
        if r.label not in allowed:
            return f"{where}: label {r.label!r} is not one of {', '.join(map(str, allowed))}"
    missing = [k for k in disagreements if k not in seen]
    if missing:
        return f"question {missing[0][3]!r}: a disagreement the round does not settle"
    return None


def write_round(doc: dict[str, Any], path: str | Path, disagreements: dict[ReviewItem, tuple[str, str]]) -> Path:
    parsed = validate_round(doc)
    problem = check_round(parsed, disagreements)
    if problem:
        raise InputError(f"adjudication round: {problem}")
    return write_locked(parsed.model_dump(mode="json"), path, validate_round)


def load_round(path: str | Path) -> AdjudicationRound:
    """Read an adjudication round: its lock, its schema, both review files unchanged, and
    that it settles exactly their disagreements; a one-line VerdictError."""

    p, data = read_locked_kind(path, ROUND_KIND, "adjudication round file")
    doc = validate_round(data, str(p))
    from jury.verdicts.review import load_review

    labels = []
    for i, rv in enumerate(doc.reviews):
        target = Path(rv.path) if Path(rv.path).is_absolute() else p.parent / rv.path
        try:
            if sha256_file(target) != rv.sha256:
                raise VerdictError(f"reviews.{i} ({rv.path}): changed since the round was settled")
            review = load_review(target)
        except OSError as exc:
            raise VerdictError(f"{p}: reviews.{i} ({rv.path}): cannot read: {exc.strerror or exc}") from None
        except JuryError as exc:
            raise VerdictError(f"{p}: {exc}") from None
        labels.append({r.item(): (r.category if r.kind == "adjudication" else r.choice) for r in review.records})
    la, lb = labels
    disagreements = {k: (str(la[k]), str(lb[k])) for k in la if k in lb and la[k] != lb[k]}
    problem = check_round(doc, disagreements)
    if problem:
        raise VerdictError(f"{p}: {problem}; refused")
    return doc
