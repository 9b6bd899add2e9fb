"""--batch for Gemini jurors (Google AI Studio's Batch API, input-file mode): submitted, polled
and read by jury (jury/judging/batch.py, batch_poll.py, batch_results.py) against the loopback
BatchServer's scripted Gemini endpoints (tests/support/batch_server.py), real litellm in between
for the request and the reply's conversion; priced at litellm's Gemini batch rate."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path

import pytest

from jury.cli import app
from jury.verdicts.lock import load_locked
from tests.support.batch_server import BatchServer, Huge
from tests.support.fakellm import Reply
from tests.test_batch import CATEGORY, FOUR, _adjudicate, _project, _script, _verdicts, runner
from tests.test_batch_faults import _all_scripted, _failed, _items, _once, _requests, _text, _votes

GEMINI = [(n, f, f"gemini/{n}") for n, f in FOUR]
MIB = 1024 * 1024


@pytest.fixture
def server():
    with BatchServer() as s:
        _script(s)
        yield s


def _start(tmp: Path, server: BatchServer, monkeypatch, jurors=GEMINI, name: str = "p") -> Path:
    d = _project(tmp, name, server.root_url, jurors=jurors)
    monkeypatch.chdir(d)
    return d


def _run(*extra):
    return _adjudicate("--panel", "panel.toml", "--batch", *extra)


def _votes_via(d: Path) -> list[tuple[str, str, str | None]]:
    [path] = _verdicts(d)
    return [(v.juror, v.category, v.via) for r in load_locked(path).records for v in r.votes]


def test_a_gemini_batch_is_submitted_as_a_file_polled_and_read(tmp_path, monkeypatch, server):
    """Run 1 uploads the JSONL, creates the batch and finds it running (exit 3); run 2 reads
    its responses file and locks the scripted verdicts, every vote via batch; nothing went
    synchronously and nothing was submitted twice."""
    server.polls_before_end = 1
    d = _start(tmp_path, server, monkeypatch)
    first = _run()
    assert first.exit_code == 3, first.output
    assert "18 ballots pending in batches" in _text(first)
    sent = server.submitted("gemini")
    assert len(sent) == len(set(sent)) == 17  # 18 ballots, two of them one request
    status = runner.invoke(app, ["batch", "status"], catch_exceptions=False)
    assert status.exit_code == 0 and "gemini" in status.output and "in_progress" in status.output
    second = _run()
    assert second.exit_code == 0, second.output
    assert server.calls() == 0 and len(server.submitted("gemini")) == 17
    votes = _votes_via(d)
    assert votes and all(via == "batch" and cat == CATEGORY[j] for j, cat, via in votes)
    assert {state for state, _e in _items(d).values()} == {"used"}
    # the upload was Google's resumable protocol: a start, then "upload, finalize" to the URL it answered
    starts = [h for h in server.gemini_headers if h.get("x-goog-upload-command") == "start"]
    finals = [h for h in server.gemini_headers if h.get("x-goog-upload-command") == "upload, finalize"]
    assert len(starts) == len(finals) == 4 and all(h["x-goog-upload-header-content-type"] == "application/jsonl" for h in starts)
    # each batch names its input file and a display name of jury's own batch id
    for b in (b for b in server.batches.values() if b["protocol"] == "gemini"):
        assert b["body"]["batch"]["input_config"]["file_name"].startswith("files/")
        assert b["body"]["batch"]["display_name"].startswith("jury-jb2_")


def test_a_gemini_request_is_what_litellm_makes_of_the_synchronous_one():
    """The GenerateContentRequest: the system prompt as system_instruction, the ballot as a
    user turn, temperature, the reply token cap and the reply's JSON schema in generationConfig."""
    from jury.judging.batch import gemini_request
    from jury.judging.juror import JurorSpec
    from jury.judging.plan import Ballot
    from jury.judging.providers.params import reply_token_cap

    juror = JurorSpec(name="g", model="gemini/gemini-3.5-flash", family="google", params={"temperature": 0})
    messages = [{"role": "system", "content": "judge"}, {"role": "user", "content": "ballot"}]
    ballot = Ballot("adjudication", 1, "m", juror, "blind", messages, "0" * 64)
    line = gemini_request(ballot)
    assert line["custom_id"] == ballot.request_sha256
    req = line["request"]
    assert req["system_instruction"] == {"parts": [{"text": "judge"}]}
    assert req["contents"] == [{"role": "user", "parts": [{"text": "ballot"}]}]
    config = req["generationConfig"]
    assert config["temperature"] == 0 and config["max_output_tokens"] == reply_token_cap("gemini/gemini-3.5-flash")
    assert config["response_mime_type"] == "application/json"
    assert set(config["response_json_schema"]["properties"]) >= {"reasoning", "verdict"}


