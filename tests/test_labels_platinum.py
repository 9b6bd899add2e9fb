"""`jury labels import platinum` (a corrected gold file in BIRD's dev.json shape) and the
arcwise import: a changed SQL is a defect only when its result changes under the comparator.

The expected labels are derived here by executing the original and the corrected query with
sqlite3 directly on the bundled superhero database (the bird comparator: the rows as a set)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import InputError
from jury.inputs.labels import load_labels
from jury.jobs.labels import import_labels
from jury.pipeline.project import Project
from tests.support.helpers import EXAMPLE, SHARED_BIRD

DB = EXAMPLE / "databases" / "superhero" / "superhero.sqlite"
ARCWISE = SHARED_BIRD / "corrections" / "arcwise_mini_dev_cleaned.json"
MINI_DEV = SHARED_BIRD / "mini-dev" / "data" / "mini_dev_sqlite.json"
runner = CliRunner()


def rows(sql: str) -> set[tuple]:
    """The bird comparator's view of a result, from sqlite3 itself (read-only)."""
    with sqlite3.connect(f"file:{DB}?mode=ro", uri=True) as conn:
        return set(conn.execute(sql).fetchall())


def original() -> dict[int, dict]:
    return {item["question_id"]: item for item in json.loads((EXAMPLE / "dev.json").read_text())}


# 722: a real fix (the eye colour instead of the skin colour: another result); 717: an alias
# added (format only); 721: a CAST added (format only: 3 equals 3.0); 718: whitespace only; 719: unchanged
REAL_FIX = (
    "SELECT T2.colour FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id "
    "WHERE T1.superhero_name = 'Apocalypse'"
)


def corrected_file(tmp_path: Path) -> Path:
    items = original()
    fixed = {q: dict(items[q]) for q in (717, 718, 719, 720, 721, 722)}
    fixed[717]["SQL"] = fixed[717]["SQL"].replace("SELECT T3.power_name", "SELECT T3.power_name AS power")
    fixed[718]["SQL"] = fixed[718]["SQL"].replace(" FROM ", "\n   FROM ") + ";"
    fixed[720]["SQL"] = fixed[720]["SQL"].replace("SELECT DISTINCT T1.full_name", "SELECT DISTINCT T1.full_name AS name")
    fixed[720]["question"] += " Give their full names."
    fixed[721]["SQL"] = fixed[721]["SQL"].replace("SELECT COUNT(T1.id)", "SELECT CAST(COUNT(T1.id) AS REAL)")
    fixed[722]["SQL"] = REAL_FIX
    path = tmp_path / "platinum_dev.json"
    path.write_text(json.dumps(list(fixed.values())))
    return path


def expected(path: Path, gold: Path = EXAMPLE / "dev.json") -> dict[int, bool]:
    """question id -> defective, by hand: the SQL changed (beyond whitespace) and sqlite3's rows
    differ, or the question was reworded (an equal result then leaves the rewording)."""
    before = {item["question_id"]: item for item in json.loads(gold.read_text())}
    got = {}
    for item in json.loads(path.read_text()):
        if item["question_id"] not in before:
            continue
        was = before[item["question_id"]]
        old, new = was["SQL"], item["SQL"]
        changed = " ".join(old.split()).rstrip(";") != " ".join(new.split()).rstrip(";")
        got[item["question_id"]] = (changed and rows(old) != rows(new)) or was["question"] != item["question"]
    return got


def test_independent_source_sees_the_three_kinds(tmp_path):
    path = corrected_file(tmp_path)
    before = original()
    assert rows(before[722]["SQL"]) != rows(REAL_FIX)  # the real fix changes the result
    new = {item["question_id"]: item["SQL"] for item in json.loads(path.read_text())}
    assert all(rows(before[q]["SQL"]) == rows(new[q]) for q in (717, 721))  # format only
    assert new[717] != before[717]["SQL"] and new[721] != before[721]["SQL"]
    assert rows(before[720]["SQL"]) == rows(new[720]) and new[720] != before[720]["SQL"]  # format only, but reworded
    assert expected(path) == {717: False, 718: False, 719: False, 720: True, 721: False, 722: True}


