"""The engine tests' servers (bash .ci/engines): URLs of a database for the admin login (which
loads databases) and for the least-privilege reader (which jury executes through)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jury.execution import engine_drivers, engine_urls

ROOT = Path(__file__).resolve().parent.parent.parent
SUPERHERO = ROOT / "examples/bird-superhero/databases/superhero/superhero.sqlite"


def server_url(engine: str, name: str, *, reader: bool = False) -> str:
    """The URL of database ``name`` on the test server: the admin login's, or the reader's."""
    env = {"postgresql": "JURY_TEST_PG", "mysql": "JURY_TEST_MYSQL"}[engine] + ("_READER_URL" if reader else "_URL")
    base = os.environ.get(env)
    if not base:
        pytest.skip(f"{env} is not set (bash .ci/engines starts the server)")
    pytest.importorskip({"postgresql": "psycopg", "mysql": "pymysql"}[engine])
    head, _, query = base.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")


def reader_url(admin_url: str) -> str:
    """The reader's URL of the database an admin URL names (DuckDB: the same file)."""
    engine = engine_urls.engine_of(admin_url)
    if engine == engine_urls.DUCKDB:
        return admin_url
    return server_url(engine, engine_drivers.engine_for(admin_url).database, reader=True)


def drop_database(url: str, name: str) -> None:
    """Drop database ``name`` on the server of the admin URL ``url`` (DuckDB: nothing to drop)."""
    e = engine_drivers.engine_for(url)
    if e.name == engine_urls.POSTGRESQL:
        import psycopg

        p = e.parts
        with psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname="postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    elif e.name == engine_urls.MYSQL:
        import pymysql

        p = e.parts
        password = os.environ.get(e.params.get("password_env", "MYSQL_PWD"))
        conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=password)
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        conn.close()
