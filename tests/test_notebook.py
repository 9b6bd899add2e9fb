"""The analysis notebook runs on the bundled example, with verdict files from the loopback
scripted panel (test fixtures: scripted jurors are test doubles, not real numbers)."""

import json
import shutil

import pytest
from typer.testing import CliRunner

from jury.cli import app
from tests.support.helpers import EXAMPLE, REPO
from tests.support.jurytest import write_panel

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytestmark = pytest.mark.slow  # executes the notebook in a kernel
runner = CliRunner()
MODELS = ("ta-sql-gpt4", "codes-1b", "gsr")
FIVE = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai"), ("je", "deepseek")]


def scripted(req):
    """Deterministic test-double juror: verdict from a hash of the ballot text."""
    import hashlib

    from tests.support.fakellm import json_reply

    text = req["messages"][-1]["content"]
    h = hashlib.sha256((req["model"] + text).encode()).digest()[0]
    if "gold_sql" in text:  # audit ballot
        bad = h % 4 == 0
        return json_reply(
            {
                "reasoning": "fixture",
                "verdict": "defective" if bad else "valid",
                "defect_type": "sql_vs_question" if bad else None,
            }
        )
    return json_reply({"reasoning": "fixture", "verdict": ["answer_1", "answer_2", "both", "neither", "ambiguous"][h % 5]})


def test_notebook_reproduces_report_on_the_bundled_example(tmp_path, monkeypatch, fake_llm):
    project = tmp_path / "bird-superhero"
    shutil.copytree(EXAMPLE, project)
    lines = [line for line in (project / "run.jsonl").read_text().splitlines() if json.loads(line)["model"] in MODELS]
    (project / "run3.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(project)
    fake_llm.set_default(scripted)
    adj_panel = write_panel(project, fake_llm.base_url, FIVE[:4])
    audit_panel = write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit-panel.toml")
    res = runner.invoke(app, ["adjudicate", "run3.jsonl", "--panel", str(adj_panel), "-o", "verdicts/fixture-adjudication.json"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["audit-gold", "--panel", str(audit_panel), "-o", "verdicts/fixture-audit.json"])
    assert res.exit_code == 0, res.output
    cli = runner.invoke(
        app,
        [
            "report",
            "run3.jsonl",
            "--audit",
            "verdicts/fixture-audit.json",
            "--verdicts",
            "verdicts/fixture-adjudication.json",
            "--format",
            "json",
        ],
    )
    assert cli.exit_code == 0, cli.output
    expected = json.loads(cli.stdout)

    nb = nbformat.read(REPO / "notebooks" / "analysis.ipynb", as_version=4)
    env = {
        "JURY_PROJECT": str(project),
        "JURY_RUNS": str(project / "run3.jsonl"),
        "JURY_AUDIT": str(project / "verdicts/fixture-audit.json"),
        "JURY_VERDICTS": str(project / "verdicts/fixture-adjudication.json"),
        "JURY_STORE": str(project / ".jury/store.db"),
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(project)}}).execute()
    outputs = "\n".join(
        o.get("text", "") + json.dumps(o.get("data", {}).get("text/markdown", ""))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )
    assert not any(o.get("output_type") == "error" for c in nb.cells for o in c.get("outputs", []))
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 4  # all four charts drawn
    assert "3 models" in outputs and "executed 0 new queries" in outputs  # executions reused from the store
    for m in expected["models"]:
        adj = m["adjudicated"]["value"]
        assert f"{adj:.3f}" in outputs, (m["model"], adj)  # the notebook's table shows the CLI's numbers
