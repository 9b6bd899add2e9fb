"""Phantom timeouts: a trivial gold query behind a login held on purpose (issue 42.4).

Each round runs ``SELECT COUNT(*) FROM superhero`` once on a fresh connection through a loopback
relay that holds every connection ``--delay`` seconds before the server sees it (a slow login,
made on purpose rather than by load), at ``--timeout`` seconds, on PostgreSQL and MariaDB, and
counts the outcomes. Before the fix the statement's clock started before connecting, and the
connect limit was taken from ``--timeout``: every round was an error or a timeout. The count is
checked against SQLite's own answer for the same query.

    bash .ci/engines python bench/phantom_timeouts.py [--rounds 10 --delay 3 --timeout 2]
"""

from __future__ import annotations

import argparse
import collections
import os
import sqlite3
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jury.execution import engine_drivers, engines  # noqa: E402
from jury.execution.loader import load  # noqa: E402
from tests.support.enginetest import drop_database, reader_url, server_url  # noqa: E402
from tests.support.slowlink import SlowLink  # noqa: E402

SQLITE_FILE = ROOT / "examples/bird-superhero/databases/superhero/superhero.sqlite"
QUERY = "SELECT COUNT(*) FROM superhero"


def rounds(engine: str, n: int, delay: float, timeout: float) -> collections.Counter:
    name = f"jt_{uuid.uuid4().hex[:8]}_superhero"
    admin = server_url(engine, name)
    load(SQLITE_FILE, admin)
    reader = reader_url(admin)
    parts = engine_drivers.engine_for(admin).parts
    with sqlite3.connect(SQLITE_FILE) as con:
        (truth,) = con.execute(QUERY).fetchone()
    seen: collections.Counter = collections.Counter()
    try:
        with SlowLink(parts.hostname, parts.port, delay) as link:
            slow = reader.replace(f"{parts.hostname}:{parts.port}", f"127.0.0.1:{link.port}")
            for _ in range(n):
                try:
                    res = engines.execute(slow, QUERY, timeout_s=timeout)
                except engines.EngineUnavailable:
                    seen["connection refused (nothing recorded)"] += 1
                    continue
                ok = res.status == "ok" and res.rows == [(truth,)]
                seen["ok, right count" if ok else f"{res.status}: {res.error}"] += 1
    finally:
        engines.close_connections()
        drop_database(admin, name)
    return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--delay", type=float, default=3.0, help="seconds each connection is held before the server sees it")
    ap.add_argument("--timeout", type=float, default=2.0, help="the statement timeout (jury's --timeout)")
    args = ap.parse_args()
    for engine, env in (("postgresql", "JURY_TEST_PG_URL"), ("mysql", "JURY_TEST_MYSQL_URL")):
        if not os.environ.get(env):
            print(f"{engine}: {env} is not set (bash .ci/engines starts the servers)")
            continue
        seen = rounds(engine, args.rounds, args.delay, args.timeout)
        shown = ", ".join(f"{k}: {v}" for k, v in seen.most_common())
        print(f"{engine}: {args.rounds} rounds, login held {args.delay:g} s, --timeout {args.timeout:g}: {shown}")


if __name__ == "__main__":
    main()
