"""`jury report -f html --compare-panels A B`: the site's "Two panels compared" section (issue 33
item 4). The site project's audit against a second audit of the same gold made from it by hand
(question 3's flag dropped, question 1 flagged): the counts on the page are derived from the two
files read as plain JSON, and kappa from scikit-learn; the page is checked in a real browser."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser

import pytest
from sklearn.metrics import cohen_kappa_score

from tests.support.badinput import run_jury
from tests.support.fakellm import FakeLLMServer
from tests.support.sitetest import REPORT_ARGS, make_site_project


def second_audit(audit, path):
    """The audit with question 3 found valid by every juror and question 1 defective (wrong_filter)."""
    from jury.verdicts.lock import write_locked

    data = json.loads(audit.read_text())
    data.pop("content_sha256")
    data["summary"] = {}
    for r in data["records"]:
        if r["question_id"] not in (1, 3):
            continue
        flag = r["question_id"] == 1
        for v in r["votes"]:
            cat = "defective" if flag else "valid"
            v.update(raw_verdict=cat, category=cat, abstained=False, reason=None, defect_type="wrong_filter" if flag else None)
        r.update(flagged=flag, decided=True, defect_types=["wrong_filter"] if flag else [])
    return write_locked(data, path)


class Section(HTMLParser):
    """The text of each <li> and each table row's cells inside <section id="panels">."""

    def __init__(self, text: str):
        super().__init__()
        self.inside, self.items, self.rows, self._buf, self._row = 0, [], [], None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "section" and dict(attrs).get("id") == "panels":
            self.inside = 1
        elif self.inside and tag in ("li", "td"):
            self._buf = []
        elif self.inside and tag == "tr":
            self._row = []

    def handle_endtag(self, tag):
        if tag == "section":
            self.inside = 0
        elif self.inside and tag == "li":
            self.items.append("".join(self._buf))
        elif self.inside and tag == "td":
            self._row.append("".join(self._buf))
        elif self.inside and tag == "tr" and self._row:
            self.rows.append(self._row)

    def handle_data(self, data):
        if self._buf is not None:
            self._buf.append(data)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("panels-site")
    with pytest.MonkeyPatch.context() as mp, FakeLLMServer() as server:
        mp.chdir(tmp)
        mp.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        files = make_site_project(tmp, server)
    audit_b = second_audit(files["audit"], tmp / "verdicts" / "audit-b.json")
    args = [*REPORT_ARGS, "-f", "html", "-o", "site", "--compare-panels", files["audit"], "--compare-panels", audit_b]
    res = run_jury(args, tmp)
    assert res.returncode == 0, res.stderr
    return tmp, files["audit"], audit_b


def labels(path):
    return {r["question_id"]: r for r in json.loads(path.read_text())["records"]}


def test_the_front_page_has_the_two_panels_section_with_the_files_numbers(site):
    tmp, a, b = site
    text = (tmp / "site" / "index.html").read_text(encoding="utf-8")
    assert '<a href="#panels">' in text
    page = Section(text)
    ra, rb = labels(a), labels(b)
    qs = sorted(ra)
    fa, fb = [ra[q]["flagged"] for q in qs], [rb[q]["flagged"] for q in qs]
    both = sum(x and y for x, y in zip(fa, fb))
    only_a = sum(x and not y for x, y in zip(fa, fb))
    only_b = sum(y and not x for x, y in zip(fa, fb))
    assert only_a >= 1 and only_b == 1  # question 3's flag dropped, question 1's added
    shared = next(x for x in page.items if x.startswith("flags (a defect type): "))
    assert shared.startswith(f"flags (a defect type): {both} shared, {only_a} only A, {only_b} only B, ")
    agree = sum(x == y for x, y in zip(fa, fb))
    flag_line = next(x for x in page.items if x.startswith("agreement on the flag: "))
    kappa = cohen_kappa_score(fa, fb)
    assert flag_line.startswith(
        f"agreement on the flag: {agree} of {len(qs)} ({100 * agree / len(qs):.1f} %); Cohen's kappa {kappa:.3f}"
    )
    assert page.rows[0][:7] == [
        "all",
        "all",
        str(len(qs)),
        str(both),
        str(only_a),
        str(only_b),
        str(len(qs) - both - only_a - only_b),
    ]
    # the records where the two differ, with both panels' votes
    differ = [r for r in page.rows if len(r) == 7 and r[0] in {"1", "3"}]
    assert sorted(r[0] for r in differ) == ["1", "3"]
    q1 = next(r for r in differ if r[0] == "1")
    assert q1[4] == "wrong_filter" and "defective (wrong_filter)" in q1[6]
    # the rebuild command on the page names both files
    assert f"--compare-panels {a.relative_to(tmp)}" in text.replace(str(tmp) + "/", "")


def test_compare_panels_is_for_the_site_and_for_this_gold_only(site):
    tmp, a, b = site
    res = run_jury([*REPORT_ARGS, "--compare-panels", a, "--compare-panels", b], tmp)
    assert res.returncode == 1 and "for a table: jury compare-panels A B" in res.stderr
    res = run_jury([*REPORT_ARGS, "-f", "html", "-o", "site2", "--compare-panels", a], tmp)
    assert res.returncode == 1 and "give two verdict files" in res.stderr
    other = tmp / "other"
    other.mkdir(exist_ok=True)
    from tests.test_compare_panels import HAND, write_audit, write_gold

    gold = write_gold(other)
    c = write_audit(other, "c.json", {q: x for q, (x, _) in HAND.items()}, gold)
    d = write_audit(other, "d.json", {q: y for q, (_, y) in HAND.items()}, gold)
    res = run_jury([*REPORT_ARGS, "-f", "html", "-o", "site3", "--compare-panels", c, "--compare-panels", d], tmp)
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.returncode == 1 and len(lines) == 1 and "was made for another gold file" in lines[0], res.stderr
    assert not (tmp / "site3").exists()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it with apt-get)")
def test_the_section_in_chromium(site):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the pip package) is not installed")
    tmp, _a, _b = site
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        problems = []
        page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        page.goto((tmp / "site" / "index.html").as_uri())
        page.wait_for_load_state("load")
        page.click('nav.toc a[href="#panels"]')
        section = page.locator("#panels")
        assert section.is_visible() and section.locator("h2").inner_text() == "Two panels compared"
        assert page.evaluate("location.hash") == "#panels"
        assert page.locator("#panels-breakdowns tbody tr").count() >= 2
        assert page.locator("#panels-disagreements tbody tr").count() == 2
        assert "only A" in section.inner_text() and problems == []
        browser.close()
