"""No silent denominators: every output shows each model's coverage of the gold (answered /
gold questions, and routed), a one-line warning names the models below full coverage, and
`--missing fail|exclude` (flag, jury.toml, API) chooses BIRD's rule (an unanswered question is
wrong) or the 36-model benchmark's (it is left out). The expected accuracies come from BIRD's
rule computed here with sqlite3 (set(predicted rows) == set(gold rows)), not from jury."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import jury
from tests.support.badinput import run_jury
from tests.support.helpers import EXAMPLE

MODEL = "ta-sql-gpt4"
KEEP = 100  # of the gold's 129 questions: the run answers the first 100 in gold order


def _rows(db: Path, sql: str):
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return set(conn.execute(sql).fetchall())
    except sqlite3.Error:
        return None  # an error scores 0 under BIRD's rule
    finally:
        conn.close()


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    """A copy of the example whose run holds one model answering 100 of the 129 questions (the
    model that ranked 5th), beside gsr, complete; and BIRD's matches of its 100 answers."""
    tmp = tmp_path_factory.mktemp("coverage")
    for name in ("dev.json", "jury.toml"):
        shutil.copy(EXAMPLE / name, tmp / name)
    (tmp / "databases").symlink_to(EXAMPLE / "databases")
    gold = json.loads((EXAMPLE / "dev.json").read_text())
    kept = {g["question_id"] for g in gold[:KEEP]}
    lines = [json.loads(line) for line in (EXAMPLE / "run.jsonl").read_text().splitlines()]
    mine = [r for r in lines if r["model"] == MODEL and r["question_id"] in kept]
    other = [r for r in lines if r["model"] == "gsr"]
    (tmp / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*mine, *other]))
    db = EXAMPLE / "databases" / "superhero" / "superhero.sqlite"
    sql_of = {g["question_id"]: g["SQL"] for g in gold}
    matches = 0
    for r in mine:
        pred = _rows(db, r["sql"])
        matches += pred is not None and pred == _rows(db, sql_of[r["question_id"]])
    return tmp, matches


def test_a_short_run_is_shown_and_warned_and_left_out_by_default(short_run):
    tmp, k = short_run
    res = run_jury(["score", "run.jsonl", "--comparator", "bird", "-f", "json"], tmp)
    assert res.returncode == 0, res.stderr
    (warning,) = res.stderr.splitlines()  # one line
    assert warning.startswith(
        f"warning: 1 of 2 models answers fewer than the gold's 129 questions: {MODEL} {KEEP}/129 (29 absent);"
    )
    assert "; 29 left out of the denominators (29 absent); none counted wrong (--missing exclude, the default;" in warning
    doc = json.loads(res.stdout)
    assert doc["settings"]["missing"] == "exclude"
    ta = next(m for m in doc["models"] if m["model"] == MODEL)
    assert (ta["gold_questions"], ta["answered"], ta["routed"]) == (129, KEEP, KEEP)
    assert (ta["strict"]["k"], ta["strict"]["n"]) == (k, KEEP) and ta["strict"]["value"] == pytest.approx(k / KEEP)
    gsr = next(m for m in doc["models"] if m["model"] == "gsr")
    assert (gsr["gold_questions"], gsr["answered"]) == (129, 129)
    table = run_jury(["score", "run.jsonl", "--comparator", "bird"], tmp).stdout
    assert "answered/gold" in table and f"{KEEP}/129" in table and "129/129" in table
    assert (
        "unanswered questions: 29 left out of the denominators (29 absent); none counted wrong (--missing exclude)"
        in " ".join(table.split())
    )
    csv = run_jury(["score", "run.jsonl", "--comparator", "bird", "-f", "csv"], tmp).stdout.splitlines()
    head = csv[0].split(",")
    row = dict(zip(head, next(line for line in csv if line.startswith(MODEL)).split(",")))
    assert (row["gold_questions"], row["answered"], row["routed"], row["missing_rule"]) == (
        "129",
        str(KEEP),
        str(KEEP),
        "exclude",
    )


