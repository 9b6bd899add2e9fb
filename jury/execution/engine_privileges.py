"""Least privilege on the engines: the login jury executes model and gold SQL through may only
read the benchmark's tables. ``login_problem`` reads the login's own privileges from the
server's catalogue at connect (jury.execution.engine_drivers) and names the first one it must
not have, with the fix; ``reader_statements`` is the recipe for a role that passes (what
``jury db load`` runs and ``jury db grants`` prints).

PostgreSQL: not superuser, no CREATEROLE, CREATEDB, REPLICATION or BYPASSRLS; not a member
(directly or through other roles) of any predefined ``pg_*`` role (pg_read_server_files,
pg_write_server_files, pg_execute_server_program, pg_signal_backend, pg_read_all_settings,
pg_read_all_data, pg_monitor, ...); owner of neither the database nor any of its tables; no
CREATE on a schema; no EXECUTE on the server-file and server-control functions (superuser-only
unless someone granted them).

MySQL/MariaDB: ``SHOW GRANTS`` holds nothing but ``USAGE ON *.*`` and ``SELECT`` on databases
(or their tables or columns): no global privilege (FILE, SUPER, PROCESS, SELECT on every
database, ...), no other privilege anywhere, nothing on the server's own databases (mysql,
information_schema, performance_schema, sys; nor a pattern that matches one), no GRANT
OPTION, no role, no PROXY; and the database is not one of the server's own. One reader may
read several benchmark databases (one login for ``--db-url .../{db_id}``); a query still
reads only its own database's tables (the statement check refuses ``other_db.table``).
"""

from __future__ import annotations

import re

from jury.errors import InputError
from jury.execution.engine_urls import DUCKDB, MYSQL, POSTGRESQL, Connection

DEFAULT_READER = "jury_reader"
_ROLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_HOST = re.compile(r"^[A-Za-z0-9_.:%-]{1,255}$")


def check_reader(role: str, host: str = "%") -> None:
    """A reader's name (letters, digits, _) and MySQL host (a name, an address or %), or a one-line error."""
    if not _ROLE.match(role):
        raise InputError(f"--reader {role!r}: a role name is letters, digits and _ (at most 63), not starting with a digit")
    if not _HOST.match(host):
        raise InputError(f"--reader-host {host!r}: a host name, an address or %")


# The functions that reach the server's files or control it: superuser-only by default.
_PG_FILE_FUNCTIONS = (
    "pg_read_file(text)",
    "pg_read_file(text,bigint,bigint)",
    "pg_read_binary_file(text)",
    "pg_ls_dir(text)",
    "pg_stat_file(text)",
    "pg_ls_logdir()",
    "pg_ls_waldir()",
    "lo_import(text)",
    "lo_export(oid,text)",
    "pg_reload_conf()",
    "pg_rotate_logfile()",
    "pg_promote(boolean,integer)",
    "pg_switch_wal()",
)

_PG_INSPECT = """
SELECT r.rolname, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication, r.rolbypassrls,
  ARRAY(SELECT b.rolname FROM pg_roles b
        WHERE b.rolname LIKE 'pg\\_%%' AND b.oid <> r.oid AND pg_has_role(r.oid, b.oid, 'MEMBER')
          AND b.rolname <> 'pg_database_owner' ORDER BY b.rolname),
  pg_has_role(r.oid, d.datdba, 'MEMBER'),
  ARRAY(SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%%'
          AND c.relkind IN ('r', 'v', 'm', 'p', 'f') AND pg_has_role(r.oid, c.relowner, 'MEMBER')
        ORDER BY c.relname LIMIT 3),
  ARRAY(SELECT n.nspname::text FROM pg_namespace n
        WHERE n.nspname NOT LIKE 'pg\\_temp%%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp%%'
          AND has_schema_privilege(r.oid, n.oid, 'CREATE') ORDER BY n.nspname),
  ARRAY(SELECT f FROM unnest(%s::text[]) AS f
        WHERE to_regprocedure(f) IS NOT NULL AND has_function_privilege(r.oid, to_regprocedure(f), 'EXECUTE')),
  current_database(), current_schema()
FROM pg_roles r, pg_database d
WHERE r.rolname = COALESCE(%s, current_user) AND d.datname = current_database()
"""


def login_problem(engine: str, conn: Connection, database: str, role: str | None = None) -> str | None:
    """Why the login of ``conn`` (or, on PostgreSQL, ``role`` seen from ``conn``) may not run
    model SQL on ``database``: the first privilege it must not have and the fix; None when it
    can only read. DuckDB has no logins (its read-only connection is checked at connect)."""
    if engine == POSTGRESQL:
        return _pg_problem(conn, role)
    if engine == MYSQL:
        return _mysql_problem(conn, database)
    return None


def _pg_problem(conn: Connection, role: str | None) -> str | None:
    row = conn.execute(_PG_INSPECT, (list(_PG_FILE_FUNCTIONS), role)).fetchone()
    if row is None:
        return f"the role {role!r} does not exist"
    name, superuser, createrole, createdb, replication, bypassrls, member_of, owns_db, owns, create_on, funcs, db, schema = row
    fix = f"log in as a role that has only GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {DEFAULT_READER} (jury db grants prints the statements)"
    who = f"the login {name!r}"
    for flag, what in (
        (superuser, "is a superuser"),
        (createrole, "has CREATEROLE"),
        (createdb, "has CREATEDB"),
        (replication, "has REPLICATION"),
        (bypassrls, "has BYPASSRLS"),
    ):
        if flag:
            return f"{who} {what}: {fix}"
    if member_of:
        return f"{who} is a member of {member_of[0]}: REVOKE {member_of[0]} FROM {name}, or {fix}"
    if owns_db:
        return f"{who} owns the database {db!r}: {fix}"
    if owns:
        return f"{who} owns the table {owns[0]!r}: {fix}"
    if create_on:
        return f"{who} may CREATE in the schema {create_on[0]!r}: REVOKE CREATE ON SCHEMA {create_on[0]} FROM PUBLIC, {name}"
    if funcs:
        return f"{who} may EXECUTE {funcs[0]}: REVOKE EXECUTE ON FUNCTION {funcs[0]} FROM PUBLIC, {name}"
    return None


