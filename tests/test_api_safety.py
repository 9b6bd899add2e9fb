"""The library refuses what the command line refuses: a notebook can never publish what
`jury score` or `jury report` would not. Every check below calls only the public API
(`import jury`); the locked files it is given are written (and forged) by hand the way a
careless or dishonest editor would, with no juror called."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import jury
from tests.support.badinput import basic_project, locked_audit
from tests.support.helpers import GOLD, write_runs


@pytest.fixture
def shop(tmp_path, monkeypatch):
    """badinput's basic project (dbs/shop, gold.json, run.jsonl, jury.toml) as the working directory."""
    basic_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def content_sha256(path: Path) -> str:
    return json.loads(path.read_text())["content_sha256"]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------ the gold binding


def test_an_audit_of_another_gold_file_is_refused(shop):
    locked_audit(shop, "other.json", qid=99)  # audits a question this gold does not have
    for job in (jury.score, jury.report):
        with pytest.raises(jury.InputError, match="audits question 99, which is not in the gold file given now"):
            job("run.jsonl", audit="verdicts/other.json")
    # an audit without gold keys is bound to the gold file's bytes: the same questions in other bytes are refused
    locked_audit(shop, "legacy.json")
    assert jury.score("run.jsonl", audit="verdicts/legacy.json").scores[0].gold_clean is not None
    (shop / "gold2.json").write_text(json.dumps(GOLD, indent=2))
    for job in (jury.score, jury.report):
        with pytest.raises(jury.InputError, match=r"gold file \(bound .*gold.json\) differs from the one it bound"):
            job("run.jsonl", gold="gold2.json", audit="verdicts/legacy.json")
    # given to a report of a score, the audit is checked against the score's gold
    ev = jury.score("run.jsonl", gold="gold2.json")
    with pytest.raises(jury.InputError, match="differs from the one it bound"):
        jury.report(ev, audit="verdicts/legacy.json")


# ------------------------------------------------------------------ superseded files


def test_a_superseded_verdict_file_is_refused_unless_allowed(shop):
    old = locked_audit(shop, "a.json")
    locked_audit(shop, "b.json", supersedes=content_sha256(old))
    for job in (jury.score, jury.report):
        with pytest.raises(jury.JuryError, match="a.json: superseded by verdicts/b.json"):
            job("run.jsonl", audit="verdicts/a.json")
    ev = jury.score("run.jsonl")
    with pytest.raises(jury.JuryError, match="superseded by"):
        jury.report(ev, audit="verdicts/a.json")
    allowed = jury.score("run.jsonl", audit="verdicts/a.json", allow_superseded=True)
    assert allowed.scores[0].gold_clean is not None
    assert jury.report(allowed).models[0].gold_clean is not None  # the score's files, checked when it read them
    assert jury.report("run.jsonl", audit="verdicts/a.json", allow_superseded=True).models[0].gold_clean is not None


# ------------------------------------------------------------------ verdicts follow from the votes


def test_a_verdict_its_votes_do_not_give_is_refused_even_with_a_fresh_lock(shop):
    locked_audit(shop, "forged.json", flagged_q1=True)  # flagged, though all three jurors said valid; locked anew
    for job in (jury.score, jury.report):
        with pytest.raises(jury.JuryError, match=r"records\.0 \(question 1\): flagged=True.*must follow from the votes"):
            job("run.jsonl", audit="verdicts/forged.json")


def test_a_verdict_file_changed_after_its_lock_is_refused(shop):
    path = locked_audit(shop)
    path.write_text(path.read_text().replace('"fam-a"', '"fam-z"'))
    for job in (jury.score, jury.report):
        with pytest.raises(jury.JuryError, match="content hash mismatch"):
            job("run.jsonl", audit=path)


# ------------------------------------------------------------------ outputs never overwrite inputs


def test_results_are_never_written_over_an_input(shop):
    audit = locked_audit(shop)
    spare = locked_audit(shop, "spare.json")  # a locked verdict file the job did not read
    ev = jury.score("run.jsonl", audit=audit)
    rep = jury.report(ev)
    protected = {
        "run.jsonl": "the input file",
        "gold.json": "the input file",
        str(audit): "the input file",
        ".jury/store.db": "the store",
        "dbs/shop/shop.sqlite": "the database file",
        str(spare): "locked verdict file",
    }
    before = {name: digest(shop / name) for name in protected}
    for name, role in protected.items():
        for write in (ev.write, rep.write, ev.write_per_question):
            with pytest.raises(jury.InputError, match=role):
                write(name)
    assert {name: digest(shop / name) for name in protected} == before
    with pytest.raises(jury.InputError, match="holds the input"):
        rep.write_site("verdicts")
    assert not (shop / "verdicts" / "index.html").exists()
    assert ev.write("out/score.csv").read_text() == ev.to_csv()  # anywhere else: written
    assert rep.write("out/report.json").read_text() == rep.to_json()


def test_declared_outputs_are_refused_before_any_work(shop):
    write_runs(shop, [{"model": "m", "question_id": 1, "sql": "SELECT 1"}], name="other.jsonl")
    for job in (jury.score, jury.report):
        with pytest.raises(jury.InputError, match="run.jsonl: is the input file"):
            job("run.jsonl", outputs=["run.jsonl"])
        with pytest.raises(jury.InputError, match="the store"):
            job("run.jsonl", store="s.db", outputs=["s.db"])
    assert not (shop / ".jury").exists() and not (shop / "s.db").exists()  # refused before the store was opened
    with pytest.raises(jury.InputError, match="holds the input"):
        jury.report("run.jsonl", site_dir=".")


# ------------------------------------------------------------------ the row cap


def test_a_comparison_the_row_cap_leaves_undecided_is_refused_or_left_unscored(shop):
    # question 2's gold has 4 rows: over a row cap of 2 only digests are kept
    write_runs(shop, [{"model": "m", "question_id": 2, "sql": "SELECT upper(name) FROM item ORDER BY price"}])
    for comparator in ("relaxed", "subset"):
        for job in (jury.score, jury.report):
            with pytest.raises(jury.InputError, match=r"cannot be decided by the \w+ comparator.*row cap \(2"):
                job("run.jsonl", row_cap=2, comparator=comparator)
    with pytest.raises(jury.InputError, match="cannot be decided"):
        jury.score("run.jsonl", row_cap=2, casefold=True)
    # the chosen comparator decides by digest; a side comparator that cannot is not scored rather than guessed
    (s,) = jury.score("run.jsonl", row_cap=2).scores
    assert s.strict["k"] == 0 and "bird" in s.comparators and "relaxed" not in s.comparators
    (s,) = jury.score("run.jsonl", row_cap=10).scores
    assert "relaxed" in s.comparators  # under the cap every comparator decides
