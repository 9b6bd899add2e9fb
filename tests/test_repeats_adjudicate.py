"""`jury adjudicate --repeats R` end to end (issue 44 item 2), against the loopback juror server.

Eight failures of one model, judged by two jurors (ja, jb). A scripted juror answers by a fixed
truth and flips its answer the second time it is asked a question, on a known set of questions:
with sequential repeats (repeat 1 is asked once repeat 0 is answered) the second ask is repeat 1.
Scripted jurors are test doubles: expected values come from the scripts and hand derivations,
never from jury's output.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import threading
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from tests.support.fakellm import ballot_reply
from tests.support.helpers import make_db, write_gold, write_runs
from tests.support.jurytest import user_text, write_panel

runner = CliRunner()
N = 8
MODEL = "m-one"  # family deepseek: both jurors may judge it
TWO = [("ja", "openai"), ("jb", "anthropic")]
# q1..q3 gold_defect, q4..q8 genuine_error
TRUTH = {q: ("gold_defect" if q <= 3 else "genuine_error") for q in range(1, N + 1)}
OTHER = {"gold_defect": "genuine_error", "genuine_error": "gold_defect"}


def make_repeats_project(tmp: Path) -> Path:
    """Question q's gold is SELECT q, the model's answer SELECT 100 + q: eight jury-eligible failures."""
    make_db(tmp / "dbs")
    gold = [
        {"question_id": q, "db_id": "shop", "question": f"Question {q}?", "evidence": "", "SQL": f"SELECT {q} AS v"}
        for q in range(1, N + 1)
    ]
    write_gold(tmp, gold)
    write_runs(
        tmp, [{"model": MODEL, "question_id": q, "sql": f"SELECT {100 + q} AS v", "family": "deepseek"} for q in gold_ids()]
    )
    (tmp / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    return tmp


def gold_ids() -> list[int]:
    return list(range(1, N + 1))


def flipping_juror(flips: set[int]):
    """A blind juror answering TRUTH, except on its second ask of a question in ``flips``,
    where it gives the other category. Returns (responder, Counter of asks per question)."""
    seen: Counter = Counter()
    lock = threading.Lock()

    def respond(req):
        text = user_text(req)
        sqls = dict(re.findall(r"<sql_(\d)>\n(.*?)\n</sql_\d>", text, re.S))
        values = {int(k): int(sql.split()[1]) for k, sql in sqls.items()}
        gold_at = next(k for k, v in values.items() if v < 100)
        q = values[gold_at]
        with lock:
            seen[q] += 1
            n = seen[q]
        category = OTHER[TRUTH[q]] if (n == 2 and q in flips) else TRUTH[q]
        answer = {"gold_defect": f"answer_{3 - gold_at}", "genuine_error": f"answer_{gold_at}"}[category]
        return ballot_reply(answer, reasoning=f"scripted {category}")

    return respond, seen


JA_FLIPS = {1, 4}  # one gold_defect and one genuine_error question: ja's marginals stay 3 : 5


@pytest.fixture
def project(tmp_path, monkeypatch, fake_llm):
    make_repeats_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    ja, _ = flipping_juror(JA_FLIPS)
    jb, _ = flipping_juror(set())
    fake_llm.script("ja", ja)
    fake_llm.script("jb", jb)
    write_panel(tmp_path, fake_llm.base_url, TWO, k=2)
    return tmp_path


def adjudicate(*args: str):
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", "panel.toml", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res


def raw(path: str) -> dict:
    return json.loads(Path(path).read_text())


# ------------------------------------------------------------------ votes per repeat


def test_each_repeat_is_its_own_vote_with_its_index(project, fake_llm):
    adjudicate("--repeats", "2", "-o", "verdicts/adj.json")
    # 8 questions x 2 jurors x 2 repeats, each asked once
    assert fake_llm.calls() == 32
    doc = raw("verdicts/adj.json")
    assert doc["settings"]["repeats"] == 2
    hashes = set()
    for r in doc["records"]:
        q = r["question_id"]
        assert [v["juror"] for v in r["votes"]] == ["ja", "jb"]
        assert all("repeat" not in v for v in r["votes"])  # repeat 0: as a panel asked once writes it
        assert [(v["juror"], v["repeat"]) for v in r["repeat_votes"]] == [("ja", 1), ("jb", 1)]
        # the published verdict is repeat 0's: both jurors say the truth
        assert r["verdict"] == TRUTH[q]
        want_ja = OTHER[TRUTH[q]] if q in JA_FLIPS else TRUTH[q]
        assert [v["category"] for v in r["repeat_votes"]] == [want_ja, TRUTH[q]]
        hashes |= {v["request_sha256"] for v in r["votes"] + r["repeat_votes"]}
    assert len(hashes) == 32  # repeat 1 is its own request even where its drawn order is repeat 0's
    verify = runner.invoke(app, ["verify", "verdicts/adj.json"])
    assert verify.exit_code == 0, verify.output


def test_a_rerun_asks_nothing_and_gives_the_same_votes(project, fake_llm):
    adjudicate("--repeats", "2", "-o", "verdicts/adj.json")
    calls = fake_llm.calls()
    adjudicate("--repeats", "2", "-o", "verdicts/again.json")  # another file: every ballot goes to the store
    assert fake_llm.calls() == calls
    assert raw("verdicts/again.json")["records"] == raw("verdicts/adj.json")["records"]


def test_repeat_0_is_the_panel_asked_once_and_resuming_asks_only_the_missing_repeat(project, fake_llm):
    """A run killed once repeat 0's votes are stored is what a --repeats 1 run leaves in the store:
    --repeats 2 then asks only repeat 1's 16 ballots."""
    adjudicate("-o", "verdicts/once.json")
    assert fake_llm.calls() == 16
    adjudicate("--repeats", "2", "-o", "verdicts/twice.json")
    assert fake_llm.calls() == 32
    once, twice = raw("verdicts/once.json"), raw("verdicts/twice.json")
    assert [r["votes"] for r in once["records"]] == [r["votes"] for r in twice["records"]]
    assert [r["verdict"] for r in once["records"]] == [r["verdict"] for r in twice["records"]]


