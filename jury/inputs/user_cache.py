"""jury's user cache folder: what jury remembers between processes that is not a project's
(``$JURY_CACHE_DIR``, else ``$XDG_CACHE_HOME/jury``, else ``~/.cache/jury``). Everything in it is
a cache: a file there that cannot be read is no error, and nothing in it changes a number."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The folder (not created here: the one writer makes it when a cache is written)."""
    explicit = os.environ.get("JURY_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jury"
