"""From votes to verdicts: majorities, abstentions, credit.

Adjudication: a category with a strict majority of the k votes wins (k // 2 + 1).
Without one, the verdict is ``undecided`` when abstentions could have made a majority
(the missing votes alone could have settled it) and ``no_majority`` otherwise.
Audit: a gold query is flagged when a strict majority of the PANEL (every juror who
judged it, abstentions included) says ``defective``, or with a quorum at least that many
defective votes. When it is not flagged but the abstentions alone could have flagged it,
it is ``undecided`` (decided = False): not flagged, and counted in the summary. One
juror of five can therefore never flag a query by itself. Both rules treat abstentions
the same way: a missing vote is never counted for or against.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar, cast

from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.judging.agreement import AgreementSummary
from jury.judging.ballots import SUITE_CATEGORIES, blind_category
from jury.vocab import AUDIT_VOTES, BLIND_ANSWERS, CATEGORIES, CLASSIFY_STYLE, CREDITED_VERDICTS, NONE_FITS, AuditVote, Verdict


class RepeatVote(Protocol):
    """What repeats_of reads of a vote: its repeat (None for repeat 0's votes)."""

    @property
    def repeat(self) -> int | None: ...


class CountedVote(Protocol):
    """What the adjudication rule reads of a vote (jury.verdicts.documents.Vote)."""

    @property
    def category(self) -> str | None: ...
    @property
    def abstained(self) -> bool: ...
    @property
    def skipped(self) -> bool: ...


class _SwappedHalf(Protocol):
    """A --swap vote's second order (jury.verdicts.documents.SwappedVote)."""

    @property
    def order(self) -> str: ...
    def model_dump(self) -> dict[str, Any]: ...


class _Vote(CountedVote, RepeatVote, Protocol):
    """What the checks read of a verdict file's vote (jury.verdicts.documents.Vote)."""

    @property
    def juror(self) -> str: ...
    @property
    def order(self) -> str | None: ...
    @property
    def raw_verdict(self) -> str | None: ...
    @property
    def error_category(self) -> str | None: ...
    @property
    def defect_type(self) -> str | None: ...
    @property
    def swapped(self) -> _SwappedHalf | None: ...
    @property
    def inconsistent(self) -> bool: ...
    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> _Vote: ...


V = TypeVar("V", bound=RepeatVote)
V_co = TypeVar("V_co", bound=RepeatVote, covariant=True)


class _Repeated(Protocol[V_co]):
    """A record with votes per repeat: ``votes`` (repeat 0's) and, with --repeats, ``repeat_votes``."""

    @property
    def votes(self) -> Sequence[V_co]: ...


class _Record(Protocol):
    """What the checks read of every verdict file record (jury.verdicts.documents.AdjudicationRecord, AuditRecord)."""

    @property
    def question_id(self) -> int | str: ...
    @property
    def jurors(self) -> Sequence[str]: ...
    @property
    def votes(self) -> Sequence[_Vote]: ...
    @property
    def repeat_votes(self) -> Sequence[_Vote] | None: ...
    def model_dump(self) -> dict[str, Any]: ...


class _AuditRecord(_Record, Protocol):
    @property
    def flagged(self) -> bool: ...
    @property
    def decided(self) -> bool: ...
    @property
    def defect_types(self) -> Sequence[str]: ...
    @property
    def checks(self) -> object: ...


class _AdjudicationRecord(_Record, Protocol):
    @property
    def model(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def credited(self) -> bool: ...
    @property
    def review_pass(self) -> bool: ...
    @property
    def error_category(self) -> str | None: ...
    @property
    def test(self) -> str | None: ...


class _Panel(Protocol):
    @property
    def ballot_style(self) -> str: ...
    @property
    def quorum(self) -> str | int | None: ...
    @property
    def jurors(self) -> Sequence[object]: ...


class VerdictDocument(Protocol):
    """What check_document reads of a verdict file (jury.verdicts.documents.VerdictFile): its
    kind says which records it holds (an audit file's are AuditRecords)."""

    @property
    def kind(self) -> str: ...
    @property
    def panel(self) -> _Panel: ...
    @property
    def settings(self) -> dict[str, Any]: ...
    @property
    def summary(self) -> dict[str, Any]: ...
    @property
    def records(self) -> Sequence[_AdjudicationRecord] | Sequence[_AuditRecord]: ...


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
    return (Verdict.UNDECIDED if missing and top + missing >= threshold else Verdict.NO_MAJORITY).value


def is_credited(verdict: str) -> bool:
    return verdict in CREDITED_VERDICTS


def audit_flag(verdicts: list[str | None], quorum: int | None = None) -> tuple[bool, bool]:
    """(flagged, decided) from valid/defective votes of the whole panel; None marks an abstention.

    Flagged: defective votes reach a strict majority of the panel (len(verdicts) // 2 + 1:
    abstentions included, so they count against flagging, never for it), or ``quorum`` when
    given (1 to the panel size; jury.judging.panels.check_quorum). Undecided (decided = False):
    not flagged, but the abstentions could have made it flagged.

    >>> audit_flag(["defective", None, None, None, None])  # one juror cannot flag
    (False, False)
    >>> audit_flag(["defective", "defective", "valid", None, "valid"])
    (False, False)
    >>> audit_flag(["defective", "defective", "valid", "defective", None])
    (True, True)
    >>> audit_flag(["defective", "valid", "valid", None, "valid"])
    (False, True)
    >>> audit_flag(["defective", "valid", "valid"], quorum=1)
    (True, True)
    >>> audit_flag([None, None])
    (False, False)
    """
    defective = sum(v == AuditVote.DEFECTIVE for v in verdicts)
    missing = sum(v is None for v in verdicts)
    threshold = quorum if quorum is not None else len(verdicts) // 2 + 1
    if not verdicts:
        return False, False
    if defective >= threshold:
        return True, True
    return False, defective + missing < threshold


class FlagRate(TypedDict):
    """flagged of questions gold queries the audit flagged, and the rate (None of 0 questions)."""

    flagged: int
    questions: int
    rate: float | None


class AuditCounts(TypedDict):
    """The counts an audit summary states (``audit_counts``)."""

    overall: FlagRate
    by_difficulty: dict[str, FlagRate]
    by_split: dict[str, FlagRate]
    undecided: int


class JurorFlags(TypedDict):
    """One juror's audit votes: defective, valid (not abstained) and abstained, and its flag rate."""

    defective: int
    valid_votes: int
    abstentions: int
    flag_rate: float | None


class AuditSummary(AuditCounts):
    """What an audit states beside its records (jury.judging.gold_audit.summarize); the verdict
    file's summary: the counts loading re-checks, and these."""

    jurors: dict[str, JurorFlags]
    fleiss_kappa: float | None
    agreement: AgreementSummary
    defect_types: dict[str, int]
    flagged_defect_types: dict[str, int]


def audit_counts(records: list[dict[str, Any]]) -> AuditCounts:
    """The counts an audit summary states: flagged/questions/rate overall, by difficulty and
    by split, and how many questions are undecided (records as dicts)."""

    def rate(rs: list[dict[str, Any]]) -> FlagRate:
        n, k = len(rs), sum(bool(r["flagged"]) for r in rs)
        return FlagRate(flagged=k, questions=n, rate=k / n if n else None)

    def by(key: str) -> dict[str, FlagRate]:
        values = sorted({r.get(key) for r in records}, key=lambda x: (x is None, str(x)))
        return {("(none)" if v is None else str(v)): rate([r for r in records if r.get(key) == v]) for v in values}

    return AuditCounts(
        overall=rate(records),
        by_difficulty=by("difficulty"),
        by_split=by("split"),
        undecided=sum(not r["decided"] for r in records),
    )


def _effective(vote: CountedVote) -> str | None:
    """The category a vote counts as: None when it abstained or was skipped."""
    return None if vote.abstained or vote.skipped else vote.category


def repeats_of(record: _Repeated[V]) -> list[list[V]]:
    """--repeats: an adjudication or audit record's votes per repeat (its ``votes`` are repeat
    0's, its ``repeat_votes`` the others', each with its ``repeat``); one list without repeats."""
    out: list[list[V]] = [list(record.votes)]
    extra: Sequence[V] = getattr(record, "repeat_votes", None) or []
    for v in extra:
        while len(out) <= (v.repeat or 0):
            out.append([])
        out[v.repeat or 0].append(v)
    return out


def repeat_verdict(votes: Sequence[CountedVote]) -> str:
    """The verdict one repeat's votes give under the adjudication rule (as a record's verdict
    follows from its votes)."""
    return adjudication_verdict([_effective(v) for v in votes if not v.skipped], len(votes))


def _repeats_problem(record: _Record, style: str, repeats: int = 1) -> str | None:
    """Every repeat of a record asked its jurors, each vote's category following from its answer
    (an adjudication or an audit record)."""
    if any(v.repeat is None for v in record.repeat_votes or []):
        return "a vote of repeat_votes names no repeat"
    if any(v.repeat is not None for v in record.votes):
        return "a vote of votes (repeat 0) names a repeat"
    if len(repeats_of(record)) != repeats:
        return f"has votes of {len(repeats_of(record))} repeats, but the file's settings say {repeats} (settings.repeats)"
    for n, votes in enumerate(repeats_of(record)[1:], start=1):
        if [v.juror for v in votes] != list(record.jurors):
            return f"repeat {n}: jurors {[v.juror for v in votes]} do not match the record's jurors {list(record.jurors)}"
        for v in votes:
            problem = _vote_problem(v, style)
            if problem:
                return f"repeat {n}: {problem}"
    return None


def _swap_problem(vote: _Vote, half: _SwappedHalf, style: str) -> str | None:
    """A --swap vote: each order's category follows from its answer, the orders differ, and the
    vote counts only when both orders agree (two categories: an inconsistent abstention)."""
    if half.order == vote.order:
        return f"juror {vote.juror!r} judged both halves of a swapped vote in the same order ({vote.order})"
    own = _half_category(vote, style)
    first = vote.model_copy(update={"swapped": None, "inconsistent": False, "category": own, "abstained": own is None})
    second = vote.model_copy(update={"swapped": None, "inconsistent": False, **half.model_dump()})
    for part in (first, second):
        problem = _vote_problem(part, style)
        if problem:
            return problem
    one, two = first.category, second.category
    agreed = one if (one is not None and one == two) else None
    inconsistent = one is not None and two is not None and one != two
    if (vote.category, vote.abstained, vote.inconsistent) != (agreed, agreed is None, inconsistent):
        return (
            f"juror {vote.juror!r}'s swapped vote (category {vote.category!r}, inconsistent={vote.inconsistent}) does "
            f"not follow from its two orders ({one!r}, {two!r})"
        )
    return None


def _half_category(vote: _Vote, style: str) -> str | None:
    """The category the first half of a swapped vote gave on its own (from its raw answer)."""
    if vote.raw_verdict is None:
        return None
    if style == "labelled":
        return vote.raw_verdict if vote.raw_verdict in CATEGORIES else None

    return blind_category(vote.raw_verdict, vote.order)[0] if vote.raw_verdict in BLIND_ANSWERS and vote.order else None


def _vote_problem(vote: _Vote, style: str) -> str | None:
    """Is the vote's mapped category what its raw answer gives under the ballot style?"""
    half: _SwappedHalf | None = getattr(vote, "swapped", None)
    if half is not None:
        return _swap_problem(vote, half, style)
    if getattr(vote, "inconsistent", False):
        return f"juror {vote.juror!r} is marked inconsistent without a swapped vote"
    if vote.abstained or vote.skipped:
        if vote.category is not None:
            return f"juror {vote.juror!r} {'abstained' if vote.abstained else 'was skipped'} but has category {vote.category!r}"
        return None
    if vote.category is None:
        return f"juror {vote.juror!r} neither voted nor abstained nor was skipped"
    if style == CLASSIFY_STYLE:  # `jury suites --classify`: the answer is the pick, a vote counts as genuine_error
        pick = None if vote.raw_verdict in (None, NONE_FITS) else vote.raw_verdict
        ok = vote.category == Verdict.GENUINE_ERROR and (vote.raw_verdict is None or vote.error_category == pick)
    elif vote.raw_verdict is None:  # hand-made files may leave the raw answer out; the category must still be one
        ok = vote.category in (AUDIT_VOTES if style == "audit" else CATEGORIES)
    elif style == "audit":
        ok = vote.category in AUDIT_VOTES and vote.raw_verdict == vote.category
    elif style == "labelled":
        ok = vote.category in CATEGORIES and vote.raw_verdict == vote.category
    elif style == "suite":  # a test-suite format ballot: equivalent / different / ambiguous
        ok = vote.raw_verdict in SUITE_CATEGORIES and SUITE_CATEGORIES[vote.raw_verdict] == vote.category
    else:  # blind: the raw answer names a position; the recorded order maps it back
        ok = (
            vote.raw_verdict in BLIND_ANSWERS
            and vote.order is not None
            and blind_category(vote.raw_verdict, vote.order)[0] == vote.category
        )
    return (
        None
        if ok
        else (
            f"juror {vote.juror!r}'s category {vote.category!r} does not follow from its answer "
            f"{vote.raw_verdict!r} (order {vote.order})"
        )
    )


# A verdict file's kind says which records it holds (jury.verdicts.documents' discriminator: an
# "audit" file's are AuditRecords, an "adjudication" file's AdjudicationRecords); these two state
# it for mypy, which cannot narrow doc.records from doc.kind.
def _audit(r: _Record) -> _AuditRecord:
    return cast("_AuditRecord", r)


def _adjudication(r: _Record) -> _AdjudicationRecord:
    return cast("_AdjudicationRecord", r)


def check_document(doc: VerdictDocument) -> str | None:
    """Recompute every record's verdict from its votes under the file's rules (k, early stop,
    quorum, ballot style), credit from verdict and the summary's counts; the first
    disagreement as one line ("records.3 (model 'm' question 7): ..."), or None."""
    style = "audit" if doc.kind == "audit" else doc.panel.ballot_style
    early_stop = bool(doc.settings.get("early_stop", False))
    repeats = doc.settings.get("repeats", 1)  # --repeats: recorded only when R > 1
    quorum = doc.panel.quorum if isinstance(doc.panel.quorum, int) and not isinstance(doc.panel.quorum, bool) else None
    if doc.kind == "audit" and quorum is not None and not 1 <= quorum <= len(doc.panel.jurors):
        return f"panel.quorum {quorum} is outside 1..{len(doc.panel.jurors)} (the panel has {len(doc.panel.jurors)} jurors)"
    for i, r in enumerate(doc.records):
        where = (
            f"records.{i} (model {_adjudication(r).model!r} question {r.question_id!r})"
            if doc.kind == "adjudication"
            else f"records.{i} (question {r.question_id!r})"
        )
        problem = _votes_problem(r, style)
        if problem is None and doc.kind == "audit":
            problem = _audit_record_problem(doc, _audit(r), style, repeats, quorum)
        elif problem is None:
            problem = _adjudication_record_problem(doc, _adjudication(r), style, repeats, early_stop)
        if problem:
            return f"{where}: {problem}"
    return _summary_problem(doc)


def _votes_problem(r: _Record, style: str) -> str | None:
    """A record's jurors that are not its votes', or its first vote with a problem."""
    if list(r.jurors) != [v.juror for v in r.votes]:
        return f"jurors {list(r.jurors)} do not match the jurors of its votes {[v.juror for v in r.votes]}"
    for v in r.votes:
        problem = _vote_problem(v, style)
        if problem:
            return problem
    return None


def _audit_record_problem(doc: VerdictDocument, r: _AuditRecord, style: str, repeats: int, quorum: int | None) -> str | None:
    """An audit record's first field that does not follow from its votes under the file's rules."""
    problem = _repeats_problem(r, style, repeats)
    if problem:
        return problem
    if any(v.skipped for v in [*r.votes, *(r.repeat_votes or [])]):
        return "an audit vote cannot be skipped"
    flagged, decided = audit_flag([_effective(v) for v in r.votes], quorum)
    if (r.flagged, r.decided) != (flagged, decided):
        return (
            f"flagged={r.flagged}, decided={r.decided} does not follow from its votes "
            f"(the file's rules give flagged={flagged}, decided={decided})"
        )
    types = sorted({v.defect_type for v in r.votes if _effective(v) == AuditVote.DEFECTIVE and v.defect_type})
    if list(r.defect_types) != types:
        return f"defect_types {list(r.defect_types)} do not follow from its votes ({types})"
    if r.checks is not None and not isinstance(doc.settings.get("checks"), dict):
        return "has gold checks but the file's settings record none (settings.checks)"
    return None


def _adjudication_record_problem(
    doc: VerdictDocument, r: _AdjudicationRecord, style: str, repeats: int, early_stop: bool
) -> str | None:
    """An adjudication record's first field that does not follow from its votes under the
    file's rules (skipped votes, verdict, credit, error category)."""
    problem = _repeats_problem(r, style, repeats)
    if problem:
        return problem
    counted = [_effective(v) for v in r.votes if not v.skipped]
    verdict = adjudication_verdict(counted, len(r.votes))
    if any(v.skipped for v in r.votes):
        settled = verdict not in (Verdict.NO_MAJORITY, Verdict.UNDECIDED)
        if not early_stop or not settled:
            return "a vote is marked skipped but " + (
                "the file's settings have no early stop" if not early_stop else "no majority was settled"
            )
    if verdict != r.verdict:
        return f"verdict {r.verdict!r} does not follow from its votes (the file's rules give {verdict!r})"
    if r.credited != is_credited(verdict):
        return f"credited={r.credited} does not follow from verdict {verdict!r}"
    from jury.judging.taxonomies import taxonomy_problem

    problem = taxonomy_problem(r, doc.settings.get("taxonomy"))
    if problem is None and style == CLASSIFY_STYLE:
        from jury.judging.taxonomies import classify_problem

        problem = classify_problem(r, doc.settings.get("taxonomy"))
    return problem or None


def _summary_problem(doc: VerdictDocument) -> str | None:
    """The first summary count the records do not give, or None."""
    s = doc.summary
    if doc.kind == "adjudication":
        failures = [r for r in map(_adjudication, doc.records) if not r.review_pass]
        for key, value in (("failures", len(failures)), ("credited", sum(r.credited for r in failures))):
            if key in s and s[key] != value:
                return f"summary.{key} is {s[key]!r} but the records give {value}"
    else:
        counts = audit_counts([r.model_dump() for r in doc.records])
        for name, stated in counts.items():
            if name in s and s[name] != stated:
                return f"summary.{name} is {s[name]!r} but the records give {stated!r}"
    return None