def test_repeats_1_writes_what_it_always_wrote(project, fake_llm):
    adjudicate("-o", "verdicts/once.json")
    doc = raw("verdicts/once.json")
    assert "repeats" not in doc["settings"]
    for r in doc["records"]:
        assert "repeat_votes" not in r
        for v in r["votes"]:
            assert "repeat" not in v
            # the order drawn as before repeats existed: sha256("seed|question|model|juror"), first byte even: gold first
            digest = hashlib.sha256(f"0|{r['question_id']}|{MODEL}|{v['juror']}".encode()).digest()
            assert v["order"] == ("gold_first" if digest[0] % 2 == 0 else "candidate_first")


def test_plan_prices_every_repeat(project, fake_llm):
    import jury

    once = jury.adjudicate("run.jsonl", panel="panel.toml", plan=True)
    twice = jury.adjudicate("run.jsonl", panel="panel.toml", plan=True, repeats=2)
    assert fake_llm.calls() == 0
    assert sum(r["ballots"] for r in once.plan.rows) == 16  # 8 failures x 2 jurors
    assert sum(r["ballots"] for r in twice.plan.rows) == 32
    assert twice.plan.groups == once.plan.groups == N  # the failures, not the repeats
    out = adjudicate("--plan", "--repeats", "2").output
    assert "32 ballots for 8 failures, each asked 2 times" in " ".join(out.split())


# ------------------------------------------------------------------ jury report


