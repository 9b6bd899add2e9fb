"""Hash-locked verdict files: lock, load, verify, schemas and `jury verify`."""

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import InputError, JuryError, VerdictError
from jury.verdicts.documents import AdjudicationFile, AuditFile, VerdictFile, schema_for
from jury.verdicts.lock import canonical_json, content_hash, default_path, load_locked, lock, write_locked
from jury.verdicts.verify import bind_file, verify_file
from tests.support.helpers import REPO, make_db

runner = CliRunner()


def make_inputs(root: Path) -> dict[str, Path]:
    """Gold, run, database, prompt and panel files under root/inputs; verdicts go to root/verdicts."""
    inp = root / "inputs"
    inp.mkdir(parents=True)
    files = {
        "gold": inp / "gold.json",
        "run": inp / "run.jsonl",
        "db": make_db(inp / "dbs"),
        "prompt": inp / "adjudicate.txt",
        "panel": inp / "panel.toml",
    }
    files["gold"].write_text('[{"question_id": 1, "db_id": "shop", "SQL": "SELECT 1"}]\n')
    files["run"].write_text('{"model": "m", "question_id": 1, "sql": "SELECT 2"}\n')
    files["prompt"].write_text("Question: {question}\n")
    files["panel"].write_text('name = "p"\n')
    return files


def vote(juror, **kw):
    return {"juror": juror, "family": f"fam-{juror}", "model": f"prov/{juror}", **kw}


def make_doc(kind: str, root: Path) -> dict:
    files = make_inputs(root)
    vdir = root / "verdicts"
    panel_file = bind_file(files["panel"], vdir)
    if kind == "adjudication":
        records = [
            {
                "question_id": 1,
                "db_id": "shop",
                "model": "m",
                "families": ["openai"],
                "jurors": ["a", "b", "c"],
                "verdict": "gold_defect",
                "credited": True,
                "votes": [
                    vote(
                        "a",
                        order="gold_first",
                        raw_verdict="answer_2",
                        category="gold_defect",
                        reasoning="The gold filters the wrong colour.",
                    ),
                    vote(
                        "b", order="candidate_first", raw_verdict="answer_1", category="gold_defect", reasoning="Gold is wrong."
                    ),
                    vote("c", skipped=True),
                ],
            },
            {
                "question_id": 2,
                "db_id": "shop",
                "model": "m",
                "families": ["openai"],
                "jurors": ["a", "b", "c"],
                "verdict": "undecided",
                "credited": False,
                "votes": [
                    vote("a", abstained=True, reason="unparseable"),
                    vote("b", category="genuine_error"),
                    vote("c", abstained=True, reason="failed after 3 retries"),
                ],
            },
        ]
    else:
        records = [
            {
                "question_id": 1,
                "db_id": "shop",
                "difficulty": "simple",
                "split": "dev",
                "jurors": ["a", "b"],
                "votes": [
                    vote(
                        "a",
                        raw_verdict="defective",
                        category="defective",
                        defect_type="wrong_filter",
                        reasoning="Évidence says red; ünïcode kept.",
                    ),
                    vote("b", raw_verdict="defective", category="defective", defect_type="wrong_filter"),
                ],
                "flagged": True,
                "decided": True,
                "defect_types": ["wrong_filter"],
            },
            {
                "question_id": 2,
                "db_id": "shop",
                "jurors": ["a", "b"],
                "flagged": False,
                "decided": True,
                "votes": [vote("a", abstained=True, reason="unparseable"), vote("b", category="valid")],
            },
        ]
    return {
        "$schema": f"schema/{kind}-v1.schema.json",
        "kind": kind,
        "jury_version": "0.1.0",
        "created_at": "2026-11-29T20:00:00Z",
        "inputs": {
            "gold": bind_file(files["gold"], vdir).model_dump(),
            "runs": [bind_file(files["run"], vdir).model_dump()] if kind == "adjudication" else [],
            "databases": {"shop": bind_file(files["db"], vdir).model_dump()},
        },
        "prompts": {kind: bind_file(files["prompt"], vdir).model_dump()},
        "panel": {
            "name": "p",
            "path": panel_file.path,
            "sha256": panel_file.sha256,
            "ballot_style": "blind",
            "k": 3,
            "quorum": "majority",
            "jurors": [{"name": "a", "model": "prov/a", "family": "fam-a", "params": {"temperature": 0}}],
        },
        "settings": {"comparator": "strict", "seed": 7, "early_stop": True, "near_miss": 0.5},
        "totals": {"calls": 5, "prompt_tokens": 1234, "completion_tokens": 321, "cost_usd": 0.0125},
        "summary": {"credited": 1, "by_verdict": {"gold_defect": 1, "undecided": 1}},
        "records": records,
    }


