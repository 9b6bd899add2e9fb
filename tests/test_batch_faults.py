"""--batch against broken or hostile providers: result lines of every wrong shape, lines over
the reply cap, deep nesting, duplicate and foreign custom_ids, replayed files, and batches that
expire, fail or are cancelled, on OpenAI's output and error files and Anthropic's results
stream (jury/judging/batch_results.py). Each fault ends as failed items (a rerun submits them
again), a final abstention where a synchronous reply would get one, or ignored and counted
lines, never a crash; a rerun finishes the project. Through `jury adjudicate --batch` against
the loopback BatchServer (tests/support/batch_server.py), real litellm in between."""

from __future__ import annotations

import copy
import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from jury.cli import app
from jury.verdicts.lock import load_locked
from tests.support.batch_server import BatchServer, Huge
from tests.support.jurytest import says
from tests.test_batch import CATEGORY, FOUR, _adjudicate, _project, _script, _verdicts, runner

ANTHROPIC = [(n, f, f"anthropic/{n}") for n, f in FOUR]
MIB = 1024 * 1024


@pytest.fixture
def server():
    with BatchServer() as s:
        _script(s)
        yield s


def _start(tmp: Path, server: BatchServer, monkeypatch, protocol: str = "openai", name: str = "p") -> Path:
    d = _project(
        tmp,
        name,
        server.base_url if protocol == "openai" else server.root_url,
        jurors=FOUR if protocol == "openai" else ANTHROPIC,
    )
    monkeypatch.chdir(d)
    return d


def _run(*extra):
    return _adjudicate("--panel", "panel.toml", "--batch", *extra)


def _text(res) -> str:
    return " ".join(res.output.split())


def _items(d: Path) -> dict[str, tuple[str, str | None]]:
    """request hash -> (state, error) of its latest batch item."""
    with sqlite3.connect(d / ".jury" / "store.db") as conn:
        rows = conn.execute(
            "SELECT i.request_sha256, i.state, i.error FROM batch_items i JOIN batches b ON b.id = i.batch_id "
            "ORDER BY b.created_at, b.rowid"
        ).fetchall()
    return {h: (state, error) for h, state, error in rows}


def _failed(d: Path) -> set[str]:
    """Request hashes whose latest batch item failed."""
    return {h for h, (state, _e) in _items(d).items() if state == "failed"}


def _votes(d: Path) -> dict[tuple[str, str], list]:
    """(juror, model) -> [(question id, category, reason)] of the verdict file."""
    [path] = _verdicts(d)
    out: dict = {}
    for r in load_locked(path).records:
        for v in r.votes:
            out.setdefault((v.juror, r.model), []).append((r.question_id, v.category, v.reason))
    return out


def _all_scripted(d: Path) -> None:
    """Every vote of the verdict file is the scripted juror's: nothing forged got in."""
    for (juror, _model), votes in _votes(d).items():
        assert {c for _q, c, _r in votes} == {CATEGORY[juror]}, (juror, votes)


def _requests(server: BatchServer) -> list[str]:
    return server.submitted_requests()


def _request_of(b: dict, line: dict) -> str:
    [sent] = [x for x in b["lines"] if x["custom_id"] == line["custom_id"]]
    return json.dumps(sent["request"], sort_keys=True)


def _once(kind: str, change):
    """A tamper that changes the first batch's `kind` lines (output, error or results) once."""
    state = {"done": False}

    def tamper(k, b, lines):
        if k != kind or state["done"] or not lines:
            return lines
        state["done"] = True
        return change(b, lines)

    return tamper


def _content(line: dict, protocol: str):
    """The reply text holder of a result line: (object, key)."""
    if protocol == "openai":
        return line["response"]["body"]["choices"][0]["message"], "content"
    return line["result"]["message"]["content"][0], "text"


# ------------------------------------------------------------------ item 7: a malformed item is a failed item


@pytest.mark.parametrize("protocol", ["openai", pytest.param("anthropic", marks=pytest.mark.slow)])
def test_a_reply_whose_content_is_an_object_is_a_failed_item_and_a_rerun_finishes(tmp_path, monkeypatch, server, protocol):
    """Main: a pydantic traceback, on every rerun. Now: that ballot gets no vote (exit 3, the
    reason in one line), a rerun submits that one request again and finishes."""
    bad: list[str] = []

    def change(b, lines):
        holder, key = _content(lines[0], protocol)
        if protocol == "openai":
            holder[key] = {"reasoning": "r", "verdict": "answer_1"}
        else:
            lines[0]["result"]["message"]["content"] = {"type": "text", "text": holder[key]}
        bad.append(_request_of(b, lines[0]))
        return lines

    server.tamper = _once("output" if protocol == "openai" else "results", change)
    d = _start(tmp_path, server, monkeypatch, protocol)
    first = _run()
    assert first.exit_code == 3, first.output
    assert "got no vote" in _text(first) and "unreadable reply" in _text(first), first.output
    assert "Traceback" not in first.output
    assert len(_failed(d)) == 1 and not _verdicts(d)
    sent = len(_requests(server))
    second = _run()
    assert second.exit_code == 0, second.output
    assert _requests(server)[sent:] == bad  # only that request again
    _all_scripted(d)