def cohen_kappa(a: list[str], b: list[str]) -> float:
    """Cohen's kappa from its definition (observed vs chance agreement of the marginals)."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b)) / n
    chance = sum((a.count(c) / n) * (b.count(c) / n) for c in set(a) | set(b))
    return (observed - chance) / (1 - chance)


def report(*args: str) -> str:
    res = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.stdout


def test_report_gives_the_test_retest_kappa_the_flips_predict(project, fake_llm):
    adjudicate("--repeats", "2", "-o", "verdicts/adj.json")
    rep = json.loads(report("-f", "json"))
    (f,) = rep["repeat_stability"]["files"]
    assert f["repeats"] == 2 and f["records"] == N
    jurors = {j["juror"]: j for j in f["jurors"]}
    # ja: repeat 0 the truth (3 gold_defect, 5 genuine_error); repeat 1 flips q1 and q4 (still 3 : 5).
    # observed 6/8; chance (3/8)^2 + (5/8)^2 = 34/64; kappa = (48/64 - 34/64) / (30/64) = 7/15
    rep0 = [TRUTH[q] for q in gold_ids()]
    rep1 = [OTHER[TRUTH[q]] if q in JA_FLIPS else TRUTH[q] for q in gold_ids()]
    assert cohen_kappa(rep0, rep1) == pytest.approx(7 / 15)
    assert jurors["ja"]["kappa"] == pytest.approx(7 / 15)
    assert jurors["ja"]["agreement"] == pytest.approx(6 / 8) and jurors["ja"]["items"] == N
    assert jurors["ja"]["low"] <= 7 / 15 <= jurors["ja"]["high"]
    assert jurors["jb"]["kappa"] == pytest.approx(1.0) and jurors["jb"]["agreement"] == 1.0
    # two jurors, k = 2: where ja flips the two disagree, no majority; the other six verdicts stay
    assert (f["verdicts_changed"]["k"], f["verdicts_changed"]["n"]) == (2, N)
    assert f["verdicts_changed"]["value"] == pytest.approx(2 / 8)
    assert sorted(c["question_id"] for c in f["changed"]) == sorted(JA_FLIPS)
    # the adjudicated column: repeat 0 credits q1..q3 (3/8), repeat 1 only q2, q3 (2/8)
    (col,) = f["column"]
    assert col["model"] == MODEL
    assert col["values"] == pytest.approx([3 / 8, 2 / 8])
    assert col["mean"] == pytest.approx(5 / 16)
    assert col["sd"] == pytest.approx((1 / 8) / 2**0.5)
    assert (col["low"], col["high"]) == pytest.approx((2 / 8, 3 / 8))
    # the published column is repeat 0's
    (row,) = rep["models"]
    assert row["adjudicated"]["value"] == pytest.approx(3 / 8)
    table = " ".join(report().split())
    assert (
        "test-retest Cohen's kappa" in table
        and "ja 0.47" in table
        and "verdicts that change between repeats 2/8 (0.250 [" in table
    )
    markdown = report("-f", "md")
    assert "test-retest" in markdown
    # the CSV row carries the column's spread over the repeats (the same hand values)
    (line,) = csv.DictReader(io.StringIO(report("-f", "csv")))
    assert float(line["adjudicated_repeats_mean"]) == pytest.approx(5 / 16)
    assert float(line["adjudicated_repeats_sd"]) == pytest.approx((1 / 8) / 2**0.5)
    assert (float(line["adjudicated_repeats_low"]), float(line["adjudicated_repeats_high"])) == pytest.approx((2 / 8, 3 / 8))


def test_a_panel_asked_once_has_no_repeat_section(project, fake_llm):
    adjudicate("-o", "verdicts/adj.json")
    rep = json.loads(report("-f", "json"))
    assert "repeat_stability" not in rep
    assert "test-retest" not in report()
    assert "adjudicated_repeats_mean" not in report("-f", "csv").splitlines()[0]


@pytest.mark.slow
def test_kill_9_in_repeat_1_resumes_without_asking_again(project, fake_llm):
    import os
    import signal
    import subprocess
    import sys
    import time

    fake_llm.latency_s = 0.3
    panel = project / "panel.toml"
    panel.write_text(panel.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    cmd = [sys.executable, "-m", "jury", "adjudicate", "run.jsonl", "--panel", "panel.toml", "--repeats", "2"]
    proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while fake_llm.calls() < 20 and time.monotonic() < deadline:  # repeat 0 is 16 calls: now inside repeat 1
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    time.sleep(0.5)  # let in-flight requests finish at the server
    assert 20 <= fake_llm.calls() < 32 and not list((project / "verdicts").glob("*.json"))
    fake_llm.latency_s = 0.0
    done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    # every ballot asked once, except at most the one per juror in flight when the process died
    assert 32 <= fake_llm.calls() <= 32 + 2
    again = fake_llm.calls()
    rerun = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=180)
    assert rerun.returncode == 0 and fake_llm.calls() == again
