"""`jury.score` and `jury.report`, the library behind `jury score` and `jury report`: the
results render exactly what the commands print, a report reuses its score's evaluation, and
the html site and figures are the commands'.

Scripted jurors (tests/support/fakellm.py) are test doubles: their verdicts exercise the code
and are never reported as real numbers.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from typer.testing import CliRunner

import jury
from tests.support.fakellm import FakeLLMServer, json_reply
from tests.support.helpers import EXAMPLE
from tests.support.jurytest import GOLD_SQL, make_project, says, user_text, write_panel

runner = CliRunner()
FORMATS = ("table", "csv", "json", "md")
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
FIVE = [*FOUR, ("je", "deepseek")]


def cli(*args: str) -> str:
    from jury.cli import app

    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The bundled example (15 systems, 129 questions) in a fresh folder, its store warmed once."""
    folder = tmp_path_factory.mktemp("example") / "bird-superhero"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns(".jury"))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        ev = jury.score("run.jsonl", gold="dev.json", db_root="databases")
        yield {"folder": folder, "score": ev}


def test_score_renders_what_jury_score_prints(example):
    ev = example["score"]
    assert ev.executed > 0 and len(ev.models) == 15
    warm = jury.score("run.jsonl", gold="dev.json", db_root="databases")
    assert warm.executed == 0  # every execution reused from the store
    for fmt in FORMATS:
        assert warm.render(fmt) == cli("score", "run.jsonl", "-f", fmt), fmt
    assert warm.render("md", wide=True) == cli("score", "run.jsonl", "-f", "md", "--wide")
    assert str(warm) == warm.render("table") and warm.to_csv() == warm.render("csv")
    assert json.loads(warm.to_json())["models"][0] == warm.scores[0].model_dump()
    with pytest.raises(jury.InputError, match="unknown format 'xml'"):
        warm.render("xml")


def test_per_question_lines_are_the_commands(example, tmp_path):
    cli("score", "run.jsonl", "-f", "json", "--per-question", str(tmp_path / "pq.jsonl"))
    ev = example["score"]
    assert ev.per_question_jsonl() == (tmp_path / "pq.jsonl").read_text()
    assert ev.write_per_question(tmp_path / "mine.jsonl").read_text() == ev.per_question_jsonl()


def test_report_of_a_score_is_jury_report_and_executes_nothing(example, monkeypatch):
    ev = example["score"]
    printed = {fmt: cli("report", "run.jsonl", "-f", fmt) for fmt in FORMATS}
    wide = cli("report", "run.jsonl", "-f", "md", "--wide")
    # with the databases moved away nothing could execute, and the store gains no execution:
    # a report of a score is built from the score alone
    monkeypatch.chdir(example["folder"])
    (example["folder"] / "databases").rename(example["folder"] / "databases.away")
    try:
        with jury.Store(".jury/store.db") as store:
            executions = store.conn.execute("SELECT count(*) FROM executions").fetchone()[0]
        rep = jury.report(ev)
        with jury.Store(".jury/store.db") as store:
            assert store.conn.execute("SELECT count(*) FROM executions").fetchone()[0] == executions
    finally:
        (example["folder"] / "databases.away").rename(example["folder"] / "databases")
    assert rep.to_json() == printed["json"]
    for fmt in ("table", "csv", "md"):
        assert rep.render(fmt) == printed[fmt], fmt
    assert rep.render("md", wide=True) == wide
    # no verdicts: the strict column (the library's default strength follows the files given)
    assert rep.settings.strength == "strict" and rep.models[0].adjudicated is None
    with pytest.raises(jury.InputError, match="strength adjudicated needs adjudication verdicts"):
        jury.report(ev, strength="adjudicated")
    with pytest.raises(jury.InputError, match="unknown strength 'fastest'"):
        jury.report(ev, strength="fastest")
    # from the run file itself: the same report
    again = jury.report("run.jsonl", rank_resamples=1000, seed=0)
    assert again.to_json() == rep.to_json()
    assert jury.report(ev, seed=1).to_json() != rep.to_json()  # the rank bootstrap's seed is used


# ------------------------------------------------------------------ with locked verdict files


