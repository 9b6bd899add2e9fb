import json
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from jury.cli import app
from tests.support.clirun import run_jury_inprocess
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


def _help_sources(cmd, path=()):
    """(command path, its help text and every parameter's help), for every command."""
    yield path, [cmd.help or "", *(getattr(p, "help", None) or "" for p in cmd.params)]
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _help_sources(sub, (*path, name))


def _flat(text: str) -> str:
    """Whitespace collapsed; a line broken after a hyphen (click wraps `jury-sql[ray]` there) joined."""
    return " ".join(text.replace("\u2502", " ").split()).replace("- ", "-")


def test_help_keeps_bracketed_text():
    """`pip install 'jury-sql[ray]'` lost its `[ray]` to rich markup: every bracketed piece of a
    help text (command or option) must reach `--help` as written."""
    import re

    root = typer.main.get_command(app)
    checked = 0
    for path, texts in _help_sources(root):
        shown = _flat(runner.invoke(app, [*path, "--help"], env={"COLUMNS": "100"}).output)
        for text in texts:
            for piece in re.findall(r"\S*\[[^\]]*\]\S*", text):
                checked += 1
                assert _flat(piece) in shown, f"jury {' '.join(path)} --help lost {piece!r}"
    assert checked >= 3  # [ray] on score, adjudicate and calibrate at least


@pytest.mark.parametrize("columns", [60, 100])  # narrow and wide: the same reflow at any width
def test_help_descriptions_are_reflowed(columns):
    """A docstring's hard line breaks are not kept: each paragraph of a command's description is
    filled to the width (no line that the next line's first word would have fitted on)."""
    root = typer.main.get_command(app)
    for path, _texts in _help_sources(root):
        out = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(columns)}).output
        lines = out.splitlines()
        start = next(i for i, line in enumerate(lines) if line.strip().startswith("Usage")) + 1
        body = []
        for line in lines[start:]:
            if line.strip().rstrip(":").lower() in ("arguments", "options", "commands") or "\u2500" in line:
                break
            body.append(line.rstrip())
        width = max(len(line) for line in lines)
        for line, following in zip(body, body[1:]):
            if line.strip() and following.strip():
                first_word = following.split()[0]
                assert len(line) + 1 + len(first_word) > width, (
                    f"jury {' '.join(path)} --help at {columns} columns breaks early:\n{line}\n{following}"
                )


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


def test_a_command_imports_only_its_own_module_and_help_lists_every_command():
    """`jury score` builds an app of `score` alone (issue 46): no other command's module loads;
    `jury --help` still lists every command, in the order of jury.cli.COMMANDS."""
    from jury.cli import COMMANDS

    code = (
        "import sys\nfrom jury.cli import main\n"
        "try:\n    main(['score', '--help'])\nexcept SystemExit as exc:\n    assert not exc.code\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith('jury.cli.')), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.startswith("Usage: jury score [OPTIONS]")
    loaded = next(ln for ln in proc.stderr.splitlines() if ln.startswith("LOADED "))
    assert loaded == "LOADED ['jury.cli.common', 'jury.cli.score']"
    shown = runner.invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    listed = [ln.split()[0] for ln in shown.split("Commands:")[1].splitlines() if ln.strip()]
    assert sorted(listed) == sorted(COMMANDS)
    assert sorted(typer.main.get_command(app).commands) == sorted(COMMANDS)


def run_cli(args, cwd):
    """`python -m jury *args` in cwd, run in this process (tests/support/clirun.py)."""
    return run_jury_inprocess(args, cwd)


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
    assert proc.returncode == 1 and "no gold file: give the gold file (--gold)" in proc.stderr


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
    }  # n's one line has no SQL: left out under --missing exclude, the default (tests/test_coverage.py)
    assert set(lines[0]) >= {"model", "question_id", "routed", "outcome", "overlap", "bird", "strict", "relaxed", "subset"}

    res = runner.invoke(app, ["score", "run.jsonl", "--format", "csv", "--comparator", "bird"])
    header = res.stdout.splitlines()[0].split(",")
    assert header[:6] == ["model", "questions", "routing_accuracy", "routed", "comparator", "matches"]
    assert "accuracy_low" in header and "strict_accuracy" in header and "subset_rank" in header
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


def _whole(token: str, text: str) -> bool:
    import re

    return re.search(rf"(?<![^\s│┃]){re.escape(token)}(?![^\s│┃:])", text) is not None


