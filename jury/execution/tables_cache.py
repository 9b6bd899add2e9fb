"""The tables each SQL text reads (jury.execution.schema.tables_in), remembered between
processes: parsing is most of what `jury adjudicate --plan` costs at a benchmark's size (5,320
distinct texts at 36 models x 759 questions, 1.9 s of CPU), and the plan, the run after it and
every later plan parse the same texts again.

`sql-tables.json` in jury's user cache folder (jury.inputs.user_cache) maps sha256(dialect NUL
sql) to the table names sqlglot found, for one sqlglot version (another version's file is
ignored whole: its parser may read a text otherwise). It is read through the bounded reader and
written through the one writer (a temporary file renamed over it: a reader sees it whole or not
at all); two processes writing at once may each drop the other's new entries, which are parsed
again next time. A file that cannot be read or written, is too large, or holds anything but
lists of names under 64-hex-digit keys is ignored (entry by entry where it can be): the texts
are then parsed, so the cache changes how fast a ballot is made, never what it says. Past
:data:`MAX_ENTRIES` names the oldest entries are dropped when it is written.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from importlib import metadata

from jury.inputs.user_cache import read_entries, write_entries

FILE_NAME = "sql-tables.json"
MAX_CACHE_BYTES = 64 * 1024 * 1024
MAX_ENTRIES = 200_000
_FORMAT = 1
_KEY = re.compile(r"[0-9a-f]{64}")

enabled = True  # False: nothing is read or written (every text parsed)


@functools.cache
def _sqlglot_version() -> str:

    return metadata.version("sqlglot")


def key(sql: str, dialect: str) -> str:
    return hashlib.sha256(f"{dialect}\0{sql}".encode()).hexdigest()


def load() -> dict[str, list[str]]:
    """The remembered tables by key; empty when there is no usable file."""
    if not enabled:
        return {}
    stamp = {"format": _FORMAT, "sqlglot": _sqlglot_version()}
    tables = read_entries(FILE_NAME, MAX_CACHE_BYTES, "jury's cache of SQL tables", stamp, "tables")
    return {
        k: v
        for k, v in tables.items()
        if isinstance(k, str) and _KEY.fullmatch(k) and isinstance(v, list) and all(isinstance(t, str) for t in v)
    }


def save(known: Mapping[str, list[str]], new: Mapping[str, list[str]]) -> None:
    """Write ``known`` (what load gave) with ``new`` added, newest last (best effort)."""
    if not enabled or not new:
        return
    merged = {k: v for k, v in known.items() if k not in new}
    merged.update(new)
    if len(merged) > MAX_ENTRIES:
        merged = dict(list(merged.items())[-MAX_ENTRIES:])
    write_entries(FILE_NAME, {"format": _FORMAT, "sqlglot": _sqlglot_version()}, "tables", merged)
