"""`jury review` in a real browser: Debian's chromium driven by Playwright (nothing downloaded).

Starts the real `jury review` in a subprocess, opens the URL it prints, decides three items
with the keyboard and one with the mouse, checks that the jurors' votes appear only after
answering and that a <script> inside a candidate SQL is text that never runs, that a preview
wider than the page scrolls instead of being cut, restarts the server mid-queue (the same
browser, still holding the first launch's cookie, opens the new URL), and exports what was
clicked. Screenshots of each screen go to the test's tmp folder (and to $JURY_REVIEW_SCREENS
when set).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.reviewtest import make_reviewable

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it with apt-get)"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the pip package) is not installed")


def start_review(tmp: Path, files: dict, reviewer: str, extra: list[str] | None = None) -> tuple[subprocess.Popen, str]:
    """`jury review` on files' adj and audit (or, with extra such as ["--sample", FILE], on those options)."""
    given = ["--verdicts", str(files["adj"]), "--audit", str(files["audit"])] if extra is None else extra
    proc = subprocess.Popen(
        [sys.executable, "-m", "jury", "review", *given, "--reviewer", reviewer],
        cwd=tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True"),
    )
    assert proc.stdout is not None
    for _ in range(5):
        line = proc.stdout.readline()
        m = re.match(r"(http://127\.0\.0\.1:\d+/[0-9a-f]{16}/\?token=\S+)$", line.strip())
        if m:
            return proc, m.group(1)
    proc.kill()
    raise AssertionError(f"no URL printed: {proc.stderr.read() if proc.stderr else ''}")


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def assert_previews_uncut(page) -> None:
    """Every result preview lies inside the page, and no line of it runs past its box (nothing is cut off)."""
    boxes = page.locator(".result").evaluate_all(
        """els => els.map(el => ({right: el.getBoundingClientRect().right, page: document.documentElement.clientWidth,
                                  inner: el.scrollWidth, shown: el.clientWidth, text: el.innerText}))"""
    )
    assert boxes and any("wide_b" in b["text"] and "END" in b["text"] for b in boxes)  # the test's wide preview, whole
    for b in boxes:
        assert b["right"] <= b["page"] and b["inner"] <= b["shown"], b


def test_review_end_to_end_in_chromium(tmp_path, monkeypatch, fake_llm):
    monkeypatch.chdir(tmp_path)
    files = make_reviewable(tmp_path, fake_llm)
    shots = tmp_path / "screens"
    shots.mkdir()
    clicked: dict[tuple[str, int], str] = {}
    proc, url = start_review(tmp_path, files, "ann")
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url)
            assert "token=" not in page.url  # the token moved to a cookie

            def current() -> tuple[str, int]:
                kind = page.locator(".nav .kind").inner_text()
                qid = int(re.search(r"question (\d+)", kind).group(1))
                return ("gold" if "gold query" in kind else "adjudication", qid)

            def shot(name: str) -> None:
                page.screenshot(path=str(shots / f"{name}.png"), full_page=True)

            for step in range(3):  # three decisions with the keyboard
                kind, qid = current()
                assert page.locator("#jury").count() == 0  # no votes before answering
                if kind == "adjudication" and qid == 3:
                    assert (
                        page.locator("pre.sql", has_text="<script>").count()
                        + page.locator("pre.sql", has_text="<\\script>").count()
                        >= 1
                    )  # shown as text
                    assert page.evaluate("window.__pwned") is None
                    for width in (800, 1280):  # a narrow window too
                        page.set_viewport_size({"width": width, "height": 900})
                        assert_previews_uncut(page)
                if kind == "gold":
                    assert page.locator("#defect_type").input_value() == ""  # no defect type chosen for you
                shot(f"{step + 1}-{kind}-{qid}-before")
                key = "1" if kind == "gold" else "4"  # gold: valid; adjudication: neither
                page.keyboard.press(key)
                page.wait_for_selector("#jury")
                clicked[(kind, qid)] = "valid" if kind == "gold" else "neither"
                assert "reasoned" in page.locator("#jury").inner_text() or "audit says" in page.locator("#jury").inner_text()
                assert not re.search(r"answer_[12]|genuine_error|no_majority", page.locator("#jury h3").inner_text())
                shot(f"{step + 1}-{kind}-{qid}-after")
                assert page.evaluate("window.__pwned") is None
                page.keyboard.press("n")
                page.wait_for_load_state()
            assert page.locator("#progress").inner_text() == "3 / 4 decided"
            stop(proc)  # the server goes away mid-queue; the browser keeps the first launch's cookie
            proc, url = start_review(tmp_path, files, "ann")
            page.goto(url)  # a new launch, a new token: lands on the one undecided item
            assert page.locator("#progress").inner_text() == "3 / 4 decided"
            kind = page.locator(".nav .kind").inner_text()
            qid = int(re.search(r"question (\d+)", kind).group(1))
            kind = "gold" if "gold query" in kind else "adjudication"
            assert (kind, qid) not in clicked
            shot_path = shots / "4-restarted-before.png"
            page.screenshot(path=str(shot_path), full_page=True)
            if kind == "gold":
                assert page.locator("#defect_type").input_value() == ""
                page.select_option("select[name=defect_type]", "sql_vs_data")
                page.fill("#corrected_sql", "SELECT name FROM item ORDER BY price, id")
                page.click("#run")
                page.wait_for_selector("#corrected_preview")
                assert "4 rows in total" in page.locator("#corrected_preview").inner_text()
                page.screenshot(path=str(shots / "4-corrected-preview.png"), full_page=True)
                page.click("button[value=defective]")  # the mouse
                clicked[(kind, qid)] = "defective"
            else:
                page.click("button[value=both]")
                clicked[(kind, qid)] = "both"
            page.wait_for_selector("#jury")
            page.screenshot(path=str(shots / "4-restarted-after.png"), full_page=True)
            assert page.locator("#progress").inner_text() == "4 / 4 decided"
            page.click("#next")
            page.wait_for_selector("#done")
            page.screenshot(path=str(shots / "5-done.png"), full_page=True)
            browser.close()
    finally:
        stop(proc)
    out = tmp_path / "labels.jsonl"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "jury",
            "review",
            "export",
            "-o",
            str(out),
            "--verdicts",
            str(files["adj"]),
            "--audit",
            str(files["audit"]),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    exported = {}
    for lab in map(json.loads, out.read_text().splitlines()):
        assert lab["annotator"] == "ann"
        if "gold_defective" in lab:
            exported[("gold", lab["question_id"])] = "defective" if lab["gold_defective"] else "valid"
        else:
            exported[("adjudication", lab["question_id"])] = {"genuine_error": "neither", "format_equivalence": "both"}[
                lab["category"]
            ]
    assert exported == clicked
    target = os.environ.get("JURY_REVIEW_SCREENS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        for png in shots.glob("*.png"):
            shutil.copy(png, Path(target) / png.name)
