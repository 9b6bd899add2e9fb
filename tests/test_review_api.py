"""`jury review`: the web app's API (Starlette's TestClient), export, lock, verify, score/report --review."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from jury.cli import app as cli
from jury.compare.outcomes import Settings
from jury.execution.reviews import ReviewStore
from jury.execution.store import Store
from jury.pipeline.review_queue import build_queue
from jury.vocab import DEFAULT_REVIEW_QUEUES
from jury.web.app import ReviewState, create_app
from tests.support.badinput import Case, check_case
from tests.support.reviewtest import SCRIPT_SQL

REPO = Path(__file__).resolve().parent.parent
runner = CliRunner()
BASE = "http://127.0.0.1:8765"
# `reviewable` (tests/conftest.py): a copy, per test, of make_reviewable's project, built once per run


def state_for(tmp: Path, files: dict, reviewer: str = "ann", host: str = "127.0.0.1") -> ReviewState:
    with Store(tmp / ".jury" / "store.db") as st:
        source = build_queue(
            [files["adj"]], files["audit"], [str(q) for q in DEFAULT_REVIEW_QUEUES], None, st, Settings(workers=1), None
        )
    return ReviewState(source, ReviewStore(tmp / ".jury" / "store.db"), reviewer, host=host)


def client_for(state: ReviewState, login: bool = True, base: str = BASE) -> TestClient:
    """A browser on this launch's pages: paths are relative to the launch's root (``/<launch>/``)."""
    client = TestClient(create_app(state), base_url=f"{base}{state.root}/", follow_redirects=False)
    if login:
        r = client.get(f"?token={state.token}")
        assert r.status_code == 303
    return client


def index_of(state: ReviewState, kind: str, qid: int) -> int:
    return next(i for i, it in enumerate(state.items) if it.kind == kind and it.question_id == qid)


def decide(client: TestClient, state: ReviewState, n: int, **form) -> object:
    return client.post(f"item/{n}?csrf={state.csrf}", data=form)


def test_queue_holds_the_split_unsettled_and_flagged_items(reviewable):
    tmp, files = reviewable
    state = state_for(tmp, files)
    got = sorted((str(it.kind), it.question_id, it.jury_verdict) for it in state.items)
    # adjudication: q2 split 2-1, q3 no majority (q1 unanimous: not queued); gold: q2 flagged, q3 split 2-3
    assert got == [
        ("adjudication", 2, "genuine_error"),
        ("adjudication", 3, "no_majority"),
        ("gold", 2, "flagged"),
        ("gold", 3, "not_flagged"),
    ]


def test_every_request_needs_the_token_then_the_cookie(reviewable):
    tmp, files = reviewable
    state = state_for(tmp, files)
    anon = client_for(state, login=False)
    assert anon.get("/").status_code == 403
    assert anon.get("/item/0").status_code == 403
    assert anon.get("/static/review.js").status_code == 403
    assert anon.get("/?token=wrong").status_code == 403
    r = anon.get(f"/?token={state.token}")
    assert r.status_code == 303 and r.headers["location"] == f"{state.root}/item/0"
    cookie = r.headers["set-cookie"]
    assert state.token in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert cookie.startswith(f"{state.cookie}=") and f"Path={state.root}" in cookie  # this launch's name and path
    assert anon.get("/item/0").status_code == 200  # the cookie now carries the token
    outside = TestClient(create_app(state), base_url=BASE, follow_redirects=False)
    assert outside.get(f"/?token={state.token}").status_code == 404  # nothing is served outside the launch's path
    assert anon.get("/static/review.js").status_code == 200


def test_posts_need_the_csrf_token_and_a_same_origin(reviewable):
    tmp, files = reviewable
    state = state_for(tmp, files)
    client = client_for(state)
    store = ReviewStore(tmp / ".jury" / "store.db")
    n = index_of(state, "adjudication", 3)
    assert client.post(f"/item/{n}", data={"choice": "both"}).status_code == 403
    assert client.post(f"/item/{n}?csrf=nope", data={"choice": "both"}).status_code == 403
    assert client.post(f"/item/{n}", data={"choice": "both", "csrf": state.csrf}).status_code == 403  # only the URL's counts
    url = f"/item/{n}?csrf={state.csrf}"
    evil = client.post(url, data={"choice": "both"}, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403
    cross = client.post(url, data={"choice": "both"}, headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403
    assert store.decisions(state.shas) == []  # nothing refused was stored
    ok = client.post(url, data={"choice": "both"}, headers={"Origin": BASE})
    assert ok.status_code == 303
    stored = store.decisions(state.shas)  # stored before the page answered
    assert [(d["question_id"], d["choice"], d["reviewer"]) for d in stored] == [(3, "both", "ann")]


def test_a_non_loopback_host_is_refused_unless_served_there(reviewable):
    tmp, files = reviewable
    state = state_for(tmp, files)
    client = client_for(state)
    assert client.get("/item/0", headers={"Host": "attacker.example:8765"}).status_code == 403
    assert client.get("/item/0", headers={"Host": "192.168.1.5:8765"}).status_code == 403
    lan = state_for(tmp, files, host="192.168.1.5")
    lan_client = client_for(lan, login=False, base="http://192.168.1.5:8765")
    assert lan_client.get("/item/0").status_code == 403  # --host given: still the token
    assert lan_client.get(f"/?token={lan.token}").status_code == 303
    assert lan_client.get("/item/0").status_code == 200


def test_votes_show_only_after_answering_and_everything_is_escaped(reviewable):
    tmp, files = reviewable
    state = state_for(tmp, files)
    client = client_for(state)
    n = index_of(state, "adjudication", 3)
    before = client.get(f"/item/{n}").text
    assert "reasoned" not in before and 'id="jury"' not in before
    assert "<script>window" not in before and "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in before.replace(
        "&lt;\\", "&lt;"
    )
    assert "{{ 7 * 7 }}" in before and ">49<" not in before  # template syntax is text
    assert decide(client, state, n, choice="ambiguous", note="<b>not bold</b>").status_code == 303
    after = client.get(f"/item/{n}").text
    assert "juror jb reasoned" in after and "the jury said: no majority" in after
    assert "&lt;b&gt;not bold&lt;/b&gt;" in after and "<b>not bold" not in after


def test_reviewers_get_their_own_orders_and_decisions(reviewable):
    tmp, files = reviewable
    states = {who: state_for(tmp, files, who) for who in ("ann", "bob", "cy", "dee", "eve")}
    orders = {who: [it.key for it in s.items] for who, s in states.items()}
    answer_orders = {who: [it.order_for(who) for it in s.source.items if it.kind == "adjudication"] for who, s in states.items()}
    assert len({tuple(o) for o in orders.values()}) > 1  # queues are shuffled per reviewer
    assert len({tuple(o) for o in answer_orders.values()}) > 1  # and so are the answer positions
    assert state_for(tmp, files, "ann").items == states["ann"].items  # ... the same after a restart
    ann, bob = client_for(states["ann"]), client_for(states["bob"])
    decide(ann, states["ann"], index_of(states["ann"], "adjudication", 2), choice="answer_1")
    assert len(states["ann"].decisions()) == 1 and states["bob"].decisions() == {}
    page = bob.get(f"/item/{index_of(states['bob'], 'adjudication', 2)}").text
    assert 'id="jury"' not in page  # ann's answer does not reveal the votes to bob
    rec = ReviewStore(tmp / ".jury" / "store.db").decisions(states["ann"].shas)[0]
    assert rec["item_order"] == states["ann"].items[index_of(states["ann"], "adjudication", 2)].order_for("ann")


def test_a_corrected_gold_query_runs_read_only_and_is_previewed(reviewable):
    tmp, files = reviewable
    db = tmp / "dbs" / "shop" / "shop.sqlite"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    state = state_for(tmp, files)
    client = client_for(state)
    n = index_of(state, "gold", 2)
    run = f"/item/{n}/run?csrf={state.csrf}"
    shown = client.post(run, data={"corrected_sql": "SELECT name FROM item ORDER BY price, id"})
    assert shown.status_code == 200
    assert "plum" in shown.text and "(4 rows in total)" in shown.text
    refused = client.post(run, data={"corrected_sql": "DELETE FROM item"})
    assert "the query failed" in refused.text
    assert client.post(f"/item/{n}/run", data={"corrected_sql": "SELECT 1"}).status_code == 403
    r = decide(
        client, state, n, choice="defective", defect_type="sql_vs_data", corrected_sql="SELECT name FROM item ORDER BY price, id"
    )
    assert r.status_code == 303
    (d,) = ReviewStore(tmp / ".jury" / "store.db").decisions(state.shas)
    assert d["defect_type"] == "sql_vs_data" and d["corrected_result"]["row_count"] == 4
    assert d["corrected_result"]["status"] == "ok"
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


TOKENS = re.compile(r"\b(answer_[12]|genuine_error|gold_defect|format_equivalence|no_majority|not_flagged|sql_vs_\w+)\b")


def jury_section(page: str) -> tuple[str, list[str]]:
    """The heading of the section shown after a decision, and the juror vote cells of its table."""
    heading = re.search(r'<section class="jury" id="jury">\s*<h3>(.*?)</h3>', page, re.S).group(1)
    return heading, re.findall(r"<tr><td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td>", page)


def test_the_page_preselects_nothing_and_speaks_in_words(reviewable):
    tmp, files = reviewable
    state = state_for(tmp, files)
    client = client_for(state)
    n = index_of(state, "gold", 2)
    page = client.get(f"/item/{n}").text
    select = re.search(r'<select name="defect_type".*?</select>', page, re.S).group(0)
    options = re.findall(r'<option value="([^"]*)"\s*(selected)?', select)
    assert options[0] == ("", "selected") and not any(sel for _v, sel in options[1:])  # nothing chosen for you
    assert "checked" not in page
    # the form as a browser sends it when the reviewer presses 2 without touching the defect type
    r = decide(client, state, n, choice="defective", defect_type="", corrected_sql="", note="")
    assert r.status_code == 303
    (d,) = ReviewStore(tmp / ".jury" / "store.db").decisions(state.shas)
    assert d["defect_type"] is None  # not a type the reviewer never chose
    heading, votes = jury_section(client.get(f"/item/{n}").text)
    assert "gold SQL is defective" in heading and "the jury said: flagged as defective" in heading
    assert votes and not any(TOKENS.search(v) for v in [heading, *votes]), (heading, votes)
    assert any("the SQL does not answer the question" in v for v in votes)
    m = index_of(state, "adjudication", 2)
    assert decide(client, state, m, choice="answer_1").status_code == 303
    heading, votes = jury_section(client.get(f"/item/{m}").text)
    assert "Your decision: Answer 1 is right, which counts as " in heading and "the jury said: genuine error" in heading
    assert not any(TOKENS.search(v) for v in [heading, *votes]), (heading, votes)


def test_a_fresh_url_wins_over_an_earlier_launchs_cookie(reviewable):
    tmp, files = reviewable
    first, second = state_for(tmp, files), state_for(tmp, files)  # a restart: a new token
    assert first.token != second.token
    old = client_for(first)  # the browser holds the first launch's cookie ...
    (cookie,) = old.cookies.jar
    assert cookie.name == first.cookie and cookie.path == first.root  # ... named after and scoped to that launch
    # the same browser (cookies are not scoped by port) opens the second launch's printed URL
    base = "http://127.0.0.1:9999"
    browser = TestClient(create_app(second), base_url=f"{base}{second.root}/", follow_redirects=False, cookies=old.cookies)
    assert browser.get("item/0").status_code == 403  # the first launch's cookie opens nothing here
    r = browser.get(f"?token={second.token}")
    assert r.status_code == 303
    assert browser.get(base + r.headers["location"]).status_code == 200
    assert browser.get("item/0").status_code == 200  # the second launch's own cookie
    assert old.get("item/0").status_code == 200  # and the first launch still answers its own


def test_a_runaway_corrected_query_blocks_no_other_request(reviewable, monkeypatch):
    import threading

    from jury.pipeline import review_queue

    tmp, files = reviewable
    state = state_for(tmp, files)
    state.source.timeout_s = 0.3
    real, running, release, events = review_queue.run_corrected, threading.Event(), threading.Event(), []

    def runaway(*args):  # holds its worker like a runaway query until the other request was answered
        running.set()
        release.wait(30)
        result = real(*args)
        events.append("runaway finished")
        return result

    monkeypatch.setattr(review_queue, "run_corrected", runaway)
    n = index_of(state, "gold", 2)
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    with client_for(state) as client:  # one event loop serves both requests
        posted: list = []
        worker = threading.Thread(
            target=lambda: posted.append(
                client.post(f"item/{n}/run?csrf={state.csrf}", data={"csrf": state.csrf, "corrected_sql": endless})
            )
        )
        worker.start()
        assert running.wait(30)
        other = client.get("item/0")
        events.append("page answered")
        release.set()
        worker.join(60)
    assert other.status_code == 200
    assert events == ["page answered", "runaway finished"]
    assert posted[0].status_code == 200 and "timeout: exceeded 0.3 s" in posted[0].text  # the real query, stopped


def asgi_post(app, path: str, query: str, chunks, headers: dict[str, str]) -> tuple[int | None, int]:
    """POST through the ASGI interface with the body streamed from ``chunks``: (status, body bytes the app read)."""
    import anyio

    it, read, status = iter(chunks), 0, None

    async def receive():
        nonlocal read
        chunk = next(it, None)
        read += len(chunk or b"")
        return {"type": "http.request", "body": chunk or b"", "more_body": chunk is not None}

    async def send(message):
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(k.encode(), v.encode()) for k, v in {"host": "127.0.0.1:8765", **headers}.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
    }
    anyio.run(app, scope, receive, send)
    return status, read


def test_a_huge_post_is_refused_before_its_body_is_read(reviewable):
    import tracemalloc

    tmp, files = reviewable
    state = state_for(tmp, files)
    app = create_app(state)
    n = index_of(state, "adjudication", 2)
    mib, fields = 1 << 20, 64
    form = {"content-type": "application/x-www-form-urlencoded"}

    def body():  # 64 fields of 1 MiB, streamed (no Content-Length)
        yield f"csrf={state.csrf}&".encode()
        for i in range(fields):
            yield f"f{i}=".encode() + b"x" * mib + b"&"

    cases = [
        ("no CSRF token", f"token={state.token}", form, 403, 0),
        ("valid CSRF token", f"token={state.token}&csrf={state.csrf}", form, 413, 2 * mib),  # the cap and a chunk
        ("declared too big", f"token={state.token}&csrf={state.csrf}", {**form, "content-length": str(fields * mib)}, 413, 0),
        ("no token at all", "", form, 403, 0),
    ]
    for why, query, headers, status, most in cases:
        tracemalloc.start()
        got, read = asgi_post(app, f"{state.root}/item/{n}", query, body(), headers)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert (got, read <= most) == (status, True), (why, got, read)
        assert peak < 16 * mib, (why, peak)  # the whole body would be 64 MiB
    assert ReviewStore(tmp / ".jury" / "store.db").decisions(state.shas) == []


@pytest.mark.parametrize(
    "host, says",
    [
        ("0.0.0.0", "host 0.0.0.0: binding every interface is refused"),
        ("::", "host ::: binding every interface is refused"),
        ("300.1.1.1", "host 300.1.1.1: not a valid IP address"),
    ],
)
def test_a_host_the_page_cannot_serve_is_refused_in_one_line(reviewable, monkeypatch, host, says):
    import uvicorn

    _tmp, files = reviewable
    served: list = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: served.append(sockets))
    res = runner.invoke(cli, ["review", "--host", host, "--verdicts", str(files["adj"]), "--audit", str(files["audit"])])
    assert res.exit_code == 1 and not served, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.output.strip().splitlines() == [res.output.strip()] and says in res.output, res.output


def test_a_busy_port_is_one_line_and_a_good_host_prints_the_launch_url(reviewable, monkeypatch):
    import socket

    import uvicorn

    tmp, files = reviewable
    served: list = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: served.append(sockets))
    common = ["review", "--verdicts", str(files["adj"]), "--audit", str(files["audit"])]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        res = runner.invoke(cli, [*common, "--port", str(port)])
    assert res.exit_code == 1 and not served and (res.exception is None or isinstance(res.exception, SystemExit))
    assert f"host 127.0.0.1 port {port}: cannot listen there" in res.output
    res = runner.invoke(cli, [*common, "--host", "localhost"])
    assert res.exit_code == 0 and len(served) == 1, res.output
    served[0][0].close()
    assert re.search(r"^http://localhost:\d+/[0-9a-f]{16}/\?token=\S+$", res.stdout, re.M), res.stdout


def _decide_all(tmp, files) -> None:
    for who, adj2, adj3, gold2 in (("ann", "gold_defect", "both", "defective"), ("bob", "gold_defect", "neither", "valid")):
        state = state_for(tmp, files, who)
        client = client_for(state)
        for it_kind, qid, want in (("adjudication", 2, adj2), ("adjudication", 3, adj3), ("gold", 2, gold2)):
            n = index_of(state, it_kind, qid)
            item = state.items[n]
            if want == "gold_defect":  # the answer position of the model's SQL, in this reviewer's order
                want = "answer_2" if item.order_for(who) == "gold_first" else "answer_1"
            assert decide(client, state, n, choice=want, note=f"{who} on {qid}").status_code == 303


def test_export_lock_verify_and_the_review_in_score_and_report(reviewable):
    tmp, files = reviewable
    _decide_all(tmp, files)
    common = ["--verdicts", str(files["adj"]), "--audit", str(files["audit"])]
    res = runner.invoke(cli, ["review", "export", "-o", "labels.jsonl", *common])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in (tmp / "labels.jsonl").read_text().splitlines()]
    assert len(lines) == 6
    schemas = {
        k: json.loads((REPO / "verdicts" / "schema" / f"labels-{k}-v1.schema.json").read_text()) for k in ("adjudication", "gold")
    }
    for lab in lines:
        jsonschema.validate(lab, schemas["gold" if "gold_defective" in lab else "adjudication"])
    got = {(x["annotator"], x["question_id"], x.get("category"), x.get("label"), x.get("gold_defective")) for x in lines}
    assert got == {
        ("ann", 2, "gold_defect", "correct", None),
        ("ann", 3, "format_equivalence", "correct", None),
        ("ann", 2, None, None, True),
        ("bob", 2, "gold_defect", "correct", None),
        ("bob", 3, "genuine_error", "incorrect", None),
        ("bob", 2, None, None, False),
    }
    res = runner.invoke(cli, ["review", "lock", "-o", "verdicts/review-1.json", *common])
    assert res.exit_code == 0, res.output
    review = tmp / "verdicts" / "review-1.json"
    doc = json.loads(review.read_text())
    assert doc["kind"] == "review" and doc["reviewers"] == ["ann", "bob"] and doc["content_sha256"].startswith("sha256:")
    jsonschema.validate(doc, json.loads((REPO / "verdicts" / "schema" / "review-v2.schema.json").read_text()))
    res = runner.invoke(cli, ["verify", str(review)])
    assert res.exit_code == 0 and res.output.startswith("OK"), res.output
    again = runner.invoke(cli, ["review", "lock", "-o", "verdicts/review-1.json", *common])
    assert again.exit_code == 1 and "never overwritten" in again.output
    # people settle: adj q2 (both gold_defect: credited), gold q2 split 1-1 (jury stands); adj q3 split 1-1
    res = runner.invoke(cli, ["score", "run.jsonl", *common, "--review", str(review), "-f", "json"])
    assert res.exit_code == 0, res.output
    model = json.loads(res.stdout)["models"][0]
    assert model["adjudicated"]["k"] == 1  # without the review: 0 (the jury found q2 a genuine error)
    assert "1 items settled by people (1 verdicts, 0 gold queries" in res.stderr
    plain = runner.invoke(cli, ["score", "run.jsonl", *common, "-f", "json"])
    assert json.loads(plain.stdout)["models"][0]["adjudicated"]["k"] == 0
    res = runner.invoke(cli, ["report", "run.jsonl", *common, "--review", str(review), "-f", "md"])
    assert res.exit_code == 0, res.output
    assert "1 items settled by people" in res.stdout and "2 left to the jury (reviewers split)" in res.stdout
    # a kappa per kind (gold queries and answers are two scales). Answers: ann gold_defect and
    # format_equivalence, bob gold_defect and genuine_error: p_o = 1/2, p_e = 1/2 * 1/2 = 1/4, kappa = 1/3.
    # Gold query 2: defective vs valid, p_o = p_e = 0, kappa 0.
    assert "κ between reviewers ann and bob on answers: 0.33 (n=2)" in res.stdout, res.stdout
    assert "κ between reviewers ann and bob on gold queries: 0.00 (n=1)" in res.stdout, res.stdout
    assert re.search(r"κ between reviewer ann and the jury on (answers|gold queries): [-0-9.—]+ \(n=\d\)", res.stdout)
    # each juror's agreement with people (the report's jurors): people settled only adj q2, as gold_defect;
    # gpt-x's panel is jb, jc, jd (ja is openai's), and PLAN has jb say gold_defect there, jc and jd genuine_error
    res = runner.invoke(cli, ["report", "run.jsonl", *common, "--review", str(review), "-f", "json"])
    assert res.exit_code == 0, res.output
    (adj_jurors,) = [f for f in json.loads(res.stdout)["jurors"] if f["kind"] == "adjudication"]  # then the audit's
    people = {j["juror"]: j["people"] for j in adj_jurors["jurors"]}
    assert adj_jurors["people"] and set(people) == {"jb", "jc", "jd"}
    assert {name: (p["reviewed"], p["agreed"]) for name, p in people.items()} == {"jb": (1, 1), "jc": (1, 0), "jd": (1, 0)}
    res = runner.invoke(cli, ["report", "run.jsonl", *common, "--review", str(review), "-f", "html", "-o", "site"])
    assert res.exit_code == 0, res.output
    page = " ".join(re.sub(r"<[^>]+>", "", (tmp / "site" / "jurors" / "jb.html").read_text(encoding="utf-8")).split())
    assert "Of the 1 record people settled (the review file) that it voted on, it agreed with them on 1 (100.0%;" in page
    plain_jurors = json.loads(runner.invoke(cli, ["report", "run.jsonl", *common, "-f", "json"]).stdout)["jurors"]
    assert not plain_jurors[0]["people"] and all(j["people"] is None for j in plain_jurors[0]["jurors"])
    doc["records"][0]["note"] = "changed after the lock"
    review.write_text(json.dumps(doc))
    res = runner.invoke(cli, ["verify", str(review)])
    assert res.exit_code == 1 and "content hash mismatch" in res.output


BAD = [
    Case("unknown-queue", ["review", "--queue", "bogus", "--verdicts", "x.json"], "unknown queue 'bogus'"),
    Case("bad-sample", ["review", "--queue", "sample:0", "--verdicts", "x.json"], "sample:N needs a whole number"),
    Case("nothing-to-review", ["review", "export", "-o", "labels.jsonl"], "nothing to review"),
    Case("review-not-a-file", ["score", "run.jsonl", "--review", "missing.json"], "missing.json"),
    Case(
        "review-of-another-kind",
        ["score", "run.jsonl", "--review", "gold.json"],
        "gold.json",
        unchanged=("gold.json",),
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_input(case, tmp_path):
    check_case(case, tmp_path)


def test_review_cli_errors_are_one_line(reviewable):
    tmp, files = reviewable
    res = runner.invoke(cli, ["review", "lock", "-o", "verdicts/r.json", "--verdicts", str(files["adj"])])
    assert res.exit_code == 1 and "no review decisions stored" in res.output
    res = runner.invoke(cli, ["score", "run.jsonl", "--review", str(files["adj"])])
    assert res.exit_code == 1 and "not a review file" in res.output
    assert SCRIPT_SQL in (tmp / "run.jsonl").read_text()


def test_committed_review_schema_is_generated(tmp_path):
    from jury.verdicts.review import review_schema_filename, write_review_schema

    written = write_review_schema(tmp_path)
    committed = REPO / "verdicts" / "schema" / review_schema_filename()
    assert committed.read_text(encoding="utf-8") == written.read_text(encoding="utf-8")
    jsonschema.Draft202012Validator.check_schema(json.loads(committed.read_text()))


def test_a_review_must_bind_reviewed_files_that_exist_and_keys_it_can_check(reviewable):
    from jury.verdicts.lock import content_hash

    tmp, files = reviewable
    _decide_all(tmp, files)
    common = ["--verdicts", str(files["adj"]), "--audit", str(files["audit"])]
    assert runner.invoke(cli, ["review", "lock", "-o", "verdicts/review-1.json", *common]).exit_code == 0
    doc = json.loads((tmp / "verdicts" / "review-1.json").read_text())
    adj = next(f for f in doc["reviewed"] if f["kind"] == "adjudication")

    def forged(name, edit):
        d = json.loads(json.dumps(doc))
        edit(d)
        d["summary"]["decisions"] = len(d["records"])
        d["content_sha256"] = content_hash(d)
        (tmp / "verdicts" / name).write_text(json.dumps(d))
        return str(tmp / "verdicts" / name)

    def elsewhere(d):  # binds another path with a wrong sha256; one record with adj's hash and no answer key
        d["reviewed"] = [{**adj, "path": "other/adj.json", "sha256": "0" * 64}]
        rec = next(r for r in d["records"] if r["kind"] == "adjudication" and r["reviewer"] == "ann")
        rec["answer_key"] = None
        d["records"] = [rec]
        d["reviewers"] = ["ann"]
        d["summary"] = {**d["summary"], "items": 1, "adjudication": 1, "gold": 0, "reviewers": ["ann"]}

    def keyless(d):  # binds the real files, but a decision carries no answer key
        for r in d["records"]:
            r["answer_key"] = None

    def other_answer(d):
        for r in d["records"]:
            if r["kind"] == "adjudication":
                r["answer_key"] = "f" * 64

    for name, edit, why in (
        ("r-elsewhere.json", elsewhere, "other/adj.json"),
        ("r-keyless.json", keyless, "answer_key"),
        ("r-other-answer.json", other_answer, "another answer"),
    ):
        path = forged(name, edit)
        res = runner.invoke(cli, ["verify", path])
        assert res.exit_code == 1 and why in res.output, (name, res.output)  # on main: "OK ... (2 inputs checked, 2 absent)"
        res = runner.invoke(cli, ["score", "run.jsonl", *common, "--review", path, "-f", "json"])
        lines = [x for x in res.output.splitlines() if x.strip()]
        assert res.exit_code == 1 and len(lines) == 1 and why in lines[0], (name, res.output)


def test_review_lock_signs_the_review_file(reviewable, tmp_path):
    from test_signing import make_key

    tmp, files = reviewable
    _decide_all(tmp, files)
    key = make_key(tmp / "keys", "alice")
    common = ["--verdicts", str(files["adj"]), "--audit", str(files["audit"])]
    res = runner.invoke(cli, ["review", "lock", "-o", "verdicts/review-1.json", *common, "--sign", str(key)])
    assert res.exit_code == 0 and "signed" in res.output, res.output
    assert (tmp / "verdicts" / "review-1.json.sig").is_file()
    res = runner.invoke(cli, ["verify", "verdicts/review-1.json", "--trusted-key", str(key) + ".pub"])
    assert res.exit_code == 0 and "signed by trusted key" in res.output, res.output


@pytest.mark.parametrize(
    "spelling",
    [
        "sample:99999999999999999999999",
        "sample:1000001",
        "sample:0",
        "sample:-5",
        "sample:+5",
        "sample: 5",
        "sample:5 ",
        "sample:5\n",
        "sample:\u0663",  # ARABIC-INDIC DIGIT THREE: str.isdigit() and int() accept it
        "sample:\u00b2",  # SUPERSCRIPT TWO: isdigit() is true, int() raises
        "sample:\uff15",  # FULLWIDTH DIGIT FIVE
        "sample:1_000",
        "sample:0x10",
        "sample:1e3",
        "sample:",
        "sample:5:5",
    ],
    ids=repr,
)
def test_a_sample_size_is_plain_digits_from_1_to_a_million(reviewable, spelling):
    """Refused in one line before the page starts (the server would otherwise start and serve)."""
    import jury
    from tests.support.clirun import run_jury_inprocess

    tmp, files = reviewable
    with pytest.raises(jury.InputError, match=r"sample:N needs a whole number N from 1 to 1,000,000 \(plain digits\)"):
        jury.review_app(verdicts=[files["adj"]], queue=[spelling])
    res = run_jury_inprocess(["review", "--queue", spelling, "--verdicts", str(files["adj"])], tmp)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(lines) == 1 and "sample:N needs a whole number" in lines[0], res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""


def test_a_sample_larger_than_the_queue_reviews_everything(reviewable):
    import jury

    _tmp, files = reviewable
    records = len(json.loads(files["adj"].read_text())["records"])  # every record is a candidate of the sample
    for spelling in ("sample:1000000", f"sample:{records}", "sample:0000001"):
        want = 1 if spelling.endswith(":0000001") else records
        assert jury.review_app(verdicts=[files["adj"]], queue=[spelling]).items == want, spelling
