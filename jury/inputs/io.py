"""Reading users' files: gold JSON, run JSONL, and BIRD prediction files.

Every problem becomes an ``InputError`` whose message names the file, the line (or item)
and the offending value, so the CLI can print it as one line.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from jury.errors import DatabaseMissing, InputError
from jury.inputs.kinds import PREDICTIONS_HINT, wrong_kind
from jury.inputs.reader import decoded, open_input, read_bounded
from jury.inputs.records import GoldItem, QuestionId, RunRecord

_RunKey = tuple[str, QuestionId] | tuple[str, QuestionId, str | int | None, int | None]
"""A run record's identity: (model, question_id), or (model, question_id, episode, turn) with tests."""

MAX_INPUT_BYTES = 512 * 1024 * 1024
"""The largest input file jury reads (BIRD's train.json is about 20 MB)."""
MAX_LINE_CHARS = 8 * 1024 * 1024
"""The longest line of a JSONL file (a run record, a gold item)."""
MAX_JSON_DEPTH = 100
"""The deepest nesting of arrays and objects accepted in any JSON input."""
MAX_INT_DIGITS = 100
"""The most digits of an integer literal in JSON input (Python refuses past 4300)."""


def read_text(path: str | Path, *, within: str | Path | None = None) -> str:
    """Read a UTF-8 file through the bounded reader (`jury.inputs.reader`): a missing, empty,
    non-regular, oversized or non-UTF-8 file, or a link out of its folder (or ``within``), is
    an InputError."""
    p = Path(path)
    data = read_bounded(p, MAX_INPUT_BYTES, within=within)
    text = decoded(p, data)
    if not text.strip():
        raise InputError(f"{p}: file is empty")
    return text


# ---------------------------------------------------------------- one safe JSON loader


