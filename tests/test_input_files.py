"""Input files: one safe JSON loader for gold, runs and verdict files (duplicate keys, NaN,
huge numbers, deep nesting, lone surrogates, devices and pipes), strictly typed run records,
numeric settings checked alike from flags and jury.toml, and outputs that never overwrite an
input."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from jury.errors import ConfigError, InputError
from jury.inputs.config import Config, load_config
from jury.inputs.io import MAX_JSON_DEPTH, load_gold, load_json_file, load_runs, loads_document, loads_line
from jury.inputs.records import RunRecord
from jury.options import validated
from tests.support.badinput import basic_project, run_jury

DEEP = "[" * 200_000 + "]" * 200_000


# ---------------------------------------------------------------- one safe loader


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"model": "m1", "model": "m2"}', "f.json:1: duplicate key 'model'"),
        ('{"a": {"b": 1, "b": 1}}', "f.json:1: duplicate key 'b'"),
        ('{"a": NaN}', "f.json:1: NaN is not JSON"),
        ('{"a": -Infinity}', "f.json:1: -Infinity is not JSON"),
        ('{"a": 1e400}', "f.json:1: '1e400' is out of a float's range"),
        ('{"a": ' + "7" * 5000 + "}", "f.json:1: an integer of 5000 digits"),
        ("\n\n" + DEEP, f"f.json:3: nested deeper than {MAX_JSON_DEPTH} levels"),
        ('{"a": "\\udfff"}', "f.json:1: lone surrogate \\udfff"),
        ('{"a": 1}\n{"b": 2}', "f.json:2: malformed JSON (extra data"),
    ],
)
def test_safe_loader_refuses(text, message):
    with pytest.raises(InputError) as exc:
        loads_document(text, "f.json")
    assert message in str(exc.value)


NESTED = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH


@pytest.mark.parametrize(
    "line",
    [
        '{"model": "m", "question_id": 7, "sql": "SELECT 1"}',
        ' {"a": 1}\t',  # surrounding whitespace: loads_document's way
        '{"a": ' + NESTED + "}",  # MAX_JSON_DEPTH + 1 brackets, MAX_JSON_DEPTH + 1 deep: refused below
        NESTED,
        '{"a": "\\ud83d\\ude00", "b": [1.5, -2, true, null]}',  # a surrogate pair: loads_document's way
        '"just a string"',
        "[]",
    ],
)
def test_jsonl_line_fast_path_reads_what_json_reads(line):
    """loads_line (each run line, issue 46) gives the value the standard library's json gives, on
    the lines it reads itself and on those it hands to loads_document."""
    if line == '{"a": ' + NESTED + "}":
        with pytest.raises(InputError, match=f"^r.jsonl:7: nested deeper than {MAX_JSON_DEPTH} levels"):
            loads_line(line, "r.jsonl", 7)
        return
    assert loads_line(line, "r.jsonl", 7) == json.loads(line)


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"model": "m1", "model": "m2"}', "r.jsonl:7: duplicate key 'model'"),
        ('{"a": NaN}', "r.jsonl:7: NaN is not JSON (no NaN or Infinity)"),
        ('{"a": 1} {"b": 2}', "r.jsonl:7: malformed JSON (extra data after the value)"),
        ('{"a": 1}x', "r.jsonl:7: malformed JSON (extra data after the value)"),
        ('{"a": 1,}', "r.jsonl:7: malformed JSON (Expecting"),
        ('{"a": "\\udfff"}', "r.jsonl:7: lone surrogate \\udfff in a string (not valid Unicode)"),
        ('{"a": ' + "7" * 5000 + "}", "r.jsonl:7: an integer of 5000 digits (at most"),
    ],
)
def test_jsonl_line_fast_path_refuses_as_the_loader_does(line, message):
    with pytest.raises(InputError) as exc:
        loads_line(line, "r.jsonl", 7)
    assert str(exc.value).startswith(message)


def test_safe_loader_accepts_ordinary_json():
    text = '{"a": [1, 2.5, -3, {"b": "\\ud83d\\ude00 é"}], "c": null, "d": ' + "[" * 50 + "]" * 50 + "}"
    assert loads_document(text, "f.json")["a"][3]["b"] == "\U0001f600 é"


def test_gold_list_errors_name_the_line_of_the_item(tmp_path):
    gold = tmp_path / "gold.json"
    gold.write_text(
        '[\n {"question_id": 1, "db_id": "s", "SQL": "SELECT 1"},\n\n'
        ' {"question_id": 2, "db_id": "s", "SQL": "SELECT 1", "db_id": "t"}\n]\n'
    )
    with pytest.raises(InputError, match=r"gold.json:4: duplicate key 'db_id'"):
        load_gold(gold)
    gold.write_text('[\n {"question_id": 1, "db_id": "s", "SQL": "SELECT 1"},\n {"question_id": 2, "db_id": "s"}\n]')
    with pytest.raises(InputError, match=r"gold.json:3: item 1: SQL: Field required"):
        load_gold(gold)


def test_gold_loading_stays_linear(tmp_path, monkeypatch):
    """Item by item parsing must not rescan the rest of the file for each item: counted, not
    timed. The file's text is a str that counts the characters its line counts (``count``) go
    over, and the depth check (a scan of the whole text) must run once, not once per item."""
    from jury.inputs import io

    class Counted(str):
        scanned = 0

        def count(self, sub, start=0, end=None):  # type: ignore[override]
            stop = len(self) if end is None else end
            Counted.scanned += max(0, stop - start)
            return str.count(self, sub, start, stop)

    depth_checks = []
    real_read, real_depth = io.read_text, io._check_depth
    monkeypatch.setattr(io, "read_text", lambda *a, **k: Counted(real_read(*a, **k)))
    monkeypatch.setattr(io, "_check_depth", lambda *a, **k: depth_checks.append(1) or real_depth(*a, **k))
    items = [{"question_id": i, "db_id": "s", "SQL": f"SELECT {i}", "question": "q" * 200} for i in range(2_000)]
    text = json.dumps(items, indent=1)
    (tmp_path / "gold.json").write_text(text)
    assert len(load_gold(tmp_path / "gold.json")) == 2_000
    # a rescan from the start for each item would be ~1,000 times the file's length
    assert len(depth_checks) == 1 and 0 < Counted.scanned <= 2 * len(text)


def test_run_records_strictly_typed():
    for bad in (
        {"model": 5},
        {"model": True},
        {"model": " \t"},
        {"question_id": True},
        {"question_id": 2**64},
        {"question_id": "1" * 25},
        {"cost_usd": math.inf},
        {"cost_usd": math.nan},
        {"latency_s": True},
        {"latency_s": "2"},
        {"cost_usd": -1},
    ):
        rec = {"model": "m", "question_id": 1, **bad}
        with pytest.raises(ValidationError):
            RunRecord.model_validate(rec)
    ok = RunRecord.model_validate({"model": "m", "question_id": "0717", "cost_usd": 1, "latency_s": 0.5})
    assert ok.question_id == 717 and ok.cost_usd == 1.0


def test_non_regular_and_oversized_files_are_refused(tmp_path):
    with pytest.raises(InputError, match="/dev/zero: not a regular file"):
        load_runs(["/dev/zero"])
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        load_runs([fifo])  # must not block waiting for a writer... nor read forever


def test_verdict_files_use_the_safe_loader(tmp_path):
    """A deeply nested value appended to a locked file, or a duplicate key, is one clear error
    in the library and in `jury verify` (no RecursionError traceback)."""
    from test_verdicts import make_doc

    from jury.errors import VerdictError
    from jury.verdicts.lock import load_locked, write_locked

    path = write_locked(make_doc("audit", tmp_path), tmp_path / "verdicts" / "audit.json")
    original = path.read_text()
    path.write_text(original.rstrip()[:-1] + ', "x": ' + DEEP + "}\n")
    with pytest.raises(VerdictError, match="nested deeper than"):
        load_locked(path)
    proc = run_jury(["verify", str(path)], tmp_path)
    assert "Traceback" not in proc.stderr and proc.returncode == 1
    assert "nested deeper than" in proc.stdout + proc.stderr
    path.write_text(original.replace('"kind": "audit"', '"kind": "audit", "kind": "audit"', 1))
    with pytest.raises(VerdictError, match="duplicate key 'kind'"):
        load_locked(path)
    assert load_json_file(tmp_path / "inputs" / "gold.json")[0]["question_id"] == 1


# ---------------------------------------------------------------- numbers, one place


@pytest.mark.parametrize(
    "key, value",
    [
        ("timeout", math.nan),
        ("timeout", math.inf),
        ("timeout", 0),
        ("timeout", -1.0),
        ("near_miss", math.nan),
        ("near_miss", 1.01),
        ("near_miss", -0.1),
        ("max_cost", math.nan),
        ("max_cost", math.inf),
        ("max_cost", -0.01),
        ("row_cap", 0),
        ("workers", 0),
        ("quorum", 0),
        ("float_digits", 0),
        ("seed", 1.5),
    ],
)
def test_numbers_checked_from_flags_and_file_alike(tmp_path, key, value):
    with pytest.raises(InputError, match=f"--{key.replace('_', '-')} must be"):
        Config().get(key, value)
    if key == "float_digits":
        return  # not a jury.toml key
    shown = {math.nan: "nan", math.inf: "inf"}.get(value, repr(value))
    (tmp_path / "jury.toml").write_text(f"{key} = {shown}\n")
    with pytest.raises(ConfigError, match=f"{key} must be"):
        load_config(tmp_path)


# (key, a bad value, what it must be): the rule written here by hand, not read from jury.options.values
ONE_RULE = [
    ("workers", 0, "must be at least 1"),
    ("workers", 2.0, "must be a whole number"),
    ("workers", True, "must be a whole number"),
    ("timeout", 0, "must be greater than 0"),
    ("timeout", "5", "must be a number"),
    ("near_miss", 1.5, "must be at most 1"),
    ("row_cap", 0, "must be at least 1"),
    ("max_cost", -1, "must be at least 0"),
    ("max_cost", math.inf, "must be a finite number"),
    ("quorum", 0, "must be at least 1"),
    ("seed", 0.5, "must be a whole number"),
]


@pytest.mark.parametrize("key, value, must", ONE_RULE)
def test_one_rule_for_the_flag_the_library_and_jury_toml(tmp_path, key, value, must):
    """A setting's rule is its type (jury.options.values): Project.get's flag check, the options model
    the library builds and jury.toml's validation say the same thing of the same bad value."""
    import jury
    from jury.options.adjudicate import AdjudicateOptions
    from jury.options.audit import AuditOptions
    from jury.options.score import ScoreOptions

    with pytest.raises(InputError, match=f"^--{key.replace('_', '-')} {must}, got "):
        Config().get(key, value)
    model = {"quorum": AuditOptions, "max_cost": AdjudicateOptions, "seed": AdjudicateOptions}.get(key, ScoreOptions)
    with pytest.raises(jury.InputError, match=f"^{key} {must}, got "):
        validated(model, "job", {key: value})
    shown = "inf" if value == math.inf else json.dumps(value)
    (tmp_path / "jury.toml").write_text(f"{key} = {shown}\n")
    with pytest.raises(ConfigError, match=f"jury.toml: {key} {must}, got "):
        load_config(tmp_path)


