"""The analysis notebook uses the public API alone (`import jury`: the jobs and their results'
methods) and runs on the bundled example, with verdict files from the loopback scripted panel
(test fixtures: scripted jurors are test doubles, not real numbers)."""

import ast
import json
import shutil

import pytest
from typer.testing import CliRunner

import jury
from jury.cli import app
from tests.support.helpers import EXAMPLE, REPO
from tests.support.jurytest import hashed_verdicts, write_panel

NOTEBOOK = REPO / "notebooks" / "analysis.ipynb"
runner = CliRunner()
MODELS = ("ta-sql-gpt4", "codes-1b", "gsr")
FIVE = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai"), ("je", "deepseek")]


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_notebook_imports_nothing_but_jury_and_uses_only_public_names():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    imports, used = [], set()
    for cell in code_cells(nb):
        for node in ast.walk(ast.parse(source(cell))):
            if isinstance(node, ast.Import):
                imports += [(a.name, a.asname) for a in node.names]
            assert not isinstance(node, ast.ImportFrom), ast.unparse(node)
            if isinstance(node, ast.Name):
                assert node.id not in ("__import__", "exec", "eval", "getattr", "globals"), ast.unparse(node)
            if isinstance(node, ast.Attribute):
                assert not node.attr.startswith("_"), ast.unparse(node)  # no private name of jury or a result
                if isinstance(node.value, ast.Name) and node.value.id == "jury":
                    used.add(node.attr)
    assert imports == [("jury", None)]
    assert {"score", "report"} <= used and used <= set(jury.__all__), used
    assert sum("parameters" in c.get("metadata", {}).get("tags", []) for c in code_cells(nb)) == 1


def with_parameters(nb, **values) -> None:
    """Replace the cell tagged parameters (as papermill does) by these values."""
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    cell.source = "import jury\n\n" + "".join(f"{k} = {v!r}\n" for k, v in values.items())


@pytest.mark.slow  # executes the notebook in a kernel
def test_notebook_reproduces_report_on_the_bundled_example(tmp_path, monkeypatch, fake_llm):
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    project = tmp_path / "bird-superhero"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".jury"))
    lines = [line for line in (project / "run.jsonl").read_text().splitlines() if json.loads(line)["model"] in MODELS]
    (project / "run3.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(project)
    fake_llm.set_default(hashed_verdicts)
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
            "--plots",
            "figs",
        ],
    )
    assert cli.exit_code == 0, cli.output
    expected = json.loads(cli.stdout)

    nb = nbformat.read(NOTEBOOK, as_version=4)
    with_parameters(
        nb,
        project=str(project),
        runs=[str(project / "run3.jsonl")],
        audit=str(project / "verdicts/fixture-audit.json"),
        verdicts=[str(project / "verdicts/fixture-adjudication.json")],
        store=str(project / ".jury/store.db"),
    )
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(project)}}).execute()
    outputs = "\n".join(
        o.get("text", "") + json.dumps(o.get("data", {}).get("text/markdown", ""))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )
    assert not any(o.get("output_type") == "error" for c in nb.cells for o in c.get("outputs", []))
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == len(list((project / "figs").glob("*.png"))) >= 4  # every chart `--plots` draws
    assert "3 models" in outputs and "executed 0 new queries" in outputs  # executions reused from the store
    for m in expected["models"]:
        adj = m["adjudicated"]["value"]
        assert f"{adj:.3f}" in outputs, (m["model"], adj)  # the notebook's table shows the CLI's numbers
