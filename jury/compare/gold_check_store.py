"""The deterministic gold checks (jury.compare.gold_checks) stored and reused.

A check's result depends on the gold item (its question id, db_id, SQL and order flag), the
database's fingerprint (the sha256 the store keys executions by; an engine's fingerprint
and its redacted URL), the passes, comparator, timeout and row cap, the cross-engine side
(its item, database and label) and the code of the checks (the source of the modules that
decide them, jury's and sqlglot's versions). Those inputs, as canonical JSON, are the row's
``inputs``; their sha256 is its ``key``. So a second ``audit-gold`` or a ``reaudit`` runs no
check whose inputs did not change, and a changed database, passes or check code runs it again.

A stored row is checked before it is trusted, as a store's executions are re-keyed before
use: its ``inputs`` must hash to its key and equal this run's, its ``digest`` must be the
sha256 of its key and result, and its result must parse as the result of that item with a
possible number of executions. A row that fails any of these is not used: the check runs
again and its row is replaced (counted in ``refused``). A store merged from elsewhere
(`jury store merge`) brings its gold checks only with ``trust_executions``, like executions.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import NotRequired, TypedDict

from jury.compare.gold_checks import CheckFinding, CrossEngine, GoldCheckResult, check_gold
from jury.execution.batch_store import now_iso
from jury.execution.engine_urls import Databases, engine_of, is_url, redact
from jury.execution.store import Store, decode_rows, encode_rows
from jury.inputs.records import ExecResult, ExecStatus, GoldItem, QuestionId
from jury.version import __version__

# the modules whose code decides a check's result: a change to any of them runs every check again
_CHECK_MODULES = (
    "jury.compare.gold_checks",
    "jury.compare.gold_probes",
    "jury.compare.comparators",
    "jury.execution.repeat",
    "jury.execution.sqlite",
    "jury.execution.engines",
)


@functools.cache
def check_code_version() -> str:
    """The sha256 of the checks' code: jury's and sqlglot's versions and the source of _CHECK_MODULES."""

    digest = hashlib.sha256(f"jury {__version__}\0".encode())
    try:
        digest.update(f"sqlglot {version('sqlglot')}\0".encode())
    except PackageNotFoundError:  # pragma: no cover - sqlglot is a dependency
        digest.update(b"sqlglot\0")
    for name in _CHECK_MODULES:
        source = importlib.import_module(name).__file__
        assert source is not None
        digest.update(Path(source).read_bytes())
    return digest.hexdigest()


class _DatabaseInputs(TypedDict):
    """A database as a check's inputs name it: its fingerprint, engine and (an engine's) redacted URL."""

    sha256: str
    engine: str
    url: NotRequired[str]


class _ItemInputs(TypedDict):
    """What a check's inputs hold of a gold item."""

    question_id: QuestionId
    db_id: str
    sql: str
    order_matters: bool | None


class _AgainstInputs(TypedDict):
    """The cross-engine side of a check's inputs."""

    label: str
    item: _ItemInputs
    database: _DatabaseInputs


class _CheckInputs(TypedDict):
    """Everything a check depends on (:func:`check_inputs`)."""

    code: str
    item: _ItemInputs
    database: _DatabaseInputs
    passes: list[int]
    comparator: str
    timeout_s: float
    row_cap: int
    against: NotRequired[_AgainstInputs]


class CheckSettings(TypedDict):
    """What a gold check is run with: the settings part of a check's store key, handed on to
    :func:`check_inputs` and ``check_gold`` alike."""

    passes: tuple[int, ...]
    comparator: str
    timeout_s: float
    row_cap: int


class _EncodedReference(TypedDict):
    """A check's first execution as stored (its rows as encode_rows writes them)."""

    status: ExecStatus
    columns: list[str]
    rows: str
    row_count: int
    truncated: bool
    result_sha256: str | None
    ordered_sha256: str | None
    raw_sha256: str | None
    error: str | None
    elapsed_s: float


#: A stored row of gold_checks as read back: (inputs, result, digest), each checked before use.
_StoredRow = tuple[object, object, object]


def _database(databases: Databases, db_id: str) -> _DatabaseInputs:
    path, sha = databases[db_id]
    if is_url(path):
        return {"sha256": sha, "engine": engine_of(str(path)), "url": redact(str(path))}
    return {"sha256": sha, "engine": "sqlite"}


def _item(item: GoldItem) -> _ItemInputs:
    return {"question_id": item.question_id, "db_id": item.db_id, "sql": item.sql, "order_matters": item.order_matters}


def check_inputs(item: GoldItem, databases: Databases, settings: CheckSettings, against: CrossEngine | None = None) -> str:
    """Everything the checks of ``item`` depend on, as canonical JSON (its sha256 is the row's key)."""
    inputs: _CheckInputs = {
        "code": check_code_version(),
        "item": _item(item),
        "database": _database(databases, item.db_id),
        "passes": list(settings["passes"]),
        "comparator": str(settings["comparator"]),
        "timeout_s": float(settings["timeout_s"]),
        "row_cap": int(settings["row_cap"]),
    }
    if against is not None:
        other = against.gold[item.question_id]
        inputs["against"] = {"label": against.label, "item": _item(other), "database": _database(against.databases, other.db_id)}
    return json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _key(inputs: str) -> str:
    return hashlib.sha256(inputs.encode()).hexdigest()


def _digest(key: str, result: str) -> str:
    return hashlib.sha256(f"{key}\0{result}".encode()).hexdigest()


