"""The static check run before any SQL reaches an engine (jury.execution.engines): one
read-only query built only of what the allow-list names, or a one-line reason it may not run.

It is the second line: the first is the login's own privileges (a role that can only read the
benchmark's tables, checked at connect by jury.execution.engine_privileges). The check works
on the statement as the engine will read it:

1. MySQL/MariaDB executable comments and optimizer hints (``/*! … */``, ``/*!50000 … */``,
   ``/*M! … */``, ``/*+ … */``) are refused outright, found by MySQL's own lexing rules
   (strings, backticks, ``#`` and ``-- `` comments) under every quoting mode a server may be in,
   so a string that holds ``/*!`` is data and a comment that hides one is refused;
2. the SQL is parsed in the engine's dialect (sqlglot); PostgreSQL's ``U&"…"`` identifiers are
   decoded first; it must be one SELECT, WITH, VALUES or TABLE query;
3. every node of the parsed query must be allowed (jury.execution.sql_allowlist): the syntax of
   a query, casts to data types, tables that are the database's own tables (or the query's own
   WITH names, as the engine scopes them), and functions called by a name on the engine's
   list, the name compared after unquoting as the engine resolves it; a schema-qualified call
   (``pg_catalog.f()``) is refused. So an unknown function is refused by default.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

from jury.errors import printable
from jury.execution.engine_urls import DIALECTS, DUCKDB, MYSQL, POSTGRESQL
from jury.execution.sql_allowlist import FUNCTIONS, NODES, SYNTAX_FUNCTIONS, TABLE_FUNCTIONS, TYPES

if TYPE_CHECKING:
    from sqlglot import Token, exp
    from sqlglot.dialects.dialect import Dialect

#: SQL longer than this is refused before it is parsed (BIRD's longest query is ~3,000 characters).
MAX_SQL_CHARS = 200_000
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


_quiet = contextvars.ContextVar("jury_statement_check", default=False)


class _Quiet(logging.Filter):
    """sqlglot logs a warning for syntax it falls back on (EXPLAIN, DO, FOR UPDATE): while the
    check parses, those are refusals it reports itself, not warnings for the user."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _quiet.get()


_filter: list[_Quiet] = []  # installed on the first check, not at import


def _install_quiet() -> None:
    if not _filter:
        _filter.append(_Quiet())
        logging.getLogger("sqlglot").addFilter(_filter[0])


def fold(name: str) -> str:
    """Lower-case ASCII letters only, as PostgreSQL folds an unquoted name."""
    return name.translate(_ASCII_LOWER)


def statement_problem(
    sql: str,
    engine: str,
    *,
    tables: Iterable[str] | None = None,
    allow_functions: Iterable[str] = (),
    ansi_quotes: bool = False,
) -> str | None:
    """Why ``sql`` may not run on ``engine`` (not one read-only query of allowed parts), or None.

    ``tables``: the database's own tables (from its catalogue); a table the query reads must be
    one of them or one of its own WITH names (None: table names are not checked).
    ``allow_functions``: names allowed beyond the engine's list; ``ansi_quotes``: MySQL reads
    ``"…"`` as a name (the session's ANSI_QUOTES).

    >>> statement_problem("SELECT 1; DROP TABLE t", "postgresql")
    'refused: more than one statement (only one query may run)'
    >>> statement_problem("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "postgresql")
    'refused: DELETE may not appear in a query jury runs'
    >>> statement_problem("SELECT pg_read_file('/etc/passwd')", "postgresql")
    "refused: the function 'pg_read_file' is not one a query may call on postgresql (see jury.execution.sql_allowlist)"
    >>> statement_problem('SELECT "update" FROM t;', "postgresql") is None
    True
    """
    _install_quiet()
    token = _quiet.set(True)
    try:
        return _problem(sql, engine, tables, allow_functions, ansi_quotes)
    finally:
        _quiet.reset(token)


