"""The html site's juror pages (`jury report -f html`: jurors/<juror>.html, issue 44 item 1).

Four scripted blind jurors (tests/support/jurytest.category_juror; test doubles, never real
numbers) judge make_project's twelve failures; three follow the truth and the fourth, whose
name is hostile (``../<script>``), always says genuine_error. Expected values come from the
scripts and from the locked verdict file's raw votes, never from jury's own computed output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.fakellm import FakeLLMServer
from tests.support.jurytest import category_juror, make_project, write_panel

runner = CliRunner()
MODELS = ("gpt-x", "claude-y", "m-one", "m-two")
FAMILIES = {"m-one": "deepseek", "m-two": "mistral"}
TRUTH = {1: "gold_defect", 2: "format_equivalence", 3: "genuine_error"}
WRONG = "../<script>window.__pwned=1</script>"  # always says genuine_error
JURORS = [
    ("ja", "openai", "openai/ja"),
    ("jb", "anthropic", "openai/jb"),
    (WRONG, "google", "openai/jc"),
    ("jd", "xai", "openai/jd"),
]
CREDITED = {"gold_defect", "format_equivalence"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from jury.cli import app

    tmp = tmp_path_factory.mktemp("site_jurors")
    make_project(tmp, models=MODELS, families=FAMILIES)
    with FakeLLMServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        for name, _fam, model in JURORS:
            verdict_of = (lambda q: "genuine_error") if name == WRONG else TRUTH.__getitem__
            server.script(model.split("/", 1)[1], category_juror(verdict_of))
        panel = write_panel(tmp, server.base_url, JURORS)
        res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"])
        assert res.exit_code == 0, res.output
        res = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "-f", "html", "-o", "site"])
        assert res.exit_code == 0, res.output
    site = tmp / "site"
    return {
        "tmp": tmp,
        "site": site,
        "verdicts": json.loads((tmp / "verdicts" / "adj.json").read_text(encoding="utf-8")),
        "report": json.loads((site / "report.json").read_text(encoding="utf-8")),
    }


class Page(HTMLParser):
    """The cells (data-json -> text) and links of a page, and its tables as rows of cell texts by id."""

    def __init__(self, text: str):
        super().__init__()
        self.cells: dict[str, str] = {}
        self.links: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self.scripts: list[str] = []
        self._cell: str | None = None
        self._table: str | None = None
        self._row: list[str] | None = None
        self._text: list[str] | None = None
        self._depth = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "script":
            self.scripts.append(a.get("src") or "(inline)")
        if "data-json" in a:
            self._cell, self._celltext = a["data-json"], []
        if tag == "table" and a.get("id"):
            self._table = a["id"]
            self.tables[self._table] = []
        if self._table and tag == "tr":
            self._row = []
        if self._row is not None and tag in ("td", "th"):
            self._text = []

    def handle_endtag(self, tag):
        if self._cell is not None and tag in ("span", "a"):
            self.cells[self._cell] = "".join(self._celltext)
            self._cell = None
        if self._text is not None and tag in ("td", "th"):
            assert self._row is not None
            self._row.append(" ".join("".join(self._text).split()))
            self._text = None
        if self._row is not None and tag == "tr":
            assert self._table is not None
            self.tables[self._table].append(self._row)
            self._row = None
        if tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._celltext.append(data)
        if self._text is not None:
            self._text.append(data)


def juror_page(built, name: str) -> tuple[str, Page]:
    index = Page((built["site"] / "index.html").read_text(encoding="utf-8"))
    links = [h for h in index.links if h.startswith("jurors/")]
    assert len(links) == 4
    text = (built["site"] / "index.html").read_text(encoding="utf-8")
    (href,) = re.findall(r'<a href="(jurors/[^"]+)">' + re.escape(name.replace("<", "&lt;").replace(">", "&gt;")) + "</a>", text)
    return href, Page((built["site"] / href).read_text(encoding="utf-8"))


def by_juror(verdicts) -> dict[str, list[tuple[dict, dict]]]:
    """juror -> [(record, its vote)] straight from the locked file."""
    out: dict[str, list[tuple[dict, dict]]] = {}
    for r in verdicts["records"]:
        for v in r["votes"]:
            out.setdefault(v["juror"], []).append((r, v))
    return out


def test_each_juror_has_a_page_linked_from_the_index_with_a_safe_name(built):
    site = built["site"]
    pages = sorted(p.relative_to(site).as_posix() for p in (site / "jurors").iterdir())
    assert len(pages) == 4 and all(re.fullmatch(r"jurors/[A-Za-z0-9_][A-Za-z0-9_.-]*\.html", p) for p in pages), pages
    assert "jurors/ja.html" in pages and "jurors/jd.html" in pages
    href, page = juror_page(built, WRONG)
    assert href in pages and "/" not in href.removeprefix("jurors/")
    text = (site / href).read_text(encoding="utf-8")
    assert "<script>window" not in text and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in text
    assert page.scripts == ["../assets/site.js"]  # the page's one script is the site's own
    manifest = json.loads((site / ".jury-site.json").read_text(encoding="utf-8"))["files"]
    assert all(p in manifest for p in pages)


def test_the_always_wrong_jurors_page_agrees_with_the_verdict_file(built):
    votes = by_juror(built["verdicts"])
    mine = votes[WRONG]
    _, page = juror_page(built, WRONG)
    # records voted: read from the file; every vote is genuine_error
    assert page.tables["juror-votes"][1] == ["counted votes", "0", "0", str(len(mine)), "0"]
    assert page.tables["juror-votes"][0][1:] == ["gold_defect", "format_equivalence", "genuine_error", "ambiguous"]
    # agreement: with a truth-follower only on question 3 (the one genuine error), over the records both voted on
    rows = {r[0]: r[1:] for r in page.tables["agreement-table"][1:]}
    assert set(rows) == {"ja", "jb", "jd"}
    for other in ("ja", "jb", "jd"):
        theirs = {(r["model"], r["question_id"]) for r, _ in votes[other]}
        common = [r for r, _ in mine if (r["model"], r["question_id"]) in theirs]
        agreed = sum(r["question_id"] == 3 for r in common)
        assert rows[other][:3] == [str(len(common)), str(agreed), f"{100 * agreed / len(common):.1f}%"]
        assert rows[other][3] == "0.000"  # a rater that always gives one category: p_o = p_e, kappa 0
    # position bias: its votes by the order shown, counted from the file; it credits nothing
    for order, label in (("gold_first", "the gold"), ("candidate_first", "the model's answer")):
        n = sum(v["order"] == order for _, v in mine)
        row = next(r for r in page.tables["position-table"][1:] if r[0] == label)
        assert row[1:3] == [str(n), "0"] and row[3].startswith("0.0%")
    html = (built["site"] / juror_page(built, WRONG)[0]).read_text(encoding="utf-8")
    assert "Fisher&#39;s exact p = 1." in html or "Fisher's exact p = 1." in html  # 0 of n vs 0 of m
    # the confusion matrix: given a gold defect it votes genuine_error (the fit's job; > 0.9 as in test_report_latent)
    conf = {r[0]: r[2:] for r in page.tables["confusion"][1:]}  # after the class and its estimated share
    assert list(conf) == ["gold_defect", "format_equivalence", "genuine_error", "ambiguous"]
    assert float(conf["gold_defect"][2]) > 0.9 and float(conf["format_equivalence"][2]) > 0.9
    for row in conf.values():
        assert sum(map(float, row)) == pytest.approx(1, abs=0.003)
    assert "not known" in html  # no review file


def test_a_truth_followers_page_counts_its_votes_by_order_from_the_file(built):
    from scipy.stats import fisher_exact

    mine = by_juror(built["verdicts"])["ja"]
    _, page = juror_page(built, "ja")
    counts = {c: sum(v["category"] == c for _, v in mine) for c in ("gold_defect", "format_equivalence", "genuine_error")}
    assert counts == {c: sum(TRUTH[r["question_id"]] == c for r, _ in mine) for c in counts}  # it follows the truth
    assert page.tables["juror-votes"][1][1:] == [
        str(counts["gold_defect"]),
        str(counts["format_equivalence"]),
        str(counts["genuine_error"]),
        "0",
    ]
    table = []
    for order, label in (("gold_first", "the gold"), ("candidate_first", "the model's answer")):
        n = sum(v["order"] == order for _, v in mine)
        k = sum(v["order"] == order and TRUTH[r["question_id"]] in CREDITED for r, v in mine)
        row = next(r for r in page.tables["position-table"][1:] if r[0] == label)
        assert row[1:3] == [str(n), str(k)]
        table.append([k, n - k])
    html = (built["site"] / "jurors" / "ja.html").read_text(encoding="utf-8")
    p = float(fisher_exact(table).pvalue)
    assert f"exact p = {p:.3g}." in html
    # the other truth-followers agree with it on every common record; the wrong juror on question 3 only
    rows = {r[0]: r[1:] for r in page.tables["agreement-table"][1:]}
    for other in ("jb", "jd"):
        assert rows[other][0] == rows[other][1] and rows[other][2] == "100.0%" and rows[other][3] == "1.000"
    assert int(rows[WRONG][1]) == sum(r["question_id"] == 3 for r, _ in mine if WRONG in r["jurors"])


def test_every_number_on_a_juror_page_is_the_reports(built):
    from jury.results.site.build import FORMATS, resolve

    report = built["report"]
    for page_file in (built["site"] / "jurors").iterdir():
        text = page_file.read_text(encoding="utf-8")
        for path, value, fmt, shown in re.findall(r'data-json="([^"]+)" data-value="([^"]*)" data-fmt="([^"]+)">([^<]*)<', text):
            import html

            path = html.unescape(path)
            assert json.loads(html.unescape(value)) == resolve(report, path)
            assert html.unescape(shown) == FORMATS[fmt](resolve(report, path))
    # and the report's confusion matrices are the latent-class fit's
    (f,) = report["adjudication_uncertainty"]["files"]
    (j,) = report["jurors"]
    assert [x["confusion"] for x in j["jurors"]] == [x["confusion"] for x in f["jurors"]]


def test_a_report_without_verdicts_has_no_jurors_key(built):
    from jury.cli import app

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(built["tmp"])
        res = runner.invoke(app, ["report", "run.jsonl", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert "jurors" not in json.loads(res.stdout)


# ------------------------------------------------------------------ in a real browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it with apt-get)")
def test_juror_pages_in_chromium(built):
    """Open the index, follow the link to a juror page, see its tables. Screenshots go to
    $JURY_SCREENS when set (else beside the site, screens/)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the pip package) is not installed")
    site = built["site"]
    shots = Path(os.environ.get("JURY_SCREENS") or built["tmp"] / "screens")
    shots.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        problems, requests = [], []
        page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        page.on("request", lambda r: requests.append(r.url))
        page.goto((site / "index.html").as_uri() + "#jurors")
        page.wait_for_load_state("load")
        section = page.locator("#jurors")
        assert section.is_visible()
        section.screenshot(path=str(shots / "juror_index.png"))
        for name, shot in ((WRONG, "juror_wrong"), ("ja", "juror_ja")):
            page.goto((site / "index.html").as_uri())
            page.locator("#jurors a", has_text=name).click()
            page.wait_for_load_state("load")
            assert "/jurors/" in page.url
            assert page.locator("h1").inner_text() == name
            assert page.evaluate("window.__pwned") is None
            for table in ("#confusion", "#agreement-table", "#position-table", "#juror-votes"):
                assert page.locator(table).is_visible(), table
            assert page.locator("#confusion tbody tr").count() == 4
            assert page.locator("#agreement-table tbody tr").count() == 3
            for width in (1400, 800):
                page.set_viewport_size({"width": width, "height": 900})
                page.screenshot(path=str(shots / f"{shot}-{width}.png"), full_page=True)
                overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
                assert overflow <= 0, f"the page scrolls sideways at {width} px"
            page.set_viewport_size({"width": 1400, "height": 900})
            # a link in the agreement table opens the other juror's page
        page.locator("#agreement-table a", has_text="jb").click()
        page.wait_for_load_state("load")
        assert page.locator("h1").inner_text() == "jb"
        assert problems == [] and all(u.startswith("file://") for u in requests), (problems, requests)
        browser.close()


def test_a_refused_fit_says_why_on_the_juror_page_and_shows_no_matrix(tmp_path):
    """make_project's two models: 6 records, fewer than the latent-class fit needs."""
    from jury.cli import app

    make_project(tmp_path)
    with FakeLLMServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        for name in ("ja", "jb", "jc", "jd"):
            server.script(name, category_juror(TRUTH.__getitem__))
        four = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
        panel = write_panel(tmp_path, server.base_url, four)
        res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"])
        assert res.exit_code == 0, res.output
        res = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "-f", "html", "-o", "site"])
        assert res.exit_code == 0, res.output
    verdicts = json.loads((tmp_path / "verdicts" / "adj.json").read_text(encoding="utf-8"))
    for name, mine in by_juror(verdicts).items():
        text = (tmp_path / "site" / "jurors" / f"{name}.html").read_text(encoding="utf-8")
        page = Page(text)
        assert "confusion" not in page.tables and "No latent-class fit for this file: " in text
        assert "records with two votes or more, fewer than 10" in text
        assert page.tables["juror-votes"][1][3] == str(sum(TRUTH[r["question_id"]] == "genuine_error" for r, _ in mine))
