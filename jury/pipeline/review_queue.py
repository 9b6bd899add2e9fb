"""The review queue: which verdicts and gold queries a person should settle, shown as the jury saw them.

Items come from locked verdict files (checked first). Each item is rebuilt from the
files the verdict file binds (gold, runs, databases, found relative to it), executed or
reused from the store, and previewed with the ballot's own ``preview`` and column list,
so a reviewer sees what the jurors saw. An answer that changed since the verdict refuses
the queue, as ``score`` refuses a stale verdict. Each reviewer gets their own order of the
queue and their own answer order per item (``draw_order`` with the reviewer's name), both
derived from hashes, so a restarted server shows the same thing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import InputError
from jury.inputs.run_files import RunFile
from jury.verdicts.documents import AdjudicationFile, AuditFile, FileBinding, VerdictFile
from jury.version import __version__, provenance
from jury.vocab import CATEGORIES, ReviewItemKind, ReviewQueue, Verdict

if TYPE_CHECKING:
    from jury.compare.outcomes import Settings
    from jury.execution.store import Store
    from jury.verdicts.documents import AdjudicationRecord, AuditRecord, Vote

UNSETTLED_VERDICTS = (Verdict.NO_MAJORITY, Verdict.UNDECIDED)


@dataclass
class ReviewItem:
    kind: ReviewItemKind
    verdict_sha256: str
    question_id: Any
    db_id: str
    question: str
    evidence: str
    schema_text: str
    gold_sql: str
    gold_preview: str
    jury_verdict: str
    votes: list[dict[str, str | None]]
    model: str | None = None
    cand_sql: str | None = None
    cand_preview: str | None = None
    answer_key: str | None = None
    gold_key: str | None = None
    db_path: Path | str | None = None  # a SQLite file, or an engine's URL (jury.execution.engine_urls.Databases)

    @property
    def key(self) -> str:
        ident = f"{self.kind}|{self.verdict_sha256}|{self.model or ''}|{self.question_id!r}"
        return hashlib.sha256(ident.encode()).hexdigest()[:16]

    def order_for(self, reviewer: str) -> str:
        """The answer order this reviewer sees (gold_first / candidate_first), drawn like a juror's."""
        from jury.judging.ballots import draw_order

        return draw_order(0, self.question_id, self.model or "", f"review:{reviewer}")


@dataclass
class ReviewSource:
    """The queue and everything a review file binds."""

    items: list[ReviewItem]
    verdict_files: list[tuple[Path, VerdictFile]]  # (path, locked document)
    gold_path: Path
    run_paths: list[RunFile] = field(default_factory=list)
    databases: dict[str, Path] = field(default_factory=dict)
    queues: list[str] = field(default_factory=list)
    timeout_s: float = 30.0
    row_cap: int = 100_000

    @property
    def verdict_shas(self) -> list[str]:
        """The content sha256 of each verdict file (each locked: load_kind checked its lock)."""
        shas = [d.content_sha256 for _p, d in self.verdict_files]
        assert all(sha is not None for sha in shas)
        return [sha for sha in shas if sha is not None]


MAX_SAMPLE = 1_000_000
"""The largest sample:N (a sample larger than the items reviews them all)."""
_SAMPLE_N = re.compile(r"[0-9]{1,7}")  # ASCII digits only: no sign, space, underscore or other script's digits


def parse_queues(values: list[str]) -> tuple[list[str], int | None]:
    """(queue names, sample size) from the queue values; InputError for an unknown one, and
    for a sample:N whose N is not plain ASCII digits from 1 to MAX_SAMPLE."""
    names, sample = [], None
    for v in values:
        if v.startswith(f"{ReviewQueue.SAMPLE}:"):
            n = v.split(":", 1)[1]
            if not _SAMPLE_N.fullmatch(n) or not 1 <= int(n) <= MAX_SAMPLE:
                shown = v if len(v) <= 40 else v[:37] + "..."
                raise InputError(f"queue {shown!r}: sample:N needs a whole number N from 1 to {MAX_SAMPLE:,} (plain digits)")
            names.append(ReviewQueue.SAMPLE.value)
            sample = int(n)
        elif v in (ReviewQueue.UNSETTLED, ReviewQueue.SPLIT, ReviewQueue.FLAGGED):
            names.append(v)
        else:
            shown = v if len(v) <= 40 else v[:37] + "..."
            raise InputError(f"unknown queue {shown!r}; choose unsettled, split, flagged or sample:N")
    return list(dict.fromkeys(names)), sample


def _categories(votes: Iterable[Vote]) -> set[str]:
    return {v.category for v in votes if v.category and not v.abstained and not v.skipped and not v.inconsistent}


