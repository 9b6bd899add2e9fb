"""Per-model scores from scored pairs: pure functions, no I/O.

Denominators: a model's *questions* are those it has a run record for; questions whose
gold query fails (``gold_error``) are left out of every count. *Routed* questions are
those where the model chose the gold's database (or was given it); strict accuracy and
every comparator's accuracy are over the routed questions. A side comparator that left
some of a model's routed questions undecided (None: a result over the row cap that its
digests cannot settle) gets no accuracy for that model rather than a guessed one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NotRequired

from pydantic import BaseModel
from typing_extensions import TypedDict

from jury.compare.efficiency import AllSolvedRatios, EfficiencyScore
from jury.stats.core import ProportionDict, ProportionEstimate, ranks, wilson
from jury.vocab import JURY_ELIGIBLE, OUTCOMES, GoldErrorRule, MissingRule, Outcome

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation


class ExecutionErrors(ProportionDict):
    """:func:`jury.results.aifunc_columns.execution_error_column`: answers that fail or time out
    (k) of the routed questions (n), split by cause; with the rerun record, also the timed-out
    answers re-run and those that then did not time out."""

    errors: int
    timeouts: int
    timeouts_rerun: NotRequired[int]
    rerun_recovered: NotRequired[int]


class Efficiency(EfficiencyScore, AllSolvedRatios):
    """One model's efficiency columns (jury.compare.efficiency.efficiency_scores) and its time
    ratio over the questions every model solved (all_solved_time_ratios), in that key order."""


class SoftF1(TypedDict):
    """:func:`soft_f1_column`: the mean Soft-F1 over the routed questions (None when ``undecided``
    answers' rows are not all known here), the sum and count it is the mean of."""

    value: float | None
    sum: float
    n: int
    undecided: int


class ModelScore(BaseModel):
    model: str
    questions: int
    gold_errors: int
    routed: int
    routing_accuracy: float | None
    strict: ProportionDict  # stats.ProportionEstimate.as_dict() under the chosen comparator
    strict_rank: int | None = None
    outcomes: dict[str, int]
    jury_eligible: int
    comparators: dict[str, ProportionDict]  # name -> Proportion.as_dict()
    comparator_ranks: dict[str, int | None] = {}
    gold_clean: ProportionDict | None = None  # from a locked audit file
    gold_clean_rank: int | None = None
    adjudicated: ProportionDict | None = None  # from locked adjudication files
    adjudicated_rank: int | None = None
    function_set: ProportionDict | None = None  # stats.ProportionEstimate.as_dict() of equal function sets (--function-set)
    function_types: dict[str, ProportionDict] | None = (
        None  # function type -> stats.ProportionEstimate.as_dict() of strict (--function-set)
    )
    execution_errors: ExecutionErrors | None = None  # answers that fail or time out / routed (jury.results.aifunc_columns)
    efficiency: Efficiency | None = None  # VES, R-VES, time ratio, faster share (--efficiency)
    soft_f1: SoftF1 | None = None  # BIRD mini-dev's Soft-F1, mean over routed questions (--soft-f1; soft_f1_column)
    gold_questions: int | None = None  # the gold file's questions (add_coverage)
    answered: int | None = None  # those the model's run answers with SQL (add_coverage)
    missing_rule: str | None = None  # what a question without a usable answer counted as: exclude or fail (add_coverage)
    left_out: dict[str, int] | None = None  # unanswered questions out of the denominators, by cause (add_coverage)
    counted_wrong: dict[str, int] | None = None  # unanswered questions scored as wrong `missing` answers, by cause


def proportion(k: int, n: int) -> ProportionDict:
    """k/n with its Wilson interval, as a fresh dict (one interval per distinct (k, n))."""
    return _proportion(int(k), int(n)).as_dict()


@lru_cache(maxsize=65_536)
def _proportion(k: int, n: int) -> ProportionEstimate:
    # Thousands of models share a handful of (k, n): one closed-form interval each.
    return wilson(k, n)


def _score_pairs(model: str, pairs: list[Any]) -> ModelScore:
    """Aggregate pairs that are all of ``model``."""
    counts = Counter(p.outcome for p in pairs)
    scored = [p for p in pairs if not p.excluded]
    routed = [p for p in scored if p.routed]
    names = sorted({name for p in routed for name in p.comparator_matches})
    undecided = {name for p in routed for name, v in p.comparator_matches.items() if v is None}
    comparators = {
        name: proportion(sum(bool(p.comparator_matches.get(name)) for p in routed), len(routed))
        for name in names
        if name not in undecided
    }
    return ModelScore(
        model=model,
        questions=len(pairs),
        gold_errors=counts[Outcome.GOLD_ERROR],
        routed=len(routed),
        routing_accuracy=(len(routed) / len(scored)) if scored else None,
        strict=proportion(counts[Outcome.MATCH], len(routed)),
        outcomes={o: counts[o] for o in OUTCOMES},
        jury_eligible=counts[JURY_ELIGIBLE],
        comparators=comparators,
    )


def score_all(pairs: Sequence[Any]) -> list[ModelScore]:
    """Scores for every model (in first-seen order) with ranks across models."""
    by_model: dict[str, list[Any]] = {}
    for p in pairs:  # one pass: grouping per model, not a rescan of every pair per model
        by_model.setdefault(p.model, []).append(p)
    scores = [_score_pairs(m, ps) for m, ps in by_model.items()]
    for s, r in zip(scores, ranks([s.strict["value"] for s in scores])):
        s.strict_rank = r
    names = sorted({n for s in scores for n in s.comparators})
    for name in names:
        values = [c["value"] if (c := s.comparators.get(name)) is not None else None for s in scores]
        for s, r in zip(scores, ranks(values)):
            s.comparator_ranks[name] = r
    return scores


def add_coverage(scores: list[ModelScore], ev: Evaluation) -> None:
    """Each score's coverage of the gold (answered / gold questions), the missing rule and the
    unanswered questions it left out or counted wrong, by cause, from the evaluation
    (jury.compare.outcomes.Evaluation.coverage)."""
    for s in scores:
        c = ev.coverage.get(s.model)
        if c is not None:
            s.gold_questions, s.answered = c.gold_questions, c.answered
            s.left_out, s.counted_wrong = c.left_out, c.counted_wrong
        s.missing_rule = str(ev.settings.missing)


def unanswered_summary(fail: bool, unanswered: dict[str, int]) -> str:
    """What the rule did with the unanswered questions (``unanswered``: their counts by cause):
    ``"34 left out of the denominators (29 absent, 5 not a string); none counted wrong"``."""
    from jury.compare.coverage import by_cause

    n = sum(unanswered.values())
    if not n:
        return "none left out, none counted wrong"
    done = f"{n:,} {'counted wrong' if fail else 'left out of the denominators'} ({by_cause(unanswered)})"
    return done + ("; none left out" if fail else "; none counted wrong")


def _unanswered(coverages: Iterable[Any]) -> dict[str, int]:
    """The unanswered questions of ``coverages`` (jury.compare.coverage.Coverage), by cause, summed."""
    total: Counter[str] = Counter()
    for c in coverages:
        total.update(c.unanswered)
    return dict(total)


def coverage_warning(ev: Evaluation, models: Iterable[str] | None = None) -> str | None:
    """One line naming every model (of ``models``, default all) without a usable answer to every
    gold question, each with its unanswered questions by cause, and how many the missing rule
    left out of the denominators or counted wrong; None when every model answers them all."""
    from jury.compare.coverage import by_cause

    covered = {m: c for m, c in ev.coverage.items() if models is None or m in models}
    short = [(m, c) for m, c in covered.items() if not c.complete]
    if not short:
        return None
    n = short[0][1].gold_questions
    who = ", ".join(f"{m} {c.answered}/{c.gold_questions} ({by_cause(c.unanswered)})" for m, c in short)
    fail = ev.settings.missing == MissingRule.FAIL
    rule = (
        "--missing fail, BIRD's rule"
        if fail
        else "--missing exclude, the default; --missing fail counts them wrong, as BIRD does"
    )
    noun = "models answers" if len(short) == 1 else "models answer"
    done = unanswered_summary(fail, _unanswered(c for _, c in short))
    empty = [m for m, c in short if not c.answered]
    gone = (
        f"; {', '.join(empty)} {'has' if len(empty) == 1 else 'have'} no usable answer: no row to score (--missing fail scores 0)"
        if empty and not fail
        else ""
    )
    return f"warning: {len(short)} of {len(covered)} {noun} fewer than the gold's {n:,} questions: {who}; {done} ({rule}){gone}"


def gold_errors_line(errors: Mapping[Any, str], rule: str | None) -> str:
    """The one line every output gives the gold queries that fail: how many, what the rule made
    of them (Settings.gold_errors; None: an older report, which left them out) and the first ten."""
    n = len(errors)
    what = (
        "counted wrong for every model (--gold-errors fail, BIRD's rule)"
        if rule == GoldErrorRule.FAIL
        else "left out of every denominator (--gold-errors exclude; BIRD's scripts count them wrong: --gold-errors fail)"
    )
    shown = ", ".join(f"{q} ({e})" for q, e in list(errors.items())[:10])
    return f"{n} gold quer{'y' if n == 1 else 'ies'} that fail{'s' if n == 1 else ''}, {what}: {shown}" + (
        f", and {n - 10} more (the JSON lists all)" if n > 10 else ""
    )


def coverage_caption(ev: Evaluation) -> str:
    """The line under a table: every model's coverage when all are complete, else how many
    unanswered questions the rule left out or counted wrong, by cause."""

    if not ev.coverage:
        return ""
    n = next(iter(ev.coverage.values())).gold_questions
    if all(c.complete for c in ev.coverage.values()):
        return f"coverage: every model answered all {n:,} gold questions"
    fail = ev.settings.missing == MissingRule.FAIL
    done = unanswered_summary(fail, _unanswered(ev.coverage.values()))
    return f"coverage: see answered/gold; unanswered questions: {done} (--missing {ev.settings.missing})"


def soft_f1_column(pairs: list[Any], per_pair: dict[tuple[Any, ...], float | None]) -> dict[str, SoftF1]:
    """Per model, BIRD mini-dev's Soft-F1 over its routed questions (gold errors out):
    {"value": the mean, "sum", "n", "undecided"}; value None when some answer's rows are not
    all known here (``undecided`` of them: over the row cap, or a recorded preview)."""
    out: dict[str, SoftF1] = {}
    for p in pairs:
        if p.excluded or not p.routed:
            continue
        col = out.setdefault(p.model, {"value": None, "sum": 0.0, "n": 0, "undecided": 0})
        f1 = per_pair.get((p.model, p.question_id))
        col["n"] += 1
        if f1 is None:
            col["undecided"] += 1
        else:
            col["sum"] += f1
    for col in out.values():
        col["value"] = col["sum"] / col["n"] if col["n"] and not col["undecided"] else None
    return out
