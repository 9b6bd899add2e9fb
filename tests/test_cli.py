import json
import os
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from jury.cli import app
from tests.support.helpers import EXAMPLE, make_db, write_gold, write_runs

runner = CliRunner()


def all_commands(group, prefix=()):
    for name, cmd in group.commands.items():
        yield prefix + (name,)
        if hasattr(cmd, "commands"):
            yield from all_commands(cmd, prefix + (name,))


def test_every_command_has_help():
    root = typer.main.get_command(app)
    paths = list(all_commands(root))
    assert ("score",) in paths and ("import", "bird-predictions") in paths
    for path in paths:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, path
        assert "Usage" in result.output
        cmd = root
        for part in path:
            cmd = cmd.commands[part]
        assert (cmd.help or "").strip(), f"{' '.join(path)} has no help text"


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("jury ")


def test_startup_does_not_import_litellm():
    code = (
        "import sys; from typer.testing import CliRunner; from jury.cli import app;"
        "CliRunner().invoke(app, ['score', '--help']);"
        "assert 'litellm' not in sys.modules, 'litellm imported at startup'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def run_cli(args, cwd):
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "jury", *args], cwd=cwd, capture_output=True, text=True, env=env)


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"model": "m", "question_id": 1, "sql": "SELECT 1"\n', "run.jsonl:1: malformed JSON"),
        ('{"model": "m", "question_id": 77, "sql": "SELECT 1"}\n', "unknown question_id 77"),
        ("", "run.jsonl: file is empty"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(tmp_path, content, message):
    make_db(tmp_path / "dbs")
    write_gold(tmp_path)
    (tmp_path / "run.jsonl").write_text(content)
    proc = run_cli(["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs"], tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0]
    assert proc.stdout == ""


def test_missing_database_and_missing_gold(tmp_path):
    write_gold(tmp_path)
    write_runs(tmp_path, [{"model": "m", "question_id": 1, "sql": "SELECT 1"}])
    proc = run_cli(["score", "run.jsonl", "--gold", "gold.json", "--db-root", "nowhere"], tmp_path)
    assert proc.returncode == 1 and "no database file for db_id 'shop'" in proc.stderr
    proc = run_cli(["score", "run.jsonl"], tmp_path)
    assert proc.returncode == 1 and "no gold file: pass --gold" in proc.stderr


def test_score_formats_and_per_question(tmp_path, monkeypatch):
    make_db(tmp_path / "dbs")
    write_gold(tmp_path)
    write_runs(
        tmp_path,
        [
            {"model": "m", "question_id": 1, "sql": "SELECT name FROM item WHERE colour = 'red'"},
            {"model": "m", "question_id": 3, "sql": "SELECT 0"},
            {"model": "n", "question_id": 1, "sql": None},
        ],
    )
    (tmp_path / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["score", "run.jsonl", "--format", "json", "--per-question", "pq.jsonl"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["settings"]["comparator"] == "strict"
    m = next(x for x in doc["models"] if x["model"] == "m")
    assert m["strict"]["k"] == 1 and m["strict"]["n"] == 2 and m["jury_eligible"] == 1
    assert 0 < m["strict"]["low"] < 0.5 < m["strict"]["high"] < 1
    lines = [json.loads(x) for x in (tmp_path / "pq.jsonl").read_text().splitlines()]
    assert {(x["model"], x["question_id"], x["outcome"]) for x in lines} == {
        ("m", 1, "match"),
        ("m", 3, "mismatch"),
        ("n", 1, "missing"),
    }
    assert set(lines[0]) >= {"model", "question_id", "routed", "outcome", "overlap", "bird", "strict", "relaxed", "subset"}

    res = runner.invoke(app, ["score", "run.jsonl", "--format", "csv", "--comparator", "bird"])
    header = res.stdout.splitlines()[0].split(",")
    assert header[:5] == ["model", "questions", "routing_accuracy", "routed", "strict_matches"]
    assert "strict_low" in header and "subset_rank" in header
    res = runner.invoke(app, ["score", "run.jsonl", "--format", "md"])
    assert res.stdout.startswith("| model |") and "comparator: strict" in res.stdout
    res = runner.invoke(app, ["score", "run.jsonl", "--format", "xml"])
    assert res.exit_code == 1 and "unknown format 'xml'" in res.output
    res = runner.invoke(app, ["score", "run.jsonl", "--comparator", "fuzzy"])
    assert res.exit_code == 1 and "unknown comparator 'fuzzy'" in res.output


def test_readme_example_command_runs(tmp_path):
    """The README's main command on the bundled example, on a copy so no store lands in the repo."""
    import shutil

    shutil.copytree(EXAMPLE, tmp_path / "ex")
    proc = run_cli(["score", "run.jsonl", "--workers", "2"], tmp_path / "ex")
    assert proc.returncode == 0, proc.stderr
    assert "gsr" in proc.stdout and "0.907" in proc.stdout


def test_unwritable_output_and_mistyped_config_are_one_line_errors(tmp_path):
    make_db(tmp_path / "dbs")
    write_gold(tmp_path)
    write_runs(tmp_path, [{"model": "m", "question_id": 1, "sql": "SELECT 1"}])
    (tmp_path / "adir").mkdir()
    proc = run_cli(["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "-o", "adir"], tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "adir: is a directory" in proc.stderr
    (tmp_path / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nnear_miss = "0.5"\n')
    proc = run_cli(["score", "run.jsonl"], tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "near_miss must be a number, got '0.5'" in proc.stderr


def test_run_files_survive_unicode_line_separators(tmp_path):
    from jury.inputs.io import dump_runs, load_runs
    from jury.inputs.records import RunRecord

    rec = RunRecord(model="m", question_id=1, sql="SELECT 1 WHERE 'a\u2028b\x85c' = 'x'")
    path = tmp_path / "run.jsonl"
    path.write_text(dump_runs([rec]), encoding="utf-8")
    assert load_runs([path])[0].sql == rec.sql
