"""Function-set accuracy (Spider 2.0-AIFunc's FSA): does an answer call the same functions
(of a chosen family, e.g. ``AI_*``) as the gold query?

Per pair: the set of function names in the candidate and in the gold, parsed with sqlglot in
the run's dialect, kept when they match the pattern. Names are compared upper-cased; a
function sqlglot does not know (``AI_FILTER``) keeps its name as written, a known one gets
sqlglot's canonical name (``IFNULL`` and ``COALESCE`` are one function, ``SUBSTR`` is
``SUBSTRING``). A query sqlglot cannot parse falls back to every ``name(`` outside string
literals and comments (sqlglot's tokenizer). The pattern is a glob (``AI_*``, case-insensitive)
or, prefixed ``re:``, a regular expression that must match the whole name (case-insensitive).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from jury.errors import InputError
from jury.vocab import Outcome


def name_matcher(pattern: str) -> Callable[[str], bool]:
    """A test on upper-cased function names: ``re:REGEX`` (full match) or a glob.

    >>> m = name_matcher("ai_*"); m("AI_FILTER"), m("COUNT")
    (True, False)
    >>> name_matcher("re:AI_(FILTER|CLASSIFY)")("AI_CLASSIFY")
    True
    """
    if pattern.startswith("re:"):
        try:
            regex = re.compile(pattern[3:], re.IGNORECASE)
        except re.error as exc:
            raise InputError(f"--function-set: bad regular expression {pattern[3:]!r}: {exc}") from None
        return lambda name: regex.fullmatch(name) is not None
    if not pattern.strip():
        raise InputError("--function-set: empty pattern")
    upper = pattern.upper()
    return lambda name: fnmatch.fnmatchcase(name, upper)


@lru_cache(maxsize=65_536)
def function_names(sql: str, dialect: str = "sqlite") -> frozenset[str]:
    """Every function name ``sql`` calls, upper-cased.

    >>> sorted(function_names("SELECT ai_filter(a), COUNT(*) FROM t WHERE AI_Classify(b, 'x') = 'y'"))
    ['AI_CLASSIFY', 'AI_FILTER', 'COUNT']
    >>> sorted(function_names("SELECT 'ai_x(' , AI_Y(a FROM"))  # unparseable: tokens
    ['AI_Y']
    """
    try:
        trees = sqlglot.parse(sql, read=dialect)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return _called_tokens(sql, dialect)
    names = set()
    for tree in trees:
        if tree is None:
            continue
        for node in tree.find_all(exp.Func):
            if isinstance(node, (exp.Binary, exp.Connector, exp.Unary, exp.Case)) or isinstance(node.parent, exp.Case):
                continue  # AND, OR, NOT, CASE WHEN...: syntax sqlglot models as functions
            names.add((node.name if isinstance(node, exp.Anonymous) else node.sql_name()).upper())
    return frozenset(names)


def _called_tokens(sql: str, dialect: str) -> frozenset[str]:
    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(sql)
    except (sqlglot.errors.TokenError, ValueError):
        return frozenset()
    return frozenset(
        a.text.upper() for a, b in zip(tokens, tokens[1:]) if b.token_type == TokenType.L_PAREN and a.token_type == TokenType.VAR
    )


def check_dialect(dialect: str) -> str:
    try:
        sqlglot.Dialect.get_or_raise(dialect)
    except ValueError:
        raise InputError(
            f"--dialect: unknown SQL dialect {dialect!r} (sqlglot's names: sqlite, postgres, snowflake, ...)"
        ) from None
    return dialect


def function_set_matches(
    pairs: list, records: list, gold: dict, pattern: str, dialect: str = "sqlite"
) -> dict[int, tuple[frozenset[str], frozenset[str]]]:
    """Index of each scored, routed pair -> (gold's matching functions, candidate's).

    ``pairs[i]`` is the pair of ``records[i]`` (jury.compare.outcomes.evaluate keeps that
    order). A pair without candidate SQL has the empty set; gold errors and misrouted pairs
    are left out (they are out of strict's denominator too).
    """
    keep = name_matcher(pattern)
    check_dialect(dialect)
    out = {}
    for i, (pair, record) in enumerate(zip(pairs, records, strict=True)):
        if pair.outcome == Outcome.GOLD_ERROR or not pair.routed:
            continue
        g = frozenset(n for n in function_names(gold[record.question_id].sql, dialect) if keep(n))
        c = frozenset(n for n in function_names(record.sql or "", dialect) if keep(n)) if record.sql else frozenset()
        out[i] = (g, c)
    return out


def function_set_accuracy(pairs: list, sets: dict[int, tuple[frozenset[str], frozenset[str]]]) -> dict[str, tuple[int, int]]:
    """model -> (pairs whose sets are equal, pairs counted): Spider 2.0-AIFunc's FSA counts
    every instance, so a pair where neither side calls a matching function counts as equal."""
    out: dict[str, tuple[int, int]] = {}
    for i, (g, c) in sets.items():
        k, n = out.get(pairs[i].model, (0, 0))
        out[pairs[i].model] = (k + (g == c), n + 1)
    return out
