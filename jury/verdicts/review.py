"""Locked review files: what people decided in `jury review`, bound and hash-locked like verdicts.

A review file (``kind: "review"``) binds the verdict files it reviewed (path, sha256 and
their own ``content_sha256``) and the gold, run and database files behind them, names the
reviewers, and holds one record per (item, reviewer): the reviewer's choice, the answer
order they were shown, the category it maps to, their note and when they decided. It is
locked with the same RFC 8785 ``content_sha256`` (jury/verdicts/lock.py) and checked by
``jury verify``; every category must follow from the choice and order, as a verdict must
follow from its votes. Decisions are exported as human labels (jury/inputs/labels.py).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from jury.errors import InputError, JuryError, VerdictError
from jury.inputs.io import sha256_file
from jury.inputs.labels import AdjudicationLabel, GoldLabel, Label
from jury.inputs.records import normalise_qid
from jury.inputs.writer import write_output
from jury.judging.ballots import blind_category
from jury.verdicts.documents import (
    FORMAT_VERSION,
    LOCK_KEY,
    DocumentModel,
    FileBinding,
    Inputs,
    PrefixedSha256,
    Provenance,
    ReviewItem,
    VerdictFile,
    dumps_pretty,
    iso_time,
    parse_document,
    schema_field,
    schema_filename,
)
from jury.verdicts.lock import check_lock, load_locked, read_verdict_json, write_locked
from jury.vocab import AUDIT_VOTES, BLIND_ANSWERS, CATEGORIES, CREDITED_VERDICTS, REVIEW_KIND, AuditVote, ReviewItemKind

REVIEW_SOURCE = "jury review"


def review_schema_filename() -> str:
    return schema_filename(REVIEW_KIND)


class ReviewedFile(FileBinding):
    """A verdict file that was reviewed: path, sha256 of its bytes, and its own lock."""

    kind: Literal["adjudication", "audit"]
    content_sha256: PrefixedSha256


class CorrectedResult(DocumentModel):
    """What a corrected gold query gave when jury ran it read-only during the review."""

    status: str
    row_count: int = Field(ge=0)
    result_sha256: str | None = None
    error: str | None = None


class ReviewRecord(DocumentModel):
    kind: ReviewItemKind = Field(description="adjudication: one model answer; gold: one gold query.")
    verdict_file: PrefixedSha256 = Field(description="content_sha256 of the reviewed verdict file holding the item.")
    question_id: int | str
    db_id: str
    model: str | None = Field(None, description="Adjudication items: the model whose answer was reviewed.")
    reviewer: str = Field(min_length=1)
    decided_at: str = Field(description="ISO 8601 time, UTC, of the reviewer's (last) decision.")
    order: Literal["gold_first", "candidate_first"] | None = Field(
        None, description="Adjudication items: which answer the reviewer saw as Answer 1 (drawn per reviewer)."
    )
    choice: str = Field(description="answer_1, answer_2, both, neither, ambiguous (adjudication); valid, defective (gold).")
    category: str | None = Field(None, description="Adjudication items: the choice mapped back through the order.")
    credited: bool | None = None
    defect_type: str | None = None
    corrected_sql: str | None = None
    corrected_result: CorrectedResult | None = None
    note: str | None = None
    jury_verdict: str = Field(description="What the jury had decided (verdict, or flagged/not_flagged/undecided).")
    answer_key: str | None = None
    gold_key: str | None = None

    _qid = field_validator("question_id", mode="before")(normalise_qid)

    _iso_time = field_validator("decided_at")(iso_time)

    def item(self) -> ReviewItem:
        return (self.kind, self.verdict_file, self.model, self.question_id)


class ReviewFile(DocumentModel):
    """A hash-locked set of human review decisions (jury review file)."""

    schema_: str = schema_field(REVIEW_KIND)
    kind: Literal["review"]
    format_version: Literal[2] = 2
    jury_version: str
    provenance: Provenance | None = None
    created_at: str
    supersedes: PrefixedSha256 | None = None
    inputs: Inputs
    reviewed: list[ReviewedFile] = Field(description="The verdict files whose items were reviewed.")
    settings: dict[str, Any] = Field(description="Queues and sample settings of the review (free-form JSON).")
    reviewers: list[str]
    summary: dict[str, Any] = {}
    records: list[ReviewRecord]
    content_sha256: PrefixedSha256 | None = None


def validate_review(data: dict[str, Any], source: str = "review document") -> ReviewFile:
    return parse_document(ReviewFile.model_validate, data, source)


def review_schema() -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **ReviewFile.model_json_schema(by_alias=True)}


def write_review_schema(directory: str | Path) -> Path:

    target = Path(directory) / review_schema_filename()
    write_output(target, dumps_pretty(review_schema()))
    return target


# ------------------------------------------------------------------ the rules a locked file follows


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = Counter(r["kind"] for r in records)
    return {
        "decisions": len(records),
        "items": len({(r["kind"], r["verdict_file"], r.get("model"), r["question_id"]) for r in records}),
        "adjudication": kinds.get(ReviewItemKind.ADJUDICATION, 0),
        "gold": kinds.get(ReviewItemKind.GOLD, 0),
        "reviewers": sorted({r["reviewer"] for r in records}),
    }


def check_review(doc: ReviewFile) -> str | None:
    """The first way the file contradicts itself, or None: each category follows from choice
    and order, credit from category, each record names a reviewed file, the summary counts."""
    reviewed = {f.content_sha256 for f in doc.reviewed}
    seen: set[tuple[str, str, str | None, int | str, str]] = set()
    for i, r in enumerate(doc.records):
        where = f"records.{i}"
        if r.verdict_file not in reviewed:
            return f"{where}: names verdict file {r.verdict_file}, which the review does not bind"
        key = (*r.item(), r.reviewer)
        if key in seen:
            return f"{where}: repeats the decision of reviewer {r.reviewer!r} on question {r.question_id!r}"
        seen.add(key)
        if r.reviewer not in doc.reviewers:
            return f"{where}: reviewer {r.reviewer!r} is not in reviewers"
        if r.kind == ReviewItemKind.ADJUDICATION:
            if r.choice not in BLIND_ANSWERS or r.order is None or r.model is None:
                return f"{where}: an adjudication decision needs a model, an order and one of {', '.join(BLIND_ANSWERS)}"
            category, _ = blind_category(r.choice, r.order)
            if r.category != category or r.credited != (category in CREDITED_VERDICTS):
                return (
                    f"{where}: category {r.category!r} (credited {r.credited}) does not follow from {r.choice!r} with {r.order}"
                )
        else:
            if r.choice not in AUDIT_VOTES:
                return f"{where}: a gold decision is one of {', '.join(AUDIT_VOTES)}, not {r.choice!r}"
            if r.choice == AuditVote.VALID and (r.defect_type or r.corrected_sql):
                return f"{where}: a gold query decided valid has no defect type or corrected SQL"
    summary = summarize([r.model_dump(mode="json") for r in doc.records])
    for k, v in summary.items():
        if doc.summary.get(k) != v:
            return f"summary.{k} is {doc.summary.get(k)!r}, but the records give {v!r}"
    return None


def read_bound(f: ReviewedFile, base: str | Path, where: str, missing: str) -> tuple[str, VerdictFile] | str:
    """A bound verdict file read for checking: (its sha256, the locked document), or the one-line
    problem (``missing`` when it is not there, prefixed with ``where``). ``f.path`` is relative to
    ``base`` unless absolute. The caller compares what is bound."""

    target = Path(f.path) if Path(f.path).is_absolute() else Path(base) / f.path
    if not target.is_file():
        return f"{where}: {missing}"
    try:
        return sha256_file(target), load_locked(target)
    except OSError as exc:
        return f"{where}: cannot read: {exc.strerror or exc}"
    except JuryError as exc:
        return f"{where}: {exc}"


def check_reviewed(doc: ReviewFile, base: str | Path) -> str | None:
    """The first way the review fails to bind what it settles, or None: every reviewed
    verdict file must be there (paths relative to ``base``, the review file's folder unless
    absolute), with the bound sha256 and its own lock and rules holding; every decision must
    name a record of it and carry the keys of the answer and gold query it judged
    (``answer_key`` and ``gold_key`` for a verdict, ``gold_key`` for a gold query), equal to
    the record's."""
    loaded: dict[str, VerdictFile] = {}
    for i, f in enumerate(doc.reviewed):
        where = f"reviewed.{i} ({f.path})"
        got = read_bound(
            f, base, where, "the reviewed verdict file is not there; a review settles only verdict files it can check"
        )
        if isinstance(got, str):
            return got
        actual, vdoc = got
        if actual != f.sha256:
            return f"{where}: sha256 is {actual[:12]}..., not the bound {f.sha256[:12]}...: the reviewed file changed"
        if vdoc.content_sha256 != f.content_sha256 or vdoc.kind != f.kind:
            return f"{where}: is the {vdoc.kind} file {vdoc.content_sha256}, not the bound {f.kind} file {f.content_sha256}"
        loaded[f.content_sha256] = vdoc
    for i, r in enumerate(doc.records):
        where = f"records.{i} (question {r.question_id!r}" + (f", model {r.model!r})" if r.model else ")")
        if r.verdict_file not in loaded:
            return f"{where}: names verdict file {r.verdict_file}, which the review does not bind"
        vdoc = loaded[r.verdict_file]
        if r.kind == ReviewItemKind.ADJUDICATION:
            held = [x for x in vdoc.records if getattr(x, "model", None) == r.model and x.question_id == r.question_id]
            held = [x for x in held if not getattr(x, "review_pass", False)] if vdoc.kind == "adjudication" else []
            needed = {"answer_key": r.answer_key, "gold_key": r.gold_key}
        else:
            held = [x for x in vdoc.records if x.question_id == r.question_id] if vdoc.kind == "audit" else []
            needed = {"gold_key": r.gold_key}
        if not held:
            return f"{where}: {r.verdict_file} holds no such {r.kind} item"
        missing = [k for k, v in needed.items() if not v]
        if missing:
            return f"{where}: has no {' or '.join(missing)}: the decision cannot be checked against what it judged"
        for k, v in needed.items():
            bound = getattr(held[0], k, None)
            if bound is not None and bound != v:
                return f"{where}: {k} {str(v)[:12]}... is another answer or gold query than the verdict's ({bound[:12]}...)"
    return None


