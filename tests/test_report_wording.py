"""What a new user saw on the report and its site (issue 42.8): an undefined correlation names
its real cause, the published site names no absolute local path, and the columns' heading
counts the columns there are."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.badinput import run_jury
from tests.support.helpers import EXAMPLE


@pytest.fixture
def example_copy(tmp_path: Path) -> Path:
    for name in ("dev.json", "run.jsonl", "jury.toml"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    (tmp_path / "databases").symlink_to(EXAMPLE / "databases")
    return tmp_path


def test_an_undefined_correlation_names_its_cause(example_copy, example_store):
    """Every model routed every question (routing accuracy 1.000 for all 15): the Pearson lines
    are undefined because one side never varies, not for want of models; with no audit, no
    model has a gold-defect share (n = 0)."""
    res = run_jury(["report", "run.jsonl", "--store", example_store], example_copy)
    assert res.returncode == 0, res.stderr
    pearson = [line for line in res.stdout.splitlines() if line.startswith("Pearson, routing accuracy")]
    assert len(pearson) == 2
    for line in pearson:
        assert "undefined (n = 15: one side has the same value for every model" in line and "needs 3" not in line
    assert "gold-defect share vs strict accuracy: undefined (n = 0: needs 3 models with both values)" in res.stdout


def test_the_site_names_no_absolute_local_path_and_counts_its_columns(example_copy, example_store):
    res = run_jury(["report", "run.jsonl", "--store", example_store, "-f", "html", "-o", "site"], example_copy)
    assert res.returncode == 0, res.stderr
    absolute = {str(example_copy), str(example_copy.resolve()), str(EXAMPLE), str(EXAMPLE.resolve()), str(Path.home())}
    pages = [p for p in (example_copy / "site").rglob("*") if p.is_file() and p.suffix in (".html", ".json", ".txt")]
    assert pages
    for page in pages:
        text = page.read_text(errors="replace")
        leaked = [a for a in absolute if a != "/" and a in text]
        assert not leaked, (page.name, leaked)
    index = (example_copy / "site" / "index.html").read_text()
    assert "jury report run.jsonl --gold dev.json " in index  # the rebuild command, from the folder it ran in
    assert "<h2>The strict column per model</h2>" in index and "Three columns" not in index
    assert "gold-clean = " not in index  # no audit: no gold-clean column to explain
