"""``jury.jobs.local_juror``' options (``jury local-juror start``'s, ``status``'s and ``stop``'s)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from jury.options import Flag, OneOrMany, Options


class LocalJurorOptions(Options):
    """What ``local_juror_status`` and ``stop_local_juror`` can be asked: the local juror's state folder."""

    state_dir: Path | None = None
    """Folder of the server's state file, models and log (default: local-juror/ beside the store)."""


class LocalJurorStartOptions(LocalJurorOptions):
    """What ``start_local_juror`` can be asked: the state folder, the first port, the models and
    the threads per model."""

    port: int = Field(8765, ge=1, le=65535)
    """Loopback port of the first model; the next model gets the next port (local-demo expects 8765, 8766)."""
    models: Annotated[OneOrMany[str], Flag(flags=("--model",))] = []
    """Model alias to serve (repeatable; default: gemma-3-270m and smollm2-135m)."""
    threads: int | None = Field(None, ge=1)
    """CPU threads per model (default: every core)."""