def test_platinum_labels_only_result_changes(tmp_path):
    path = corrected_file(tmp_path)
    found = import_labels(
        "platinum", [path], gold=EXAMPLE / "dev.json", store=tmp_path / "store.db", project=Project.load(EXAMPLE)
    )
    got = {lab.question_id: lab.gold_defective for lab in found.labels}
    assert got == expected(path)
    by_q = {lab.question_id: lab for lab in found.labels}
    assert by_q[722].corrected_sql == REAL_FIX and "result differs under bird" in (by_q[722].note or "")
    for q in (717, 721):
        assert by_q[q].defect_type is None and by_q[q].corrected_sql is None
        assert (by_q[q].note or "").startswith("format-only change")
    assert by_q[718].note is None and by_q[719].note is None  # whitespace aside: unchanged
    assert by_q[720].defect_type == "ambiguous_question" and by_q[720].corrected_sql is None
    assert (by_q[720].note or "").startswith("format-only change") and "question reworded" in (by_q[720].note or "")
    assert {lab.source for lab in found.labels} == {"platinum:platinum_dev.json"}
    assert {lab.annotator for lab in found.labels} == {"platinum_dev"}
    assert found.counts["SQL changed, same result (format-only)"] == 3
    assert found.counts["SQL changed, result differs"] == 1
    out = tmp_path / "labels.jsonl"
    found.write(out)
    assert {g.question_id: g.gold_defective for g in load_labels([out]).gold} == expected(path)


def test_a_strict_comparator_sees_the_alias_and_cast_alike(tmp_path):
    """strict compares the rows (in order when the item says so), not the column names: the
    alias and the CAST stay format-only, as sqlite3's rows say."""
    path = corrected_file(tmp_path)
    found = import_labels(
        "platinum",
        [path],
        gold=EXAMPLE / "dev.json",
        store=tmp_path / "store.db",
        comparator="strict",
        project=Project.load(EXAMPLE),
    )
    assert {lab.question_id: lab.gold_defective for lab in found.labels} == expected(path)
    assert "under strict" in (next(lab for lab in found.labels if lab.question_id == 722).note or "")


