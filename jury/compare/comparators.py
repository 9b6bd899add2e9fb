"""Result-row comparators for execution scoring.

Every comparator takes the gold rows and the predicted rows (``list[tuple]`` of
SQLite Python values: None, int, float, str, bytes) and returns whether the
prediction counts as correct. All functions are pure: no I/O, no mutation.

Value equality is plain Python equality throughout (``1 == 1.0``, ``'1' != 1``,
``None == None``), which is what BIRD's ``set(pred) == set(gold)`` rule uses;
only :func:`subset` (Spider 2.0's rule, on raw values) and :func:`spider2` (Spider 2.0's
official decision, reproduced: jury/compare/spider2.py) compare numbers with a tolerance.

The rows of an engine's result hold values normalised to what SQLite returns (DECIMAL as
float or int, dates as text: jury.execution.engine_values.normalise), so every comparator
sees one result alike on every engine. ``bird`` alone is BIRD's number: on an engine's results
it compares the rows as the driver returned them (their ``raw_sha256`` digests,
:func:`bird_results`), as BIRD's evaluation scripts do (``Decimal('31.2000') != 31.2``);
``bird_normalized`` is the same set rule on the normalised rows. On SQLite the two are one.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from jury.compare import spider2 as spider2_official
from jury.errors import InputError
from jury.execution.rows import UNHASHABLE
from jury.inputs.records import ExecResult, GoldItem, RecordedResult
from jury.plugins import GROUPS, Plugin, Registry, not_callable, type_name
from jury.vocab import Comparator

#: A result's rows as a comparator takes them (each a sequence of SQLite Python values).
Rows = Sequence[Sequence[object]]
#: One row made a tuple (hashable: the row sets are built of these).
Row = tuple[object, ...]

#: Most search nodes :func:`relaxed` visits before giving up (returns False).
RELAXED_SEARCH_LIMIT = 100_000
#: Largest (ambiguous columns x columns x rows) for which :func:`relaxed` refines
#: candidate columns by pairwise joint distributions.
PAIRWISE_LIMIT = 5_000_000


class NormalizeDescription(TypedDict):
    """:meth:`NormalizeOptions.describe`'s JSON-able record of the normalisations used."""

    casefold: bool
    float_sig_digits: int | None


@dataclass(frozen=True)
class NormalizeOptions:
    """Value normalisations applied to both sides before comparing.

    >>> NormalizeOptions().describe()
    {'casefold': False, 'float_sig_digits': None}
    >>> NormalizeOptions(casefold=True, float_sig_digits=3).describe()
    {'casefold': True, 'float_sig_digits': 3}
    """

    casefold: bool = False
    float_sig_digits: int | None = None

    def __post_init__(self) -> None:
        n = self.float_sig_digits
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise InputError(f"float_sig_digits must be a positive integer, got {n!r}")

    @property
    def active(self) -> bool:
        """True when at least one normalisation is switched on."""
        return self.casefold or self.float_sig_digits is not None

    def describe(self) -> NormalizeDescription:
        """JSON-able dict naming the options used."""
        return {"casefold": self.casefold, "float_sig_digits": self.float_sig_digits}


def _round_sig(x: float, digits: int) -> float:
    """Round ``x`` to ``digits`` significant digits (NaN and infinities unchanged)."""
    if not math.isfinite(x) or x == 0.0:
        return x
    return float(f"{x:.{digits}g}")


def _normalize_value(v: object, options: NormalizeOptions) -> object:
    if isinstance(v, str):
        return v.casefold() if options.casefold else v
    if isinstance(v, (int, float)) and not isinstance(v, bool) and options.float_sig_digits is not None:
        try:
            return _round_sig(float(v), options.float_sig_digits)
        except OverflowError:  # an int too large for a float: leave it as is
            return v
    return v


def normalize_rows(rows: Iterable[Sequence[object]], options: NormalizeOptions) -> list[Row]:
    """Apply ``options`` to every value; identity (as tuples) when all are off.

    Only ``str`` values are casefolded. Every number (int or float, not bool) is
    rounded to significant digits (not decimal places) and becomes a float, so
    ``1234`` and ``1234.0``, equal without rounding, stay equal with it.

    >>> normalize_rows([("ABC", 0.12345, 7)], NormalizeOptions())
    [('ABC', 0.12345, 7)]
    >>> normalize_rows([("ABC", 0.12345, 7)], NormalizeOptions(casefold=True, float_sig_digits=3))
    [('abc', 0.123, 7.0)]
    >>> normalize_rows([(1234.5, None), (1234, 1234.0)], NormalizeOptions(float_sig_digits=3))
    [(1230.0, None), (1230.0, 1230.0)]
    """
    if not options.active:
        return [tuple(r) for r in rows]
    return [tuple(_normalize_value(v, options) for v in r) for r in rows]