_MYSQL_SYSTEM = {"mysql", "information_schema", "performance_schema", "sys"}
_GRANT_ON = re.compile(r"^GRANT (?P<privs>.+?) ON (?P<obj>.+?) TO (?P<rest>.+)$", re.IGNORECASE | re.DOTALL)
_COLUMNS = re.compile(r"\([^)]*\)")


def _mysql_problem(conn: Connection, database: str) -> str | None:
    if database.lower() in _MYSQL_SYSTEM:
        return f"the database {database!r} is the server's own: point jury at the benchmark's database"
    with conn.cursor() as cur:
        cur.execute("SELECT CURRENT_USER()")
        (user,) = cur.fetchone()
        cur.execute("SHOW GRANTS")
        lines = [str(r[0]) for r in cur.fetchall()]
    name, _, host = str(user).rpartition("@")
    return mysql_grants_problem(lines, name, host, database)


def mysql_grants_problem(lines: list[str], name: str, host: str, database: str) -> str | None:
    """The first grant of ``SHOW GRANTS`` (``lines``) beyond SELECT on ``database``, with the fix.
    Never quotes a line: they hold the password hash."""
    fix = f"log in as a user that has only GRANT SELECT ON `{database}`.* TO '{name}'@'{host}' (jury db grants prints the statements)"
    who = f"the login '{name}'@'{host}'"
    for line in lines:
        m = _GRANT_ON.match(line.strip())
        if m is None:  # GRANT role TO user, or SET DEFAULT ROLE
            if line.upper().startswith("GRANT"):
                return f"{who} is granted a role ({_role_of(line)}): a role may carry more than SELECT; {fix}"
            continue
        privs = [p.strip().upper() for p in _COLUMNS.sub("", m["privs"]).split(",")]
        obj = m["obj"].strip()
        if privs == ["PROXY"]:
            return f"{who} has PROXY on {obj}: {fix}"
        if obj == "*.*":
            extra = [p for p in privs if p != "USAGE"]
            if extra:
                return f"{who} has the global privilege {extra[0]} (on *.*): {fix}"
        else:
            extra = [p for p in privs if p != "SELECT"]
            if extra:
                return f"{who} has {extra[0]} on {obj}: {fix}"
            if _names_system_database(obj):
                return f"{who} has {privs[0]} on {obj}, one of the server's own databases: {fix}"
        if "WITH GRANT OPTION" in m["rest"].upper():
            return f"{who} has GRANT OPTION on {obj}: {fix}"
    return None


def _role_of(line: str) -> str:
    head = line.strip()[len("GRANT ") :]
    return head.split(" TO ", 1)[0].strip()[:60]


def _names_system_database(obj: str) -> bool:
    """Whether a grant's object (`db`.* or `db`.`table`) is, or as a pattern matches, one of the
    server's own databases (an unreadable object counts as one)."""
    m = re.match(r"^`((?:[^`]|``)+)`\.", obj) or re.match(r"^([^`.\s]+)\.", obj)
    if m is None:
        return True
    pattern = m.group(1).replace("``", "`")
    parts = []  # a LIKE pattern: _ one character, % any; \_ and \% the characters themselves
    for token in re.findall(r"\\.|.", pattern):
        if len(token) == 2:
            parts.append(re.escape(token[1]))
        elif token == "_":
            parts.append(".")
        elif token == "%":
            parts.append(".*")
        else:
            parts.append(re.escape(token))
    regex = "".join(parts)
    return any(re.fullmatch(regex, name, re.IGNORECASE) for name in _MYSQL_SYSTEM)


# --- the recipe ---------------------------------------------------------------------------------------


def _pg_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _my_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def reader_statements(
    engine: str, database: str, reader: str = DEFAULT_READER, *, host: str = "%", schema: str = "public"
) -> list[str]:
    """The statements (run by an admin) that make ``reader`` a login that can only read
    ``database``: what ``jury db grants`` prints. The password is set separately (PostgreSQL:
    psql's ``\\password``, which sends only a SCRAM verifier; MySQL: ``IDENTIFIED BY``)."""
    if engine == POSTGRESQL:
        r, d, s = _pg_ident(reader), _pg_ident(database), _pg_ident(schema)
        return [
            f"CREATE ROLE {r} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT;",
            f"\\password {reader}",
            f"ALTER ROLE {r} SET default_transaction_read_only = on;",
            f"GRANT CONNECT ON DATABASE {d} TO {r};",
            f"GRANT USAGE ON SCHEMA {s} TO {r};",
            f"GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {r};",
            f"-- PostgreSQL 14 and older only: REVOKE CREATE ON SCHEMA {s} FROM PUBLIC;",
        ]
    if engine == MYSQL:
        who = f"{_my_literal(reader)}@{_my_literal(host)}"
        return [
            f"CREATE USER {who} IDENTIFIED BY '<password>';",
            f"GRANT SELECT ON `{database.replace('`', '``')}`.* TO {who};",
        ]
    assert engine == DUCKDB
    return [
        "-- DuckDB has no logins: jury opens the file read_only, with enable_external_access = false,",
        "-- extension autoloading off and lock_configuration = true; give it a file it may read.",
    ]
