"""The lock on a verdict file: canonical forms, content hash, writing and reading locked files.

``content_sha256`` is ``"sha256:" + sha256(canonical JSON of everything else)``. Which
canonical JSON depends on the file's ``format_version``:

- 2 (what jury writes): RFC 8785, the JSON Canonicalization Scheme, through the
  ``rfc8785`` package: keys sorted by UTF-16 code units, numbers as ECMAScript prints
  them (``0`` for ``0.0``, ``1e-7``), integers only up to 2**53 - 1 in magnitude.
- 1 (files written before): ``jury.inputs.io.canonical_v1``: sorted keys (by code point),
  compact separators, UTF-8 as Python's ``json.dumps`` writes numbers. Still verified.

Whitespace and key order in the file therefore do not matter; any change to a value does.
Every reader goes through ``load_locked``, which checks the lock before it trusts anything
in the file. A locked file is never rewritten: a correction is a new file that names its
predecessor's ``content_sha256`` in ``supersedes``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, overload

import rfc8785
from pydantic import BaseModel

from jury.errors import InputError, JuryError, VerdictError
from jury.inputs.io import canonical_v1, loads_document, read_text
from jury.inputs.kinds import wrong_kind
from jury.inputs.reader import open_input
from jury.inputs.writer import write_new
from jury.verdicts.documents import (
    FORMAT_VERSION,
    GROUP,
    KINDS,
    LOCK_KEY,
    AdjudicationFile,
    AdjudicationRecord,
    AuditFile,
    AuditRecord,
    RecordDumps,
    VerdictFile,
    materialized,
    pretty_chunks,
    record_key,
    schema_filename,
    validate_document,
)
from jury.vocab import REVIEW_KIND

_NEVER_REWRITTEN = "a locked verdict file is never rewritten: write a new file"


def canonical_rfc8785(obj: Any) -> bytes:
    """RFC 8785 (JCS) bytes of ``obj``; ValueError for what JCS cannot represent (NaN,
    integers beyond 2**53 - 1, lone surrogates, non-string keys).

    The ``rfc8785`` package's bytes, through ``json.dumps`` (C) where they are the same (issue
    46: the package encodes in Python, a third of a second for a 14 MB verdict file): for plain
    JSON types with string keys, no character from U+D800 up and integers within 2**53 - 1, JCS
    is sorted keys, compact separators and UTF-8 with the same escapes; floats, whose JCS form
    is not Python's, are printed by the package. Anything else is the package's to encode (or
    refuse)."""
    fast = _jcs_through_json(obj)
    return fast if fast is not None else rfc8785.dumps(obj)


_JCS_INT = 2**53  # JCS integers are below this in magnitude
_FROM_SURROGATES = re.compile("[\ud800-\U0010ffff]")  # UTF-16 and code-point order differ only from here
_UNSUPPORTED = object()
_LEAVES = frozenset({str, bool, type(None)})


def _jcs_through_json(obj: Any) -> bytes | None:
    """canonical_rfc8785 through json.dumps, or None where it could differ from the package's."""
    floats: list[float] = []
    nonce = secrets.token_hex(8)
    try:
        plain = _floats_marked(obj, floats, nonce)
    except RecursionError:
        return None
    if plain is _UNSUPPORTED:
        return None
    text = json.dumps(plain, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if _FROM_SURROGATES.search(text):
        return None
    if floats:
        try:
            forms = [rfc8785.dumps(f).decode("ascii") for f in floats]
        except ValueError:  # NaN or an infinity: the package's refusal
            return None
        marker = re.compile(f'"\\\\u0000{nonce}:(\\d+)\\\\u0000"')
        if len(marker.findall(text)) != len(floats):
            return None
        text = marker.sub(lambda m: forms[int(m.group(1))], text)
    return text.encode("utf-8")


def _floats_marked(x: Any, floats: list[float], nonce: str) -> Any:
    """``x`` with every float replaced by a marker string naming its index in ``floats`` (a
    container is copied only when it holds one), or _UNSUPPORTED for anything but str, int,
    bool, None, float, list and str-keyed dict (exact types) or an integer JCS refuses."""
    t = type(x)
    if t is str or t is bool or x is None:
        return x
    if t is int:
        return x if -_JCS_INT < x < _JCS_INT else _UNSUPPORTED
    if t is float:
        floats.append(x)
        return f"\x00{nonce}:{len(floats) - 1}\x00"
    if t is list:
        pairs: Any = enumerate(x)
    elif t is dict:
        if any(type(k) is not str for k in x):
            return _UNSUPPORTED
        pairs = x.items()
    else:
        return _UNSUPPORTED
    copy = None
    for key, v in pairs:
        if type(v) in _LEAVES:  # most values: no call
            continue
        w = _floats_marked(v, floats, nonce)
        if w is _UNSUPPORTED:
            return _UNSUPPORTED
        if w is not v:
            if copy is None:
                copy = list(x) if t is list else dict(x)
            copy[key] = w
    return x if copy is None else copy


CANONICAL_FORMS: dict[int, Callable[[Any], bytes]] = {1: canonical_v1, 2: canonical_rfc8785}
"""format_version -> the canonical JSON its lock hashes."""
assert FORMAT_VERSION in CANONICAL_FORMS


def format_of(doc: dict[str, Any]) -> int:
    """The document's ``format_version`` (the current one when absent); a one-line
    VerdictError for one this jury cannot check."""
    version = doc.get("format_version", FORMAT_VERSION)
    if type(version) is not int or version not in CANONICAL_FORMS:
        known = ", ".join(str(v) for v in CANONICAL_FORMS)
        raise VerdictError(
            f"format_version: {version!r} is not a format this jury can check (it reads {known}); "
            "a newer jury may have written it"
        )
    return version


def canonical_json(obj: Any, format_version: int = FORMAT_VERSION) -> bytes:
    """The bytes the lock of a ``format_version`` file hashes (RFC 8785 for 2, v1 for 1)."""
    return CANONICAL_FORMS[format_version](obj)


def canonical_chunks(obj: Any, format_version: int = FORMAT_VERSION) -> Iterator[bytes]:
    """``canonical_json(obj, format_version)`` in pieces whose concatenation is its bytes, never
    the whole at once (issue 46: a verdict file's records are tens of MB). RFC 8785 is
    compositional: an object is ``{`` its members sorted by key, ``"key":value`` joined by ``,``
    then ``}``, an array its items joined by ``,`` in ``[ ]``, with no whitespace; so a top-level
    object's values, and the items of a list value in groups (the group's array without its
    brackets), are encoded apart. Keys are sorted as JCS sorts them (UTF-16 code units) only
    where that is code-point order: with a key from U+D800 up, or any other form, the object is
    encoded whole. A RecordDumps value (jury.verdicts.documents) is encoded a group of records
    at a time, never dumped whole."""
    whole = format_version != 2 or type(obj) is not dict or not all(type(k) is str for k in obj)
    if whole or any(_FROM_SURROGATES.search(k) for k in obj):
        yield canonical_json(materialized(obj), format_version)
        return
    yield b"{"
    for n, key in enumerate(sorted(obj)):
        yield (b"," if n else b"") + canonical_rfc8785(key) + b":"
        value = obj[key]
        if isinstance(value, RecordDumps):
            groups: Iterator[list[Any]] = value.groups()
        elif type(value) is list and len(value) > GROUP:
            groups = (value[start : start + GROUP] for start in range(0, len(value), GROUP))
        else:
            yield canonical_rfc8785(value)
            continue
        yield b"["
        for m, group in enumerate(groups):
            yield (b"," if m else b"") + canonical_rfc8785(group)[1:-1]
        yield b"]"
    yield b"}"


def content_hash(doc: dict[str, Any]) -> str:
    """``"sha256:<hex>"`` of the canonical JSON (by the doc's ``format_version``) of ``doc``
    without its ``content_sha256`` key, hashed as it is encoded (canonical_chunks)."""
    version = format_of(doc)
    body = {k: v for k, v in doc.items() if k != LOCK_KEY}
    digest = hashlib.sha256()
    try:
        for chunk in canonical_chunks(body, version):
            digest.update(chunk)
    except (ValueError, UnicodeEncodeError) as exc:
        form = "RFC 8785" if version == 2 else f"format_version {version}"
        raise VerdictError(f"verdict document is not canonical JSON ({form}): {exc}") from None
    return "sha256:" + digest.hexdigest()


def lock(
    doc: VerdictFile | dict[str, Any], validate: Callable[[dict[str, Any]], BaseModel] = validate_document
) -> dict[str, Any]:
    """Validate ``doc`` (a verdict document, or what ``validate`` checks: a review file,
    jury/verdicts/review.py, the same lock) and return its JSON dict (aliases, JSON types) with
    the lock set. jury writes only the current format: ``format_version`` and ``$schema`` are
    set to it (``validate`` may set another ``$schema``)."""
    out: dict[str, Any] = materialized(_locked(doc, validate))
    return out


def _locked(doc: VerdictFile | dict[str, Any], validate: Callable[[dict[str, Any]], BaseModel]) -> dict[str, Any]:
    """lock(doc, validate), but a verdict document's records are a RecordDumps of the records
    given (checked one by one), never held as models or dumps all at once (issue 46)."""
    if isinstance(doc, VerdictFile) and validate is validate_document:
        data = doc.model_dump(by_alias=True, mode="json", exclude={"records"})
        data["records"] = doc.records
    else:
        data = doc.model_dump(by_alias=True, mode="json") if isinstance(doc, BaseModel) else dict(doc)
    data.pop(LOCK_KEY, None)
    data["format_version"] = FORMAT_VERSION
    if isinstance(data.get("kind"), str) and data["kind"] in KINDS:
        data["$schema"] = f"schema/{schema_filename(data['kind'])}"
    out = _checked_by_record(data) if validate is validate_document else None
    if out is None:
        if isinstance(doc, VerdictFile) and validate is validate_document:
            data["records"] = [r.model_dump(by_alias=True, mode="json") for r in doc.records]
        checked = validate(data)
        del data  # one copy of the document at a time (issue 46)
        out = checked.model_dump(by_alias=True, mode="json")
        del checked
    out.pop(LOCK_KEY, None)
    out[LOCK_KEY] = content_hash(out)
    return out


_RECORD_MODELS: dict[str, type[AdjudicationRecord] | type[AuditRecord]] = {
    "adjudication": AdjudicationRecord,
    "audit": AuditRecord,
}


def _checked_by_record(data: dict[str, Any]) -> dict[str, Any] | None:
    """A verdict document validated as validate_document does, but its records one at a time:
    its JSON dict, whose ``records`` are a RecordDumps of ``data``'s; None when anything does
    not validate (or the records are not a list), so that validate_document checks the whole
    and says what is wrong as it always did."""
    records = data.get("records")
    model = _RECORD_MODELS.get(data["kind"]) if isinstance(data.get("kind"), str) else None
    if model is None or type(records) is not list:
        return None
    dumps = RecordDumps(records, model)
    seen: set[tuple[str | int | None, ...]] = set()
    try:
        head = validate_document({**data, "records": []})
        for record in records:
            dumped = record.model_dump(by_alias=True, mode="json") if isinstance(record, BaseModel) else record
            key = record_key(model.model_validate(dumped))
            if key in seen:
                return None
            seen.add(key)
    except (VerdictError, ValueError):  # pydantic's ValidationError is a ValueError
        return None
    out = head.model_dump(by_alias=True, mode="json")
    out["records"] = dumps
    return out


def write_locked(
    doc: VerdictFile | dict[str, Any],
    path: str | Path,
    validate: Callable[[dict[str, Any]], BaseModel] = validate_document,
) -> Path:
    """Lock ``doc`` and write it to ``path``, where nothing may exist yet (a file, a device, a
    FIFO, a link: all refused; jury.inputs.writer.write_new).

    The write is atomic (a crash leaves no partial file) and, where the file system has
    hard links, the final step cannot replace a file another process wrote meanwhile.
    """
    p = Path(path)
    if os.path.lexists(p):
        raise VerdictError(f"{p}: already exists; {_NEVER_REWRITTEN}")
    locked = _locked(doc, validate)
    try:
        write_new(p, pretty_chunks(locked))  # written as encoded, never the whole text at once
    except FileExistsError:
        raise VerdictError(f"{p}: already exists; {_NEVER_REWRITTEN}") from None
    if validate is validate_document:
        _WRITTEN.clear()
        _WRITTEN[_identity(p)] = {k: v for k, v in locked.items() if k != "records"}
    return p


_WRITTEN: dict[tuple[str, int, int, int, int], dict[str, Any]] = {}
"""The last verdict file write_locked wrote, by _identity: its JSON dict without its records."""


def _identity(p: Path) -> tuple[str, int, int, int, int]:
    st = p.stat()
    return (str(p.resolve()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def locked_head(path: str | Path) -> dict[str, Any]:
    """A locked verdict file's JSON dict without its records, after load_locked's checks; the
    file write_locked last wrote in this process (the same path, inode, size and time) is not
    read back (issue 46: reading it holds its whole document again, only to say its totals)."""
    p = Path(path)
    try:
        known = _WRITTEN.get(_identity(p))
    except OSError:
        known = None
    if known is not None:
        return known
    return load_locked(p).model_dump(by_alias=True, mode="json", exclude={"records"})


def utc_now() -> str:
    """The current time as jury stamps it: ``2026-11-29T20:00:00Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_path(kind: str, verdicts_dir: str | Path, created_at: str | datetime) -> Path:
    """``<verdicts_dir>/<kind>-20261129T200000Z.json``, with -2, -3, ... if taken."""
    if kind not in KINDS:
        raise VerdictError(f"unknown verdict kind {kind!r}; expected one of: {', '.join(KINDS)}")
    when = created_at if isinstance(created_at, datetime) else datetime.fromisoformat(created_at)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    stem = f"{kind}-{when.strftime('%Y%m%dT%H%M%SZ')}"
    folder = Path(verdicts_dir)
    candidate, n = folder / f"{stem}.json", 1
    while candidate.exists():
        n += 1
        candidate = folder / f"{stem}-{n}.json"
    return candidate


# ------------------------------------------------------------------ reading


def read_verdict_json(p: Path, *, unless_absent: str | None = None) -> Any:
    """Through the one safe JSON loader (depth, size, duplicate keys, NaN); a gold, run, label
    or panel file given as a verdict file is named as such (jury/inputs/kinds.py).

    ``unless_absent``: a string the caller needs among the file's values (a hash it looks for):
    None, without parsing, when the text holds neither it nor a ``\\u`` escape (which could
    spell it), so the file cannot hold it."""
    problem = wrong_kind(p, "verdict", also=("review",))
    if problem:
        raise VerdictError(problem)
    text = read_text(p)
    if unless_absent is not None and unless_absent not in text and "\\u" not in text:
        return None
    try:
        return loads_document(text, str(p))
    except InputError as exc:  # malformed, duplicate key, NaN/Infinity, too deep, lone surrogate
        raise VerdictError(str(exc)) from None


def read_locked_kind(path: str | Path, kind: str, what: str) -> tuple[Path, dict[str, Any]]:
    """A locked document of ``kind`` read and its lock checked (its schema is the caller's):
    (its path, its data); InputError when there is no file, VerdictError when it is of
    another kind or its lock does not match. ``what`` names the file in the messages."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such {what}")
    data = loads_document(read_text(p), str(p))
    if isinstance(data, dict) and data.get("kind") != kind:
        article = "an" if what[:1] in "aeiou" else "a"
        raise VerdictError(f"{p}: is {data.get('kind')!r}, not {article} {what}")
    check_lock(p, data)
    return p, data


def check_lock(p: Path, data: Any) -> None:
    """Refuse ``data`` read from ``p`` unless it is a JSON object whose lock matches its content."""
    if not isinstance(data, dict):
        raise VerdictError(f"{p}: expected a JSON object, got {type(data).__name__}")
    claimed = data.get(LOCK_KEY)
    if claimed is None:
        raise VerdictError(f"{p}: not locked: no {LOCK_KEY}")
    try:
        actual = content_hash(data)
    except VerdictError as exc:
        raise VerdictError(f"{p}: {exc}") from None
    if claimed != actual:
        raise VerdictError(
            f"{p}: content hash mismatch: the file was changed after it was locked (expected {claimed}, got {actual})"
        )


def is_locked_file(path: str | Path) -> bool:
    """Does this path hold a (claimed) locked verdict file? Commands never write over one."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        with open_input(p, contained=False, os_errors=True) as fh:  # a link is followed: a guard, never shown
            head = fh.read(1 << 20)
    except (OSError, JuryError):
        return False
    return LOCK_KEY.encode() in head and b'"kind"' in head


def files_bound_by(folder: str | Path) -> list[tuple[Path, Path]]:
    """(bound file, verdict file) for every input file (gold, runs, databases, panel, prompts)
    that a locked verdict or review file directly in ``folder`` binds; bound paths are resolved
    against the verdict file's folder. Unreadable or unlocked files are skipped (`jury verify`
    reports them). Outputs never overwrite these: a changed input makes every verdict stale."""
    out: list[tuple[Path, Path]] = []
    root = Path(folder)
    if not root.is_dir():
        return out
    for vf in sorted(root.glob("*.json")):
        if not is_locked_file(vf):
            continue
        try:
            data = loads_document(read_text(vf), str(vf))
        except (InputError, OSError):
            continue
        if not isinstance(data, dict) or data.get("kind") not in (*KINDS, REVIEW_KIND):
            continue
        stack: list[Any] = [v for k, v in data.items() if k != "records"]  # inputs, panel, prompts, settings
        while stack:
            x = stack.pop()
            if isinstance(x, dict):
                if isinstance(x.get("path"), str) and isinstance(x.get("sha256"), str):
                    bound = Path(x["path"])
                    out.append((bound if bound.is_absolute() else vf.parent / bound, vf))
                stack.extend(v for v in x.values() if isinstance(v, dict | list))
            elif isinstance(x, list):
                stack.extend(x)
    return out


def load_locked(path: str | Path) -> VerdictFile:
    """Read a verdict file, check its lock, validate it, then recompute its verdicts from its
    votes (``check_rules``). Every verdict reader uses this."""
    p = Path(path)
    data = read_verdict_json(p)
    check_lock(p, data)
    doc = validate_document(data, source=str(p))
    check_rules(doc, p)
    return doc


def check_rules(doc: VerdictFile, source: str | Path = "verdict document") -> None:
    """Refuse a file whose verdicts, flags, credit or summary counts do not follow from its
    own votes under its own rules (k, early stop, quorum, ballot style; jury/judging/rules.py).
    The lock only proves the file is unchanged since it was locked, not that it is consistent."""
    from jury.judging.rules import check_document

    problem = check_document(doc)
    if problem:
        raise VerdictError(f"{source}: {problem}; refused: the verdicts must follow from the votes")


# A document's kind picks its model (validate_document's discriminator), and load_kind refuses
# another kind: an "audit" file is an AuditFile, an "adjudication" file an AdjudicationFile.
@overload
def load_kind(path: str | Path, kind: Literal["audit"]) -> AuditFile: ...


@overload
def load_kind(path: str | Path, kind: Literal["adjudication"]) -> AdjudicationFile: ...


@overload
def load_kind(path: str | Path, kind: str) -> VerdictFile: ...


def load_kind(path: str | Path, kind: str) -> VerdictFile:
    """load_locked, then refuse a file of another kind (an audit given as adjudication...)."""
    doc = load_locked(path)
    if doc.kind != kind:
        raise VerdictError(f"{path}: is an {doc.kind} file, not an {kind}")
    return doc


def superseded_by(path: str | Path, doc: VerdictFile) -> list[Path]:
    """The verdict files in the same folder that name ``doc`` in ``supersedes`` and hold
    their own lock (a re-audit writes its new file beside the old one)."""
    p = Path(path)
    out = []
    for other in sorted(p.parent.glob("*.json")):
        if not other.is_file() or other.resolve() == p.resolve():
            continue
        try:
            data = read_verdict_json(other, unless_absent=doc.content_sha256)
        except (OSError, VerdictError):
            continue  # not a verdict file, or a damaged one: `jury verify` reports it
        if not isinstance(data, dict) or data.get("kind") not in KINDS or data.get("supersedes") != doc.content_sha256:
            continue
        try:
            check_lock(other, data)
        except VerdictError:
            continue
        out.append(other)
    return out


@overload
def load_current(path: str | Path, kind: Literal["audit"], *, allow_superseded: bool = False) -> AuditFile: ...


@overload
def load_current(path: str | Path, kind: Literal["adjudication"], *, allow_superseded: bool = False) -> AdjudicationFile: ...


@overload
def load_current(path: str | Path, kind: str, *, allow_superseded: bool = False) -> VerdictFile: ...


def load_current(path: str | Path, kind: str, *, allow_superseded: bool = False) -> VerdictFile:
    """load_kind, then refuse a file that a newer verdict file in its folder supersedes
    (its numbers are the old panel's) unless ``allow_superseded``."""
    doc = load_kind(path, kind)
    if not allow_superseded:
        newer = superseded_by(path, doc)
        if newer:
            raise VerdictError(
                f"{path}: superseded by {', '.join(str(n) for n in newer)} (re-run with a changed panel, prompt "
                "or inputs); use that file, or pass --allow-superseded to publish the old numbers anyway"
            )
    return doc