def test_jury_toml_vocabularies_and_kinds(tmp_path):
    for text, message in [
        ('executor = "dask"', "executor must be one of local, ray, got 'dask'"),
        ('gold_errors = "drop"', "gold_errors must be one of exclude, fail, got 'drop'"),
        ("databases = 3", "databases must be a table, got 3"),
        ("gold = 1", "gold must be a string, got 1"),
    ]:
        (tmp_path / "jury.toml").write_text(text + "\n")
        with pytest.raises(ConfigError, match=f"jury.toml: {message}$"):
            load_config(tmp_path)
    (tmp_path / "jury.toml").write_text('executor = "ray"\nworkers = 2\ntimeout = 1\n')
    config = load_config(tmp_path)
    assert config.get("executor") == "ray" and config.get("workers") == 2 and config.get("timeout") == 1


def test_valid_numbers_pass(tmp_path):
    (tmp_path / "jury.toml").write_text("timeout = 0.5\nnear_miss = 1\nmax_cost = 0\nrow_cap = 1\nseed = -3\n")
    cfg = load_config(tmp_path)
    assert cfg.get("timeout") == 0.5 and cfg.get("near_miss") == 1 and cfg.get("max_cost") == 0
    assert cfg.get("timeout", 2.0) == 2.0 and cfg.get("float_digits", 3) == 3


# ---------------------------------------------------------------- outputs never overwrite inputs (the library's guard)


def test_guard_outputs(tmp_path, monkeypatch):
    from jury.pipeline.outputs import guard_outputs

    basic_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "link.jsonl").symlink_to(tmp_path / "run.jsonl")
    os.link(tmp_path / "gold.json", tmp_path / "hard.json")
    for out in ("run.jsonl", "./sub/../run.jsonl", "sub/link.jsonl", "hard.json", "store.db-journal", "dbs/shop/shop.sqlite"):
        with pytest.raises(InputError, match="never overwrites"):
            guard_outputs([Path(out)], [Path("run.jsonl"), Path("gold.json")], store=Path("store.db"), db_root=Path("dbs"))
    guard_outputs([Path("new.txt"), None], [Path("run.jsonl")], store=Path("store.db"), db_root=Path("dbs"))
