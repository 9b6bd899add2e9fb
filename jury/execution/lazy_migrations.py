"""A sqlite-utils migration set that imports sqlite-utils only when a migration is pending."""

from __future__ import annotations

import datetime
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import sqlite_utils

#: A migration function (registered as it is): it takes the sqlite-utils Database it migrates.
F = TypeVar("F", bound="Callable[[sqlite_utils.Database], None]")

#: sqlite-utils' table of applied migrations (shared by every set) as its Migrations creates it
MIGRATIONS_TABLE = (
    'CREATE TABLE "_sqlite_migrations" (\n   "id" INTEGER PRIMARY KEY,\n   "migration_set" TEXT,\n   "name" TEXT,\n   "applied_at" TEXT\n)',
    'CREATE UNIQUE INDEX "idx__sqlite_migrations_migration_set_name"\n    ON "_sqlite_migrations" ("migration_set", "name")',
)


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

    def create_new(self, conn: sqlite3.Connection, statements: Sequence[str]) -> bool:
        """On a database with nothing in it (a new store), make in one transaction what every
        migration of the set makes: ``statements`` (what they leave in sqlite_master, as
        sqlite-utils wrote it) and the record of each as applied, as sqlite-utils' Migrations
        records it; with plain sqlite3, so without sqlite-utils' imports. False, writing nothing,
        when the database holds anything (inside the write lock: another process may just have
        made it): then ``apply`` migrates it."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None:
                conn.execute("ROLLBACK")
                return False
            for sql in (*MIGRATIONS_TABLE, *statements):
                conn.execute(sql)
            conn.executemany(
                "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES (?, ?, ?)",
                [(self.name, fn.__name__, str(datetime.datetime.now(datetime.UTC))) for fn in self.functions],
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return True

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
