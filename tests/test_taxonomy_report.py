"""Error categories in `jury report` (JSON, table, md, one plot), with loopback jurors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
from typer.testing import CliRunner

from jury.cli import app
from jury.results.report.model import REPORT_SCHEMA_FILENAME, ReportDocument
from tests.support.fakellm import json_reply
from tests.support.jurytest import gold_position, says, user_text, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
SCHEMA = Path(__file__).resolve().parents[1] / "verdicts" / "schema" / REPORT_SCHEMA_FILENAME
# question text -> the category each juror picks: q1 C1 by all, q2 C2 by all, q3 split (no majority)
PICKS = {"Names of red items?": "C1", "Items by price, cheapest first?": "C2"}


def juror(name: str):
    def respond(request):
        text = user_text(request)
        question = re.search(r"<question>\n(.*?)\n</question>", text, re.S).group(1)
        pick = PICKS.get(question) or {"ja": "C3", "jb": "C4", "jc": "C5", "jd": "C3"}[name]
        return json_reply({"reasoning": "scripted", "verdict": f"answer_{gold_position(request)}", "error_category": pick})

    return respond


def _adjudicate(project, fake_llm, *extra: str) -> Path:
    for name, _ in FOUR:
        fake_llm.script(name, juror(name))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), *extra])
    assert res.exit_code == 0, res.output
    return max((project / "verdicts").glob("adjudication-*.json"), key=lambda p: p.stat().st_mtime_ns)


def report(*args: str):
    return runner.invoke(app, ["report", "run.jsonl", *args])


def test_report_counts_error_categories_per_model(project, fake_llm, tmp_path):
    path = _adjudicate(project, fake_llm, "--taxonomy", "spider2-aifunc")
    res = report("--verdicts", str(path), "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(data)
    assert ReportDocument.model_validate(data).model_dump(mode="json") == data  # round trip
    cats = data["error_categories"]
    assert cats["taxonomy"] == "spider2-aifunc" and cats["categories"] == ["C1", "C2", "C3", "C4", "C5"]
    # gpt-x (openai) is judged by jb, jc, jd: q3 picks C4, C5, C3 -> no majority; claude-y by ja, jc, jd: C3, C5, C3 -> C3
    assert cats["models"]["gpt-x"] == {"C1": 1, "C2": 1, "C3": 0, "C4": 0, "C5": 0, "no majority": 1}
    assert cats["models"]["claude-y"] == {"C1": 1, "C2": 1, "C3": 1, "C4": 0, "C5": 0, "no majority": 0}
    md = report("--verdicts", str(path), "--format", "md").output
    assert "### error categories of genuine errors (spider2-aifunc)" in md
    assert "| gpt-x | 1 | 1 | 0 | 0 | 0 | 1 | 3 |" in md and "| claude-y | 1 | 1 | 1 | 0 | 0 | 0 | 3 |" in md
    table = report("--verdicts", str(path)).output
    assert "error categories of genuine errors (spider2-aifunc)" in table and "no majority" in table
    res = report("--verdicts", str(path), "--plots", str(tmp_path / "plots"))
    assert res.exit_code == 0, res.output
    png = tmp_path / "plots" / "error_categories.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_without_a_taxonomy_the_report_is_as_before(project, fake_llm, tmp_path):
    for name, _ in FOUR:
        fake_llm.script(name, says("genuine_error"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    assert runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel)]).exit_code == 0
    [path] = (project / "verdicts").glob("adjudication-*.json")
    data = json.loads(report("--verdicts", str(path), "--format", "json").stdout)
    assert "error_categories" not in data
    assert list(data)[-4:] == ["agreement", "rank_stability", "adjudication_uncertainty", "jurors"]  # no section between them
    assert "error categories" not in report("--verdicts", str(path), "--format", "md").output
    assert report("--verdicts", str(path), "--plots", str(tmp_path / "p")).exit_code == 0
    assert not (tmp_path / "p" / "error_categories.png").exists()


def test_files_of_two_taxonomies_are_refused(project, fake_llm):
    a = _adjudicate(project, fake_llm, "--taxonomy", "spider2-aifunc", "--model", "gpt-x")
    for name, _ in FOUR:  # plsqlbench ids: the juror's C1 would be refused, so pick "logic"
        fake_llm.script(
            name,
            lambda r: json_reply({"reasoning": "s", "verdict": f"answer_{gold_position(r)}", "error_category": "logic"}),
        )
    panel = write_panel(project, fake_llm.base_url, FOUR)
    res = runner.invoke(
        app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--taxonomy", "plsqlbench", "--model", "claude-y"]
    )
    assert res.exit_code == 0, res.output
    [b] = [p for p in (project / "verdicts").glob("adjudication-*.json") if p != a]
    res = report("--verdicts", str(a), "--verdicts", str(b))
    assert res.exit_code == 1
    assert "made with taxonomy 'plsqlbench', another file with 'spider2-aifunc'" in " ".join(res.output.split())
