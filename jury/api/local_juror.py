"""The local juror: llama.cpp serving small real models on loopback ports (``jury local-juror
start|status|stop``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from jury.api.result import Result
from jury.pipeline.project import PathLike, Project


class LocalJurorState(Result):
    """The local juror after ``start``, ``status`` or ``stop`` (``state``: None when none was
    started from the state folder). ``ok`` is False when ``status`` finds it not answering."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "md")

    action: str  # start, status or stop
    state: Any = None  # jury.pipeline.local_juror.LocalJuror
    state_dir: Path

    @property
    def ok(self) -> bool:
        """False when ``status`` finds the local juror not answering; True otherwise."""
        return self.action != "status" or (self.state is not None and self.state.answering)

    @property
    def exit_code(self) -> int:
        """The command's exit code: 0 when ``ok``, else 1."""
        return 0 if self.ok else 1

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        if self.action == "stop":
            servers = [] if self.state is None else self.state.servers
            text = (
                "local juror: not started"
                if self.state is None
                else f"local juror stopped ({', '.join(f'{s.alias} pid {s.pid}' for s in servers)})"
            )
        elif self.state is None:
            text = "local juror: not started (jury local-juror start)"
        else:
            text = self.state.describe()
        return text + "\n"


def _state_dir(project: Project | None, state_dir: PathLike | None) -> Path:
    if state_dir is not None:
        return Path(state_dir)
    return (project or Project.load()).store_path(None).parent / "local-juror"


def start_local_juror(
    *,
    port: int = 8765,
    models: Sequence[str] | None = None,
    threads: int | None = None,
    state_dir: PathLike | None = None,
    project: Project | None = None,
) -> LocalJurorState:
    """Start one llama.cpp server per model (default: gemma-3-270m and smollm2-135m) on
    consecutive loopback ports from ``port`` in the background and wait until they answer (or
    return the ones already running). ``state_dir``: the server's state file, models and log
    (default: local-juror/ beside the store). Needs the [local] extra."""
    from jury.pipeline.local_juror import start

    folder = _state_dir(project, state_dir)
    state = start(folder, port=port, models=list(models or []) or None, threads=threads)
    return LocalJurorState(action="start", state=state, state_dir=folder)


def local_juror_status(*, state_dir: PathLike | None = None, project: Project | None = None) -> LocalJurorState:
    """Whether the local juror started from ``state_dir`` runs and answers (``ok``)."""
    from jury.pipeline.local_juror import status

    folder = _state_dir(project, state_dir)
    return LocalJurorState(action="status", state=status(folder), state_dir=folder)


def stop_local_juror(*, state_dir: PathLike | None = None, project: Project | None = None) -> LocalJurorState:
    """Stop the servers started from ``state_dir`` (``state`` None: none was)."""
    from jury.pipeline.local_juror import stop

    folder = _state_dir(project, state_dir)
    return LocalJurorState(action="stop", state=stop(folder), state_dir=folder)