# One change per result line: every wrong shape a provider (or a proxy) could send.
OPENAI_SHAPES = {
    "content an object": (lambda ln: _msg(ln).__setitem__("content", {"verdict": "answer_1"}), "Message.content"),
    "content parts with an image": (
        lambda ln: _msg(ln).__setitem__("content", [{"type": "text", "text": _msg(ln)["content"]}, {"type": "image_url"}]),
        "unreadable reply",
    ),
    "content a number": (lambda ln: _msg(ln).__setitem__("content", 5), "unreadable reply"),
    "no choices": (lambda ln: ln["response"]["body"].pop("choices"), "unreadable reply"),
    "choices an object": (lambda ln: ln["response"]["body"].__setitem__("choices", {"0": 1}), "unreadable reply"),
    "message a string": (lambda ln: ln["response"]["body"]["choices"][0].__setitem__("message", "hi"), "unreadable reply"),
    "usage a string": (lambda ln: ln["response"]["body"].__setitem__("usage", "lots"), "unreadable reply"),
    "body a list": (lambda ln: ln["response"].__setitem__("body", [ln["response"]["body"]]), "body is list"),
    "body a string": (lambda ln: ln["response"].__setitem__("body", json.dumps(ln["response"]["body"])), "body is str"),
    "status 500": (
        lambda ln: ln["response"].update(status_code=500, body={"error": {"type": "server_error", "message": "boom"}}),
        "server_error: boom",
    ),
    "status a string": (lambda ln: ln["response"].__setitem__("status_code", "200"), "HTTP str"),
    "status true": (lambda ln: ln["response"].__setitem__("status_code", True), "HTTP bool"),
    "an error beside a 200": (lambda ln: ln.__setitem__("error", {"code": "odd", "message": "both"}), "odd: both"),
    "no response": (lambda ln: ln.__setitem__("response", None), "without a response"),
    "an error in the body": (lambda ln: ln["response"]["body"].__setitem__("error", {"message": "inner"}), "inner"),
    "custom_id a number": (lambda ln: ln.__setitem__("custom_id", 12345), "no result in the ended batch"),
}


def _msg(line: dict) -> dict:
    return line["response"]["body"]["choices"][0]["message"]


def test_every_wrong_shape_of_a_result_line_fails_only_its_own_item(tmp_path, monkeypatch, server):
    """Sixteen wrong shapes, one per line, across the run's four batches; the seventeenth line's
    content is null (an empty reply: the synchronous repair turn, then a vote). Each wrong one
    fails its own item with its reason; a rerun submits exactly those sixteen and finishes."""
    shapes = list(OPENAI_SHAPES.items())
    expected: dict[str, str] = {}  # request -> reason it must fail with
    repaired: list[str] = []

    def tamper(kind, b, lines):
        if kind != "output" or len(expected) + len(repaired) >= len(shapes) + 1:
            return lines
        out = []
        for line in lines:
            line = copy.deepcopy(line)
            request = _request_of(b, line)
            if len(expected) < len(shapes):
                name, (change, why) = shapes[len(expected)]
                change(line)
                expected[request] = why
            elif not repaired:
                _msg(line)["content"] = None
                repaired.append(request)
            out.append(line)
        return out

    server.tamper = tamper
    d = _start(tmp_path, server, monkeypatch)
    first = _run()
    assert first.exit_code == 3, first.output
    assert len(expected) == 16 and len(repaired) == 1
    assert "got no vote" in _text(first) and "Traceback" not in first.output, first.output
    items = _items(d)
    by_request = _item_requests(server, d)
    assert _failed(d) == {by_request[r] for r in expected}
    for request, why in expected.items():
        state, error = items[by_request[request]]
        assert state == "failed" and why in (error or ""), (request[:80], error, why)
    assert items[by_request[repaired[0]]][0] == "used"
    assert len(server.requests) == 1  # the one repair turn, sent synchronously
    server.tamper = None
    sent = len(_requests(server))
    second = _run()
    assert second.exit_code == 0, second.output
    assert sorted(_requests(server)[sent:]) == sorted(expected)
    _all_scripted(d)