def split_statements(sql: str, engine: str, *, ansi_quotes: bool = False) -> list[str] | None:
    """The statements of ``sql`` as written, split at its top-level semicolons (sqlglot's
    tokenizer: a semicolon inside a string, a quoted name or a comment is no separator), empty
    ones dropped; None when the SQL cannot be tokenized (statement_problem then says why).

    >>> split_statements("SELECT 1; SELECT ';' -- a; comment\\n;", "postgresql")
    ['SELECT 1', "SELECT ';' -- a; comment"]
    """
    import sqlglot
    from sqlglot import TokenType
    from sqlglot.errors import SqlglotError

    _install_quiet()
    token = _quiet.set(True)
    try:
        tokens = list(sqlglot.tokenize(sql, read=_dialect(engine, ansi_quotes)))
    except (SqlglotError, RecursionError, ValueError):
        return None
    finally:
        _quiet.reset(token)
    pieces: list[str] = []
    start = 0
    for t in tokens:
        if t.token_type == TokenType.SEMICOLON:
            pieces.append(sql[start : t.start])
            start = t.end + 1
    pieces.append(sql[start:])
    return [p.strip() for p in pieces if p.strip()]


def _problem(
    sql: str, engine: str, tables: Iterable[str] | None, allow_functions: Iterable[str], ansi_quotes: bool
) -> str | None:
    import sqlglot
    from sqlglot import TokenType, exp
    from sqlglot.errors import SqlglotError

    if len(sql) > MAX_SQL_CHARS:
        return f"refused: the SQL is longer than {MAX_SQL_CHARS:,} characters"
    if engine == MYSQL:
        found = mysql_executable_comment(sql)
        if found is not None:
            return f"refused: a MySQL executable comment or optimizer hint ({found!r}) may not appear in a query jury runs"
    dialect = _dialect(engine, ansi_quotes)
    try:
        tokens = list(sqlglot.tokenize(sql, read=dialect))
    except (SqlglotError, RecursionError, ValueError) as exc:  # TokenError and others: the SQL cannot even be read
        return f"refused: the SQL cannot be read ({_short(exc)})"
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    if not tokens:
        return "not a query: the SQL is empty"
    if any(t.token_type == TokenType.SEMICOLON for t in tokens):
        return "refused: more than one statement (only one query may run)"
    if tokens[0].token_type == TokenType.HINT or any(t.token_type == TokenType.HINT for t in tokens):
        return "refused: an optimizer hint may not appear in a query jury runs"
    text = sql[: tokens[-1].end + 1]
    if engine in (POSTGRESQL, DUCKDB):
        text, problem = _decode_unicode_identifiers(text, tokens)
        if problem is not None:
            return problem
    try:
        trees = [t for t in sqlglot.parse(text, read=dialect) if t is not None and not isinstance(t, exp.Semicolon)]
    except (SqlglotError, RecursionError, ValueError) as exc:
        return f"refused: the SQL is not one {engine} query jury can read ({_short(exc)})"
    if len(trees) != 1:
        return "refused: more than one statement (only one query may run)"
    tree = trees[0]
    if not isinstance(tree, exp.Query | exp.Values):
        return f"refused: not a query (only SELECT, WITH, VALUES or TABLE may run, not {_what(tree)})"
    names = FUNCTIONS[engine] | {fold(n) for n in allow_functions}
    known = None if tables is None else {fold(t) for t in tables}
    for node in tree.walk():
        problem = _node_problem(node, text, engine, names, known)
        if problem is not None:
            return problem
    return None