def load_review(path: str | Path) -> ReviewFile:
    """Read a review file: its lock first, then its schema and rules, then what it binds
    (check_reviewed); a one-line VerdictError."""
    p = Path(path)
    data = read_verdict_json(p)
    if isinstance(data, dict) and data.get("kind") not in (None, REVIEW_KIND):
        raise VerdictError(f"{p}: is an {data.get('kind')} file, not a review file")
    check_lock(p, data)
    doc = validate_review(data, str(p))
    problem = check_review(doc) or check_reviewed(doc, p.parent)
    if problem:
        raise VerdictError(f"{p}: {problem}; refused")
    return doc


def load_two_reviews(a: str | Path, b: str | Path) -> tuple[tuple[Path, ReviewFile], tuple[Path, ReviewFile]]:
    """Two reviewers' locked review files, as every command that takes two reads them (`jury
    review agreement`, `settle`, `corrected` and `jury report --sample-review A --sample-review
    B`): each file loaded (load_review) and holding one reviewer's decisions, and the two of
    two people: the same file given twice, a copy of it (the same bytes or the same locked
    content under another name) and two files of the same reviewer are refused, one line
    (InputError)."""

    pa, pb = Path(a), Path(b)
    for path in (pa, pb):
        if not path.is_file():
            raise InputError(f"{path}: no such review file")
    if os.path.samefile(pa, pb):
        raise InputError(f"{pa} and {pb}: the same file given twice; give two reviewers' review files")
    docs = []
    for path in (pa, pb):
        doc = load_review(path)
        if len(doc.reviewers) != 1:
            raise InputError(
                f"{path}: holds {len(doc.reviewers)} reviewers' decisions; lock one file per reviewer (jury review lock --reviewer)"
            )
        docs.append(doc)
    da, db = docs
    if da.content_sha256 == db.content_sha256 or sha256_file(pa) == sha256_file(pb):
        raise InputError(
            f"{pa} and {pb}: hold the same locked review (a copy, or the same decisions locked twice); give two reviewers' review files"
        )
    if da.reviewers == db.reviewers:
        raise InputError(
            f"{pa} and {pb}: both are {da.reviewers[0]!r}'s decisions; two reviewers must be two people (give another reviewer's file)"
        )
    return (pa, da), (pb, db)


