"""Table-driven bad-input cases: each runs the real `jury` command (jury.cli.main, in this
process: tests/support/clirun.py).

A case builds its files in a fresh folder, runs one command there and expects exactly
one line on stderr, starting "Error: " and containing `message`, no traceback, and the
given exit code (1 unless said otherwise). Files named in `unchanged` must keep their
bytes (outputs never destroy inputs). The suites `tests/test_bad_input_*.py` hold the
tables; `collect_ids` lists every case so the count can be reported.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.clirun import run_jury_inprocess
from tests.support.helpers import make_db, write_gold, write_runs

DEFAULT_RUN = [
    {"model": "m", "question_id": 1, "sql": "SELECT name FROM item WHERE colour = 'red'"},
    {"model": "m", "question_id": 3, "sql": "SELECT 0"},
]


@dataclass
class Case:
    id: str
    args: Sequence[str]
    message: str
    setup: Callable[[Path], None] | None = None
    code: int = 1
    unchanged: Sequence[str] = field(default_factory=tuple)
    timeout: float = 120
    env: dict[str, str] = field(default_factory=dict)
    # run in a child process: the case depends on the process itself (its import path, a Ray runtime)
    process: bool = False


def basic_project(tmp: Path) -> Path:
    """dbs/shop/shop.sqlite, gold.json, run.jsonl and a jury.toml pointing at them."""
    make_db(tmp / "dbs")
    write_gold(tmp)
    write_runs(tmp, DEFAULT_RUN)
    (tmp / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    return tmp


def run_jury(
    args: Sequence[str], cwd: Path, *, timeout: float = 120, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess:
    """`python -m jury *args` in cwd, run in this process (timeout applies to run_jury_process only)."""
    return run_jury_inprocess(args, cwd, env=env, stdin=stdin)


def run_jury_process(
    args: Sequence[str], cwd: Path, *, timeout: float = 120, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess:
    """`python -m jury *args` in a child process, for tests of the process itself."""
    full_env = dict(os.environ, COLUMNS="200", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "jury", *args], cwd=cwd, capture_output=True, text=True, env=full_env, timeout=timeout, input=stdin
    )


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def check_case(case: Case, tmp: Path) -> subprocess.CompletedProcess:
    basic_project(tmp)
    if case.setup is not None:
        case.setup(tmp)
    before = {name: _digest(tmp / name) for name in case.unchanged}
    run = run_jury_process if case.process else run_jury
    proc = run(case.args, tmp, timeout=case.timeout, env=case.env)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert proc.returncode == case.code, (proc.returncode, proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("Error: "), lines[0]
    assert case.message in lines[0], (case.message, lines[0])
    for name, digest in before.items():
        assert _digest(tmp / name) == digest, f"{name} was changed"
    return proc


def locked_audit(
    tmp: Path, name="a.json", *, flagged_q1=False, qid=1, supersedes=None, panel_path=None, gold="gold.json"
) -> Path:
    """A locked audit file for basic_project: three jurors who all said valid (or flagged question 1),
    written by the library's writer, no calls."""
    from jury.verdicts.lock import write_locked
    from jury.verdicts.verify import bind_file

    vdir = tmp / "verdicts"
    votes = [
        {"juror": j, "family": f"fam-{j}", "model": f"openai/{j}", "raw_verdict": "valid", "category": "valid"}
        for j in ("a", "b", "c")
    ]
    doc = {
        "$schema": "schema/audit-v1.schema.json",
        "kind": "audit",
        "jury_version": "test",
        "created_at": "2026-11-29T20:00:00Z",
        "supersedes": supersedes,
        "inputs": {
            "gold": bind_file(tmp / gold, vdir).model_dump(),
            "databases": {"shop": bind_file(tmp / "dbs" / "shop" / "shop.sqlite", vdir).model_dump()},
        },
        "prompts": {},
        "settings": {"quorum": None},
        "panel": {
            "name": "p",
            "ballot_style": "audit",
            "k": 3,
            "jurors": [],
            "path": panel_path,
            "sha256": "0" * 64 if panel_path else None,
        },
        "totals": {},
        "records": [
            {
                "question_id": qid,
                "db_id": "shop",
                "jurors": ["a", "b", "c"],
                "votes": votes,
                "flagged": flagged_q1,
                "decided": True,
            }
        ],
    }
    return write_locked(doc, vdir / name)