def test_cli_writes_the_labels(tmp_path, monkeypatch):
    path = corrected_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "labels.jsonl"
    res = runner.invoke(
        app,
        ["labels", "import", "platinum", str(path), "--gold", str(EXAMPLE / "dev.json"), "--db-root",
         str(EXAMPLE / "databases"), "--store", str(tmp_path / "store.db"), "-o", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "SQL changed, same result (format-only): 3" in res.output
    assert {g.question_id: g.gold_defective for g in load_labels([out]).gold} == expected(path)


def test_a_missing_database_is_one_line(tmp_path, monkeypatch):
    path = corrected_file(tmp_path)
    empty = tmp_path / "no-dbs"
    empty.mkdir()
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(
        app,
        ["labels", "import", "platinum", str(path), "--gold", str(EXAMPLE / "dev.json"), "--db-root", str(empty),
         "--store", str(tmp_path / "store.db")],
    )  # fmt: skip
    assert res.exit_code == 1
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "'superhero'" in lines[0] and str(empty) in lines[0], res.output
    with pytest.raises(InputError, match="no database file for db_id 'superhero'"):
        import_labels("platinum", [path], gold=EXAMPLE / "dev.json", db_root=empty, store=tmp_path / "s.db")


def test_platinum_refuses_another_db_id(tmp_path):
    items = original()
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([dict(items[717], db_id="financial")]))
    with pytest.raises(InputError, match="question 717: db_id 'financial', the original gold's is 'superhero'"):
        import_labels("platinum", [path], gold=EXAMPLE / "dev.json", store=tmp_path / "s.db", project=Project.load(EXAMPLE))


needs_arcwise = pytest.mark.skipif(
    not (ARCWISE.is_file() and MINI_DEV.is_file() and (SHARED_BIRD / "dev.json").is_file()),
    reason="../shared Arcwise corrections not present",
)


@needs_arcwise
def test_arcwise_743_dropped_cast_is_not_defective(tmp_path):
    cleaned = {item["question_id"]: item for item in json.loads(ARCWISE.read_text())}
    mini = {item["question_id"]: item for item in json.loads(MINI_DEV.read_text())}
    assert 743 in original()  # the bundled superhero database covers question 743
    old, new = mini[743]["SQL"], cleaned[743]["SQL"]
    assert "CAST(SUM" in old and "CAST(SUM" not in new and rows(old) == rows(new)  # by hand: equal result
    found = import_labels(
        "arcwise",
        [ARCWISE],
        gold=SHARED_BIRD / "dev.json",
        original=MINI_DEV,
        db_root=EXAMPLE / "databases",
        store=tmp_path / "store.db",
        project=Project.load(tmp_path),
    )
    by_q = {lab.question_id: lab for lab in found.labels}
    assert by_q[743].gold_defective is False and (by_q[743].note or "").startswith("format-only change")
    # every other changed superhero SQL: defective exactly when sqlite3's rows differ
    for q, item in cleaned.items():
        if item["db_id"] == "superhero" and " ".join(item["SQL"].split()) != " ".join(mini[q]["SQL"].split()):
            reworded = any(" ".join(item[k].split()) != " ".join(mini[q][k].split()) for k in ("question", "evidence"))
            assert by_q[q].gold_defective == (rows(mini[q]["SQL"]) != rows(item["SQL"]) or reworded), q
    # the changes on databases not here stay defective, noted
    elsewhere = [lab for lab in found.labels if "not executed" in (lab.note or "")]
    assert elsewhere and all(lab.gold_defective and lab.corrected_sql for lab in elsewhere)
    assert found.counts["SQL changed, not executed (no database)"] == len(elsewhere)


@pytest.mark.slow
def test_calibrate_audit_measures_the_panel_against_the_imported_labels(tmp_path, monkeypatch, fake_llm):
    """A scripted panel flags 717 (the alias) and 722 (the real fix): against the platinum
    labels (722 defective only) its precision is 1/2 and its recall 1/1, by hand."""
    import re

    from jury.results.calibration.compute import calibrate
    from jury.verdicts.lock import load_locked
    from tests.support.fakellm import json_reply
    from tests.support.jurytest import user_text, write_panel

    items = original()
    subset = [items[q] for q in (717, 718, 719, 721, 722)]
    (tmp_path / "dev.json").write_text(json.dumps(subset))
    (tmp_path / "jury.toml").write_text(f'gold = "dev.json"\ndb_root = "{EXAMPLE / "databases"}"\nworkers = 1\n')
    monkeypatch.chdir(tmp_path)
    by_text = {item["question"]: item["question_id"] for item in subset}
    flagged = {717, 722}

    def respond(req):
        q = by_text[re.search(r"<question>\n(.*?)\n</question>", user_text(req), re.S).group(1)]
        bad = q in flagged
        return json_reply(
            {"reasoning": "scripted", "verdict": "defective" if bad else "valid", "defect_type": "other" if bad else None}
        )

    jurors = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google")]
    for name, _ in jurors:
        fake_llm.script(name, respond)
    panel = write_panel(tmp_path, fake_llm.base_url, jurors, style="audit", k=3, name="audit.toml")
    res = runner.invoke(app, ["audit-gold", "dev.json", "--panel", str(panel)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    apath = next((tmp_path / "verdicts").glob("audit-*.json"))
    res = runner.invoke(app, ["labels", "import", "platinum", str(corrected_file(tmp_path)), "-o", "labels.jsonl"])
    assert res.exit_code == 0, res.output
    cal = calibrate(load_labels([tmp_path / "labels.jsonl"]), audits=[(apath, load_locked(apath))])
    figures = {
        f.metric: f.value
        for f in cal.figures
        if (f.section, f.subject) == ("audit", "panel") and f.metric in ("precision (flagged)", "recall (flagged)")
    }
    assert figures == {"precision (flagged)": pytest.approx(1 / 2), "recall (flagged)": pytest.approx(1.0)}
    res = runner.invoke(app, ["calibrate", "--labels", "labels.jsonl", "--audit", str(apath)])
    assert res.exit_code == 0, res.output
