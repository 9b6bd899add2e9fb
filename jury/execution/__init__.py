"""Stage 2, execution: SQL on read-only SQLite with timeouts and caps, table schemas, and
the embedded store (executions, model calls, votes, claims).
"""
