"""The one bounded reader of every file jury reads from outside (runs, gold, labels, judgments,
panels, prompts, taxonomies, jury.toml, keys, BIRD's description CSVs...).

- A regular file only: the path is opened with ``O_NONBLOCK`` (a FIFO never blocks the open)
  and ``fstat``-ed before a byte is read, so a FIFO, a device (``/dev/zero``), a socket or a
  directory is one line, never a hang or an endless read.
- A byte cap: a file larger than its cap is refused by its size, and one that grows past the
  cap while being read is refused too (``cap + 1`` bytes at most are ever read).
- Contained: the path must resolve (``realpath``: every link followed) inside the folder it
  was found in — its own folder for a file the user named, the folder the user named for a
  file jury found there (``within``). A link out of that folder is refused before anything is
  read, so nothing of the target can reach a prompt or an error line. The resolved path is then
  opened with ``O_NOFOLLOW``. A hard link cannot be told apart from the file it links: both are
  the same regular file, so it is read.
- Errors are one line naming the file (and, for CSV rows and decoding, the line) and what was
  expected; they quote at most a short printable `excerpt` of what the file holds.
"""

from __future__ import annotations

import csv
import io
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from jury.errors import InputError, JuryError

MAX_EXCERPT_CHARS = 40
"""The most characters of a file's content an error line quotes."""
MAX_CONFIG_BYTES = 4 << 20
"""The largest jury.toml, panel, prompt template, taxonomy or family registry read (real ones are a few KiB)."""
MAX_CSV_FIELD_CHARS = 131_072
"""The longest CSV cell read (Python's csv default; BIRD's longest value description is ~4 KB)."""
MAX_LINE_BYTES = 8 << 20
"""The longest line `text_lines` reads (a file read line by line is never held whole)."""


@contextmanager
def file_errors(p: Path, error: type[JuryError] = InputError) -> Iterator[None]:
    """Turn a missing or unreadable file into a one-line ``error`` naming it."""
    try:
        yield
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except IsADirectoryError:
        raise error(f"{p}: is a directory, expected a file") from None
    except OSError as exc:
        raise error(f"{p}: cannot read: {exc.strerror or exc}") from None


def excerpt(value: object, limit: int = MAX_EXCERPT_CHARS) -> str:
    """What a file holds as an error line may quote it: at most ``limit`` characters (an
    ellipsis says it was cut), every control or unprintable character escaped. Text (str or
    bytes) is quoted; any other value (a number, a list read from JSON) is shown as its repr."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    quoted = isinstance(value, str)
    text = value if isinstance(value, str) else repr(value)
    out: list[str] = []
    size = 0
    for ch in text:
        shown = ch if ch.isprintable() and ch != "\\" else ch.encode("unicode_escape").decode("ascii")
        if quoted and ch == "'":
            shown = "\\'"
        if size + len(shown) > limit:
            out.append("…")
            break
        out.append(shown)
        size += len(shown)
    return f"'{''.join(out)}'" if quoted else "".join(out)


def _contained(p: Path, within: str | Path | None, error: type[JuryError]) -> Path:
    """``p`` resolved, when it resolves inside ``within`` (by default its own folder)."""
    folder = Path(within) if within is not None else p.parent
    real = Path(os.path.realpath(p))
    base = Path(os.path.realpath(folder))
    if real != base and base not in real.parents:
        where = f"the folder it was found in ({folder})" if within is not None else "its own folder"
        raise error(
            f"{p}: a link to a file outside {where}; jury reads no file through a link out of its folder "
            "(copy the file there, or name the file itself)"
        )
    return real


def open_input(
    path: str | Path,
    *,
    within: str | Path | None = None,
    contained: bool = True,
    error: type[JuryError] = InputError,
    os_errors: bool = False,
) -> BinaryIO:
    """An open binary handle on a regular file, checked as the module says. ``contained=False``
    (hashing a bound file, whose bytes are never shown) skips the folder check but not the rest;
    ``os_errors=True`` lets a missing or unreadable file's OSError through for the caller."""
    p = Path(path)
    real = _contained(p, within, error) if contained else p
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_NOFOLLOW if contained else 0)
    if os_errors:
        fd = os.open(real, flags)
    else:
        with file_errors(p, error):
            fd = os.open(real, flags)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise error(f"{p}: is a directory, expected a file")
        if not stat.S_ISREG(mode):
            raise error(f"{p}: not a regular file (a device, pipe or socket); give a file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_bounded(
    path: str | Path,
    cap: int,
    *,
    what: str = "an input file",
    within: str | Path | None = None,
    error: type[JuryError] = InputError,
) -> bytes:
    """The bytes of a regular file of at most ``cap`` bytes (see the module)."""
    p = Path(path)
    with open_input(p, within=within, error=error) as fh, file_errors(p, error):
        size = os.fstat(fh.fileno()).st_size
        if size > cap:
            raise error(f"{p}: {size} bytes is larger than the {_size(cap)} limit of {what}")
        # read what fstat saw, plus one byte: read(cap + 1) would allocate the whole cap (512 MiB
        # for a gold file) for every small file, which a host without overcommit refuses
        data = fh.read(size + 1)
        if len(data) > size:  # it grew since fstat: read on, up to one byte past the cap
            data += fh.read(cap + 1 - len(data))
    if len(data) > cap:  # it grew while being read
        raise error(f"{p}: larger than the {_size(cap)} limit of {what}")
    return data


