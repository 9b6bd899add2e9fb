"""A sqlite-utils migration set that imports sqlite-utils only when a migration is pending."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import sqlite_utils

#: A migration function (registered as it is): it takes the sqlite-utils Database it migrates.
F = TypeVar("F", bound="Callable[[sqlite_utils.Database], None]")


class LazyMigrations:
    """A sqlite-utils migration set whose ``Migrations`` is built only when one is pending.

    sqlite-utils imports numpy when it is installed (~0.15 s): a store whose migrations are
    all applied opens with plain sqlite3, so a warm ``jury score`` never imports either.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.functions: list[Callable[[sqlite_utils.Database], None]] = []

    def __call__(self) -> Callable[[F], F]:
        def register(fn: F) -> F:
            self.functions.append(fn)
            return fn

        return register

    def pending(self, conn: sqlite3.Connection) -> bool:
        """True unless every registered migration is recorded as applied (read-only)."""
        try:
            done = {r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations WHERE migration_set = ?", [self.name])}
        except sqlite3.OperationalError:  # no migrations table yet
            return True
        return any(fn.__name__ not in done for fn in self.functions)

    def apply(self, db: sqlite_utils.Database) -> None:
        """Apply the pending migrations in one transaction under the write lock (BEGIN
        IMMEDIATE, waiting up to the connection's busy timeout): several processes opening a
        new store at once apply each migration once, the others wait for the lock and then
        find (re-reading the applied list inside it) nothing left to do."""
        from sqlite_utils.migrations import Migrations

        real = Migrations(self.name)
        for fn in self.functions:
            real()(fn)
        conn = db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            real.apply(db)  # inside the lock: pending() is read again, each migration a savepoint
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
