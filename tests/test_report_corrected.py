"""`jury report --review-sample S --sample-review A --sample-review B`: the report's corrected
section (jury.results.corrected) carries jury.review_corrected's numbers for the same files, in
JSON, text, Markdown and the html site; bad inputs are one line; without the options the
report has no such section. The fixture is tests/test_review_sample.py's: the bundled example
audited by loopback scripted jurors, a 40-record sample, two reviewers deciding on the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import jury
from jury.cli import app
from tests.test_review_sample import example_audit, folder  # noqa: F401  (the fixtures)

runner = CliRunner()
REPORT = ["report", "run.jsonl", "--audit", "verdicts/audit.json"]
CORRECTED = ["--review-sample", "verdicts/sample.json", "--sample-review", "ann.json", "--sample-review", "bob.json"]


def _reviewed(bob_differs: int = 0) -> None:
    """A 40-record sample by flag, decided by ann and bob on the review page: the panel's flag,
    except every 7th question the other way (so the panel errs both ways); bob decides his
    first ``bob_differs`` items the other way."""
    from starlette.testclient import TestClient

    jury.review_sample("verdicts/sample.json", audit="verdicts/audit.json", by=["flag"], n=40)
    audit = {r["question_id"]: r for r in json.loads(Path("verdicts/audit.json").read_text())["records"]}
    for who in ("ann", "bob"):
        page = jury.review_app(sample="verdicts/sample.json", reviewer=who)
        client = TestClient(page.app, base_url=f"http://127.0.0.1:8765{page.root}/", follow_redirects=False)
        assert client.get(f"?token={page.token}").status_code == 303
        for n, item in enumerate(page.state.items):
            bad = audit[item.question_id]["flagged"] != (int(item.question_id) % 7 == 0)
            bad = bad != (who == "bob" and n < bob_differs)
            data = {"choice": "defective", "defect_type": "sql_vs_question"} if bad else {"choice": "valid"}
            assert client.post(f"item/{n}?csrf={page.state.csrf}", data=data).status_code == 303
        res = runner.invoke(app, ["review", "lock", "-o", f"{who}.json", "--reviewer", who, "--sample", "verdicts/sample.json"])
        assert res.exit_code == 0, res.output


@pytest.mark.slow
def test_the_report_carries_review_corrected_numbers_in_json_text_markdown_and_the_site(folder):  # noqa: F811
    _reviewed()
    plain = runner.invoke(app, [*REPORT, "-f", "json", "-o", "plain.json"])
    assert plain.exit_code == 0, plain.output
    res = runner.invoke(app, [*REPORT, *CORRECTED, "-f", "json", "-o", "r.json"])
    assert res.exit_code == 0, res.output
    report = json.loads(Path("r.json").read_text())
    section = report.pop("corrected")
    # the rest of the report is the report without the options, key for key
    assert report == json.loads(Path("plain.json").read_text())
    assert "corrected" not in json.loads(Path("plain.json").read_text())

    lib = jury.review_corrected("verdicts/sample.json", "ann.json", "bob.json")
    (rate,) = section["rates"]
    assert rate["kind"] == "gold" and section["reviewers"] == lib.reviewers == ["ann", "bob"]
    assert (rate["population"], rate["sample"]) == (lib.population, lib.sample) == (129, 40)
    for key in ("apparent", "value", "low", "high"):
        assert rate[key] == getattr(lib, key), key
    assert [rate["bootstrap_low"], rate["bootstrap_high"]] == lib.bootstrap
    assert rate["sensitivity"]["value"] == lib.sensitivity and rate["specificity"]["value"] == lib.specificity
    for share in (rate["sensitivity"], rate["specificity"]):
        assert share["low"] <= share["value"] <= share["high"] and share["n"] > 0
    # the panel errs on every 7th question both ways: its Se and Sp are below 1, the rates differ
    assert rate["sensitivity"]["value"] < 1 and rate["specificity"]["value"] < 1 and rate["value"] != rate["apparent"]
    assert section["sample_sha256"] == json.loads(Path("verdicts/sample.json").read_text())["content_sha256"]

    line = lib.render().strip()
    assert line.startswith("gold defect rate: panel says ")
    table = runner.invoke(app, [*REPORT, *CORRECTED])
    assert table.exit_code == 0, table.output
    assert line in table.stdout.splitlines()
    assert "sensitivity" in table.stdout and "specificity" in table.stdout
    md = runner.invoke(app, [*REPORT, *CORRECTED, "-f", "md"])
    assert md.exit_code == 0, md.output
    assert "### Corrected by people" in md.stdout and f"- {line}" in md.stdout

    site = runner.invoke(app, [*REPORT, *CORRECTED, "-f", "html", "-o", "site"])
    assert site.exit_code == 0, site.output
    index = Path("site/index.html").read_text()
    assert '<section id="corrected">' in index and f"<li>{line}</li>" in index
    assert f'data-value="{rate["value"]}"' in index
    assert (
        "--review-sample verdicts/sample.json --sample-review ann.json --sample-review bob.json" in index
    )  # the rebuild command
    assert json.loads(Path("site/report.json").read_text())["corrected"] == section
    plain_site = runner.invoke(app, [*REPORT, "-f", "html", "-o", "plain-site"])
    assert plain_site.exit_code == 0, plain_site.output
    assert 'id="corrected"' not in Path("plain-site/index.html").read_text()


@pytest.mark.slow
def test_bad_inputs_are_one_line(folder):  # noqa: F811
    _reviewed()
    jury.review_sample("verdicts/other.json", audit="verdicts/audit.json", by=["flag"], n=40, seed=7)
    gold = json.loads(Path("dev.json").read_text())
    gold[0]["question"] += " (edited)"
    Path("dev2.json").write_text(json.dumps(gold))
    other_sample = ["--review-sample", "verdicts/other.json", "--sample-review", "ann.json", "--sample-review", "bob.json"]
    cases = [
        ([*REPORT, *other_sample], "ann.json: is a review of the sample"),
        ([*REPORT, *CORRECTED[:4]], "give two reviewers' review files"),
        ([*REPORT, "--sample-review", "ann.json"], "give review_sample too"),
        (["report", "run.jsonl", "--gold", "dev2.json", *CORRECTED], "its frame was made for the gold"),
    ]
    for args, says in cases:
        res = runner.invoke(app, args)
        assert res.exit_code == 1, (args, res.output)
        assert says in res.stderr and len(res.stderr.strip().splitlines()) == 1, (args, res.stderr)


@pytest.mark.slow
def test_an_adjudication_round_settles_the_disagreements_the_report_corrects_with(folder):  # noqa: F811
    _reviewed(bob_differs=5)
    res = runner.invoke(app, [*REPORT, *CORRECTED])
    assert res.exit_code == 1 and "settle it first" in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output
    differ = jury.review_agreement("ann.json", "bob.json").disagreements
    assert len(differ) == 5
    # the round settles each one the other way from ann: bob was right (so the result differs from ann's alone)
    rows = ["question_id,model,label,settled_by,note"]
    rows += [f"{d['question_id']},,{d['b']},cat,bob was right" for d in differ]
    Path("round.csv").write_text("\n".join(rows) + "\n")
    res = runner.invoke(app, ["review", "settle", "ann.json", "bob.json", "-o", "round.json", "--decisions", "round.csv"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, [*REPORT, *CORRECTED, "--settled", "round.json", "-f", "json", "-o", "r.json"])
    assert res.exit_code == 0, res.output
    (rate,) = json.loads(Path("r.json").read_text())["corrected"]["rates"]
    lib = jury.review_corrected("verdicts/sample.json", "ann.json", "bob.json", settled="round.json")
    assert (rate["value"], rate["low"], rate["high"]) == (lib.value, lib.low, lib.high)
    assert (rate["sensitivity"]["value"], rate["specificity"]["value"]) == (lib.sensitivity, lib.specificity)
    assert json.loads(Path("r.json").read_text())["corrected"]["settled"] == "round.json"


@pytest.mark.slow
def test_a_sample_of_answers_and_gold_queries_gets_both_rates(reviewable):
    """tests/support/reviewtest.py's project: one adjudication and one audit file, every record
    sampled; the report's two rates are review_corrected's for kind gold and kind adjudication."""
    from starlette.testclient import TestClient

    _tmp, files = reviewable
    frame = len(json.loads(files["adj"].read_text())["records"]) + len(json.loads(files["audit"].read_text())["records"])
    jury.review_sample("verdicts/sample.json", verdicts=[files["adj"]], audit=files["audit"], by=["flag"], n=frame)
    for who in ("ann", "bob"):
        page = jury.review_app(sample="verdicts/sample.json", reviewer=who)
        client = TestClient(page.app, base_url=f"http://127.0.0.1:8765{page.root}/", follow_redirects=False)
        assert client.get(f"?token={page.token}").status_code == 303
        for n, item in enumerate(page.state.items):
            odd = int(item.question_id) % 2  # by question: each reviewer's page has its own order
            choice = ("both" if odd else "neither") if item.kind == "adjudication" else ("defective" if odd else "valid")
            data = {"choice": choice, "defect_type": "sql_vs_question"} if choice == "defective" else {"choice": choice}
            assert client.post(f"item/{n}?csrf={page.state.csrf}", data=data).status_code == 303
        res = runner.invoke(app, ["review", "lock", "-o", f"{who}.json", "--reviewer", who, "--sample", "verdicts/sample.json"])
        assert res.exit_code == 0, res.output
    args = ["report", "run.jsonl", "--verdicts", str(files["adj"]), "--audit", str(files["audit"]), *CORRECTED]
    res = runner.invoke(app, [*args, "-f", "json", "-o", "r.json"])
    assert res.exit_code == 0, res.output
    rates = json.loads(Path("r.json").read_text())["corrected"]["rates"]
    assert [r["kind"] for r in rates] == ["gold", "adjudication"]
    for rate in rates:
        lib = jury.review_corrected("verdicts/sample.json", "ann.json", "bob.json", kind=rate["kind"])
        assert (rate["population"], rate["sample"], rate["apparent"]) == (lib.population, lib.sample, lib.apparent)
        assert (rate["value"], rate["low"], rate["high"], rate["reason"]) == (lib.value, lib.low, lib.high, lib.reason)
    table = runner.invoke(app, args)
    assert table.exit_code == 0, table.output
    assert (
        jury.review_corrected("verdicts/sample.json", "ann.json", "bob.json", kind="adjudication").render().strip()
        in table.stdout
    )