def review_bindings(doc: ReviewFile) -> list[tuple[str, FileBinding]]:
    out: list[tuple[str, FileBinding]] = [("gold", doc.inputs.gold)]
    out += [(f"runs[{i}]", b) for i, b in enumerate(doc.inputs.runs)]
    out += [(f"databases[{k}]", b) for k, b in sorted(doc.inputs.databases.items())]
    out += [(f"reviewed[{i}]", FileBinding(path=f.path, sha256=f.sha256)) for i, f in enumerate(doc.reviewed)]
    return out


# ------------------------------------------------------------------ writing


def decision_record(d: dict[str, Any]) -> dict[str, Any]:
    """A store decision row (jury/execution/reviews.py) as a review record."""
    rec: dict[str, Any] = {
        "kind": d["kind"],
        "verdict_file": d["verdict_sha256"],
        "question_id": d["question_id"],
        "db_id": d.get("db_id") or "",
        "model": d.get("model"),
        "reviewer": d["reviewer"],
        "decided_at": d["decided_at"],
        "choice": d["choice"],
        "note": d.get("note") or None,
        "jury_verdict": d.get("jury_verdict") or "",
        "answer_key": d.get("answer_key"),
        "gold_key": d.get("gold_key"),
    }
    if d["kind"] == ReviewItemKind.ADJUDICATION:
        category, _ = blind_category(d["choice"], d["item_order"])
        rec.update(order=d["item_order"], category=category, credited=category in CREDITED_VERDICTS)
    elif d["choice"] == AuditVote.DEFECTIVE:
        rec.update(defect_type=d.get("defect_type") or None, corrected_sql=d.get("corrected_sql") or None)
        if rec["corrected_sql"] and d.get("corrected_result"):
            rec["corrected_result"] = d["corrected_result"]
    return rec


