"""Execution accuracy per AI-function type (Spider 2.0-AIFunc's per-function breakdown).

A question's *types* are the functions its gold query calls that match the pattern of
``--function-set`` (jury.compare.function_sets: parsed with sqlglot, names upper-cased). A
question counts once under each of its types: a gold calling ``AI_FILTER`` and
``AI_CLASSIFY`` is in both rows, as Spider 2.0-AIFunc's dataset card counts tasks per
function ("a task may use more than one"). A gold calling none is under ``NO_FUNCTION``.
Within a type the accuracy is strict's (the chosen comparator's match) over the model's
routed questions of that type, gold errors left out, as every jury column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from jury.vocab import Outcome

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult

NO_FUNCTION = "(none)"
"""The type of a question whose gold calls no function matching the pattern."""


def function_type_accuracy(
    pairs: Sequence[PairResult], sets: dict[int, tuple[frozenset[str], frozenset[str]]]
) -> dict[str, dict[str, tuple[int, int]]]:
    """model -> function type -> (matches, routed questions of that type).

    ``sets``: jury.compare.function_sets.function_set_matches's index of each scored, routed
    pair -> (the gold's matching functions, the candidate's); only the gold's side is used.
    Types are listed by name, NO_FUNCTION last.
    """
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for i, (gold_functions, _candidate) in sets.items():
        pair = pairs[i]
        per_model = out.setdefault(pair.model, {})
        for name in gold_functions or (NO_FUNCTION,):
            k, n = per_model.get(name, (0, 0))
            per_model[name] = (k + (pair.outcome == Outcome.MATCH), n + 1)
    return {m: dict(sorted(t.items(), key=lambda kv: (kv[0] == NO_FUNCTION, kv[0]))) for m, t in out.items()}
