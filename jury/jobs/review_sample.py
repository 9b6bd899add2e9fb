"""``jury.review_sample``: a seeded stratified sample of verdict and audit records for people
to review, written as a hash-locked sample file (jury/verdicts/sample.py).

The frame is every record of the locked files given (each lock checked first): the
adjudicated answers (review passes left out) and the audited gold queries. Each record's
stratum is its values of the keys named in ``by``:

- ``verdict``: the adjudication verdict; for a gold query ``flagged``, ``not_flagged`` or
  ``undecided``;
- ``flag``: ``credited`` / ``not_credited`` (adjudication), ``flagged`` / ``not_flagged`` (gold);
- ``difficulty``: the gold item's difficulty (``-`` when it has none);
- ``db``: the database; ``model``: the model (``gold`` for a gold query);
- ``agreement``: the panel's agreement: ``unanimous`` (every counted vote one category),
  ``majority`` (a verdict, not unanimous) or ``no_majority`` (unsettled).

Sizes are given per stratum (``size``, keyed by the stratum's values joined with ``/`` in the
order of ``by``, e.g. ``"flagged/simple"``) or a total ``n`` allocated proportionally or by
Neyman (S_h: the standard deviation of the record's 0/1 flag in its stratum), with
:func:`jury.stats.sampling.stratified_sample`'s seed scheme; every sampled record carries its
inclusion probability n_h / N_h.

>>> import jury
>>> jury.review_sample("verdicts/sample.json", audit="verdicts/audit.json", by=["flag"], n=40)  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from jury.errors import InputError
from jury.inputs.io import load_gold, sha256_file
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.review import ReviewSampleOptions, parsed_sizes
from jury.pipeline.project import PathLike, Project, as_paths
from jury.verdicts.lock import utc_now
from jury.verdicts.sample import SAMPLE_KIND, STRATUM_KEYS, SampledRecord, SampleStratum, load_sample, write_sample
from jury.version import __version__, provenance
from jury.vocab import Verdict

SEPARATOR = "/"


def stratum_label(values: Mapping[str, str], by: Sequence[str]) -> str:
    """A stratum's name: its values of the ``by`` keys, joined by :data:`SEPARATOR`."""
    return SEPARATOR.join(values[k] for k in by)