def review_document(head: dict[str, Any], decisions: list[dict[str, Any]]) -> dict[str, Any]:
    """The review file's JSON (not yet locked) from a header (inputs, reviewed, settings,
    provenance...) and the store's current decisions."""
    records = [decision_record(d) for d in decisions]
    return {
        "$schema": f"schema/{review_schema_filename()}",
        "kind": REVIEW_KIND,
        "format_version": FORMAT_VERSION,
        **head,
        "reviewers": sorted({r["reviewer"] for r in records}),
        "summary": summarize(records),
        "records": records,
        LOCK_KEY: None,
    }


def write_review(doc: dict[str, Any], path: str | Path) -> Path:
    """Lock and write a review file next to its schema (never over an existing file)."""
    p = Path(path)
    if not (p.parent / "schema" / review_schema_filename()).is_file():
        write_review_schema(p.parent / "schema")
    return write_locked(doc, p, _validated_for_lock)


def _validated_for_lock(data: dict[str, Any]) -> ReviewFile:
    """A review file about to be locked: the current review schema, then its validation."""
    data["$schema"] = f"schema/{review_schema_filename()}"
    return validate_review(data)


def labels_of(decisions: list[dict[str, Any]], source: str = REVIEW_SOURCE) -> list[Label]:
    """The decisions as human labels: one per (item, reviewer), annotator = the reviewer."""
    out: list[Label] = []
    for d in decisions:
        rec = decision_record(d)
        if rec["kind"] == ReviewItemKind.ADJUDICATION:
            category = rec["category"]
            out.append(
                AdjudicationLabel(
                    question_id=rec["question_id"],
                    model=rec["model"],
                    sql=None,
                    label="correct" if rec["credited"] else "incorrect",
                    category=category if category in CATEGORIES else None,
                    annotator=rec["reviewer"],
                    source=source,
                    note=rec["note"],
                )
            )
        else:
            out.append(
                GoldLabel(
                    question_id=rec["question_id"],
                    gold_defective=rec["choice"] == AuditVote.DEFECTIVE,
                    defect_type=rec.get("defect_type"),
                    corrected_sql=rec.get("corrected_sql"),
                    annotator=rec["reviewer"],
                    source=source,
                    note=rec["note"],
                )
            )
    return out
