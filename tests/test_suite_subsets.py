"""PLSQLBench's tables: metrics per subset (test set and split) and the overall mean over a
split's subsets, through `jury suites` and `jury.suites`; every expected number is derived by
hand in the test."""

from __future__ import annotations

import json

import pytest

import jury
from jury.inputs.records import RunRecord
from jury.results.suite_subsets import subset_scores
from tests.support.badinput import Case, check_case
from tests.support.clirun import run_jury_inprocess


def rec(qid, passed, subset, split="test", *, model="m", episode=None, turn=None, **extra):
    obj = {"model": model, "question_id": qid, "tests": [{"name": f"t{i}", "passed": p} for i, p in enumerate(passed)]}
    if subset is not None:
        obj["subset"] = subset
    if split is not None:
        obj["split"] = split
    if episode is not None:
        obj.update(episode=episode, turn=turn)
    return {**obj, **extra}


# Spider2-ST test: tasks 1/2, 2/2, 0/1 -> MeanTestPass (1/2 + 1 + 0)/3 = 1/2, SuitePass 1/3.
ST = [rec("st1", [True, False], "Spider2-ST"), rec("st2", [True, True], "Spider2-ST"), rec("st3", [False], "Spider2-ST")]
# Spider2-MT test: episode e1 turns 2/2 and 1/3 (sum 3/5, one of two turns solved), e2 one turn 1/1:
# MeanTestPass (3/5 + 1)/2 = 4/5, EpisodePass 1/2, TurnSuitePass (1/2 + 1)/2 = 3/4.
MT = [
    rec("mt1", [True, True], "Spider2-MT", episode="e1", turn=1),
    rec("mt1", [True, False, False], "Spider2-MT", episode="e1", turn=2),
    rec("mt2", [True], "Spider2-MT", episode="e2", turn=1),
]
# MBPP+-PLSQL test: one task 3/4 -> MeanTestPass 3/4, SuitePass 0.
MBPP_PLUS = [rec("mp1", [True, True, True, False], "MBPP+-PLSQL")]
# MBPP-PLSQL dev: one task 1/1.
MBPP_DEV = [rec("md1", [True], "MBPP-PLSQL", "dev")]


def write(tmp, objs, name="run.jsonl"):
    (tmp / name).write_text("".join(json.dumps(o) + "\n" for o in objs))
    return tmp / name


def by_row(rows, model="m"):
    return {(r["subset"], r["split"], r["metric"]): r for r in rows if r["model"] == model}


