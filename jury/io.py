"""Reading users' files: gold JSON, run JSONL, and BIRD prediction files.

Every problem becomes an ``InputError`` whose message names the file, the line (or item)
and the offending value, so the CLI can print it as one line.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from jury.errors import DatabaseMissing, InputError
from jury.records import GoldItem, QuestionId, RunRecord

BIRD_SEPARATOR = "\t----- bird -----\t"


@contextmanager
def file_errors(p: Path):
    """Turn a missing or unreadable file into a one-line InputError naming it."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, expected a file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror}") from None


def read_text(path: str | Path) -> str:
    """Read a UTF-8 file; a missing, empty or non-UTF-8 file is an InputError."""
    p = Path(path)
    with file_errors(p):
        data = p.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start : exc.start + 4]
        raise InputError(
            f"{p}:{line}: not UTF-8 (byte {bad!r} at offset {exc.start})"
        ) from None
    if not text.strip():
        raise InputError(f"{p}: file is empty")
    return text.removeprefix("\ufeff")


def _first_error(exc: ValidationError) -> str:
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
    text = read_text(p)
    items: list[tuple[str, object]]
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}:{exc.lineno}: malformed JSON: {exc.msg}") from None
        if not isinstance(data, list):
            raise InputError(f"{p}: expected a JSON list of gold items")
        items = [(f"{p} item {i}", obj) for i, obj in enumerate(data)]
    else:
        items = [(f"{p}:{lineno}", obj) for lineno, obj in _jsonl(p, text)]
    out = []
    for where, obj in items:
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected an object, got {type(obj).__name__}")
        try:
            out.append((where, GoldItem.model_validate(obj)))
        except ValidationError as exc:
            raise InputError(f"{where}: {_first_error(exc)}") from None
    if not out:
        raise InputError(f"{p}: no gold items")
    return out


def _jsonl(p: Path, text: str) -> Iterator[tuple[int, object]]:
    # "\n" only: str.splitlines() would also split inside strings at U+2028, U+0085, ...
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{p}:{lineno}: malformed JSON ({exc.msg}): {line.strip()[:60]!r}"
            ) from None


def load_runs(
    paths: Iterable[str | Path], gold: dict[QuestionId, GoldItem] | None = None
) -> list[RunRecord]:
    """Load run JSONL files; duplicates and (with gold) unknown question ids are errors."""
    records: list[RunRecord] = []
    seen: dict[tuple[str, QuestionId], str] = {}
    for path in paths:
        p = Path(path)
        for lineno, obj in _jsonl(p, read_text(p)):
            if not isinstance(obj, dict):
                raise InputError(f"{p}:{lineno}: expected an object, got {type(obj).__name__}")
            try:
                rec = RunRecord.model_validate(obj)
            except ValidationError as exc:
                raise InputError(f"{p}:{lineno}: {_first_error(exc)}") from None
            key = (rec.model, rec.question_id)
            if key in seen:
                raise InputError(
                    f"{p}:{lineno}: duplicate answer of model {rec.model!r} to question "
                    f"{rec.question_id!r} (first at {seen[key]})"
                )
            if gold is not None and rec.question_id not in gold:
                raise InputError(
                    f"{p}:{lineno}: unknown question_id {rec.question_id!r} (not in the gold file)"
                )
            seen[key] = f"{p}:{lineno}"
            records.append(rec)
    if not records:
        raise InputError("no run records in " + ", ".join(str(p) for p in paths))
    return records


def database_path(db_root: str | Path, db_id: str) -> Path:
    """BIRD's layout: <root>/<db_id>/<db_id>.sqlite."""
    return Path(db_root) / db_id / f"{db_id}.sqlite"


def require_database(db_root: str | Path | None, db_id: str) -> Path:
    if db_root is None:
        raise InputError("no database root: pass --db-root or set db_root in jury.toml")
    path = database_path(db_root, db_id)
    if not path.is_file():
        raise DatabaseMissing(f"no database file for db_id {db_id!r}: expected {path}")
    return path


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, text: str) -> None:
    """Write a file so a crash leaves either the old file or the whole new one."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{p}: is a directory; give a file name to write")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    except OSError as exc:
        raise InputError(f"{p}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; published files follow the umask
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- BIRD importers


@dataclass
class ImportReport:
    records: list[RunRecord]
    entries: int = 0
    missing: list[QuestionId] = field(default_factory=list)
    odd: list[str] = field(default_factory=list)


def import_bird_predictions(
    path: str | Path,
    gold_items: list[GoldItem],
    model: str,
    *,
    only_db: set[str] | None = None,
    family: str | None = None,
) -> ImportReport:
    """Read BIRD's predict_dev.json or a one-SQL-per-line text file into run records.

    Questions are indexed by position in the gold file. The SQL is kept exactly as the
    model wrote it (trailing junk included: it is the model's answer). A non-string JSON
    entry, an absent position or an empty line is a missing answer.
    """
    p = Path(path)
    if not model.strip():
        raise InputError("--model must name the model (got an empty name)")
    text = read_text(p)
    if text.lstrip().startswith("["):
        raise InputError(f"{p}: a JSON list; expected BIRD's object of position -> prediction, or one SQL per line")
    if text.lstrip().startswith("{"):
        answers = _bird_json_answers(p, text, len(gold_items))
    else:
        lines = text.split("\n")
        if text.endswith("\n"):
            lines = lines[:-1]
        if len(lines) > len(gold_items):
            raise InputError(
                f"{p}:{len(gold_items) + 1}: {len(lines)} lines but the gold file has "
                f"only {len(gold_items)} questions"
            )
        answers = {i: (line.rstrip("\r"), None, None) for i, line in enumerate(lines)}
    report = ImportReport(records=[], entries=len(answers))
    seen: set = set()
    for i, item in enumerate(gold_items):
        if only_db and item.db_id not in only_db:
            continue
        if item.question_id in seen:  # a repeated gold item: its first position's answer counts
            report.odd.append(f"{i}: repeats question {item.question_id!r}; skipped")
            continue
        seen.add(item.question_id)
        sql, db_id, odd = answers.get(i, (None, None, None))
        if odd:
            report.odd.append(f"{i}: {odd}")
        if sql is None or not sql.strip():
            report.missing.append(item.question_id)
            sql = None
        report.records.append(
            RunRecord(model=model, question_id=item.question_id, db_id=db_id, sql=sql, family=family)
        )
    return report


def _bird_json_answers(p: Path, text: str, n_gold: int) -> dict[int, tuple]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}:{exc.lineno}: malformed JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise InputError(f"{p}: expected an object of index -> prediction")
    answers: dict[int, tuple] = {}
    for key, value in data.items():
        try:
            index = int(key)
        except ValueError:
            raise InputError(f"{p}: key {key!r} is not a question position") from None
        if not 0 <= index < n_gold:
            raise InputError(
                f"{p}: key {key!r} is outside the gold file's {n_gold} questions"
            )
        if index in answers:
            raise InputError(f"{p}: key {key!r} repeats question position {index}")
        if not isinstance(value, str):
            answers[index] = (None, None, f"non-string entry {json.dumps(value)[:40]}")
            continue
        if BIRD_SEPARATOR in value:
            sql, _, db_id = value.rpartition(BIRD_SEPARATOR)
            answers[index] = (sql, db_id.strip() or None, None)
        else:
            answers[index] = (value, None, "no database separator")
    return answers


def dump_runs(records: Iterable[RunRecord]) -> str:
    return "".join(
        json.dumps(r.model_dump(exclude_none=True), ensure_ascii=False) + "\n" for r in records
    )