def _encode_reference(ref: ExecResult) -> _EncodedReference:
    return {
        "status": ref.status,
        "columns": ref.columns,
        "rows": encode_rows(ref.rows),
        "row_count": ref.row_count,
        "truncated": ref.truncated,
        "result_sha256": ref.result_sha256,
        "ordered_sha256": ref.ordered_sha256,
        "raw_sha256": ref.raw_sha256,
        "error": ref.error,
        "elapsed_s": ref.elapsed_s,
    }


def encode_check(result: GoldCheckResult) -> str:
    """A check's stored form (JSON): its findings and what the time windows compare with
    (the first execution and the final pass's agreement); the windows themselves are not stored."""
    value = {
        "question_id": result.question_id,
        "db_id": result.db_id,
        "executions": result.executions,
        "checks": [f.model_dump(mode="json") for f in result.checks],
        "cross_engine_differs": result.cross_engine_differs,
        "final_pass": list(result.final_pass) if result.final_pass is not None else None,
        "reference": _encode_reference(result.reference) if result.reference is not None else None,
    }
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def decode_check(text: str) -> GoldCheckResult:
    """The result of encode_check's text (ValueError, or pydantic's ValidationError, when it is not one)."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    ref = value.pop("reference", None)
    final = value.pop("final_pass", None)
    result = GoldCheckResult(
        question_id=value["question_id"],
        db_id=value["db_id"],
        executions=value["executions"],
        checks=[CheckFinding.model_validate(f) for f in value["checks"]],
        cross_engine_differs=value["cross_engine_differs"],
    )
    if final is not None:
        executions, agreeing = final
        result.final_pass = (int(executions), int(agreeing))
    if ref is not None:
        result.reference = ExecResult.model_validate({**ref, "rows": decode_rows(ref["rows"])})
    return result


@dataclass
class StoredChecks:
    """The checks of a set of gold items: their results in the items' order, how many were
    read from the store, run here, and stored but refused (not what their key says: run again),
    and the executions the checks run here made (the reused ones made none)."""

    results: list[GoldCheckResult]
    reused: int = 0
    checked: int = 0
    refused: int = 0
    executions: int = 0


def _trusted(row: _StoredRow, key: str, inputs: str, item: GoldItem, passes: Sequence[int]) -> GoldCheckResult | None:
    """The stored result of ``row`` when it is what its key says, else None."""
    stored_inputs, text, digest = row
    if (
        not isinstance(stored_inputs, str)
        or stored_inputs != inputs
        or _key(stored_inputs) != key
        or not isinstance(text, str)
        or digest != _digest(key, text)
    ):
        return None
    try:
        result = decode_check(text)
    except (ValueError, TypeError, KeyError):  # pydantic's ValidationError is a ValueError
        return None
    if result.question_id != item.question_id or result.db_id != item.db_id:
        return None
    if not 1 <= result.executions <= sum(passes) + 1:
        return None
    return result


def _read(store: Store, keys: list[str]) -> dict[str, _StoredRow]:
    found: dict[str, _StoredRow] = {}
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for key, inputs, result, digest in store.conn.execute(
            f"SELECT key, inputs, result, digest FROM gold_checks WHERE key IN ({marks})", chunk
        ):
            found[key] = (inputs, result, digest)
    return found


def store_checks(store: Store, rows: list[tuple[str, str, GoldItem, str, GoldCheckResult]]) -> None:
    """Write (key, inputs, item, database sha256, result) rows in one transaction, a stored key
    replaced; a store that cannot be written to only means the checks run again next time."""
    if not rows:
        return
    created = now_iso()
    values = []
    for key, inputs, item, db_sha, result in rows:
        text = encode_check(result)
        values.append((key, json.dumps(item.question_id), db_sha, inputs, text, _digest(key, text), created))
    with contextlib.suppress(sqlite3.Error):
        store.conn.execute("BEGIN IMMEDIATE")
        try:
            store.conn.executemany(
                "INSERT OR REPLACE INTO gold_checks (key, question_id, db_sha256, inputs, result, digest, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            store.conn.execute("COMMIT")
        except BaseException:
            store.conn.execute("ROLLBACK")
            raise


def stored_gold_checks(
    store: Store,
    items: Sequence[GoldItem],
    databases: Databases,
    settings: CheckSettings,
    *,
    against: CrossEngine | None = None,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
    reuse: bool = True,
) -> StoredChecks:
    """check_gold's results for ``items`` (those with SQL to execute, in order): each read from
    the store when a trusted row holds it (``reuse``), else checked here (on ``workers``
    processes) and stored. ``reuse=False`` (``jury check-gold``): every check runs afresh, and
    its row is written."""
    todo = [i for i in items if not i.has_recording]
    inputs = [check_inputs(i, databases, settings, against) for i in todo]
    keys = [_key(text) for text in inputs]
    rows = _read(store, keys) if reuse else {}
    results: list[GoldCheckResult | None] = [None] * len(todo)
    refused = 0
    for n, (item, key, text) in enumerate(zip(todo, keys, inputs)):
        if key in rows:
            results[n] = _trusted(rows[key], key, text, item, settings["passes"])
            refused += results[n] is None
    missing = [n for n, r in enumerate(results) if r is None]
    fresh = check_gold([todo[n] for n in missing], databases, against=against, workers=workers, progress=progress, **settings)
    for n, result in zip(missing, fresh):
        results[n] = result
    store_checks(store, [(keys[n], inputs[n], todo[n], databases[todo[n].db_id][1], r) for n, r in zip(missing, fresh)])
    done = [r for r in results if r is not None]
    assert len(done) == len(todo)
    executions = sum(r.executions for r in fresh)
    return StoredChecks(done, reused=len(todo) - len(missing), checked=len(missing), refused=refused, executions=executions)