class _Rejected(ValueError):
    """A JSON text that parses but must not be accepted (its message says why)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _Rejected(f"duplicate key {_shown(key)}")
        obj[key] = value
    return obj


def _constant(name: str) -> Any:
    raise _Rejected(f"{name} is not JSON (no NaN or Infinity)")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Rejected(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Rejected(f"{_shown(text, 30)} is out of a float's range")
    return value


def _shown(value: str, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_int=_int, parse_float=_float)
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_BRACKETS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|([\[\]{}])')  # _TOKENS, the brackets captured
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SHORT = 64 * 1024  # characters: a text _too_deep may count the brackets of first
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _too_deep(text: str) -> int | None:
    """The offset of the first bracket nested deeper than MAX_JSON_DEPTH, or None."""
    # a short text (a JSONL line) nests no deeper than it has opening brackets: two counts instead of the
    # regex scan below; a long one (a whole JSON file) is scanned once, without counting first
    if len(text) <= _SHORT and text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return None
    brackets = "".join(_BRACKETS.findall(text))  # outside strings, in order (the scan below, in C)
    if max(accumulate(map(_STEP.__getitem__, brackets)), default=0) <= MAX_JSON_DEPTH:
        return None
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return m.start()
        elif c in "]}":
            depth -= 1
    return None


def _lone_surrogate(obj: Any) -> str | None:
    """The first string (key or value) holding a lone surrogate, escaped, or None."""
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, str):
            try:
                x.encode("utf-8")
            except UnicodeEncodeError as exc:
                return x[exc.start : exc.start + 1].encode("unicode_escape").decode("ascii")
    return None


def _check_depth(text: str, where: str, line: int = 1) -> None:
    deep = _too_deep(text)
    if deep is not None:
        raise InputError(
            f"{where}:{line + text.count(chr(10), 0, deep)}: nested deeper than {MAX_JSON_DEPTH} levels of arrays/objects"
        )


def parse_json(text: str, where: str, line: int = 1, *, start: int = 0, depth_checked: bool = False) -> tuple[Any, int]:
    """Parse the JSON value at text[start:] the one safe way: (value, offset after it).

    Duplicate keys, NaN/Infinity, integers of more than MAX_INT_DIGITS digits, nesting deeper
    than MAX_JSON_DEPTH and lone surrogates are InputErrors naming ``where:line`` (``line``
    is the line of ``start``; a syntax error names its own line).
    """
    if not depth_checked:
        _check_depth(text, where, line - text.count("\n", 0, start))
    try:
        value, after = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        line_of = line + text.count("\n", start, exc.pos)
        raise InputError(f"{where}:{line_of}: malformed JSON ({exc.msg})") from None
    except _Rejected as exc:
        raise InputError(f"{where}:{line}: {exc}") from None
    except RecursionError:  # a smaller stack than MAX_JSON_DEPTH assumes
        raise InputError(f"{where}:{line}: nested too deeply") from None
    if _SURROGATE_ESCAPE.search(text, start, after):
        bad = _lone_surrogate(value)
        if bad is not None:
            raise InputError(f"{where}:{line}: lone surrogate {bad} in a string (not valid Unicode)")
    return value, after


_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, pos: int) -> int:
    """The first position at or after ``pos`` that is not JSON whitespace."""
    m = _WS.match(text, pos)
    assert m is not None  # the pattern matches the empty string
    return m.end()


def loads_document(text: str, where: str, line: int = 1) -> Any:
    """One JSON document (a whole file, or one JSONL line numbered ``line``): parse_json,
    then nothing but whitespace may follow."""
    first = _skip_ws(text, 0)
    value, after = parse_json(text, where, line + text.count("\n", 0, first), start=first)
    rest = _skip_ws(text, after)
    if rest < len(text):
        raise InputError(f"{where}:{line + text.count(chr(10), 0, rest)}: malformed JSON (extra data after the value)")
    return value


_JSON_WS = " \t\n\r"


def loads_line(line: str, where: str, line_number: int) -> Any:
    """loads_document of one JSONL line, with the common line's steps in one place: a line with
    no surrounding whitespace, fewer brackets than MAX_JSON_DEPTH (so no deeper), no escaped
    surrogate, that the decoder takes whole, is its value; any other goes through loads_document,
    which accepts it the same or refuses it with its own message (issue 46)."""
    if (
        line[:1] in _JSON_WS  # "" too
        or line[-1] in _JSON_WS
        or len(line) > _SHORT
        or line.count("[") + line.count("{") > MAX_JSON_DEPTH
        or _SURROGATE_ESCAPE.search(line)
    ):
        return loads_document(line, where, line_number)
    try:
        value, after = _DECODER.raw_decode(line)
    except ValueError:  # malformed (json.JSONDecodeError) or _Rejected: loads_document says which
        return loads_document(line, where, line_number)
    return value if after == len(line) else loads_document(line, where, line_number)


def load_json_file(path: str | Path) -> Any:
    """Read and parse a JSON file with every check of read_text and parse_json."""
    p = Path(path)
    return loads_document(read_text(p), str(p))


def _array_items(text: str, where: str) -> Iterator[tuple[int, Any]]:
    """The items of a top-level JSON array, each with the line it starts on."""
    _check_depth(text, where)
    pos = _skip_ws(text, 0)
    if not text.startswith("[", pos):
        raise InputError(f"{where}: expected a JSON list")
    pos = _skip_ws(text, pos + 1)
    line = 1 + text.count("\n", 0, pos)
    if text.startswith("]", pos):
        after = pos + 1
    else:
        while True:
            value, after = parse_json(text, where, line, start=pos, depth_checked=True)
            yield line, value
            nxt = _skip_ws(text, after)
            line += text.count("\n", pos, nxt)
            if text.startswith(",", nxt):
                pos = _skip_ws(text, nxt + 1)
                line += text.count("\n", nxt, pos)
                continue
            if text.startswith("]", nxt):
                after = nxt + 1
                break
            raise InputError(f"{where}:{line}: malformed JSON (expected ',' or ']' after an item)")
    rest = _skip_ws(text, after)
    if rest < len(text):
        raise InputError(f"{where}:{1 + text.count(chr(10), 0, rest)}: malformed JSON (extra data after the list)")


def refuse_wrong_kind(p: Path, expected: str) -> None:
    """One line, before any record is read, when ``p`` is plainly another kind of jury file
    ("dev.json is a gold file, not a run file"); see jury/inputs/kinds.py."""
    problem = wrong_kind(p, expected)
    if problem:
        raise InputError(problem)


def first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err["loc"]) or "record"
    value = err.get("input")
    shown = json.dumps(value, default=str)[:80] if not isinstance(value, dict) else ""
    return f"{loc}: {err['msg']}" + (f" (got {shown})" if shown else "")


def load_gold(path: str | Path) -> dict[QuestionId, GoldItem]:
    """Load a BIRD-style gold file (a JSON list, or JSONL) keyed by question_id.

    An item repeated exactly (BIRD mini-dev repeats questions 137 and 138) is kept once; two
    different items under one question_id are an error.
    """
    gold: dict[QuestionId, GoldItem] = {}
    for where, item in _gold_items(Path(path)):
        first = gold.get(item.question_id)
        if first is not None and first != item:
            raise InputError(f"{where}: duplicate question_id {item.question_id!r} with different content")
        gold.setdefault(item.question_id, item)
    return gold


def load_gold_list(path: str | Path) -> list[GoldItem]:
    """Every gold item in file order, repeats included: predictions index by this position."""
    load_gold(path)  # the same checks
    return [item for _where, item in _gold_items(Path(path))]


def _gold_items(p: Path) -> list[tuple[str, GoldItem]]:
    refuse_wrong_kind(p, "gold")
    text = read_text(p)
    items: list[tuple[str, object]]
    if text.lstrip().startswith("["):
        items = [(f"{p}:{line}: item {i}", obj) for i, (line, obj) in enumerate(_array_items(text, str(p)))]
    else:
        items = [(f"{p}:{lineno}", obj) for lineno, obj in jsonl_objects(p, text)]
    out = []
    for where, obj in items:
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected an object, got {type(obj).__name__}")
        try:
            out.append((where, GoldItem.model_validate(obj)))
        except ValidationError as exc:
            raise InputError(f"{where}: {first_error(exc)}") from None
    if not out:
        raise InputError(f"{p}: no gold items")
    return out


def jsonl_objects(p: Path, text: str) -> Iterator[tuple[int, object]]:
    # "\n" only: str.splitlines() would also split inside strings at U+2028, U+0085, ...
    where = str(p)
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            raise InputError(f"{p}:{lineno}: line longer than {MAX_LINE_CHARS // 2**20} Mi characters")
        try:
            yield lineno, loads_line(line, where, lineno)
        except InputError as exc:
            if "malformed JSON" not in str(exc):
                raise
            raise InputError(f"{exc}: {_shown(line.strip())}") from None


def load_runs(paths: Iterable[str | Path], gold: dict[QuestionId, GoldItem] | None = None) -> list[RunRecord]:
    """Load run JSONL files; duplicates and (with gold) unknown question ids are errors."""
    records: list[RunRecord] = []
    seen: dict[_RunKey, str] = {}
    for path in paths:
        p = Path(path)
        refuse_wrong_kind(p, "run")
        for lineno, obj in _first_run_line_named(p, jsonl_objects(p, read_text(p))):
            if not isinstance(obj, dict):
                raise InputError(f"{p}:{lineno}: expected an object, got {type(obj).__name__}")
            try:
                rec = RunRecord.model_validate(obj)
            except ValidationError as exc:
                raise InputError(f"{p}:{lineno}: {first_error(exc)}{_no_run_hint(p, seen)}") from None
            if gold is not None and rec.tests is not None:  # scored against a gold file: score, report, adjudicate
                raise InputError(
                    f"{p}:{lineno}: model {rec.model!r} question {rec.question_id!r} carries `tests` (a test-suite "
                    f"record, nothing to execute against the gold): use `jury suites {p}`"
                )
            key: _RunKey = (rec.model, rec.question_id)
            if rec.tests is not None:  # a test-suite turn may reuse its task's question_id
                key = (rec.model, rec.question_id, rec.episode, rec.turn)
            if key in seen:
                turn = f" (episode {rec.episode!r} turn {rec.turn})" if rec.tests is not None and rec.episode is not None else ""
                raise InputError(
                    f"{p}:{lineno}: duplicate answer of model {rec.model!r} to question "
                    f"{rec.question_id!r}{turn} (first at {seen[key]})"
                )
            if gold is not None and rec.question_id not in gold:
                raise InputError(f"{p}:{lineno}: unknown question_id {rec.question_id!r} (not in the gold file)")
            seen[key] = f"{p}:{lineno}"
            records.append(rec)
    if not records:
        raise InputError("no run records in " + ", ".join(str(p) for p in paths))
    return records


def _no_run_hint(p: Path, seen: dict[_RunKey, str]) -> str:
    """The hint that names the importer, when none of ``p``'s records has been read yet."""

    if any(where.rsplit(":", 1)[0] == str(p) for where in seen.values()):
        return ""
    return f"; not a run file (JSONL of model, question_id, sql)? {PREDICTIONS_HINT}"


