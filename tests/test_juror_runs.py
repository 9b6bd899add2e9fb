"""Juror runs (adjudicate, audit-gold, reaudit) when things go wrong: outages, what a run prints
and counts, secrets echoed back, huge replies, unknown params, full disks, Ctrl-C, two processes
on one store.

Every test drives the real CLI against the loopback juror server (tests/support/fakellm.py).
"""

import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.verdicts.lock import load_locked
from tests.support.fakellm import Reply, ballot_reply, json_reply
from tests.support.jurytest import says, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
FIVE = FOUR + [("je", "deepseek")]
ENV = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")


def adjudicate(*args):
    return runner.invoke(app, ["adjudicate", "run.jsonl", *args], catch_exceptions=False)


def flat(text: str) -> str:
    return " ".join(text.split())


def verdict_files(tmp):
    return sorted((tmp / "verdicts").glob("*.json")) if (tmp / "verdicts").is_dir() else []


def store_rows(tmp, sql):
    with sqlite3.connect(tmp / ".jury" / "store.db") as conn:
        return conn.execute(sql).fetchall()


def distinct_requests(doc) -> int:
    return len({v.request_sha256 for r in doc.records for v in r.votes})


def all_say(server, category="gold_defect", names=FOUR):
    for name, _ in names:
        server.script(name, says(category))


# ------------------------------------------------------------------ an outage is not a verdict


def test_outage_writes_no_locked_file_and_exits_3(project, fake_llm):
    for name, _ in FOUR:
        fake_llm.script(name, Reply(status=401, error_message="invalid api key"))
    panel = str(write_panel(project, fake_llm.base_url, FOUR))
    res = adjudicate("--panel", panel, "-o", "verdicts/down.json")
    assert res.exit_code == 3, res.output
    out = flat(res.output)
    assert "18 ballots got no vote" in out and "a rerun asks only those 18 ballots" in out
    assert "invalid api key" in out
    assert not (project / "verdicts" / "down.json").exists()
    assert store_rows(project, "SELECT count(*) FROM votes") == [(0,)]
    # the outage is over: the rerun asks every ballot once and writes the file
    all_say(fake_llm)
    before = fake_llm.calls()
    res = adjudicate("--panel", panel, "-o", "verdicts/down.json")
    assert res.exit_code == 0, res.output
    doc = load_locked(project / "verdicts" / "down.json")
    assert fake_llm.calls() - before == distinct_requests(doc)
    assert all(r.verdict == "gold_defect" for r in doc.records)


def test_early_stop_with_a_failed_ballot_is_still_incomplete(project, fake_llm):
    all_say(fake_llm)
    fake_llm.script("jb", Reply(status=403))  # gpt-x's jurors are jb, jc, jd
    panel = str(write_panel(project, fake_llm.base_url, FOUR))
    res = adjudicate("--panel", panel, "--early-stop")
    assert res.exit_code == 3, res.output
    assert "3 ballots got no vote" in flat(res.output) and not verdict_files(project)
    fake_llm.script("jb", says("gold_defect"))
    res = adjudicate("--panel", panel, "--early-stop")
    assert res.exit_code == 0, res.output


def test_unparseable_reply_stays_a_final_abstention(project, fake_llm):
    all_say(fake_llm)
    fake_llm.script("jc", Reply(content="prose, no JSON"))
    res = adjudicate("--panel", str(write_panel(project, fake_llm.base_url, FOUR)))
    assert res.exit_code == 0, res.output
    assert len(verdict_files(project)) == 1


def test_audit_outage_is_incomplete(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, json_reply({"reasoning": "ok", "verdict": "valid", "defect_type": None}))
    fake_llm.script("je", Reply(status=404))
    panel = write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", str(panel)], catch_exceptions=False)
    assert res.exit_code == 3, res.output
    assert "ballots got no vote" in flat(res.output) and not verdict_files(project)