def _node_problem(
    node: exp.Expr, text: str, engine: str, names: frozenset[str] | set[str], tables: set[str] | None
) -> str | None:
    from sqlglot import exp

    called = _called_name(node, text)
    if called is not None:
        name, quoted = called
        if isinstance(node.parent, exp.Dot) and node.arg_key == "expression":
            return f"refused: a schema-qualified call ({_clip(node.parent.sql())}); call functions by their name"
        if not _allowed_name(name, quoted, engine, names):
            return f"refused: the function {name!r} is not one a query may call on {engine} (see jury.execution.sql_allowlist)"
        table_function = isinstance(node.parent, exp.Table) and node.arg_key == "this"
        if table_function and _key(name, quoted, engine) not in TABLE_FUNCTIONS[engine]:
            return f"refused: the function {name!r} may not stand in FROM on {engine}"
        return None
    kind = type(node).__name__
    if isinstance(node, exp.Func):
        if kind not in SYNTAX_FUNCTIONS:
            return f"refused: {_what(node)} may not appear in a query jury runs"
        return None
    if kind not in NODES:
        return f"refused: {_what(node)} may not appear in a query jury runs"
    if isinstance(node, exp.DataType):
        type_name = node.this.name if hasattr(node.this, "name") else str(node.this)
        if type_name not in TYPES:
            return f"refused: a cast to {_clip(node.sql())} may not appear in a query jury runs"
    if isinstance(node, exp.Table):
        return _table_problem(node, tables, engine)
    return None


# Leaves sqlglot marks with their place in the text: anything else so marked was called by a name.
_LEAF_NAMES = """Identifier Literal Star Var Null Boolean Placeholder Parameter SessionParameter ByteString BitString
HexString National UnicodeString RawString Introducer"""
_LEAVES = frozenset(_LEAF_NAMES.split())


def _called_name(node: exp.Expr, text: str) -> tuple[str, bool] | None:
    """(name as written, unquoted; whether it was quoted) of a function called by its name."""
    from sqlglot import exp

    if isinstance(node, exp.Anonymous):
        this = node.this
        if isinstance(this, exp.Identifier):
            return this.this, bool(this.quoted)
        return str(this), False
    meta = node.meta
    if type(node).__name__ in _LEAVES or "start" not in meta or "end" not in meta:
        return None
    written = text[meta["start"] : meta["end"] + 1]
    if len(written) >= 2 and written[0] == written[-1] and written[0] in '"`':
        return written[1:-1].replace(written[0] * 2, written[0]), True
    return written, False


def _key(name: str, quoted: bool, engine: str) -> str:
    """The name as the engine resolves it: PostgreSQL folds an unquoted name to lower case and
    keeps a quoted one exactly; MySQL/MariaDB and DuckDB resolve functions case-insensitively."""
    return name if engine == POSTGRESQL and quoted else fold(name)


def _allowed_name(name: str, quoted: bool, engine: str, names: Collection[str]) -> bool:
    return _key(name, quoted, engine) in names


def _table_problem(node: exp.Table, tables: set[str] | None, engine: str) -> str | None:
    from sqlglot import exp

    if not isinstance(node.this, exp.Identifier):
        return None  # a function (checked as a call), a subquery or VALUES
    if node.args.get("db") or node.args.get("catalog"):
        return f"refused: a qualified table name ({_clip(node.sql())}): a query reads the database's own tables by their name"
    name = node.this.this
    if tables is None or fold(name) in tables or _is_visible_cte(node, name):
        return None
    if engine == MYSQL and fold(name) == "dual" and not node.this.quoted:
        return None  # MySQL's keyword for no table
    return f"refused: {name!r} is not one of the database's tables"


def _is_visible_cte(table: exp.Table, name: str) -> bool:
    """Whether a WITH around ``table`` names ``name`` where ``table`` stands (a CTE's body sees
    the CTEs before it, and itself only WITH RECURSIVE; the main query sees them all)."""
    from sqlglot import exp

    key = fold(name)
    child: exp.Expr = table
    node = table.parent
    while node is not None:
        if isinstance(node, exp.With):  # reached from below: ``child`` is one of its CTEs
            for cte in node.expressions:
                if cte is child:  # the table is in this CTE's body: the ones before it, itself if recursive
                    if node.args.get("recursive") and fold(cte.alias_or_name) == key:
                        return True
                    break
                if fold(cte.alias_or_name) == key:
                    return True
        elif (
            isinstance(node, exp.Query)
            and isinstance(with_ := _with_of(node), exp.With)
            and child is not with_
            and any(fold(c.alias_or_name) == key for c in with_.expressions)
        ):
            return True
        child, node = node, node.parent
    return False