def test_quick_start_table_keeps_identifiers_whole_at_every_width(example_store, monkeypatch):
    """`cd examples/bird-superhero && jury score run.jsonl` on a terminal of 80-160 columns: no
    model name or header word is split across lines (it was `codes-15b-evidenc|e`, `questio|ns`)
    and no line is wider than the terminal."""
    monkeypatch.chdir(EXAMPLE)
    models = sorted({json.loads(line)["model"] for line in (EXAMPLE / "run.jsonl").open()})
    header_words = ["model", "questions", "matches", "strict", "acc", "[95%", "CI]", "rank", "mismatch", "(to", "jury)"]
    header_words += ["other", "outcomes"]
    for columns in (80, 100, 120, 160):
        env = {"TTY_COMPATIBLE": "1", "COLUMNS": str(columns), "NO_COLOR": "1", "TERM": "dumb"}
        result = runner.invoke(app, ["score", "run.jsonl", "--store", str(example_store)], env=env)
        assert result.exit_code == 0, result.output
        out = result.stdout
        assert max(len(line) for line in out.splitlines()) <= columns, f"a line wider than {columns} columns"
        for token in [*models, *header_words]:
            assert _whole(token, out), f"{token!r} split across lines at {columns} columns:\n{out}"
        assert "routing accuracy 1.000; shown with --wide" in " ".join(out.split())  # the column is left out


def test_tables_never_split_a_word():
    """Every command's tables go through to_rich_table: at any width a word is never cut; too
    narrow for the table, each row becomes a block of `header: value` lines."""
    import io

    from rich.console import Console

    from jury.results.render import to_rich_table

    rows = [
        {"juror": f"juror-with-a-long-name-{i}", "model": "openrouter/provider/model-name-2025", "votes": 1161} for i in range(3)
    ]
    for width in (40, 60, 80, 100, 160):
        buf = io.StringIO()
        Console(file=buf, width=width, no_color=True).print(
            to_rich_table(rows, ["juror", "model", "votes"], ["juror", "juror model", "votes cast"])
        )
        out = buf.getvalue()
        assert max(len(line) for line in out.splitlines()) <= width
        for token in ("juror-with-a-long-name-2", "openrouter/provider/model-name-2025", "1161", "votes", "cast"):
            assert _whole(token, out), f"{token!r} split at {width}:\n{out}"


def test_a_mistyped_name_gets_the_closest_names_and_the_list(tmp_path, monkeypatch):
    """`--panel defualt` said only "panel file not found": now the closest names and the
    shipped ones; the same for taxonomies, comparators, --format and --strength."""
    from jury.compare.comparators import get_comparator
    from jury.errors import ConfigError, InputError
    from jury.judging.panels import load_panel, resolve_panel_path
    from jury.judging.taxonomies import load_taxonomy

    with pytest.raises(
        ConfigError, match=r"panel file not found; did you mean 'default'\? \(shipped panels: audit, default, local, local-demo\)"
    ):
        load_panel(resolve_panel_path("defualt", "default.toml"))
    with pytest.raises(ConfigError, match=r"panel file not found \(shipped panels: audit, default, local, local-demo\)$"):
        load_panel(resolve_panel_path("zzz", "default.toml"))
    with pytest.raises(ConfigError, match=r"taxonomy file not found .*; did you mean 'plsqlbench'\?"):
        load_taxonomy("plsqlbnech")
    with pytest.raises(InputError, match=r"unknown comparator 'strcit'; did you mean 'strict'\? choose one of: "):
        get_comparator("strcit")
    monkeypatch.chdir(EXAMPLE)
    result = runner.invoke(app, ["audit-gold", "--panel", "adit", "--plan", "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 1 and "did you mean 'audit'?" in result.output
    result = runner.invoke(app, ["score", "run.jsonl", "-f", "jsno", "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 1 and "unknown format 'jsno'; did you mean 'json'?" in result.output


def test_a_bare_command_group_prints_its_help_and_exits_0(tmp_path):
    """`jury`, `jury import`, `jury store`, ... with no sub-command printed nothing (click >=
    8.2 raises NoArgsIsHelpError without printing outside standalone mode): each prints the
    help `--help` prints, on stdout, and exits 0 as `--help` does. Every group is found from
    the app itself, so a group added later is checked too."""
    root = typer.main.get_command(app)
    groups = [()] + [p for p in all_commands(root) if _command(root, p).__class__.__name__.endswith("Group")]
    bare = [g for g in groups if getattr(_command(root, g), "no_args_is_help", False)]
    assert {("import",), ("labels",), ("local-juror",), ("store",), ("db",), ("batch",), ()} <= set(bare)
    for path in bare:
        shown = run_jury_inprocess(list(path), tmp_path)
        helped = run_jury_inprocess([*path, "--help"], tmp_path)
        assert (shown.returncode, shown.stderr) == (0, ""), path
        assert shown.stdout == helped.stdout and f"Usage: jury {' '.join(path)}".rstrip() in shown.stdout, path
        assert "Commands" in shown.stdout, path


def _command(root, path):
    cmd = root
    for part in path:
        cmd = cmd.commands[part]
    return cmd
