"""Spider 2.0-AIFunc's stratified error-analysis sample: `jury score --error-sample FILE --group
strong=a,b --group weak=c` and `jury.error_sample`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import jury
from tests.support.badinput import Case, check_case, run_jury
from tests.support.helpers import make_db, write_gold, write_runs

# question -> which of a, b (strong) and c (weak) solve it; q9 has no answer of c
SOLVED = {1: "", 2: "c", 3: "a", 4: "ab", 5: "abc", 6: "", 7: "c", 8: "c", 9: "ab"}


def _project(tmp_path: Path, *, complete: bool = False) -> list[str]:
    """The runs of SOLVED (with ``complete``, c answers q9 too, wrongly: every model covers
    the gold, so a refusal is the only line on stderr)."""
    if not (tmp_path / "dbs" / "shop" / "shop.sqlite").exists():  # check_case's project has it already
        make_db(tmp_path / "dbs")
    write_gold(tmp_path, [{"question_id": q, "db_id": "shop", "SQL": f"SELECT {q}"} for q in SOLVED])
    runs = [
        {"model": m, "question_id": q, "sql": f"SELECT {q}" if m in who else "SELECT -1"}
        for q, who in SOLVED.items()
        for m in "abcd"
        if complete or not (q == 9 and m == "c")
    ]
    write_runs(tmp_path, runs)
    return ["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--workers", "1", "--store", "s.db"]


ALL_FAIL_ALL_FAIL = "strong: all fail | weak: all fail"
ALL_FAIL_WEAK_WINS = "strong: all fail | weak: all succeed"
EXPECTED_SIZES = {
    # by hand from SOLVED: q5 (everyone solves it) and q9 (c's state unknown) are left out
    ALL_FAIL_ALL_FAIL: 2,  # q1, q6
    ALL_FAIL_WEAK_WINS: 3,  # q2, q7, q8
    "strong: some succeed | weak: all fail": 1,  # q3
    "strong: all succeed | weak: all fail": 1,  # q4
}


def test_strata_and_seeded_draw(tmp_path: Path) -> None:
    """Strata by hand (EXPECTED_SIZES); the draw of 2 per stratum follows the documented rule,
    random.Random(f"{seed}/{stratum}").sample(ids sorted as text, k): strata of 2 or fewer are
    drawn whole."""
    _project(tmp_path)
    score = jury.score(tmp_path / "run.jsonl", gold=tmp_path / "gold.json", db_root=tmp_path / "dbs",
                       store=tmp_path / "s.db", workers=1)  # fmt: skip
    sample = jury.error_sample(score, group={"strong": ["a", "b"], "weak": ["c"]}, per_stratum=2, seed=7)
    assert isinstance(sample, jury.ErrorSample) and sample.sizes == EXPECTED_SIZES
    assert sample.drawn[ALL_FAIL_WEAK_WINS] == random.Random(f"7/{ALL_FAIL_WEAK_WINS}").sample([2, 7, 8], 2)
    assert sorted(sample.drawn[ALL_FAIL_ALL_FAIL]) == [1, 6]
    assert sample.drawn["strong: some succeed | weak: all fail"] == [3]
    lines = [json.loads(line) for line in sample.jsonl.splitlines()]
    assert len(lines) == 2 + 2 + 1 + 1
    q3 = next(line for line in lines if line["question_id"] == 3)
    assert q3["gold_sql"] == "SELECT 3" and q3["taxonomy"] is None and q3["stratum_size"] == 1
    assert [(a["model"], a["group"], a["outcome"]) for a in q3["answers"]] == [
        ("a", "strong", "match"),
        ("b", "strong", "mismatch"),
        ("c", "weak", "mismatch"),
    ]
    again = jury.error_sample(score, group=["strong=a,b", "weak=c"], per_stratum=2, seed=7)
    assert again.jsonl == sample.jsonl  # the same seed, the same sample
    draws = {
        tuple(jury.error_sample(score, group=["strong=a,b", "weak=c"], per_stratum=2, seed=s).drawn[ALL_FAIL_WEAK_WINS])
        for s in range(10)
    }
    assert len(draws) > 1  # the seed decides


def test_cli_writes_the_sample_and_says_what_it_drew(tmp_path: Path) -> None:
    args = _project(tmp_path)
    sample_args = ["--error-sample", "label.jsonl", "--group", "strong=a,b", "--group", "weak=c", "--per-stratum", "1"]
    proc = run_jury([*args, *sample_args, "--seed", "3"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in (tmp_path / "label.jsonl").read_text().splitlines()]
    assert sorted(line["stratum"] for line in lines) == sorted(EXPECTED_SIZES)
    assert {line["seed"] for line in lines} == {3}
    assert "error sample: 4 questions from 4 strata (seed 3)" in proc.stderr and "label.jsonl" in proc.stderr
    first = (tmp_path / "label.jsonl").read_bytes()
    assert run_jury([*args, *sample_args, "--seed", "3"], tmp_path).returncode == 0
    assert (tmp_path / "label.jsonl").read_bytes() == first


def _sample_project(tmp: Path) -> None:
    _project(tmp, complete=True)


BASE = ["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--workers", "1"]


@pytest.mark.parametrize(
    "case",
    [
        Case(
            "unknown-model",
            [*BASE, "--error-sample", "x.jsonl", "--group", "strong=a,zz"],
            "model 'zz' is not in the runs",
            setup=_sample_project,
        ),  # fmt: skip
        Case(
            "model-in-two-groups",
            [*BASE, "--error-sample", "x.jsonl", "--group", "s=a,b", "--group", "w=b"],
            "already in group 's'",
            setup=_sample_project,
        ),  # fmt: skip
        Case("group-without-file", [*BASE, "--group", "s=a"], "--error-sample and --group go together", setup=_sample_project),
        Case(
            "bad-group", [*BASE, "--error-sample", "x.jsonl", "--group", "strong"], "expected NAME=MODEL", setup=_sample_project
        ),
        Case(
            "sample-over-the-gold",
            [*BASE, "--error-sample", "gold.json", "--group", "s=a"],
            "gold.json",
            setup=_sample_project,
            unchanged=("gold.json",),
        ),  # fmt: skip
    ],
    ids=lambda c: c.id,
)
def test_bad_input(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
