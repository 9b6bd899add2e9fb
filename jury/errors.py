"""Small named exceptions. The CLI turns every JuryError into one line and its exit code.

Exit codes: 1 for an error or a refusal (bad input, a changed locked file, the cost cap),
3 for an incomplete verdict set (some ballots failed on transport or configuration:
a rerun asks only those), 4 when a check could not be carried out at all, 130 after an
interrupt. Commands never exit 2 on a bad value (click's usage errors are reworded too).

The core install scores, adjudicates, audits, verifies locks and writes text, CSV and JSON;
the rest comes with extras (``pip install 'jury-sql[plots]'``: plots; ``[web]``: the review page
and the html site; ``[sign]``: signing and checking signatures; ``[ray]``: the ray executor).
A feature used without its extra raises MissingExtra, whose one line is the install command.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from importlib import import_module
from types import ModuleType


class JuryError(Exception):
    """Base class: an error whose message is fit to show a user as one line."""

    exit_code = 1
    #: What the job had done before the error (its result so far: files written, re-runs), set
    #: by the job that raised it; the command line prints it before the error line.
    partial: object | None = None


class InputError(JuryError):
    """A user-supplied file or value is malformed (the message names file, line and value)."""


class DatabaseMissing(InputError):
    """A db_id has no database file under the database root."""


class ConfigError(JuryError):
    """jury.toml, a panel or a family registry is wrong."""


class PluginError(ConfigError):
    """An installed plugin (an entry point of jury.plugins.GROUPS) fails to load, is not what
    its group takes, or takes a name jury ships or another plugin took."""


class StoreError(JuryError):
    """The embedded store cannot be opened or is of an unknown schema."""


class IncompleteRun(JuryError):
    """Some ballots got no vote (transport or configuration failure): no verdict file is written."""

    exit_code = 3


class CannotCheck(JuryError):
    """A check (e.g. `reaudit --check`) could not be carried out: neither pass nor fail."""

    exit_code = 4


class CostCapReached(JuryError):
    """--max-cost stopped the run before every ballot was asked (every vote so far is kept)."""


class VerdictError(JuryError):
    """A verdict file is unlocked, tampered with, malformed, or would be overwritten."""


class SignatureError(JuryError):
    """A signature is missing, malformed, invalid, untrusted, or would be overwritten."""


class MissingExtra(JuryError):
    """An optional feature is used without the extra that installs what it needs; the
    message names the install command (see need_extra)."""


@contextmanager
def extra_imports(module: str, extra: str, feature: str, *, package: str | None = None) -> Iterator[None]:
    """Imports of ``module`` (and its submodules) inside the block that fail raise
    MissingExtra: "``feature`` needs ``package`` (default ``module``): pip install
    'jury-sql[``extra``]'". A module that is there but fails to import for another reason
    (a broken install) gets the same line with the reason."""
    try:
        yield
    except ImportError as exc:
        missing = isinstance(exc, ModuleNotFoundError) and (exc.name == module or str(exc.name).startswith(f"{module}."))
        why = "" if missing else f" ({(str(exc).strip().splitlines() or [type(exc).__name__])[0]})"
        raise MissingExtra(f"{feature} needs {package or module}: pip install 'jury-sql[{extra}]'{why}") from None


def need_extra(module: str, extra: str, feature: str, *, package: str | None = None) -> ModuleType:
    """``module`` imported, or MissingExtra naming the install command, e.g. for
    ``need_extra("matplotlib", "plots", "writing plots")``: "writing plots needs
    matplotlib: pip install 'jury-sql[plots]'"."""
    with extra_imports(module, extra, feature, package=package):
        return import_module(module)


def did_you_mean(value: object, choices: Iterable[object]) -> str:
    """The hint "; did you mean 'x'?" for the names in ``choices`` closest to a mistyped ``value``
    (difflib's ratio at least 0.6, at most three), or "" when none is close."""
    import difflib

    close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


# A terminal escape sequence (CSI: ESC [ ... final byte; OSC: ESC ] ... BEL or ESC \; or ESC and
# one byte), then any other C0 or C1 control character or DEL.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    r"""``text`` without control characters, as every stored or printed error is kept: terminal
    escape sequences (sqlglot underlines the failing token of a parse error with ANSI's
    ``ESC[4m`` ... ``ESC[0m``) dropped whole, tabs, newlines and other line breaks turned into
    spaces, every other C0/C1 control character and DEL dropped.

    >>> printable("SELECT \x1b[4m(\x1b[0m)\tx\x00")
    'SELECT () x'
    """
    text = _ESCAPES.sub("", text)
    return _CONTROLS.sub("", re.sub(r"[\t\n\v\f\r\x85\u2028\u2029]", " ", text))


def one_line(exc: BaseException, *, named: bool = False, first_line: bool = False, limit: int = 500) -> str:
    """An exception's message as one line of jury's one-line errors, at most `limit` characters.

    Control characters go (`printable`: a terminal escape whole); whitespace runs (a database
    driver's multi-line message) collapse to single spaces; with
    `first_line` only the first non-blank line is kept (Ray's, whose later lines are advice and
    tracebacks); with `named` the exception's type leads (``MemoryError: ...``, for a failure
    that is not the engine's own error). A message that says nothing gives the type's name.
    """
    text = str(exc)
    if first_line:
        text = next((line for line in text.splitlines() if line.strip()), "")
    if named:
        text = f"{type(exc).__name__}: {text}"
    return " ".join(printable(text).split())[:limit] or type(exc).__name__
