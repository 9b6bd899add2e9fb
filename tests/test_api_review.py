"""`jury.review_app` and the review's lock and export: the review page as an ASGI app a test
(or a notebook) can call, and the decisions written as labels or a locked review file."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

import jury
from jury.jobs.review import export_review, lock_review
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


def test_review_jobs_take_their_options_model_or_its_fields_alike(reviewable):
    """Each review job's options are one model (jury.options.review): the model, its fields as
    keywords, and keywords over a model give the same result."""
    _tmp, files = reviewable
    decide_everything(page_for(files))
    by_keyword = export_review(verdicts=[files["adj"]], audit=files["audit"], reviewer="ann")
    by_model = export_review(None, jury.ReviewExportOptions(verdicts=[files["adj"]], audit=files["audit"], reviewer="ann"))
    overridden = export_review(
        None, jury.ReviewExportOptions(verdicts=[files["adj"]], reviewer="bob"), audit=files["audit"], reviewer="ann"
    )
    assert by_keyword.render() == by_model.render() == overridden.render() != ""
    page = jury.review_app(jury.ReviewOptions(verdicts=[files["adj"]], audit=files["audit"], reviewer="ann"))
    assert (page.items, page.decided, page.reviewer) == (page_for(files).items, 4, "ann")
    locked = lock_review("verdicts/r.json", jury.ReviewLockOptions(verdicts=[files["adj"]], audit=files["audit"], reviewer="ann"))
    assert (locked.decisions, locked.reviewers) == (4, 1)


def test_review_jobs_say_a_bad_option_in_one_line_as_the_command_does(tmp_path, monkeypatch):
    """A value out of its rule is the same line from the library (the field's name) and the command
    (its flag), before any file is read; an unknown keyword is Python's TypeError."""
    from typer.testing import CliRunner

    from jury.cli import app
    from jury.jobs.review_agreement import review_agreement
    from jury.jobs.review_corrected import review_corrected

    monkeypatch.chdir(tmp_path)
    with pytest.raises(jury.InputError, match=r"^port must be at most 65535, got 70000$"):
        jury.review_app(jury.ReviewOptions(), port=70000)
    with pytest.raises(jury.InputError, match=r"^size must be STRATUM=N with N a whole number \(not 'flagged'\), got 'flagged'$"):
        jury.review_sample("s.json", jury.ReviewSampleOptions(by=["flag"]), size="flagged")
    with pytest.raises(jury.InputError, match=r"^confidence must be at most 0.999, got 2.0$"):
        review_agreement("a.json", "b.json", jury.ReviewAgreementOptions(seed=1), confidence=2.0)
    with pytest.raises(jury.InputError, match=r"^resamples must be at least 0, got -1$"):
        review_corrected("s.json", "a.json", "b.json", jury.ReviewCorrectedOptions(kind="gold"), resamples=-1)
    with pytest.raises(TypeError, match=r"lock_review\(\) got an unexpected keyword argument 'reviewers'"):
        lock_review("r.json", reviewers="ann")
    cli = CliRunner()
    for args, line in (
        (["review", "--port", "70000"], "Error: --port must be at most 65535, got 70000"),
        (
            ["review", "sample", "-o", "s.json", "--size", "flagged"],
            "Error: --size must be STRATUM=N with N a whole number (not 'flagged'), got ['flagged']",
        ),
        (["review", "agreement", "a.json", "b.json", "--confidence", "2"], "Error: --confidence must be at most 0.999, got 2.0"),
        (
            ["review", "corrected", "s.json", "a.json", "b.json", "--resamples", "-1"],
            "Error: --resamples must be at least 0, got -1",
        ),
    ):
        shown = cli.invoke(app, args)
        assert (shown.exit_code, shown.output.strip()) == (1, line), args
    settle = jury.ReviewSettleOptions(decisions="d.csv")
    assert settle.decisions.name == "d.csv"