def _wanted_answer(record: AdjudicationRecord, queues: list[str]) -> bool:
    if record.review_pass:
        return False
    if ReviewQueue.UNSETTLED in queues and record.verdict in UNSETTLED_VERDICTS:
        return True
    return ReviewQueue.SPLIT in queues and record.verdict in CATEGORIES and len(_categories(record.votes)) > 1


def _wanted_gold(record: AuditRecord, queues: list[str]) -> bool:
    if ReviewQueue.UNSETTLED in queues and not record.decided:
        return True
    if ReviewQueue.FLAGGED in queues and record.flagged:
        return True
    return ReviewQueue.SPLIT in queues and record.decided and len(_categories(record.votes)) > 1


def _sampled(records: Sequence[object], n: int) -> set[int]:
    ranked = sorted(range(len(records)), key=lambda i: hashlib.sha256(repr(records[i]).encode()).hexdigest())
    return set(ranked[:n])


def _votes(record: AdjudicationRecord | AuditRecord) -> list[dict[str, str | None]]:
    return [
        {
            "juror": v.juror,
            "family": v.family,
            "category": v.category or ("abstained" if v.abstained else "skipped" if v.skipped else "—"),
            "defect_type": v.defect_type,
            "reasoning": v.reasoning or v.reason or "",
        }
        for v in record.votes
    ]


def _bound(doc: VerdictFile, path: Path, binding: FileBinding) -> Path:
    from jury.verdicts.verify import locate

    return locate(binding, doc, path.parent)


def load_sources(verdict_paths: list[Path], audit_path: Path | None) -> ReviewSource:
    """The locked files (each lock checked) and the gold, run and database files they bind."""
    from jury.verdicts.lock import load_kind

    docs = [(p, load_kind(p, "adjudication")) for p in verdict_paths]
    audit = (audit_path, load_kind(audit_path, "audit")) if audit_path is not None else None
    every: list[tuple[Path, VerdictFile]] = [*docs, *([audit] if audit else [])]
    if not every:
        raise InputError("nothing to review: give verdict files and/or an audit file (or set audit in jury.toml)")
    first_path, first_doc = every[0]
    gold_path = _bound(first_doc, first_path, first_doc.inputs.gold)
    databases = {db: _bound(d, p, b) for p, d in every for db, b in d.inputs.databases.items()}
    run_paths = list(dict.fromkeys(RunFile(_bound(d, p, b), b.model) for p, d in docs for b in d.inputs.runs))
    return ReviewSource([], every, gold_path, run_paths, databases)


def build_queue(
    verdict_paths: list[Path],
    audit_path: Path | None,
    queues: list[str],
    sample: int | None,
    store: Store,
    settings: Settings,
    db_root: Path | None,
) -> ReviewSource:
    """Load the locked files (locks first), pick their items and rebuild each for display."""
    source = load_sources(verdict_paths, audit_path)
    source.queues = queues
    source.timeout_s, source.row_cap = settings.timeout_s, settings.row_cap
    # a document's kind picks its model (jury.verdicts.documents.validate_document)
    docs = [(p, d) for p, d in source.verdict_files if isinstance(d, AdjudicationFile)]
    audit = next(((p, d) for p, d in source.verdict_files if isinstance(d, AuditFile)), None)
    if db_root is None and source.databases:
        db_root = next(iter(source.databases.values())).parent.parent
    how = _Rebuild(source, sample, db_root, store, settings)
    if docs:
        source.items += _adjudication_items(docs, how)
    if audit is not None:
        source.items += _gold_items(audit, how)
    return source


@dataclass(frozen=True)
class _Rebuild:
    """How build_queue picks a file's items (``source``'s queues, ``sample``) and executes their
    queries again for display (on the databases under ``db_root``, through ``store``, as ``settings`` say)."""

    source: ReviewSource
    sample: int | None
    db_root: Path | None
    store: Store
    settings: Settings


def _adjudication_items(docs: list[tuple[Path, AdjudicationFile]], how: _Rebuild) -> list[ReviewItem]:
    from jury.compare.outcomes import schema_of
    from jury.judging.ballots import preview
    from jury.pipeline.jobs import load_and_evaluate

    gold, records, ev = load_and_evaluate(how.source.gold_path, how.source.run_paths, how.db_root, how.store, how.settings)
    pairs = {(p.model, p.question_id): p for p in ev.pairs}
    sql_of = {(r.model, r.question_id): r.sql for r in records}
    items: list[ReviewItem] = []
    for path, doc in docs:
        assert doc.content_sha256 is not None  # load_kind checked the file's lock
        recs = [r for r in doc.records if not r.review_pass]
        picked = _sampled(recs, how.sample) if how.sample else set()
        for i, r in enumerate(recs):
            if i not in picked and not _wanted_answer(r, how.source.queues):
                continue
            pair = pairs.get((r.model, r.question_id))
            if pair is None or pair.pred_key is None or pair.gold_key is None or (r.answer_key and r.answer_key != pair.pred_key):
                raise InputError(
                    f"{path}: model {r.model!r} question {r.question_id!r}: the answer judged is not the one in the run "
                    "files now; review the verdicts of the current run"
                )
            item, sql = gold[r.question_id], sql_of[(r.model, r.question_id)] or ""
            db = ev.databases.get(item.db_id)
            items.append(
                ReviewItem(
                    ReviewItemKind.ADJUDICATION,
                    doc.content_sha256,
                    r.question_id,
                    r.db_id,
                    item.question,
                    item.evidence,
                    schema_of(item, ev.databases, item.sql, sql),
                    item.sql,
                    preview(ev.results[pair.gold_key]),
                    str(r.verdict),
                    _votes(r),
                    model=r.model,
                    cand_sql=sql,
                    cand_preview=preview(ev.results[pair.pred_key]),
                    answer_key=pair.pred_key,
                    gold_key=pair.gold_key,
                    db_path=db[0] if db else None,
                )
            )
    return items


