"""Small named exceptions. The CLI turns every JuryError into one line and its exit code.

Exit codes: 1 for an error or a refusal (bad input, a changed locked file, the cost cap),
3 for an incomplete verdict set (some ballots failed on transport or configuration:
a rerun asks only those), 4 when a check could not be carried out at all, 130 after an
interrupt. Commands never exit 2 on a bad value (click's usage errors are reworded too).
"""


class JuryError(Exception):
    """Base class: an error whose message is fit to show a user as one line."""

    exit_code = 1


class InputError(JuryError):
    """A user-supplied file or value is malformed (the message names file, line and value)."""


class DatabaseMissing(InputError):
    """A db_id has no database file under the database root."""


class ConfigError(JuryError):
    """jury.toml, a panel or a family registry is wrong."""


class StoreError(JuryError):
    """The embedded store cannot be opened or is of an unknown schema."""


class IncompleteRun(JuryError):
    """Some ballots got no vote (transport or configuration failure): no verdict file is written."""

    exit_code = 3


class CannotCheck(JuryError):
    """A check (e.g. `reaudit --check`) could not be carried out: neither pass nor fail."""

    exit_code = 4


def did_you_mean(value: object, choices) -> str:
    """The hint "; did you mean 'x'?" for the names in ``choices`` closest to a mistyped ``value``
    (difflib's ratio at least 0.6, at most three), or "" when none is close."""
    import difflib

    close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
