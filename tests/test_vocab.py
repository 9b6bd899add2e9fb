"""jury/vocab.py is the one place outcome, comparator, verdict, blind-answer, audit-vote and
defect-type names and the evaluation defaults are spelled out (issue #10)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from jury import vocab

# Whether a module spells a vocabulary name as a string literal is a lint step:
# .ci/text_checks.py (run by .ci/run).


def test_no_module_redefines_a_vocabulary_tuple():
    """The old per-module copies are gone: their users import vocab's."""
    from jury.compare import outcomes
    from jury.inputs import records
    from jury.judging import ballots, rules
    from jury.results import score_table
    from jury.results.plots import figures as plots
    from jury.results.report import build as report

    gone = {
        ballots: ("BLIND_VERDICTS", "CATEGORIES", "AUDIT_VERDICTS", "DEFECT_TYPES"),
        rules: ("CREDITED", "ADJUDICATION_VERDICTS"),
        report: ("CATEGORIES", "LABELS"),
        plots: ("COLUMN_LABEL",),
        score_table: ("SIDE", "OUTCOME_COLUMNS"),
        outcomes: ("SIDE_COMPARATORS",),
        records: ("Outcome",),
    }
    left = [
        f"{m.__name__}.{name}"
        for m, names in gone.items()
        for name in names
        if name in vars(m) and vars(m)[name] is not getattr(vocab, name, object())
    ]
    assert left == []
    assert report.COLUMNS is vocab.COLUMNS and report.NOT_EXECUTED is vocab.NOT_EXECUTED
    assert all(isinstance(s, vocab.Column) for s in report.STRENGTHS)
    assert [k for k, _, _ in plots.COMPOSITION_BARS] == list(vocab.COMPOSITION)


def test_comparator_registry_is_keyed_by_comparator_members():
    from jury.compare.comparators import COMPARATORS, get_comparator

    # every deciding comparator, then bird_normalized and spider2, which decide only when chosen (no side column);
    # every name jury registers (in code or as its own entry point) is a Comparator member
    assert sorted(COMPARATORS) == sorted(
        [*vocab.DECIDING_COMPARATORS, vocab.Comparator.BIRD_NORMALIZED, vocab.Comparator.SPIDER2]
    )
    assert all(k in tuple(vocab.Comparator) and COMPARATORS.plugin(k).shipped for k in COMPARATORS)
    assert get_comparator("strict") is COMPARATORS[vocab.Comparator.STRICT]


def test_reply_schemas_and_parsers_use_vocab_names_as_plain_strings():
    from jury.judging.ballots import REPLY_SCHEMAS, blind_category, make_parser

    enums = {style: s["properties"]["verdict"]["enum"] for style, s in REPLY_SCHEMAS.items()}
    assert enums == {
        "blind": list(vocab.BLIND_ANSWERS),
        "labelled": list(vocab.CATEGORIES),
        "audit": list(vocab.AUDIT_VOTES),
        "suite": list(vocab.SUITE_ANSWERS),
    }
    # a touched-view audit ballot offers every defect type but wrong_table (its request hash as before it)
    assert REPLY_SCHEMAS["audit"]["properties"]["defect_type"]["enum"] == [*vocab.TOUCHED_DEFECT_TYPES, None]
    assert [*vocab.TOUCHED_DEFECT_TYPES, "wrong_table"] == list(vocab.DEFECT_TYPES)
    # plain str, so request hashes and repr() never show an enum
    assert all(type(v) is str for e in enums.values() for v in e)
    assert make_parser("audit")('{"verdict": "defective", "defect_type": "nonsense"}')["defect_type"] == "other"
    assert blind_category("answer_1", "candidate_first") == ("gold_defect", False)
    assert type(blind_category("both", "gold_first")[0]) is str


def test_verdict_rule_returns_plain_strings():
    from jury.judging.rules import adjudication_verdict

    for votes in (["gold_defect", None, "genuine_error"], ["gold_defect", "ambiguous", "genuine_error"]):
        assert type(adjudication_verdict(votes, 3)) is str
    assert repr(adjudication_verdict([None], 3)) == "'undecided'"


def test_adjudication_record_verdict_is_vocab_literal():
    from jury.verdicts.documents import AdjudicationRecord

    schema = AdjudicationRecord.model_json_schema()["properties"]["verdict"]
    assert schema["enum"] == list(vocab.VERDICTS) and "$ref" not in schema


def test_defaults_come_from_vocab():
    from jury.compare.outcomes import Settings
    from jury.execution import sqlite

    s = Settings()
    assert (s.comparator, s.near_miss, s.timeout_s, s.row_cap) == (
        vocab.DEFAULT_COMPARATOR,
        vocab.DEFAULT_NEAR_MISS,
        vocab.DEFAULT_TIMEOUT_S,
        vocab.DEFAULT_ROW_CAP,
    )
    params = inspect.signature(sqlite.execute).parameters
    assert params["timeout_s"].default is vocab.DEFAULT_TIMEOUT_S and params["row_cap"].default is vocab.DEFAULT_ROW_CAP


def test_pair_result_names_comparator_matches_not_verdicts():
    from dataclasses import fields

    from jury.compare.outcomes import PairResult

    names = {f.name for f in fields(PairResult)}
    assert "comparator_matches" in names and "verdicts" not in names


def test_verdict_literal_for_type_checkers_matches_the_vocabulary():
    """vocab.py spells VerdictName out for mypy (a Literal built at run time is not a type):
    the spelled-out names must be exactly the verdicts."""

    from jury import vocab

    tree = ast.parse(Path(vocab.__file__).read_text(encoding="utf-8"))
    spelled = None
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            assign = node.body[0]
            assert isinstance(assign, ast.Assign) and assign.targets[0].id == "VerdictName"
            spelled = tuple(e.value for e in assign.value.slice.elts)
    assert spelled == tuple(v.value for v in vocab.VERDICTS)