def test_missing_fail_counts_the_unanswered_questions_wrong_as_bird_does(short_run):
    tmp, k = short_run
    res = run_jury(["score", "run.jsonl", "--comparator", "bird", "--missing", "fail", "-f", "json"], tmp)
    assert res.returncode == 0, res.stderr
    assert "; 29 counted wrong (29 absent); none left out (--missing fail, BIRD's rule)" in res.stderr
    doc = json.loads(res.stdout)
    ta = next(m for m in doc["models"] if m["model"] == MODEL)
    assert doc["settings"]["missing"] == "fail" and ta["missing_rule"] == "fail"
    assert (ta["strict"]["k"], ta["strict"]["n"], ta["outcomes"]["missing"]) == (k, 129, 129 - KEEP)
    assert ta["strict"]["value"] == pytest.approx(k / 129) and (ta["answered"], ta["questions"]) == (KEEP, 129)
    # the same from jury.toml, and from the library
    toml = tmp / "jury.toml"
    original = toml.read_text()
    try:
        toml.write_text(original + 'missing = "fail"\n')
        again = json.loads(run_jury(["score", "run.jsonl", "--comparator", "bird", "-f", "json"], tmp).stdout)
        assert [m["strict"] for m in again["models"]] == [m["strict"] for m in doc["models"]]
        report = run_jury(["report", "run.jsonl", "--comparator", "bird", "-f", "json"], tmp)
        row = next(m for m in json.loads(report.stdout)["models"] if m["model"] == MODEL)
        assert (row["strict"]["n"], row["answered"], row["gold_questions"]) == (129, KEEP, 129)
        assert "counted wrong" in report.stderr
    finally:
        toml.write_text(original)
    lib = jury.score(tmp / "run.jsonl", gold=tmp / "dev.json", db_root=tmp / "databases", comparator="bird", missing="fail",
                     store=tmp / ".jury" / "store.db")  # fmt: skip
    assert next(s for s in lib.scores if s.model == MODEL).strict["n"] == 129
    with pytest.raises(jury.InputError, match="missing=.exclude., but the Score was made with missing='fail'"):
        jury.report(lib, missing="exclude")


def test_the_report_and_its_site_show_the_coverage(short_run):
    tmp, _k = short_run
    res = run_jury(["report", "run.jsonl", "-f", "md"], tmp)
    assert res.returncode == 0, res.stderr
    assert res.stderr.startswith(f"warning: 1 of 2 models answers fewer than the gold's 129 questions: {MODEL} {KEEP}/129")
    assert "| answered/gold |" in res.stdout and f"| {KEEP}/129 |" in res.stdout
    assert (
        "coverage: see answered/gold; unanswered questions: 29 left out of the denominators (29 absent); "
        "none counted wrong (--missing exclude)"
    ) in res.stdout
    site = run_jury(["report", "run.jsonl", "-f", "html", "-o", "site"], tmp)
    assert site.returncode == 0, site.stderr
    front = " ".join((tmp / "site" / "index.html").read_text(encoding="utf-8").split())
    assert f"{MODEL} answered" in front and "29 left out of the denominators (29 absent)" in front


NOT_STRING = (3, 10, 20, 30, 40)  # gold positions whose BIRD JSON entry is `0` (as in BIRD's ChatGPT predict_dev.json)
EMPTY = 50  # the gold position whose entry has no SQL before BIRD's separator


@pytest.fixture(scope="module")
def file_kinds(short_run):
    """The short run's 100 answers of ta-sql-gpt4 in every file kind, one model per file: run
    JSONL (`jsonl-run`) and one SQL per line (`txt-run.txt`, 100 lines: positions 100-128 have
    none); and with five answers replaced by the non-string `0` and one by empty SQL, as BIRD's
    JSON (`bird-json.json`, no key for the last 29) and as run JSONL (`jsonl-nulls`: `"sql":
    null`, `"sql": ""`, no line). With the matches of the 100 and of the 94 left, counted with
    sqlite3 under BIRD's rule (set(predicted rows) == set(gold rows)), not by jury."""
    tmp, _k = short_run
    gold = json.loads((EXAMPLE / "dev.json").read_text())
    lines = [json.loads(line) for line in (EXAMPLE / "run.jsonl").read_text().splitlines()]
    by_q = {r["question_id"]: r for r in lines if r["model"] == MODEL}
    mine = [by_q[g["question_id"]] for g in gold[:KEEP]]
    db = EXAMPLE / "databases" / "superhero" / "superhero.sqlite"
    match = [_rows(db, r["sql"]) is not None and _rows(db, r["sql"]) == _rows(db, g["SQL"]) for r, g in zip(mine, gold)]
    (tmp / "jsonl-run.jsonl").write_text("".join(json.dumps(r | {"model": "jsonl-run"}) + "\n" for r in mine))
    (tmp / "txt-run.txt").write_text("".join(r["sql"] + "\n" for r in mine))
    entries: dict[str, object] = {str(i): r["sql"] + "\t----- bird -----\tsuperhero" for i, r in enumerate(mine)}
    nulls = [r | {"model": "jsonl-nulls"} for r in mine]
    for i in NOT_STRING:
        entries[str(i)], nulls[i]["sql"] = 0, None
    entries[str(EMPTY)], nulls[EMPTY]["sql"] = "\t----- bird -----\tsuperhero", ""
    (tmp / "bird-json.json").write_text(json.dumps(entries))
    (tmp / "jsonl-nulls.jsonl").write_text("".join(json.dumps(r) + "\n" for r in nulls))
    left = sum(m for i, m in enumerate(match) if i not in (*NOT_STRING, EMPTY))
    return tmp, sum(match), left