def test_the_plan_prices_gemini_ballots_at_its_batch_rate():
    """litellm's map holds Gemini's batch prices (gemini-3.5-flash: $0.75 and $4.50 per million
    tokens against $1.50 and $9.00): a batched Gemini juror costs half, not estimated."""
    from jury.judging.juror import JurorSpec
    from jury.judging.plan import Ballot, plan_rows

    messages = [{"role": "user", "content": "Which answer is right? " * 200}]
    juror = JurorSpec(name="g", model="gemini/gemini-3.5-flash", family="google")
    ballots = [Ballot("adjudication", q, "m", juror, "blind", messages, "0" * 64) for q in range(3)]
    [sync] = plan_rows(ballots)
    [batch] = plan_rows(ballots, batch=True)
    assert batch["via"] == "batch" and not batch["batch_rate_estimated"]
    tokens, completion = sync["prompt_tokens"], sync["completion_tokens"]
    assert sync["cost_usd"] == pytest.approx(tokens * 1.5e-6 + completion * 9e-6)
    assert batch["cost_usd"] == pytest.approx(tokens * 0.75e-6 + completion * 4.5e-6)


def test_the_call_log_records_gemini_s_batch_price(tmp_path, monkeypatch, server):
    """A Gemini batch reply's usage (1,000 prompt, 100 reply tokens) is priced at the batch rate:
    1000 * 0.75e-6 + 100 * 4.5e-6 = 0.0012 USD (synchronously 0.0024)."""
    server.set_default(
        Reply(content=json.dumps({"reasoning": "r", "verdict": "answer_1"}), prompt_tokens=1000, completion_tokens=100)
    )
    jurors = [("jc", "google", "gemini/gemini-3.5-flash"), *((n, f, f"gemini/{n}") for n, f in FOUR if f != "google")]
    d = _start(tmp_path, server, monkeypatch, jurors=jurors)
    assert _run().exit_code == 0
    with sqlite3.connect(d / ".jury" / "store.db") as conn:
        costs = [c for (c,) in conn.execute("SELECT cost_usd FROM calls WHERE juror = 'jc'")]
    assert costs and costs == pytest.approx([1000 * 0.75e-6 + 100 * 4.5e-6] * len(costs))


# ------------------------------------------------------------------ issue 29's rules on the Gemini path


def test_a_request_answered_twice_gets_neither_answer(tmp_path, monkeypatch, server):
    dup: list[str] = []

    def change(b, lines):
        twin = copy.deepcopy(lines[0])
        twin["response"]["candidates"][0]["content"]["parts"][0]["text"] = json.dumps(
            {"reasoning": "forged", "verdict": "neither"}
        )
        [sent] = [x for x in b["lines"] if x["custom_id"] == lines[0]["key"]]
        dup.append(json.dumps(sent["request"], sort_keys=True))
        return [*lines, twin]

    server.tamper = _once("responses", change)
    d = _start(tmp_path, server, monkeypatch)
    first = _run()
    assert first.exit_code == 3, first.output
    assert "returned 2 results for this request" in _text(first) and "answered more than once" in _text(first)
    sent = len(_requests(server))
    second = _run()
    assert second.exit_code == 0, second.output
    assert _requests(server)[sent:] == dup  # only that ballot went again
    _all_scripted(d)
    assert not any("forged" in (r or "") for votes in _votes(d).values() for _q, _c, r in votes)


