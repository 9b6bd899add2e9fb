"""Two reviewers' files, read by one loader (jury.verdicts.review.load_two_reviews) in each of
the four commands that take them: `jury review agreement`, `jury review settle`, `jury review
corrected` and `jury report --sample-review A --sample-review B`. Each refuses, in one line
with exit 1, the same file given twice, a byte copy under another name, and two files of the
same reviewer with other decisions (two reviewers must be two people). The fixture is
tests/test_review_sample.py's: the bundled example audited by loopback scripted jurors, a
40-record sample that ann and bob decided on the review page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import jury
from jury.cli import app
from tests.test_report_corrected import _reviewed
from tests.test_review_sample import example_audit, folder  # noqa: F401  (the fixtures)

runner = CliRunner()
SAMPLE = "verdicts/sample.json"


def _ann_again() -> None:
    """ann2.json: ann's decisions once more, her first item decided the other way."""
    from starlette.testclient import TestClient

    page = jury.review_app(sample=SAMPLE, reviewer="ann")
    client = TestClient(page.app, base_url=f"http://127.0.0.1:8765{page.root}/", follow_redirects=False)
    assert client.get(f"?token={page.token}").status_code == 303
    first = json.loads(Path("ann.json").read_text())["records"][0]
    data = {"choice": "valid"} if first["choice"] == "defective" else {"choice": "defective", "defect_type": "sql_vs_question"}
    assert client.post(f"item/0?csrf={page.state.csrf}", data=data).status_code == 303
    res = runner.invoke(app, ["review", "lock", "-o", "ann2.json", "--reviewer", "ann", "--sample", SAMPLE])
    assert res.exit_code == 0, res.output


def _commands(a: str, b: str) -> dict[str, list[str]]:
    return {
        "agreement": ["review", "agreement", a, b],
        "settle": ["review", "settle", a, b, "-o", "round.json", "--decisions", "round.csv"],
        "corrected": ["review", "corrected", SAMPLE, a, b],
        "report": [
            "report",
            "run.jsonl",
            "--audit",
            "verdicts/audit.json",
            "--review-sample",
            SAMPLE,
            "--sample-review",
            a,
            "--sample-review",
            b,
        ],
    }


PAIRS = {  # what is given as A and B -> what the one line says
    "the same file twice": (
        "ann.json",
        "ann.json",
        "ann.json and ann.json: the same file given twice; give two reviewers' review files",
    ),
    "a byte copy": (
        "ann.json",
        "copy.json",
        "ann.json and copy.json: hold the same locked review (a copy, or the same decisions locked twice)",
    ),
    "the same reviewer, other decisions": (
        "ann.json",
        "ann2.json",
        "ann.json and ann2.json: both are 'ann''s decisions; two reviewers must be two people",
    ),
}


@pytest.mark.slow
def test_each_command_refuses_one_reviewer_given_as_two(folder):  # noqa: F811
    _reviewed()
    shutil.copy("ann.json", "copy.json")
    _ann_again()
    assert (
        json.loads(Path("ann2.json").read_text())["content_sha256"] != json.loads(Path("ann.json").read_text())["content_sha256"]
    )
    Path("round.csv").write_text("question_id,model,label,settled_by,note\n")
    for name, (a, b, says) in PAIRS.items():
        for command, args in _commands(a, b).items():
            res = runner.invoke(app, args)
            lines = [line for line in res.stderr.splitlines() if line.strip()]
            assert res.exit_code == 1, (name, command, res.output)
            assert lines == [f"Error: {says}"] or (len(lines) == 1 and says in lines[0]), (name, command, res.stderr)
            assert not Path("round.json").exists()
    # ann and bob, two people: every command reads their files (settle: nothing to settle when they agree)
    for command, args in _commands("ann.json", "bob.json").items():
        res = runner.invoke(app, args)
        assert res.exit_code == 0, (command, res.output)
    assert jury.review_corrected(SAMPLE, "ann.json", "bob.json").reviewers == ["ann", "bob"]
