"""`jury report --gold-defects`: the gold queries an audit flagged (by its panel or by the
deterministic checks it ran), as a table to send upstream, checked against the audit file
read as plain JSON, hashlib and sqlite3 (not against jury's own loaders)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sqlite3

import pytest

import jury
from tests.support.badinput import run_jury
from tests.support.fakellm import FakeLLMServer
from tests.support.sitetest import make_site_project


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """The site test project (its audit flags question 3; question 4's gold fails), with a
    question text that would break a Markdown table or run as HTML."""
    tmp = tmp_path_factory.mktemp("defects")
    with pytest.MonkeyPatch.context() as mp, FakeLLMServer() as server:
        mp.chdir(tmp)
        mp.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        files = make_site_project(tmp, server)
    gold = json.loads((tmp / "gold.json").read_text())
    return tmp, files["audit"], gold


def test_the_json_holds_every_flagged_gold_with_its_votes_checks_result_and_the_files_hash(audited):
    tmp, audit, gold = audited
    res = run_jury(["report", "--gold-defects", "--audit", audit, "-f", "json"], tmp)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    raw = json.loads(audit.read_text())  # the audit file itself
    assert out["provenance"]["content_sha256"] == raw["content_sha256"]
    assert out["provenance"]["file_sha256"] == hashlib.sha256(audit.read_bytes()).hexdigest()
    assert out["provenance"]["panel"] == raw["panel"]["name"]
    wanted = [r for r in raw["records"] if r["flagged"] or r.get("checks")]
    assert [d["question_id"] for d in out["defects"]] == [r["question_id"] for r in wanted] == [3, 4]
    by_q = {d["question_id"]: d for d in out["defects"]}
    assert by_q[3]["flagged_by"] == ["audit panel"] and by_q[4]["flagged_by"] == ["deterministic checks"]
    for r in wanted:
        d = by_q[r["question_id"]]
        assert d["defect_types"] == r["defect_types"]
        assert [v["reasoning"] for v in d["vote_list"]] == [v["reasoning"] for v in r["votes"]]
        assert [v["juror"] for v in d["vote_list"]] == [v["juror"] for v in r["votes"]]
        assert d["checks"] == [{"name": c["name"], "evidence": c["evidence"]} for c in r.get("checks") or []]
        assert d["gold_sql"] == next(g["SQL"] for g in gold if g["question_id"] == r["question_id"])
    assert by_q[3]["votes"] == f"{sum(v['raw_verdict'] == 'defective' for v in wanted[0]['votes'])} of 5"
    # the gold's result, as sqlite3 gives it
    conn = sqlite3.connect(tmp / "dbs" / "shop" / "shop.sqlite")
    ((count,),) = conn.execute("SELECT count(*) FROM item").fetchall()
    conn.close()
    assert by_q[3]["gold_result"].splitlines()[:2] == ["count(*)", str(count)]
    assert by_q[4]["gold_result"].startswith("(the query failed: error: no such column: nope")
    assert [c["name"] for c in by_q[4]["checks"]] == ["gold_fails"]
    # the library gives the same
    found = jury.gold_defects(audit, project=jury.Project.load(tmp))
    assert isinstance(found, jury.GoldDefects) and json.loads(found.to_json()) == out


def test_markdown_and_csv_are_tables_to_send_upstream(audited):
    tmp, audit, _gold = audited
    text = (tmp / "gold.json").read_text()
    md = run_jury(["report", "--gold-defects", "--audit", audit, "-f", "md"], tmp)
    assert md.returncode == 0, md.stderr
    lines = md.stdout.splitlines()
    assert lines[0] == "## Gold defects" and any(f"lock {json.loads(audit.read_text())['content_sha256']}" in x for x in lines)
    rows = [x for x in lines if x.startswith("| 3 |") or x.startswith("| 4 |")]
    assert len(rows) == 2 and all(x.count(" | ") == 11 for x in rows)  # 12 cells: no stray pipe, no broken line
    assert "<br>" in rows[0] and "\n" not in rows[0]
    out = run_jury(["report", "--gold-defects", "--audit", audit, "-f", "csv"], tmp)
    table = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [r["question_id"] for r in table] == ["3", "4"]
    assert {r["audit_content_sha256"] for r in table} == {json.loads(audit.read_text())["content_sha256"]}
    assert table[0]["flagged_by"] == "audit panel" and len(table[0]["reasons"].splitlines()) == 5  # one line per vote
    assert (tmp / "gold.json").read_text() == text  # nothing written


def test_an_injected_question_is_escaped_in_the_markdown(tmp_path, audited):
    """A question holding HTML, a pipe and a newline stays one escaped cell."""
    src, audit, gold = audited
    from jury.results.gold_defects import render_gold_defects

    found = jury.gold_defects(audit, project=jury.Project.load(src))
    defects = json.loads(found.to_json())["defects"]
    defects[0]["question"] = "<img src=x onerror=alert(1)> a | b\nc"
    md = render_gold_defects(found.provenance, defects, "md")
    row = next(x for x in md.splitlines() if x.startswith("| 3 |"))
    assert "&lt;img src=x onerror=alert(1)&gt; a \\| b<br>c" in row and "<img" not in row


def test_bad_uses_are_one_line(audited, tmp_path):
    tmp, audit, _gold = audited
    cases = [
        (["report", "--gold-defects"], "the gold-defect table is made from an audit file"),
        (["report", "run.jsonl", "--gold-defects", "--audit", audit], "--gold-defects reads the audit file alone"),
        (["report", "--gold-defects", "--audit", audit, "--gold", tmp / "run.jsonl"], "not the gold file"),
        (["report"], "no run files"),
    ]
    for args, message in cases:
        res = run_jury(args, tmp)
        assert res.returncode == 1 and len(res.stderr.splitlines()) == 1 and message in res.stderr, (args, res.stderr)