@pytest.mark.parametrize("rule", ["exclude", "fail"])
def test_one_missing_rule_for_every_file_kind(file_kinds, rule):
    """The same answers score the same k/n from run JSONL, one SQL per line and BIRD's JSON, and
    the rule treats an absent, a non-string and an empty answer alike (jury.compare.coverage)."""
    tmp, k100, k94 = file_kinds
    files = ["jsonl-run.jsonl", "txt-run.txt", "bird-json.json", "jsonl-nulls.jsonl"]
    res = run_jury(["score", *files, "--comparator", "bird", "--missing", rule, "-f", "json"], tmp)
    assert res.returncode == 0, res.stderr
    models = {m["model"]: m for m in json.loads(res.stdout)["models"]}
    fail = rule == "fail"
    expected = (("jsonl-run", k100, 100), ("txt-run", k100, 100), ("bird-json", k94, 94), ("jsonl-nulls", k94, 94))
    got = {name: (models[name]["strict"]["k"], models[name]["strict"]["n"], models[name]["answered"]) for name, _, _ in expected}
    assert got == {name: (k, 129 if fail else answered, answered) for name, k, answered in expected}
    for name, _k, answered in expected:
        m = models[name]
        assert m["missing_rule"] == rule and m["outcomes"]["missing"] == (129 - answered if fail else 0), name
        causes = {"absent": 29, "not_string": 0 if answered == 100 else 5, "empty": 0 if answered == 100 else 1}
        none = {"absent": 0, "not_string": 0, "empty": 0}
        assert (m["counted_wrong"], m["left_out"]) == ((causes, none) if fail else (none, causes)), name
    (warning,) = res.stderr.splitlines()
    assert warning.startswith("warning: 4 of 4 models answer fewer than the gold's 129 questions: ")
    for who in ("jsonl-run 100/129 (29 absent)", "txt-run 100/129 (29 absent)"):
        assert who in warning
    for who in ("bird-json 94/129", "jsonl-nulls 94/129"):
        assert f"{who} (29 absent, 5 not a string, 1 empty)" in warning
    done = (
        "128 counted wrong (116 absent, 10 not a string, 2 empty); none left out"
        if fail
        else ("128 left out of the denominators (116 absent, 10 not a string, 2 empty); none counted wrong")
    )
    assert f"; {done} (--missing {rule}" in warning
    table = " ".join(run_jury(["score", *files, "--comparator", "bird", "--missing", rule], tmp).stdout.split())
    assert f"coverage: see answered/gold; unanswered questions: {done} (--missing {rule})" in table


def test_importing_and_reporting_bird_json_keep_the_causes(file_kinds):
    """`jury import bird-predictions` writes the run JSONL whose score is the JSON file's: no line
    for an absent entry, `"sql": null` for a non-string one, `""` for an empty one; `jury report`
    (Markdown, JSON) says how many it left out, by cause."""
    tmp, _k100, k94 = file_kinds
    res = run_jury(["import", "bird-predictions", "bird-json.json", "-o", "imported.jsonl"], tmp)
    assert res.returncode == 0, res.stderr
    assert (
        "bird-json: 94 answers from 100 entries; 35 missing (29 absent, 5 not a string, 1 empty), 5 odd"
        in res.stdout + res.stderr
    )
    imported = [json.loads(line) for line in (tmp / "imported.jsonl").read_text().splitlines()]
    assert (
        len(imported) == 100
        and sum(r.get("sql") is None for r in imported) == 5
        and sum(r.get("sql") == "" for r in imported) == 1
    )
    doc = json.loads(run_jury(["score", "imported.jsonl", "--comparator", "bird", "-f", "json"], tmp).stdout)
    (m,) = doc["models"]
    assert (m["strict"]["k"], m["strict"]["n"]) == (k94, 94)
    report = run_jury(["report", "bird-json.json", "-f", "md"], tmp)
    assert report.returncode == 0, report.stderr
    assert (
        "coverage: see answered/gold; unanswered questions: 35 left out of the denominators "
        "(29 absent, 5 not a string, 1 empty); none counted wrong (--missing exclude)"
    ) in report.stdout
    row = next(m for m in json.loads(run_jury(["report", "bird-json.json", "-f", "json"], tmp).stdout)["models"])
    assert (row["strict"]["n"], row["left_out"]) == (94, {"absent": 29, "not_string": 5, "empty": 1})


