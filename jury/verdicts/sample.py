"""Locked review samples: which records of verdict and audit files people review, and with
what probability each was drawn (``jury review sample``).

A sample file (``kind: "review sample"``) binds its frame, the locked verdict files the
records were drawn from (path, sha256 of the bytes and their own ``content_sha256``), names
the strata keys (``by``), the allocation (given sizes, proportional or Neyman), the minimum
per stratum and the seed, lists every stratum (its values, N_h, n_h) and every sampled
record with its stratum and inclusion probability n_h / N_h. It is locked with the same
RFC 8785 ``content_sha256`` as verdict and review files (jury/verdicts/lock.py); the reader
checks the lock, then the file's own rules (each record's inclusion follows from its
stratum, the counts add up), then that every frame file is there unchanged with its lock
holding.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from jury.errors import VerdictError
from jury.inputs.records import normalise_qid
from jury.verdicts.documents import DocumentModel, PeopleDocument, PrefixedSha256, ReviewItem, parse_document
from jury.verdicts.lock import read_locked_kind, write_locked
from jury.verdicts.review import ReviewedFile, read_bound
from jury.vocab import ReviewItemKind

SAMPLE_KIND = "review sample"
STRATUM_KEYS: tuple[str, ...] = ("verdict", "flag", "difficulty", "db", "model", "agreement")
"""What a sample can be stratified by (jury/jobs/review_sample.py builds each record's values)."""


class SampleStratum(DocumentModel):
    """One stratum of the frame: its values of the ``by`` keys, N_h and n_h."""

    values: dict[str, str]
    size: int = Field(ge=1, description="N_h: the frame's records in this stratum.")
    sample: int = Field(ge=0, description="n_h: of them, in the sample.")
    sd: float | None = Field(None, description="Neyman only: the S_h the allocation used.")


class SampledRecord(DocumentModel):
    """One sampled record: which item of which frame file, its stratum and inclusion probability."""

    kind: ReviewItemKind = Field(description="adjudication: one model answer; gold: one gold query.")
    verdict_file: PrefixedSha256 = Field(description="content_sha256 of the frame file holding the record.")
    question_id: int | str
    db_id: str
    model: str | None = None
    stratum: int = Field(ge=0, description="Index into strata.")
    inclusion: float = Field(gt=0, le=1, description="n_h / N_h of its stratum.")

    _qid = field_validator("question_id", mode="before")(normalise_qid)

    def item(self) -> ReviewItem:
        return (self.kind, self.verdict_file, self.model, self.question_id)


class SampleFile(PeopleDocument):
    """A hash-locked stratified sample of verdict and audit records for people to review."""

    kind: Literal["review sample"]
    frame: list[ReviewedFile] = Field(description="The locked verdict files the records were drawn from.")
    frame_size: int = Field(ge=0, description="N: the records of the frame.")
    by: list[str] = Field(description="The strata keys.")
    method: Literal["given", "proportional", "neyman"]
    minimum: int = Field(ge=0)
    seed: int
    strata: list[SampleStratum]
    records: list[SampledRecord]
    content_sha256: PrefixedSha256 | None = None


def validate_sample(data: dict[str, Any], source: str = "sample document") -> SampleFile:
    return parse_document(SampleFile.model_validate, data, source)


def check_sample(doc: SampleFile) -> str | None:
    """The first way the file contradicts itself, or None."""
    unknown = [k for k in doc.by if k not in STRATUM_KEYS]
    if unknown:
        return f"by: {unknown[0]!r} is not a stratum key ({', '.join(STRATUM_KEYS)})"
    if sum(s.size for s in doc.strata) != doc.frame_size:
        return f"frame_size is {doc.frame_size}, but the strata hold {sum(s.size for s in doc.strata)} records"
    framed = {f.content_sha256 for f in doc.frame}
    counts: Counter[int] = Counter()
    seen: set[ReviewItem] = set()
    for i, r in enumerate(doc.records):
        where = f"records.{i}"
        if r.verdict_file not in framed:
            return f"{where}: names verdict file {r.verdict_file}, which is not in the frame"
        if r.stratum >= len(doc.strata):
            return f"{where}: stratum {r.stratum} does not exist"
        if r.item() in seen:
            return f"{where}: repeats question {r.question_id!r}"
        seen.add(r.item())
        s = doc.strata[r.stratum]
        if abs(r.inclusion - s.sample / s.size) > 1e-12:
            return f"{where}: inclusion {r.inclusion} is not its stratum's {s.sample}/{s.size}"
        counts[r.stratum] += 1
    for h, s in enumerate(doc.strata):
        if counts[h] != s.sample or set(s.values) != set(doc.by):
            return f"strata.{h}: says {s.sample} sampled of {s.size}, the records hold {counts[h]}"
    return None


def check_frame(doc: SampleFile, base: str | Path) -> str | None:
    """The first frame file that is missing, changed or unlocked, or None (paths relative to
    ``base``, the sample file's folder, unless absolute); every record must be one of its items."""
    loaded = {}
    for i, f in enumerate(doc.frame):
        where = f"frame.{i} ({f.path})"
        got = read_bound(f, base, where, "the verdict file the sample was drawn from is not there")
        if isinstance(got, str):
            return got
        actual, vdoc = got
        if actual != f.sha256 or vdoc.content_sha256 != f.content_sha256 or vdoc.kind != f.kind:
            return f"{where}: is not the bound {f.kind} file {f.content_sha256}: the frame changed"
        loaded[f.content_sha256] = {
            (getattr(x, "model", None), x.question_id) for x in vdoc.records if not getattr(x, "review_pass", False)
        }
    for i, r in enumerate(doc.records):
        if (r.model, r.question_id) not in loaded[r.verdict_file]:
            return f"records.{i} (question {r.question_id!r}): {r.verdict_file} holds no such item"
    return None


def write_sample(doc: dict[str, Any], path: str | Path) -> Path:
    """Lock and write a sample document (never over an existing file)."""
    data = validate_sample(doc).model_dump(mode="json")
    problem = check_sample(SampleFile.model_validate(data))
    if problem:
        raise VerdictError(f"sample document: {problem}")
    return write_locked(data, path, validate_sample)


def load_sample(path: str | Path) -> SampleFile:
    """Read a sample file: its lock first, then its schema and rules, then its frame; a
    one-line VerdictError (InputError for a file that is not there)."""

    p, data = read_locked_kind(path, SAMPLE_KIND, "review sample file")
    doc = validate_sample(data, str(p))
    problem = check_sample(doc) or check_frame(doc, p.parent)
    if problem:
        raise VerdictError(f"{p}: {problem}; refused")
    return doc