class ReviewSample(Result):
    """The sample file written: its path, the frame's size, the strata (values, N_h, n_h,
    inclusion) and the sampled records."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json", "md")

    path: Path
    frame_size: int
    by: list[str]
    method: str
    seed: int
    strata: list[SampleStratum]
    records: list[SampledRecord]
    content_sha256: str

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        if fmt == "json":
            from jury.results.render import to_json

            return to_json(self.model_dump(mode="json"))
        from jury.results.render import safe

        head = "| stratum | N_h | n_h | inclusion |\n|---|---:|---:|---:|\n" if fmt == "md" else ""
        rows = []
        for s in self.strata:
            label = safe(stratum_label(s.values, self.by))
            inc = f"{s.sample / s.size:.4f}"
            rows.append(
                f"| {label} | {s.size} | {s.sample} | {inc} |"
                if fmt == "md"
                else f"{label:<30} {s.size:>6} {s.sample:>5} {inc:>9}"
            )
        title = (
            f"sampled {len(self.records)} of {self.frame_size} records ({self.method}, seed {self.seed}) "
            f"by {', '.join(self.by)} into {safe(self.path)}\n"
        )
        if fmt != "md":
            head = f"{'stratum':<30} {'N_h':>6} {'n_h':>5} {'inclusion':>9}\n"
        return title + head + "".join(r + "\n" for r in rows)


def _agreement(record: Any, kind: str) -> str:
    counted = {v.category for v in record.votes if v.category and not v.abstained and not v.skipped and not v.inconsistent}
    settled = record.verdict not in (Verdict.NO_MAJORITY, Verdict.UNDECIDED) if kind == "adjudication" else record.decided
    if not settled:
        return Verdict.NO_MAJORITY.value
    return "unanimous" if len(counted) == 1 else "majority"


def frame_records(source: Any, gold: Any) -> list[dict[str, Any]]:
    """Every record of the loaded files with its stratum values (the module doc's keys) and
    its 0/1 flag (Neyman's outcome)."""
    out = []
    for _path, doc in source.verdict_files:
        for r in doc.records:
            if doc.kind == "adjudication":
                if r.review_pass:
                    continue
                item = gold.get(r.question_id) if gold is not None else None
                values = {
                    "verdict": str(r.verdict),
                    "flag": "credited" if r.credited else "not_credited",
                    "difficulty": (item.difficulty if item is not None else None) or "-",
                    "db": r.db_id,
                    "model": r.model,
                    "agreement": _agreement(r, "adjudication"),
                }
                flag = int(r.credited)
                kind, model = "adjudication", r.model
            else:
                verdict = "flagged" if r.flagged else "not_flagged" if r.decided else "undecided"
                values = {
                    "verdict": verdict,
                    "flag": "flagged" if r.flagged else "not_flagged",
                    "difficulty": r.difficulty or "-",
                    "db": r.db_id,
                    "model": "gold",
                    "agreement": _agreement(r, "audit"),
                }
                flag = int(r.flagged)
                kind, model = "gold", None
            out.append(
                {
                    "kind": kind,
                    "verdict_file": doc.content_sha256,
                    "question_id": r.question_id,
                    "db_id": r.db_id,
                    "model": model,
                    "values": values,
                    "flag": flag,
                }
            )
    return out


def review_sample(
    output: PathLike, options: ReviewSampleOptions | None = None, *, project: Project | None = None, **overrides: Any
) -> ReviewSample:
    """Draw a seeded stratified sample of the records of locked verdict and audit files and
    write it as a hash-locked sample file ``output`` (never overwritten).

    Args:
        output: the sample file to write.
        options: a ``ReviewSampleOptions`` (jury.options.review: every option of ``jury review sample``,
            each documented there: ``verdicts`` and ``audit`` (default jury.toml's), the frame;
            ``by``, the strata keys (verdict, flag, difficulty, db, model, agreement); ``n``, the
            total sample size allocated by ``method`` (proportional or neyman), or ``size``, per
            stratum (its values joined with ``/`` in the order of ``by``) its sample size, as
            "STRATUM=N" strings or a mapping; ``minimum``; ``seed``), or none.
        project: the folder's jury.toml defaults (default: the working directory's).
        overrides: ReviewSampleOptions' fields as keyword arguments (``by=``, ``n=``, ...), over ``options``'.

    Raises:
        InputError: an unknown stratum key or stratum, a size beyond its stratum, n beyond the
            frame, an output that exists, before anything is written.
        VerdictError: a frame file unlocked or changed since it was locked.
    """
    from jury.pipeline.outputs import guard_outputs
    from jury.pipeline.review_queue import load_sources

    o = job_options(ReviewSampleOptions, "review_sample", options, overrides)
    project = project or Project.load()
    out = Path(output)
    files, audit_path = as_paths(o.verdicts), project.path("audit", o.audit)
    keys = _checked(o, out)
    guard_outputs([out], [*files, *as_paths(audit_path)], verdict_output=False)
    source = load_sources(files, audit_path)  # every lock checked before anything is read
    frame = frame_records(source, _gold_of(source))
    labels = [stratum_label(r["values"], keys) for r in frame]
    drawn = _draw(o, frame, labels, keys)
    path = write_sample(_sample_document(source, frame, labels, keys, drawn, out.parent), out)
    locked = load_sample(path)
    return ReviewSample(
        path=path,
        frame_size=len(frame),
        by=keys,
        method=drawn.method,
        seed=o.seed,
        strata=list(locked.strata),
        records=list(locked.records),
        content_sha256=str(locked.content_sha256),
        inputs=[*files, *as_paths(audit_path)],
    )


def _checked(o: ReviewSampleOptions, out: Path) -> list[str]:
    """The strata keys, once the request is checked (keys, method, n or sizes, the output), before
    anything is read."""

    keys = list(dict.fromkeys(o.by))
    if not keys:
        raise InputError("by: name at least one stratum key (" + ", ".join(STRATUM_KEYS) + ")")
    for k in keys:
        if k not in STRATUM_KEYS:
            raise InputError(f"by: unknown stratum key {k!r}; choose from {', '.join(STRATUM_KEYS)}")
    if o.method not in ("proportional", "neyman"):
        raise InputError(f"method: {o.method!r} is not proportional or neyman")
    if (o.n is None) == (not o.size):
        raise InputError("give the total --n (allocated) or per-stratum --size STRATUM=N, not both")
    if os.path.lexists(out):
        raise InputError(f"{out}: already exists; a sample file is never overwritten (choose another -o)")
    return keys


def _gold_of(source: Any) -> Any:
    """The gold items of the frame's adjudication files (None: an audit alone)."""

    return load_gold(source.gold_path) if any(d.kind == "adjudication" for _p, d in source.verdict_files) else None


def _draw(o: ReviewSampleOptions, frame: list[dict[str, Any]], labels: list[str], keys: list[str]) -> Any:
    """The seeded stratified draw (jury.stats.sampling.stratified_sample) of the frame's records by
    their stratum labels, every size checked against its stratum first."""
    from jury.stats.sampling import stratified_sample

    sizes = parsed_sizes(o.size)
    given: dict[Hashable, int] | None = None
    if sizes is not None:
        known = dict.fromkeys(labels)
        counts = {lab: labels.count(lab) for lab in known}
        for lab, size in sizes.items():
            if lab not in known:
                raise InputError(
                    f"size: {lab!r} is no stratum of the frame by {SEPARATOR.join(keys)} (strata: {', '.join(known)})"
                )
            if not 0 <= size <= counts[lab]:
                raise InputError(f"size: {lab}={size} is beyond the stratum's {counts[lab]} records")
        given = {lab: size for lab, size in sizes.items()}
    elif o.n is not None and not 0 < o.n <= len(frame):
        raise InputError(f"n: {o.n} is not between 1 and the frame's {len(frame)} records")
    try:
        return stratified_sample(
            labels,
            n=o.n,
            sizes=given,
            method=o.method,  # type: ignore[arg-type]
            values=[r["flag"] for r in frame] if o.method == "neyman" and given is None else None,
            minimum=o.minimum,
            seed=o.seed,
        )
    except ValueError as exc:
        raise InputError(f"sample: {exc}") from None


def _sample_document(
    source: Any, frame: list[dict[str, Any]], labels: list[str], keys: list[str], drawn: Any, folder: Path
) -> dict[str, Any]:
    """The sample file's document: the frame files bound, the strata and every drawn record with its
    inclusion probability."""
    from jury.verdicts.verify import bind_file

    first: dict[Hashable, int] = {lab: i for i, lab in reversed(list(enumerate(labels)))}
    strata = [
        {"values": frame[first[s.key]]["values"] | {}, "size": s.size, "sample": s.sample, "sd": s.sd} for s in drawn.strata
    ]
    for s in strata:
        s["values"] = {k: s["values"][k] for k in keys}
    records = []
    for i, h, p in zip(drawn.indices, drawn.stratum, drawn.inclusion):
        r = frame[int(i)]
        records.append(
            {
                "kind": r["kind"],
                "verdict_file": r["verdict_file"],
                "question_id": r["question_id"],
                "db_id": r["db_id"],
                "model": r["model"],
                "stratum": int(h),
                "inclusion": float(p),
            }
        )
    return {
        "kind": SAMPLE_KIND,
        "jury_version": __version__,
        "provenance": provenance(),
        "created_at": utc_now(),
        "frame": [
            {**bind_file(p, folder, sha256_file(p)).model_dump(), "kind": d.kind, "content_sha256": d.content_sha256}
            for p, d in source.verdict_files
        ],
        "frame_size": len(frame),
        "by": keys,
        "method": drawn.method,
        "minimum": drawn.minimum,
        "seed": drawn.seed,
        "strata": strata,
        "records": records,
    }
