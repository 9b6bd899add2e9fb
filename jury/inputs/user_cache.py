"""jury's user cache folder: what jury remembers between processes that is not a project's
(``$JURY_CACHE_DIR``, else ``$XDG_CACHE_HOME/jury``, else ``~/.cache/jury``). Everything in it is
a cache: a file there that cannot be read is no error, and nothing in it changes a number."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jury.errors import JuryError
from jury.inputs.reader import read_bounded
from jury.inputs.writer import write_output


def cache_dir() -> Path:
    """The folder (not created here: the one writer makes it when a cache is written)."""
    explicit = os.environ.get("JURY_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jury"


def read_entries(name: str, cap: int, what: str, stamp: Mapping[str, Any], field: str) -> dict[str, Any]:
    """The mapping under ``field`` of the cache file ``name``, when the file's ``stamp`` keys (its
    format, the versions it was made by) equal ``stamp``; {} for a file absent, over ``cap``
    bytes, a link, unreadable, not JSON or of another stamp (read through the bounded reader)."""
    try:
        data = json.loads(read_bounded(cache_dir() / name, cap, what=what))
    except (JuryError, OSError, ValueError):
        return {}
    if not isinstance(data, dict) or any(data.get(k) != v for k, v in stamp.items()):
        return {}
    entries = data.get(field)
    return entries if isinstance(entries, dict) else {}


def write_entries(name: str, stamp: Mapping[str, Any], field: str, entries: Mapping[str, Any]) -> None:
    """Write the cache file ``name`` (its stamp and ``entries`` under ``field``) through the one
    writer: a temporary file renamed over it. Best effort: a cache that cannot be written is skipped."""
    body = json.dumps({**stamp, field: entries}, sort_keys=True, separators=(",", ":"))
    try:
        write_output(cache_dir() / name, body)
    except (JuryError, OSError):
        return
