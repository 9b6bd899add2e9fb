"""`jury.calibrate` and `jury.jobs.labels.import_labels` through the library: the figures, and
renderings that are exactly what `jury calibrate` prints and writes and what `jury labels
import` prints; bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import jury
from jury.jobs.labels import LabelImport, import_labels
from tests.support.badinput import run_jury
from tests.support.helpers import write_gold
from tests.test_calibrate import label_lines, shop, write_labels  # noqa: F401  (shop: the fixture)
from tests.test_labels_import import agreement_files


def test_calibrate_renders_what_the_command_prints_and_writes(shop: Path) -> None:  # noqa: F811
    write_labels(shop, label_lines())
    cal = jury.calibrate(labels="labels.jsonl", runs="run.jsonl")
    assert isinstance(cal, jury.Calibration)
    assert cal.labelled == 7 and cal.ties == 1 and cal.matched == 6
    strict = next(f for f in cal.figures if (f.section, f.subject, f.metric) == ("comparator", "strict", "accuracy"))
    # strict matches gpt-a 1 and claude-b 2 (both correct); the reference also credits gpt-a 2 and claude-b 3
    assert strict.n == 6 and strict.value == pytest.approx(4 / 6)
    args = ["calibrate", "--labels", "labels.jsonl", "--runs", "run.jsonl"]
    proc = run_jury([*args, "--json", "c.json", "--csv", "c.csv", "--markdown", "c.md"], shop)
    assert proc.returncode == 0, proc.stderr
    assert cal.render() == proc.stdout
    assert cal.render("json") == (shop / "c.json").read_text()
    assert cal.render("csv") == (shop / "c.csv").read_text()
    assert cal.render("md") == (shop / "c.md").read_text()
    assert json.loads(cal.to_json())["figures"] == [f.model_dump(mode="json") for f in cal.figures]
    assert cal.write(shop / "again.md").read_text() == (shop / "c.md").read_text()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"labels": "nope.jsonl"}, "nope.jsonl"),
        ({"labels": []}, "no label files"),
        ({"labels": "labels.jsonl", "annotator": "Z"}, "annotator 'Z' labelled nothing"),
        ({"labels": "labels.jsonl", "outputs": ["labels.jsonl"]}, "labels.jsonl: is the input file"),
        ({"labels": "labels.jsonl", "verdicts": "gold.json"}, "gold.json"),
        ({"labels": "labels.jsonl", "runs": "run.jsonl", "outputs": ["dbs/shop/shop.sqlite"]}, "is the database file"),
    ],
)
def test_calibrate_bad_input_is_one_line(shop: Path, kwargs: dict, message: str) -> None:  # noqa: F811
    write_labels(shop, label_lines())
    before = (shop / "labels.jsonl").read_bytes()
    with pytest.raises(jury.JuryError) as caught:
        jury.calibrate(**kwargs)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert (shop / "labels.jsonl").read_bytes() == before


def test_import_labels_gives_what_the_command_prints_and_writes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_gold(tmp_path)
    names = [p.name for p in agreement_files(tmp_path)]
    found = import_labels("flex-agreement", names, gold="gold.json", runs_out="r.jsonl", gold_out="g.jsonl", family="openai")
    assert isinstance(found, LabelImport)
    assert len(found.labels) == 20 and len(found.runs) == 5 and {r.family for r in found.runs} == {"openai"}
    assert found.unmatched and "fn.jsonl:3" in found.unmatched[0]
    assert found.written == [Path("r.jsonl"), Path("g.jsonl")]
    args = ["labels", "import", "flex-agreement", *names, "--gold", "gold.json"]
    proc = run_jury([*args, "--runs-out", "r2.jsonl", "--gold-out", "g2.jsonl", "--family", "openai"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert found.render() == proc.stdout and found.render().count("\n") == 20
    assert proc.stderr.splitlines() == ["wrote r2.jsonl", "wrote g2.jsonl", *found.notes]
    assert (tmp_path / "r.jsonl").read_text() == (tmp_path / "r2.jsonl").read_text() == found.runs_jsonl()
    assert (tmp_path / "g.jsonl").read_text() == (tmp_path / "g2.jsonl").read_text() == found.gold_jsonl()
    # the labels feed calibrate
    found.write(tmp_path / "labels.jsonl")
    assert jury.calibrate(labels="labels.jsonl").labelled > 0


@pytest.mark.parametrize(
    ("kind", "kwargs", "message"),
    [
        ("wretblad", {"runs_out": "r.jsonl"}, "runs_out, gold_out and family are for the flex kinds"),
        ("flex-agreement", {"original": "gold.json"}, "original is only for the arcwise and platinum kinds"),
        ("flex-agreement", {"output": "fp.jsonl"}, "fp.jsonl: is the input file"),
        ("flex-agreement", {"gold_out": "gold.json"}, "gold.json: is the input file"),
        ("spider", {}, "unknown label set 'spider'"),
    ],
)
def test_import_labels_bad_input_is_one_line(tmp_path: Path, monkeypatch, kind: str, kwargs: dict, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    write_gold(tmp_path)
    files = agreement_files(tmp_path)
    before = {p: p.read_bytes() for p in [*files, tmp_path / "gold.json"]}
    with pytest.raises(jury.JuryError) as caught:
        import_labels(kind, files, gold="gold.json", **kwargs)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert {p: p.read_bytes() for p in before} == before