def bird(
    gold_rows: Rows, pred_rows: Rows, *, order_matters: bool = False, options: NormalizeOptions = NormalizeOptions()
) -> bool:
    """BIRD's official rule: ``set(pred_rows) == set(gold_rows)``.

    Duplicates and row order are ignored; ``order_matters`` is accepted but ignored.

    >>> bird([(1, "a"), (2, "b")], [(2, "b"), (1, "a"), (1, "a")])
    True
    >>> bird([(1,)], [(1.0,)]), bird([("1",)], [(1,)])
    (True, False)
    >>> bird([(1, 2)], [(2, 1)], order_matters=True)
    False
    """
    gold = normalize_rows(gold_rows, options)
    pred = normalize_rows(pred_rows, options)
    return set(pred) == set(gold)


def bird_normalized(
    gold_rows: Rows, pred_rows: Rows, *, order_matters: bool = False, options: NormalizeOptions = NormalizeOptions()
) -> bool:
    """BIRD's set rule over the values as SQLite returns them: on an engine's result, DECIMAL
    read as a float (or an int when integral), dates and times as text (jury.execution.
    engine_values.normalise). Equal to :func:`bird` on SQLite; on PostgreSQL and MySQL it
    accepts a DECIMAL answer for a float gold of the same value, which BIRD's script does not.

    >>> bird_normalized([(31.2,)], [(31.2,)])
    True
    """
    return bird(gold_rows, pred_rows, order_matters=order_matters, options=options)


def bird_results(gold: ExecResult, pred: ExecResult, options: NormalizeOptions = NormalizeOptions()) -> bool | None:
    """BIRD's rule on two results (ExecResult) as the drivers returned them: equal raw set
    digests (``raw_sha256``; a SQLite or recorded result's own set digest stands for it), False
    when a value of either cannot be in a Python set (BIRD's ``set()`` raises: the pair scores
    0). None when neither is an engine's, or with normalisation options on: the rows decide."""
    if options.active or (gold.raw_sha256 is None and pred.raw_sha256 is None):
        return None
    g, p = gold.raw_sha256 or gold.result_sha256, pred.raw_sha256 or pred.result_sha256
    if UNHASHABLE in (g, p) or g is None or p is None:
        return False
    return g == p


def strict(
    gold_rows: Rows, pred_rows: Rows, *, order_matters: bool = False, options: NormalizeOptions = NormalizeOptions()
) -> bool:
    """BIRD's set rule, or equal row lists when ``order_matters``.

    Without ``order_matters`` this is exactly :func:`bird` (NULLs equal each other
    under both). With it the rows must be the same, in the same order, with the
    same count: list semantics, so duplicates count, where :func:`bird` ignores
    both order and duplicates.

    >>> strict([(1, None), (2, "x")], [(2, "x"), (1, None)])
    True
    >>> bird([(None,)], [(None,)]), strict([(None,)], [(None,)])
    (True, True)
    >>> bird([(1,), (1,), (2,)], [(1,), (2,)], order_matters=True)
    True
    >>> strict([(1,), (1,), (2,)], [(1,), (2,)], order_matters=True)
    False
    >>> strict([(1,), (2,)], [(2,), (1,)], order_matters=True)
    False
    >>> strict([(1,), (2,)], [(1.0,), (2,)], order_matters=True)
    True
    >>> strict([(1,), (1,)], [(1,)], order_matters=True)
    False
    """
    gold = normalize_rows(gold_rows, options)
    pred = normalize_rows(pred_rows, options)
    if order_matters:
        return len(gold) == len(pred) and all(g == p for g, p in zip(gold, pred))
    return set(gold) == set(pred)


def _width(rows: list[Row]) -> int | None:
    """Common row width, or None when the rows are ragged."""
    widths = {len(r) for r in rows}
    return widths.pop() if len(widths) == 1 else None


def _pair_signature(cols: list[Row], i: int) -> frozenset[tuple[frozenset[tuple[tuple[object, object], int]], int]]:
    """Row-order-invariant fingerprint of column ``i``: the multiset of its joint
    value distributions with every other column."""
    joints = Counter(frozenset(Counter(zip(cols[i], ck)).items()) for k, ck in enumerate(cols) if k != i)
    return frozenset(joints.items())


