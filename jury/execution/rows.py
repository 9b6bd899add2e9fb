"""The rows of a result as jury hashes and keeps them, for every engine's executor.

Each value has a type-tagged JSON token, each row a sha256 of its tokens; a result carries an
order-independent digest of its row SET (:class:`RowSetDigest`: duplicates ignored exactly in
bounded memory, spilling to a temporary on-disk table past SPILL_AT distinct rows) and an
ordered digest of its row LIST, so two results over the row cap can still be compared exactly.
:class:`ResultAccumulator` gathers a streaming result: hashed rows, the rows kept under the row
cap, and MAX_RESULT_BYTES on what is kept.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from functools import partial
from hashlib import sha256
from json.encoder import encode_basestring_ascii as _json_str  # what json.dumps uses for str
from typing import Any

from jury.execution.engine_values import Token, raw_value
from jury.inputs.records import ExecResult

#: Most bytes of values a result may keep (the rows under the row cap); more is an error.
MAX_RESULT_BYTES = 64 * 1024 * 1024


def _value_token(value: object) -> list[object]:
    """A JSON-able, type-tagged form of one SQLite value (bytes would not survive JSON)."""
    if value is None:
        return ["n"]
    if isinstance(value, bytes):
        return ["b", value.hex()]
    if isinstance(value, bool):
        return ["i", int(value)]
    if isinstance(value, int):
        return ["i", value]
    if isinstance(value, float):
        # 1 and 1.0 are one value to Python's set equality; hash them alike.
        return ["i", int(value)] if value.is_integer() else ["f", repr(value)]
    return ["s", str(value)]


_token_json = partial(json.dumps, separators=(",", ":"))


def _value_json(value: Any) -> str:  # Any: dispatched on type(value) once, which mypy cannot narrow by
    """The JSON text of ``_value_token(value)``, written directly for the plain SQLite types
    (the same bytes json.dumps gives: ASCII-escaped strings, ``repr`` numbers)."""
    t = type(value)
    if t is str:
        return f'["s",{_json_str(value)}]'
    if t is int:
        return f'["i",{int.__repr__(value)}]'
    if t is float:
        if value.is_integer():
            return f'["i",{int.__repr__(int(value))}]'
        return f'["f","{float.__repr__(value)}"]'
    if value is None:
        return '["n"]'
    if t is bytes:
        return f'["b","{value.hex()}"]'
    return _token_json(_value_token(value))  # bool, subclasses, anything a recording holds


def row_digest_bytes(row: Iterable[object]) -> bytes:
    """sha256 of the compact JSON of the row's value tokens (``[["i",1],["s","a"]]``)."""
    blob = "[" + ",".join(map(_value_json, row)) + "]"
    return sha256(blob.encode()).digest()


# Types whose values SQLite returns too: a driver's value of one is its normalised value.
_PLAIN = frozenset({type(None), int, float, str, bytes, bool})


def raw_row_digest(raw: tuple[object, ...]) -> bytes | None:
    """The digest of a row of a driver's own values under Python's equality, as BIRD's
    ``set(pred) == set(gold)`` compares them (jury.execution.engine_values.raw_value): None when
    every value is of a type SQLite returns too (the row's normalised digest stands for it),
    UNHASHABLE_ROW when a value cannot be in a set, else the sha256 of its value tokens.

    >>> from decimal import Decimal
    >>> raw_row_digest((1, "a", None)) is None
    True
    >>> raw_row_digest((Decimal("0.5"),)) == row_digest_bytes((0.5,))
    True
    >>> raw_row_digest((Decimal("31.2000"),)) == raw_row_digest((Decimal("31.2"),)) != row_digest_bytes((31.2,))
    True
    >>> raw_row_digest(([1, 2],)) == UNHASHABLE_ROW
    True
    """
    if all(type(v) in _PLAIN for v in raw):
        return None
    parts = []
    for v in raw:
        try:
            value = v if type(v) in _PLAIN else raw_value(v)
        except TypeError:
            return UNHASHABLE_ROW
        parts.append(_token_json(list(value)) if isinstance(value, Token) else _value_json(value))
    return sha256(("[" + ",".join(parts) + "]").encode()).digest()


def row_digest(row: tuple[object, ...]) -> int:
    return int.from_bytes(row_digest_bytes(row), "big")