def _gold_items(audit: tuple[Path, AuditFile], how: _Rebuild) -> list[ReviewItem]:
    from jury.compare.outcomes import execute_gold, gold_result_key, resolve_databases, schema_of
    from jury.inputs.io import load_gold
    from jury.judging.ballots import preview

    path, doc = audit
    gold_path, store = how.source.gold_path, how.store
    assert doc.content_sha256 is not None  # load_kind checked the file's lock
    gold = load_gold(gold_path)
    recs = list(doc.records)
    picked = _sampled(recs, how.sample) if how.sample else set()
    chosen = [r for i, r in enumerate(recs) if i in picked or _wanted_gold(r, how.source.queues)]
    missing = [r.question_id for r in chosen if r.question_id not in gold]
    if missing:
        raise InputError(f"{path}: audits question {missing[0]!r}, which is not in the gold file {gold_path}")
    golds = [gold[r.question_id] for r in chosen]
    databases = resolve_databases([g for g in golds if not g.has_recording], how.db_root, store)
    results = execute_gold(golds, databases, store, how.settings)
    items: list[ReviewItem] = []
    for r, g in zip(chosen, golds):
        verdict = "flagged" if r.flagged else "not_flagged" if r.decided else "undecided"
        db = databases.get(g.db_id)
        items.append(
            ReviewItem(
                ReviewItemKind.GOLD,
                doc.content_sha256,
                r.question_id,
                r.db_id,
                g.question,
                g.evidence,
                schema_of(g, databases, g.sql),
                g.sql,
                preview(results[g.question_id]),
                verdict,
                _votes(r),
                gold_key=gold_result_key(g, databases),
                db_path=db[0] if db else None,
            )
        )
    return items


def reviewer_order(items: list[ReviewItem], reviewer: str) -> list[ReviewItem]:
    """The queue in this reviewer's own order (a hash of reviewer and item: stable across restarts)."""
    return sorted(items, key=lambda it: hashlib.sha256(f"{reviewer}|{it.key}".encode()).hexdigest())


def run_corrected(item: ReviewItem, sql: str, timeout_s: float, row_cap: int) -> tuple[str, dict[str, str | int | None]]:
    """Execute a corrected gold query read-only with the executor's timeout, on the question's
    database where it is (a SQLite file or an engine: jury.execution.engines.execute_any):
    (preview, result summary)."""
    from jury.execution.engines import execute_any
    from jury.judging.ballots import preview

    if item.db_path is None:
        raise InputError(f"question {item.question_id!r}: its database is not at hand, so a corrected query cannot run")
    result = execute_any(item.db_path, sql, timeout_s=timeout_s, row_cap=row_cap)
    summary: dict[str, str | int | None] = {
        "status": result.status,
        "row_count": result.row_count,
        "result_sha256": result.result_sha256,
        "error": result.error,
    }
    return preview(result), summary


def review_head(source: ReviewSource, folder: Path, sample: int | None) -> dict[str, Any]:
    """What a review file binds: the reviewed verdict files and their inputs, relative to ``folder``."""
    from jury.inputs.io import sha256_file
    from jury.verdicts.lock import utc_now
    from jury.verdicts.verify import bind_file, bind_run

    return {
        "jury_version": __version__,
        "provenance": provenance(),
        "created_at": utc_now(),
        "supersedes": None,
        "inputs": {
            "gold": bind_file(source.gold_path, folder).model_dump(),
            "runs": [bind_run(p, folder).model_dump() for p in source.run_paths],
            "databases": {db: bind_file(p, folder).model_dump() for db, p in sorted(source.databases.items())},
        },
        "reviewed": [
            {**bind_file(p, folder, sha256_file(p)).model_dump(), "kind": d.kind, "content_sha256": d.content_sha256}
            for p, d in source.verdict_files
        ],
        "settings": {"queues": source.queues, "sample": sample},
    }