def relaxed(
    gold_rows: Rows, pred_rows: Rows, *, order_matters: bool = False, options: NormalizeOptions = NormalizeOptions()
) -> bool:
    """:func:`strict`, but the predicted columns may come in any order.

    True when some permutation of the predicted columns makes :func:`strict`
    true; column counts must match. A gold column may only map to a predicted
    column with the same values (same value multiset over the distinct rows;
    the same value sequence when ``order_matters``), refined, when ambiguous, by
    joint value distributions with the other columns. The remaining mappings are
    backtracked, pruned by the rows projected on the columns mapped so far;
    the search gives up (False) after ``RELAXED_SEARCH_LIMIT`` candidate steps.

    >>> relaxed([(1, "a"), (2, "b")], [("b", 2), ("a", 1)])
    True
    >>> relaxed([(1, "a")], [("a", 1, None)])
    False
    >>> relaxed([(1, "a"), (2, "b")], [("b", 1), ("a", 2)])
    False
    """
    gold = normalize_rows(gold_rows, options)
    pred = normalize_rows(pred_rows, options)
    if not gold or not pred:
        return not gold and not pred
    width = _width(gold)
    if width is None or _width(pred) != width:
        return False
    if strict(gold, pred, order_matters=order_matters):
        return True
    if not order_matters:  # set semantics: work on the distinct rows
        gold, pred = list(dict.fromkeys(gold)), list(dict.fromkeys(pred))
    if len(gold) != len(pred):
        return False
    cand = _column_candidates(gold, pred, width, order_matters)
    return cand is not None and _some_mapping_matches(gold, pred, cand, order_matters)


def _column_candidates(gold: list[Row], pred: list[Row], width: int, order_matters: bool) -> list[list[int]] | None:
    """For each gold column, the predicted columns it may map to (same values; when ambiguous,
    the same joint distributions with the other columns); None when one has none."""
    gcols, pcols = list(zip(*gold)), list(zip(*pred))
    gsig: Sequence[object]  # per column: its values in order, or their multiset
    psig: Sequence[object]
    if order_matters:
        gsig, psig = gcols, pcols
    else:
        gsig = [frozenset(Counter(c).items()) for c in gcols]
        psig = [frozenset(Counter(c).items()) for c in pcols]
    cand = [[j for j in range(width) if psig[j] == gsig[i]] for i in range(width)]
    if any(not c for c in cand):
        return None
    ambiguous = [i for i in range(width) if len(cand[i]) > 1]
    if not order_matters and ambiguous and len(ambiguous) * width * len(gold) <= PAIRWISE_LIMIT:
        pair_sig: dict[int, frozenset[tuple[frozenset[tuple[tuple[object, object], int]], int]]] = {}
        for j in {j for i in ambiguous for j in cand[i]}:
            pair_sig[j] = _pair_signature(pcols, j)
        for i in ambiguous:
            gp = _pair_signature(gcols, i)
            cand[i] = [j for j in cand[i] if pair_sig[j] == gp]
            if not cand[i]:
                return None
    return cand


def _some_mapping_matches(gold: list[Row], pred: list[Row], cand: list[list[int]], order_matters: bool) -> bool:
    """Backtrack over the candidate mappings, pruned by the rows projected on the columns mapped
    so far; False after RELAXED_SEARCH_LIMIT candidate steps."""
    width = len(cand)
    pcols = list(zip(*pred))
    # Identical predicted columns are interchangeable: try one per class.
    classes: dict[Row, int] = {}
    pclass = [classes.setdefault(c, len(classes)) for c in pcols]
    order = sorted(range(width), key=lambda i: len(cand[i]))  # most constrained first
    used = [False] * width
    budget = RELAXED_SEARCH_LIMIT

    def search(depth: int, glab: list[int], plab: list[int]) -> bool | None:
        # glab/plab label each row's projection on the columns mapped so far
        # (equal labels <=> equal projected tuples, across both sides).
        nonlocal budget
        if depth == width:
            return True
        i, tried = order[depth], set[int]()
        for j in cand[i]:
            if used[j] or pclass[j] in tried:
                continue
            tried.add(pclass[j])
            budget -= 1
            if budget < 0:
                return None
            labels: dict[tuple[int, object], int] = {}
            g2 = [labels.setdefault((lab, r[i]), len(labels)) for lab, r in zip(glab, gold)]
            p2 = [labels.get((lab, r[j]), -1) for lab, r in zip(plab, pred)]
            if (g2 == p2) if order_matters else (set(g2) == set(p2)):
                used[j] = True
                found = search(depth + 1, g2, p2)
                used[j] = False
                if found is None or found:
                    return found
        return False

    try:
        return bool(search(0, [0] * len(gold), [0] * len(pred)))
    except RecursionError:  # thousands of columns: treat like an exhausted search
        return False