def _with_of(node: exp.Expr) -> exp.Expr | None:
    found: exp.Expr | None = node.args.get("with_") or node.args.get("with")  # sqlglot 30 names the arg with_
    return found


def _what(node: exp.Expr) -> str:
    from sqlglot import exp

    if isinstance(node, exp.Command):
        return str(node.this).upper()
    names = {"Into": "INTO", "Lock": "a locking clause (FOR UPDATE/SHARE)", "Delete": "DELETE", "Insert": "INSERT"}
    names |= {"Update": "UPDATE", "Merge": "MERGE", "Create": "CREATE", "Drop": "DROP", "Copy": "COPY"}
    names |= {"SessionParameter": "a server variable (@@…)", "Parameter": "a variable or parameter (@…, $1)"}
    names |= {"Placeholder": "a placeholder", "ObjectIdentifier": "an object identifier type (regclass, regproc, …)"}
    kind = type(node).__name__
    return names.get(kind, f"{kind} ({_clip(node.sql())})")


def _clip(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _short(exc: BaseException) -> str:
    """sqlglot's message, one line without its ANSI underline of the failing token."""
    return " ".join(printable(str(exc)).split())[:200] or type(exc).__name__


# --- dialects -------------------------------------------------------------------------------------

_VARIANTS: dict[str, type[Dialect]] = {}


def _dialect(engine: str, ansi_quotes: bool) -> str | type[Dialect]:
    """The sqlglot dialect the engine reads SQL in: DuckDB (which also quotes names with
    backticks, as SQLite and MySQL do), MySQL with ANSI_QUOTES ("..." a name, not a string)."""
    if engine == DUCKDB:
        if "duckdb" not in _VARIANTS:
            from sqlglot.dialects.duckdb import DuckDB

            class DuckDBBackticks(DuckDB):
                class Tokenizer(DuckDB.Tokenizer):
                    IDENTIFIERS = ['"', "`"]

            _VARIANTS["duckdb"] = DuckDBBackticks
        return _VARIANTS["duckdb"]
    if engine != MYSQL or not ansi_quotes:
        return DIALECTS[engine]
    if "mysql" not in _VARIANTS:
        from sqlglot.dialects.mysql import MySQL

        class MySQLAnsiQuotes(MySQL):
            class Tokenizer(MySQL.Tokenizer):
                QUOTES = ["'"]
                IDENTIFIERS = ["`", '"']

        _VARIANTS["mysql"] = MySQLAnsiQuotes
    return _VARIANTS["mysql"]


# --- MySQL executable comments ----------------------------------------------------------------------

_MYSQL_SPACE = frozenset(" \t\n\r\x0b\x0c")


def mysql_executable_comment(sql: str) -> str | None:
    """The first executable comment or optimizer hint (``/*!``, ``/*M!``, ``/*+``) MySQL or MariaDB
    would see in ``sql``, read with the server's lexing rules under every mode that changes them
    (backslash escapes on or off: NO_BACKSLASH_ESCAPES; ``"`` a string or a name: ANSI_QUOTES), or None.

    >>> mysql_executable_comment("SELECT 1 /*! INTO OUTFILE '/tmp/x' */")
    "/*! INTO OUTFILE '/tmp/x' */"
    >>> mysql_executable_comment("SELECT '/*! not a comment */' AS s") is None
    True
    """
    for backslash in (True, False):
        for ansi in (False, True):
            found = _mysql_scan(sql, backslash_escapes=backslash, ansi_quotes=ansi)
            if found is not None:
                return found
    return None


def _mysql_scan(sql: str, *, backslash_escapes: bool, ansi_quotes: bool) -> str | None:
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"`":
            name = c == "`" or (c == '"' and ansi_quotes)  # a name: no backslash escapes
            i += 1
            while i < n:
                if sql[i] == "\\" and backslash_escapes and not name:
                    i += 2
                    continue
                if sql[i] == c:
                    if i + 1 < n and sql[i + 1] == c:  # a doubled quote stays inside
                        i += 2
                        continue
                    break
                i += 1
            i += 1
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            head = sql[i + 2 : i + 4]
            if head[:1] in ("!", "+") or head.upper() == "M!":
                return _clip(sql[i : (end + 2) if end >= 0 else n], 80)
            if end < 0:
                return None  # an unterminated comment: the server refuses the statement
            i = end + 2
        elif c == "#" or (sql.startswith("--", i) and (i + 2 >= n or sql[i + 2] in _MYSQL_SPACE or ord(sql[i + 2]) < 32)):
            end = sql.find("\n", i)
            if end < 0:
                return None
            i = end + 1
        else:
            i += 1
    return None


# --- PostgreSQL U&"…" identifiers ---------------------------------------------------------------------


def _decode_unicode_identifiers(text: str, tokens: Sequence[Token]) -> tuple[str, str | None]:
    """``text`` with every ``U&"…"`` identifier (and its ``UESCAPE 'c'``) written as the plain
    quoted name it stands for, as PostgreSQL decodes it; or a refusal for a bad escape."""
    from sqlglot import TokenType

    out: list[str] = []
    last, i = 0, 0
    while i + 2 < len(tokens):
        u, amp, ident = tokens[i], tokens[i + 1], tokens[i + 2]
        if not (
            u.token_type == TokenType.VAR
            and u.text in ("U", "u")
            and amp.token_type == TokenType.AMP
            and ident.token_type == TokenType.IDENTIFIER
            and u.end + 1 == amp.start
            and amp.end + 1 == ident.start
        ):
            i += 1
            continue
        escape, end, step = "\\", ident.end, 3
        if i + 4 < len(tokens) and fold(tokens[i + 3].text) == "uescape" and tokens[i + 4].token_type == TokenType.STRING:
            escape, end, step = tokens[i + 4].text, tokens[i + 4].end, 5
        name = _unicode_unescape(ident.text, escape)
        if name is None:
            return text, f'refused: an invalid Unicode escape in U&"{_clip(ident.text, 40)}"'
        out += [text[last : u.start], '"' + name.replace('"', '""') + '"']
        last, i = end + 1, i + step
    return "".join(out) + text[last:], None


def _unicode_unescape(body: str, escape: str) -> str | None:
    """PostgreSQL's U& decoding: ESC + 4 hex digits, ESC + '+' + 6 hex digits, ESC ESC; None when invalid."""
    hexdigits = set("0123456789abcdefABCDEF")
    if len(escape) != 1 or escape in hexdigits or escape in "+'\" \t\r\n":
        return None
    out: list[str] = []
    i, high = 0, None
    while i < len(body):
        c = body[i]
        if c != escape:
            if high is not None:
                return None
            out.append(c)
            i += 1
            continue
        if body[i + 1 : i + 2] == escape:
            if high is not None:
                return None
            out.append(escape)
            i += 2
            continue
        if body[i + 1 : i + 2] == "+":
            digits, i = body[i + 2 : i + 8], i + 8
            width = 6
        else:
            digits, i = body[i + 1 : i + 5], i + 5
            width = 4
        if len(digits) != width or not set(digits) <= hexdigits:
            return None
        code = int(digits, 16)
        if high is not None:  # the second half of a surrogate pair
            if not 0xDC00 <= code <= 0xDFFF:
                return None
            code, high = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00), None
        elif 0xD800 <= code <= 0xDBFF:
            high = code
            continue
        if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return None
        out.append(chr(code))
    return None if high is not None else "".join(out)
