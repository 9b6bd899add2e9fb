"""--batch: ballots through the providers' batch APIs (jury/judging/batch.py), against a loopback
server speaking OpenAI's Files + Batches and Anthropic's Message Batches protocols, through real
litellm (tests/support/batch_server.py)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.verdicts.lock import load_locked
from tests.support.batch_server import BatchServer
from tests.support.fakellm import Reply
from tests.support.jurytest import make_project, says, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
CATEGORY = {"ja": "gold_defect", "jb": "gold_defect", "jc": "genuine_error", "jd": "gold_defect"}


def _script(server) -> None:
    for name, category in CATEGORY.items():
        server.script(name, says(category))


def _adjudicate(*args):
    return runner.invoke(app, ["adjudicate", "run.jsonl", *args], catch_exceptions=False)


def _verdicts(tmp: Path) -> list[Path]:
    return sorted((tmp / "verdicts").glob("adjudication-*.json"))


def _records(path: Path, drop_via: bool = True) -> list[dict]:
    out = []
    for r in load_locked(path).records:
        d = r.model_dump(mode="json")
        if drop_via:
            for v in d["votes"]:
                v.pop("via", None)
        out.append(d)
    return sorted(out, key=lambda d: (d["model"], str(d["question_id"])))


def _items(tmp: Path) -> list[tuple]:
    with sqlite3.connect(tmp / ".jury" / "store.db") as conn:
        return conn.execute("SELECT batch_id, request_sha256, state FROM batch_items ORDER BY rowid").fetchall()


@pytest.fixture
def batch_server():
    with BatchServer() as server:
        yield server


def _project(tmp: Path, name: str, base_url: str, jurors=FOUR, **kw) -> Path:
    d = tmp / name
    d.mkdir()
    make_project(d)
    write_panel(d, base_url, jurors, **kw)
    return d


def test_a_batched_adjudication_gives_the_synchronous_verdicts(tmp_path, monkeypatch, batch_server):
    """Run 1 submits (the batch is still in progress: exit 3, naming it); run 2 collects, stores
    every vote as a synchronous vote and writes the same verdicts, each vote marked via batch."""
    _script(batch_server)  # the same server answers the synchronous run: the same api_base, the same request hashes
    sync_dir = _project(tmp_path, "sync", batch_server.base_url)
    monkeypatch.chdir(sync_dir)
    res = _adjudicate("--panel", "panel.toml")
    assert res.exit_code == 0, res.output
    [sync_file] = _verdicts(sync_dir)
    assert batch_server.calls() == 17 and not batch_server.submitted()
    batch_server.reset()

    batch_server.polls_before_end = 1  # still in progress when run 1 polls it right after submitting
    batch_dir = _project(tmp_path, "batch", batch_server.base_url)
    monkeypatch.chdir(batch_dir)
    first = _adjudicate("--panel", "panel.toml", "--batch")
    assert first.exit_code == 3, first.output
    sent = batch_server.submitted("openai")
    assert len(sent) == len(set(sent)) == 17  # 18 ballots, two of them the same request (one call serves both)
    assert "18 ballots pending in batches" in " ".join(first.output.split())
    assert batch_server.calls() == 0  # nothing went synchronously
    assert not _verdicts(batch_dir)
    status = runner.invoke(app, ["batch", "status"], catch_exceptions=False)
    assert status.exit_code == 0 and "in_progress" in status.output and "openai" in status.output

    second = _adjudicate("--panel", "panel.toml", "--batch")
    assert second.exit_code == 0, second.output
    assert len(batch_server.submitted()) == 17  # nothing submitted twice
    assert batch_server.calls() == 0
    [batch_file] = _verdicts(batch_dir)
    assert _records(batch_file) == _records(sync_file)
    assert all(v["via"] == "batch" for r in _records(batch_file, drop_via=False) for v in r["votes"])
    assert all("via" not in v for r in _records(sync_file, drop_via=False) for v in r["votes"])
    assert {state for _b, _h, state in _items(batch_dir)} == {"used"}

    third = _adjudicate("--panel", "panel.toml", "--batch")  # finished: reuses the locked file, no batch
    assert third.exit_code == 0, third.output
    assert len(batch_server.submitted()) == 17


def _env() -> dict:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}


def _jury(*args, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "jury", *args], cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _submitted_batches(tmp: Path) -> int:
    try:
        with sqlite3.connect(tmp / ".jury" / "store.db") as conn:
            return conn.execute("SELECT count(*) FROM batches WHERE state = 'in_progress'").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_kill_9_after_submission_then_resume_submits_nothing_again(tmp_path, monkeypatch, batch_server):
    _script(batch_server)
    batch_server.poll_delay_s = 20.0  # the run hangs polling right after it submitted: killed there
    d = _project(tmp_path, "p", batch_server.base_url)
    proc = _jury("adjudicate", "run.jsonl", "--panel", "panel.toml", "--batch", cwd=d)
    deadline = time.monotonic() + 60
    while _submitted_batches(d) < 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    sent = batch_server.submitted()
    assert len(sent) == 17
    batch_server.poll_delay_s = 0.0
    monkeypatch.chdir(d)
    res = _adjudicate("--panel", "panel.toml", "--batch")
    assert res.exit_code == 0, res.output
    assert batch_server.submitted() == sent  # picked up by id: nothing submitted twice
    assert batch_server.calls() == 0
    [path] = _verdicts(d)
    assert {v.category for r in load_locked(path).records for v in r.votes} <= set(CATEGORY.values())


@pytest.mark.slow
def test_failed_items_are_an_incomplete_set_and_only_they_are_resubmitted(tmp_path, monkeypatch, batch_server):
    _script(batch_server)
    batch_server.polls_before_end = 1
    d = _project(tmp_path, "p", batch_server.base_url)
    monkeypatch.chdir(d)
    assert _adjudicate("--panel", "panel.toml", "--batch").exit_code == 3  # submitted, in progress
    first = batch_server.submitted()
    batch_server.fail_items = set(first[:2])
    res = _adjudicate("--panel", "panel.toml", "--batch")  # collected: two items failed
    assert res.exit_code == 3, res.output
    assert "got no vote" in res.output and "server_error" in res.output
    assert not _verdicts(d)
    batch_server.fail_items = set()
    res = _adjudicate("--panel", "panel.toml", "--batch")  # the two submitted again, pending
    assert res.exit_code == 3, res.output
    requests = batch_server.submitted_requests()  # the same two requests, under the new batch's custom_ids
    assert requests[len(first) :] == requests[:2]
    res = _adjudicate("--panel", "panel.toml", "--batch")
    assert res.exit_code == 0, res.output
    assert len(batch_server.submitted()) == len(first) + 2


@pytest.mark.slow
def test_an_expired_batch_resubmits_only_its_unanswered_ballots(tmp_path, monkeypatch, batch_server):
    _script(batch_server)
    batch_server.expire_next, batch_server.expire_keep = 1, 2  # the first batch to end answers 2 lines, then expires
    d = _project(tmp_path, "p", batch_server.base_url)
    monkeypatch.chdir(d)
    res = _adjudicate("--panel", "panel.toml", "--batch")
    assert res.exit_code == 3, res.output
    [expired] = [b for b in batch_server.batches.values() if b["state"] == "expired"]
    lost = [json.dumps(line["request"], sort_keys=True) for line in expired["lines"][2:]]
    assert lost and "batch_expired" in res.output
    status = runner.invoke(app, ["batch", "status"], catch_exceptions=False)
    assert "expired" in status.output
    res = _adjudicate("--panel", "panel.toml", "--batch")
    assert res.exit_code == 0, res.output
    resent = batch_server.submitted_requests()[17:]
    assert sorted(resent) == sorted(lost)


def _batch_jurors(panel: Path, names: set[str]) -> None:
    """`batch = true` on these jurors of a write_panel file."""
    out = []
    for block in panel.read_text().split("[[jurors]]"):
        if any(f'name = "{n}"' in block for n in names):
            block = block.rstrip("\n") + "\nbatch = true\n\n"
        out.append(block)
    panel.write_text("[[jurors]]".join(out))


def test_a_mixed_panel_batches_its_batch_jurors_and_asks_the_others_at_once(tmp_path, monkeypatch, batch_server):
    _script(batch_server)
    d = _project(tmp_path, "p", batch_server.base_url)
    _batch_jurors(d / "panel.toml", {"ja", "jc"})  # batch = true on two jurors, no --batch
    monkeypatch.chdir(d)
    res = _adjudicate("--panel", "panel.toml")
    assert res.exit_code == 0, res.output
    models = {b["lines"][0]["model"] for b in batch_server.batches.values()}
    assert models == {"ja", "jc"}
    assert {r["model"] for r in batch_server.requests} == {"jb", "jd"}
    [path] = _verdicts(d)
    for r in load_locked(path).records:
        for v in r.votes:
            assert (v.via == "batch") == (v.juror in ("ja", "jc"))
    jurors = load_locked(path).panel.jurors
    assert all("batch" not in j for j in jurors)  # an operational knob: not part of the juror's identity


def test_an_unparseable_batch_reply_gets_its_repair_turn_synchronously(tmp_path, monkeypatch, batch_server):
    _script(batch_server)
    calls = {"n": 0}

    def first_bad(request):
        calls["n"] += 1
        return Reply(content="I think answer 1.") if calls["n"] == 1 else says("gold_defect")(request)

    batch_server.script("ja", first_bad)
    d = _project(tmp_path, "p", batch_server.base_url)
    monkeypatch.chdir(d)
    res = _adjudicate("--panel", "panel.toml", "--batch")
    assert res.exit_code == 0, res.output
    [repair] = batch_server.requests  # the one synchronous request: the repair turn
    assert repair["model"] == "ja" and [m["role"] for m in repair["messages"]][-2:] == ["assistant", "user"]
    with sqlite3.connect(d / ".jury" / "store.db") as conn:
        [(attempts, log)] = conn.execute("SELECT attempts, log FROM calls WHERE juror = 'ja' AND attempts = 2").fetchall()
    entries = json.loads(log)
    assert entries[0]["via"] == "batch" and entries[0]["status"] == "bad_output" and "via" not in entries[1]


@pytest.mark.slow
def test_two_processes_on_one_store_submit_each_ballot_once(tmp_path, monkeypatch, batch_server):
    _script(batch_server)
    batch_server.polls_before_end = 1000  # stays in progress while both run
    d = _project(tmp_path, "p", batch_server.base_url)
    procs = [_jury("adjudicate", "run.jsonl", "--panel", "panel.toml", "--batch", cwd=d) for _ in range(2)]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [3, 3], [p.communicate() for p in procs]
    sent = batch_server.submitted()
    assert len(sent) == len(set(sent)) == 17
    batch_server.polls_before_end = 0
    monkeypatch.chdir(d)
    assert _adjudicate("--panel", "panel.toml", "--batch").exit_code == 0
    assert len(batch_server.submitted()) == 17


def test_anthropic_message_batches(tmp_path, monkeypatch, batch_server):
    _script(batch_server)
    jurors = [(n, f, f"anthropic/{n}") for n, f in FOUR]
    d = _project(tmp_path, "p", batch_server.root_url, jurors=jurors)
    monkeypatch.chdir(d)
    res = _adjudicate("--panel", "panel.toml", "--batch")
    assert res.exit_code == 0, res.output
    assert batch_server.calls() == 0 and len(batch_server.submitted("anthropic")) == 17
    [batch] = [b for b in batch_server.batches.values()][:1]
    params = batch["body"]["requests"][0]["params"]
    assert params["max_tokens"] > 0 and params["temperature"] == 0 and params["system"]
    assert "json_mode" not in params  # litellm's marker, not a Messages API field
    [path] = _verdicts(d)
    for r in load_locked(path).records:
        for v in r.votes:
            assert v.via == "batch" and v.category == CATEGORY[v.juror]


def test_large_submissions_are_split_at_the_provider_limit(tmp_path, monkeypatch, batch_server):
    from jury.judging import batch

    monkeypatch.setitem(batch.LIMITS, "openai", (4, 10**9))
    _script(batch_server)
    d = _project(tmp_path, "p", batch_server.base_url)
    monkeypatch.chdir(d)
    assert _adjudicate("--panel", "panel.toml", "--batch").exit_code == 0
    assert max(batch_server.batch_sizes()) == 4 and sum(batch_server.batch_sizes()) == 17


def test_anthropic_batch_params_are_what_litellm_sends_synchronously():
    """A Claude model with native structured output gets output_format (and the beta header)."""
    from jury.judging.batch import anthropic_request
    from jury.judging.juror import JurorSpec
    from jury.judging.plan import Ballot

    juror = JurorSpec(name="c", model="anthropic/claude-sonnet-4-5", family="anthropic")
    messages = [{"role": "system", "content": "judge"}, {"role": "user", "content": "ballot"}]
    ballot = Ballot("adjudication", 1, "m", juror, "blind", messages, "0" * 64)
    req = anthropic_request(ballot)
    assert req["custom_id"] == ballot.request_sha256
    p = req["params"]
    assert p["model"] == "claude-sonnet-4-5" and p["system"][0]["text"] == "judge" and p["temperature"] == 0
    assert p["output_format"]["type"] == "json_schema" and "json_mode" not in p


def test_plan_prices_batch_ballots_at_the_batch_rate():
    """litellm's batch prices where it has them (gpt-4.1: half), else half the synchronous
    price named as estimated; a juror without a batch API keeps its synchronous price."""
    import litellm

    from jury.judging.juror import JurorSpec
    from jury.judging.plan import Ballot, plan_rows

    messages = [{"role": "user", "content": "Which answer is right? " * 200}]
    unbatched = next(
        m
        for m, v in litellm.model_cost.items()
        if m.startswith("gpt-") and "input_cost_per_token_batches" not in v and v.get("input_cost_per_token")
    )
    jurors = [
        JurorSpec(name="g", model="openai/gpt-4.1", family="openai"),
        JurorSpec(name="o", model=f"openai/{unbatched}", family="openai"),
        JurorSpec(name="x", model="xai/grok-3", family="xai"),
    ]
    ballots = [Ballot("adjudication", q, "m", j, "blind", messages, "0" * 64) for j in jurors for q in range(3)]
    sync = {r["juror"]: r for r in plan_rows(ballots)}
    batch = {r["juror"]: r for r in plan_rows(ballots, batch=True)}
    assert batch["g"]["cost_usd"] == pytest.approx(sync["g"]["cost_usd"] / 2)
    assert batch["g"]["via"] == "batch" and not batch["g"]["batch_rate_estimated"]
    assert batch["o"]["cost_usd"] == pytest.approx(sync["o"]["cost_usd"] / 2) and batch["o"]["batch_rate_estimated"]
    assert batch["x"]["cost_usd"] == sync["x"]["cost_usd"] and "via" not in batch["x"]
    assert all("via" not in r for r in sync.values())


def test_the_call_log_records_the_batch_price(tmp_path, monkeypatch, batch_server):
    """A batch reply is priced at litellm's batch rate (gpt-4.1: $1 and $4 per million tokens)."""
    batch_server.set_default(
        Reply(content=json.dumps({"reasoning": "r", "verdict": "answer_1"}), prompt_tokens=1000, completion_tokens=100)
    )
    jurors = [("ja", "openai", "openai/gpt-4.1"), ("jc", "google"), ("jd", "xai"), ("jb", "anthropic")]
    d = _project(tmp_path, "p", batch_server.base_url, jurors=jurors)
    monkeypatch.chdir(d)
    assert _adjudicate("--panel", "panel.toml", "--batch").exit_code == 0
    with sqlite3.connect(d / ".jury" / "store.db") as conn:
        costs = [c for (c,) in conn.execute("SELECT cost_usd FROM calls WHERE juror = 'ja'")]
    assert costs and costs == pytest.approx([1000 * 1e-6 + 100 * 4e-6] * len(costs))  # synchronous: 2e-6 and 8e-6