def _is_na(x: object) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _spider2_sort_key(x: object) -> tuple[bool, str, bool]:
    return (x is None, str(x), isinstance(x, (int, float)))


def _vectors_match(v1: Sequence[object], v2: Sequence[object], tolerance: float, order_matters: bool) -> bool:
    """Spider 2.0's ``vectors_match`` on two column vectors."""
    if not order_matters:
        v1 = sorted(v1, key=_spider2_sort_key)
        v2 = sorted(v2, key=_spider2_sort_key)
    if len(v1) != len(v2):
        return False
    for a, b in zip(v1, v2):
        if _is_na(a) and _is_na(b):
            continue
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            if not math.isclose(float(a), float(b), abs_tol=tolerance):
                return False
        elif a != b:
            return False
    return True


def subset(
    gold_rows: Rows,
    pred_rows: Rows,
    *,
    order_matters: bool = False,
    options: NormalizeOptions = NormalizeOptions(),
    tolerance: float = 0.01,
) -> bool:
    """Spider 2.0's ``compare_pandas_table`` rule.

    Each gold column vector must match some predicted column vector (extra
    predicted columns are allowed). Vectors are sorted first unless
    ``order_matters``; numbers match within ``abs_tol=tolerance``, NULLs match
    NULLs, anything else by ``==``. Zero-row results: both empty is True,
    exactly one empty is False.

    >>> subset([(1, "a")], [("x", "a", 1.005)])
    True
    >>> subset([(1.0,)], [(1.02,)])
    False
    >>> subset([(1,), (2,)], [(2,), (1,)]), subset([(1,), (2,)], [(2,), (1,)], order_matters=True)
    (True, False)
    >>> subset([], []), subset([], [(1,)]), subset([(1,)], [])
    (True, False, False)
    """
    gold = normalize_rows(gold_rows, options)
    pred = normalize_rows(pred_rows, options)
    if not gold or not pred:
        return not gold and not pred
    # Each column is sorted once (not once per pair of columns compared); equal vectors match
    # without the element-wise walk (``==`` on every element implies Spider's match).
    gcols = [list(c) for c in zip(*gold)]
    pcols = [list(c) for c in zip(*pred)]
    if not order_matters:
        gcols = [sorted(c, key=_spider2_sort_key) for c in gcols]
        pcols = [sorted(c, key=_spider2_sort_key) for c in pcols]
    return all(any(g == p or _vectors_match(g, p, tolerance, True) for p in pcols) for g in gcols)


def spider2(
    gold_rows: Rows,
    pred_rows: Rows,
    *,
    order_matters: bool = False,
    options: NormalizeOptions = NormalizeOptions(),
    condition_cols: Sequence[int] | Sequence[Sequence[int]] = (),
    variants: Sequence[RecordedResult] = (),
    gold_width: int | None = None,
) -> bool:
    """Spider 2.0's official decision (``compare_pandas_table`` after its CSV round trip).

    Unlike :func:`subset`, both results are first re-typed as Spider 2.0's CSV round trip
    types them (``'1'`` is 1, ``'NULL'`` is NULL) and NULL counts as 0; ``condition_cols``
    names the gold columns that must be found (default all), ``variants`` are further gold
    results of which any may match (a gold item's ``spider2`` field: :func:`spider2_extras`);
    order is ignored unless ``order_matters``. ``gold_width`` is the gold column count
    (needed only when it has no rows). See jury/compare/spider2.py for the exact rules.

    >>> spider2([(0,)], [(None,)]), subset([(0,)], [(None,)])
    (True, False)
    >>> spider2([(1,)], [("1",)]), subset([(1,)], [("1",)])
    (True, False)
    >>> spider2([(1, "a")], [("a", 9)], condition_cols=[1])
    True
    >>> spider2([(1,)], [(2,)], variants=[RecordedResult(columns=["n"], rows=[[2]])])
    True
    """
    gold = normalize_rows(gold_rows, options)
    pred = normalize_rows(pred_rows, options)
    golds = [gold] + [normalize_rows(v.rows, options) for v in variants]
    widths = [gold_width] + [len(v.columns) or None for v in variants]
    return spider2_official.compare_variants(
        pred, golds, condition_cols=list(condition_cols), ignore_order=not order_matters, gold_widths=widths
    )


