"""Rewrites of a gold query (through sqlglot) that expose what its result leaves to chance.

- :func:`limit_probe`: the query without its LIMIT/OFFSET, its sort keys appended as extra
  columns, so the rows around the cut can be compared on the sort key;
- :func:`bare_column_probes`: for each SELECT with GROUP BY whose projection holds a column
  neither grouped nor aggregated (SQLite then returns the value of an arbitrary row of the
  group), a query listing the groups where that column takes more than one value.

Pure functions of the SQL text; executing them belongs to the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

KEY_PREFIX = "__jury_key"


@dataclass(frozen=True)
class LimitProbe:
    sql: str  # the query without LIMIT/OFFSET, sort keys appended as extra columns
    limit: int
    offset: int
    key_columns: tuple[int, ...]  # result column indexes holding the sort key, in ORDER BY order
    order_text: str  # the ORDER BY clause as written (for evidence)


@dataclass(frozen=True)
class BareProbe:
    sql: str  # group keys, then COUNT(DISTINCT bare) per bare column, for groups with > 1 value
    bare: tuple[str, ...]  # the bare columns as written
    group_width: int  # how many leading columns hold the group key


def _parse(sql: str, dialect: str) -> exp.Expr | None:
    try:
        tree = sqlglot.parse_one(sql.strip().rstrip(";"), read=dialect)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return None
    return tree


def _int_literal(node: exp.Expression | None) -> int | None:
    expr = node.args.get("expression") if node is not None else None
    if isinstance(expr, exp.Literal) and not expr.is_string and str(expr.this).isdigit():
        return int(expr.this)
    return None


def limit_probe(sql: str, width: int, dialect: str = "sqlite") -> LimitProbe | None:
    """The probe for an outermost ``SELECT … ORDER BY … LIMIT k [OFFSET m]`` (literal k and m),
    or None when the query has no such clause or its sort key cannot be located.

    ``width`` is the number of columns the gold query returns (it expands ``*``). A key that
    is an ordinal (``ORDER BY 2``), an output alias or a projected expression points at that
    column; any other key expression is appended as an extra column.

    >>> p = limit_probe("SELECT name FROM t ORDER BY score DESC LIMIT 1", 1)
    >>> p.sql, p.limit, p.offset, p.key_columns
    ('SELECT name, score AS __jury_key0 FROM t ORDER BY score DESC', 1, 0, (1,))
    >>> limit_probe("SELECT a, b FROM t ORDER BY 2 LIMIT 3 OFFSET 1", 2).key_columns
    (1,)
    >>> limit_probe("SELECT a FROM t LIMIT 1", 1) is None
    True
    """
    tree = _parse(sql, dialect)
    if not isinstance(tree, exp.Select):
        return None
    order, limit_node = tree.args.get("order"), tree.args.get("limit")
    limit = _int_literal(limit_node)
    offset = _int_literal(tree.args.get("offset")) if tree.args.get("offset") is not None else 0
    if order is None or limit is None or offset is None:
        return None
    probe = tree.copy()
    probe.set("limit", None)
    probe.set("offset", None)
    projections = list(probe.expressions)
    has_star = any(isinstance(p, exp.Star) or (isinstance(p, exp.Column) and p.is_star) for p in projections)
    if len(projections) != width and not has_star:
        return None
    aliases = {p.alias_or_name.lower(): i for i, p in enumerate(projections) if not has_star and p.alias_or_name}
    texts = {p.unalias().sql(dialect=dialect).lower(): i for i, p in enumerate(projections) if not has_star}
    keys: list[int] = []
    extra = 0
    for ordered in order.expressions:
        key = ordered.this
        if isinstance(key, exp.Literal) and not key.is_string and str(key.this).isdigit():
            keys.append(int(key.this) - 1)
            continue
        if isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
            keys.append(aliases[key.name.lower()])
            continue
        text = key.sql(dialect=dialect).lower()
        if text in texts:
            keys.append(texts[text])
            continue
        if probe.args.get("distinct") is not None:
            return None  # an extra column would change which rows are distinct
        probe = probe.select(key.copy().as_(f"{KEY_PREFIX}{extra}"), copy=False)
        keys.append(width + extra)
        extra += 1
    return LimitProbe(probe.sql(dialect=dialect), limit, offset, tuple(keys), order.sql(dialect=dialect))


_DEFINED_BY = (exp.Min, exp.Max)  # with exactly one of them, SQLite takes bare columns from its row


def bare_column_probes(sql: str, dialect: str = "sqlite") -> list[BareProbe]:
    """One probe per SELECT (outer or nested) with GROUP BY and bare projected columns.

    >>> [p.bare for p in bare_column_probes("SELECT g, name FROM t GROUP BY g")]
    [('name',)]
    >>> bare_column_probes("SELECT g, COUNT(*), MAX(v) FROM t GROUP BY g")
    []
    >>> bare_column_probes("SELECT g, name, MAX(v) FROM t GROUP BY g")  # SQLite defines it
    []
    """
    tree = _parse(sql, dialect)
    if tree is None:
        return []
    probes = []
    for select in tree.find_all(exp.Select):
        group = select.args.get("group")
        if group is None or not group.expressions:
            continue
        grouped = [g for g in group.expressions]
        if any(isinstance(g, exp.Literal) for g in grouped):
            continue  # GROUP BY 1: positional keys are not rewritten
        aggregates = [a for p in select.expressions for a in p.find_all(exp.AggFunc)]
        if len(aggregates) == 1 and isinstance(aggregates[0], _DEFINED_BY):
            continue
        group_texts = {g.sql(dialect=dialect).lower() for g in grouped}
        aliases = {p.alias.lower() for p in select.expressions if p.alias}
        if group_texts & aliases:
            continue  # grouped by an output alias: not rewritten
        bare = []
        for p in select.expressions:
            inner = p.unalias()
            if isinstance(inner, exp.Star) or inner.find(exp.AggFunc) or inner.sql(dialect=dialect).lower() in group_texts:
                continue
            columns = list(inner.find_all(exp.Column))
            if not columns or all(c.sql(dialect=dialect).lower() in group_texts for c in columns):
                continue
            if any(c.is_star for c in columns):
                continue
            bare.append(inner)
        if not bare:
            continue
        probe = select.copy()
        counts = [exp.Count(this=exp.Distinct(expressions=[b.copy()])) for b in bare]
        probe.set("expressions", [g.copy() for g in grouped] + counts)
        several = exp.or_(*[exp.GT(this=c.copy(), expression=exp.Literal.number(1)) for c in counts])
        having = probe.args.get("having")
        condition = exp.and_(having.this.copy(), several) if having is not None else several
        probe.set("having", exp.Having(this=condition))
        for arg in ("order", "limit", "offset", "distinct"):
            probe.set(arg, None)
        probe.set("limit", exp.Limit(expression=exp.Literal.number(5)))
        probes.append(BareProbe(probe.sql(dialect=dialect), tuple(b.sql(dialect=dialect) for b in bare), len(grouped)))
    return probes