def _item_requests(server: BatchServer, d: Path) -> dict[str, str]:
    """request JSON -> request hash, from the store's batch items and the lines the server got."""
    from jury.judging.batch_results import custom_id_of

    with sqlite3.connect(d / ".jury" / "store.db") as conn:
        pairs = conn.execute("SELECT batch_id, request_sha256 FROM batch_items").fetchall()
    by_cid = {custom_id_of(b, h): h for b, h in pairs}
    out = {}
    for b in server.batches.values():
        for line in b["lines"]:
            if line["custom_id"] in by_cid:
                out[json.dumps(line["request"], sort_keys=True)] = by_cid[line["custom_id"]]
    return out


ANTHROPIC_SHAPES = {
    "content an object": (lambda r: r["message"].__setitem__("content", {"type": "text", "text": "x"}), "unreadable reply"),
    "message null": (lambda r: r.__setitem__("message", None), "message is NoneType"),
    "message a list": (lambda r: r.__setitem__("message", [r["message"]]), "message is list"),
    "an unknown type": (lambda r: r.__setitem__("type", "partly"), "of type partly"),
    "errored": (
        lambda r: r.update(type="errored", error={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        "overloaded_error: busy",
    ),
    "canceled": (lambda r: r.update(type="canceled"), "request canceled"),
    "expired": (lambda r: r.update(type="expired"), "request expired"),
    "usage a string": (lambda r: r["message"].__setitem__("usage", "lots"), "unreadable reply"),
}


def test_every_wrong_shape_of_an_anthropic_result_fails_only_its_own_item(tmp_path, monkeypatch, server):
    shapes = list(ANTHROPIC_SHAPES.items())
    expected: dict[str, str] = {}

    def tamper(kind, b, lines):
        out = []
        for line in lines:
            line = copy.deepcopy(line)
            if len(expected) < len(shapes):
                name, (change, why) = shapes[len(expected)]
                change(line["result"])
                expected[_request_of(b, line)] = why
            out.append(line)
        return out

    server.tamper = tamper
    d = _start(tmp_path, server, monkeypatch, "anthropic")
    first = _run()
    assert first.exit_code == 3, first.output
    assert "got no vote" in _text(first) and "Traceback" not in first.output, first.output
    items, by_request = _items(d), _item_requests(server, d)
    assert _failed(d) == {by_request[r] for r in expected}
    for request, why in expected.items():
        state, error = items[by_request[request]]
        assert state == "failed" and why in (error or ""), (error, why)
    server.tamper = None
    sent = len(_requests(server))
    second = _run()
    assert second.exit_code == 0, second.output
    assert sorted(_requests(server)[sent:]) == sorted(expected)
    _all_scripted(d)


@pytest.mark.slow
def test_a_store_jammed_by_an_unreadable_collected_reply_finishes_on_rerun(tmp_path, monkeypatch, server):
    """A store left by an earlier jury, holding a collected reply (state answered) whose content
    is an object: the rerun fails that item instead of crashing, the next submits it again."""
    server.polls_before_end = 1
    d = _start(tmp_path, server, monkeypatch)
    assert _run().exit_code == 3  # submitted, still in progress
    server.polls_before_end = 0
    with sqlite3.connect(d / ".jury" / "store.db") as conn:
        bid, h = conn.execute("SELECT batch_id, request_sha256 FROM batch_items ORDER BY rowid LIMIT 1").fetchone()
        body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": {"a": 1}}, "finish_reason": "stop"}]}
        conn.execute(
            "UPDATE batch_items SET state = 'answered', response = ? WHERE batch_id = ? AND request_sha256 = ?",
            [json.dumps(body), bid, h],
        )
        conn.execute("UPDATE batch_items SET response = 'not json {' WHERE rowid = (SELECT max(rowid) FROM batch_items)")
        conn.execute("UPDATE batch_items SET state = 'answered' WHERE rowid = (SELECT max(rowid) FROM batch_items)")
    res = _run()
    assert res.exit_code == 3 and "got no vote" in _text(res) and "unreadable reply" in _text(res), res.output
    assert "Traceback" not in res.output and len(_failed(d)) == 2
    res = _run()
    assert res.exit_code == 0, res.output
    _all_scripted(d)


# ------------------------------------------------------------------ item 8: a line over the reply cap


def _huge_line(b: dict, line: dict, size: int, protocol: str, id_first: bool = True) -> Huge:
    """`line` with its reply text padded to `size` bytes, served in chunks."""
    text = json.dumps(line)
    holder, key = _content(line, protocol)
    marker = json.dumps(holder[key])
    cut = text.index(marker) + 1  # inside the reply string
    head, tail = text[:cut].encode(), (text[cut:] + "\n").encode()
    if not id_first:  # the custom_id after the reply: nothing before the cut names the request
        moved = {k: v for k, v in line.items() if k != "custom_id"}
        text = json.dumps({**moved, "custom_id": line["custom_id"]})
        cut = text.index(marker) + 1
        head, tail = text[:cut].encode(), (text[cut:] + "\n").encode()
    return Huge(size, head=head, tail=tail, fill=b"x")


@pytest.mark.parametrize("protocol", ["openai", pytest.param("anthropic", marks=pytest.mark.slow)])
def test_a_result_line_over_the_reply_cap_is_the_synchronous_abstention(tmp_path, monkeypatch, server, protocol):
    """A 40 MiB line (the cap of a synchronous reply is 16 MiB) naming its request first: the
    vote is the synchronous path's final abstention ("unusable reply: ... over 16 MB"), the
    others are votes; nothing of the line is stored."""
    big: list[str] = []

    def change(b, lines):
        big.append(lines[0]["custom_id"])
        return [_huge_line(b, lines[0], 40 * MIB, protocol), *lines[1:]]

    server.tamper = _once("output" if protocol == "openai" else "results", change)
    d = _start(tmp_path, server, monkeypatch, protocol)
    res = _run()
    assert res.exit_code == 0, res.output
    abstained = [(j, r) for (j, _m), votes in _votes(d).items() for _q, c, r in votes if c is None]
    assert len(abstained) == 1 and "unusable reply" in abstained[0][1] and "over 16 MB" in abstained[0][1], abstained
    assert (d / ".jury" / "store.db").stat().st_size < 8 * MIB
    assert server.requests == []  # never sent again, synchronously or otherwise


@pytest.mark.slow
def test_a_huge_line_that_names_its_request_too_late_fails_that_item(tmp_path, monkeypatch, server):
    """The custom_id after 40 MiB of reply: the line cannot be attributed; its request has no
    result (failed, submitted again), the rest are votes, and the rerun finishes."""
    server.tamper = _once("output", lambda b, lines: [_huge_line(b, lines[0], 40 * MIB, "openai", id_first=False), *lines[1:]])
    d = _start(tmp_path, server, monkeypatch)
    res = _run()
    assert res.exit_code == 3 and "no result in the ended batch" in _text(res), res.output
    assert "naming no request" in _text(res) and len(_failed(d)) == 1  # counted, in a warning
    res = _run()
    assert res.exit_code == 0, res.output
    _all_scripted(d)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["error file", "last line, no newline"])
def test_a_huge_line_in_an_error_file_or_at_the_end_is_read_past(tmp_path, monkeypatch, server, where):
    """A 40 MiB line in the error file, or ending the output file without its newline: read
    past in chunks, its request gets the cap's final abstention, like any reply over the cap."""
    server.polls_before_end = 1
    d = _start(tmp_path, server, monkeypatch)
    assert _run().exit_code == 3  # submitted, in progress
    first = next(iter(server.batches.values()))
    cid = first["lines"][0]["custom_id"]
    if where == "error file":
        server.fail_items = {cid}
        head = json.dumps({"custom_id": cid, "response": None, "error": {"code": "server_error", "message": ""}})[:-3]
        server.tamper = _once("error", lambda b, lines: [Huge(40 * MIB, head=head.encode(), tail=b'"}}\n')])
    else:

        def last_huge(b, lines):
            [line] = [x for x in lines if x["custom_id"] == cid]
            return [x for x in lines if x is not line] + [Huge(40 * MIB, head=json.dumps(line).encode()[:200], tail=b"")]

        server.tamper = lambda kind, b, lines: last_huge(b, lines) if kind == "output" and b is first else lines
    server.polls_before_end = 0
    res = _run()
    assert res.exit_code == 0, res.output
    abstained = [r for votes in _votes(d).values() for _q, c, r in votes if c is None]
    assert abstained and all("over 16 MB" in r for r in abstained), abstained


# ------------------------------------------------------------------ item 9: duplicates and foreign ids


@pytest.mark.parametrize("protocol", ["openai", pytest.param("anthropic", marks=pytest.mark.slow)])
def test_a_request_answered_twice_gets_neither_answer(tmp_path, monkeypatch, server, protocol):
    """Main: the last of two different replies silently won and was locked. Now: neither is
    taken, the item fails, a rerun submits it again and takes the one reply it gets."""
    dup: list[str] = []

    def change(b, lines):
        twin = copy.deepcopy(lines[0])
        holder, key = _content(twin, protocol)
        holder[key] = json.dumps({"reasoning": "forged", "verdict": "neither"})
        dup.append(_request_of(b, lines[0]))
        return [*lines, twin]

    server.tamper = _once("output" if protocol == "openai" else "results", change)
    d = _start(tmp_path, server, monkeypatch, protocol)
    first = _run()
    assert first.exit_code == 3, first.output
    assert "returned 2 results for this request" in _text(first) and "answered more than once" in _text(first)
    sent = len(_requests(server))
    second = _run()
    assert second.exit_code == 0, second.output
    assert _requests(server)[sent:] == dup
    _all_scripted(d)
    assert not any("forged" in (r or "") for votes in _votes(d).values() for _q, _c, r in votes)


@pytest.mark.slow
def test_a_duplicate_across_the_output_and_error_files_is_refused(tmp_path, monkeypatch, server):
    """One request answered in the output file and errored in the error file: neither taken."""
    server.polls_before_end = 1
    d = _start(tmp_path, server, monkeypatch)
    assert _run().exit_code == 3
    first = next(iter(server.batches.values()))
    answered, errored = first["lines"][0]["custom_id"], first["lines"][1]["custom_id"]
    server.fail_items = {errored}  # so that the batch has an error file
    server.tamper = _once(
        "error",
        lambda b, lines: [*lines, {"custom_id": answered, "response": None, "error": {"code": "server_error", "message": "x"}}],
    )
    server.polls_before_end = 0
    res = _run()
    assert res.exit_code == 3 and "returned 2 results" in _text(res), res.output
    assert len(_failed(d)) == 2
    server.fail_items = set()
    assert _run().exit_code == 0
    _all_scripted(d)


def _foreign(spelling: str):
    def change(b, lines):
        cid = lines[0]["custom_id"]
        forged = copy.deepcopy(lines[0])
        forged["custom_id"] = {
            "upper": cid.upper(),
            "padded": f" {cid} ",
            "newline": cid + "\n",
            "request hash": b["lines"][0]["custom_id"][:0] + "0" * 64,
            "prefix": cid[:63],
        }[spelling]
        return [*lines, forged]

    return change


@pytest.mark.parametrize(
    "spelling", ["upper", *(pytest.param(x, marks=pytest.mark.slow) for x in ("padded", "newline", "request hash", "prefix"))]
)
def test_a_result_for_a_request_the_batch_never_held_is_ignored_and_counted(tmp_path, monkeypatch, server, spelling):
    server.tamper = _once("output", _foreign(spelling))
    d = _start(tmp_path, server, monkeypatch)
    res = _run()
    assert res.exit_code == 0, res.output
    assert "1 result line for requests this batch never held (ignored)" in _text(res), res.output
    status = runner.invoke(app, ["batch", "status"], catch_exceptions=False)
    assert "1 result line for requests this batch never held (ignored)" in _text(status), status.output
    _all_scripted(d)


def test_a_replayed_output_file_from_another_project_is_not_accepted(tmp_path, monkeypatch, server):
    """Two projects, the same ballots (the same request hashes). The provider hands the second
    project the first one's output files, answered when the jurors said something else. Main
    took them (custom_id was the request hash); now the ids are bound to the batch that held
    them: none is accepted, the ballots are submitted again and get the jurors' answers now."""
    server.script("ja", says("neither"))
    p1 = _start(tmp_path, server, monkeypatch, name="p1")
    assert _run().exit_code == 0
    old = {b["lines"][0]["model"]: b for b in server.batches.values()}  # juror -> its batch in p1
    _script(server)  # now ja says gold_defect, as CATEGORY

    def replay(kind, b, lines):
        if kind != "output" or b.get("replayed") or b["lines"][0]["model"] != "ja" or b is old["ja"]:
            return lines
        b["replayed"] = True
        return server.files[old["ja"]["out_id"]]

    server.tamper = replay
    d = _start(tmp_path, server, monkeypatch, name="p2")
    assert p1 != d
    first = _run()
    assert first.exit_code == 3, first.output
    assert "for requests this batch never held (ignored)" in _text(first)
    server.tamper = None
    second = _run()
    assert second.exit_code == 0, second.output
    _all_scripted(d)


@pytest.mark.slow
def test_a_replayed_file_of_an_earlier_batch_in_the_same_project_is_not_accepted(tmp_path, monkeypatch, server):
    """Two ballots fail and are submitted again; their new batch is served the old batch's
    output file (answers of its other requests, under the old batch's ids): none taken."""
    server.polls_before_end = 1
    d = _start(tmp_path, server, monkeypatch)
    assert _run().exit_code == 3
    first = next(iter(server.batches.values()))
    server.fail_items = {line["custom_id"] for line in first["lines"][:2]}
    server.polls_before_end = 0
    assert _run().exit_code == 3
    server.fail_items = set()

    def replay(kind, b, lines):
        if kind == "output" and b is not first and not b.get("replayed"):
            b["replayed"] = True
            return server.files[first["out_id"]]
        return lines

    server.tamper = replay
    res = _run()
    assert res.exit_code == 3 and "never held" in _text(res), res.output
    server.tamper = None
    assert _run().exit_code == 0
    _all_scripted(d)


# ------------------------------------------------------------------ item 10: deep nesting never reaches litellm


@pytest.mark.parametrize(
    "protocol,where",
    [
        ("openai", "named"),
        *(
            pytest.param(p, w, marks=pytest.mark.slow)
            for p, w in [("anthropic", "named"), ("openai", "bare"), ("anthropic", "bare")]
        ),
    ],
)
def test_a_line_of_200000_nested_arrays_is_a_failed_item_not_a_jam(tmp_path, monkeypatch, server, protocol, where):
    """Main: litellm's logging worker died of the recursion (or its conversion gave up), the
    batch stayed pending on every rerun. Now jury's own reader refuses the line first: its
    request fails (named first in the line) or has no result (a bare array), and the rerun
    finishes."""
    deep = b"[" * 200_000 + b"]" * 200_000

    def change(b, lines):
        key = "response" if protocol == "openai" else "result"
        line = json.dumps({"custom_id": lines[0]["custom_id"], key: None}).encode().replace(b"null", deep)
        return [line + b"\n" if where == "named" else deep + b"\n", *lines[1:]]

    server.tamper = _once("output" if protocol == "openai" else "results", change)
    d = _start(tmp_path, server, monkeypatch, protocol)
    first = _run()
    assert first.exit_code == 3, first.output
    why = "nested deeper than 100" if where == "named" else "no result in the ended batch"
    assert "got no vote" in _text(first) and why in _text(first), first.output
    assert len(_failed(d)) == 1
    second = _run()
    assert second.exit_code == 0, second.output
    _all_scripted(d)


# ------------------------------------------------------------------ batches that expire, fail or are cancelled


@pytest.mark.parametrize(
    "protocol,end,why",
    [
        ("openai", "failed", "no result in the failed batch (invalid_request: fake validation failure)"),
        pytest.param("openai", "cancelled", "no result in the cancelled batch", marks=pytest.mark.slow),
        pytest.param("openai", "expired", "batch_expired", marks=pytest.mark.slow),
        ("anthropic", "cancelled", "request canceled"),
        pytest.param("anthropic", "expired", "request expired", marks=pytest.mark.slow),
    ],
)
def test_a_batch_that_fails_expires_or_is_cancelled_resubmits_only_what_it_left(
    tmp_path, monkeypatch, server, protocol, end, why
):
    server.end_next, server.expire_keep = [end], 2  # the first batch to end: 2 lines answered (none if failed)
    d = _start(tmp_path, server, monkeypatch, protocol)
    first = _run()
    assert first.exit_code == 3, first.output
    assert why in _text(first), first.output
    [ended] = [b for b in server.batches.values() if b["state"] == end]
    keep = 0 if end == "failed" else 2
    lost = [json.dumps(line["request"], sort_keys=True) for line in ended["lines"][keep:]]
    status = runner.invoke(app, ["batch", "status"], catch_exceptions=False)
    state = {"cancelled": "cancelled", "failed": "failed", "expired": "expired"}[end] if protocol == "openai" else "ended"
    assert state in status.output
    sent = len(_requests(server))
    second = _run()
    assert second.exit_code == 0, second.output
    assert sorted(_requests(server)[sent:]) == sorted(lost)
    _all_scripted(d)


# ------------------------------------------------------------------ bodies that are not plain JSON lines


@pytest.mark.slow
def test_a_gzip_encoded_file_is_read_and_a_gzip_bomb_stays_bounded(tmp_path, monkeypatch, server):
    """Results files sent gzip-encoded although jury asks for identity are inflated in bounded
    steps; in one of them a line of 64 MiB of zeros, compressed to under 1 MiB, is
    over the cap: that request gets the cap's abstention, every other line is read."""
    bombed: list[str] = []

    def tamper(kind, b, lines):
        body = b"".join((json.dumps(x) + "\n").encode() for x in lines)
        if kind == "output" and not bombed:
            bombed.append(lines[0]["custom_id"])
            head = json.dumps({"custom_id": lines[0]["custom_id"]})[:-1].encode()
            body = b"".join((json.dumps(x) + "\n").encode() for x in lines[1:]) + head + b', "x": "' + b"0" * (64 * MIB) + b'"}\n'
        return [gzip.compress(body, 1)] if lines else lines

    server.tamper = tamper
    server.file_headers = {"Content-Encoding": "gzip"}
    d = _start(tmp_path, server, monkeypatch)
    res = _run()
    assert res.exit_code == 0, res.output
    abstained = [r for votes in _votes(d).values() for _q, c, r in votes if c is None]
    assert len(abstained) == 1 and "over 16 MB" in abstained[0]


@pytest.mark.slow
def test_a_body_that_only_looks_gzipped_or_is_split_across_lines_fails_its_items(tmp_path, monkeypatch, server):
    """Compressed bytes without a Content-Encoding (not UTF-8, no JSON), and a reply split in two
    lines: nothing is stored from them, their requests fail and go again."""

    def change(b, lines):
        text = json.dumps(lines[1])
        return [
            gzip.compress((json.dumps(lines[0]) + "\n").encode()) + b"\n",
            text[:80].encode() + b"\n",
            text[80:].encode() + b"\n",
            *lines[2:],
        ]

    server.tamper = _once("output", change)
    d = _start(tmp_path, server, monkeypatch)
    res = _run()
    assert res.exit_code == 3 and "got no vote" in _text(res), res.output
    assert len(_failed(d)) == 2
    assert _run().exit_code == 0
    _all_scripted(d)


@pytest.mark.slow
def test_an_endless_results_file_is_cut_at_twice_its_requests(tmp_path, monkeypatch, server):
    """A file of its answers followed by a million foreign lines stops being read at twice the
    batch's requests (plus a margin): what came before counts, the rest is not read."""

    def change(b, lines):
        filler = (json.dumps({"custom_id": "0" * 64, "response": None}) + "\n").encode()
        return [*lines, Huge(len(filler) * 1_000_000, fill=filler, tail=b"")]

    server.tamper = _once("output", change)
    d = _start(tmp_path, server, monkeypatch)
    res = _run()
    assert res.exit_code == 0, res.output
    assert "not read further" in _text(res)
    _all_scripted(d)


@pytest.mark.slow
def test_a_300_mib_result_line_keeps_the_process_memory_bounded(tmp_path):
    """Main read the file whole: a 300 MiB reply took the process to 3.1 GB. Now the line is
    read past in chunks: the jury process's own peak RSS (VmHWM) stays far below the line."""
    import os
    import subprocess
    import sys

    with BatchServer() as server:
        _script(server)
        server.tamper = _once("output", lambda b, lines: [_huge_line(b, lines[0], 300 * MIB, "openai"), *lines[1:]])
        d = _project(tmp_path, "p", server.base_url)
        script = (
            "import atexit, sys\n"
            "def peak():\n"
            "    hwm = next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
            "    open('peak.txt', 'w').write(hwm)\n"
            "atexit.register(peak)\n"
            "from jury.cli import main\n"
            "main(['adjudicate', 'run.jsonl', '--panel', 'panel.toml', '--batch'])\n"
        )
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        done = subprocess.run([sys.executable, "-c", script], cwd=d, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        peak_kib = int((d / "peak.txt").read_text())
    assert peak_kib < 500 * 1024, f"peak RSS {peak_kib // 1024} MiB"  # here: ~340 MiB, as with a 1 MiB line


# ------------------------------------------------------------------ what the provider answers when asked


def _is_retrieve(path: str) -> bool:
    return path.startswith("/v1/batches/")


def _is_content(path: str) -> bool:
    return path.startswith("/v1/files/") and path.endswith("/content")


def _faults(port: int) -> dict:
    elsewhere = f"http://127.0.0.2:{port}/v1/files/file-x/content"
    return {
        "batch 404": (_is_retrieve, 404, {}, b'{"error": {"message": "no batch"}}', "gone"),
        "batch 500": (_is_retrieve, 500, {}, b'{"error": {"message": "down"}}', "open"),
        "batch 401": (_is_retrieve, 401, {}, b'{"error": {"message": "bad key"}}', "open"),
        "batch not JSON": (_is_retrieve, 200, {}, b"<html>maintenance</html>", "gone"),
        "batch a list": (_is_retrieve, 200, {}, b"[]", "gone"),
        "batch status a number": (_is_retrieve, 200, {}, b'{"status": 7}', "gone"),
        "batch of 2 MiB": (_is_retrieve, 200, {}, b'{"status": "' + b"x" * (2 * MIB) + b'"}', "gone"),
        "batch deep": (_is_retrieve, 200, {}, b"[" * 200_000 + b"]" * 200_000, "gone"),
        "file 404": (_is_content, 404, {}, b'{"error": {"message": "no file"}}', "gone"),
        "file 503": (_is_content, 503, {}, b'{"error": {"message": "busy"}}', "open"),
        "file redirected elsewhere": (_is_content, 302, {"Location": elsewhere}, b"", "gone"),
        "file in brotli": (_is_content, 200, {"Content-Encoding": "br"}, b"\x1b\x00", "gone"),
        "file gzip but corrupt": (_is_content, 200, {"Content-Encoding": "gzip"}, b"\x1f\x8b\x08\x00garbage", "gone"),
    }


FAST_FAULTS = ("batch 404", "file 503")


@pytest.mark.parametrize(
    "fault",
    [f if f in FAST_FAULTS else pytest.param(f, marks=pytest.mark.slow) for f in _faults(0)],
)
def test_what_the_provider_answers_when_polled_never_jams_the_batch(tmp_path, monkeypatch, server, fault):
    """The batch object or a results file answered with an error, a body that is not one, or
    a redirect to another host: a provider that cannot be asked now leaves the batch open
    (the next run collects it); an answer that says the batch or its file is gone, or that
    cannot be read, ends the batch as failed and the next run submits its ballots again."""
    match, status, headers, body, outcome = _faults(server.port)[fault]
    server.polls_before_end = 1
    d = _start(tmp_path, server, monkeypatch)
    assert _run().exit_code == 3  # submitted, in progress
    server.polls_before_end = 0
    server.get_faults = [(match, status, headers, body)]
    sent = len(_requests(server))
    res = _run()
    assert res.exit_code == 3 and "Traceback" not in res.output, res.output
    with sqlite3.connect(d / ".jury" / "store.db") as conn:
        states = [s for (s,) in conn.execute("SELECT state FROM batches ORDER BY created_at, rowid")]
    if outcome == "open":
        assert "cannot poll" in _text(res) and states.count("in_progress") == 1, (states, res.output)
    else:
        assert "its ballots are submitted again" in _text(res) and states.count("failed") == 1, (states, res.output)
    res = _run()
    assert res.exit_code == 0, res.output
    resent = len(_requests(server)) - sent
    assert (resent == 0) if outcome == "open" else (resent > 0)
    _all_scripted(d)


@pytest.mark.slow
def test_a_redirect_to_the_same_host_is_followed(tmp_path, monkeypatch, server):
    """A results file redirected to the same path with a query (the same host): followed, read."""
    server.polls_before_end = 1
    d = _start(tmp_path, server, monkeypatch)
    assert _run().exit_code == 3
    server.polls_before_end = 0
    server.get_faults = [(_is_content, 307, {"Location": "?again=1"}, b"")]
    res = _run()
    assert res.exit_code == 0, res.output
    assert not server.get_faults and any(_is_content("/v1/files/" + r + "/content") for r in server.content_reads)
    _all_scripted(d)


# ------------------------------------------------------------------ more spellings


@pytest.mark.slow
def test_brackets_inside_a_reply_string_are_not_nesting(tmp_path, monkeypatch, server):
    """200,000 '[' inside the reasoning text: a string, not nesting; the vote stands."""

    def change(b, lines):
        holder, key = _content(lines[0], "openai")
        holder[key] = json.dumps({"reasoning": "[" * 200_000, "verdict": json.loads(holder[key])["verdict"]})
        return lines

    server.tamper = _once("output", change)
    d = _start(tmp_path, server, monkeypatch)
    res = _run()
    assert res.exit_code == 0, res.output
    _all_scripted(d)


@pytest.mark.slow
def test_a_line_that_names_two_custom_ids_is_refused(tmp_path, monkeypatch, server):
    """`{"custom_id": A, ..., "custom_id": B}`: parsers disagree on which key wins; jury's reader
    refuses duplicate keys, and the line fails the request it opens with (A)."""

    def change(b, lines):
        a, other = lines[0], lines[1]
        text = json.dumps(a)[:-1] + f', "custom_id": {json.dumps(other["custom_id"])}}}'
        return [text.encode() + b"\n", *lines[1:]]

    server.tamper = _once("output", change)
    d = _start(tmp_path, server, monkeypatch)
    res = _run()
    assert res.exit_code == 3 and "duplicate key" in _text(res), res.output
    assert len(_failed(d)) == 1
    assert _run().exit_code == 0
    _all_scripted(d)


@pytest.mark.slow
def test_a_reply_claiming_negative_tokens_costs_nothing_rather_than_less(tmp_path, monkeypatch, server):
    """usage.prompt_tokens = -1,000,000 on a priced model (gpt-4.1): counted as no tokens, so
    the run's cost can only grow."""
    from tests.support.fakellm import Reply

    server.set_default(
        Reply(content=json.dumps({"reasoning": "r", "verdict": "answer_1"}), prompt_tokens=-1_000_000, completion_tokens=-5)
    )
    jurors = [("ja", "openai", "openai/gpt-4.1"), ("jc", "google"), ("jd", "xai"), ("jb", "anthropic")]
    d = _project(tmp_path, "p", server.base_url, jurors=jurors)
    monkeypatch.chdir(d)
    assert _run().exit_code == 0
    with sqlite3.connect(d / ".jury" / "store.db") as conn:
        rows = conn.execute("SELECT cost_usd, prompt_tokens, completion_tokens FROM calls WHERE juror = 'ja'").fetchall()
    assert rows and all(c == 0 and p == 0 and t == 0 for c, p, t in rows), rows