def test_complete_runs_score_alike_under_both_rules_and_say_so(example_store):
    """The bundled example answers every question: the rule changes no number, and every
    output says every model answered all 129."""
    out = {}
    for rule in ("exclude", "fail"):
        res = run_jury(["score", "run.jsonl", "--missing", rule, "-f", "json", "--store", example_store], EXAMPLE)
        assert res.returncode == 0 and res.stderr == "", res.stderr
        out[rule] = json.loads(res.stdout)["models"]
    assert [m["strict"] for m in out["exclude"]] == [m["strict"] for m in out["fail"]]
    assert all((m["answered"], m["gold_questions"]) == (129, 129) for m in out["fail"])
    table = run_jury(["score", "run.jsonl", "--store", example_store], EXAMPLE).stdout
    assert "coverage: every model answered all 129 gold questions" in table and "answered/gold" not in table
    report = run_jury(["report", "run.jsonl", "--store", example_store], EXAMPLE).stdout
    assert "coverage: every model answered all 129 gold questions" in report


@pytest.mark.parametrize(
    ("args", "toml", "message"),
    [
        (["--missing", "maybe"], "", "Error: unknown missing rule 'maybe'; choose one of: exclude, fail"),
        ([], 'missing = "never"\n', "jury.toml: missing must be one of exclude, fail, got 'never'"),
        ([], "missing = 1\n", "jury.toml: missing must be one of exclude, fail, got 1"),
    ],
)
def test_a_bad_missing_rule_is_one_line(tmp_path, args, toml, message):
    for name in ("dev.json", "run.jsonl"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    (tmp_path / "jury.toml").write_text(f'gold = "dev.json"\ndb_root = "{EXAMPLE / "databases"}"\n{toml}')
    res = run_jury(["score", "run.jsonl", *args], tmp_path)
    assert res.returncode == 1 and len(res.stderr.splitlines()) == 1 and message in res.stderr, res.stderr


def test_a_first_non_string_entry_and_a_model_without_any_answer(file_kinds):
    """BIRD JSON whose first entry is `0` is still a prediction file (told from its start); a
    model without one usable answer has no row under --missing exclude, and the warning says so."""
    tmp, _k100, _k94 = file_kinds
    entries = json.loads((tmp / "bird-json.json").read_text())
    (tmp / "first-zero.json").write_text(json.dumps({"0": 0} | {k: v for k, v in entries.items() if k != "0"}))
    nothing = [{"model": "nothing", "question_id": q, "sql": None} for q in (717, 718)]
    (tmp / "nothing.jsonl").write_text("".join(json.dumps(r) + "\n" for r in nothing))
    res = run_jury(["score", "first-zero.json", "nothing.jsonl", "-f", "json"], tmp)
    assert res.returncode == 0, res.stderr
    (m,) = json.loads(res.stdout)["models"]
    assert (m["model"], m["answered"], m["strict"]["n"], m["left_out"]) == (
        "first-zero",
        93,
        93,
        {"absent": 29, "not_string": 6, "empty": 1},
    )
    assert "nothing 0/129 (127 absent, 2 not a string)" in res.stderr
    assert res.stderr.rstrip().endswith("; nothing has no usable answer: no row to score (--missing fail scores 0)")
    fail = json.loads(run_jury(["score", "first-zero.json", "nothing.jsonl", "--missing", "fail", "-f", "json"], tmp).stdout)
    assert {m["model"]: (m["strict"]["k"], m["strict"]["n"]) for m in fail["models"]}["nothing"] == (0, 129)