def _first_run_line_named(p: Path, lines: Iterator[tuple[int, object]]) -> Iterator[tuple[int, object]]:
    """The lines of a run file; when its first record is not JSON the file is no run file at
    all, and the error says which command reads the files it may be instead."""

    try:
        yield next(lines)
    except StopIteration:
        return
    except InputError as exc:
        if "malformed JSON" not in str(exc):
            raise
        raise InputError(f"{exc}; not a run file (JSONL of model, question_id, sql): {PREDICTIONS_HINT}") from None
    yield from lines


def database_path(db_root: str | Path, db_id: str) -> Path:
    """BIRD's layout: <root>/<db_id>/<db_id>.sqlite."""
    return Path(db_root) / db_id / f"{db_id}.sqlite"


def require_database(db_root: str | Path | None, db_id: str) -> Path:
    if db_root is None:
        raise InputError(
            f"no database root, and database {db_id!r} is needed (a query without a recorded result runs on it): "
            "pass --db-root or set db_root in jury.toml"
        )
    path = database_path(db_root, db_id)
    if not path.is_file():
        raise DatabaseMissing(f"no database file for db_id {db_id!r}: expected {path}")
    return path


def canonical_v1(obj: Any) -> bytes:
    """jury's first canonical JSON, defined once: sorted keys (by code point), compact
    separators, UTF-8 (no ``\\u`` escapes), no NaN/Infinity (ValueError). Never change it:
    request hashes (which key the stored votes) and the lock of format_version 1 verdict
    files are sha256 of these bytes. Newer verdict files use RFC 8785 (jury/verdicts/lock.py)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def sha256_file(path: str | os.PathLike[str]) -> str:
    """sha256 hex of a regular file, read in 1 MiB chunks. A device, pipe or socket (a path
    to /dev/zero, a FIFO) is an InputError before any byte is read (`jury.inputs.reader.open_input`:
    opened without blocking, then checked), so it can neither hang nor hash forever. A link is
    followed (the bytes are hashed, never shown); a missing file's OSError passes through."""
    p = Path(path)
    h = hashlib.sha256()
    with open_input(p, contained=False, os_errors=True) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------- BIRD importers


def dump_runs(records: Iterable[RunRecord]) -> str:
    return "".join(json.dumps(r.model_dump(exclude_none=True), ensure_ascii=False) + "\n" for r in records)
