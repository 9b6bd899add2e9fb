"""The blind double review in a real browser (Debian's chromium via Playwright): two reviewers
each decide a locked sample with the keyboard through the real `jury review --sample`; neither
page ever shows the panel's votes or verdict, bob's never shows ann's decisions, and their
locked files give `jury review agreement`. Screenshots go to the test's tmp folder (and to
$JURY_REVIEW_SCREENS when set)."""

from __future__ import annotations

import os
import shutil

import pytest
from test_review_browser import CHROMIUM, start_review, stop
from typer.testing import CliRunner

import jury
from jury.cli import app
from tests.support.reviewtest import make_reviewable

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it with apt-get)"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the pip package) is not installed")


def test_two_blind_reviewers_in_chromium(tmp_path, monkeypatch, fake_llm):
    monkeypatch.chdir(tmp_path)
    files = make_reviewable(tmp_path, fake_llm)
    res = jury.review_sample("verdicts/sample.json", verdicts=[files["adj"]], audit=files["audit"], by=["flag"], n=7)
    sample = ["--sample", "verdicts/sample.json"]
    shots = tmp_path / "screens"
    shots.mkdir()
    keys = {"ann": {"gold": "1", "adjudication": "3"}, "bob": {"gold": "2", "adjudication": "5"}}
    for who in ("ann", "bob"):
        proc, url = start_review(tmp_path, {"adj": None, "audit": None}, who, extra=sample)
        try:
            with sync_api.sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(url)
                for step in range(len(res.records)):
                    kind = "gold" if "gold query" in page.locator(".nav .kind").inner_text() else "adjudication"
                    assert page.locator("#jury").count() == 0
                    assert "panel's votes are not shown" in page.content()
                    page.keyboard.press(keys[who][kind])
                    page.wait_for_selector("#jury")
                    shown = page.content()
                    for leak in ("reasoned", "audit says", "the jury said", "<th>juror</th>"):
                        assert leak not in shown, (who, step, leak)
                    if who == "bob":
                        assert "ann" not in page.locator("body").inner_text().replace("Answer", "")
                    page.screenshot(path=str(shots / f"{who}-{step + 1}-{kind}.png"), full_page=True)
                    page.keyboard.press("n")
                    page.wait_for_load_state()
                assert page.locator("#progress").inner_text() == f"{len(res.records)} / {len(res.records)} decided"
                browser.close()
        finally:
            stop(proc)
    runner = CliRunner()
    for who in ("ann", "bob"):
        out = runner.invoke(app, ["review", "lock", "-o", f"{who}.json", "--reviewer", who, *sample])
        assert out.exit_code == 0, out.output
    got = jury.review_agreement("ann.json", "bob.json")
    assert got.n == len(res.records) and len(got.disagreements) == len(res.records)  # every key differs
    if os.environ.get("JURY_REVIEW_SCREENS"):
        shutil.copytree(shots, os.environ["JURY_REVIEW_SCREENS"], dirs_exist_ok=True)
