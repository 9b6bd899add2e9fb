"""`jury review sample`: a seeded stratified sample of the bundled example's audited gold
queries (129, audited by loopback scripted jurors), hash-locked with its frame, strata, seed
and inclusion probabilities."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import jury
from jury.cli import app
from jury.errors import VerdictError
from jury.verdicts.sample import load_sample
from tests.support.fakellm import FakeLLMServer, json_reply
from tests.support.helpers import EXAMPLE
from tests.support.jurytest import user_text, write_panel

runner = CliRunner()
THREE = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google")]


def _auditor(name: str):
    """Defective when a hash of (juror, ballot) says so: about one ballot in three."""

    def respond(request: dict):
        bad = hashlib.sha256((name + user_text(request)).encode()).digest()[0] % 3 == 0
        verdict = {"verdict": "defective" if bad else "valid", "defect_type": "sql_vs_question" if bad else None}
        return json_reply({"reasoning": f"scripted audit by {name}", **verdict})

    return respond


@pytest.fixture(scope="module")
def example_audit(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("sample-example")
    for name in ("dev.json", "run.jsonl", "jury.toml"):
        shutil.copy(EXAMPLE / name, tmp / name)
    (tmp / "databases").symlink_to(EXAMPLE / "databases")
    with pytest.MonkeyPatch.context() as mp, FakeLLMServer() as server:
        mp.chdir(tmp)
        for name, _ in THREE:
            server.script(name, _auditor(name))
        panel = write_panel(tmp, server.base_url, THREE, style="audit", k=3, name="audit.toml")
        # no gold checks: the sample is drawn from the panel's flags, which the scripted jurors decide
        res = runner.invoke(app, ["audit-gold", "--panel", str(panel), "--no-checks", "-o", "verdicts/audit.json"])
        assert res.exit_code == 0, res.output
    return tmp


@pytest.fixture
def folder(example_audit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # at the fixture folder's depth: the audit binds the databases by a path relative to it
    shutil.copytree(example_audit, tmp_path, symlinks=True, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _frame(folder: Path) -> list[tuple[str, str]]:
    """(flag, difficulty) of every audited record, read straight from the audit JSON."""
    audit = json.loads((folder / "verdicts" / "audit.json").read_text())
    return [("flagged" if r["flagged"] else "not_flagged", r.get("difficulty") or "-") for r in audit["records"]]


@pytest.mark.slow
def test_a_40_record_sample_by_flag_and_difficulty_has_the_hand_inclusion_probabilities(folder):
    frame = _frame(folder)
    N = Counter(frame)
    assert len(frame) == 129 and len(N) >= 4
    res = runner.invoke(
        app,
        [
            "review",
            "sample",
            "-o",
            "verdicts/sample.json",
            "--audit",
            "verdicts/audit.json",
            "--by",
            "flag",
            "--by",
            "difficulty",
            "--n",
            "40",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads((folder / "verdicts" / "sample.json").read_text())
    assert doc["kind"] == "review sample" and doc["seed"] == 0 and doc["frame_size"] == 129
    assert len(doc["records"]) == 40
    assert doc["frame"][0]["path"] == "audit.json"
    assert doc["frame"][0]["sha256"] == hashlib.sha256((folder / "verdicts" / "audit.json").read_bytes()).hexdigest()
    # n_h per stratum by hand: proportional 40 * N_h / 129, floors then largest remainders
    keys = list(dict.fromkeys(frame))
    exact = {k: 40 * N[k] / 129 for k in keys}
    n_h = {k: max(1, int(exact[k])) for k in keys}
    for k in sorted(keys, key=lambda k: -(exact[k] - int(exact[k])))[: 40 - sum(n_h.values())]:
        n_h[k] += 1
    by_values = {(s["values"]["flag"], s["values"]["difficulty"]): s for s in doc["strata"]}
    assert {k: (s["size"], s["sample"]) for k, s in by_values.items()} == {k: (N[k], n_h[k]) for k in keys}
    audit = json.loads((folder / "verdicts" / "audit.json").read_text())
    stratum_of = {
        r["question_id"]: ("flagged" if r["flagged"] else "not_flagged", r.get("difficulty") or "-") for r in audit["records"]
    }
    got = Counter()
    for r in doc["records"]:
        k = stratum_of[r["question_id"]]
        got[k] += 1
        assert r["inclusion"] == pytest.approx(n_h[k] / N[k], abs=1e-15)
        assert r["kind"] == "gold" and r["model"] is None
    assert dict(got) == {k: v for k, v in n_h.items() if v}
    # the same seed draws the same records; another seed other ones
    again = jury.review_sample("verdicts/again.json", audit="verdicts/audit.json", by=["flag", "difficulty"], n=40)
    assert isinstance(again, jury.ReviewSample)
    assert [r.question_id for r in again.records] == [r["question_id"] for r in doc["records"]]
    other = jury.review_sample("verdicts/other.json", audit="verdicts/audit.json", by=["flag", "difficulty"], n=40, seed=1)
    assert [r.question_id for r in other.records] != [r["question_id"] for r in doc["records"]]
    assert load_sample("verdicts/sample.json").content_sha256 == doc["content_sha256"]


@pytest.mark.slow
def test_given_sizes_and_neyman(folder):
    frame = _frame(folder)
    flagged = sum(1 for f, _ in frame if f == "flagged")
    res = jury.review_sample("s.json", audit="verdicts/audit.json", by=["flag"], size={"flagged": 5, "not_flagged": 3}, seed=4)
    incl = {(s.values["flag"]): s.sample / s.size for s in res.strata}
    assert incl == {"flagged": 5 / flagged, "not_flagged": 3 / (129 - flagged)}
    # Neyman by agreement: S_h of the 0/1 flag (ddof 1) within each agreement level, by numpy
    res = jury.review_sample("n.json", audit="verdicts/audit.json", by=["agreement"], n=20, method="neyman", minimum=0)
    assert sum(s.sample for s in res.strata) == 20
    audit = json.loads(Path("verdicts/audit.json").read_text())
    flags: dict[str, list[int]] = {}
    for r in audit["records"]:
        cats = {v["category"] for v in r["votes"] if v.get("category") and not v.get("abstained") and not v.get("skipped")}
        level = "no_majority" if not r["decided"] else "unanimous" if len(cats) == 1 else "majority"
        flags.setdefault(level, []).append(int(r["flagged"]))
    for s in res.strata:
        f = flags[s.values["agreement"]]
        assert s.size == len(f)
        assert s.sd == pytest.approx(float(np.std(f, ddof=1)) if len(f) > 1 else 0.0)
    # Neyman by hand: x_h = 20 N_h S_h / sum(N S) (none beyond its N_h here), floors, largest remainders
    levels = [s.values["agreement"] for s in res.strata]
    ns = {k: len(flags[k]) * (float(np.std(flags[k], ddof=1)) if len(flags[k]) > 1 else 0.0) for k in levels}
    x = {k: 20 * ns[k] / sum(ns.values()) for k in levels}
    assert all(x[k] <= len(flags[k]) for k in levels)
    want = {k: int(x[k]) for k in levels}
    for k in sorted(levels, key=lambda k: -(x[k] - int(x[k])))[: 20 - sum(want.values())]:
        want[k] += 1
    assert {s.values["agreement"]: s.sample for s in res.strata} == want


@pytest.mark.slow
def test_the_lock_refuses_a_tampered_sample_and_a_changed_frame(folder):
    jury.review_sample("verdicts/sample.json", audit="verdicts/audit.json", by=["flag"], n=10)
    path = folder / "verdicts" / "sample.json"
    data = json.loads(path.read_text())
    data["records"][0]["inclusion"] = 0.5
    path.with_name("tampered.json").write_text(json.dumps(data))
    with pytest.raises(VerdictError, match="content hash mismatch"):
        load_sample(path.with_name("tampered.json"))
    audit = folder / "verdicts" / "audit.json"
    audit.write_text(audit.read_text().replace('"valid"', '"defective"', 1))
    res = runner.invoke(app, ["review", "sample", "-o", "s2.json", "--audit", "verdicts/audit.json", "--by", "flag", "--n", "5"])
    assert res.exit_code == 1 and "content hash mismatch" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    with pytest.raises(VerdictError, match="frame"):
        load_sample(path)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--by", "colour", "--n", "5"], "unknown stratum key 'colour'"),
        (["--by", "flag", "--size", "flagged=1000"], "beyond the stratum"),
        (["--by", "flag", "--size", "purple=1"], "no stratum"),
        (["--by", "flag", "--n", "500"], "frame's 129 records"),
        (["--by", "flag"], "give the total --n"),
    ],
)
def test_bad_input_is_one_line(folder, args, says):
    res = runner.invoke(app, ["review", "sample", "-o", "s.json", "--audit", "verdicts/audit.json", *args])
    assert res.exit_code == 1, res.output
    assert says in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert not Path("s.json").exists()


@pytest.mark.slow
def test_the_defect_rate_corrected_by_two_reviewers_on_a_40_record_sample(folder):
    """Rogan-Gladen by hand: design weights N_h / n_h, weighted Se and Sp, (p + Sp - 1) / (Se + Sp - 1)."""
    from starlette.testclient import TestClient

    jury.review_sample("verdicts/sample.json", audit="verdicts/audit.json", by=["flag"], n=40)
    audit = {r["question_id"]: r for r in json.loads(Path("verdicts/audit.json").read_text())["records"]}

    def truth(qid) -> bool:  # the people: the panel's flag, except every 7th question the other way
        return audit[qid]["flagged"] != (int(qid) % 7 == 0)

    for who in ("ann", "bob"):
        page = jury.review_app(sample="verdicts/sample.json", reviewer=who)
        client = TestClient(page.app, base_url=f"http://127.0.0.1:8765{page.root}/", follow_redirects=False)
        assert client.get(f"?token={page.token}").status_code == 303
        for n, item in enumerate(page.state.items):
            choice = "defective" if truth(item.question_id) else "valid"
            data = {"choice": choice, "defect_type": "sql_vs_question"} if choice == "defective" else {"choice": choice}
            assert client.post(f"item/{n}?csrf={page.state.csrf}", data=data).status_code == 303
        res = runner.invoke(app, ["review", "lock", "-o", f"{who}.json", "--reviewer", who, "--sample", "verdicts/sample.json"])
        assert res.exit_code == 0, res.output
    got = jury.review_corrected("verdicts/sample.json", "ann.json", "bob.json", resamples=200)
    doc = json.loads(Path("verdicts/sample.json").read_text())
    w = {h: s["size"] / s["sample"] for h, s in enumerate(doc["strata"])}
    rows = [(w[r["stratum"]], truth(r["question_id"]), audit[r["question_id"]]["flagged"]) for r in doc["records"]]
    se = sum(wi for wi, y, f in rows if y and f) / sum(wi for wi, y, f in rows if y)
    sp = sum(wi for wi, y, f in rows if not y and not f) / sum(wi for wi, y, f in rows if not y)
    p = sum(r["flagged"] for r in audit.values()) / 129
    assert got.apparent == pytest.approx(p) and got.sample == 40 and got.population == 129
    assert got.sensitivity == pytest.approx(se) and got.specificity == pytest.approx(sp)
    assert got.value == pytest.approx(min(1, max(0, (p + sp - 1) / (se + sp - 1))))
    assert got.low <= got.value <= got.high
    text = got.render()
    assert text.startswith(
        f"gold defect rate: panel says {100 * p:.1f} %, corrected by 2 reviewers on 40 items: {100 * got.value:.1f} % ["
    )
