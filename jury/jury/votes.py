"""From votes to verdicts: majorities, abstentions, credit.

Adjudication: a category with a strict majority of the k votes wins (k // 2 + 1).
Without one, the verdict is ``undecided`` when abstentions could have made a majority
(the missing votes alone could have settled it) and ``no_majority`` otherwise.
Audit: a gold query is flagged when a strict majority of the VALID votes says
``defective`` (or, with a quorum, at least that many defective votes).
"""

from __future__ import annotations

from collections import Counter

CREDITED = frozenset({"gold_defect", "format_equivalence"})
ADJUDICATION_VERDICTS = (
    "gold_defect", "format_equivalence", "genuine_error", "ambiguous", "no_majority", "undecided",
)


def adjudication_verdict(categories: list[str | None], k: int) -> str:
    """Majority verdict of k ballots; None marks an abstention (skipped ballots: leave out).

    >>> adjudication_verdict(["gold_defect", "gold_defect", "genuine_error"], 3)
    'gold_defect'
    >>> adjudication_verdict(["gold_defect", "ambiguous", "genuine_error"], 3)
    'no_majority'
    >>> adjudication_verdict(["gold_defect", None, "genuine_error"], 3)
    'undecided'
    >>> adjudication_verdict(["ambiguous", "ambiguous"], 3)  # third skipped by early stop
    'ambiguous'
    """
    threshold = k // 2 + 1
    counts = Counter(c for c in categories if c is not None)
    if counts:
        label, top = counts.most_common(1)[0]
        if top >= threshold:
            return label
    missing = k - sum(counts.values())
    top = counts.most_common(1)[0][1] if counts else 0
    return "undecided" if missing and top + missing >= threshold else "no_majority"


def is_credited(verdict: str) -> bool:
    return verdict in CREDITED


def audit_flag(verdicts: list[str | None], quorum: int | None = None) -> tuple[bool, bool]:
    """(flagged, decided) from valid/defective votes; None marks an abstention.

    >>> audit_flag(["defective", "defective", "valid", None, "valid"])
    (False, False)
    >>> audit_flag(["defective", "defective", "valid", "defective", None])
    (True, True)
    >>> audit_flag(["defective", "valid", "valid"], quorum=1)
    (True, True)
    >>> audit_flag([None, None])
    (False, False)
    """
    valid = [v for v in verdicts if v is not None]
    if not valid:
        return False, False
    defective = sum(v == "defective" for v in valid)
    if quorum is not None:
        return defective >= quorum, True
    threshold = len(valid) // 2 + 1
    flagged = defective >= threshold
    return flagged, flagged or (len(valid) - defective) >= threshold
