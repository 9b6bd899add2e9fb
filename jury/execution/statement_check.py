"""The static check run before any SQL reaches an engine (jury.execution.engines): one
read-only query, or a one-line reason it may not run."""

from __future__ import annotations

from jury.execution.engine_urls import DIALECTS, DUCKDB

_FIRST_WORDS = {"select", "with", "values", "(", "table"}
_DENIED_WORDS = {
    "insert", "update", "delete", "merge", "upsert", "replace_into", "create", "drop", "alter", "truncate",
    "grant", "revoke", "into", "outfile", "dumpfile", "copy", "attach", "detach", "install", "pragma",
    "vacuum", "call", "execute", "lock", "notify",
}  # fmt: skip
_DENIED_FUNCTIONS = {
    # PostgreSQL: server files, large objects, other servers, signals, settings, SQL text run as data
    "pg_read_file", "pg_read_binary_file", "pg_stat_file", "pg_file_write", "pg_file_rename", "pg_file_unlink",
    "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile", "pg_promote",
    "pg_switch_wal", "pg_create_restore_point", "pg_logical_emit_message", "pg_notify", "set_config",
    "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml", "cursor_to_xmlschema",
    "pg_import_system_collations", "pg_backup_start", "pg_backup_stop",
    # MySQL / MariaDB
    "load_file", "sys_exec", "sys_eval", "get_lock", "release_lock",
    # DuckDB (also refused by enable_external_access = false)
    "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json", "read_json_auto",
    "read_json_objects", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects", "read_text", "read_blob",
    "glob", "sqlite_scan", "sqlite_attach", "postgres_scan", "postgres_attach", "mysql_scan", "iceberg_scan",
    "delta_scan", "read_xlsx", "getenv", "query", "query_table",
}  # fmt: skip
_DENIED_PREFIXES = ("pg_ls_", "lo_", "dblink", "pg_advisory")


def statement_problem(sql: str, engine: str) -> str | None:
    """Why ``sql`` may not run on ``engine`` (not one read-only query), or None.

    >>> statement_problem("SELECT 1; DROP TABLE t", "postgresql")
    'refused: more than one statement (only one query may run)'
    >>> statement_problem("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "postgresql")
    "refused: 'DELETE' may not appear in a query jury runs"
    >>> statement_problem("SELECT pg_read_file('/etc/passwd')", "postgresql")
    "refused: the function 'pg_read_file' reads or changes something outside the query's tables"
    >>> statement_problem("SELECT \\"update\\" FROM t;", "postgresql") is None
    True
    """
    import sqlglot
    from sqlglot.tokens import TokenType

    try:
        tokens = list(sqlglot.tokenize(sql, read=DIALECTS[engine]))
    except Exception as exc:  # sqlglot's TokenError and others: the SQL cannot even be read
        return f"refused: the SQL cannot be read ({' '.join(str(exc).split())[:200]})"
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    if not tokens:
        return "not a query: the SQL is empty"
    if any(t.token_type == TokenType.SEMICOLON for t in tokens):
        return "refused: more than one statement (only one query may run)"
    literal = {TokenType.STRING, TokenType.IDENTIFIER, TokenType.NATIONAL_STRING, TokenType.NUMBER}
    literal |= {t for t in (getattr(TokenType, n, None) for n in ("RAW_STRING", "BIT_STRING", "HEX_STRING")) if t}
    first = tokens[0].text.lower()
    if first not in _FIRST_WORDS:
        return f"refused: not a query (only SELECT, WITH or VALUES may run, not {tokens[0].text.upper()[:40]!r})"
    for i, tok in enumerate(tokens):
        if tok.token_type in literal:
            continue
        word = tok.text.lower()
        if word in _DENIED_WORDS:
            return f"refused: {tok.text.upper()!r} may not appear in a query jury runs"
        calls = i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.L_PAREN
        if (calls or engine == DUCKDB) and (word in _DENIED_FUNCTIONS or word.startswith(_DENIED_PREFIXES)):
            return f"refused: the function {tok.text!r} reads or changes something outside the query's tables"
    return None
