"""Small named exceptions. The CLI turns every JuryError into one line and exit code 1."""


class JuryError(Exception):
    """Base class: an error whose message is fit to show a user as one line."""


class InputError(JuryError):
    """A user-supplied file or value is malformed (the message names file, line and value)."""


class DatabaseMissing(InputError):
    """A db_id has no database file under the database root."""


class ConfigError(JuryError):
    """jury.toml, a panel or a family registry is wrong."""


class StoreError(JuryError):
    """The embedded store cannot be opened or is of an unknown schema."""
