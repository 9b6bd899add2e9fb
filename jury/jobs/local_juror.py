"""The local juror: llama.cpp serving small real models on loopback ports (``jury local-juror
start|status|stop``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from jury.jobs.result import Result
from jury.options import job_options
from jury.options.local_juror import LocalJurorOptions, LocalJurorStartOptions
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
    options: LocalJurorStartOptions | None = None, *, project: Project | None = None, **overrides: Any
) -> LocalJurorState:
    """Start one llama.cpp server per model (default: gemma-3-270m and smollm2-135m) on
    consecutive loopback ports from ``port`` in the background and wait until they answer (or
    return the ones already running). ``state_dir``: the server's state file, models and log
    (default: local-juror/ beside the store). Needs the [local] extra.

    ``options``: a ``LocalJurorStartOptions`` (jury.options.local_juror: every option of ``jury
    local-juror start``, each documented there), or none; ``overrides``: its fields as keyword
    arguments (``port=``, ``models=``, ``threads=``, ``state_dir=``), over ``options``'. A bad one
    is an InputError (an unknown name a TypeError)."""
    from jury.pipeline.local_juror import start

    o = job_options(LocalJurorStartOptions, "start_local_juror", options, overrides)
    folder = _state_dir(project, o.state_dir)
    state = start(folder, port=o.port, models=o.models or None, threads=o.threads)
    return LocalJurorState(action="start", state=state, state_dir=folder)


def local_juror_status(
    options: LocalJurorOptions | None = None, *, project: Project | None = None, **overrides: Any
) -> LocalJurorState:
    """Whether the local juror started from ``state_dir`` runs and answers (``ok``).

    ``options``: a ``LocalJurorOptions`` (jury.options.local_juror: the state folder), or none;
    ``overrides``: its fields as keyword arguments (``state_dir=``), over ``options``'."""
    from jury.pipeline.local_juror import status

    folder = _state_dir(project, job_options(LocalJurorOptions, "local_juror_status", options, overrides).state_dir)
    return LocalJurorState(action="status", state=status(folder), state_dir=folder)


def stop_local_juror(
    options: LocalJurorOptions | None = None, *, project: Project | None = None, **overrides: Any
) -> LocalJurorState:
    """Stop the servers started from ``state_dir`` (``state`` None: none was).

    ``options``: a ``LocalJurorOptions`` (jury.options.local_juror: the state folder), or none;
    ``overrides``: its fields as keyword arguments (``state_dir=``), over ``options``'."""
    from jury.pipeline.local_juror import stop

    folder = _state_dir(project, job_options(LocalJurorOptions, "stop_local_juror", options, overrides).state_dir)
    return LocalJurorState(action="stop", state=stop(folder), state_dir=folder)