@contextmanager
def text_lines(
    path: str | Path,
    cap: int,
    *,
    what: str = "an input file",
    within: str | Path | None = None,
    error: type[JuryError] = InputError,
) -> Iterator[Iterator[str]]:
    """The UTF-8 lines (each with its newline; a byte-order mark dropped) of a regular file of at
    most ``cap`` bytes, checked as ``read_bounded`` checks it but read one line at a time, so
    the memory used is one line's whatever the file's size. A line longer than MAX_LINE_BYTES,
    bytes that are not UTF-8 or a file that grows past ``cap`` while read is one line naming
    the file (and line)."""
    p = Path(path)
    with open_input(p, within=within, error=error) as fh, file_errors(p, error):
        size = os.fstat(fh.fileno()).st_size
        if size > cap:
            raise error(f"{p}: {size} bytes is larger than the {_size(cap)} limit of {what}")
        yield _lines(p, fh, cap, what, error)


def _lines(p: Path, fh: BinaryIO, cap: int, what: str, error: type[JuryError]) -> Iterator[str]:
    offset = number = 0
    while raw := fh.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise error(f"{p}:{number}: a line longer than {_size(MAX_LINE_BYTES)}")
        if offset + len(raw) > cap:  # it grew while being read
            raise error(f"{p}: larger than the {_size(cap)} limit of {what}")
        try:
            yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise error(f"{p}:{number}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {offset + exc.start})") from None
        offset += len(raw)


def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} bytes"


def decoded(p: Path, data: bytes, error: type[JuryError] = InputError, *, fallback: str | None = None) -> str:
    """UTF-8 text (a byte-order mark dropped); a decoding error is one line naming the line, or,
    with ``fallback`` (an encoding), the text in that encoding."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if fallback is not None:
            return data.decode(fallback, errors="replace")
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{p}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def csv_rows(p: Path, text: str | Iterable[str], error: type[JuryError] = InputError) -> Iterator[tuple[int, list[str]]]:
    """(first line number, cells) of each CSV record of ``text`` read from ``p``: the whole text,
    or its lines one by one (`text_lines`: then only one record is held at a time). Malformed
    CSV (a NUL byte, a cell over MAX_CSV_FIELD_CHARS, an open quote at the end) is one line
    naming the file and line, never a ``_csv.Error``."""
    if isinstance(text, str):
        if "\x00" in text:
            line = text.count("\n", 0, text.index("\x00")) + 1
            raise error(f"{p}:{line}: a NUL byte; not a CSV text file")
        lines: Iterable[str] = io.StringIO(text, newline="")
    else:
        lines = text
    reader = csv.reader(lines)
    start = 1
    while True:
        previous = csv.field_size_limit(MAX_CSV_FIELD_CHARS)  # the limit is the process's: set per record
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            why = str(exc)
            if "field larger than field limit" in why:
                why = f"a cell longer than {MAX_CSV_FIELD_CHARS} characters"
            raise error(f"{p}:{start}: malformed CSV: {why}") from None
        finally:
            csv.field_size_limit(previous)
        if any("\x00" in cell for cell in cells):
            raise error(f"{p}:{start}: a NUL byte; not a CSV text file")
        yield start, cells
        start = reader.line_num + 1


def csv_records(
    p: Path, text: str | Iterable[str], error: type[JuryError] = InputError, *, strict: bool = True
) -> Iterator[tuple[int, dict[str, str]]]:
    """(first line number, {column: cell}) of each row under the header (names stripped of
    spaces and byte-order marks), fully blank rows skipped; a row of another width is one line
    naming it, or with ``strict=False`` is padded with empty cells or cut to the header's."""
    rows = csv_rows(p, text, error)
    first = next(rows, None)
    if first is None:
        return
    header = [name.replace("\ufeff", "").strip() for name in first[1]]
    for line, cells in rows:
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header) and not strict:
            cells = (cells + [""] * len(header))[: len(header)]
        elif len(cells) != len(header):
            raise error(f"{p}:{line}: {len(cells)} fields, the header has {len(header)}")
        yield line, dict(zip(header, cells, strict=True))
