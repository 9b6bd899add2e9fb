"""The one writer of every output: what is at the path decides how it is written.

Every file jury writes goes through :func:`write_output` (or :func:`write_outputs` for many, the
html site's pages, :func:`write_new` for a file that must not exist yet, :func:`open_append` for a
log): score, report, check-gold, suites and
calibrate outputs, ``--per-question``, label, run and gold files, review exports, verdict and
review files and their signatures, schemas, every page of the html site, the plots and the
local juror's state. Before any byte is written the path is looked at without following it
(``lstat``):

- **nothing there, or a regular file**: the text goes to a temporary file beside it, is
  flushed and fsynced, and is renamed over the path (atomic: a crash leaves the old file or
  the whole new one). A replaced file keeps its permission bits; a new one follows the umask.
- **a symbolic link to a regular file**: followed. The file it points to is replaced the same
  way (the temporary file sits beside the target) and the link itself is kept. A link to
  nothing (dangling) is refused rather than followed to wherever it points.
- **a character device or a FIFO, or a link to one** (``/dev/null``, ``/dev/stdout``,
  ``/proc/self/fd/1``, a named pipe, a terminal): opened for writing and written through,
  never replaced or renamed. A FIFO is opened without blocking: with no reader the write is
  one line saying so, not a hang.
- **a link to an open file descriptor** (``/dev/stdout`` or ``/proc/self/fd/N`` when the
  descriptor is a regular file, e.g. ``> out.txt`` or ``>> log.txt``): written through at the
  end of that file, as the shell's redirection would, never replaced.
- **anything else** (a directory, a socket, a block device, a link to one, a link loop):
  refused in one line (an InputError) before anything is written.

:func:`check_output` runs the same look-up without writing, so a job refuses a bad output
before any work.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from jury.errors import InputError

NEW, FILE, STREAM, DESCRIPTOR = "new", "file", "stream", "descriptor"
# /proc/<pid>/fd (and a thread's): the kernel's folders of open descriptors, where a link is
# an open file rather than a path (what /dev/stdout and /dev/fd/N lead to)
_DESCRIPTOR_FOLDER = re.compile(r"/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd")
_MAX_HOPS = 40  # as the kernel's limit on nested symlinks


@dataclass(frozen=True)
class Target:
    """How an output path is written: ``how`` is NEW or FILE (atomic replace of ``path``),
    STREAM (a device or FIFO, written through) or DESCRIPTOR (a regular file reached through
    an open descriptor's link, appended to)."""

    how: str
    path: Path  # the path written: a followed link's target for FILE
    mode: int | None = None  # the permission bits of the file replaced (FILE)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode):
        return "a block device"
    return f"of another kind (mode {stat.filemode(mode)})"


def _refuse(p: Path, what: str) -> InputError:
    return InputError(f"{p}: is {what}; an output is written to a file, a character device or a FIFO (nothing written)")


def _through_descriptor(p: Path) -> bool:
    """Whether following ``p``'s symlinks passes through a /proc/<pid>/fd folder (an open
    descriptor's link, which names a file that may have no path of its own)."""
    cur = Path(os.path.abspath(p))
    for _ in range(_MAX_HOPS):
        parent = os.path.realpath(cur.parent)
        if _DESCRIPTOR_FOLDER.fullmatch(parent):
            return True
        link = Path(parent) / cur.name
        if not link.is_symlink():
            return False
        target = Path(os.readlink(link))
        cur = Path(os.path.abspath(target if target.is_absolute() else Path(parent) / target))
    return False


def output_target(path: str | Path, *, within: str | Path | None = None) -> Target:
    """How ``path`` would be written (see the module's docstring); InputError when it cannot be.

    ``within``: a folder jury owns (the html site): the path must then be nothing or a regular
    file (no link, no device) whose folder is, resolved, inside ``within``."""
    p = Path(path)
    if not p.name or p.name in (".", ".."):
        raise InputError(f"{p}: names a folder; give a file name to write")
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(f"{p}: cannot write: {exc.strerror or exc}") from None
    if within is not None:
        return _inside(p, st, Path(within))
    if st is None:
        return Target(NEW, p)
    if stat.S_ISREG(st.st_mode):
        return Target(FILE, p, stat.S_IMODE(st.st_mode))
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return Target(STREAM, p)
    if not stat.S_ISLNK(st.st_mode):
        raise _refuse(p, _kind(st.st_mode))
    try:
        followed = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"{p}: is a symlink to nothing ({os.readlink(p)}); give the file itself (nothing written)") from None
    except OSError as exc:  # a link loop, a folder it cannot enter
        raise InputError(f"{p}: is a symlink jury cannot follow: {exc.strerror or exc} (nothing written)") from None
    if stat.S_ISCHR(followed.st_mode) or stat.S_ISFIFO(followed.st_mode):
        return Target(STREAM, p)
    if not stat.S_ISREG(followed.st_mode):
        raise _refuse(p, f"a symlink to {_kind(followed.st_mode).removeprefix('of ')}")
    if _through_descriptor(p):
        return Target(DESCRIPTOR, p)
    real = Path(os.path.realpath(p))
    try:
        same = os.stat(real)
    except OSError:
        same = None
    if same is None or (same.st_dev, same.st_ino) != (followed.st_dev, followed.st_ino):
        raise InputError(f"{p}: is a symlink whose target changed while being looked at (nothing written)")
    return Target(FILE, real, stat.S_IMODE(followed.st_mode))


