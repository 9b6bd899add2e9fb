"""Bad input to loading and the command line: each case is one line "Error: ...", exit 1.

Covers issue items 9.1 (outputs never destroy inputs), 9.5 (numeric options finite and in
range, from flags and jury.toml), 9.6 (duplicate keys, strictly typed run fields), 9.10
(huge, non-regular and deeply nested inputs), 9.12 (lone surrogates; click's usage errors)
and 9.16 (control characters in error lines are escaped).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.badinput import Case, check_case

RUN = [{"model": "m", "question_id": 1, "sql": "SELECT name FROM item WHERE colour = 'red'"}]
DEEP = "[" * 200_000 + "]" * 200_000


def write(name: str, text: str):
    def setup(tmp: Path) -> None:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text, encoding="utf-8")

    return setup


def toml(extra: str):
    return write("jury.toml", 'gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n' + extra)


def run_line(line: str):
    return write("run.jsonl", line + "\n")


def hardlink(src: str, dst: str):
    def setup(tmp: Path) -> None:
        os.link(tmp / src, tmp / dst)

    return setup


def symlink(src: str, dst: str):
    def setup(tmp: Path) -> None:
        (tmp / dst).symlink_to(tmp / src)

    return setup


def make_store(tmp: Path) -> None:
    (tmp / ".jury").mkdir()
    (tmp / ".jury" / "store.db").write_bytes(b"not touched")
    (tmp / ".jury" / "store.db-wal").write_bytes(b"not touched")


def gold_with(text: str):
    return write("gold.json", text)


def bird_pred(tmp: Path) -> None:
    (tmp / "pred.json").write_text(json.dumps({"0": "SELECT 1\t----- bird -----\tshop"}))


def sparse_big(name: str):
    def setup(tmp: Path) -> None:
        with open(tmp / name, "wb") as fh:
            fh.truncate(600 * 1024 * 1024)  # sparse: no disk used, but over the size limit

    return setup


def long_line(tmp: Path) -> None:
    rec = {"model": "m", "question_id": 1, "sql": "SELECT 1 -- " + "x" * (9 * 1024 * 1024)}
    (tmp / "run.jsonl").write_text(json.dumps(rec) + "\n")


def locked_verdicts(folder: str = "verdicts", extra_toml: str = ""):
    """A locked adjudication file in ``folder`` that binds gold.json and run.jsonl (as jury
    writes them: paths relative to the verdict file's folder), plus a copy of the run."""

    def setup(tmp: Path) -> None:
        import hashlib

        (tmp / folder).mkdir(parents=True, exist_ok=True)
        up = os.path.relpath(tmp, tmp / folder)
        bind = {
            n: {"path": f"{up}/{n}", "sha256": hashlib.sha256((tmp / n).read_bytes()).hexdigest()}
            for n in ("gold.json", "run.jsonl")
        }
        doc = {
            "content_sha256": "sha256:" + "0" * 64,
            "format_version": 2,
            "kind": "adjudication",
            "inputs": {"gold": bind["gold.json"], "runs": [bind["run.jsonl"]], "databases": {}},
            "records": [],
        }
        (tmp / folder / "adjudication-1.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
        (tmp / "run2.jsonl").write_bytes((tmp / "run.jsonl").read_bytes())
        if extra_toml:
            toml(extra_toml)(tmp)

    return setup


def kind_files(tmp: Path) -> None:
    (tmp / "panel.toml").write_text('name = "p"\nk = 1\n\n[[jurors]]\nname = "a"\nmodel = "openai/a"\nfamily = "openai"\n')
    (tmp / "labels.jsonl").write_text('{"question_id": 1, "model": "m", "label": "correct", "annotator": "A", "source": "s"}\n')


BIG = "9" * 5000

CASES = [
    # ---- 9.1: outputs never destroy inputs
    Case("score-o-run", ["score", "run.jsonl", "-o", "run.jsonl"], "run.jsonl", unchanged=["run.jsonl"]),
    Case("score-per-question-run", ["score", "run.jsonl", "--per-question", "run.jsonl"], "run.jsonl", unchanged=["run.jsonl"]),
    Case("score-o-gold", ["score", "run.jsonl", "-o", "gold.json"], "gold.json", unchanged=["gold.json"]),
    Case(
        "score-o-store",
        ["score", "run.jsonl", "-o", ".jury/store.db"],
        "is the store",
        setup=make_store,
        unchanged=[".jury/store.db"],
    ),
    Case(
        "score-o-store-wal",
        ["score", "run.jsonl", "-o", ".jury/store.db-wal"],
        "is the store",
        setup=make_store,
        unchanged=[".jury/store.db-wal"],
    ),
    Case(
        "score-o-database", ["score", "run.jsonl", "-o", "dbs/shop/shop.sqlite"], "database", unchanged=["dbs/shop/shop.sqlite"]
    ),
    Case(
        "score-o-hardlink-to-run",
        ["score", "run.jsonl", "-o", "copy.jsonl"],
        "run.jsonl",
        setup=hardlink("run.jsonl", "copy.jsonl"),
        unchanged=["run.jsonl", "copy.jsonl"],
    ),
    Case(
        "score-o-symlink-to-gold",
        ["score", "run.jsonl", "-o", "g.json"],
        "gold.json",
        setup=symlink("gold.json", "g.json"),
        unchanged=["gold.json"],
    ),
    Case("score-o-and-per-question-same", ["score", "run.jsonl", "-o", "out.txt", "--per-question", "out.txt"], "out.txt"),
    Case("report-csv-o-run", ["report", "run.jsonl", "-f", "csv", "-o", "run.jsonl"], "run.jsonl", unchanged=["run.jsonl"]),
    Case(
        "report-o-database-dotdot",
        ["report", "run.jsonl", "-o", "dbs/../dbs/shop/shop.sqlite"],
        "database",
        unchanged=["dbs/shop/shop.sqlite"],
    ),
    Case(
        "import-o-prediction-file",
        ["import", "bird-predictions", "pred.json", "--model", "x", "-o", "pred.json"],
        "pred.json",
        setup=bird_pred,
        unchanged=["pred.json"],
    ),
    Case(
        "import-o-gold",
        ["import", "bird-predictions", "pred.json", "--model", "x", "-o", "gold.json"],
        "gold.json",
        setup=bird_pred,
        unchanged=["gold.json"],
    ),
    Case("adjudicate-o-run", ["adjudicate", "run.jsonl", "-o", "run.jsonl"], "run.jsonl", unchanged=["run.jsonl"]),
    Case("audit-gold-o-gold", ["audit-gold", "-o", "gold.json"], "gold.json", unchanged=["gold.json"]),
    # ---- outputs never overwrite a file that a locked verdict file of the project binds
    Case(
        "score-o-bound-run",
        ["score", "run2.jsonl", "-o", "run.jsonl"],
        "run.jsonl: is bound by the locked verdict file verdicts/adjudication-1.json",
        setup=locked_verdicts(),
        unchanged=["run.jsonl"],
    ),
    Case(
        "score-per-question-bound-run",
        ["score", "run2.jsonl", "--per-question", "run.jsonl"],
        "run.jsonl: is bound by the locked verdict file",
        setup=locked_verdicts(),
        unchanged=["run.jsonl"],
    ),
    Case(
        "report-o-bound-run",
        ["report", "run2.jsonl", "-f", "json", "-o", "run.jsonl"],
        "is bound by the locked verdict file",
        setup=locked_verdicts(),
        unchanged=["run.jsonl"],
    ),
    Case(
        "labels-runs-out-bound-run",
        ["labels", "import", "flex-agreement", "fn.jsonl", "--runs-out", "run.jsonl"],
        "is bound by the locked verdict file",
        setup=locked_verdicts(),
        unchanged=["run.jsonl"],
    ),
    Case(
        "score-o-bound-run-verdicts-dir",
        ["score", "run2.jsonl", "-o", "run.jsonl"],
        "is bound by the locked verdict file out/v/adjudication-1.json",
        setup=locked_verdicts("out/v", 'verdicts_dir = "out/v"\n'),
        unchanged=["run.jsonl"],
    ),
    # ---- a file of another kind is named as such, before any record is read
    Case("gold-as-run", ["score", "gold.json"], "gold.json is a gold file, not a run file"),
    Case("run-as-gold", ["score", "run.jsonl", "--gold", "run.jsonl"], "run.jsonl is a run file, not a gold file"),
    Case("run-as-audit", ["score", "run.jsonl", "--audit", "run.jsonl"], "run.jsonl is a run file, not a verdict file"),
    Case("gold-as-verdicts", ["score", "run.jsonl", "--verdicts", "gold.json"], "gold.json is a gold file, not a verdict file"),
    Case("panel-as-run", ["score", "panel.toml"], "panel.toml is a panel file, not a run file", setup=kind_files),
    Case("labels-as-run", ["score", "labels.jsonl"], "labels.jsonl is a label file, not a run file", setup=kind_files),
    Case("run-as-labels", ["calibrate", "--labels", "run.jsonl"], "run.jsonl is a run file, not a label file"),
    Case(
        "verdicts-as-run",
        ["score", "verdicts/adjudication-1.json"],
        "is an adjudication verdict file, not a run file",
        setup=locked_verdicts(),
    ),
    # ---- 9.5: numbers finite and in range, flags and jury.toml alike
    Case("timeout-nan-flag", ["score", "run.jsonl", "--timeout", "nan"], "--timeout"),
    Case("timeout-inf-flag", ["score", "run.jsonl", "--timeout", "inf"], "--timeout"),
    Case("timeout-zero-flag", ["score", "run.jsonl", "--timeout", "0"], "--timeout"),
    Case("timeout-nan-toml", ["score", "run.jsonl"], "timeout", setup=toml("timeout = nan\n")),
    Case("timeout-inf-toml", ["score", "run.jsonl"], "timeout", setup=toml("timeout = inf\n")),
    Case("near-miss-nan-toml", ["score", "run.jsonl"], "near_miss", setup=toml("near_miss = nan\n")),
    Case("near-miss-nan-flag", ["score", "run.jsonl", "--near-miss", "nan"], "--near-miss"),
    Case("near-miss-above-one-flag", ["score", "run.jsonl", "--near-miss", "1.5"], "--near-miss"),
    Case("max-cost-nan-toml", ["score", "run.jsonl"], "max_cost", setup=toml("max_cost = nan\n")),
    Case("max-cost-nan-flag", ["adjudicate", "run.jsonl", "--max-cost", "nan"], "--max-cost"),
    Case("max-cost-inf-flag", ["audit-gold", "--max-cost", "inf"], "--max-cost"),
    Case("workers-zero-flag", ["score", "run.jsonl", "--workers", "0"], "--workers"),
    Case("row-cap-zero-flag", ["score", "run.jsonl", "--row-cap", "0"], "--row-cap"),
    Case("float-digits-zero-flag", ["score", "run.jsonl", "--float-digits", "0"], "--float-digits"),
    Case("quorum-zero-toml", ["score", "run.jsonl"], "quorum", setup=toml("quorum = 0\n")),
    Case("seed-float-toml", ["score", "run.jsonl"], "seed", setup=toml("seed = 1.5\n")),
    # ---- 9.6: values that validate as something else
    Case(
        "run-duplicate-key",
        ["score", "run.jsonl"],
        "run.jsonl:1: duplicate key 'model'",
        setup=run_line('{"model": "m1", "model": "m2", "question_id": 1, "sql": "SELECT 1"}'),
    ),
    Case(
        "run-duplicate-nested-key",
        ["score", "run.jsonl"],
        "run.jsonl:1: duplicate key 'a'",
        setup=run_line('{"model": "m", "question_id": 1, "sql": "SELECT 1", "meta": {"a": 1, "a": 2}}'),
    ),
    Case(
        "gold-duplicate-key",
        ["score", "run.jsonl"],
        "gold.json:3: duplicate key 'SQL'",
        setup=gold_with(
            '[\n {"question_id": 1, "db_id": "shop", "SQL": "SELECT 1"},\n'
            ' {"question_id": 3, "db_id": "shop", "SQL": "SELECT 1", "SQL": "SELECT 2"}\n]\n'
        ),
    ),
    Case(
        "gold-jsonl-duplicate-key",
        ["score", "run.jsonl", "--gold", "gold.jsonl"],
        "gold.jsonl:2: duplicate key",
        setup=write(
            "gold.jsonl",
            '{"question_id": 1, "db_id": "shop", "SQL": "SELECT 1"}\n'
            '{"question_id": 3, "question_id": 4, "db_id": "shop", "SQL": "SELECT 1"}\n',
        ),
    ),
    Case(
        "run-model-number",
        ["score", "run.jsonl"],
        "run.jsonl:1: model",
        setup=run_line('{"model": 5, "question_id": 1, "sql": "SELECT 1"}'),
    ),
    Case(
        "run-model-bool",
        ["score", "run.jsonl"],
        "run.jsonl:1: model",
        setup=run_line('{"model": true, "question_id": 1, "sql": "SELECT 1"}'),
    ),
    Case(
        "run-model-blank",
        ["score", "run.jsonl"],
        "run.jsonl:1: model",
        setup=run_line('{"model": "   ", "question_id": 1, "sql": "SELECT 1"}'),
    ),
    Case(
        "run-question-id-bool",
        ["score", "run.jsonl"],
        "run.jsonl:1: question_id",
        setup=run_line('{"model": "m", "question_id": true, "sql": "SELECT 1"}'),
    ),
    Case(
        "run-cost-infinite",
        ["score", "run.jsonl"],
        "run.jsonl:1: '1e999' is out of a float's range",
        setup=run_line('{"model": "m", "question_id": 1, "sql": "SELECT 1", "cost_usd": 1e999}'),
    ),
    Case(
        "run-cost-bool",
        ["score", "run.jsonl"],
        "run.jsonl:1: cost_usd",
        setup=run_line('{"model": "m", "question_id": 1, "sql": "SELECT 1", "cost_usd": true}'),
    ),
    Case(
        "run-latency-nan",
        ["score", "run.jsonl"],
        "run.jsonl:1: NaN",
        setup=run_line('{"model": "m", "question_id": 1, "sql": "SELECT 1", "latency_s": NaN}'),
    ),
    Case(
        "run-latency-string",
        ["score", "run.jsonl"],
        "run.jsonl:1: latency_s",
        setup=run_line('{"model": "m", "question_id": 1, "sql": "SELECT 1", "latency_s": "1.5"}'),
    ),
    Case(
        "bird-predictions-duplicate-key",
        ["import", "bird-predictions", "pred.json", "--model", "x"],
        "pred.json:1: duplicate key '0'",
        setup=write("pred.json", '{"0": "SELECT 1\\t----- bird -----\\tshop", "0": "SELECT 2"}'),
    ),
    # ---- 9.10: huge inputs
    Case("run-dev-zero", ["score", "/dev/zero"], "not a regular file", timeout=30),
    Case("gold-dev-zero", ["score", "run.jsonl", "--gold", "/dev/zero"], "not a regular file", timeout=30),
    Case(
        "run-over-size-limit",
        ["score", "big.jsonl"],
        "big.jsonl: 629145600 bytes is larger than the 512 MiB limit",
        setup=sparse_big("big.jsonl"),
        timeout=30,
    ),
    Case("run-line-too-long", ["score", "run.jsonl"], "run.jsonl:1: line longer than", setup=long_line),
    Case(
        "run-deep-nesting",
        ["score", "run.jsonl"],
        "run.jsonl:1: nested deeper than",
        setup=run_line('{"model": "m", "question_id": 1, "sql": "SELECT 1", "meta": {"x": ' + DEEP + "}}"),
    ),
    Case("gold-deep-nesting", ["score", "run.jsonl"], "gold.json:2: nested deeper than", setup=gold_with("[\n" + DEEP + "\n]\n")),
    Case(
        "run-question-id-5000-digits",
        ["score", "run.jsonl"],
        "run.jsonl:1:",
        setup=run_line('{"model": "m", "question_id": ' + BIG + ', "sql": "SELECT 1"}'),
    ),
    Case(
        "run-question-id-5000-digit-string",
        ["score", "run.jsonl"],
        "run.jsonl:1: question_id",
        setup=run_line('{"model": "m", "question_id": "' + BIG + '", "sql": "SELECT 1"}'),
    ),
    Case(
        "run-question-id-beyond-64-bits",
        ["score", "run.jsonl"],
        "run.jsonl:1: question_id",
        setup=run_line('{"model": "m", "question_id": 99999999999999999999, "sql": "SELECT 1"}'),
    ),
    Case(
        "run-question-id-beyond-exact-json",
        ["score", "run.jsonl"],
        "question_id is out of range (an integer id must be within",
        setup=run_line('{"model": "m", "question_id": 9007199254740992, "sql": "SELECT 1"}'),
    ),
    # ---- 9.12 (a): lone surrogates
    Case(
        "run-lone-surrogate",
        ["score", "run.jsonl"],
        "run.jsonl:1: lone surrogate",
        setup=run_line('{"model": "m", "question_id": 1, "sql": "SELECT \'\\ud800\'"}'),
    ),
    Case(
        "gold-lone-surrogate",
        ["score", "run.jsonl"],
        "gold.json:2: lone surrogate",
        setup=gold_with('[\n {"question_id": 1, "db_id": "shop", "SQL": "SELECT \'\\udc00\'"}\n]\n'),
    ),
    # ---- 9.12 (b): click's usage errors are one line and exit 1
    Case("max-cost-negative", ["adjudicate", "run.jsonl", "--max-cost", "-1"], "--max-cost"),
    Case("quorum-zero-flag", ["audit-gold", "--quorum", "0"], "--quorum"),
    Case("unknown-option", ["score", "run.jsonl", "--bogus"], "--bogus"),
    Case("missing-argument", ["score"], "Missing argument"),
    Case("not-a-number", ["score", "run.jsonl", "--timeout", "soon"], "--timeout"),
    Case("unknown-command", ["scoer"], "scoer"),
    # --model defaults to the file's name now (tests/test_prediction_files.py); a blank one is refused
    Case(
        "import-blank-model",
        ["import", "bird-predictions", "pred.json", "--model", " "],
        "model must name the model",
        setup=bird_pred,
    ),
    # ---- 9.16: control characters in error lines are escaped
    Case("escape-in-error-line", ["score", "r\x1b[2J\x1b]0;owned\x07.jsonl"], "r\\x1b[2J\\x1b]0;owned\\x07.jsonl: no such file"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case, tmp_path):
    proc = check_case(case, tmp_path)
    assert "\x1b" not in proc.stderr


def test_verify_names_a_run_file_given_as_a_verdict_file(tmp_path):
    from tests.support.badinput import basic_project, run_jury

    basic_project(tmp_path)
    proc = run_jury(["verify", "run.jsonl"], tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "run.jsonl is a run file, not a verdict file" in proc.stdout + proc.stderr
    assert "malformed JSON" not in proc.stdout + proc.stderr


def console_script() -> str | None:
    """The `jury` script installed with this interpreter, else the one on PATH, else None."""
    import shutil
    import sys

    beside = Path(sys.executable).parent / "jury"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("jury")


def test_console_script_is_found_beside_the_interpreter_or_skipped(monkeypatch):
    """Without `jury` beside the interpreter or on PATH the comparison skips, never fails."""
    import sys

    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    assert console_script() is None


def test_python_m_and_console_script_agree(tmp_path):
    """`jury` (the console script) and `python -m jury` print the same one-line usage error."""
    import subprocess

    from tests.support.badinput import basic_project, run_jury_process

    basic_project(tmp_path)
    exe = console_script()
    if exe is None:
        pytest.skip("no `jury` console script beside this Python nor on PATH (jury is not installed, only importable)")
    via_module = run_jury_process(["score", "run.jsonl", "--workers", "x"], tmp_path)
    via_script = subprocess.run([exe, "score", "run.jsonl", "--workers", "x"], cwd=tmp_path, capture_output=True, text=True)
    assert via_module.returncode == via_script.returncode == 1
    assert via_module.stderr == via_script.stderr
    assert via_module.stderr.startswith("Error: ") and len(via_module.stderr.strip().splitlines()) == 1