@pytest.fixture(params=["adjudication", "audit"])
def written(request, tmp_path):
    """(kind, path of a freshly written locked file, the document it was made from)."""
    doc = make_doc(request.param, tmp_path)
    path = write_locked(doc, tmp_path / "verdicts" / f"{request.param}.json")
    return request.param, path, doc


def test_round_trip(written):
    kind, path, doc = written
    loaded = load_locked(path)
    assert isinstance(loaded, {"adjudication": AdjudicationFile, "audit": AuditFile}[kind])
    assert isinstance(loaded, VerdictFile) and loaded.kind == kind
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text.endswith("}\n") and '\n  "content_sha256": "sha256:' in text  # pretty, indent 2
    assert list(data) == sorted(data)
    assert data["content_sha256"] == content_hash(data) == loaded.content_sha256
    assert data["records"][0]["votes"][0]["juror"] == "a" and len(loaded.records) == 2
    # locking the loaded model again gives the same lock: load/dump is lossless
    assert lock(loaded) == data
    assert lock(doc)["content_sha256"] == data["content_sha256"]
    if kind == "audit":
        assert "ünïcode" in text  # UTF-8, not \u escapes


def test_content_hash_is_the_canonical_sha256():
    import hashlib

    doc = {"b": [1, 2.5, "é"], "a": {"y": None, "x": True}, "content_sha256": "ignored"}
    body = b'{"a":{"x":true,"y":null},"b":[1,2.5,"\xc3\xa9"]}'
    assert canonical_json({k: v for k, v in doc.items() if k != "content_sha256"}) == body
    assert content_hash(doc) == "sha256:" + hashlib.sha256(body).hexdigest()
    with pytest.raises(VerdictError, match="not canonical JSON"):
        content_hash({"x": float("nan")})


@pytest.mark.parametrize("indent", [None, 0, 7, "\t"])
def test_hash_is_independent_of_formatting(written, indent):
    _, path, _ = written
    data = json.loads(path.read_text(encoding="utf-8"))
    reordered = dict(reversed(list(data.items())))
    path.write_text(json.dumps(reordered, indent=indent, ensure_ascii=True), encoding="utf-8")
    assert load_locked(path).content_sha256 == data["content_sha256"]
    assert verify_file(path).ok


def mutate(text: str, i: int) -> str:
    c = text[i]
    new = str((int(c) + 1) % 10) if c.isdigit() else ("y" if c == "x" else "x")
    return text[:i] + new + text[i + 1 :]


def test_every_single_byte_change_is_caught(written):
    """Change each letter or digit of the file in turn: the file never loads again."""
    _, path, _ = written
    original = path.read_text(encoding="utf-8")
    parsed = json.loads(original)
    tried = 0
    for i, c in enumerate(original):
        if not c.isalnum():
            continue
        changed = mutate(original, i)
        path.write_text(changed, encoding="utf-8")
        with pytest.raises(JuryError) as err:
            load_locked(path)
        assert str(path) in str(err.value)
        try:
            still_json = json.loads(changed)
        except ValueError:
            continue
        if still_json != parsed and "content_sha256" in still_json:
            # a format_version no jury wrote is refused before the hash (it names the canonical form)
            reason = "content hash mismatch" if still_json.get("format_version", 2) in (1, 2) else "format_version"
            assert reason in str(err.value), (i, c, str(err.value))
        tried += 1
    assert tried > 500


@pytest.mark.parametrize(
    "old, new",
    [
        ("The gold filters the wrong colour.", "The gold filters the wrong colour!"),
        ("Gold is wrong.", "Gold is wrony."),
        ('"cost_usd": 0.0125', '"cost_usd": 0.0126'),
        ('"credited": true', '"credited": false'),
        ('"k": 3', '"k": 4'),
    ],
)
def test_changed_value_fails_load_verify_and_cli(tmp_path, old, new):
    path = write_locked(make_doc("adjudication", tmp_path), tmp_path / "verdicts" / "v.json")
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(VerdictError, match="content hash mismatch: the file was changed after it was locked") as err:
        load_locked(path)
    assert str(err.value).startswith(f"{path}: ")
    report = verify_file(path)
    assert not report.ok and not report.lock_ok and "content hash mismatch" in report.messages[0]
    res = runner.invoke(app, ["verify", str(path)])
    assert res.exit_code == 1 and f"FAILED {path}: content hash mismatch" in res.output