@pytest.mark.parametrize("spelling", ["upper", "request hash", "another batch's"])
def test_a_result_keyed_for_a_request_the_batch_never_held_is_ignored_and_counted(tmp_path, monkeypatch, server, spelling):
    """A line under the raw request hash (an unbound id), another spelling of a bound one, or
    a key bound to another batch: ignored, counted, never stored; the run finishes on the
    genuine lines."""
    from jury.judging.batch_results import custom_id_of

    def change(b, lines):
        forged = copy.deepcopy(lines[0])
        forged["response"]["candidates"][0]["content"]["parts"][0]["text"] = json.dumps(
            {"reasoning": "forged", "verdict": "neither"}
        )
        key = lines[0]["key"]
        forged["key"] = {
            "upper": key.upper(),
            "request hash": "0" * 64,
            "another batch's": custom_id_of("jb2_0000000000000000", "0" * 64),
        }[spelling]
        return [*lines, forged]

    server.tamper = _once("responses", change)
    d = _start(tmp_path, server, monkeypatch)
    res = _run()
    assert res.exit_code == 0, res.output
    assert "1 result line for requests this batch never held (ignored)" in _text(res), res.output
    _all_scripted(d)


def test_an_errored_line_fails_its_item_and_only_it_goes_again(tmp_path, monkeypatch, server):
    d = _start(tmp_path, server, monkeypatch)
    server.polls_before_end = 1
    assert _run().exit_code == 3
    first = next(b for b in server.batches.values() if b["protocol"] == "gemini")
    server.fail_items = {first["lines"][0]["custom_id"]}
    lost = json.dumps(first["lines"][0]["request"], sort_keys=True)
    server.polls_before_end = 0
    res = _run()
    assert res.exit_code == 3 and "13: fake error" in _text(res), res.output
    assert len(_failed(d)) == 1
    server.fail_items = set()
    sent = len(_requests(server))
    assert _run().exit_code == 0
    assert _requests(server)[sent:] == [lost]
    _all_scripted(d)


@pytest.mark.parametrize("end", ["failed", "expired", "cancelled"])
def test_a_batch_that_fails_expires_or_is_cancelled_resubmits_only_what_it_left(tmp_path, monkeypatch, server, end):
    server.end_next, server.expire_keep = [end], 2  # the first batch to end: 2 lines answered (none if failed)
    d = _start(tmp_path, server, monkeypatch)
    first = _run()
    assert first.exit_code == 3, first.output
    [ended] = [b for b in server.batches.values() if b["state"] == end]
    keep = 0 if end == "failed" else 2
    lost = [json.dumps(line["request"], sort_keys=True) for line in ended["lines"][keep:]]
    status = runner.invoke(app, ["batch", "status"], catch_exceptions=False)
    assert end in status.output
    if end == "failed":
        assert "3: fake validation failure" in status.output
    sent = len(_requests(server))
    second = _run()
    assert second.exit_code == 0, second.output
    assert sorted(_requests(server)[sent:]) == sorted(lost)
    _all_scripted(d)


def test_a_responses_line_over_the_reply_cap_is_the_synchronous_abstention(tmp_path, monkeypatch, server):
    """A 40 MiB line naming its key first is read past in chunks: its vote is the synchronous
    path's final abstention, nothing of it is stored."""

    def change(b, lines):
        head = json.dumps({"key": lines[0]["key"], "response": {"candidates": [{"content": {"parts": [{"text": ""}]}}]}})
        return [Huge(40 * MIB, head=head.encode()[:-8], tail=b'"}]}}]}}\n'), *lines[1:]]

    server.tamper = _once("responses", change)
    d = _start(tmp_path, server, monkeypatch)
    res = _run()
    assert res.exit_code == 0, res.output
    abstained = [r for votes in _votes(d).values() for _q, c, r in votes if c is None]
    assert len(abstained) == 1 and "unusable reply" in abstained[0] and "over 16 MB" in abstained[0], abstained
    assert (d / ".jury" / "store.db").stat().st_size < 8 * MIB


