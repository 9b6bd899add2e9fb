"""`jury.review_app` and the review's lock and export: the review page as an ASGI app a test
(or a notebook) can call, and the decisions written as labels or a locked review file."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

import jury
from jury.api.review import export_review, lock_review
from tests.support.reviewtest import make_reviewable

BASE = "http://127.0.0.1:8765"


@pytest.fixture
def reviewable(tmp_path, monkeypatch, fake_llm):
    monkeypatch.chdir(tmp_path)
    return tmp_path, make_reviewable(tmp_path, fake_llm)


def page_for(files, reviewer: str = "ann"):
    return jury.review_app(verdicts=[files["adj"]], audit=files["audit"], reviewer=reviewer)


def decide_everything(page) -> int:
    """Answer every item of the page's queue through the app, as a browser would; how many."""
    client = TestClient(page.app, base_url=BASE, follow_redirects=False)
    assert client.get(page.path).status_code == 303  # the token sets the launch's cookie
    for n, item in enumerate(page.state.items):
        choice = "valid" if item.kind == "gold" else "both"
        assert client.post(f"{page.root}/item/{n}?csrf={page.state.csrf}", data={"choice": choice}).status_code == 303
    return len(page.state.items)


def test_the_app_answers_with_the_token_and_refuses_without(reviewable):
    _tmp, files = reviewable
    page = page_for(files)
    assert page.items == 4 and page.decided == 0 and page.reviewer == "ann" and page.notes == []
    assert page.render() == "Reviewing 4 items as ann (0 decided so far); open:\n"
    assert page.url(8765) == f"{BASE}{page.root}/?token={page.token}"
    anon = TestClient(page.app, base_url=BASE, follow_redirects=False)
    assert anon.get(f"{page.root}/").status_code == 403
    assert anon.get(f"{page.root}/item/0").status_code == 403
    assert anon.get(f"{page.root}/?token=wrong").status_code == 403
    r = anon.get(page.path)
    assert r.status_code == 303 and r.headers["location"] == f"{page.root}/item/0"
    item = anon.get(f"{page.root}/item/0")  # the cookie now carries the token
    assert item.status_code == 200 and page.state.items[0].question in item.text
    assert jury.review_app(verdicts=[files["adj"]], audit=files["audit"], reviewer="ann").token != page.token  # per launch


def test_a_host_or_reviewer_the_page_cannot_use_is_refused_before_any_work(reviewable):
    _tmp, files = reviewable
    with pytest.raises(jury.InputError, match="binding every interface is refused"):
        jury.review_app(verdicts=[files["adj"]], host="0.0.0.0")
    with pytest.raises(jury.InputError, match="without control characters"):
        jury.review_app(verdicts=[files["adj"]], reviewer="ann\x1b[2J")
    with pytest.raises(jury.InputError, match="unknown queue 'bogus'"):
        jury.review_app(verdicts=[files["adj"]], queue="bogus")
    with pytest.raises(jury.InputError, match="nothing to review"):
        jury.review_app()


def test_a_sample_queue_and_decisions_so_far(reviewable):
    _tmp, files = reviewable
    decide_everything(page_for(files))
    again = page_for(files)
    assert again.decided == again.items == 4  # stored as they were made
    assert page_for(files, "bob").decided == 0  # each reviewer their own
    sample = jury.review_app(verdicts=[files["adj"]], queue=["sample:1"], reviewer="ann")
    assert sample.items == 1


def test_export_and_lock_write_what_was_decided_and_the_review_file_verifies(reviewable):
    tmp, files = reviewable
    with pytest.raises(jury.InputError, match="no review decisions stored"):
        lock_review("verdicts/review.json", verdicts=[files["adj"]], audit=files["audit"])
    assert not (tmp / "verdicts" / "review.json").exists()
    decide_everything(page_for(files))
    exported = export_review(verdicts=[files["adj"]], audit=files["audit"])
    assert len(exported.labels) == 4 and exported.output is None and exported.notes == []
    assert {json.loads(line)["annotator"] for line in exported.render().splitlines()} == {"ann"}
    written = export_review("labels.jsonl", verdicts=[files["adj"]], audit=files["audit"])
    assert (tmp / "labels.jsonl").read_text() == exported.render() and written.notes == ["wrote 4 labels to labels.jsonl"]
    with pytest.raises(jury.InputError, match="never overwrites"):
        export_review(files["adj"], verdicts=[files["adj"]], audit=files["audit"])
    locked = lock_review("verdicts/review.json", verdicts=[files["adj"]], audit=files["audit"])
    assert locked.decisions == 4 and locked.reviewers == 1 and locked.signature is None
    assert locked.render() == "locked 4 decisions by 1 reviewer(s) in verdicts/review.json\n"
    assert jury.verify("verdicts/review.json").ok
    with pytest.raises(jury.InputError, match="never overwritten"):
        lock_review("verdicts/review.json", verdicts=[files["adj"]], audit=files["audit"])