class Spider2Extras(TypedDict):
    """The keyword arguments :func:`spider2` takes from a gold item (:func:`spider2_extras`)."""

    condition_cols: list[int] | list[list[int]]
    variants: list[RecordedResult]


class Spider2Arguments(Spider2Extras):
    """:func:`spider2`'s keyword arguments beside the rows: the gold item's and its result's width."""

    gold_width: int | None


def spider2_extras(item: GoldItem) -> Spider2Extras:
    """The keyword arguments :func:`spider2` takes from a gold item's ``spider2`` field
    (``condition_cols``, ``variants``); InputError naming the item when it is malformed."""
    opts = spider2_official.item_options(item)
    return Spider2Extras(condition_cols=opts.condition_cols, variants=opts.variants)


def overlap(gold_rows: Rows, pred_rows: Rows, *, options: NormalizeOptions = NormalizeOptions()) -> float:
    """Jaccard similarity ``|A∩B| / |A∪B|`` of the normalized row sets; 1.0 when both are empty.

    >>> overlap([("a",), ("b",)], [("b",), ("c",)])
    0.3333333333333333
    >>> overlap([], []), overlap([(1,)], []), overlap([(1,), (1,)], [(1.0,)])
    (1.0, 0.0, 1.0)
    """
    a = set(normalize_rows(gold_rows, options))
    b = set(normalize_rows(pred_rows, options))
    union = a | b
    if not union:
        return 1.0
    return len(a & b) / len(union)


#: The comparators :func:`side_by_side` decides together (jury's own, on rows as they are).
SHARED: dict[str, Callable[..., bool]] = {
    Comparator.BIRD: bird,
    Comparator.BIRD_NORMALIZED: bird_normalized,
    Comparator.STRICT: strict,
    Comparator.RELAXED: relaxed,
    Comparator.SUBSET: subset,
}


#: :func:`side_by_side`'s rows prepared, by the identity of the row list: (the list itself, kept so
#: its identity is not reused, (its rows as tuples, their set)).
Prepared = dict[int, tuple[Rows, tuple[list[Row], set[Row]]]]


def side_by_side(
    gold_rows: Rows, pred_rows: Rows, names: Iterable[str], *, order_matters: bool, prepared: Prepared | None = None
) -> tuple[dict[str, bool], float]:
    """({name: the decision of comparator ``name``}, :func:`overlap`) for every name of ``names``
    (each one of ``SHARED``), with no normalisation: equal to calling each, with the rows made
    tuples and their sets built once for all of them.

    The shared facts: the row sets (``bird``, ``strict`` without order, ``overlap``), the row
    lists (``strict`` with order); a ``relaxed`` that ``strict`` accepts needs only its common
    width; ``subset`` is False for a different row count (no column vector can match) and True
    for the same row list (each gold column is a predicted one), else decided in full.

    >>> side_by_side([(1, "a"), (2, "b")], [(2, "b"), (1, "a")], ["bird", "strict", "subset"], order_matters=False)
    ({'bird': True, 'strict': True, 'subset': True}, 1.0)
    >>> side_by_side([(1, "a")], [("a", 1)], ["strict", "relaxed"], order_matters=True)
    ({'strict': False, 'relaxed': True}, 0.0)

    ``prepared`` (a dict kept across calls) holds each row list's tuples and set by the list's
    identity, so a gold result compared with many predictions is prepared once.
    """
    gold, gset = _prepared(gold_rows, prepared)
    pred, pset = _prepared(pred_rows, prepared)
    same_set = gset == pset
    strict_match = gold == pred if order_matters else same_set
    decided: dict[str, bool] = {}
    for name in names:
        if name in (Comparator.BIRD, Comparator.BIRD_NORMALIZED):
            decided[name] = same_set
        elif name == Comparator.STRICT:
            decided[name] = strict_match
        elif not gold or not pred:  # relaxed and subset: both empty or not
            decided[name] = not gold and not pred
        elif name == Comparator.RELAXED:
            # strict's acceptance means the same row widths on both sides: relaxed needs one width
            decided[name] = _width(gold) is not None if strict_match else relaxed(gold, pred, order_matters=order_matters)
        else:
            assert name == Comparator.SUBSET, name
            if len(gold) != len(pred):
                decided[name] = False
            else:
                decided[name] = gold == pred or subset(gold, pred, order_matters=order_matters)
    union = len(gset | pset)
    return decided, (len(gset & pset) / union if union else 1.0)


