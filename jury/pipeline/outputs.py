"""Outputs never overwrite inputs: the check every job runs before it writes a file.

An output must be something jury.inputs.writer can write (nothing yet, a regular file or a
link to one, a character device or a FIFO: never a directory, a socket or a dangling link).
It may not be one of the job's inputs, the store (or its -wal/-shm/-journal), a
database file under the database root, a locked verdict file, another output of the same job,
or a file that a locked verdict file in the project's verdict folder binds (overwriting it
would make those verdicts stale). The public API runs it before any work; the command line
gets it from there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from jury.errors import InputError, JuryError
from jury.inputs.config import load_config


def guard_outputs(
    outputs: Iterable[str | os.PathLike[str] | None],
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    *,
    store: Path | None = None,
    db_root: Path | None = None,
    verdict_output: bool = False,
) -> None:
    """Refuse, before any work, an output file that is one of the command's inputs, the store
    (or its -wal/-shm/-journal), a database file under db_root, a locked verdict file (unless
    verdict_output: the verdict writer reuses an identical one and refuses any other), or
    another output. Paths are compared resolved (symlinks, ..) and by (device, inode) (hard links)."""
    from jury.inputs.writer import check_output

    def resolved(p: Path) -> Path:
        try:
            return p.resolve()
        except (OSError, RuntimeError):  # a symlink loop
            return p.absolute()

    def identity(p: Path) -> tuple[int, int] | None:
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            return None
        return (st.st_dev, st.st_ino)

    protected: list[tuple[Path, str]] = [(Path(p), f"the input file {p}") for p in inputs if p is not None]
    if store is not None:
        protected += [(Path(f"{store}{sfx}"), f"the store {store}{sfx}") for sfx in ("", "-wal", "-shm", "-journal")]
    if db_root is not None and Path(db_root).is_dir():
        protected += [(f, f"the database file {f}") for f in sorted(Path(db_root).glob("*/*")) if f.is_file()]
    known = [(resolved(p), identity(p), role) for p, role in protected]
    outs = [Path(o) for o in outputs if o is not None]
    for i, out in enumerate(outs):
        check_output(out)
        where, ident = resolved(out), identity(out)
        for other_where, other_ident, role in known:
            if where == other_where or (ident is not None and ident == other_ident):
                raise InputError(f"{out}: is {role}; an output never overwrites it (choose another output file)")
        for other in outs[:i]:
            if resolved(other) == where or (ident is not None and identity(other) == ident):
                raise InputError(f"{out}: given for two outputs; each output needs its own file")
        from jury.verdicts.lock import is_locked_file  # only when there is an output (a warm `score` has none)

        if not verdict_output and is_locked_file(out):
            raise InputError(f"{out}: is a locked verdict file; it is never overwritten (choose another output file)")
        if out.is_file():  # overwriting: never a file that a locked verdict file of the project binds
            for bound, verdict_file in _bound_by_project_verdicts():
                if where == resolved(bound) or (ident is not None and identity(bound) == ident):
                    raise InputError(
                        f"{out}: is bound by the locked verdict file {_near(verdict_file)}; overwriting it would make its "
                        "verdicts stale (choose another output file)"
                    )


def _near(path: Path) -> str:
    """``path`` relative to the working directory when it is under it, else as it is."""
    try:
        return str(Path(path).absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _bound_by_project_verdicts() -> list[tuple[Path, Path]]:
    """(bound file, verdict file) of the locked files in the project's verdict folder:
    jury.toml's verdicts_dir, else ./verdicts."""
    from jury.verdicts.lock import files_bound_by

    try:
        folder = load_config().path_of("verdicts_dir", None, "verdicts")
    except JuryError:  # a broken jury.toml is reported by the command itself
        folder = Path("verdicts")
    return files_bound_by(folder)
