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
from tests.support.reviewtest import SCRIPT_SQL, make_reviewable

REPO = Path(__file__).resolve().parent.parent
runner = CliRunner()
BASE = "http://127.0.0.1:8765"


@pytest.fixture
def reviewable(tmp_path, monkeypatch, fake_llm):
    monkeypatch.chdir(tmp_path)
    return tmp_path, make_reviewable(tmp_path, fake_llm)


def state_for(tmp: Path, files: dict, reviewer: str = "ann", host: str = "127.0.0.1") -> ReviewState:
    with Store(tmp / ".jury" / "store.db") as st:
        source = build_queue(
            [files["adj"]], files["audit"], [str(q) for q in DEFAULT_REVIEW_QUEUES], None, st, Settings(workers=1), None
        )
    return ReviewState(source, ReviewStore(tmp / ".jury" / "store.db"), reviewer, host=host)


def client_for(state: ReviewState, login: bool = True) -> TestClient:
    client = TestClient(create_app(state), base_url=BASE, follow_redirects=False)
    if login:
        r = client.get(f"/?token={state.token}")
        assert r.status_code == 303
    return client


def index_of(state: ReviewState, kind: str, qid: int) -> int:
    return next(i for i, it in enumerate(state.items) if it.kind == kind and it.question_id == qid)


def decide(client: TestClient, state: ReviewState, n: int, **form) -> object:
    return client.post(f"/item/{n}", data={"csrf": state.csrf, **form})


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
    assert r.status_code == 303 and r.headers["location"] == "/item/0"
    cookie = r.headers["set-cookie"]
    assert state.token in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert anon.get("/item/0").status_code == 200  # the cookie now carries the token
    assert anon.get("/static/review.js").status_code == 200


def test_posts_need_the_csrf_token_and_a_same_origin(reviewable):
    tmp, files = reviewable
    state = state_for(tmp, files)
    client = client_for(state)
    store = ReviewStore(tmp / ".jury" / "store.db")
    n = index_of(state, "adjudication", 3)
    assert client.post(f"/item/{n}", data={"choice": "both"}).status_code == 403
    assert client.post(f"/item/{n}", data={"choice": "both", "csrf": "nope"}).status_code == 403
    evil = client.post(f"/item/{n}", data={"choice": "both", "csrf": state.csrf}, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403
    cross = client.post(f"/item/{n}", data={"choice": "both", "csrf": state.csrf}, headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403
    assert store.decisions(state.shas) == []  # nothing refused was stored
    ok = client.post(f"/item/{n}", data={"choice": "both", "csrf": state.csrf}, headers={"Origin": BASE})
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
    lan_client = TestClient(create_app(lan), base_url="http://192.168.1.5:8765", follow_redirects=False)
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
    assert "juror jb reasoned" in after and "the jury said: no_majority" in after
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
    shown = client.post(f"/item/{n}/run", data={"csrf": state.csrf, "corrected_sql": "SELECT name FROM item ORDER BY price, id"})
    assert shown.status_code == 200
    assert "plum" in shown.text and "(4 rows in total)" in shown.text
    refused = client.post(f"/item/{n}/run", data={"csrf": state.csrf, "corrected_sql": "DELETE FROM item"})
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
    assert re.search(r"κ between reviewers ann and bob: [-0-9.—]+ \(n=3\)", res.stdout)
    assert re.search(r"κ between reviewer ann and the jury: [-0-9.—]+ \(n=2\)", res.stdout)
    doc["records"][0]["note"] = "changed after the lock"
    review.write_text(json.dumps(doc))
    res = runner.invoke(cli, ["verify", str(review)])
    assert res.exit_code == 1 and "content hash mismatch" in res.output


BAD = [
    Case("unknown-queue", ["review", "--queue", "bogus", "--verdicts", "x.json"], "unknown --queue 'bogus'"),
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
