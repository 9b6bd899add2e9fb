"""The locked files a score or a report reads: audit, adjudications and a human review.

Every check that keeps a published number honest runs here, for ``jury.score``,
``jury.report`` and the commands alike: each lock is verified and each file's verdicts are
recomputed from its votes before anything else is read (``jury.verdicts.lock.load_current``),
a file a newer one supersedes is refused unless ``allow_superseded``, the people's decisions
of a review take precedence over the jury's, an audit made for another gold file is refused,
and verdicts that do not fit the runs first say which bound input they were made for.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation
    from jury.inputs.records import GoldItem, QuestionId
    from jury.results.review_report import ReviewInfo
    from jury.results.scoring import ModelScore
    from jury.verdicts.documents import AdjudicationFile, AuditFile
    from jury.verdicts.review import ReviewFile

AuditDoc = tuple[Path, "AuditFile"]
AdjudicationDoc = tuple[Path, "AdjudicationFile"]


@dataclass
class VerdictInputs:
    """The locked files as read (``audit``: (path, AuditFile) or None; ``adjudications``:
    [(path, AdjudicationFile)]; ``review``: (path, ReviewFile) or None) and the same with the
    review's decisions applied (``reviewed_audit``, ``reviewed_adjudications``, ``review_info``)."""

    audit: AuditDoc | None = None
    adjudications: list[AdjudicationDoc] = field(default_factory=list)
    review: tuple[Path, ReviewFile] | None = None
    allow_superseded: bool = False
    reviewed_audit: AuditDoc | None = None
    reviewed_adjudications: list[AdjudicationDoc] = field(default_factory=list)
    review_info: ReviewInfo | None = None

    @property
    def audit_path(self) -> Path | None:
        return None if self.audit is None else Path(self.audit[0])

    @property
    def verdict_paths(self) -> list[Path]:
        return [Path(p) for p, _ in self.adjudications]

    @property
    def review_path(self) -> Path | None:
        return None if self.review is None else Path(self.review[0])

    def paths(self) -> list[Path]:
        """Every file read: an output may be none of them."""
        return [p for p in (self.audit_path, *self.verdict_paths, self.review_path) if p is not None]


def load_verdict_inputs(
    audit: Path | None,
    verdicts: Sequence[Path] = (),
    review: Path | None = None,
    allow_superseded: bool = False,
    *,
    base: VerdictInputs | None = None,
) -> VerdictInputs:
    """Read and check the locked files (locks first), then apply the review. With ``base``
    (what a score already read), a file not given is taken from it, already checked."""
    if base is not None and audit is None:
        audit_doc = base.audit
    else:
        audit_doc = load_verdict_files(audit, [], allow_superseded)[0]
    if base is not None and not verdicts:
        adj_docs = list(base.adjudications)
    else:
        adj_docs = load_verdict_files(None, list(verdicts), allow_superseded)[1]
    if base is not None and review is None:
        review_doc = base.review
    elif review is not None:
        from jury.verdicts.review import load_review

        review_doc = (Path(review), load_review(review))  # its lock first
    else:
        review_doc = None
    inputs = VerdictInputs(audit_doc, adj_docs, review_doc, allow_superseded or (base is not None and base.allow_superseded))
    inputs.reviewed_audit, inputs.reviewed_adjudications, inputs.review_info = apply_review_file(review_doc, audit_doc, adj_docs)
    return inputs


@overload
def load_verdict_files(
    audit: Path, verdicts: list[Path], allow_superseded: bool = False
) -> tuple[AuditDoc, list[AdjudicationDoc]]: ...


@overload
def load_verdict_files(
    audit: Path | None, verdicts: list[Path], allow_superseded: bool = False
) -> tuple[AuditDoc | None, list[AdjudicationDoc]]: ...