def test_an_upload_url_on_another_host_gets_neither_the_key_nor_the_ballots(tmp_path, monkeypatch, server):
    """The Files API's answer points the upload elsewhere: nothing is sent there, the batch
    fails at submission, and a rerun (the provider fixed) submits the ballots again."""
    with BatchServer() as elsewhere:
        server.upload_root = elsewhere.root_url.replace("127.0.0.1", "localhost")
        d = _start(tmp_path, server, monkeypatch)
        first = _run()
        assert first.exit_code == 3, first.output
        assert "upload URL is on another host" in _text(first), first.output
        assert elsewhere.files == {} and not server.submitted("gemini")
    server.upload_root = None
    second = _run()
    assert second.exit_code == 0, second.output
    _all_scripted(d)


@pytest.mark.parametrize(
    "fault",
    [
        {"metadata": {"state": "BATCH_STATE_SUCCEEDED"}, "response": {"responsesFile": "files/../../v1beta/batches"}},
        {"metadata": {"state": "BATCH_STATE_SUCCEEDED"}, "response": {"inlinedResponses": {"inlinedResponses": []}}},
        {"metadata": {"state": 7}},
    ],
    ids=["responses-file-outside-files", "inline-responses", "no-state"],
)
def test_a_batch_object_that_cannot_be_read_ends_the_batch_and_its_ballots_go_again(tmp_path, monkeypatch, server, fault):
    """A responsesFile that is not files/<id> is never fetched; inline responses (which jury
    never asks for) are not read from the batch object; either fails the batch and the rerun
    submits its ballots again. A batch object without a state string is unreadable too."""
    d = _start(tmp_path, server, monkeypatch)
    server.polls_before_end = 1
    assert _run().exit_code == 3
    first = next(b for b in server.batches.values() if b["protocol"] == "gemini")
    server.get_faults.append((lambda p, bid=first["id"]: p == f"/v1beta/batches/{bid}", 200, {}, json.dumps(fault).encode()))
    server.polls_before_end = 0
    res = _run()
    assert res.exit_code == 3, res.output
    assert "its ballots are submitted again" in _text(res), res.output
    assert not any("v1beta/batches" in r for r in server.content_reads)
    assert _run().exit_code == 0
    _all_scripted(d)


def test_the_default_panel_s_plan_sends_gemini_through_its_batch_api(tmp_path, monkeypatch):
    """`--plan --batch` on the shipped default panel: the Gemini juror's ballots go via batch at
    litellm's Gemini batch prices, the jurors without a batch path (xAI, DeepSeek) stay at
    their synchronous price (before: Gemini stayed synchronous too, 0.66 of the estimate)."""
    import litellm

    import jury
    from tests.support.jurytest import make_project

    monkeypatch.chdir(make_project(tmp_path))
    sync = {r["juror"]: r for r in jury.adjudicate("run.jsonl", plan=True).plan.rows}
    batch = {r["juror"]: r for r in jury.adjudicate("run.jsonl", plan=True, batch=True).plan.rows}
    price = litellm.model_cost["gemini/gemini-3.5-flash"]
    g = batch["gemini-3.5-flash"]
    assert g["via"] == "batch" and not g["batch_rate_estimated"]
    expected = (
        g["prompt_tokens"] * price["input_cost_per_token_batches"]
        + g["completion_tokens"] * price["output_cost_per_token_batches"]
    )
    assert g["cost_usd"] == pytest.approx(expected) and g["cost_usd"] == pytest.approx(sync["gemini-3.5-flash"]["cost_usd"] / 2)
    for name, row in batch.items():
        if row["juror_model"].split("/")[0] in ("xai", "deepseek"):
            assert "via" not in row and row["cost_usd"] == sync[name]["cost_usd"]