def audit_juror(flag: set[int]):
    text_to_q = {"Names of red items?": 1, "Items by price, cheapest first?": 2, "How many items?": 3, "Broken gold": 4}

    def respond(req):
        q = text_to_q[re.search(r"<question>\n(.*?)\n</question>", user_text(req), re.S).group(1)]
        verdict = {"verdict": "defective", "defect_type": "sql_vs_question"} if q in flag else {"verdict": "valid"}
        return json_reply({"reasoning": "scripted audit", "defect_type": None, **verdict})

    return respond


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """make_project with gpt-x's q1 right, an audit flagging q3 and an adjudication crediting
    every failure as format-equivalent, written by the commands with scripted jurors."""
    tmp = tmp_path_factory.mktemp("judged")
    with pytest.MonkeyPatch.context() as mp, FakeLLMServer() as server:
        mp.chdir(tmp)
        mp.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        make_project(tmp)
        lines = [json.loads(x) for x in (tmp / "run.jsonl").read_text().splitlines()]
        lines[0]["sql"] = GOLD_SQL[1]
        (tmp / "run.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        for name, _ in FIVE:
            server.script(name, audit_juror({3}))
        panel = write_panel(tmp, server.base_url, FIVE, style="audit", k=5, name="audit.toml")
        cli("audit-gold", "gold.json", "--panel", str(panel), "-o", "verdicts/audit.json")
        for name, _ in FOUR:
            server.script(name, says("format_equivalence"))
        cli("adjudicate", "run.jsonl", "--panel", str(write_panel(tmp, server.base_url, FOUR)), "-o", "verdicts/adj.json")
        yield tmp


VERDICTS = ("--audit", "verdicts/audit.json", "--verdicts", "verdicts/adj.json")


def test_score_and_report_with_verdicts_are_the_commands(judged):
    ev = jury.score("run.jsonl", audit="verdicts/audit.json", verdicts=["verdicts/adj.json"])
    for fmt in FORMATS:
        assert ev.render(fmt) == cli("score", "run.jsonl", *VERDICTS, "-f", fmt), fmt
    s = {x.model: x for x in ev.scores}
    assert (s["gpt-x"].adjudicated["k"], s["gpt-x"].gold_clean["n"]) == (3, 2)  # q3 flagged: out of gold-clean
    rep = jury.report(ev, control="claude-y")  # the score's files
    assert rep.to_json() == cli("report", "run.jsonl", *VERDICTS, "--control", "claude-y", "-f", "json")
    assert rep.render("table") == cli("report", "run.jsonl", *VERDICTS, "--control", "claude-y")
    assert rep.settings.strength == "adjudicated" and rep.control.model == "claude-y"
    # files given to the report take the place of the score's
    bare = jury.report(jury.score("run.jsonl"), verdicts="verdicts/adj.json")
    assert bare.to_json() == cli("report", "run.jsonl", "--verdicts", "verdicts/adj.json", "-f", "json")
    assert [f.kind for f in bare.verdict_files] == ["adjudication"]
    # a report of a score executes nothing: its store may be gone
    ev = jury.score("run.jsonl", verdicts="verdicts/adj.json", store="gone.db")
    (judged / "gone.db").unlink()
    assert jury.report(ev).to_json() == bare.to_json() and not (judged / "gone.db").exists()


@pytest.mark.slow  # builds two sites and two sets of figures
def test_site_and_figures_are_the_commands(judged, tmp_path):
    pytest.importorskip("matplotlib")
    cli("report", "run.jsonl", *VERDICTS, "-f", "html", "-o", "site", "--plots", "figs")
    rep = jury.report("run.jsonl", audit="verdicts/audit.json", verdicts=["verdicts/adj.json"])
    summary = rep.write_site(tmp_path / "site")
    assert (summary.path / "index.html").is_file()
    assert (tmp_path / "site" / "report.json").read_text() == rep.to_json()
    assert json.loads((judged / "site" / "report.json").read_text())["models"] == json.loads(rep.to_json())["models"]
    mine = sorted(p.name for p in (tmp_path / "site").rglob("*") if p.is_file())
    assert mine == sorted(p.name for p in (judged / "site").rglob("*") if p.is_file())
    written = rep.write_plots(tmp_path / "figs")
    assert sorted(p.name for p in written) == sorted(p.name for p in (judged / "figs").iterdir())
    charts = rep.charts()
    assert [c.name + ".png" for c in charts] == [p.name for p in written]
    assert all(c._repr_png_().startswith(b"\x89PNG") for c in charts)
    with pytest.raises(jury.InputError, match="plots folder run.jsonl: cannot write there"):
        rep.write_plots("run.jsonl")


def test_notes_hold_what_the_command_prints_on_stderr(judged):
    ev = jury.score("run.jsonl", efficiency=True, repeats=2)
    # the runs answer 3 of the gold's 4 questions (the 4th gold query is audited only): the warning first
    short = "warning: 2 of 2 models answer fewer than the gold's 4 questions: gpt-x 3/4 (1 absent), claude-y 3/4 (1 absent);"
    assert len(ev.notes) == 2 and ev.notes[0].startswith(short) and "2 repeats: BIRD's outlier rule" in ev.notes[1]
    assert ev.scores[0].efficiency["timed_matches"] == 1  # gpt-x's one match, timed twice
    assert [n[: len(short)] for n in jury.score("run.jsonl").notes] == [short]
    with pytest.raises(jury.InputError, match="repeats must be at least 1"):
        jury.score("run.jsonl", efficiency=True, repeats=0)


def test_report_of_the_model_a_demo_panel_judged(tmp_path, monkeypatch):
    """The README's local-juror block adjudicates one model (--model gsr) and reports the run:
    the report refused (the other models' failures have no verdict). `report --model` keeps the
    models named, in every format and in the site's rebuild command; the library's model=."""
    from jury.cli import app

    with FakeLLMServer() as server:
        monkeypatch.chdir(tmp_path)
        make_project(tmp_path)
        for name, _ in FOUR:
            server.script(name, says("format_equivalence"))
        panel = write_panel(tmp_path, server.base_url, FOUR)
        cli("adjudicate", "run.jsonl", "--panel", str(panel), "--model", "gpt-x", "-o", "verdicts/demo.json")
    refused = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/demo.json"])
    assert refused.exit_code == 1 and "model 'claude-y': 3 jury-eligible failures have no verdict" in refused.output
    res = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/demo.json", "--model", "gpt-x", "-f", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    (row,) = doc["models"]
    # by hand: gpt-x's 3 failures (make_project) all credited format-equivalent, none matched strictly
    assert row["model"] == "gpt-x" and (row["adjudicated"]["k"], row["adjudicated"]["n"], row["strict"]["k"]) == (3, 3, 0)
    lib = jury.report("run.jsonl", verdicts="verdicts/demo.json", model="gpt-x")
    assert lib.to_json() == res.stdout
    site = runner.invoke(
        app, ["report", "run.jsonl", "--verdicts", "verdicts/demo.json", "--model", "gpt-x", "-f", "html", "-o", "site"]
    )
    assert site.exit_code == 0, site.output
    assert "--model gpt-x" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    unknown = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/demo.json", "--model", "gpt-y"])
    assert unknown.exit_code == 1 and "model 'gpt-y' is not a model of the runs" in unknown.output and "gpt-x" in unknown.output
