"""What the commands print to a terminal or a pipe: control characters and rich markup in names
are escaped, tables are not wrapped without a terminal, and --wide adds the other columns."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from jury.results.render import safe
from tests.support.badinput import basic_project, run_jury

# ---------------------------------------------------------------- control characters


def test_safe_escapes_control_characters():
    assert safe("m\x1b]0;pwned\x07\x1b[2J\u202e") == "m\\x1b]0;pwned\\x07\\x1b[2J\\u202e"
    assert safe("a\nb") == "a\\nb" and safe("a\nb\tc", newlines=True) == "a\nb\tc"
    assert safe("\ud800") == "\\ud800" and safe("é 😀 ✓") == "é 😀 ✓"


EVIL = "evil\x1b]0;pwned\x07\x1b[31m[bold]red"


def evil_project(tmp_path: Path) -> Path:
    basic_project(tmp_path)
    (tmp_path / "run.jsonl").write_text(json.dumps({"model": EVIL, "question_id": 1, "sql": "SELECT 1"}) + "\n")
    return tmp_path


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_score_output_escapes_model_names(tmp_path, fmt):
    evil_project(tmp_path)
    proc = run_jury(["score", "run.jsonl", "-f", fmt, "--store", "s.db"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "evil\\x1b]0;pwned\\x07\\x1b[31m[bold]red" in proc.stdout  # markup not interpreted either


def test_report_and_import_escape_model_names(tmp_path):
    evil_project(tmp_path)
    proc = run_jury(["report", "run.jsonl", "--store", "s.db"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "evil\\x1b" in proc.stdout
    (tmp_path / "pred.sql").write_text("SELECT 1\n")
    proc = run_jury(["import", "bird-predictions", "pred.sql", "--model", EVIL], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stderr and "evil\\x1b" in proc.stderr


def test_console_factory_escapes_and_fits(monkeypatch):
    from jury.cli.common import make_console, table_width
    from jury.results.render import UNWRAPPED_WIDTH

    buf = io.StringIO()
    monkeypatch.setattr(sys, "stdout", buf)
    console = make_console()
    assert console.width == UNWRAPPED_WIDTH and table_width(None) is None
    long_path = "/very/" + "long/" * 60 + "file.json"
    console.print(f"STALE {long_path}: changed {EVIL}", markup=False)
    out = buf.getvalue()
    assert f"STALE {long_path}: changed" in out.splitlines()[0]  # one line, not wrapped at 80
    assert "\x1b" not in out

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.setenv("COLUMNS", "97")
    monkeypatch.delenv("TERM", raising=False)
    assert make_console().width == 97 and table_width(None) == 97
    assert table_width(Path("out.txt")) is None


# ---------------------------------------------------------------- widths and --wide


def test_score_table_is_not_wrapped_without_a_terminal(tmp_path):
    basic_project(tmp_path)
    name = "provider/" + "very-long-model-name-" * 15
    (tmp_path / "run.jsonl").write_text(json.dumps({"model": name, "question_id": 1, "sql": "SELECT 1"}) + "\n")
    for command in ("score", "report"):
        proc = run_jury([command, "run.jsonl", "--store", "s.db"], tmp_path, env={"COLUMNS": "80"})  # stdout: a pipe
        assert proc.returncode == 0, proc.stderr
        assert any(name in line for line in proc.stdout.splitlines()), proc.stdout


@pytest.mark.slow
def test_wide_columns(tmp_path):
    basic_project(tmp_path)
    plain = run_jury(["score", "run.jsonl", "--store", "s.db"], tmp_path)
    wide = run_jury(["score", "run.jsonl", "--store", "s.db", "--wide"], tmp_path)
    assert plain.returncode == wide.returncode == 0
    assert "relaxed acc rank" not in plain.stdout and "relaxed acc rank" in wide.stdout
    assert "routed" not in plain.stdout.split("\n")[1] + plain.stdout.split("\n")[2]
    csv = run_jury(["score", "run.jsonl", "--store", "s.db", "-f", "csv"], tmp_path)
    assert "relaxed_accuracy" in csv.stdout.splitlines()[0]
    rep = run_jury(["report", "run.jsonl", "--store", "s.db"], tmp_path)
    rep_wide = run_jury(["report", "run.jsonl", "--store", "s.db", "--wide"], tmp_path)
    assert "not executed" not in rep.stdout and "not executed" in rep_wide.stdout
    for command in ("score", "report"):
        help_text = run_jury([command, "--help"], tmp_path).stdout
        assert "--wide" in help_text