def test_reaudit_with_failing_juror_is_incomplete(project, fake_llm):
    all_say(fake_llm)
    panel = write_panel(project, fake_llm.base_url, FOUR)
    assert adjudicate("--panel", str(panel), "-o", "verdicts/first.json").exit_code == 0
    # jc's params change (the file goes stale and jc is asked again), and jc is down
    panel.write_text(panel.read_text().replace('name = "jc"', 'name = "jc"\nparams = { temperature = 0.5 }'))
    fake_llm.script("jc", Reply(status=401))
    res = runner.invoke(app, ["reaudit", "verdicts/first.json"], catch_exceptions=False)
    assert res.exit_code == 3, res.output
    assert "6 ballots got no vote" in flat(res.output)
    assert verdict_files(project) == [project / "verdicts" / "first.json"]


# ------------------------------------------------------------------ what is printed


def test_store_hits_and_shared_requests_are_counted_apart(project, fake_llm):
    # both models gave the same wrong SQL for question 3: identical ballots where orders agree
    runs = project / "run.jsonl"
    runs.write_text("".join(json.dumps({"model": m, "question_id": 3, "sql": "SELECT 99"}) + "\n" for m in ("gpt-x", "claude-y")))
    all_say(fake_llm)
    panel = str(write_panel(project, fake_llm.base_url, FOUR))
    res = adjudicate("--panel", panel, "-o", "verdicts/a.json")
    assert res.exit_code == 0, res.output
    doc = load_locked(project / "verdicts" / "a.json")
    hashes = [v.request_sha256 for r in doc.records for v in r.votes]
    shared = len(hashes) - len(set(hashes))
    assert shared > 0
    out = flat(res.output)
    assert f"calls this run: {len(set(hashes))} ballots asked, {len(set(hashes))} requests sent (0 retries);" in out
    assert "votes reused from the store: 0;" in out
    assert f"identical requests shared within this run: {shared};" in out
    res = adjudicate("--panel", panel, "-o", "verdicts/b.json")
    out = flat(res.output)
    assert (
        "calls this run: 0 ballots asked, 0 requests sent (0 retries);" in out
        and f"votes reused from the store: {len(hashes)};" in out
    )
    assert "identical requests shared within this run: 0;" in out


def test_model_filter_lists_only_judged_models(project, fake_llm):
    all_say(fake_llm)
    res = adjudicate("--panel", str(write_panel(project, fake_llm.base_url, FOUR)), "--model", "gpt-x")
    assert res.exit_code == 0, res.output
    assert "gpt-x" in res.output and "claude" not in res.output  # (rich may wrap "claude-y")


# ------------------------------------------------------------------ secrets echoed back