def test_command_reports_each_subset_and_the_overall_test_mean(tmp_path):
    write(tmp_path, ST + MT + MBPP_PLUS + MBPP_DEV)
    res = run_jury_inprocess(["suites", "run.jsonl", "-f", "json"], tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    rows = by_row(doc["subsets"])
    assert rows[("Spider2-ST", "test", "MeanTestPass@1")]["strict_value"] == pytest.approx(1 / 2)
    assert rows[("Spider2-ST", "test", "SuitePass@1")]["strict_value"] == pytest.approx(1 / 3)
    assert rows[("Spider2-MT", "test", "MeanTestPass@1")]["strict_value"] == pytest.approx(4 / 5)
    assert rows[("Spider2-MT", "test", "EpisodePass@1")]["strict_value"] == pytest.approx(1 / 2)
    assert rows[("Spider2-MT", "test", "TurnSuitePass@1")]["strict_value"] == pytest.approx(3 / 4)
    assert rows[("Spider2-MT", "test", "EpisodePass@1")]["interval"] == "wilson"
    # the leaderboard's overall test mean: each test set weighs equally, whatever its size
    overall = rows[("overall", "test", "MeanTestPass@1")]
    assert overall["strict_value"] == pytest.approx((1 / 2 + 4 / 5 + 3 / 4) / 3)
    assert overall["strict_units"] == 3 and overall["interval"] == "none"
    assert overall["averaged"] == "Spider2-ST test, Spider2-MT test, MBPP+-PLSQL test"
    # metric-specific: SuitePass over the single-turn test sets, EpisodePass over the episode one
    assert rows[("overall", "test", "SuitePass@1")]["strict_value"] == pytest.approx((1 / 3 + 0) / 2)
    assert rows[("overall", "test", "EpisodePass@1")]["strict_value"] == pytest.approx(1 / 2)
    assert rows[("overall", "test", "TurnSuitePass@1")]["strict_units"] == 1
    # one dev subset: no dev overall; two splits: the mean over all four subsets
    assert not any(k[:2] == ("overall", "dev") for k in rows)
    assert rows[("overall", "all splits", "MeanTestPass@1")]["strict_value"] == pytest.approx((1 / 2 + 4 / 5 + 3 / 4 + 1) / 4)
    # the pooled per-model rows are kept: single-turn tasks of every subset weigh equally there,
    # (1/2 + 1 + 0 + 3/4 + 1)/5, unlike the mean over subsets
    pooled = {(r["tasks"], r["metric"]): r for r in doc["metrics"]}
    assert pooled[("single-turn", "MeanTestPass@1")]["strict_value"] == pytest.approx((1 / 2 + 1 + 0 + 3 / 4 + 1) / 5)
    assert doc["subset_notes"] == []


def test_two_test_sets_as_the_2026_06_leaderboard(tmp_path):
    """PLSQLBench's first leaderboard averaged the two Spider2 test sets; a run without MBPP+
    gets that mean, and every output names the subsets."""
    write(tmp_path, ST + MT)
    found = jury.suites(tmp_path / "run.jsonl")
    [scores] = found.subsets
    assert scores.overall["test"]["MeanTestPass@1"].value == pytest.approx((1 / 2 + 4 / 5) / 2)
    assert "all splits" not in scores.overall  # one split only
    csv_lines = found.render("csv").splitlines()
    assert csv_lines[0] == "model,subset,split,tasks,metric,interval,strict_value,strict_low,strict_high,strict_units,averaged"
    assert any(line.startswith("m,pooled,,single-turn,MeanTestPass@1,") for line in csv_lines)
    assert any(line.startswith("m,overall,test,mean of subsets,MeanTestPass@1,none,0.65,") for line in csv_lines)
    table = found.render("table")
    assert "per subset (PLSQLBench's tables)" in table and "0.650 (mean of 2)" in table
    md = found.render("md")
    assert "| m | overall | test | MeanTestPass@1 | none | 2 | 0.650 (mean of 2) |" in md


def test_a_model_lacking_a_test_set_is_averaged_over_what_it_has_and_named(tmp_path):
    other = [{**r, "model": "n"} for r in ST]  # model n has no Spider2-MT test
    write(tmp_path, ST + MT + other)
    res = run_jury_inprocess(["suites", "run.jsonl", "-f", "json"], tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    n = by_row(doc["subsets"], "n")
    assert n[("overall", "test", "MeanTestPass@1")]["strict_value"] == pytest.approx(1 / 2)
    assert n[("overall", "test", "MeanTestPass@1")]["strict_units"] == 1
    assert doc["subset_notes"] == ["n: overall test averages 1 subset(s); it lacks Spider2-MT test"]
    table = run_jury_inprocess(["suites", "run.jsonl"], tmp_path).stdout
    assert "n: overall test averages 1 subset(s); it lacks Spider2-MT test" in table


def test_credited_tests_raise_the_adjudicated_subset_and_overall_means():
    records = [RunRecord.model_validate(o) for o in ST + MT]
    # crediting st1's failing t1 makes Spider2-ST (1 + 1 + 0)/3 = 2/3; Spider2-MT stays 4/5
    [adj] = subset_scores(records, {("m", "st1", "t1")})
    assert adj.overall["test"]["MeanTestPass@1"].value == pytest.approx((2 / 3 + 4 / 5) / 2)
    assert adj.overall["test"]["SuitePass@1"].value == pytest.approx(2 / 3)


def test_runs_without_subsets_print_as_before(tmp_path):
    write(tmp_path, [{k: v for k, v in r.items() if k not in ("subset", "split")} for r in ST])
    found = jury.suites(tmp_path / "run.jsonl")
    assert found.subsets is None
    assert "subsets" not in json.loads(found.render("json"))
    assert found.render("csv").splitlines()[0].startswith("model,tasks,metric,")


def _run(objs):
    return lambda tmp: write(tmp, objs)


BAD = [
    Case(
        "split-without-subset",
        ["suites", "run.jsonl"],
        "run.jsonl:1: record: Value error, `split` needs `subset`",
        _run([rec(1, [True], None, "test")]),
    ),
    Case(
        "subset-on-sql",
        ["suites", "run.jsonl"],
        "`subset` belongs to a test-suite record",
        _run([{"model": "m", "question_id": 1, "sql": "SELECT 1", "subset": "A"}]),
    ),
    Case(
        "some-without-subset",
        ["suites", "run.jsonl"],
        "model 'm' question 2 names no `subset` while others do",
        _run([rec(1, [True], "A"), rec(2, [True], None, None)]),
    ),
    Case(
        "subset-mixes-kinds",
        ["suites", "run.jsonl"],
        "subset 'A test' mixes single-turn tasks and episodes",
        _run([rec(1, [True], "A"), rec(2, [True], "A", episode="e", turn=1)]),
    ),
    Case(
        "episode-across-subsets",
        ["suites", "run.jsonl"],
        "episode 'e' lies in subsets 'A test' and 'A dev'",
        _run([rec(1, [True], "A", episode="e", turn=1), rec(2, [True], "A", "dev", episode="e", turn=2)]),
    ),
    Case(
        "reserved-subset-name",
        ["suites", "run.jsonl"],
        "subset 'overall' is a name jury's tables use",
        _run([rec(1, [True], "overall")]),
    ),
    Case(
        "empty-subset",
        ["suites", "run.jsonl"],
        "run.jsonl:1: subset: String should have at least 1 character",
        _run([rec(1, [True], "")]),
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_subsets_are_one_line(case, tmp_path):
    check_case(case, tmp_path)


def test_adjudicated_subset_and_overall_means_through_the_command(tmp_path, fake_llm):
    """--adjudicate on a subset run: the jurors credit the date pair of Spider2-ST test's task
    st1 (its failing t1), so Spider2-ST's adjudicated MeanTestPass is (1 + 1 + 0)/3 = 2/3 and
    the overall test mean (2/3 + 4/5)/2; --verdicts reads the same back."""
    from tests.support.jurytest import write_panel
    from tests.test_suites import FOUR, equivalent_when_dates

    st = [
        {
            **ST[0],
            "tests": [
                {"name": "t0", "passed": True},
                {"name": "t1", "passed": False, "expected": "2024-01-05", "actual": "05-JAN-24"},
            ],
        },
        *ST[1:],
    ]
    write(tmp_path, [{**r, "model": "gpt-x"} for r in st + MT])  # a model of a known family (openai)
    for name, _ in FOUR:
        fake_llm.script(name, equivalent_when_dates)
    panel = write_panel(tmp_path, fake_llm.base_url, FOUR)
    res = run_jury_inprocess(
        ["suites", "run.jsonl", "--adjudicate", "--panel", str(panel), "-f", "json", "-o", "m.json"], tmp_path
    )
    assert res.returncode == 0, res.stderr
    rows = by_row(json.loads((tmp_path / "m.json").read_text())["subsets"], "gpt-x")
    st_mean = rows[("Spider2-ST", "test", "MeanTestPass@1")]
    assert st_mean["strict_value"] == pytest.approx(1 / 2) and st_mean["adjudicated_value"] == pytest.approx(2 / 3)
    overall = rows[("overall", "test", "MeanTestPass@1")]
    assert overall["strict_value"] == pytest.approx((1 / 2 + 4 / 5) / 2)
    assert overall["adjudicated_value"] == pytest.approx((2 / 3 + 4 / 5) / 2)
    assert rows[("overall", "test", "SuitePass@1")]["adjudicated_value"] == pytest.approx(2 / 3)
    [path] = sorted((tmp_path / "verdicts").glob("adjudication-*.json"))
    again = run_jury_inprocess(["suites", "run.jsonl", "--verdicts", str(path), "-f", "json"], tmp_path)
    assert again.returncode == 0, again.stderr
    rows2 = by_row(json.loads(again.stdout)["subsets"], "gpt-x")
    assert rows2[("overall", "test", "MeanTestPass@1")]["adjudicated_value"] == pytest.approx((2 / 3 + 4 / 5) / 2)
