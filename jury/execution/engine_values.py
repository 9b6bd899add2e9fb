"""Values from an engine's driver as SQLite would return them (jury.execution.engines), so one
result hashes alike on every engine."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal
from typing import Any


def normalise(value: Any) -> Any:
    """A driver's value as SQLite would return it: Decimal -> int when integral else float,
    date -> 'YYYY-MM-DD', datetime -> 'YYYY-MM-DD HH:MM:SS[.ffffff]', time and MySQL TIME
    (timedelta) -> 'HH:MM:SS[.ffffff]', bool -> 0/1, binary -> bytes, UUID, JSON and the
    rest -> text. int, float, str and NULL pass as they are.

    >>> [normalise(v) for v in (Decimal("2.50"), Decimal("3"), True, dt.date(2020, 1, 2))]
    [2.5, 3, 1, '2020-01-02']
    >>> normalise(dt.datetime(2020, 1, 2, 3, 4, 5)), normalise(dt.timedelta(hours=26, seconds=7))
    ('2020-01-02 03:04:05', '26:00:07')
    """
    t = type(value)
    if value is None or t is int or t is float or t is str:
        return value
    if t is bool:
        return int(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return float(value)
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None).isoformat(sep=" ") if value.tzinfo is None else value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        total = value.total_seconds()
        sign = "-" if total < 0 else ""
        micro = abs(value) // dt.timedelta(microseconds=1)
        secs, micro = divmod(micro, 1_000_000)
        text = f"{sign}{secs // 3600:02d}:{secs % 3600 // 60:02d}:{secs % 60:02d}"
        return text + (f".{micro:06d}" if micro else "")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, int):  # numpy-like or subclass
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


class Token(tuple[str | int, ...]):
    """A tagged token of a driver value no SQLite value equals (jury.execution.rows.raw_row_digest)."""


def raw_value(v: Any) -> Any:
    """The driver value ``v`` as BIRD's rule (Python's ``==``) sees it: the int, float, str or
    bytes it equals exactly when there is one, else a :class:`Token` equal exactly when Python
    says the values are equal; TypeError when ``v`` cannot be in a Python set (a JSON object, an
    array: BIRD's ``set()`` raises and the pair scores 0).

    >>> raw_value(Decimal("0.5")), raw_value(Decimal("3.00")), raw_value(Decimal("31.2000"))
    (0.5, 3, ('d', '31.2'))
    >>> raw_value(dt.date(2020, 1, 2)) != '2020-01-02'
    True
    """
    if isinstance(v, Decimal):
        if not v.is_finite():
            return float(v)
        if v == v.to_integral_value():
            return int(v)
        f = float(v)
        return f if Decimal(f) == v else Token(("d", str(v.normalize())))
    if isinstance(v, dt.datetime):  # before date: a datetime is a date
        if v.tzinfo is not None and v.utcoffset() is not None:
            return Token(("dtz", v.astimezone(dt.UTC).replace(tzinfo=None).isoformat()))
        return Token(("dt", v.isoformat()))
    if isinstance(v, dt.date):
        return Token(("date", v.isoformat()))
    if isinstance(v, dt.time):
        return Token(("time", v.isoformat()))
    if isinstance(v, dt.timedelta):
        return Token(("td", v // dt.timedelta(microseconds=1)))
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, (bool, int)):
        return int(v)
    if isinstance(v, (float, str)):
        return v
    if isinstance(v, uuid.UUID):
        return Token(("uuid", str(v)))
    hash(v)  # TypeError for dict, list
    return Token(("o", type(v).__name__, str(v)))


def equality_key(v: Any) -> Any:
    """A key of the driver value ``v`` equal to another's exactly when Python's ``==`` on the two
    values is (what mini-dev's Soft-F1 compares cell by cell with ``in``): :func:`raw_value`,
    whose int, float, str and bytes are the value itself or equal to it (``Decimal('0.50')`` is
    0.5, ``Decimal('7.00')`` is 7, True is 1) and whose :class:`Token` equals only a Token of an
    equal value (``Decimal('31.2000')`` and ``Decimal('31.2')`` one, neither 31.2; a date never its
    text). A value Python cannot hash (a JSON object, an array) is kept as it is: a row holding
    one cannot be a dict's key, so mini-dev's ``dict.fromkeys`` raises there and the pair scores 0.

    >>> equality_key(Decimal("31.2000")) == equality_key(Decimal("31.2")) != 31.2
    True
    >>> equality_key(Decimal("0.50")) == 0.5, equality_key(dt.date(2020, 1, 2)) == "2020-01-02"
    (True, False)
    """
    try:
        return raw_value(v)
    except TypeError:
        return v
