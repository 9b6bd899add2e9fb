"""The README's with-keys recipe on FLEX's 200 pairs, with loopback jurors in place of a real
panel: import with --family, adjudicate with --review-passes 1 (failures and passes), then
calibrate. The scripted jurors are test doubles that read the experts' consensus off the
label file and answer against it on a known set of questions (every fifth), so the panel's κ
is known in advance and computed here with sklearn: what this checks is the plumbing
(recorded results on ballots, reviews of passes, calibration of the panel), never a real
juror's quality."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from jury.cli import app
from tests.support.fakellm import ballot_reply
from tests.support.helpers import SHARED_BIRD
from tests.support.jurytest import user_text, write_panel

FLEX = SHARED_BIRD.parent / "labels" / "flex" / "results" / "agreement"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not FLEX.is_dir(), reason="../shared (FLEX labels) not present")]
runner = CliRunner()
JURORS = [("ja", "google"), ("jb", "xai"), ("jc", "meta")]


def flipped(question_id: int) -> bool:
    """The questions on which every scripted juror contradicts the consensus."""
    return question_id % 5 == 0


def _oracle(gold_sql: dict, consensus: dict):
    """A juror that answers as the experts' consensus says (by question and candidate SQL),
    and the opposite on the flipped questions."""

    def respond(request):
        text = user_text(request)
        sqls = [re.search(rf"<sql_{i}>\n(.*?)\n</sql_{i}>", text, re.S).group(1) for i in (1, 2)]
        qid = next(q for q, g in gold_sql.items() if g in sqls)
        cand_pos = 2 if sqls[0] == gold_sql[qid] else 1
        cand = sqls[cand_pos - 1]
        correct = consensus[(qid, cand)] != flipped(qid)
        if sqls[0] == sqls[1]:  # a pass showing the same SQL twice
            return ballot_reply("both" if correct else "neither")
        return ballot_reply(f"answer_{cand_pos}" if correct else f"answer_{3 - cand_pos}")

    return respond


def test_flex_recipe_with_review_of_passes_calibrates_the_panel(tmp_path, monkeypatch, fake_llm):
    monkeypatch.chdir(tmp_path)
    files = [str(FLEX / "fn.jsonl"), str(FLEX / "fp.jsonl"), str(FLEX / "experts_agreement_200.csv")]
    imp = subprocess.run(
        [sys.executable, "-m", "jury", "labels", "import", "flex-agreement", *files, "--gold", str(SHARED_BIRD / "dev.json"),
         "-o", "labels.jsonl", "--runs-out", "run.jsonl", "--gold-out", "gold.jsonl", "--family", "unknown"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert imp.returncode == 0, imp.stderr
    runs = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert {r["family"] for r in runs} == {"unknown"}
    gold = {
        g["question_id"]: g["SQL"] if "SQL" in g else g["sql"]
        for g in map(json.loads, (tmp_path / "gold.jsonl").read_text().splitlines())
    }
    sql_of = {(r["model"], r["question_id"]): r["sql"] for r in runs}
    labels = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    consensus = {
        (lab["question_id"], sql_of[(lab["model"], lab["question_id"])]): lab["label"] == "correct"
        for lab in labels
        if lab["annotator"] == "consensus"
    }
    # the oracle needs one consensus per (question, SQL): FLEX never labels one SQL both ways
    for lab in labels:
        if lab["annotator"] == "consensus":
            assert consensus[(lab["question_id"], sql_of[(lab["model"], lab["question_id"])])] == (lab["label"] == "correct")
    for name, _ in JURORS:
        fake_llm.script(name, _oracle(gold, consensus))
    panel = write_panel(tmp_path, fake_llm.base_url, JURORS)

    res = runner.invoke(
        app, ["adjudicate", "run.jsonl", "--gold", "gold.jsonl", "--panel", str(panel), "--review-passes", "1", "-o", "adj.json"],
        catch_exceptions=False,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "adj.json").read_text())
    assert len(doc["records"]) == 200 and sum(r.get("review_pass", False) for r in doc["records"]) == 100
    assert doc["inputs"]["databases"] == {}  # nothing executed: every result was recorded

    res = runner.invoke(
        app, ["calibrate", "--labels", "labels.jsonl", "--runs", "run.jsonl", "--gold", "gold.jsonl", "--verdicts", "adj.json",
              "--json", "cal.json"],
        catch_exceptions=False,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    cal = json.loads((tmp_path / "cal.json").read_text())
    figures = {(f["section"], f["subject"], f["metric"]): f for f in cal["figures"]}
    panel_kappa = figures[("panel", "panel", "kappa")]
    # the panel says the consensus's label except on the flipped questions; strict says the
    # recorded match: both κ by sklearn over the 200 consensus-labelled pairs
    pairs = [(lab["model"], lab["question_id"], lab["label"] == "correct") for lab in labels if lab["annotator"] == "consensus"]
    recorded = {(r["model"], r["question_id"]): r["recorded"]["match"] for r in runs}
    truth = [ok for _m, _q, ok in pairs]
    panel_says = [ok != flipped(q) for _m, q, ok in pairs]
    assert len(pairs) == 200 and 0 < sum(flipped(q) for _m, q, _ok in pairs) < 200
    assert panel_kappa["n"] == 200 and panel_kappa["value"] == pytest.approx(cohen_kappa_score(truth, panel_says))
    strict = cohen_kappa_score(truth, [recorded[(m, q)] for m, q, _ok in pairs])
    assert figures[("comparator", "strict", "kappa")]["value"] == pytest.approx(strict)