def test_missing_lock_fails(written):
    _, path, _ = written
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["content_sha256"]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(VerdictError, match=re.escape(f"{path}: not locked: no content_sha256")):
        load_locked(path)
    assert not verify_file(path).ok
    res = runner.invoke(app, ["verify", str(path)])
    assert res.exit_code == 1 and str(path) in res.output


def test_bad_json_names_file_and_line(tmp_path):
    path = tmp_path / "v.json"
    path.write_text('{\n  "kind": "audit",\n  "x": \n}\n')
    with pytest.raises(VerdictError, match=re.escape(f"{path}:4: malformed JSON")):
        load_locked(path)
    path.write_text('{"kind": "audit", "kind": "adjudication"}')
    with pytest.raises(VerdictError, match="duplicate key 'kind'"):
        load_locked(path)
    path.write_text('{"x": NaN}')
    with pytest.raises(VerdictError, match="NaN is not JSON"):
        load_locked(path)


def test_write_locked_never_overwrites(tmp_path):
    doc = make_doc("audit", tmp_path)
    path = write_locked(doc, tmp_path / "verdicts" / "a.json")
    before = path.read_bytes()
    doc["summary"] = {"changed": True}
    with pytest.raises(
        VerdictError, match=re.escape(f"{path}: already exists; a locked verdict file is never rewritten: write a new file")
    ):
        write_locked(doc, path)
    assert path.read_bytes() == before
    other = tmp_path / "verdicts" / "notes.json"
    other.write_text("mine")
    with pytest.raises(VerdictError, match="never rewritten"):
        write_locked(doc, other)
    assert other.read_text() == "mine"
    assert sorted(p.name for p in path.parent.iterdir()) == ["a.json", "notes.json"]  # no staged leftovers


def test_invalid_document_is_never_written(tmp_path):
    doc = make_doc("adjudication", tmp_path)
    doc["records"][0]["verdict"] = "guilty"
    with pytest.raises(VerdictError, match=r"records\.0\.verdict: Input should be"):
        write_locked(doc, tmp_path / "v.json")
    assert not (tmp_path / "v.json").exists()


def test_kind_and_records_must_match(tmp_path):
    adj = make_doc("adjudication", tmp_path / "a")
    aud = make_doc("audit", tmp_path / "b")
    mixed = {**adj, "records": aud["records"]}
    with pytest.raises(VerdictError, match=r"records\.0\."):
        lock(mixed)
    with pytest.raises(ValidationError, match="not an adjudication record"):
        VerdictFile.model_validate(mixed)
    # a locked file whose kind was flipped fails the lock; relocked by hand, the validation
    path = write_locked(adj, tmp_path / "v.json")
    data = json.loads(path.read_text())
    data["kind"] = "audit"
    data["content_sha256"] = content_hash(data)
    path.write_text(json.dumps(data))
    with pytest.raises(VerdictError, match=rf"^{re.escape(str(path))}: records\.0\.") as err:
        load_locked(path)
    assert "more errors" in str(err.value)
    with pytest.raises(VerdictError, match="kind: Input tag 'verdicts'"):
        lock({**adj, "kind": "verdicts"})


def test_duplicate_records_rejected(tmp_path):
    doc = make_doc("adjudication", tmp_path)
    doc["records"][1]["question_id"] = "1"  # the same question as 1
    with pytest.raises(VerdictError, match=r"records\.1 repeats records\.0"):
        lock(doc)


def test_verify_rehashes_bound_inputs(tmp_path, monkeypatch):
    path = write_locked(make_doc("adjudication", tmp_path), tmp_path / "verdicts" / "v.json")
    monkeypatch.chdir(tmp_path / "inputs")  # bound paths resolve against the verdict file's folder
    report = verify_file(path)
    assert report.ok and report.lock_ok and len(report.checked) == 5 and report.absent == []
    res = runner.invoke(app, ["verify", str(path)])
    assert res.exit_code == 0 and res.output == f"OK {path} (5 inputs checked, 0 absent)\n"

    (tmp_path / "inputs" / "run.jsonl").unlink()
    report = verify_file(path)
    assert report.ok and report.absent == ["runs[0] ../inputs/run.jsonl"] and len(report.checked) == 4

    with open(tmp_path / "inputs" / "dbs" / "shop" / "shop.sqlite", "ab") as fh:
        fh.write(b"\0")
    (tmp_path / "inputs" / "gold.json").write_text('[{"question_id": 1, "db_id": "shop", "SQL": "SELECT 2"}]\n')
    report = verify_file(path)
    assert not report.ok and report.lock_ok
    assert report.mismatched == ["gold ../inputs/gold.json", "databases[shop] ../inputs/dbs/shop/shop.sqlite"]
    assert "gold ../inputs/gold.json changed after the verdicts were made" in report.messages[0]
    res = runner.invoke(app, ["verify", str(path)])
    assert res.exit_code == 1
    assert f"FAILED {path}: gold ../inputs/gold.json changed" in res.output
    assert f"failed verification: {path}" in res.output

    # base_dir: resolve against another folder, where nothing is bound: all absent, ok
    report = verify_file(path, base_dir=tmp_path / "elsewhere")
    assert report.ok and report.checked == [] and len(report.absent) == 5


