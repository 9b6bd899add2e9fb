"""`jury score --function-set`: Spider 2.0-AIFunc's function-selection accuracy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jury.compare.function_sets import function_names, function_set_accuracy, name_matcher
from jury.errors import InputError
from tests.support.badinput import Case, check_case, run_jury
from tests.support.helpers import make_db, write_gold, write_runs


def test_names_are_parsed_case_insensitively_and_filtered() -> None:
    sql = "SELECT ai_filter(a), upper(b), COUNT(*) FROM t WHERE AI_Classify(c, 'x') = 'y' AND 'ai_fake(' <> ''"
    assert function_names(sql) == {"AI_FILTER", "UPPER", "COUNT", "AI_CLASSIFY"}
    keep = name_matcher("ai_*")
    assert {n for n in function_names(sql) if keep(n)} == {"AI_FILTER", "AI_CLASSIFY"}
    assert name_matcher("re:ai_(filter)")("AI_FILTER") and not name_matcher("re:ai_")("AI_FILTER")  # full match
    with pytest.raises(InputError, match="bad regular expression"):
        name_matcher("re:(")


def test_accuracy_counts_every_routed_pair(tmp_path: Path) -> None:
    """Hand-computed: gold 1 uses {UPPER}, gold 2 {LENGTH}, gold 3 none (pattern re:UPPER|LENGTH|LOWER).
    Model m: q1 upper() ✓, q2 lower() ✗ ({LOWER} ≠ {LENGTH}), q3 none ✓ -> 2/3.
    Model n: q1 no function ✗, q2 LENGTH and UPPER ✗, q3 missing SQL (empty set = gold's) ✓ -> 1/3."""
    make_db(tmp_path / "dbs")
    write_gold(
        tmp_path,
        [
            {"question_id": 1, "db_id": "shop", "SQL": "SELECT UPPER(name) FROM item WHERE id = 1"},
            {"question_id": 2, "db_id": "shop", "SQL": "SELECT LENGTH(name) FROM item WHERE id = 2"},
            {"question_id": 3, "db_id": "shop", "SQL": "SELECT name FROM item WHERE id = 3"},
        ],
    )
    write_runs(
        tmp_path,
        [
            {"model": "m", "question_id": 1, "sql": "select upper(name) from item where id = 1"},
            {"model": "m", "question_id": 2, "sql": "SELECT lower(name) FROM item WHERE id = 2"},
            {"model": "m", "question_id": 3, "sql": "SELECT name FROM item WHERE id = 3"},
            {"model": "n", "question_id": 1, "sql": "SELECT name FROM item WHERE id = 1"},
            {"model": "n", "question_id": 2, "sql": "SELECT length(upper(name)) FROM item WHERE id = 2"},
            {"model": "n", "question_id": 3, "sql": ""},
        ],
    )
    args = ["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--workers", "1", "--store", "s.db"]
    proc = run_jury([*args, "--function-set", "re:UPPER|LENGTH|LOWER", "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    fsa = {m["model"]: m["function_set"] for m in json.loads(proc.stdout)["models"]}
    assert (fsa["m"]["k"], fsa["m"]["n"]) == (2, 3) and (fsa["n"]["k"], fsa["n"]["n"]) == (1, 3)
    csv = run_jury([*args, "--function-set", "re:UPPER|LENGTH|LOWER", "-f", "csv"], tmp_path).stdout.splitlines()
    header = csv[0].split(",")
    assert "fsa" in header and csv[1].split(",")[header.index("fsa")] == str(2 / 3)
    table = run_jury([*args, "--function-set", "UPP*"], tmp_path).stdout
    assert "function-set acc" in table
    plain = run_jury([*args, "-f", "json"], tmp_path)
    assert json.loads(plain.stdout)["models"][0]["function_set"] is None


def test_accuracy_function_excludes_gold_errors_and_misrouted() -> None:
    class P:
        def __init__(self, model):
            self.model = model

    pairs = [P("a"), P("a"), P("b")]
    sets = {0: (frozenset({"AI_X"}), frozenset({"AI_X"})), 2: (frozenset(), frozenset({"AI_Y"}))}
    assert function_set_accuracy(pairs, sets) == {"a": (1, 1), "b": (0, 1)}


BAD = [
    Case("bad-regex", ["score", "run.jsonl", "--function-set", "re:(", "--workers", "1"], "bad regular expression"),
    Case(
        "bad-dialect",
        ["score", "run.jsonl", "--function-set", "AI_*", "--dialect", "nosuch", "--workers", "1"],
        "unknown SQL dialect",
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
