"""`jury audit-gold --repeats R` end to end (issue 44 item 2), against the loopback juror server.

Eight gold queries judged by two auditors (ja, jb; the default quorum of two jurors is 2). A
scripted auditor answers by a fixed truth (q1..q3 defective, q4..q8 valid) and flips its answer
the second time it is asked a question, on a known set of questions: with sequential repeats
(repeat 1 is asked once repeat 0 is answered) the second ask is repeat 1. An audit ballot shows
the gold query alone, so repeat 1's ballot has repeat 0's messages: only its request hash
differs. Scripted jurors are test doubles: expected values come from the scripts and hand
derivations, never from jury's output.
"""

from __future__ import annotations

import csv
import io
import json
import re
import threading
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from tests.support.fakellm import json_reply
from tests.support.helpers import make_db, write_gold, write_runs
from tests.support.jurytest import user_text, write_panel

runner = CliRunner()
N = 8
TWO = [("ja", "openai"), ("jb", "anthropic")]
TRUTH = {q: ("defective" if q <= 3 else "valid") for q in range(1, N + 1)}
OTHER = {"defective": "valid", "valid": "defective"}
JA_FLIPS = {1, 4}  # one defective and one valid query: ja's marginals stay 3 : 5
MODEL = "m-one"
RIGHT = {1, 2, 4, 5, 6}  # the questions the model answers with the gold's own SQL (strict matches)


def gold_ids() -> list[int]:
    return list(range(1, N + 1))