def test_bind_file_paths(tmp_path):
    f = make_inputs(tmp_path)["db"]
    inside = bind_file(f, tmp_path)
    assert inside.path == "inputs/dbs/shop/shop.sqlite" and len(inside.sha256) == 64
    assert bind_file(f, tmp_path / "verdicts").path == "../inputs/dbs/shop/shop.sqlite"
    with pytest.raises(InputError, match="nope.json: no such file"):
        bind_file(tmp_path / "nope.json", tmp_path)


def test_default_path(tmp_path):
    first = default_path("adjudication", tmp_path, "2026-11-29T20:00:00Z")
    assert first == tmp_path / "adjudication-20261129T200000Z.json"
    first.write_text("x")
    second = default_path("adjudication", tmp_path, "2026-11-29T21:00:00+01:00")
    assert second.name == "adjudication-20261129T200000Z-2.json"
    second.write_text("x")
    assert default_path("adjudication", tmp_path, "2026-11-29T20:00:00Z").name.endswith("Z-3.json")
    assert default_path("audit", tmp_path, "2026-11-29T20:00:00Z").name == "audit-20261129T200000Z.json"


@pytest.mark.parametrize("kind", ["adjudication", "audit"])
def test_committed_schema_is_generated_and_validates(kind, tmp_path):
    committed = REPO / "verdicts" / "schema" / f"{kind}-v2.schema.json"
    expected = json.dumps(schema_for(kind), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert committed.read_text(encoding="utf-8") == expected, "run jury.verdicts.documents.write_schemas('verdicts/schema')"
    schema = json.loads(expected)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    path = write_locked(make_doc(kind, tmp_path), tmp_path / "verdicts" / "v.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    validator.validate(data)
    assert (path.parent / data["$schema"]).name == committed.name
    bad = json.loads(json.dumps(data))
    bad["records"][0]["votes"][0]["surprise"] = 1
    assert not validator.is_valid(bad)
    assert not validator.is_valid({**data, "kind": "audit" if kind == "adjudication" else "adjudication"})


def test_readme_snippet_verifies_by_hand(written):
    _, path, _ = written
    readme = (REPO / "verdicts" / "README.md").read_text(encoding="utf-8")
    snippet = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    assert len(snippet.strip().splitlines()) <= 5

    def run() -> str:
        return subprocess.run([sys.executable, "-c", snippet, str(path)], capture_output=True, text=True, check=True).stdout

    assert run() == "OK\n"
    path.write_text(path.read_text(encoding="utf-8").replace('"seed": 7', '"seed": 8'), encoding="utf-8")
    assert run() == "CHANGED\n"


def test_cli_verify_several_files_missing_and_quiet(tmp_path):
    good = write_locked(make_doc("audit", tmp_path / "a"), tmp_path / "a" / "verdicts" / "good.json")
    bad = write_locked(make_doc("adjudication", tmp_path / "b"), tmp_path / "b" / "verdicts" / "bad.json")
    bad.write_text(bad.read_text().replace('"seed": 7', '"seed": 9'))
    res = runner.invoke(app, ["verify", str(good), str(bad)])
    assert res.exit_code == 1
    assert f"OK {good} (4 inputs checked, 0 absent)" in res.output
    assert f"FAILED {bad}: content hash mismatch" in res.output
    assert f"1 of 2 verdict files failed verification: {bad}" in res.output and str(good) not in res.output.splitlines()[-1]
    res = runner.invoke(app, ["verify", "--quiet", str(good)])
    assert res.exit_code == 0 and res.output == ""
    res = runner.invoke(app, ["verify", str(good), str(tmp_path / "nope.json")])
    assert res.exit_code == 1 and res.output == f"Error: {tmp_path / 'nope.json'}: no such file\n"
    assert "Traceback" not in res.output
