"""Execute gold and candidate SQL (cached, in parallel) and give every (model, question) one outcome.

Outcomes, in order of precedence:
``gold_error`` (the gold query itself fails: excluded from every denominator),
``misrouted`` (the model chose another database), ``missing`` (no SQL),
``timeout``, ``error`` (the candidate did not execute), ``match`` (the chosen
comparator accepts), ``near_miss`` (row-set overlap >= threshold) and ``mismatch``
(overlap below the threshold: eligible for the jury).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

from jury.compare import comparators as compare
from jury.compare.coverage import Coverage, apply_missing_rule
from jury.compare.gold_orders import gold_orders
from jury.errors import DatabaseMissing, InputError, PluginError
from jury.execution import engines
from jury.execution import rows as row_hashing
from jury.execution import sqlite as sql_execute
from jury.execution.batches import ExecutionWriter
from jury.execution.engine_urls import Databases, DatabaseURLs
from jury.execution.schema import SchemaReader, describe_columns
from jury.execution.store import Store, execution_key
from jury.inputs.io import canonical_v1, database_path, require_database
from jury.inputs.records import ExecResult, GoldItem, QuestionId, RunRecord
from jury.progress import Progress
from jury.vocab import (
    DECIDING_COMPARATORS,
    DEFAULT_COMPARATOR,
    DEFAULT_EXECUTOR,
    DEFAULT_GOLD_ERRORS,
    DEFAULT_MISSING,
    DEFAULT_NEAR_MISS,
    DEFAULT_ROW_CAP,
    DEFAULT_TIMEOUT_S,
    Comparator,
    ExecutorName,
    GoldErrorRule,
    MissingRule,
    Outcome,
)

if TYPE_CHECKING:
    from jury.compare.reruns import RerunRecord
    from jury.execution.backends import Encoded


class SettingsDescription(TypedDict):
    """The settings that decide an outcome (:meth:`Settings.describe`)."""

    comparator: str
    near_miss_threshold: float
    timeout_s: float
    row_cap: int
    normalize: compare.NormalizeDescription
    comparator_plugin: NotRequired[dict[str, str | None]]  # a third-party comparator's (jury.plugins.Plugin.describe)


#: What a comparison is shared by: (gold key, prediction key, order matters, spider2's extras as text).
CompareKey = tuple[str, str, bool, str | None]
#: A comparison of one gold and one predicted result: (each comparator's decision, the overlap).
Comparison = tuple[Mapping[str, bool | None], float | None]


@dataclass
class Settings:
    """How ``evaluate`` executes and compares: what decides an outcome, and where queries run.

    Attributes:
        comparator: the comparator that decides a match (``strict``, ``bird``, ``relaxed``, ...).
        near_miss: the overlap at or above which a mismatch is a near miss, in [0, 1].
        timeout_s: each query's time limit, in seconds.
        row_cap: rows kept of a result; beyond it only its digests are.
        workers: parallel executions (default: the CPU count).
        options: the normalisations a comparator applies (case folding, float digits, ...).
        executor: where executions run: ``local`` or ``ray``.
        ray_address: the Ray cluster's address (``executor="ray"``).
        db_urls: databases on PostgreSQL, MySQL/MariaDB or DuckDB by db_id; the rest are
            SQLite files under the db_root.
        missing: what an unanswered gold question counts as: ``exclude`` or ``fail``.
        gold_errors: what a question whose gold query fails counts as: ``exclude`` (out of every
            denominator) or ``fail`` (wrong for every model: BIRD's rule).
        timeout_retries: a prediction that times out is run again up to this many times.
        same_window: reuse nothing from the store: gold and predictions executed in this run.

    Every value is checked on construction (an InputError names the bad one).
    """

    comparator: str = DEFAULT_COMPARATOR
    near_miss: float = DEFAULT_NEAR_MISS
    timeout_s: float = DEFAULT_TIMEOUT_S
    row_cap: int = DEFAULT_ROW_CAP
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    options: compare.NormalizeOptions = field(default_factory=compare.NormalizeOptions)
    # Where executions run (jury.execution.backends). Not in describe(): the same code runs
    # every query wherever it runs, so a verdict is the same job whichever executor ran it.
    executor: str = DEFAULT_EXECUTOR
    ray_address: str | None = None
    # Databases on PostgreSQL, MySQL/MariaDB or DuckDB by db_id (jury.execution.engines); the
    # rest are SQLite files under db_root. Not in describe(): the engine and the database's
    # fingerprint enter every execution key and verdict binding instead.
    db_urls: DatabaseURLs = field(default_factory=DatabaseURLs)
    missing: str = DEFAULT_MISSING  # jury.vocab.MissingRule; not in describe(): a verdict is alike under either
    gold_errors: str = DEFAULT_GOLD_ERRORS  # jury.vocab.GoldErrorRule; not in describe(), as missing
    # Spider 2.0-AIFunc's protocol (jury.compare.reruns); not in describe(): how often a query
    # ran, not what a result is compared with
    timeout_retries: int = 0  # a prediction that times out is run again up to this many times
    same_window: bool = False  # nothing reused from the store: gold and predictions executed in this run

    def __post_init__(self) -> None:
        compare.get_comparator(self.comparator)
        if self.missing not in tuple(MissingRule):  # fail or exclude
            raise InputError(f"unknown missing rule {self.missing!r}; choose one of: {', '.join(MissingRule)}")
        if self.gold_errors not in tuple(GoldErrorRule):  # fail or exclude
            raise InputError(f"unknown gold-errors rule {self.gold_errors!r}; choose one of: {', '.join(GoldErrorRule)}")
        if self.executor not in tuple(ExecutorName):
            raise InputError(f"unknown executor {self.executor!r}; choose one of: {', '.join(ExecutorName)}")
        if not 0.0 <= self.near_miss <= 1.0:
            raise InputError(f"near-miss threshold must be in [0, 1], got {self.near_miss}")
        if self.timeout_s <= 0:
            raise InputError(f"timeout must be positive, got {self.timeout_s}")
        if self.row_cap < 1:
            raise InputError(f"row cap must be at least 1, got {self.row_cap}")
        if self.workers < 1:
            raise InputError(f"workers must be at least 1, got {self.workers}")
        if self.timeout_retries < 0:
            raise InputError(f"timeout retries must be zero or more, got {self.timeout_retries}")

    def describe(self) -> SettingsDescription:
        """The settings that decide an outcome, as recorded in a score's and a verdict file's settings."""
        described: SettingsDescription = {
            "comparator": self.comparator,
            "near_miss_threshold": self.near_miss,
            "timeout_s": self.timeout_s,
            "row_cap": self.row_cap,
            "normalize": self.options.describe(),
        }
        plugin = compare.comparator_plugin(self.comparator)  # a third-party comparator: whose, which version
        if plugin is not None:
            described["comparator_plugin"] = plugin.describe()
        return described


@dataclass(slots=True)
class PairResult:
    """The scored answer of one model to one question.

    A slotted dataclass, not a pydantic model: an evaluation holds one per (model, question) (27k
    at BIRD's size) and the model's instance dict and fields-set were two thirds of each one's
    memory (issue 46); it is built from validated records and never validated itself."""

    model: str
    question_id: QuestionId
    db_id: str
    chosen_db_id: str | None
    routed: bool
    outcome: str
    overlap: float | None = None
    comparator_matches: dict[str, bool | None] = field(default_factory=dict)
    order_matters: bool = False
    gold_key: str | None = None
    pred_key: str | None = None
    error: str | None = None
    families: list[str] = field(default_factory=list)
    recorded: bool = False  # the outcome is the run record's recorded `match`, not a comparison here
    gold_error_counted: bool = False  # a gold error under gold_errors="fail": a wrong answer, in every denominator

    @property
    def excluded(self) -> bool:
        """Out of every denominator: a gold error under the default rule (Settings.gold_errors).
        The one place that decides it; every column, interval, rank and side metric asks here."""
        return self.outcome == Outcome.GOLD_ERROR and not self.gold_error_counted


def recorded_key(obj: GoldItem | RunRecord) -> str:
    """The key of a result recorded elsewhere: a hash of the recording itself (never a
    database's), so a changed recording is a changed answer to every verdict that bound it."""
    kind, payload = ("result", obj.result) if obj.result is not None else ("recorded", obj.recorded)
    assert payload is not None
    body = payload.model_dump(mode="json", exclude={"match"} if kind == "recorded" else set())
    return "recorded-" + hashlib.sha256(canonical_v1({kind: body})).hexdigest()


def gold_result_key(item: GoldItem, databases: Databases) -> str | None:
    """The key of a gold item's result: its recording's, else its execution's on the database
    given (None when that database is not among `databases`)."""
    if item.has_recording:
        return recorded_key(item)
    db = databases.get(item.db_id)
    return execution_key(db[1], item.sql) if db is not None else None


def schema_of(item: GoldItem, databases: Databases, *sqls: str, reader: SchemaReader | None = None) -> str:
    """The schema text a ballot shows: the item's own `schema_text` when it has one, else the
    columns of the tables the queries touch, read from its database (through ``reader``, the
    job's SchemaReader, when given: each SQL text parsed and each database opened once)."""
    if item.schema_text is not None:
        return item.schema_text
    if item.db_id in databases:
        if reader is not None:
            return reader.describe_columns(databases[item.db_id][0], *sqls)
        return describe_columns(databases[item.db_id][0], *sqls)
    return "(no schema available: the database is not here and the gold item has no schema_text)"


def recorded_result(obj: GoldItem | RunRecord) -> ExecResult:
    """An ExecResult of what `obj` recorded: a structured result is hashed as an executed one
    (so every comparator decides it); a preview is shown to jurors and compares with nothing."""
    if obj.result is not None:
        rec = obj.result
        if rec.error is not None:
            return ExecResult(status="error", error=rec.error, columns=rec.columns)
        rows = [tuple(r) for r in rec.rows]
        return ExecResult(
            status="ok",
            columns=rec.columns,
            rows=rows,
            row_count=len(rows),
            result_sha256=row_hashing.result_hash(rows),
            ordered_sha256=row_hashing.ordered_hash(rows),
        )
    assert obj.recorded is not None
    return ExecResult(status="ok", recorded_preview=obj.recorded.preview)


@dataclass
class Evaluation:
    pairs: list[PairResult]
    gold_errors: dict[QuestionId, str]
    settings: Settings
    databases: Databases  # db_id -> (path or URL, fingerprint)
    executed: int = 0  # executions actually run (not served from the store)
    # result key -> its rows; jury.adjudicate empties it once its ballots are built (they hold what they show)
    results: dict[str, ExecResult] = field(default_factory=dict, repr=False)
    recorded_pairs: int = 0  # pairs scored on a result recorded elsewhere (run record or gold item)
    coverage: dict[str, Coverage] = field(default_factory=dict)  # model -> its coverage (jury.compare.coverage)
    soft_f1: dict[tuple[str, QuestionId], float | None] | None = None  # (model, question_id) -> Soft-F1 (jury.compare.soft_f1)
    reruns: dict[str, RerunRecord] = field(default_factory=dict)  # prediction key -> {reruns, status} (jury.compare.reruns)
    input_notes: list[str] = field(default_factory=list)  # what reading the runs found, said by every output (repeats)

    def models(self) -> list[str]:
        return list(dict.fromkeys(p.model for p in self.pairs))


def _comparator_match(
    name: str,
    gold: ExecResult,
    pred: ExecResult,
    fn: Callable[..., bool],
    order_matters: bool,
    opts: compare.NormalizeOptions,
    extras: compare.Spider2Arguments | None = None,
) -> bool | None:
    """Whether comparator ``name`` accepts; None when a result over the row cap leaves it undecided.

    Over the cap only the digests of the full results are known: the set digest decides
    ``bird`` (and ``strict`` when order does not matter), the ordered list digest decides
    ``strict`` when it does. Equal digests prove a match under every comparator that
    accepts equal results (``relaxed``, ``subset``, any normalisation); a difference
    decides nothing for those, so the answer is None (undecided), never a guess.

    ``bird`` on an engine's results: the rows as the driver returned them (compare.bird_results).
    """
    if name == Comparator.BIRD:
        decided = compare.bird_results(gold, pred, opts)
        if decided is not None:
            return decided
    if not (gold.truncated or pred.truncated):
        more: Mapping[str, object] = extras or {}
        return bool(fn(gold.rows, pred.rows, order_matters=order_matters, options=opts, **more))
    if gold.ordered_sha256 is None or pred.ordered_sha256 is None:
        return None
    same_set = gold.result_sha256 == pred.result_sha256
    same_list = gold.ordered_sha256 == pred.ordered_sha256
    if name in (Comparator.BIRD, Comparator.BIRD_NORMALIZED):
        proven = same_set
    elif name in (Comparator.STRICT, Comparator.RELAXED):  # relaxed accepts whatever strict accepts
        proven = same_list if order_matters else same_set
    else:  # subset, spider2: the very same rows in the same order
        proven = same_list
    if proven:
        return True
    if name in (Comparator.BIRD, Comparator.BIRD_NORMALIZED, Comparator.STRICT) and not opts.active:
        return False
    return None


def _undecided_error(pairs: list[PairResult], row_counts: Mapping[str, int], settings: Settings) -> InputError:
    rows = max(max(_row_count(row_counts, p.gold_key), _row_count(row_counts, p.pred_key)) for p in pairs)
    name = settings.comparator
    opts = settings.options
    with_opts = " with --casefold/--float-digits" if opts.active else ""
    n = len(pairs)
    return InputError(
        f"{n} (model, question) pair{'s' if n != 1 else ''} (first: model {pairs[0].model!r}, question "
        f"{pairs[0].question_id!r}) cannot be decided by the {name} comparator{with_opts}: a result has "
        f"more rows than the row cap ({settings.row_cap:,}; largest {rows:,}) and only exact digests are "
        f"kept beyond it; raise --row-cap to at least {rows} or use --comparator bird or strict "
        "without --casefold/--float-digits"
    )


def evaluate(
    gold: dict[QuestionId, GoldItem],
    records: list[RunRecord],
    db_root: str | Path | None,
    store: Store,
    settings: Settings | None = None,
    progress: Progress | None = None,
    *,
    keep: Callable[[PairResult], bool] | None = None,
) -> Evaluation:
    """Execute every gold and candidate query (or reuse the store's results) and compare them.

    Each (model, question) pair gets an outcome (match, mismatch, near miss, error, timeout,
    missing, misrouted, gold error) and the verdict of every comparator; queries already in the
    store under these settings are not run again. An InputError names a question the gold file
    does not have or a db_id with no database.

    Args:
        gold: the gold items by question_id (``jury.load_gold``).
        records: the run records (``jury.load_runs``).
        db_root: the folder of SQLite databases (``<db_root>/<db_id>/<db_id>.sqlite``); None when
            every database is on an engine or every result is recorded.
        store: the open store that caches executions.
        settings: comparator, timeout, row cap, workers, executor, engines, missing rule
            (default: ``Settings()``).
        progress: called with (done, total) as executions finish.
        keep: which pairs' results (their gold's and their answer's) ``results`` keeps; None: all.
            The questions are compared CHUNK_QUESTIONS at a time, each chunk's results decoded
            then, so the rows of the results not kept are never all in memory at once (issue 46).

    Returns:
        An Evaluation: the pairs' outcomes, the gold errors, the databases used (path and
        sha256) and how many queries were executed by this call.
    """
    settings = settings or Settings()
    _check_question_ids(gold, records)
    records, coverage = apply_missing_rule(gold, records, settings.missing)
    qids = list(dict.fromkeys(r.question_id for r in records))
    _check_db_ids(gold, records, db_root, settings)
    executes = [gold[q] for q in qids if not gold[q].has_recording]  # a database: only for what is not recorded
    executes += [gold[r.question_id] for r in records if _answered(r, gold[r.question_id]) and not r.has_recording]
    keys = _Keys(resolve_databases(executes, db_root, store, settings.db_urls))
    preds = [keys.pred(r, gold[r.question_id]) for r in records]  # each record's, once (issue 46)
    jobs, results = _jobs_and_recorded_results(gold, qids, records, keys, preds)
    rerun = list(jobs) if settings.same_window else ()
    executed = run_executions(jobs, keys.databases, store, settings, progress, rerun=rerun)
    reruns: dict[str, RerunRecord] = {}
    if settings.timeout_retries:
        reruns = _rerun_timeouts(gold, records, jobs, keys, store, settings)
        executed += sum(r["reruns"] for r in reruns.values())
    recorded = {k: capped(v, settings.row_cap) for k, v in results.items()}
    pairs, gold_errors, results, row_counts = _compare_in_chunks(
        gold, qids, records, preds, keys, recorded, store, settings, keep
    )
    results = {k: results[k] for k in (*recorded, *jobs) if k in results}  # recorded ones first, then those run, as ever
    undecided = [p for p in pairs if p.comparator_matches.get(settings.comparator, False) is None]
    if undecided:
        raise _undecided_error(undecided, row_counts, settings)
    recorded_pairs = sum(p.recorded for p in pairs)
    return Evaluation(pairs, gold_errors, settings, keys.databases, executed, results, recorded_pairs, coverage, reruns=reruns)


def _rerun_timeouts(
    gold: dict[QuestionId, GoldItem],
    records: list[RunRecord],
    jobs: dict[str, tuple[str, str]],
    keys: _Keys,
    store: Store,
    settings: Settings,
) -> dict[str, RerunRecord]:
    """Spider 2.0-AIFunc's re-runs: each prediction that timed out run again, up to
    ``settings.timeout_retries`` times (jury.compare.reruns' record, by prediction key)."""
    from jury.compare.reruns import rerun_timeouts

    pred_jobs = {
        keys.execution(gold[r.question_id].db_id, r.sql): None
        for r in records
        if _answered(r, gold[r.question_id]) and not r.has_recording and r.sql
    }

    def run(some: dict[str, tuple[str, str]], rerun: list[str]) -> int:
        return run_executions(some, keys.databases, store, settings, rerun=rerun)

    return rerun_timeouts(list(pred_jobs), jobs, store, settings.timeout_retries, run)


def _check_question_ids(gold: dict[QuestionId, GoldItem], records: list[RunRecord]) -> None:
    unknown = [q for q in dict.fromkeys(r.question_id for r in records) if q not in gold]
    if unknown:
        raise InputError(f"unknown question_id {unknown[0]!r} (not in the gold file)")


def _check_db_ids(
    gold: dict[QuestionId, GoldItem], records: list[RunRecord], db_root: str | Path | None, settings: Settings
) -> None:
    """A record's chosen db_id names a database of the gold file, a database file or an engine's."""
    known_dbs = {g.db_id for g in gold.values()}
    for r in records:
        if (
            r.db_id is not None
            and r.db_id not in known_dbs
            and (db_root is None or not database_path(db_root, r.db_id).is_file())
            and settings.db_urls.url_for(r.db_id) is None
        ):
            raise InputError(
                f"model {r.model!r}, question {r.question_id!r}: db_id {r.db_id!r} names "
                "no database of the gold file and has no database file"
            )


def _answered(r: RunRecord, g: GoldItem) -> bool:
    """The record has SQL to run, on its question ``g``'s database (a misrouted one is not run)."""
    return r.sql is not None and bool(r.sql.strip()) and (r.db_id is None or r.db_id == g.db_id)


class _Keys:
    """Execution keys over the resolved databases (db_id -> (path or URL, fingerprint))."""

    def __init__(self, databases: Databases) -> None:
        self.databases = databases
        self._known: dict[tuple[str, str], str] = {}  # each key hashed once, not once per use (issue 46)
        self._gold: dict[QuestionId, str] = {}  # the gold key of each question, hashed once (issue 46)

    def execution(self, db_id: str, sql: str) -> str:
        key = self._known.get((db_id, sql))
        if key is None:
            key = self._known[db_id, sql] = execution_key(self.databases[db_id][1], sql)
        return key

    def gold(self, g: GoldItem) -> str:
        """gold_result_key of a gold item of the evaluation (one per question_id)."""
        key = self._gold.get(g.question_id)
        if key is None:
            key = gold_result_key(g, self.databases)
            assert key is not None  # resolve_databases found every database an unrecorded gold needs
            self._gold[g.question_id] = key
        return key

    def pred(self, r: RunRecord, g: GoldItem) -> str | None:
        """The key of a record's answer to its question ``g`` (its recording's, else its execution's
        on g's database), or None when it is no answer to run (_answered)."""
        if not _answered(r, g):
            return None
        assert r.sql is not None  # _answered
        return recorded_key(r) if r.has_recording else self.execution(g.db_id, r.sql)


def _jobs_and_recorded_results(
    gold: dict[QuestionId, GoldItem],
    qids: list[QuestionId],
    records: list[RunRecord],
    keys: _Keys,
    preds: list[str | None],
) -> tuple[dict[str, tuple[str, str]], dict[str, ExecResult]]:
    """(the executions to run: key -> (db_id, sql), the recorded results by key); ``preds``: each
    record's _Keys.pred."""
    jobs: dict[str, tuple[str, str]] = {}
    results: dict[str, ExecResult] = {}
    for q in qids:
        if gold[q].has_recording:
            results[keys.gold(gold[q])] = recorded_result(gold[q])
        else:
            jobs.setdefault(keys.execution(gold[q].db_id, gold[q].sql), (gold[q].db_id, gold[q].sql))
    for r, key in zip(records, preds, strict=True):
        if key is None:
            continue
        if r.has_recording:
            results[key] = recorded_result(r)
        else:
            assert r.sql is not None
            jobs.setdefault(key, (gold[r.question_id].db_id, r.sql))
    return jobs, results


#: Questions compared at once by ``evaluate``: only their results are decoded from the store (issue 46).
CHUNK_QUESTIONS = 50


def _compare_in_chunks(
    gold: dict[QuestionId, GoldItem],
    qids: list[QuestionId],
    records: list[RunRecord],
    preds: list[str | None],
    keys: _Keys,
    recorded: dict[str, ExecResult],
    store: Store,
    settings: Settings,
    keep: Callable[[PairResult], bool] | None,
) -> tuple[list[PairResult], dict[QuestionId, str], dict[str, ExecResult], dict[str, int]]:
    """(the pairs in the records' order, the gold errors, the results kept, the row count of
    every result of a pair the comparator leaves undecided), comparing CHUNK_QUESTIONS questions
    at a time: a chunk's stored results are decoded for it, and after it only those of the pairs
    ``keep`` wants (all with None) stay; the others are decoded again by a later chunk that
    shares them (the same SQL text on the same database). ``preds``: each record's _Keys.pred."""
    by_question: dict[QuestionId, list[int]] = {}
    for i, r in enumerate(records):
        by_question.setdefault(r.question_id, []).append(i)
    placed: list[PairResult | None] = [None] * len(records)
    orders = gold_orders(store, [gold[q].sql for q in qids if gold[q].order_matters is None])
    compared: dict[CompareKey, Comparison] = {}  # shared by the chunks: it holds no rows
    gold_errors: dict[QuestionId, str] = {}
    kept: dict[str, ExecResult] = {}
    row_counts: dict[str, int] = {}
    for start in range(0, len(qids), CHUNK_QUESTIONS):
        chunk = qids[start : start + CHUNK_QUESTIONS]
        at = [i for q in chunk for i in by_question[q]]
        chunk_records, chunk_preds = [records[i] for i in at], [preds[i] for i in at]
        wanted = [keys.gold(gold[q]) for q in chunk]
        wanted = list(dict.fromkeys([*wanted, *(k for k in chunk_preds if k is not None)]))
        held = {**recorded, **kept}
        stored = _executed_all(store, [k for k in wanted if k not in held])
        results = {k: held[k] if k in held else capped(stored[k], settings.row_cap) for k in wanted}
        del held, stored
        for q in chunk:
            res = results[keys.gold(gold[q])]
            if not res.ok:
                gold_errors[q] = f"{res.status}: {res.error}"
        chunk_pairs = _compared_pairs(gold, chunk_records, chunk_preds, keys, results, gold_errors, orders, compared, settings)
        for i, pair in zip(at, chunk_pairs, strict=True):
            placed[i] = pair
            if pair.comparator_matches.get(settings.comparator, False) is None:
                assert pair.gold_key is not None and pair.pred_key is not None  # a compared pair has both
                row_counts[pair.gold_key] = results[pair.gold_key].row_count
                row_counts[pair.pred_key] = results[pair.pred_key].row_count
            if keep is None or keep(pair):
                kept.update((k, results[k]) for k in (pair.gold_key, pair.pred_key) if k is not None and k in results)
    pairs = [p for p in placed if p is not None]
    assert len(pairs) == len(records)  # every record's question is in one chunk
    return pairs, gold_errors, kept, row_counts


def _compared_pairs(
    gold: dict[QuestionId, GoldItem],
    records: list[RunRecord],
    preds: list[str | None],
    keys: _Keys,
    results: dict[str, ExecResult],
    gold_errors: dict[QuestionId, str],
    orders: dict[str, bool],
    compared: dict[CompareKey, Comparison],
    settings: Settings,
) -> list[PairResult]:
    """One PairResult per record: its keys (``preds``: each record's _Keys.pred), and its outcome
    under every deciding comparator.
    ``orders``: gold_orders' answer for each gold SQL text whose item does not say; ``compared``:
    the comparisons made so far, (gold key, pred key, order matters, extras) -> (matches, overlap)."""
    compare.get_comparator(settings.comparator)
    side: dict[str, Callable[..., bool]] = {name: compare.get_comparator(name) for name in DECIDING_COMPARATORS}
    # A comparator chosen that is no side column (spider2) decides the chosen outcome only.
    side.setdefault(settings.comparator, compare.get_comparator(settings.comparator))
    pairs: list[PairResult] = []
    order_cache: dict[QuestionId, bool] = {}
    memo = _RowsMemo(all(compare.SHARED.get(name) is f for name, f in side.items()) and not settings.options.active)
    for r, pred_key in zip(records, preds, strict=True):
        g = gold[r.question_id]
        if r.question_id not in order_cache:
            order_cache[r.question_id] = g.order_matters if g.order_matters is not None else orders[g.sql]
        # every value is of its field's type already (the records and gold items are validated)
        pair = PairResult(
            model=r.model,
            question_id=r.question_id,
            db_id=g.db_id,
            chosen_db_id=r.db_id,
            routed=r.db_id is None or r.db_id == g.db_id,
            outcome=Outcome.MISMATCH,
            order_matters=order_cache[r.question_id],
            gold_key=keys.gold(g),
            pred_key=pred_key,
            families=r.families(),
        )
        if r.recorded is not None and pair.pred_key is not None and r.question_id not in gold_errors:
            _recorded_outcome(pair, bool(r.recorded.match), side)
        else:
            if pair.pred_key is not None and r.question_id not in gold_errors:
                _check_comparable(pair, g, results)
            _classify(pair, r, results, gold_errors, side, settings, compared, g, memo)
        pair.recorded = pair.recorded or (pair.pred_key is not None and (r.has_recording or g.has_recording))
        pairs.append(pair)
    return pairs


def _recorded_outcome(pair: PairResult, match: bool, side: Iterable[str]) -> None:
    """The run record's recorded outcome stands for every comparator: jury has only a preview
    of its result, so it can neither recompute it nor measure an overlap."""
    pair.recorded = True
    pair.comparator_matches = {name: match for name in side}
    pair.outcome = Outcome.MATCH if match else Outcome.MISMATCH


def _check_comparable(pair: PairResult, g: GoldItem, results: dict[str, ExecResult]) -> None:
    assert pair.gold_key is not None and pair.pred_key is not None
    gold_res, pred_res = results[pair.gold_key], results[pair.pred_key]
    for side_name, res in (("gold item", gold_res), ("answer", pred_res)):
        if res.recorded_preview is not None:
            raise InputError(
                f"model {pair.model!r}, question {pair.question_id!r}: the {side_name}'s result is known only as "
                "recorded preview text, which cannot be compared with a result; give the run record "
                "`recorded: {match, preview}` (the recorded outcome) or a structured `result`"
            )


def _classify(
    pair: PairResult,
    r: RunRecord,
    results: dict[str, ExecResult],
    gold_errors: dict[QuestionId, str],
    side: dict[str, Callable[..., bool]],
    settings: Settings,
    compared: dict[CompareKey, Comparison],
    g: GoldItem,
    rows_memo: _RowsMemo,
) -> None:
    if pair.question_id in gold_errors:
        pair.outcome, pair.error = Outcome.GOLD_ERROR, gold_errors[pair.question_id]
        if settings.gold_errors == GoldErrorRule.FAIL:  # BIRD's rule: the row scores 0 under every comparator
            pair.gold_error_counted = True
            pair.comparator_matches = {name: False for name in side}
        return
    if not pair.routed:
        pair.outcome = Outcome.MISROUTED
        return
    if r.sql is None or not r.sql.strip():
        pair.outcome = Outcome.MISSING
        pair.comparator_matches = {name: False for name in side}
        return
    assert pair.gold_key is not None and pair.pred_key is not None  # an answered, routed pair has both
    gold_res, pred_res = results[pair.gold_key], results[pair.pred_key]
    if not pred_res.ok:
        pair.outcome, pair.error = Outcome(pred_res.status), pred_res.error
        pair.comparator_matches = {name: False for name in side}
        return
    opts, om = settings.options, pair.order_matters
    # Models that wrote the same SQL share the comparison (comparators are pure functions of the results).
    # spider2 also reads the gold item's `spider2` options (condition_cols, variants).
    extras: compare.Spider2Arguments | None = (
        {**compare.spider2_extras(g), "gold_width": len(gold_res.columns) or None} if Comparator.SPIDER2 in side else None
    )
    memo_key: CompareKey = (pair.gold_key, pair.pred_key, om, repr(extras) if extras else None)
    memo = compared.get(memo_key)
    if memo is None:
        memo = compared[memo_key] = _comparison(pair, gold_res, pred_res, side, opts, extras, rows_memo)
    pair.comparator_matches, pair.overlap = dict(memo[0]), memo[1]
    if pair.comparator_matches[settings.comparator]:
        pair.outcome = Outcome.MATCH
    elif pair.overlap is not None and pair.overlap >= settings.near_miss:
        pair.outcome = Outcome.NEAR_MISS
    else:
        pair.outcome = Outcome.MISMATCH


def _comparison(
    pair: PairResult,
    gold_res: ExecResult,
    pred_res: ExecResult,
    side: dict[str, Callable[..., bool]],
    opts: compare.NormalizeOptions,
    extras: compare.Spider2Arguments | None,
    rows_memo: _RowsMemo,
) -> Comparison:
    """Every comparator's decision on two results and their row overlap (all at once when
    ``_shared`` allows; a plugin comparator's failure names the pair it failed on)."""
    om = pair.order_matters
    if rows_memo.shared_side and _shared(gold_res, pred_res):
        return rows_memo.side_by_side(gold_res.rows, pred_res.rows, side, om)
    try:
        matches = {
            name: _comparator_match(name, gold_res, pred_res, f, om, opts, extras if name == Comparator.SPIDER2 else None)
            for name, f in side.items()
        }
    except PluginError as exc:  # a plugin comparator's failure (jury.plugins): the pair it failed on
        raise PluginError(f"model {pair.model!r}, question {pair.question_id!r}: {exc}") from None
    if gold_res.truncated or pred_res.truncated:
        # Equal set digests prove overlap 1.0 (also after normalisation); otherwise unknown.
        return matches, 1.0 if gold_res.result_sha256 == pred_res.result_sha256 else None
    return matches, compare.overlap(gold_res.rows, pred_res.rows, options=opts)


def _shared(gold: ExecResult, pred: ExecResult) -> bool:
    """Whether compare.side_by_side decides every comparator at once, when each is jury's own and
    no normalisation is on (``_RowsMemo.shared_side``): both results hold every row and neither is
    an engine's (whose ``bird`` compares the rows as the driver returned them)."""
    return not (gold.truncated or pred.truncated) and gold.raw_sha256 is None and pred.raw_sha256 is None


class _RowsMemo:
    """compare.side_by_side's work for one chunk's results, by the identity of their row lists:
    each list made tuples and a set once (``prepared``, which keeps every list it was keyed by
    alive, so no identity is reused), and each (gold rows, predicted rows, order matters) decided
    once: results decoded from the same stored rows share one list (jury.execution.store), and
    side_by_side is a pure function of the rows (issue 46). Let go with the chunk's results."""

    def __init__(self, shared_side: bool) -> None:
        self.shared_side = shared_side  # every comparator is jury's own and no normalisation is on
        self.prepared: compare.Prepared = {}
        self.decided: dict[tuple[int, int, bool], Comparison] = {}

    def side_by_side(self, gold: compare.Rows, pred: compare.Rows, side: Iterable[str], order_matters: bool) -> Comparison:
        key = (id(gold), id(pred), order_matters)
        if key not in self.decided:
            self.decided[key] = compare.side_by_side(gold, pred, side, order_matters=order_matters, prepared=self.prepared)
        return self.decided[key]


def run_executions(
    jobs: dict[str, tuple[str, str]],
    databases: Databases,
    store: Store,
    settings: Settings,
    progress: Progress | None = None,
    *,
    rerun: Sequence[str] = (),
) -> int:
    """Execute every job not already in the store (and those of ``rerun``, stored or not);
    results are stored as they arrive, replacing a stored one.

    The executor (settings.executor: jury.execution.backends) runs the jobs in chunks on
    connections its workers keep open (one per database), here or on Ray; this process
    alone writes the results, in batches (ExecutionWriter: every
    EXECUTION_BATCH results or EXECUTION_FLUSH_S seconds, and the rest in a ``finally``),
    so an exception or Ctrl-C loses nothing and a crash at most one batch.
    """
    keys = list(jobs)
    known = store.known_executions(keys, timeout_s=settings.timeout_s, row_cap=settings.row_cap)
    again = set(rerun)
    todo = [k for k in keys if k not in known or k in again]
    total = len(todo)
    if progress:
        progress(0, total)

    def job(k: str) -> tuple[str, str, str, str, float, int]:
        db_id, sql = jobs[k]
        path, sha = databases[db_id]
        return (k, str(path), sha, sql, settings.timeout_s, settings.row_cap)

    writer = ExecutionWriter(store)
    done = 0

    def save(chunk_results: Encoded) -> None:
        nonlocal done
        for k, encoded in chunk_results:
            db_id, sql = jobs[k]
            writer.add(k, databases[db_id][1], sql, encoded, timeout_s=settings.timeout_s, row_cap=settings.row_cap)
        done += len(chunk_results)
        if progress:
            progress(done, total)

    if not todo:  # everything is in the store: no executor (nor its process pool's modules) needed
        return 0
    from jury.execution.backends import make_executor

    executor = make_executor(settings.executor, settings.workers, settings.ray_address)
    try:
        executor.run([job(k) for k in todo], save)
    finally:
        writer.flush()
    return total


def resolve_databases(
    items: Sequence[GoldItem], db_root: str | Path | None, store: Store, urls: DatabaseURLs | None = None
) -> Databases:
    """db_id -> (path, sha256) for every database the items use.

    A missing file is an error, and so is one that is not a SQLite database, cannot be
    opened or fails ``PRAGMA quick_check`` (checked read-only, once per database content:
    a pass is remembered in the store by the file's sha256).

    A db_id that ``urls`` names is on an engine instead: (its URL, its fingerprint: the sha256
    of the engine, every table's columns and types and every table's row count), computed
    now, so a changed database gets new execution keys as a changed file does. A database
    that cannot be reached is an error naming it (never its password: URLs hold none).
    """
    databases: Databases = {}
    fingerprints: dict[str, str] = {}  # one per URL (BIRD's one-database layout: one for every db_id)
    for item in items:
        url = urls.url_for(item.db_id) if urls else None
        if url is not None and item.db_id not in databases:
            if url not in fingerprints:
                fingerprints[url] = engines.fingerprint(url)
            databases[item.db_id] = (url, fingerprints[url])
            continue
        if item.db_id not in databases:
            try:
                path = require_database(db_root, item.db_id)
            except DatabaseMissing as exc:
                assert db_root is not None  # require_database refuses no root before it looks for a file
                raise DatabaseMissing(f"{exc}{_databases_you_have(items, db_root, urls)}") from None
            sha = store.file_sha256(path)
            if not store.database_checked(sha):
                problem = sql_execute.check_database(path)
                if problem is not None:
                    raise InputError(f"{path}: not a usable SQLite database (db_id {item.db_id!r}): {problem}")
                store.mark_database_checked(sha)
            databases[item.db_id] = (path, sha)
    return databases


def _databases_you_have(items: Sequence[GoldItem], db_root: str | Path, urls: DatabaseURLs | None) -> str:
    """The hint of a missing database file: how many of the questions' databases are missing
    and the --db filter (the library's db=) that keeps to those present."""
    needed = sorted({i.db_id for i in items if not (urls and urls.url_for(i.db_id))})
    present = [db for db in needed if database_path(db_root, db).is_file()]
    if not present:
        return f"; none of the {len(needed)} databases the questions need has a file under {db_root}"
    shown = " ".join(f"--db {db}" for db in present[:5]) + (" ..." if len(present) > 5 else "")
    return (
        f"; {len(needed) - len(present)} of the {len(needed)} databases the questions need have no file there: "
        f"keep to the databases you have with {shown} (the library's db=)"
    )


def execute_gold(
    items: Sequence[GoldItem],
    databases: Databases,
    store: Store,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> dict[QuestionId, ExecResult]:
    """Execute (or reuse) the gold queries alone: question_id -> ExecResult (a recorded
    result stands in for an execution)."""
    settings = settings or Settings()
    recorded = {g.question_id: capped(recorded_result(g), settings.row_cap) for g in items if g.has_recording}
    keys = {g.question_id: execution_key(databases[g.db_id][1], g.sql) for g in items if not g.has_recording}
    jobs = {keys[q]: (g.db_id, g.sql) for g in items if (q := g.question_id) in keys}
    run_executions(jobs, databases, store, settings, progress)
    stored = _executed_all(store, keys.values())
    return {**recorded, **{q: capped(stored[k], settings.row_cap) for q, k in keys.items()}}


def _row_count(row_counts: Mapping[str, int], key: str | None) -> int:
    assert key is not None  # both sides of a compared pair were executed
    return row_counts[key]


def _executed_all(store: Store, keys: Iterable[str]) -> dict[str, ExecResult]:
    """The stored results of the queries run_executions has just run or reused (one read)."""
    wanted = list(keys)
    results = store.get_executions(wanted)
    assert len(results) == len(set(wanted))  # run_executions stores every job's result before returning
    return {k: results[k] for k in wanted}


def capped(result: ExecResult, row_cap: int) -> ExecResult:
    """A stored result as a run under `row_cap` would have kept it (the hash covers every row)."""
    if result.ok and len(result.rows) > row_cap:
        return result.model_copy(update={"rows": result.rows[:row_cap], "truncated": True})
    return result