def make_audit_project(tmp: Path) -> Path:
    """Question q's gold is SELECT q AS v; the model answers RIGHT with it, the others SELECT 100 + q."""
    make_db(tmp / "dbs")
    gold = [
        {"question_id": q, "db_id": "shop", "question": f"Question {q}?", "evidence": "", "SQL": f"SELECT {q} AS v"}
        for q in gold_ids()
    ]
    write_gold(tmp, gold)
    write_runs(
        tmp,
        [{"model": MODEL, "question_id": q, "sql": f"SELECT {q if q in RIGHT else 100 + q} AS v"} for q in gold_ids()],
    )
    (tmp / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    return tmp


def flipping_auditor(flips: set[int]):
    """An auditor answering TRUTH, except on its second ask of a query in ``flips``, where it
    gives the other vote. Returns (responder, Counter of asks per question)."""
    seen: Counter = Counter()
    lock = threading.Lock()

    def respond(req):
        q = int(re.search(r"<gold_sql>\s*SELECT (\d+) AS v", user_text(req)).group(1))
        with lock:
            seen[q] += 1
            n = seen[q]
        verdict = OTHER[TRUTH[q]] if (n == 2 and q in flips) else TRUTH[q]
        bad = verdict == "defective"
        return json_reply(
            {"reasoning": f"scripted {verdict}", "verdict": verdict, "defect_type": "sql_vs_question" if bad else None}
        )

    return respond, seen


@pytest.fixture
def project(tmp_path, monkeypatch, fake_llm):
    make_audit_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    ja, _ = flipping_auditor(JA_FLIPS)
    jb, _ = flipping_auditor(set())
    fake_llm.script("ja", ja)
    fake_llm.script("jb", jb)
    write_panel(tmp_path, fake_llm.base_url, TWO, style="audit", k=2)
    return tmp_path


def audit(*args: str):
    res = runner.invoke(app, ["audit-gold", "--panel", "panel.toml", "--no-checks", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res


def raw(path: str) -> dict:
    return json.loads(Path(path).read_text())


# ------------------------------------------------------------------ votes per repeat


def test_each_repeat_is_its_own_vote_with_its_index_and_the_flag_is_repeat_0s(project, fake_llm):
    audit("--repeats", "2", "-o", "verdicts/audit.json")
    doc = raw("verdicts/audit.json")
    assert doc["settings"]["repeats"] == 2
    hashes = set()
    for r in doc["records"]:
        q = r["question_id"]
        assert [v["juror"] for v in r["votes"]] == ["ja", "jb"]
        assert all("repeat" not in v for v in r["votes"])  # repeat 0: as a panel asked once writes it
        assert [(v["juror"], v["repeat"]) for v in r["repeat_votes"]] == [("ja", 1), ("jb", 1)]
        # repeat 0: both auditors say the truth, so both flag q1..q3 (quorum 2 of 2)
        assert [v["category"] for v in r["votes"]] == [TRUTH[q], TRUTH[q]]
        assert r["flagged"] is (q <= 3) and r["decided"] is True
        want_ja = OTHER[TRUTH[q]] if q in JA_FLIPS else TRUTH[q]
        assert [v["category"] for v in r["repeat_votes"]] == [want_ja, TRUTH[q]]
        hashes |= {v["request_sha256"] for v in r["votes"] + r["repeat_votes"]}
    # 8 queries x 2 jurors x 2 repeats: repeat 1 is its own request though its messages are repeat 0's
    assert len(hashes) == 32
    assert doc["summary"]["overall"]["flagged"] == 3  # repeat 0's flags
    verify = runner.invoke(app, ["verify", "verdicts/audit.json"])
    assert verify.exit_code == 0, verify.output


def test_a_rerun_asks_nothing_and_gives_the_same_votes(project, fake_llm):
    audit("--repeats", "2", "-o", "verdicts/audit.json")
    calls = fake_llm.calls()
    audit("--repeats", "2", "-o", "verdicts/again.json")  # another file: every ballot goes to the store
    assert fake_llm.calls() == calls
    assert raw("verdicts/again.json")["records"] == raw("verdicts/audit.json")["records"]


def test_repeat_0_is_the_panel_asked_once_and_resuming_asks_only_the_missing_repeat(project, fake_llm):
    """A run killed once repeat 0's votes are stored is what a --repeats 1 run leaves in the store:
    --repeats 2 then asks only repeat 1's 16 ballots (ballots asked, not requests: retries aside)."""
    import jury

    once = jury.audit_gold(panel="panel.toml", checks=False, output="verdicts/once.json")
    assert once.calls is not None and (once.calls.asked, once.calls.reused) == (16, 0)
    twice = jury.audit_gold(panel="panel.toml", checks=False, output="verdicts/twice.json", repeats=2)
    assert twice.calls is not None and (twice.calls.asked, twice.calls.reused) == (16, 16)
    a, b = raw("verdicts/once.json"), raw("verdicts/twice.json")
    assert [r["votes"] for r in a["records"]] == [r["votes"] for r in b["records"]]
    assert [(r["flagged"], r["decided"]) for r in a["records"]] == [(r["flagged"], r["decided"]) for r in b["records"]]
    # the second ask of each query was repeat 1's: ja flipped there, and only there
    for r in b["records"]:
        q = r["question_id"]
        assert r["repeat_votes"][0]["category"] == (OTHER[TRUTH[q]] if q in JA_FLIPS else TRUTH[q])


def test_repeats_1_writes_what_it_always_wrote(project, fake_llm):
    audit("-o", "verdicts/once.json")
    doc = raw("verdicts/once.json")
    assert "repeats" not in doc["settings"]
    for r in doc["records"]:
        assert "repeat_votes" not in r
        assert all("repeat" not in v for v in r["votes"])


def test_plan_prices_every_repeat(project, fake_llm):
    import jury

    once = jury.audit_gold(panel="panel.toml", checks=False, plan=True)
    twice = jury.audit_gold(panel="panel.toml", checks=False, plan=True, repeats=2)
    assert fake_llm.calls() == 0
    assert sum(r["ballots"] for r in once.plan.rows) == 16  # 8 gold queries x 2 jurors
    assert sum(r["ballots"] for r in twice.plan.rows) == 32
    assert twice.plan.groups == once.plan.groups == N  # the gold queries, not the repeats
    out = audit("--plan", "--repeats", "2").output
    assert "32 ballots for 8 gold queries, each asked 2 times" in " ".join(out.split())


def test_verify_checks_every_repeat(project, fake_llm):
    """A repeat-1 vote whose category does not follow from its answer fails verify, as a repeat-0 one does."""
    from jury.verdicts.lock import lock

    audit("--repeats", "2", "-o", "verdicts/audit.json")
    doc = raw("verdicts/audit.json")
    vote = doc["records"][4]["repeat_votes"][1]
    vote["category"] = OTHER[vote["category"]]
    doc.pop("content_sha256")
    Path("verdicts/bad.json").write_text(json.dumps(lock(doc)))
    res = runner.invoke(app, ["verify", "verdicts/bad.json"])
    assert res.exit_code != 0
    assert "repeat 1" in res.output and "'jb'" in res.output


def test_reaudit_of_a_repeated_audit_reruns_every_repeat_from_the_store(project, fake_llm):
    audit("--repeats", "2", "-o", "verdicts/audit.json")
    calls = fake_llm.calls()
    panel = project / "panel.toml"
    panel.write_text(panel.read_text() + "\n# an edit: the panel file's hash changes, not its jurors\n")
    res = runner.invoke(app, ["reaudit", "verdicts/audit.json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert fake_llm.calls() == calls  # unchanged jurors: every vote of every repeat from the store
    new = [p for p in Path("verdicts").glob("*.json") if p.name != "audit.json"]
    (path,) = new
    doc = raw(str(path))
    assert doc["settings"]["repeats"] == 2
    old = raw("verdicts/audit.json")
    assert [r["repeat_votes"] for r in doc["records"]] == [r["repeat_votes"] for r in old["records"]]


# ------------------------------------------------------------------ jury report


def cohen_kappa(a: list[str], b: list[str]) -> float:
    """Cohen's kappa from its definition (observed vs chance agreement of the marginals)."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b)) / n
    chance = sum((a.count(c) / n) * (b.count(c) / n) for c in set(a) | set(b))
    return (observed - chance) / (1 - chance)


def report(*args: str) -> str:
    res = runner.invoke(app, ["report", "run.jsonl", "--audit", "verdicts/audit.json", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.stdout


def test_report_gives_the_test_retest_kappa_and_flag_changes_the_flips_predict(project, fake_llm):
    audit("--repeats", "2", "-o", "verdicts/audit.json")
    rep = json.loads(report("-f", "json"))
    s = rep["repeat_stability"]
    assert s["files"] == []  # no adjudication file
    (f,) = s["audits"]
    assert f["repeats"] == 2 and f["records"] == N
    jurors = {j["juror"]: j for j in f["jurors"]}
    # ja: repeat 0 the truth (3 defective, 5 valid); repeat 1 flips q1 and q4 (still 3 : 5).
    # observed 6/8; chance (3/8)^2 + (5/8)^2 = 34/64; kappa = (48/64 - 34/64) / (30/64) = 7/15
    rep0 = [TRUTH[q] for q in gold_ids()]
    rep1 = [OTHER[TRUTH[q]] if q in JA_FLIPS else TRUTH[q] for q in gold_ids()]
    assert cohen_kappa(rep0, rep1) == pytest.approx(7 / 15)
    assert jurors["ja"]["kappa"] == pytest.approx(7 / 15)
    assert jurors["ja"]["agreement"] == pytest.approx(6 / 8) and jurors["ja"]["items"] == N
    assert jurors["ja"]["low"] <= 7 / 15 <= jurors["ja"]["high"]
    assert jurors["jb"]["kappa"] == pytest.approx(1.0) and jurors["jb"]["agreement"] == 1.0
    # quorum 2 of 2: repeat 0 flags q1..q3; repeat 1 flags q2, q3 (ja clears q1; on q4 ja alone says defective)
    assert (f["flags_changed"]["k"], f["flags_changed"]["n"]) == (1, N)
    assert f["flags_changed"]["value"] == pytest.approx(1 / 8)
    assert f["changed"] == [1]
    assert f["flag_rate"]["values"] == pytest.approx([3 / 8, 2 / 8])
    assert f["flag_rate"]["mean"] == pytest.approx(5 / 16)
    assert f["flag_rate"]["sd"] == pytest.approx((1 / 8) / 2**0.5)
    # gold-clean: the model matches q1, q2, q4, q5, q6. Repeat 0 keeps q4..q8: 3 of 5;
    # repeat 1 keeps q1, q4..q8: 4 of 6
    (col,) = f["column"]
    assert col["model"] == MODEL
    assert col["values"] == pytest.approx([3 / 5, 4 / 6])
    assert col["mean"] == pytest.approx((3 / 5 + 4 / 6) / 2)
    assert col["sd"] == pytest.approx((4 / 6 - 3 / 5) / 2**0.5)
    assert (col["low"], col["high"]) == pytest.approx((3 / 5, 4 / 6))
    # the published column is repeat 0's
    (row,) = rep["models"]
    assert row["gold_clean"]["value"] == pytest.approx(3 / 5)
    table = " ".join(report().split())
    assert "test-retest Cohen's kappa [95% bootstrap] on flag votes ja 0.47" in table
    assert "flags that change between repeats 1/8 (0.125 [" in table  # the share with its Wilson interval
    assert "share flagged per repeat 0.375/0.250" in table
    assert "m-one 0.633 ± 0.047 (range 0.600–0.667)" in table  # (3/5 + 4/6) / 2; (4/6 - 3/5) / sqrt 2
    assert "test-retest" in report("-f", "md")
    (line,) = csv.DictReader(io.StringIO(report("-f", "csv")))  # the same spread, in the model's CSV row
    assert float(line["gold_clean_repeats_mean"]) == pytest.approx((3 / 5 + 4 / 6) / 2)
    assert (float(line["gold_clean_repeats_low"]), float(line["gold_clean_repeats_high"])) == pytest.approx((3 / 5, 4 / 6))


def test_an_audit_asked_once_has_no_repeat_section(project, fake_llm):
    audit("-o", "verdicts/audit.json")
    rep = json.loads(report("-f", "json"))
    assert "repeat_stability" not in rep
    assert "test-retest" not in report()


@pytest.mark.slow
def test_kill_9_in_repeat_1_resumes_without_asking_again(project, fake_llm):
    """`jury audit-gold --repeats 2` killed (SIGKILL) inside repeat 1 (repeat 0 is 8 queries x 2
    auditors = 16 calls): the rerun asks only what the store lacks, the file holds both repeats
    of every query, and a third run asks nothing."""
    import os
    import signal
    import subprocess
    import sys
    import time

    fake_llm.latency_s = 0.3
    panel = project / "panel.toml"
    panel.write_text(panel.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    cmd = [sys.executable, "-m", "jury", "audit-gold", "--panel", "panel.toml", "--no-checks", "--repeats", "2"]
    cmd += ["-o", "verdicts/audit.json"]
    proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while fake_llm.calls() < 20 and time.monotonic() < deadline:  # now inside repeat 1
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    time.sleep(0.5)  # let in-flight requests finish at the server
    assert 20 <= fake_llm.calls() < 32 and not (project / "verdicts" / "audit.json").exists()
    fake_llm.latency_s = 0.0
    done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    # every ballot asked once, except at most the one per auditor in flight when the process died
    assert 32 <= fake_llm.calls() <= 32 + 2
    doc = raw(str(project / "verdicts" / "audit.json"))
    assert all(len(r["votes"]) == 2 and len(r["repeat_votes"]) == 2 for r in doc["records"])
    again = fake_llm.calls()
    rerun = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=180)
    assert rerun.returncode == 0 and fake_llm.calls() == again