def combine_digests(digests: set[int]) -> str:
    """Order-independent hash of a SET of row digests (duplicates ignored, like BIRD's rule)."""
    total = 0
    for digest in digests:
        total = (total + digest) % (1 << 256)
    return f"{total:064x}"


#: What a raw row digest is when a value of the row cannot be in a Python set (engine_values).
UNHASHABLE_ROW = b""
#: The raw set digest of a result with such a row: no other result equals it under BIRD's rule.
UNHASHABLE = "unhashable"

#: Distinct row digests held in memory before they move to a temporary on-disk table (~25 MB).
SPILL_AT = 200_000
#: Most distinct rows one result may have; more is an error of that query (a set digest over
#: them would need ~45 bytes of temporary disk per row).
MAX_DISTINCT_ROWS = 50_000_000


class RowSetDigest:
    """The order-independent digest of a set of rows (:func:`combine_digests`), built one row
    digest at a time in bounded memory.

    Up to ``spill_at`` distinct digests are kept in a set; past that they move to a private
    temporary SQLite database on disk (``INSERT OR IGNORE`` into a primary key, so a
    duplicate is still ignored exactly) and the set starts again. SQLite deletes that file
    when the connection closes.

    >>> d = RowSetDigest(spill_at=2)
    >>> for digest in (b"\\x01" * 32, b"\\x02" * 32, b"\\x01" * 32, b"\\x03" * 32):
    ...     d.add(digest)
    >>> d.hexdigest() == combine_digests({int.from_bytes(b * 32, "big") for b in (b"\\x01", b"\\x02", b"\\x03")})
    True
    >>> d.close()
    """

    def __init__(self, *, spill_at: int | None = None, max_distinct: int | None = None) -> None:
        self._mem: set[bytes] = set()
        self._spill_at = SPILL_AT if spill_at is None else spill_at
        self._max_distinct = MAX_DISTINCT_ROWS if max_distinct is None else max_distinct
        self._disk: sqlite3.Connection | None = None
        self._on_disk = 0

    def add(self, digest: bytes) -> None:
        self._mem.add(digest)
        if len(self._mem) >= self._spill_at:
            self._spill()

    def _spill(self) -> None:
        self._flush()
        if self._on_disk > self._max_distinct:
            raise ResultTooLarge(f"result too large: more than {self._max_distinct:,} distinct rows (the cap on rows hashed)")

    def _flush(self) -> None:
        if self._disk is None:
            self._disk = sqlite3.connect("")  # "": a private temporary database on disk
            self._disk.execute("PRAGMA journal_mode = OFF")
            self._disk.execute("PRAGMA synchronous = OFF")
            self._disk.execute("PRAGMA cache_size = -8192")  # 8 MiB of page cache at the most
            self._disk.execute("CREATE TABLE d (h BLOB PRIMARY KEY) WITHOUT ROWID")
        before = self._disk.total_changes
        self._disk.executemany("INSERT OR IGNORE INTO d VALUES (?)", ((h,) for h in self._mem))
        self._on_disk += self._disk.total_changes - before
        self._mem.clear()

    def copy(self) -> RowSetDigest:
        """A digest of the same rows so far, added to independently from now on."""
        other = RowSetDigest(spill_at=self._spill_at, max_distinct=self._max_distinct)
        if self._disk is not None:
            for (h,) in self._disk.execute("SELECT h FROM d"):
                other.add(h)
        for h in self._mem:
            other.add(h)
        return other

    def hexdigest(self) -> str:
        if self._disk is None:
            digests: Iterable[bytes] = self._mem
        else:
            self._flush()
            digests = (h for (h,) in self._disk.execute("SELECT h FROM d"))
        total = 0
        for digest in digests:
            total += int.from_bytes(digest, "big")
        return f"{total % (1 << 256):064x}"

    def close(self) -> None:
        self._mem.clear()
        if self._disk is not None:
            self._disk.close()
            self._disk = None


def result_hash(rows: Iterable[Iterable[object]]) -> str:
    return combine_digests({row_digest(tuple(r)) for r in rows})