def load_verdict_files(
    audit: Path | None, verdicts: list[Path], allow_superseded: bool = False
) -> tuple[AuditDoc | None, list[AdjudicationDoc]]:
    """(audit (path, doc) or None, [(path, adjudication doc)]): each lock checked, its verdicts
    recomputed from its votes, and a superseded file refused unless allow_superseded."""
    if audit is None and not verdicts:
        return None, []
    from jury.verdicts.lock import load_current

    audit_doc = (audit, load_current(audit, "audit", allow_superseded=allow_superseded)) if audit is not None else None
    adj_docs = [(path, load_current(path, "adjudication", allow_superseded=allow_superseded)) for path in verdicts]
    return audit_doc, adj_docs


def apply_review_file(
    review_doc: tuple[Path, ReviewFile] | None, audit_doc: AuditDoc | None, adj_docs: Iterable[AdjudicationDoc]
) -> tuple[AuditDoc | None, list[AdjudicationDoc], ReviewInfo | None]:
    """(audit_doc, adj_docs, info): with a review ((path, ReviewFile)), the people's decisions in
    place of the jury's (jury.results.review_report.apply_review); info is None without one."""
    if review_doc is None:
        return audit_doc, list(adj_docs), None
    from jury.results.review_report import apply_review

    path, doc = review_doc
    audits = [audit_doc[1]] if audit_doc is not None else []
    adj_docs, audits, info = apply_review(path, doc, list(adj_docs), audits)
    return ((audit_doc[0], audits[0]) if audit_doc is not None else None), adj_docs, info


def review_text(info: ReviewInfo | None, fmt: str) -> str:
    """The review section after a table or Markdown output; csv and json keep their shape."""
    if info is None or fmt not in ("table", "md"):
        return ""
    from jury.results.review_report import render_review

    return "\n" + render_review(info, fmt)


def review_note(info: ReviewInfo | None) -> list[str]:
    """The one-line summary of a review's decisions (the command line prints it on stderr)."""
    if info is None:
        return []
    from jury.results.review_report import summary_line

    return [summary_line(info)]


def check_audit_against_gold(
    audit_doc: AuditDoc | None, ev: Evaluation, gold_items: Mapping[QuestionId, GoldItem], gold_file: Path
) -> None:
    """Refuse an audit made for another gold file (jury.results.columns.check_audit_gold)."""
    from jury.inputs.io import sha256_file
    from jury.results.columns import check_audit_gold

    if audit_doc is not None:
        path, doc = audit_doc
        check_audit_gold(path, doc, gold_items, ev.databases, sha256_file(gold_file))


def add_verdict_columns(
    scores: Iterable[ModelScore],
    ev: Evaluation,
    gold_items: Mapping[QuestionId, GoldItem],
    gold_file: Path,
    audit_doc: AuditDoc | None,
    adj_docs: Sequence[AdjudicationDoc],
    runs: Collection[str | os.PathLike[str]] = (),
) -> None:
    """Fill the gold-clean and adjudicated columns from locked files loaded by load_verdict_files.
    Verdicts that do not fit the runs are first checked for other bound inputs (check_made_for)."""
    if audit_doc is None and not adj_docs:
        return
    from jury.errors import InputError
    from jury.results.columns import adjudicated, flagged_questions, gold_clean, verdict_index, with_ranks
    from jury.verdicts.documents import check_made_for

    pairs = ev.pairs
    if audit_doc is not None:
        check_audit_against_gold(audit_doc, ev, gold_items, gold_file)
        column = gold_clean(pairs, flagged_questions([audit_doc[1]]))
        rank = with_ranks(column)
        for s in scores:
            s.gold_clean, s.gold_clean_rank = column[s.model], rank[s.model]
    if adj_docs:
        try:
            column = adjudicated(pairs, verdict_index(adj_docs))
        except InputError:
            check_made_for(adj_docs, gold_file, runs)  # "made for another gold/run file" says why
            raise
        rank = with_ranks(column)
        for s in scores:
            s.adjudicated, s.adjudicated_rank = column[s.model], rank[s.model]
