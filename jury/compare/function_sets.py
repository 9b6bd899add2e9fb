"""Function-set accuracy (Spider 2.0-AIFunc's FSA): does an answer call the same functions
(of a chosen family, e.g. ``AI_*``) as the gold query?

Per pair: the set of function names in the candidate and in the gold, parsed with sqlglot in
the run's dialect, kept when they match the pattern. Names are compared upper-cased; a
function sqlglot does not know (``AI_FILTER``) keeps its name as written, a known one gets
sqlglot's canonical name (``IFNULL`` and ``COALESCE`` are one function, ``SUBSTR`` is
``SUBSTRING``). Only what is written as a call (a name followed by parentheses) counts, anywhere
in the query (a CASE's condition, THEN or ELSE too): syntax sqlglot represents as a function
node is not a call (operators, ``CASE``, ``EXISTS (...)``, ``a::int``, ``DATE '...'``,
``CURRENT_DATE`` without parentheses, array and struct literals), nor a node sqlglot adds on
its own (``STRFTIME(f, d)`` reads as a time-to-string of a date conversion: only the first was
written). A query sqlglot cannot parse falls back to every ``name(`` outside string literals
and comments (sqlglot's tokenizer). The pattern is a glob (``AI_*``, case-insensitive)
or, prefixed ``re:``, a regular expression that must match the whole name (case-insensitive).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import TokenType, exp

from jury.errors import InputError
from jury.inputs.records import GoldItem, QuestionId, RunRecord

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult


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
            raise InputError(f"function_set: bad regular expression {pattern[3:]!r}: {exc}") from None
        return lambda name: regex.fullmatch(name) is not None
    if not pattern.strip():
        raise InputError("function_set: empty pattern")
    upper = pattern.upper()
    return lambda name: fnmatch.fnmatchcase(name, upper)


@lru_cache(maxsize=65_536)
def function_names(sql: str, dialect: str = "sqlite") -> frozenset[str]:
    """Every function name ``sql`` calls, upper-cased.

    >>> sorted(function_names("SELECT ai_filter(a), COUNT(*) FROM t WHERE AI_Classify(b, 'x') = 'y'"))
    ['AI_CLASSIFY', 'AI_FILTER', 'COUNT']
    >>> sorted(function_names("SELECT CASE WHEN x > 0 THEN 1 ELSE AI_F(a) END FROM t WHERE EXISTS (SELECT 1)"))
    ['AI_F']
    >>> sorted(function_names("SELECT 'ai_x(' , AI_Y(a FROM"))  # unparseable: tokens
    ['AI_Y']
    """
    try:
        trees = sqlglot.parse(sql, read=dialect)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return _called_tokens(sql, dialect)
    called = _call_names(sql, dialect)
    classes = {cls for name in called for cls in _classes_of_call(name, dialect)}
    names = set()
    for tree in trees:
        if tree is None:
            continue
        for node in tree.find_all(exp.Func):
            if _is_syntax(node):
                continue
            if isinstance(node, exp.Anonymous):
                if node.name.upper() in called:
                    names.add(node.name.upper())
            elif type(node) in classes or node.sql_name().upper() in called or node.key.upper() in called:
                names.add(node.sql_name().upper())
    return frozenset(names)


def _is_syntax(node: exp.Func) -> bool:
    """Operators, CASE and its WHEN branches (sqlglot's ``If`` nodes under ``Case.ifs``) and
    EXISTS: syntax sqlglot models as functions, never a call even when written ``EXISTS (...)``."""
    if isinstance(node, (exp.Binary, exp.Connector, exp.Unary, exp.Case, exp.Exists)):
        return True
    return isinstance(node, exp.If) and isinstance(node.parent, exp.Case) and node.arg_key == "ifs"


def _call_names(sql: str, dialect: str) -> frozenset[str]:
    """Upper-cased text of every token directly followed by ``(`` (any token type: ``CAST``,
    ``LEFT`` and ``IF`` are keywords to the tokenizer)."""
    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(sql)
    except (sqlglot.errors.TokenError, ValueError):
        return frozenset()
    return frozenset(a.text.upper() for a, b in zip(tokens, tokens[1:]) if b.token_type == TokenType.L_PAREN)


@lru_cache(maxsize=4096)
def _classes_of_call(name: str, dialect: str) -> frozenset[type]:
    """The node classes sqlglot builds for a call ``name(...)`` in ``dialect`` (``IFNULL`` ->
    Coalesce), probed with zero to three plain arguments; empty when none parses to a function
    (a call with its own syntax, ``CAST(a AS INT)``, is matched by its name instead)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", name):
        return frozenset()
    found = set()
    for args in ("", "a", "a, b", "a, b, c"):
        try:
            tree = sqlglot.parse_one(f"SELECT {name}({args})", read=dialect)
        except Exception:  # a builder may fail on plain arguments (IndexError, AttributeError): no probe
            continue
        first = tree.expressions[0] if isinstance(tree, exp.Select) and tree.expressions else None
        if isinstance(first, exp.Func) and not isinstance(first, exp.Anonymous):
            found.add(type(first))
    return frozenset(found)


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
    pairs: Sequence[PairResult],
    records: Sequence[RunRecord],
    gold: Mapping[QuestionId, GoldItem],
    pattern: str,
    dialect: str = "sqlite",
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
        if pair.excluded or not pair.routed:
            continue
        g = frozenset(n for n in function_names(gold[record.question_id].sql, dialect) if keep(n))
        c = frozenset(n for n in function_names(record.sql or "", dialect) if keep(n)) if record.sql else frozenset()
        out[i] = (g, c)
    return out


def function_set_accuracy(
    pairs: Sequence[PairResult], sets: dict[int, tuple[frozenset[str], frozenset[str]]]
) -> dict[str, tuple[int, int]]:
    """model -> (pairs whose sets are equal, pairs counted): Spider 2.0-AIFunc's FSA counts
    every instance, so a pair where neither side calls a matching function counts as equal."""
    out: dict[str, tuple[int, int]] = {}
    for i, (g, c) in sets.items():
        k, n = out.get(pairs[i].model, (0, 0))
        out[pairs[i].model] = (k + (g == c), n + 1)
    return out