def ordered_hash(rows: Iterable[Iterable[object]]) -> str:
    """Hash of the row LIST: order and duplicates count; 1 and 1.0 hash alike.

    >>> ordered_hash([(1,), (2,)]) == ordered_hash([(1.0,), (2,)])
    True
    >>> ordered_hash([(1,), (2,)]) == ordered_hash([(2,), (1,)])
    False
    """
    h = hashlib.sha256()
    for r in rows:
        h.update(row_digest_bytes(tuple(r)))
    return h.hexdigest()


class ResultTooLarge(Exception):
    """The kept rows of a result exceed MAX_RESULT_BYTES."""


class ResultAccumulator:
    """The rows of one result as they stream, for every engine's executor: each row hashed into
    the order-independent set digest (bounded memory, :class:`RowSetDigest`) and the ordered
    digest, and kept up to the row cap while the kept values stay under MAX_RESULT_BYTES
    (else :class:`ResultTooLarge`).

    With ``raw`` (an engine's executor) it also gathers the set digest of the rows as the
    driver returned them (``raw_sha256``: BIRD's rule on the driver's values), from each row's
    raw digest (``add(row, raw_digest)``, None for a row whose values SQLite has types for);
    it is the normalised set digest until the first row that differs."""

    def __init__(self, row_cap: int, *, raw: bool = False) -> None:
        self.row_cap = row_cap
        self.kept: list[tuple[object, ...]] = []
        self.kept_bytes = 0
        self.digests = RowSetDigest()
        self.ordered = hashlib.sha256()
        self.count = 0
        self.raw = raw
        self.raw_digests: RowSetDigest | None = None  # created at the first row whose raw digest differs
        self.raw_unhashable = False

    def add(self, row: tuple[object, ...], raw_digest: bytes | None = None, kept: tuple[object, ...] | None = None) -> None:
        """Hash ``row`` (normalised values) and keep it under the row cap, or keep ``kept``
        instead when given (the driver's values as equality keys: engines.execute's raw_rows)."""
        self.count += 1
        digest = sha256(("[" + ",".join(map(_value_json, row)) + "]").encode()).digest()  # row_digest_bytes(row), inlined
        if raw_digest is not None or self.raw_digests is not None:
            self._add_raw(digest, raw_digest)
        self.digests.add(digest)
        self.ordered.update(digest)
        if self.count <= self.row_cap:
            size = 0  # about what the kept values cost: text and blobs by length, numbers 8
            for v in row:  # a loop, not a call per value (issue 46)
                size += len(v) if isinstance(v, (str, bytes)) else 8
            self.kept_bytes += size
            if self.kept_bytes > MAX_RESULT_BYTES:
                self.kept.clear()
                raise ResultTooLarge(
                    f"result too large: its first {self.count} rows hold more than "
                    f"{MAX_RESULT_BYTES:,} bytes of values (the cap on a kept result)"
                )
            self.kept.append(row if kept is None else kept)

    def _add_raw(self, digest: bytes, raw_digest: bytes | None) -> None:
        """The raw set digest's share of a row: from its first row whose raw digest differs on."""
        if self.raw_digests is None:
            self.raw_digests = self.digests.copy()  # every row so far: raw and normalised digests agree
        if raw_digest == UNHASHABLE_ROW:
            self.raw_unhashable = True
        else:
            self.raw_digests.add(digest if raw_digest is None else raw_digest)

    def discard(self) -> None:
        """Free what was gathered (the query failed)."""
        self.kept.clear()
        self.digests.close()
        if self.raw_digests is not None:
            self.raw_digests.close()

    def result(self, columns: list[str], elapsed_s: float) -> ExecResult:
        """The finished result (frees the digest set's temporary table)."""
        raw_digest = None
        try:
            set_digest = self.digests.hexdigest()
            if self.raw:
                raw_digest = set_digest if self.raw_digests is None else self.raw_digests.hexdigest()
                raw_digest = UNHASHABLE if self.raw_unhashable else raw_digest
        finally:
            self.digests.close()
            if self.raw_digests is not None:
                self.raw_digests.close()
        return ExecResult(
            status="ok",
            columns=columns,
            rows=self.kept,
            row_count=self.count,
            truncated=self.count > self.row_cap,
            result_sha256=set_digest,
            ordered_sha256=self.ordered.hexdigest(),
            raw_sha256=raw_digest,
            elapsed_s=elapsed_s,
        )
