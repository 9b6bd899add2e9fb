"""The stratified error-analysis sample of Spider 2.0-AIFunc: questions grouped by which model
groups solve them (all strong models fail / some succeed / all succeed, and the same for each
other group), a seeded sample drawn per stratum for taxonomy labelling.

jury's definition, where the paper's text is not at hand: the user names the groups
(``strong=a,b``, ``weak=c``; each model in at most one group, every model of a group in the
run). For each question, a group's state is ``all fail``, ``some succeed`` or ``all
succeed`` over its models' answers, an answer succeeding when its outcome is a match under
the chosen comparator; the stratum is the states of every group in the order given
(``strong: all fail | weak: some succeed``). A question enters only when every model of
every group has a scored answer to it (routed or not: a misrouted answer is a failure; a
gold error leaves the question out, as every denominator; a model without a line for it
leaves it out, since its state is unknown), and when at least one model fails (a question
every model solves has no error to label). The sample of a stratum is
``random.Random(f"{seed}/{stratum}").sample(its question ids sorted by their text, k)``:
the whole stratum when it has k or fewer, and a stratum's draw does not depend on the others
(adding a group of questions elsewhere leaves it unchanged).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from jury.errors import InputError
from jury.inputs.records import QuestionId
from jury.vocab import Outcome

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult

ALL_FAIL, SOME_SUCCEED, ALL_SUCCEED = "all fail", "some succeed", "all succeed"


def parse_groups(specs: Sequence[str], models: Sequence[str] | None = None) -> dict[str, list[str]]:
    """``["strong=a,b", "weak=c"]`` -> {"strong": ["a", "b"], "weak": ["c"]}; every model in
    ``models`` (the run's; None: not checked, the form alone, before any work), none in two
    groups, each group named once and non-empty."""
    groups: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    known = set(models) if models is not None else None
    for spec in specs:
        name, sep, members = spec.partition("=")
        name = name.strip()
        names = [m.strip() for m in members.split(",") if m.strip()]
        if not sep or not name or not names:
            raise InputError(f"--group {spec!r}: expected NAME=MODEL[,MODEL...] (e.g. strong=gpt-5,claude-opus)")
        if name in groups:
            raise InputError(f"--group {spec!r}: group {name!r} is named twice")
        for m in names:
            if known is not None and m not in known:
                raise InputError(f"--group {spec!r}: model {m!r} is not in the runs (models: {', '.join(models or [])})")
            if m in seen:
                raise InputError(f"--group {spec!r}: model {m!r} is already in group {seen[m]!r}")
            seen[m] = name
        groups[name] = names
    if not groups:
        raise InputError("the error sample needs at least one --group NAME=MODEL[,MODEL...]")
    return groups


def _state(solved: list[bool]) -> str:
    return ALL_SUCCEED if all(solved) else SOME_SUCCEED if any(solved) else ALL_FAIL


def strata(pairs: Sequence[PairResult], groups: Mapping[str, Sequence[str]]) -> dict[QuestionId, str]:
    """question id -> its stratum, for every question that enters (see the module's text)."""
    solved: dict[QuestionId, dict[str, bool]] = {}
    gold_errors: set[QuestionId] = set()
    for p in pairs:
        if p.outcome == Outcome.GOLD_ERROR:
            gold_errors.add(p.question_id)
            continue
        solved.setdefault(p.question_id, {})[p.model] = p.outcome == Outcome.MATCH and p.routed
    members = [m for ms in groups.values() for m in ms]
    out: dict[QuestionId, str] = {}
    for q, by_model in solved.items():
        if q in gold_errors or any(m not in by_model for m in members):
            continue
        if all(by_model[m] for m in members):
            continue
        out[q] = " | ".join(f"{name}: {_state([by_model[m] for m in ms])}" for name, ms in groups.items())
    return out


def draw_sample(stratum_of: Mapping[QuestionId, str], per_stratum: int, seed: int) -> dict[str, list[QuestionId]]:
    """stratum -> the question ids drawn from it (strata sorted by name, ids in draw order)."""
    if per_stratum < 1:
        raise InputError(f"per-stratum sample size must be at least 1, got {per_stratum}")
    by_stratum: dict[str, list[QuestionId]] = {}
    for q, s in stratum_of.items():
        by_stratum.setdefault(s, []).append(q)
    out: dict[str, list[QuestionId]] = {}
    for s in sorted(by_stratum):
        ids = sorted(by_stratum[s], key=str)
        out[s] = random.Random(f"{seed}/{s}").sample(ids, min(per_stratum, len(ids)))
    return out
