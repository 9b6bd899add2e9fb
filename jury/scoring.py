"""Per-model scores from scored pairs: pure functions, no I/O.

Denominators: a model's *questions* are those it has a run record for; questions whose
gold query fails (``gold_error``) are left out of every count. *Routed* questions are
those where the model chose the gold's database (or was given it); strict accuracy and
every comparator's accuracy are over the routed questions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel

from jury.records import OUTCOMES
from jury.stats import ranks, wilson

JURY_ELIGIBLE = "mismatch"


class ModelScore(BaseModel):
    model: str
    questions: int
    gold_errors: int
    routed: int
    routing_accuracy: float | None
    strict: dict  # Proportion.as_dict() under the chosen comparator
    strict_rank: int | None = None
    outcomes: dict[str, int]
    jury_eligible: int
    comparators: dict[str, dict]  # name -> Proportion.as_dict()
    comparator_ranks: dict[str, int | None] = {}
    gold_clean: dict | None = None  # from a locked audit file
    gold_clean_rank: int | None = None
    adjudicated: dict | None = None  # from locked adjudication files
    adjudicated_rank: int | None = None


def proportion(k: int, n: int) -> dict:
    return wilson(k, n).as_dict()


def score_model(model: str, pairs: Iterable) -> ModelScore:
    """Aggregate one model's pairs (objects with outcome, routed, verdicts)."""
    pairs = [p for p in pairs if p.model == model]
    counts = Counter(p.outcome for p in pairs)
    scored = [p for p in pairs if p.outcome != "gold_error"]
    routed = [p for p in scored if p.routed]
    names = sorted({name for p in routed for name in p.verdicts})
    comparators = {
        name: proportion(sum(bool(p.verdicts.get(name)) for p in routed), len(routed))
        for name in names
    }
    return ModelScore(
        model=model,
        questions=len(pairs),
        gold_errors=counts["gold_error"],
        routed=len(routed),
        routing_accuracy=(len(routed) / len(scored)) if scored else None,
        strict=proportion(counts["match"], len(routed)),
        outcomes={o: counts[o] for o in OUTCOMES},
        jury_eligible=counts[JURY_ELIGIBLE],
        comparators=comparators,
    )


def score_all(pairs: list) -> list[ModelScore]:
    """Scores for every model (in first-seen order) with ranks across models."""
    models = list(dict.fromkeys(p.model for p in pairs))
    scores = [score_model(m, pairs) for m in models]
    for s, r in zip(scores, ranks([s.strict["value"] for s in scores])):
        s.strict_rank = r
    names = sorted({n for s in scores for n in s.comparators})
    for name in names:
        values = [s.comparators.get(name, {}).get("value") for s in scores]
        for s, r in zip(scores, ranks(values)):
            s.comparator_ranks[name] = r
    return scores

