"""`jury.verify`: the library's verification of locked verdict files, as `jury verify` prints it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import jury
from tests.support.jurytest import adjudicate_project


@pytest.fixture
def adjudicated(tmp_path, monkeypatch, fake_llm):
    """verdicts/adj.json, locked by `jury adjudicate` against the loopback panel."""
    monkeypatch.chdir(tmp_path)
    return adjudicate_project(tmp_path, fake_llm, "genuine_error")


def cli_verify(*args: str):
    from jury.cli import app

    return CliRunner().invoke(app, ["verify", *args])


def test_an_honest_file_verifies_and_renders_what_the_cli_prints(adjudicated):
    result = jury.verify("verdicts/adj.json")
    assert isinstance(result, jury.Verification)
    assert result.ok and result.exit_code == 0 and result.failure is None
    (check,) = result.files
    assert check.ok and check.lock_ok and len(check.checked) == 5 and check.absent == [] and check.problems == []
    assert result.render() == "OK verdicts/adj.json (5 inputs checked, 0 absent)\n"
    res = cli_verify("verdicts/adj.json")
    assert res.exit_code == 0 and res.stdout == result.render()
    assert json.loads(result.to_json())["ok"] is True
    assert jury.verify("verdicts/adj.json", quiet=True).render() == ""  # quiet: only the files that fail


def test_a_tampered_file_is_refused(adjudicated):
    adj = adjudicated / "verdicts" / "adj.json"
    data = json.loads(adj.read_text())
    data["records"][0]["verdict"] = "ambiguous"  # changed after the lock, which is not recomputed
    (adjudicated / "verdicts" / "forged.json").write_text(json.dumps(data))
    result = jury.verify(["verdicts/adj.json", "verdicts/forged.json"], quiet=True)
    assert not result.ok and result.exit_code == 1
    assert [f.ok for f in result.files] == [True, False]
    assert "content hash mismatch" in result.files[1].problems[0]
    assert result.render().startswith("FAILED verdicts/forged.json: content hash mismatch")
    assert result.failure == "1 of 2 verdict files failed verification: verdicts/forged.json"
    res = cli_verify("verdicts/adj.json", "verdicts/forged.json", "-q")
    assert res.exit_code == 1 and res.stdout == result.render() and result.failure in res.stderr


def test_a_changed_bound_input_fails_the_file(adjudicated):
    runs = adjudicated / "run.jsonl"
    runs.write_text(runs.read_text() + "\n")
    result = jury.verify("verdicts/adj.json")
    assert not result.ok and any(
        "runs[0] ../run.jsonl changed after the verdicts were made" in p for p in result.files[0].problems
    )


def test_a_trusted_key_requires_a_signature(adjudicated):
    from test_signing import make_key

    key = make_key(adjudicated / "keys", "alice")
    result = jury.verify("verdicts/adj.json", trusted_key=f"{key}.pub")
    assert not result.ok and "no signature" in result.files[0].signature


def test_without_paths_every_file_in_the_projects_verdicts_folder_is_verified(adjudicated):
    (adjudicated / "jury.toml").write_text((adjudicated / "jury.toml").read_text() + 'verdicts_dir = "locked"\n')
    (adjudicated / "verdicts").rename(adjudicated / "locked")
    result = jury.verify(project=jury.Project.load(adjudicated))
    assert result.ok and [f.path.name for f in result.files] == ["adj.json"]
    (adjudicated / "empty").mkdir()
    (adjudicated / "empty" / "jury.toml").write_text('verdicts_dir = "nothing-here"\n')
    with pytest.raises(jury.InputError, match="no verdict files to verify"):
        jury.verify(project=jury.Project.load(adjudicated / "empty"))


def test_a_missing_file_is_an_input_error_and_the_result_never_overwrites_its_inputs(adjudicated):
    with pytest.raises(jury.InputError, match="nope.json: no such file"):
        jury.verify(["verdicts/adj.json", "verdicts/nope.json"])
    with pytest.raises(jury.InputError, match="is a directory"):
        jury.verify("verdicts")
    result = jury.verify("verdicts/adj.json")
    before = (adjudicated / "verdicts" / "adj.json").read_bytes()
    with pytest.raises(jury.InputError, match="never overwrites"):
        result.write("verdicts/adj.json")
    assert (adjudicated / "verdicts" / "adj.json").read_bytes() == before
    assert result.write("verify.csv").read_text().startswith("path,ok,")
