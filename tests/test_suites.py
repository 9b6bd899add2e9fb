"""Test-suite runs (PLSQLBench): metrics against hand-computed examples, format-equivalence
ballots with loopback jurors, and bad input."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.inputs.records import RunRecord
from jury.results.suites import format_candidates, suite_metrics
from jury.verdicts.lock import load_locked
from tests.support.badinput import Case, check_case
from tests.support.fakellm import ballot_reply
from tests.support.jurytest import user_text, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]


def rec(qid, passed, *, model="m", episode=None, turn=None, reference_error=None, **test_fields):
    tests = [{"name": f"t{i}", "passed": p, **test_fields.get(f"t{i}", {})} for i, p in enumerate(passed)]
    obj = {"model": model, "question_id": qid, "tests": tests}
    for key, value in (("episode", episode), ("turn", turn), ("reference_error", reference_error)):
        if value is not None:
            obj[key] = value
    return obj


def metrics(objs, credited=frozenset()):
    return {r.model: r for r in suite_metrics([RunRecord.model_validate(o) for o in objs], credited)}


# ------------------------------------------------------------------ metrics


def test_plsqlbench_worked_example():
    """Three turns, six tests, two turns fully solved, 5 of 6 tests passed."""
    row = metrics(
        [
            rec("a", [True, True], episode="e", turn=1),
            rec("b", [True, True], episode="e", turn=2),
            rec("c", [True, False], episode="e", turn=3),
        ]
    )["m"]
    e = row.episodes
    assert e.episode_pass.value == 0
    assert e.turn_suite_pass.value == pytest.approx(2 / 3)
    assert e.mean_test_pass.value == pytest.approx(5 / 6)
    assert row.single is None and row.excluded == []


def test_single_turn_tasks_weigh_equally():
    # task 1: 1/4 tests; task 2: 2/2 (a suite pass); task 3: 0/1 (errored)
    row = metrics(
        [
            rec(1, [True, False, False, False]),
            rec(2, [True, True]),
            rec(3, [False], t0={"error": "ORA-06550: PLS-00201"}),
        ]
    )["m"]
    assert row.single.mean_test_pass.value == pytest.approx((0.25 + 1 + 0) / 3)  # not 3/7 pooled
    assert row.single.suite_pass.value == pytest.approx(1 / 3)
    assert row.single.suite_pass.units == 3
    low, high = row.single.suite_pass.low, row.single.suite_pass.high
    assert low < 1 / 3 < high


def test_episodes_weigh_equally_and_reference_failures_are_excluded_and_listed():
    objs = [
        # e1: 2 turns, both solved (1 + 3 tests)
        rec("e1.1", [True], episode="e1", turn=1),
        rec("e1.2", [True, True, True], episode="e1", turn=2),
        # e2: 1 of 2 turns solved; tests 1/1 + 0/3 = 1/4
        rec("e2.1", [True], episode="e2", turn=1),
        rec("e2.2", [False, False, False], episode="e2", turn=2),
        # e3: a reference failure in turn 2: the whole episode is out
        rec("e3.1", [False], episode="e3", turn=1),
        rec("e3.2", [False], episode="e3", turn=2, reference_error=True),
        rec(9, [True], reference_error=True),
    ]
    row = metrics(objs)["m"]
    e = row.episodes
    assert e.episode_pass.units == 2 and e.episode_pass.value == 0.5
    assert e.turn_suite_pass.value == pytest.approx((1 + 0.5) / 2)
    assert e.mean_test_pass.value == pytest.approx((1 + 0.25) / 2)  # not 5/8 pooled over episodes
    assert row.single.suite_pass.units == 0 and row.single.suite_pass.value is None
    assert {(x["question_id"], x["episode"]) for x in row.excluded} == {("e3.2", "e3"), (9, None)}


def test_credited_tests_count_as_passed_in_the_adjudicated_metrics():
    objs = [rec("c", [True, False], episode="e", turn=3), rec("b", [True, True], episode="e", turn=2)]
    assert metrics(objs)["m"].episodes.episode_pass.value == 0
    adj = metrics(objs, {("m", "c", "e", 3, "t1")})["m"].episodes  # a turn's test: keyed by episode and turn too
    assert adj.episode_pass.value == 1 and adj.mean_test_pass.value == 1


def test_format_candidates_need_both_outputs_no_error_and_a_difference():
    objs = [
        rec(1, [False], t0={"expected": "1.50", "actual": "1.5"}),  # candidate
        rec(2, [False], t0={"expected": "1", "actual": "1", "error": "ORA-01403"}),  # errored
        rec(3, [False], t0={"expected": "x"}),  # no actual
        rec(4, [False], t0={"expected": "x", "actual": "x"}),  # identical text: failed for another reason
        rec(5, [False], t0={"expected": "a", "actual": "b"}, reference_error=True),  # reference failure
        rec(6, [True], t0={"expected": "a", "actual": "a"}),  # passed
    ]
    got = format_candidates([RunRecord.model_validate(o) for o in objs])
    assert [(r.question_id, i) for r, i in got] == [(1, 0)]


# ------------------------------------------------------------------ the command


def write_run(tmp, objs, name="run.jsonl"):
    (tmp / name).write_text("".join(json.dumps(o) + "\n" for o in objs))
    return tmp / name


WORKED = [
    rec("a", [True, True], episode="e", turn=1, model="gpt-x"),
    rec("b", [True, True], episode="e", turn=2, model="gpt-x"),
    rec("c", [True, False], episode="e", turn=3, model="gpt-x", t1={"expected": "2024-01-05", "actual": "05-JAN-24"}),
    rec(7, [True, False], model="gpt-x", t1={"expected": "3", "actual": "4"}),
    rec(8, [True], model="gpt-x", reference_error=True),
]


def test_command_prints_the_worked_example_as_csv(tmp_path, monkeypatch):
    """The worked example by hand: episode e passes turns a and b of 3 (TurnSuitePass 2/3) but
    not every turn (EpisodePass 0); its tests pass 2 + 2 + 1 of 2 + 2 + 2 (MeanTestPass 5/6);
    single-turn 7 passes 1 test of 2 (0.5) and 8 is a reference failure, left out."""
    from scipy.stats import norm

    monkeypatch.chdir(tmp_path)
    write_run(tmp_path, WORKED)
    res = runner.invoke(app, ["suites", "run.jsonl", "-f", "csv"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    rows = {(r["tasks"], r["metric"]): r for r in csv.DictReader(io.StringIO(res.output))}
    assert {r["model"] for r in rows.values()} == {"gpt-x"}
    assert float(rows[("episodes", "EpisodePass@1")]["strict_value"]) == 0
    assert float(rows[("episodes", "TurnSuitePass@1")]["strict_value"]) == pytest.approx(2 / 3)
    assert float(rows[("episodes", "MeanTestPass@1")]["strict_value"]) == pytest.approx(5 / 6)
    assert float(rows[("single-turn", "MeanTestPass@1")]["strict_value"]) == 0.5
    # Wilson's interval for 0 passes of 1 episode: [0, z²/(1 + z²)]
    z2 = norm.ppf(0.975) ** 2
    episode = rows[("episodes", "EpisodePass@1")]
    assert episode["interval"] == "wilson" and float(episode["strict_low"]) == 0
    assert float(episode["strict_high"]) == pytest.approx(z2 / (1 + z2))
    res = runner.invoke(app, ["suites", "run.jsonl", "-f", "json"], catch_exceptions=False)
    doc = json.loads(res.output)
    assert doc["reference_failures"] == [{"model": "gpt-x", "question_id": 8, "episode": None, "turn": None}]
    assert {(r["tasks"], r["metric"]): r["strict_value"] for r in doc["metrics"]} == {
        k: float(r["strict_value"]) for k, r in rows.items()
    }


def equivalent_when_dates(request):
    """A juror that calls the date pair equivalent and anything else different."""
    text = user_text(request)
    outputs = set(re.findall(r"<output_\d>\n(.*?)\n</output_\d>", text, re.S))
    return ballot_reply("equivalent" if outputs == {"2024-01-05", "05-JAN-24"} else "different")


def test_adjudicate_credits_format_equivalent_tests_blind(tmp_path, monkeypatch, fake_llm):
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path, WORKED)
    for name, _ in FOUR:
        fake_llm.script(name, equivalent_when_dates)
    panel = write_panel(tmp_path, fake_llm.base_url, FOUR)
    res = runner.invoke(
        app, ["suites", "run.jsonl", "--adjudicate", "--panel", str(panel), "-f", "json", "-o", "m.json"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    assert len(fake_llm.requests) == 6  # two candidates x three non-openai jurors
    for req in fake_llm.requests:
        text = user_text(req)
        assert "gpt-x" not in text and "expected" not in text.split("<task>")[1].lower().split("two outputs")[0]
    [path] = sorted((tmp_path / "verdicts").glob("adjudication-*.json"))
    doc = load_locked(path)  # lock, schema and rules re-checked
    assert doc.settings["suite"] is True and doc.panel.ballot_style == "suite"
    verdicts = {(r.question_id, r.test): r.verdict for r in doc.records}
    assert verdicts == {("c", "t1"): "format_equivalence", (7, "t1"): "genuine_error"}
    assert {v.order for r in doc.records for v in r.votes} <= {"gold_first", "candidate_first"}
    by = {(r["tasks"], r["metric"]): r for r in json.loads((tmp_path / "m.json").read_text())["metrics"]}
    ep = by[("episodes", "EpisodePass@1")]
    assert ep["strict_value"] == 0 and ep["adjudicated_value"] == 1
    single = by[("single-turn", "SuitePass@1")]
    assert single["strict_value"] == 0 and single["adjudicated_value"] == 0
    # a rerun asks nothing; --verdicts gives the same adjudicated numbers from the file
    again = runner.invoke(app, ["suites", "run.jsonl", "--verdicts", str(path), "-f", "json"], catch_exceptions=False)
    assert again.exit_code == 0 and len(fake_llm.requests) == 6
    by2 = {(r["tasks"], r["metric"]): r for r in json.loads(again.output)["metrics"]}
    assert by2[("episodes", "EpisodePass@1")]["adjudicated_value"] == 1
    # a verify of the file passes (the suite ballot style is re-checked)
    assert runner.invoke(app, ["verify", str(path)], catch_exceptions=False).exit_code == 0


# ------------------------------------------------------------------ bad input


def _run(objs):
    return lambda tmp: write_run(tmp, objs)


BAD = [
    Case(
        "tests-and-sql",
        ["suites", "run.jsonl"],
        "run.jsonl:1: record: Value error, give either `tests`",
        _run([{"model": "m", "question_id": 1, "sql": "SELECT 1", "tests": [{"name": "a", "passed": True}]}]),
    ),
    Case(
        "passed-not-bool",
        ["suites", "run.jsonl"],
        "run.jsonl:1: tests.0.passed: Input should be a valid boolean",
        _run([{"model": "m", "question_id": 1, "tests": [{"name": "a", "passed": 1}]}]),
    ),
    Case(
        "passed-with-error",
        ["suites", "run.jsonl"],
        "passed true and an error",
        _run([{"model": "m", "question_id": 1, "tests": [{"name": "a", "passed": True, "error": "x"}]}]),
    ),
    Case("empty-tests", ["suites", "run.jsonl"], "`tests` is empty", _run([{"model": "m", "question_id": 1, "tests": []}])),
    Case(
        "turn-without-episode",
        ["suites", "run.jsonl"],
        "`turn` needs `episode`",
        _run([{"model": "m", "question_id": 1, "turn": 1, "tests": [{"name": "a", "passed": True}]}]),
    ),
    Case(
        "reference-error-not-bool",
        ["suites", "run.jsonl"],
        "run.jsonl:1: reference_error",
        _run([{"model": "m", "question_id": 1, "reference_error": "yes", "tests": [{"name": "a", "passed": True}]}]),
    ),
    Case(
        "sql-run", ["suites", "run.jsonl"], "no test-suite records", _run([{"model": "m", "question_id": 1, "sql": "SELECT 1"}])
    ),
    Case(
        "mixed-run",
        ["suites", "run.jsonl"],
        "question 2 has no `tests`",
        _run([rec(1, [True]), {"model": "m", "question_id": 2, "sql": "SELECT 1"}]),
    ),
    Case(
        "duplicate-turn",
        ["suites", "run.jsonl"],
        "episode 'e': turn 1 is given twice",
        _run([rec(1, [True], episode="e", turn=1), rec(2, [True], episode="e", turn=1)]),
    ),
    Case(
        "duplicate-test",
        ["suites", "run.jsonl"],
        "test 'a' is listed twice",
        _run([{"model": "m", "question_id": 1, "tests": [{"name": "a", "passed": True}, {"name": "a", "passed": False}]}]),
    ),
    Case(
        # model b recorded turn 1 of episode e (passed) and nothing for turn 2: scored on its one
        # turn it got EpisodePass 1.000, TurnSuitePass 1.000 though it never answered turn 2
        "episode-missing-turn",
        ["suites", "run.jsonl"],
        "model 'b' episode 'e' has no record of turn 2 (model 'a' records it)",
        _run(
            [
                rec("e.1", [True], model="a", episode="e", turn=1),
                rec("e.2", [False], model="a", episode="e", turn=2),
                rec("e.1", [True], model="b", episode="e", turn=1),
            ]
        ),
    ),
    Case(
        "plan-without-adjudicate",
        ["suites", "run.jsonl", "--plan"],
        "plan and verdicts_out go with adjudicate",
        _run([rec(1, [True])]),
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_input_is_one_line(case, tmp_path):
    check_case(case, tmp_path)


def test_an_episode_quoted_or_not_is_one_episode():
    """Episode ids are normalised as question ids are: 1 and "1" are one episode, so its two
    turns make one episode, not two half-episodes."""
    row = metrics([rec("a", [True], episode=1, turn=1), rec("b", [False], episode="1", turn=2)])["m"]
    assert row.episodes.episode_pass.units == 1 and row.episodes.turn_suite_pass.value == pytest.approx(0.5)
    assert RunRecord.model_validate(rec("a", [True], episode=" 7 ", turn=1)).episode == 7
    assert RunRecord.model_validate(rec("a", [True], episode="e1", turn=1)).episode == "e1"
    with pytest.raises(ValueError, match="episode must be an integer or a string, not a boolean"):
        RunRecord.model_validate(rec("a", [True], episode=True, turn=1))


# ------------------------------------------------------------------ intervals: bootstrap for means of fractions, Wilson for shares


def _exact_bootstrap_quantiles(values, qs):
    """Quantiles of the exact bootstrap distribution of the mean: every multiset of len(values)
    draws with its multinomial probability. Independent of scipy.stats.bootstrap."""
    from itertools import combinations
    from math import factorial, prod

    import numpy as np

    n = len(values)
    means, weights = [], []
    for bars in combinations(range(2 * n - 1), n - 1):  # stars and bars: the counts of each value
        edges = (-1, *bars, 2 * n - 1)
        counts = [edges[i + 1] - edges[i] - 1 for i in range(n)]
        means.append(sum(c * v for c, v in zip(counts, values)) / n)
        weights.append(factorial(n) / prod(factorial(c) for c in counts) / n**n)
    order = np.argsort(means)
    cdf = np.cumsum(np.asarray(weights)[order])
    return [float(np.asarray(means)[order][np.searchsorted(cdf, q)]) for q in qs]


def test_means_of_fractions_get_a_bootstrap_interval_over_tasks_and_shares_keep_wilson():
    from jury.stats.core import wilson

    passed = [
        [True, False, False, False],
        [True, True],
        [False],
        [True, True, False],
        [True] * 5,
        [False, True],
        [True, False, False],
    ]
    row = metrics([rec(i, p) for i, p in enumerate(passed)])["m"]
    fractions = [sum(p) / len(p) for p in passed]
    mean = row.single.mean_test_pass
    assert mean.interval == "bootstrap" and mean.units == 7 and mean.value == pytest.approx(sum(fractions) / 7)
    q = _exact_bootstrap_quantiles(fractions, [0.01, 0.04, 0.96, 0.99])
    assert q[0] - 1e-12 <= mean.low <= q[1] + 1e-12 and q[2] - 1e-12 <= mean.high <= q[3] + 1e-12
    share = row.single.suite_pass  # a true binomial proportion: Wilson, as before
    assert share.interval == "wilson"
    ci = wilson(2, 7)
    assert (share.value, share.low, share.high) == (ci.value, ci.low, ci.high)


def test_turn_suite_pass_of_one_episode_has_no_interval():
    """A mean of fractions over one unit is not a binomial proportion (it used to show Wilson's
    [0.21, 1.0] for TurnSuitePass 0.667): with one episode there is nothing to resample."""
    e = metrics(
        [rec("a", [True], episode="e", turn=1), rec("b", [True], episode="e", turn=2), rec("c", [False], episode="e", turn=3)]
    )["m"].episodes
    assert e.turn_suite_pass.value == pytest.approx(2 / 3) and e.turn_suite_pass.interval == "bootstrap"
    assert (e.turn_suite_pass.low, e.turn_suite_pass.high) == (None, None)
    assert e.episode_pass.interval == "wilson" and e.episode_pass.high is not None


def test_every_output_names_the_interval_of_each_metric(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    objs = [rec(i, p, model="gpt-x") for i, p in enumerate([[True, False], [True], [False, False, True], [True, True]])]
    write_run(tmp_path, objs + [rec("a", [True], episode="e", turn=1, model="gpt-x")])
    res = runner.invoke(app, ["suites", "run.jsonl", "-f", "json"], catch_exceptions=False)
    by = {(r["tasks"], r["metric"]): r for r in json.loads(res.output)["metrics"]}
    assert by[("single-turn", "MeanTestPass@1")]["interval"] == "bootstrap"
    assert by[("single-turn", "SuitePass@1")]["interval"] == "wilson"
    assert by[("episodes", "TurnSuitePass@1")]["interval"] == "bootstrap"
    assert by[("episodes", "EpisodePass@1")]["interval"] == "wilson"
    csv = runner.invoke(app, ["suites", "run.jsonl", "-f", "csv"], catch_exceptions=False).output
    assert "interval" in csv.splitlines()[0].split(",")
    md = runner.invoke(app, ["suites", "run.jsonl", "-f", "md"], catch_exceptions=False).output
    line = next(ln for ln in md.splitlines() if "single-turn | MeanTestPass@1" in ln)
    assert "bootstrap" in line
    assert "TurnSuitePass@1 | bootstrap | 1 | 1.000 (no CI: 1 unit)" in " ".join(md.split())


def test_the_bundled_suite_example_runs(monkeypatch):
    """examples/plsql-suite (hand-written illustrative records) is what the README tells a newcomer to try."""
    from tests.support.helpers import REPO

    monkeypatch.chdir(REPO / "examples" / "plsql-suite")
    res = runner.invoke(app, ["suites", "run.jsonl", "--taxonomy", "plsqlbench", "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert {row["model"] for row in data["metrics"]} == {"model-a", "model-b"} and data["error_categories"]


def test_a_model_without_an_episode_is_left_out_but_one_with_part_of_it_is_refused():
    """Every turn of an episode a model answers at all must be recorded: its missing turn would
    otherwise vanish from its EpisodePass and TurnSuitePass. An episode the model has no record
    of is left out of its denominators, as a single-turn task it has no record of."""
    from jury.errors import InputError
    from jury.results.suites import suite_records

    a = [rec("e.1", [True], model="a", episode="e", turn=1), rec("e.2", [True, False], model="a", episode="e", turn=2)]
    b_whole = [rec("q", [True], model="b")]  # no record of episode e: left out
    rows = metrics(a + b_whole)
    assert rows["b"].episodes is None and rows["b"].single.suite_pass.value == 1
    # a by hand: turn 1 solved, turn 2 not; 2 of 3 tests
    e = rows["a"].episodes
    assert (e.episode_pass.value, e.turn_suite_pass.value, e.mean_test_pass.value) == (0, 0.5, pytest.approx(2 / 3))
    b_part = [rec("e.1", [True], model="b", episode="e", turn=1)]
    records = [RunRecord.model_validate(o) for o in a + b_part]
    with pytest.raises(InputError, match=r"model 'b' episode 'e' has no record of turn 2 \(model 'a' records it\)"):
        suite_records(records, "run.jsonl")
    suite_records([RunRecord.model_validate(o) for o in a + b_whole], "run.jsonl")  # accepted