def _inside(p: Path, st: os.stat_result | None, folder: Path) -> Target:
    if st is not None and not stat.S_ISREG(st.st_mode):
        what = "a symlink" if stat.S_ISLNK(st.st_mode) else _kind(st.st_mode)
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            what = "a device or FIFO"
        raise InputError(f"{p}: is {what} inside {folder}; jury replaces only regular files it wrote there (nothing written)")
    root = os.path.realpath(folder)
    parent = os.path.realpath(p.parent)
    if parent != root and not parent.startswith(root.rstrip(os.sep) + os.sep):
        raise InputError(f"{p}: leads out of {folder} (to {parent}); jury writes only inside it (nothing written)")
    return Target(NEW if st is None else FILE, Path(parent) / p.name, None if st is None else stat.S_IMODE(st.st_mode))


def check_output(path: str | Path, *, within: str | Path | None = None) -> None:
    """Refuse, before any work, an output path that :func:`write_output` would refuse."""
    output_target(path, within=within)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _as_bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def write_output(path: str | Path, data: str | bytes | Iterable[str | bytes], *, within: str | Path | None = None) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` as the module's docstring says; returns the
    path given. InputError (one line) when the path cannot be written.

    ``data`` may be an iterable of chunks (a generator of lines): it is consumed once, chunk by
    chunk, into the temporary file (or through the device), so an output of any size is written
    in the memory of one chunk. An exception the iterable raises leaves the path as it was (a
    device or FIFO may have received the chunks before it)."""
    return _write(path, data, within, None)


def write_outputs(files: Iterable[tuple[str | Path, str | bytes]], *, within: str | Path | None = None) -> None:
    """Write many files (the pages of the html site) as :func:`write_output` writes each, with
    one fsync per folder at the end instead of one per file.

    Each file's data is still fsynced before its rename, so a crash leaves every file its old
    version or the whole new one (never a renamed file whose data did not reach the disk). What
    waits to the end is the folder's fsync that makes a rename itself durable: a crash before
    it may leave a file at its old version (or absent), which is what a crash before that file
    was written leaves too. Every rename is durable when this returns."""
    folders: dict[Path, None] = {}
    for path, data in files:
        _write(path, data, within, folders)
    for folder in folders:
        _sync_folder(folder)


def _write(
    path: str | Path, data: str | bytes | Iterable[str | bytes], within: str | Path | None, folders: dict[Path, None] | None
) -> Path:
    """write_output; with ``folders``, a replaced file's folder is added there, to be fsynced
    by the caller, rather than fsynced here."""
    chunks: Iterable[str | bytes] = (data,) if isinstance(data, str | bytes) else data
    staged: str | None = None  # the chunks, once consumed into a temporary file
    try:
        for _attempt in range(3):  # a file that appears between the look and the write: look again
            target = output_target(path, within=within)
            try:
                if target.how in (STREAM, DESCRIPTOR):
                    _write_through(Path(path), _source(staged, chunks), append=target.how == DESCRIPTOR)
                    return Path(path)
                mode = target.mode if target.mode is not None else 0o666 & ~_umask()
                target.path.parent.mkdir(parents=True, exist_ok=True)
                if staged is None or Path(staged).parent != target.path.parent:
                    restaged = _staged(target.path, _source(staged, chunks), mode)
                    if staged is not None:
                        Path(staged).unlink(missing_ok=True)
                    staged = restaged
                os.chmod(staged, mode)
                if _place(target, staged, sync=folders is None):
                    staged = None
                    if folders is not None:
                        folders[target.path.parent] = None
                    return Path(path)
            except OSError as exc:  # the disk is full, the reader went away (EPIPE), no permission
                raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
        raise InputError(f"{path}: keeps changing while being written; nothing written")
    finally:
        if staged is not None:
            Path(staged).unlink(missing_ok=True)


def _source(staged: str | None, chunks: Iterable[str | bytes]) -> Iterator[bytes]:
    """The bytes to write: the chunks, or, once they were consumed into ``staged``, that file's."""
    if staged is None:
        for chunk in chunks:
            yield _as_bytes(chunk)
        return
    with open(staged, "rb") as fh:  # the temporary file written above
        while block := fh.read(1 << 20):
            yield block


def write_new(path: str | Path, data: str | bytes | Iterable[bytes]) -> Path:
    """Write a file that must not exist yet (a verdict file, a signature), atomically: ``data``
    (text as UTF-8, bytes, or chunks of bytes written as they come, never all held at once) in a
    temporary file beside it, fsynced, then hard-linked into place, which fails if anything
    appeared there meanwhile (FileExistsError: nothing is ever replaced, a device, a FIFO or a
    dangling link included). Where the file system has no hard links, the path is checked
    once more and the file renamed into place. Other OSErrors (a full disk) are the caller's
    to word."""
    p = Path(path)
    if os.path.lexists(p):
        raise FileExistsError(errno.EEXIST, "exists", str(p))
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = _staged(p, _as_bytes(data) if isinstance(data, str | bytes) else data, 0o666 & ~_umask())
    try:
        try:
            os.link(tmp, p)
        except FileExistsError:
            raise
        except OSError:  # no hard links here
            if os.path.lexists(p):
                raise FileExistsError(errno.EEXIST, "exists", str(p)) from None
            os.replace(tmp, p)
    finally:
        Path(tmp).unlink(missing_ok=True)
    _sync_folder(p.parent)
    return p


def open_append(path: str | Path) -> BinaryIO:
    """A binary handle appending to ``path`` (a log): created when absent; a device or FIFO is
    written through; anything else :func:`output_target` refuses is refused."""
    target = output_target(path)
    p = Path(path)
    if target.how in (STREAM, DESCRIPTOR):
        return os.fdopen(_open_through(p, append=True), "ab")
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(target.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise InputError(f"{p}: cannot write: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"{p}: changed while being opened (nothing written)")
    return os.fdopen(fd, "ab")


def _open_through(p: Path, *, append: bool) -> int:
    """An open descriptor on a device, FIFO or descriptor link, in blocking mode."""
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (os.O_APPEND if append else 0)
    try:
        fd = os.open(p, flags)  # O_NONBLOCK: a FIFO without a reader fails at once (ENXIO)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise InputError(f"{p}: is a FIFO with no reader; start the reader first (nothing written)") from None
        raise InputError(f"{p}: cannot write: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or (append and stat.S_ISREG(mode))):
        os.close(fd)
        raise InputError(f"{p}: changed while being opened (nothing written)")
    os.set_blocking(fd, True)
    return fd


def _write_through(p: Path, body: Iterable[bytes], *, append: bool) -> None:
    fd = _open_through(p, append=append)
    try:
        for chunk in body:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _staged(p: Path, body: bytes | Iterable[bytes], mode: int) -> str:
    """A temporary file beside ``p`` holding ``body`` (bytes, or chunks of them), fsynced, with
    permission bits ``mode``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in (body,) if isinstance(body, bytes) else body:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # mkstemp makes 0600
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def _place(target: Target, tmp: str, *, sync: bool = True) -> bool:
    """Move the staged file ``tmp`` to ``target.path`` atomically (it is gone after) and, with
    ``sync``, fsync its folder; False, and ``tmp`` kept, when a file appeared at a NEW path
    meanwhile."""
    p = target.path
    if target.how == NEW:
        try:
            os.link(tmp, p)  # never replaces what appeared since the look
        except FileExistsError:
            return False
        except OSError:  # no hard links here
            os.replace(tmp, p)
        Path(tmp).unlink(missing_ok=True)
    else:
        os.replace(tmp, p)
    if sync:
        _sync_folder(p.parent)
    return True


def _sync_folder(folder: Path) -> None:
    """fsync the folder so the rename itself survives a crash (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