def _prepared(rows: Rows, prepared: Prepared | None) -> tuple[list[Row], set[Row]]:
    """(rows as tuples, their set), from ``prepared`` when there (keyed by the rows' identity:
    the entry holds the rows too, so the identity cannot be reused while it is there)."""
    if prepared is not None and id(rows) in prepared:
        return prepared[id(rows)][1]
    tuples = [tuple(r) for r in rows]
    both = (tuples, set(tuples))
    if prepared is not None:
        prepared[id(rows)] = (rows, both)
    return both


def bool_result(value: object) -> tuple[bool | None, str | None]:
    """A comparator plugin's result checked (jury.plugins.ResultCheck): ``True`` or ``False``,
    or a numpy bool (what ``(a == b).all()`` gives), handed on as a bool. Anything else, a
    truthy string ("False"), a list, 1, None, is refused by its type, never by its truth.

    >>> bool_result(True), bool_result("False"), bool_result(1)
    ((True, None), (None, 'str, not a bool (True or False)'), (None, 'int, not a bool (True or False)'))
    """
    if type(value) is bool:
        return value, None
    numpy = sys.modules.get("numpy")  # a numpy bool comes only from a plugin that imported numpy
    if numpy is not None and type(value) is numpy.bool_:
        return bool(value), None
    return None, f"{type_name(value)}, not a bool (True or False)"


COMPARATORS: Registry[Callable[..., bool]] = Registry(
    "comparator",
    GROUPS["comparator"],
    {  # keyed by Comparator members (StrEnum: str keys); spider2 is an entry point (pyproject.toml)
        Comparator.BIRD: bird,
        Comparator.STRICT: strict,
        Comparator.RELAXED: relaxed,
        Comparator.SUBSET: subset,
        Comparator.BIRD_NORMALIZED: bird_normalized,
    },
    check=not_callable,
    result=bool_result,
)
"""Every comparator by name: jury's own and those of installed plugins (the ``jury.comparators``
entry points, jury.plugins). jury's ``spider2`` comes through that path too."""


def get_comparator(name: str) -> Callable[..., bool]:
    """Look a comparator up by name: jury's own or an installed plugin's (jury.plugins).

    >>> get_comparator("bird") is bird
    True
    >>> get_comparator("spider2") is spider2  # jury's own, registered as an entry point
    True
    >>> get_comparator("fuzzy")
    Traceback (most recent call last):
    ...
    jury.errors.InputError: unknown comparator 'fuzzy'; choose one of: bird, bird_normalized, relaxed, spider2, strict, subset
    """
    return COMPARATORS.get_named(name)


def comparator_plugin(name: str) -> Plugin | None:
    """The third-party plugin comparator ``name`` comes from, or None for jury's own (and for
    an unknown name): what provenance records beside the comparator's name."""
    if name not in COMPARATORS:
        return None
    plugin = COMPARATORS.plugin(name)
    return None if plugin.shipped else plugin


def gold_orders_rows(sql: str) -> bool:
    """True when the outermost query of ``sql`` has an ORDER BY (sqlglot, sqlite dialect).

    An ORDER BY only inside a subquery or CTE does not count; one applied to a
    whole compound (UNION ...) does. Unparseable SQL gives False, never raises.

    >>> gold_orders_rows("SELECT a FROM t ORDER BY a LIMIT 1")
    True
    >>> gold_orders_rows("SELECT a FROM (SELECT a FROM t ORDER BY a)")
    False
    >>> gold_orders_rows("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1")
    True
    >>> gold_orders_rows("SELECT a FROM t ORDER BY a;;")
    True
    >>> gold_orders_rows("SELEC a FRM")
    False
    """
    if "ORDER" not in sql.upper():  # sqlglot's ORDER BY token needs the word: no need to parse
        return False
    try:
        import sqlglot
        from sqlglot import exp

        statements = [
            e
            for e in sqlglot.parse(sql, dialect="sqlite")
            if e is not None and not isinstance(e, exp.Semicolon)  # `;;` and trailing comments
        ]
        if len(statements) != 1:  # `...;;` or a trailing comment parse as empty extra statements
            return False
        expr = statements[0]
        while expr is not None:
            if expr.args.get("order") is not None:
                return isinstance(expr, exp.Query)
            if isinstance(expr, (exp.Subquery, exp.Paren)):
                expr = expr.this  # a parenthesised whole query: look inside
                continue
            return False
        return False
    except Exception:
        return False
