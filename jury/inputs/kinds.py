"""What kind of jury file a path holds, told from its first bytes.

jury reads six kinds of file: a **gold** file (BIRD's dev.json: a JSON list, or JSONL, of
items with ``db_id`` and ``SQL``), a **run** file (JSONL of ``model``, ``question_id``,
``sql``), a **verdict** file (one locked JSON document of kind ``adjudication`` or
``audit``), a **review** file (locked human review decisions), a **label** file (JSONL of
human labels) and a **panel** file (TOML with ``[[jurors]]``), besides jury.toml. Given one
where another is expected, a loader would stop on a confusing detail ("malformed JSON" on
the ``[`` of a gold list, or "db_id: Field required" a thousand lines in); each loader asks
``wrong_kind`` first and says "dev.json is a gold file, not a run file" instead.

Only the first ``SNIFF_BYTES`` are read, and only when a loader is about to fail or before
it starts (a few microseconds), so memory stays bounded whatever the file.

>>> kind_of_object({"model": "m", "question_id": 1, "sql": "SELECT 1"})
'run'
>>> kind_of_object({"question_id": 1, "db_id": "d", "SQL": "SELECT 1"})
'gold'
>>> kind_of_object({"question_id": 1, "gold_defective": False, "annotator": "A", "source": "s"})
'label'
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from jury.errors import JuryError
from jury.inputs.reader import open_input
from jury.inputs.records import RunRecord

SNIFF_BYTES = 64 * 1024
"""How much of a file is read to tell its kind."""

DESCRIBED = {
    "gold": "a gold file",
    "run": "a run file",
    "verdict": "a verdict file",
    "adjudication": "an adjudication verdict file",
    "audit": "an audit verdict file",
    "review": "a review file",
    "label": "a label file",
    "panel": "a panel file",
    "config": "a configuration file (jury.toml)",
    "predictions": "a BIRD predictions file",
    "sql_lines": "a one-SQL-per-line predictions file",
}
PREDICTION_KINDS = ("predictions", "sql_lines")
"""Published prediction files a run file may be (jury/inputs/importers.py reads them): BIRD's
predict_dev.json and one SQL per line (DAIL-SQL's .txt, GSR's .sql)."""
PREDICTIONS_HINT = (
    "a BIRD prediction file is read by `jury import bird-predictions FILE --gold dev.json` (or given to "
    "jury score, report and adjudicate as it is, with --positions-from when it indexes another gold file)"
)

_DOC_KIND = re.compile(r'"kind"\s*:\s*"(adjudication|audit|review)"')
# BIRD's predict_dev.json: an object of position -> "SQL\t----- bird -----\tdb_id", told from its start
# (the first entry may be a non-string, as BIRD's ChatGPT predictions' `0`: a missing answer)
_BIRD_START = re.compile(r'\A\s*\{\s*"\d+"\s*:')
_BIRD_SEPARATOR = "\\t----- bird -----\\t"  # as it is written inside a JSON string
# One SQL per line: the first line that is not blank starts a query
_SQL_START = re.compile(r"\A\s*(?:\(\s*)*(?:SELECT|WITH)\b", re.I)
_TOML_LINE = re.compile(r"^\s*(\[\[?\s*[A-Za-z_][\w.-]*\s*\]\]?|[A-Za-z_][\w-]*\s*=)", re.M)
_RUN_FIELDS = set(RunRecord.model_fields)
_CONFIG_KEYS = {"gold", "db_root", "verdicts_dir", "panel", "comparator", "executor"}


def kind_of_object(obj: Any) -> str | None:
    """The kind of file whose record (a JSONL line, a list item, a document) ``obj`` is, or None."""
    if not isinstance(obj, dict):
        return None
    keys = set(obj)
    if obj.get("kind") in ("adjudication", "audit", "review") and ("content_sha256" in keys or "format_version" in keys):
        return "review" if obj["kind"] == "review" else obj["kind"]
    if "gold_defective" in keys or ("label" in keys and ("annotator" in keys or "source" in keys)):
        return "label"
    if "model" in keys and "question_id" in keys and keys <= _RUN_FIELDS:
        return "run"
    if "question_id" in keys and "db_id" in keys and ("SQL" in keys or "sql" in keys):
        return "gold"
    if keys and all(k.isdigit() for k in keys) and any(isinstance(v, str) and "\t----- bird -----\t" in v for v in obj.values()):
        return "predictions"
    return None


def _first_value(text: str) -> Any:
    """The first JSON value of ``text`` (the first item of a list), or None if it does not parse."""
    decoder = json.JSONDecoder()
    pos = len(text) - len(text.lstrip())
    if text.startswith("[", pos):
        pos += 1
        pos += len(text[pos:]) - len(text[pos:].lstrip())
    try:
        return decoder.raw_decode(text, pos)[0]
    except (ValueError, RecursionError):
        return None


def sniff_kind(path: str | Path) -> str | None:
    """The kind of jury file at ``path`` from its first SNIFF_BYTES, or None (unknown, unreadable)."""
    try:  # through the bounded reader: a regular file inside its folder (the loaders say why not)
        with open_input(path) as fh:
            head_bytes = fh.read(SNIFF_BYTES + 1)
    except (OSError, ValueError, JuryError):
        return None
    whole = len(head_bytes) <= SNIFF_BYTES
    head = head_bytes[:SNIFF_BYTES].decode("utf-8", errors="replace").removeprefix("\ufeff")
    start = head.lstrip()[:1]
    if start == "{" and _BIRD_START.match(head) and _BIRD_SEPARATOR in head:
        return "predictions"  # even when the head cuts the object short (a pretty-printed file of 300 KB)
    if start in ("[", "{"):
        m = _DOC_KIND.search(head)
        if m and "content_sha256" in head:
            return m.group(1)
        kind = kind_of_object(_first_value(head.split("\n", 1)[0]) if start == "{" else None)
        if kind is None:
            kind = kind_of_object(_first_value(head))
        if kind is not None or start == "{":
            return kind
    if _TOML_LINE.search(head):  # TOML (a panel, jury.toml); `[[jurors]]` also starts with "["
        try:
            doc = tomllib.loads(head) if whole else None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            doc = None
        if doc is not None:
            if "jurors" in doc:
                return "panel"
            if set(doc) & _CONFIG_KEYS:
                return "config"
        elif re.search(r"^\s*\[\[jurors\]\]", head, re.M):
            return "panel"
    first = next((line for line in head.split("\n") if line.strip()), "")
    if start not in ("[", "{") and _SQL_START.match(first):
        return "sql_lines"
    return None


def wrong_kind(path: str | Path, expected: str, *, also: tuple[str, ...] = ()) -> str | None:
    """ "<path> is a gold file, not a run file" when ``path`` holds a recognised kind other than
    ``expected`` (or one of ``also``); None when it is of that kind or not recognised."""
    kind = sniff_kind(path)
    if kind is None or kind == expected or kind in also:
        return None
    if expected == "verdict" and kind in ("adjudication", "audit"):
        return None
    hint = f": {PREDICTIONS_HINT}" if kind in PREDICTION_KINDS else ""
    return f"{path} is {DESCRIBED.get(kind, kind)}, not {DESCRIBED.get(expected, expected)}{hint}"