def test_key_echoed_in_reasoning_is_scrubbed_everywhere(project, fake_llm, monkeypatch):
    secret = "sk-test-echoed-secret-123456"
    monkeypatch.setenv("JURY_TEST_KEY", secret)
    for name, _ in FOUR:
        fake_llm.script(name, ballot_reply("both", reasoning=f"Sent with Authorization: Bearer {secret} ok"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    panel.write_text(panel.read_text().replace("max_retries = 2", 'max_retries = 2\napi_key_env = "JURY_TEST_KEY"'))
    res = adjudicate("--panel", str(panel))
    assert res.exit_code == 0, res.output
    for table, col in (("calls", "text"), ("calls", "parsed"), ("votes", "reply")):
        for (value,) in store_rows(project, f"SELECT {col} FROM {table}"):
            assert secret not in value and "[redacted]" in value
    text = verdict_files(project)[0].read_text()
    assert secret not in text and "Bearer [redacted]" in text


@pytest.mark.parametrize(
    "secret",
    [
        "ghp_" + "A1b2C3d4" * 4 + "E5f6",  # GitHub personal access token
        "AKIAIOSFODNN7EXAMPLE",  # AWS access key id
        "glpat-" + "x" * 20,  # GitLab token
        "xoxb-123456789012-abcdefghijkl",  # Slack bot token
        "-----BEGIN RSA PRIVATE KEY-----",  # a private key block
    ],
)
def test_any_kind_of_secret_in_a_reply_is_redacted_before_it_is_stored(secret):
    """Not only the providers' keys: every pattern of detect-secrets' maintained set."""
    from jury.judging.redaction import redact

    text = redact(f"The reasoning quotes {secret} by mistake.", [])
    assert secret not in text and "[redacted]" in text
    assert text.startswith("The reasoning quotes ") and text.endswith(" by mistake.")
    assert redact("SELECT name FROM hero WHERE id = 10.0.0.1", []) == "SELECT name FROM hero WHERE id = 10.0.0.1"


# ------------------------------------------------------------------ huge replies


@pytest.mark.slow
def test_reasoning_is_capped_with_a_marker_and_max_tokens_is_sent(project, fake_llm):
    from jury.judging.providers.params import DEFAULT_MAX_REPLY_TOKENS
    from jury.judging.redaction import MAX_STORED_REASONING_CHARS

    huge = "x" * 300_000
    for name, _ in FOUR:
        fake_llm.script(name, ballot_reply("both", reasoning=huge))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    panel.write_text(panel.read_text().replace('name = "ja"', 'name = "ja"\nparams = { max_tokens = 500 }'))
    res = adjudicate("--panel", str(panel))
    assert res.exit_code == 0, res.output
    doc = load_locked(verdict_files(project)[0])
    for rec in doc.records:
        for v in rec.votes:
            assert len(v.reasoning) < MAX_STORED_REASONING_CHARS + 100
            assert v.reasoning.endswith("[cut by jury: 300,000 characters in all]")
    sent = {r["model"]: r["params"].get("max_tokens") for r in fake_llm.requests}
    assert sent == {"ja": 500, "jb": DEFAULT_MAX_REPLY_TOKENS, "jc": DEFAULT_MAX_REPLY_TOKENS, "jd": DEFAULT_MAX_REPLY_TOKENS}


# ------------------------------------------------------------------ unknown params


def test_unknown_param_warns_once_per_juror_before_any_call_and_in_plan(project, fake_llm):
    all_say(fake_llm)
    panel = write_panel(project, fake_llm.base_url, FOUR)
    panel.write_text(panel.read_text().replace('name = "jb"', 'name = "jb"\nparams = { temprature = 0 }'))
    for extra in (["--plan"], []):
        res = adjudicate("--panel", str(panel), *extra)
        assert res.exit_code == 0, res.output
        out = flat(res.output)
        assert out.count("temprature") == 1
        assert "juror 'jb' (openai/jb): params temprature is not known to litellm" in out


# ------------------------------------------------------------------ a full disk


def test_votes_are_stored_before_call_logs_and_a_store_failure_is_one_line(project, fake_llm, monkeypatch):
    from jury.errors import StoreError
    from jury.execution.store import VoteStoreMixin

    all_say(fake_llm)
    panel = str(write_panel(project, fake_llm.base_url, FOUR))

    def full(self, *a, **k):
        raise StoreError(f"{self.path}: cannot write to the store: database or disk is full")

    with monkeypatch.context() as m:
        m.setattr(VoteStoreMixin, "record_call", full)
        res = adjudicate("--panel", panel)
    assert res.exit_code == 1
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert any(ln.startswith("Error: ") and "database or disk is full" in ln for ln in lines), res.output
    answered = fake_llm.calls()
    assert answered >= 1 and not verdict_files(project)
    # every answer received was kept as a vote
    assert store_rows(project, "SELECT count(*) FROM votes") == [(answered,)]
    res = adjudicate("--panel", panel, "-o", "verdicts/after.json")
    assert res.exit_code == 0, res.output
    # nothing answered is asked again
    assert fake_llm.calls() == distinct_requests(load_locked(project / "verdicts" / "after.json"))


def test_a_full_store_file_is_one_line_not_a_traceback(project, fake_llm, monkeypatch):
    from jury.execution import store as store_mod

    all_say(fake_llm)
    panel = str(write_panel(project, fake_llm.base_url, FOUR))
    assert adjudicate("--panel", panel, "--plan").exit_code == 0  # creates the store, runs every query
    real_init = store_mod.Store.__init__

    def tiny(self, path):
        real_init(self, path)
        pages = self.db.conn.execute("PRAGMA page_count").fetchone()[0]
        self.db.conn.execute(f"PRAGMA max_page_count = {pages}")

    monkeypatch.setattr(store_mod.Store, "__init__", tiny)
    res = adjudicate("--panel", panel)
    assert res.exit_code == 1
    assert "Error: " in res.output and "full" in res.output and "Traceback" not in res.output
    assert not verdict_files(project)


def test_a_full_output_disk_is_one_line_and_the_rerun_pays_nothing(project, fake_llm, monkeypatch):
    import jury.verdicts.lock as verdicts_mod

    all_say(fake_llm)
    panel = str(write_panel(project, fake_llm.base_url, FOUR))

    def no_space(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(verdicts_mod, "write_new", no_space)
        res = adjudicate("--panel", panel, "-o", "verdicts/out.json")
    assert res.exit_code == 1
    assert "verdicts/out.json: cannot write the verdict file: No space left on device" in flat(res.output)
    calls = fake_llm.calls()
    res = adjudicate("--panel", panel, "-o", "verdicts/out.json")
    assert res.exit_code == 0, res.output
    assert fake_llm.calls() == calls == distinct_requests(load_locked(project / "verdicts" / "out.json"))


# ------------------------------------------------------------------ Ctrl-C


@pytest.mark.slow
def test_first_ctrl_c_waits_for_calls_in_flight_and_the_rerun_repeats_none(project, fake_llm):
    fake_llm.latency_s = 1.5
    all_say(fake_llm)
    panel = write_panel(project, fake_llm.base_url, FOUR)
    panel.write_text(panel.read_text().replace("max_concurrency = 4", "max_concurrency = 2"))
    cmd = [sys.executable, "-m", "jury", "adjudicate", "run.jsonl", "--panel", str(panel)]
    proc = subprocess.Popen(cmd, cwd=project, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while fake_llm.calls() < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    in_flight = fake_llm.calls()
    assert in_flight >= 4
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Interrupted: sending no new ballots" in err and "Traceback" not in err
    first = fake_llm.calls()
    assert first < 18 and not verdict_files(project)
    stored = store_rows(project, "SELECT count(*) FROM votes")[0][0]
    assert stored == first  # every call that was on the wire was answered and stored
    fake_llm.latency_s = 0.0
    done = subprocess.run(cmd, cwd=project, env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert fake_llm.calls() == distinct_requests(load_locked(verdict_files(project)[0]))  # nothing paid twice


# ------------------------------------------------------------------ two processes, one store


@pytest.mark.slow
def test_two_processes_on_one_store_ask_each_ballot_once(project, fake_llm):
    fake_llm.latency_s = 0.3
    all_say(fake_llm)
    panel = write_panel(project, fake_llm.base_url, FOUR)
    assert runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--plan"]).exit_code == 0
    cmds = [
        [sys.executable, "-m", "jury", "adjudicate", "run.jsonl", "--panel", str(panel), "-o", f"verdicts/{n}.json"]
        for n in ("one", "two")
    ]
    procs = [subprocess.Popen(c, cwd=project, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds]
    outs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    docs = [load_locked(project / "verdicts" / f"{n}.json") for n in ("one", "two")]
    distinct = {v.request_sha256 for r in docs[0].records for v in r.votes}
    assert fake_llm.calls() == len(distinct)  # no ballot paid twice
    assert [(r.model, r.question_id, r.verdict) for r in docs[0].records] == [
        (r.model, r.question_id, r.verdict) for r in docs[1].records
    ]
    assert store_rows(project, "SELECT count(*) FROM claims") == [(0,)]


@pytest.mark.slow
def test_two_processes_share_the_ballots_and_hold_claims_only_for_those_in_flight(project, fake_llm):
    """Each process claims a ballot only when one of its juror's slots is free (max_concurrency
    1 here, 4 jurors: at most 4 claims per process at any moment, where a process used to claim
    every ballot at once), so the second takes the ballots the first is not asking: both ask,
    together each ballot once. The claims table is read from the store while they run."""
    import re
    import threading

    fake_llm.latency_s = 1.0
    all_say(fake_llm)
    panel = write_panel(project, fake_llm.base_url, FOUR)
    panel.write_text(panel.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    assert runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--plan"]).exit_code == 0
    held: dict[str, int] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            with sqlite3.connect(project / ".jury" / "store.db", timeout=5) as conn:
                for holder, n in conn.execute("SELECT holder, count(*) FROM claims GROUP BY holder"):
                    held[holder] = max(held.get(holder, 0), n)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cmds = [
        [sys.executable, "-m", "jury", "adjudicate", "run.jsonl", "--panel", str(panel), "-o", f"verdicts/{n}.json"]
        for n in ("one", "two")
    ]
    procs = [subprocess.Popen(c, cwd=project, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds]
    outs = [p.communicate(timeout=240) for p in procs]
    stop.set()
    sampler.join()
    assert [p.returncode for p in procs] == [0, 0], outs
    asked = [int(re.search(r"calls this run: (\d+) ballots asked", flat(out)).group(1)) for out, _ in outs]
    docs = [load_locked(project / "verdicts" / f"{n}.json") for n in ("one", "two")]
    distinct = {v.request_sha256 for r in docs[0].records for v in r.votes}
    assert len(distinct) > 8  # more ballots than the two processes' slots together
    assert fake_llm.calls() == sum(asked) == len(distinct)  # each ballot asked once, by one of them
    assert min(asked) > 0  # both took a share
    assert held and max(held.values()) <= 4  # per process: 4 jurors x max_concurrency 1
    assert store_rows(project, "SELECT count(*) FROM claims") == [(0,)]


@pytest.mark.slow
def test_a_dead_holders_claim_is_taken_over(project, fake_llm, monkeypatch):
    from jury.execution.store import Store

    all_say(fake_llm)
    panel = write_panel(project, fake_llm.base_url, FOUR)
    assert runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--plan"]).exit_code == 0
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    import socket

    # claim every request this run will make, as a process that no longer exists
    res = adjudicate("--panel", str(panel), "-o", "verdicts/probe.json")
    hashes = {v.request_sha256 for r in load_locked(project / "verdicts" / "probe.json").records for v in r.votes}
    store_rows(project, "DELETE FROM votes")
    with Store(project / ".jury" / "store.db") as st:
        for h in hashes:
            assert st.claim(h, f"{socket.gethostname()}:{dead.pid}:dead", 3600) is None
    # every claim is taken over at the first try: none waits for the dead holder's lease (an
    # hour). A claim refused to this run fails it at once instead of hanging the test.
    refused = []
    real_claim = Store.claim

    def claim(store, request_sha256, holder, lease_s):
        other = real_claim(store, request_sha256, holder, lease_s)
        if other is not None:
            refused.append(other)
            raise RuntimeError(f"claim refused: held by {other}")
        return other

    monkeypatch.setattr(Store, "claim", claim)
    before = fake_llm.calls()
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/again.json"])
    assert refused == [] and res.exit_code == 0, res.output
    assert fake_llm.calls() - before == len(hashes)


def test_a_response_body_over_the_limit_is_not_read_and_abstains(project, fake_llm, monkeypatch):
    from jury.judging.providers import setup

    monkeypatch.setattr(setup, "MAX_RESPONSE_BYTES", 1024 * 1024)
    all_say(fake_llm)
    fake_llm.script("jc", ballot_reply("both", reasoning="y" * 3_000_000))
    res = adjudicate("--panel", str(write_panel(project, fake_llm.base_url, FOUR)))
    assert res.exit_code == 0, res.output  # an unusable reply is a final abstention, not an outage
    doc = load_locked(verdict_files(project)[0])
    jc = [v for r in doc.records for v in r.votes if v.juror == "jc"]
    assert jc and all(v.abstained and "over the 1 MB limit" in v.reason for v in jc)
    assert fake_llm.calls("jc") == len({v.request_sha256 for v in jc})  # no retry, no repair turn
