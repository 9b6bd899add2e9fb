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
    # --missing fail: n's blank SQL is a `missing` answer in the denominator (under exclude it has no pair)
    args = [
        "score",
        "run.jsonl",
        "--gold",
        "gold.json",
        "--db-root",
        "dbs",
        "--workers",
        "1",
        "--store",
        "s.db",
        "--missing",
        "fail",
    ]
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


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT CASE WHEN x > 0 THEN 1 ELSE AI_FILTER(a) END FROM t",  # ELSE
        "SELECT CASE WHEN x > 0 THEN AI_FILTER(a) ELSE 1 END FROM t",  # THEN
        "SELECT CASE WHEN AI_FILTER(a) THEN 1 END FROM t",  # condition
        "SELECT CASE AI_FILTER(a) WHEN 1 THEN 2 END FROM t",  # simple CASE's operand
        "SELECT CASE x WHEN AI_FILTER(a) THEN 2 END FROM t",  # simple CASE's WHEN value
    ],
)
def test_a_function_anywhere_in_a_case_counts(sql: str) -> None:
    assert function_names(sql) == {"AI_FILTER"}  # CASE itself is syntax, not a function


def test_case_else_decides_the_function_set(tmp_path: Path) -> None:
    """Gold calls UPPER only in its ELSE branch; a candidate calling nothing is not equal."""
    make_db(tmp_path / "dbs")
    gold_sql = "SELECT CASE WHEN id > 100 THEN 1 ELSE UPPER(name) END FROM item WHERE id = 1"
    write_gold(tmp_path, [{"question_id": 1, "db_id": "shop", "SQL": gold_sql}])
    write_runs(tmp_path, [{"model": "m", "question_id": 1, "sql": "SELECT 0 FROM item WHERE id = 1"}])
    args = ["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--workers", "1", "--store", "s.db"]
    proc = run_jury([*args, "--function-set", "UPP*", "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    fsa = json.loads(proc.stdout)["models"][0]["function_set"]
    assert (fsa["k"], fsa["n"]) == (0, 1)


@pytest.mark.parametrize(
    ("sql", "dialect", "expected"),
    [
        ("SELECT [1, 2] FROM t", "duckdb", set()),  # array literal
        ("SELECT {'k': 1} FROM t", "duckdb", set()),  # struct literal
        ("SELECT a::INT FROM t", "duckdb", set()),  # cast operator
        ("SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u)", "sqlite", set()),  # predicate
        ("SELECT a FROM t WHERE NOT EXISTS (SELECT 1 FROM u) AND a IN (1, 2)", "sqlite", set()),
        ("SELECT DATE '2020-01-01', CURRENT_DATE, CURRENT_TIMESTAMP FROM t", "duckdb", set()),  # no parentheses
        ("SELECT a || b, -a, a % 2, a LIKE 'x%', a BETWEEN 1 AND 2, a IS NULL FROM t", "sqlite", set()),
        ("SELECT CAST(a AS INT), ARRAY(SELECT 1), STRUCT_PACK(k := 1) FROM t", "duckdb", {"CAST", "ARRAY", "STRUCT"}),
        ("SELECT CAST(a AS INT), b::TEXT FROM t", "duckdb", {"CAST"}),  # the call counts, the :: adds nothing
        ("SELECT STRFTIME('%Y', d) FROM t", "sqlite", {"TIME_TO_STR"}),  # no node sqlglot adds on its own
        (
            "SELECT IFNULL(a, 0), SUBSTR(b, 1, 2), EXTRACT(YEAR FROM d), IIF(a, 1, 2) FROM t",
            "sqlite",
            {"COALESCE", "SUBSTRING", "EXTRACT", "IF"},
        ),
    ],
)
def test_only_what_is_written_as_a_call_counts(sql: str, dialect: str, expected: set[str]) -> None:
    assert function_names(sql, dialect) == expected


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("SELECT DATE_ADD(d, INTERVAL 1 DAY) FROM t", "mysql"),
        ("SELECT REGEXP_EXTRACT(s, 'a(b)') FROM t", "bigquery"),
        ("SELECT OBJECT_CONSTRUCT('k', 1) FROM t", "snowflake"),
    ],
)
def test_calls_sqlglot_cannot_build_from_plain_arguments_still_count(sql: str, dialect: str) -> None:
    """Probing a name with plain arguments can fail inside sqlglot's builders; the call counts."""
    assert len(function_names(sql, dialect)) == 1


def test_bundled_example_gsr_all_functions() -> None:
    """`--function-set 're:.*'` on the bundled example: gsr's sets equal the gold's on 103 of 129
    questions (a token-level count agrees); EXISTS in gold 730 and 738 is not a function."""
    root = Path(__file__).resolve().parents[1] / "examples" / "bird-superhero"
    gold = {q["question_id"]: q["SQL"] for q in json.loads((root / "dev.json").read_text())}
    runs = [json.loads(line) for line in (root / "run.jsonl").read_text().splitlines() if line.strip()]
    gsr = [r for r in runs if r["model"] == "gsr"]
    equal = [function_names(gold[r["question_id"]]) == function_names(r["sql"] or "") for r in gsr]
    assert (sum(equal), len(equal)) == (103, 129)
    assert function_names(gold[730]) == function_names(gold[738]) == frozenset()
