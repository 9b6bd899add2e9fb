"""`jury report` with the jury's uncertainty: a latent-class fit per adjudication file and the
questions + jury interval per model (jury.results.report.latent).

Scripted jurors (tests/support/fakellm.py) are test doubles: their verdicts exercise the code and
are never reported as real numbers. Expected values here come from the scripts, never from the
code's own output.
"""

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

import jury
from jury.results.report.model import REPORT_SCHEMA_FILENAME
from tests.support.fakellm import FakeLLMServer
from tests.support.jurytest import category_juror, make_project, write_panel

runner = CliRunner()
MODELS = ("gpt-x", "claude-y", "m-one", "m-two")
FAMILIES = {"m-one": "deepseek", "m-two": "mistral"}
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
TRUTH = {1: "gold_defect", 2: "format_equivalence", 3: "genuine_error"}
SCHEMA = "verdicts/schema/" + REPORT_SCHEMA_FILENAME


juror = category_juror  # a blind juror whose category for question q is verdict_of(q)


def adjudicated_project(tmp, scripts):
    """make_project with four models (12 failures, each judged by three of the four jurors: a
    juror never judges its own family; jc, google, judges all 12), adjudicated by `jury
    adjudicate` with scripted jurors; verdicts/adj.json is locked."""
    from jury.cli import app

    make_project(tmp, models=MODELS, families=FAMILIES)
    with FakeLLMServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        for name, _ in FOUR:
            server.script(name, juror(scripts[name]))
        panel = write_panel(tmp, server.base_url, FOUR)
        res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"])
        assert res.exit_code == 0, res.output
    return tmp


@pytest.fixture(scope="module")
def one_wrong(tmp_path_factory):
    """ja, jb, jd follow the truth; jc always says genuine_error."""
    tmp = tmp_path_factory.mktemp("one_wrong")
    truth = TRUTH.__getitem__
    return adjudicated_project(tmp, {"ja": truth, "jb": truth, "jc": lambda q: "genuine_error", "jd": truth})


@pytest.fixture(scope="module")
def unanimous(tmp_path_factory):
    """Every juror says gold_defect on every record."""
    tmp = tmp_path_factory.mktemp("unanimous")
    return adjudicated_project(tmp, {name: (lambda q: "gold_defect") for name, _ in FOUR})


def report(project, *args):
    from jury.cli import app

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        res = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", *args])
    assert res.exit_code == 0, res.output
    return res.stdout


def test_a_juror_that_always_votes_wrong_gets_a_low_accuracy(one_wrong):
    rep = json.loads(report(one_wrong, "-f", "json"))
    (f,) = rep["adjudication_uncertainty"]["files"]
    assert f["fitted"] and f["refused"] is None and f["records"] == 12 and f["draws"] == "joint"
    acc = {j["juror"]: j["accuracy"] for j in f["jurors"]}
    assert acc["jc"] < 0.5  # right only where the truth is genuine_error: a third of the records
    assert all(acc[j] > 0.8 for j in ("ja", "jb", "jd"))
    conf = {j["juror"]: j["confusion"] for j in f["jurors"]}
    ge = f["classes"].index("genuine_error")
    gd = f["classes"].index("gold_defect")
    assert conf["jc"][gd][ge] > 0.9  # given a gold defect, jc votes genuine_error
    # two right jurors outvote jc on every record: the latent verdict is the majority's
    assert f["differs"] == []
    # the dependence check: the truth-followers agree on every common record; jc (genuine_error
    # always) agrees with any of them on the q3 record of each model only, a third
    d = f["dependence"]
    assert d["resamples"] == 200 and d["seed"] == 0 and 0 < d["p_value"] <= 1
    observed = {tuple(p["jurors"]): p["observed"] for p in d["pairs"]}
    assert len(observed) == 6
    for pair, agree in observed.items():
        assert agree == pytest.approx(1 / 3 if "jc" in pair else 1.0)
    for m in rep["models"]:  # each model: q1 gold defect and q2 format equivalent credited, of 3
        assert (m["adjudicated"]["k"], m["adjudicated"]["n"]) == (2, 3)
        j = m["adjudicated_jury"]
        assert j["records_fitted"] == 3 and j["records_published"] == 0
        assert j["expected"] == pytest.approx(2 / 3, abs=0.02)


def test_unanimous_jurors_expected_equals_published_and_the_interval_holds_it(unanimous):
    rep = json.loads(report(unanimous, "-f", "json"))
    (f,) = rep["adjudication_uncertainty"]["files"]
    assert f["fitted"] and f["differs"] == []
    for m in rep["models"]:
        # every record's votes are unanimous gold_defect: its posterior puts ~1 on gold_defect,
        # so by hand expected = (0 strict + 3 credits) / 3 = 1, the published value
        pub = m["adjudicated"]
        assert (pub["k"], pub["n"]) == (3, 3)
        j = m["adjudicated_jury"]
        assert j["expected"] == pytest.approx(pub["value"], abs=1e-3)
        assert j["low"] <= pub["value"] <= j["high"] + 1e-9
        assert j["expected_credit_changes"] == pytest.approx(0, abs=1e-2)


def test_json_validates_against_the_schema_and_table_and_md_show_the_column(one_wrong):
    rep = json.loads(report(one_wrong, "-f", "json"))
    schema = json.loads(_schema_path().read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(rep)
    u = rep["adjudication_uncertainty"]
    assert u["resamples"] == 2000 and u["seed"] == 0 and u["method"] == "questions + jury"
    again = json.loads(report(one_wrong, "-f", "json"))
    assert again["adjudication_uncertainty"] == u  # seeded: the same numbers twice
    for fmt in ("table", "md"):
        text = report(one_wrong, "-f", fmt)
        flat = " ".join(text.split())
        assert "expected [questions + jury 95%]" in flat
        assert "2,000 resamples" in flat and "latent-class fit of verdicts/adj.json" in flat
        assert re.search(r"verdicts/adj\.json: (no sign of jurors erring together \(p = |jurors err together\? p = )", flat)
        assert "jc" in flat


def _schema_path():
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / SCHEMA


def test_a_fit_with_too_few_records_is_refused_in_one_line(tmp_path):
    """make_project's two models: 6 records, fewer than the fit needs. The published verdicts
    are then taken as certain, and the two models answer alike: every resample of the questions
    and verdicts ties them, so both are 1st in every one (rank interval [1st, 1st], p(1st) = 1)."""
    from jury.cli import app

    make_project(tmp_path)
    truth = TRUTH.__getitem__
    with FakeLLMServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        for name, _ in FOUR:
            server.script(name, juror(truth))
        panel = write_panel(tmp_path, server.base_url, FOUR)
        res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"])
        assert res.exit_code == 0, res.output
    rep = json.loads(report(tmp_path, "-f", "json"))
    (f,) = rep["adjudication_uncertainty"]["files"]
    assert not f["fitted"] and "fewer than 10" in f["refused"] and f["jurors"] == []
    for m in rep["models"]:  # the published rule kept: expected is the published value
        assert m["adjudicated_jury"]["expected"] == pytest.approx(m["adjudicated"]["value"])
        assert m["adjudicated_jury"]["records_fitted"] == 0
        rank = m["adjudicated_jury"]["rank"]
        assert rank["model"] == m["model"] and rank["rank"] == m["adjudicated_rank"] == 1
        assert (rank["low"], rank["high"], rank["probabilities"]) == (1, 1, [1.0, 0.0])
    table = report(tmp_path, "--wide")
    assert "rank [questions + jury 95%] p(rank)" in table
    assert table.count("1st [1st–1st] p 1.00") == 6  # strict and adjudicated (questions), questions + jury: two models
    text = report(tmp_path, "-f", "md")
    (line,) = [x for x in text.splitlines() if "latent-class fit of verdicts/adj.json refused" in x]
    assert "published rule kept" in line


def test_without_verdicts_the_new_fields_are_absent(one_wrong):
    from jury.cli import app

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(one_wrong)
        res = runner.invoke(app, ["report", "run.jsonl", "-f", "json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert "adjudication_uncertainty" not in rep
    assert all("adjudicated_jury" not in m for m in rep["models"])


def test_a_fit_with_one_juror_is_refused_and_the_published_rule_kept():
    """Library level: 12 judged failures, each with one vote by one juror."""
    from test_report import GOLD, adj_doc, adj_record, make_eval

    from jury.results.report.build import build_report, render_report

    verdicts = ["gold_defect", "genuine_error", "format_equivalence", "genuine_error", "ambiguous", "gold_defect"]
    models = {m: ([fam], {q: ("mismatch", verdicts[q - 1]) for q in range(1, 7)}) for m, fam in (("A", "openai"), ("B", "xai"))}
    records = []
    for m, (_fams, outcomes) in models.items():
        for q, (_o, v) in outcomes.items():
            rec = adj_record(m, q, v, models)
            rec["jurors"] = ["solo"]
            rec["votes"] = [{"juror": "solo", "family": "google", "model": "openai/solo", "category": v}]
            records.append(rec)
    rep = build_report(make_eval(models), GOLD, adj_docs=[("solo.json", adj_doc(records, {}))])
    (f,) = rep.adjudication_uncertainty.files
    assert not f.fitted and f.refused.startswith("1 juror voted") and f.draws is None
    for row in rep.models:  # by hand: q1, q3, q6 credited of the 6 routed (q7's gold fails)
        assert (row.adjudicated.k, row.adjudicated.n) == (3, 6)
        assert row.adjudicated_jury.expected == pytest.approx(0.5)
        assert row.adjudicated_jury.expected_credit_changes == 0 and row.adjudicated_jury.records_published == 6
    lines = [x for x in render_report(rep, "md").splitlines() if "latent-class fit of solo.json" in x]
    assert len(lines) == 1 and "refused (1 juror voted" in lines[0]


def test_a_record_without_a_majority_is_listed_with_its_votes():
    """Library level: three jurors on 12 records; on A's q1 they split three ways (no majority),
    which the latent-class model, always giving a class, must list as differing."""
    from test_report import GOLD, adj_doc, adj_record, make_eval

    from jury.results.report.build import build_report, render_report

    truth = ["gold_defect", "genuine_error", "format_equivalence", "genuine_error", "gold_defect", "format_equivalence"]
    models = {m: ([fam], {q: ("mismatch", truth[q - 1]) for q in range(1, 7)}) for m, fam in (("A", "openai"), ("B", "xai"))}
    models["A"][1][1] = ("mismatch", "no_majority")
    records = []
    for m, (_fams, outcomes) in models.items():
        for q, (_o, v) in outcomes.items():
            rec = adj_record(m, q, v, models)
            split = ["gold_defect", "genuine_error", "ambiguous"]
            cats = split if v == "no_majority" else [v, v, "genuine_error"]
            rec["jurors"] = ["a", "b", "c"]
            rec["votes"] = [{"juror": j, "family": j, "model": f"x/{j}", "category": c} for j, c in zip("abc", cats)]
            records.append(rec)
    rep = build_report(make_eval(models), GOLD, adj_docs=[("three.json", adj_doc(records, {}))])
    (f,) = rep.adjudication_uncertainty.files
    assert f.fitted and f.without_verdict == 1
    (d,) = [x for x in f.differs if (x.model, x.question_id) == ("A", 1)]
    assert d.published == "no_majority" and d.latent != "no_majority"
    assert [(v.juror, v.category) for v in d.votes] == [("a", "gold_defect"), ("b", "genuine_error"), ("c", "ambiguous")]
    assert sum(d.posterior.values()) == pytest.approx(1)
    assert f"differs from the majority on {len(f.differs)} records" in render_report(rep, "md")
    # the site's section lists the same records, the votes as cast, the posterior at its pointer
    from jury.results.site.uncertainty import uncertainty_section

    data = rep.model_dump(mode="json")
    section = uncertainty_section(data, rep, {"A": "a", "B": "b"}, {q: f"q{q}" for q in range(1, 7)})
    assert section is not None
    (site_file,) = section["files"]
    assert [(x["model"], x["question_id"]) for x in site_file["differs"]] == [(x.model, str(x.question_id)) for x in f.differs]
    (row,) = [x for x in site_file["differs"] if (x["model"], x["question_id"]) == ("A", "1")]
    assert row["votes"] == [("a", "gold defect"), ("b", "genuine error"), ("c", "ambiguous")]
    assert row["page"] == "questions/q1.html" and row["published"] == "no majority"
    assert json.loads(row["posterior"]["value"]) == d.posterior[d.latent]


def test_the_dependence_line_says_when_the_interval_assumption_fails():
    from jury.results.report.model import JurorDependence, JurorPairAgreement, LatentClassFile
    from jury.results.report.render import dependence_line

    pair = JurorPairAgreement(jurors=["ja", "jb"], common=40, observed=0.9, expected=0.69, excess=0.21, z=2.9)
    other = JurorPairAgreement(jurors=["ja", "jc"], common=40, observed=0.7, expected=0.69, excess=0.01, z=0.1)

    def file(p_value):
        dep = JurorDependence(
            resamples=200,
            seed=0,
            min_common=5,
            alpha=0.05,
            statistic=2.9,
            p_value=p_value,
            largest=["ja", "jb"],
            pairs=[other, pair],
        )
        return LatentClassFile(
            path="a.json", content_sha256=None, records=40, fitted=True, refused=None, draws="joint", classes=[],
            priors=None, iterations=None, converged=None, jurors=[], expected_changes=None, dependence=dep,
        )  # fmt: skip

    assert dependence_line(file(0.003)) == (
        "jurors err together? p = 0.003 (largest excess: ja\u2013jb +0.21): the questions + jury interval assumes they do "
        "not; read it as too narrow"
    )
    assert dependence_line(file(0.41)) == "no sign of jurors erring together (p = 0.41)"


@pytest.mark.parametrize("by", [["flag"], ["model", "flag"]])
def test_each_models_adjudicated_accuracy_is_corrected_by_the_reviewers(by, one_wrong, tmp_path, monkeypatch):
    """This module's project: four models, three failures each, judged by
    scripted jurors whose majority credits questions 1 and 2 and not 3. Every record sampled (a
    census: every design weight 1); the two reviewers credit question 1 only. So, by hand:
    Se = 4/4 = 1, Sp = 4/8 = 0.5, and for each model (n = 3, s = 0, F = 3, C = 2)
    t = (2/3 + 0.5 - 1) / 0.5 = 1/3 and the corrected accuracy (0 + 1/3 x 3) / 3 = 1/3 against
    the panel's 2/3. The table shows it as the headline column, the CSV in three columns, and the
    report without the options has no such field. A sample drawn by model corrects each model by
    its own three records, which here give the same Se and Sp."""
    from starlette.testclient import TestClient

    from jury.cli import app

    shutil.copytree(one_wrong, tmp_path / "p", symlinks=True)
    monkeypatch.chdir(tmp_path / "p")
    jury.review_sample("verdicts/sample.json", verdicts=["verdicts/adj.json"], by=by, n=12)
    for who in ("ann", "bob"):
        page = jury.review_app(sample="verdicts/sample.json", reviewer=who)
        client = TestClient(page.app, base_url=f"http://127.0.0.1:8765{page.root}/", follow_redirects=False)
        assert client.get(f"?token={page.token}").status_code == 303
        for n, item in enumerate(page.state.items):
            choice = "both" if int(item.question_id) == 1 else "neither"
            assert client.post(f"item/{n}?csrf={page.state.csrf}", data={"choice": choice}).status_code == 303
        res = runner.invoke(app, ["review", "lock", "-o", f"{who}.json", "--reviewer", who, "--sample", "verdicts/sample.json"])
        assert res.exit_code == 0, res.output

    args = [
        "report",
        "run.jsonl",
        "--verdicts",
        "verdicts/adj.json",
        "--review-sample",
        "verdicts/sample.json",
        "--sample-review",
        "ann.json",
        "--sample-review",
        "bob.json",
    ]
    res = runner.invoke(app, [*args, "-f", "json", "-o", "r.json"])
    assert res.exit_code == 0, res.output
    report = json.loads(Path("r.json").read_text())
    (rate,) = report["corrected"]["rates"]
    assert (rate["sensitivity"]["value"], rate["specificity"]["value"]) == (pytest.approx(1.0), pytest.approx(0.5))
    assert report["corrected"]["pooled"] is ("model" not in by)
    section = {m.pop("model"): m for m in report["corrected"]["models"]}
    assert set(section) == {"gpt-x", "claude-y", "m-one", "m-two"} == {r["model"] for r in report["models"]}
    for row in report["models"]:
        got = row["adjudicated_people"]
        assert got == section[row["model"]]
        assert (got["judged"], got["credited"]) == (3, 2)
        assert got["published"] == pytest.approx(2 / 3) and got["credited_share"] == pytest.approx(1 / 3)
        assert got["value"] == pytest.approx(1 / 3)
        if "model" in by:  # three records per model: most resamples lack a credited one, the interval is refused
            assert got["low"] is None and got["reason"] == "too few resamples had a value for an interval"
        else:
            assert got["low"] is not None and got["low"] <= got["value"] <= got["high"]
    table = runner.invoke(app, args)
    assert table.exit_code == 0, table.output
    assert "corrected by people" in table.stdout and "33.3 % [" in table.stdout
    assert "adjudicated accuracy corrected by people (headline" in table.stdout
    csv = runner.invoke(app, [*args, "-f", "csv"])
    head = csv.stdout.splitlines()[0].split(",")
    assert {"adjudicated_people", "adjudicated_people_low", "adjudicated_people_high"} <= set(head)
    site = runner.invoke(app, [*args, "-f", "html", "-o", "site"])
    assert site.exit_code == 0, site.output
    page = Path("site/index.html").read_text()
    rows = re.findall(r'<tr data-model="([^"]+)"><td>[^<]*</td><td data-value="([^"]+)">[^<]*</td><td data-value="([^"]+)"', page)
    assert {m for m, _, _ in rows} == set(section)
    assert all(float(pub) == pytest.approx(2 / 3) and float(val) == pytest.approx(1 / 3) for _, pub, val in rows)
    plain = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "-f", "json", "-o", "p.json"])
    assert plain.exit_code == 0, plain.output
    assert all("adjudicated_people" not in r for r in json.loads(Path("p.json").read_text())["models"])


def _two_reviewers_credit(questions):
    """ann and bob decide every record of verdicts/sample.json on the review page: credited
    ("both") for the questions named, "neither" otherwise; both lock their files."""
    from starlette.testclient import TestClient

    from jury.cli import app

    for who in ("ann", "bob"):
        page = jury.review_app(sample="verdicts/sample.json", reviewer=who)
        client = TestClient(page.app, base_url=f"http://127.0.0.1:8765{page.root}/", follow_redirects=False)
        assert client.get(f"?token={page.token}").status_code == 303
        for n, item in enumerate(page.state.items):
            choice = "both" if int(item.question_id) in questions else "neither"
            assert client.post(f"item/{n}?csrf={page.state.csrf}", data={"choice": choice}).status_code == 303
        res = runner.invoke(app, ["review", "lock", "-o", f"{who}.json", "--reviewer", who, "--sample", "verdicts/sample.json"])
        assert res.exit_code == 0, res.output


def test_a_sample_whose_strata_changed_since_the_draw_is_refused(one_wrong, tmp_path, monkeypatch):
    """A sample drawn by difficulty: 6 of the 12 records, simple (questions 1 and 3: 8 records)
    4 and moderate (question 2: 4 records) 2, every inclusion probability 1/2. The reviewers credit
    question 1 only; the panel credits 1 and 2. By hand, with the draw's equal weights: Se = 1 (every
    sampled q1 record is credited), Sp = (sampled q3 records) / (sampled q2 and q3 records), and
    each model (n = 3, s = 0, F = 3, C = 2) gets t = clip((2/3 + Sp - 1) / Sp, 0, 1), its corrected
    accuracy t. The sample does not bind the gold: a difficulty edited in place afterwards (question
    3 made challenging; or questions 1 and 2 swapped, the same N_h but sampled records in other
    strata) made the report recompute the strata, and with them the inclusion probabilities,
    from the edited gold: with the seed-0 draw, 1/3 instead of 0 for every model. Now refused in
    one line, by the report and by jury review corrected."""
    from jury.cli import app
    from jury.errors import InputError

    shutil.copytree(one_wrong, tmp_path / "p", symlinks=True)
    monkeypatch.chdir(tmp_path / "p")
    drawn = jury.review_sample("verdicts/sample.json", verdicts=["verdicts/adj.json"], by=["difficulty"], n=6)
    assert [(s.values["difficulty"], s.size, s.sample) for s in drawn.strata] == [("simple", 8, 4), ("moderate", 4, 2)]
    _two_reviewers_credit({1})
    taken = [int(r.question_id) for r in drawn.records]
    sp = taken.count(3) / (taken.count(2) + taken.count(3))
    t = min(1.0, max(0.0, (2 / 3 + sp - 1) / sp))
    args = ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "--review-sample", "verdicts/sample.json"]
    args += ["--sample-review", "ann.json", "--sample-review", "bob.json", "-f", "json"]
    res = runner.invoke(app, [*args, "-o", "r.json"])
    assert res.exit_code == 0, res.output
    got = json.loads(Path("r.json").read_text())["corrected"]["models"]
    assert [m["value"] for m in got] == [pytest.approx(t, abs=1e-12)] * 4

    original = Path("gold.json").read_text()
    for edit in ({3: "challenging"}, {1: "moderate", 2: "simple"}):
        gold = json.loads(original)
        for item in gold:
            item["difficulty"] = edit.get(item["question_id"], item["difficulty"])
        Path("gold.json").write_text(json.dumps(gold))
        res = runner.invoke(app, [*args, "-o", f"r{len(edit)}.json"])
        assert res.exit_code == 1, (edit, res.output)
        assert "its strata are not the ones it was drawn with" in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
        with pytest.raises(InputError, match="draw the sample again"):
            jury.review_corrected("verdicts/sample.json", "ann.json", "bob.json", kind="adjudication")


def test_people_anchor_the_fit(one_wrong, tmp_path, monkeypatch):
    """Two reviewers settle both split records of m-one (questions 1 and 2, where jc alone said
    genuine_error) as genuine errors. They enter the fit as anchors: the file counts 2, and m-one's
    expected adjudicated value, about 2/3 without them (the other jurors credit q1 and q2), falls
    to about 0 (its q3 is a unanimous genuine error)."""
    from starlette.testclient import TestClient

    from jury.cli import app

    shutil.copytree(one_wrong, tmp_path / "p", symlinks=True)
    monkeypatch.chdir(tmp_path / "p")
    before = json.loads(report(tmp_path / "p", "-f", "json"))
    expected = {m["model"]: m["adjudicated_jury"]["expected"] for m in before["models"]}
    assert expected["m-one"] == pytest.approx(2 / 3, abs=0.05)
    for who in ("ann", "bob"):
        page = jury.review_app(verdicts=["verdicts/adj.json"], reviewer=who)
        client = TestClient(page.app, base_url=f"http://127.0.0.1:8765{page.root}/", follow_redirects=False)
        assert client.get(f"?token={page.token}").status_code == 303
        mine = [n for n, it in enumerate(page.state.items) if it.model == "m-one"]
        assert sorted(page.state.items[n].question_id for n in mine) == [1, 2]
        for n in mine:
            assert client.post(f"item/{n}?csrf={page.state.csrf}", data={"choice": "neither"}).status_code == 303
    res = runner.invoke(app, ["review", "lock", "-o", "verdicts/review.json", "--verdicts", "verdicts/adj.json"])
    assert res.exit_code == 0, res.output
    after = json.loads(report(tmp_path / "p", "--review", "verdicts/review.json", "-f", "json"))
    (f,) = after["adjudication_uncertainty"]["files"]
    assert f["fitted"] and f["anchors"] == 2
    got = {m["model"]: m["adjudicated_jury"]["expected"] for m in after["models"]}
    assert got["m-one"] < 0.02
    text = report(tmp_path / "p", "--review", "verdicts/review.json")
    assert "2 anchored by people" in text
    assert before["adjudication_uncertainty"]["files"][0]["anchors"] == 0
    # the check against people: on each of the two records the two truth-following jurors agreed
    # on a class people say is wrong (one wrong pair each) and jc alone said genuine_error; that
    # is the least a wrong majority of three allows, so by hand p = 1
    d = f["people_dependence"]
    assert (d["records"], d["observed"], d["p_value"]) == (2, 2, pytest.approx(1.0))
    assert "checked against people on 2 records, no sign of jurors erring together" in text
    assert before["adjudication_uncertainty"]["files"][0]["people_dependence"] is None


def test_the_site_shows_the_jurys_uncertainty(one_wrong, tmp_path, monkeypatch):
    """The html site's front page carries what the text report shows: per model the published
    and expected adjudicated values with the questions + jury interval, the credit changes and
    the rank interval, each number equal to the JSON report at its pointer; the fit and
    dependence lines; and one row per record the fit would decide otherwise."""
    from html import unescape

    from jury.cli import app

    shutil.copytree(one_wrong, tmp_path / "p", symlinks=True)
    monkeypatch.chdir(tmp_path / "p")
    res = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "-f", "html", "-o", "site"])
    assert res.exit_code == 0, res.output
    data = json.loads(Path("site/report.json").read_text())
    page = Path("site/index.html").read_text()
    section = page.split('<section id="uncertainty">', 1)[1].split("</section>", 1)[0]
    pointers = re.findall(r'data-json="([^"]+)" data-value="([^"]*)"', section)
    assert len(pointers) >= 4 * 6
    for path, value in pointers:
        at = data
        for part in path.split("/")[1:]:
            at = at[int(part)] if isinstance(at, list) else at[part]
        assert json.loads(unescape(value)) == at, path
    for i in range(4):
        for key in ("expected", "low", "high", "expected_credit_changes"):
            assert f"/models/{i}/adjudicated_jury/{key}" in {p for p, _ in pointers}
    (f,) = data["adjudication_uncertainty"]["files"]
    assert section.count("<tr><td>") == len(f["differs"])
    assert "latent-class fit of verdicts/adj.json" in unescape(section)
    assert "jurors err together" in unescape(section) or "no sign of jurors erring together" in unescape(section)


def test_a_fit_that_did_not_converge_is_refused_in_one_line(one_wrong, monkeypatch):
    """dawid_skene stopped after one iteration (max_iter=1) has not converged: the report gives
    no estimates from it, says so in one line and keeps the published verdicts."""
    import functools

    import jury.results.report.latent as latent_report

    monkeypatch.setattr(latent_report, "dawid_skene", functools.partial(latent_report.dawid_skene, max_iter=1))
    rep = json.loads(report(one_wrong, "-f", "json"))
    (f,) = rep["adjudication_uncertainty"]["files"]
    assert not f["fitted"] and f["jurors"] == [] and f["refused"] == "the fit did not converge in 1 iterations"
    assert f"latent-class fit of {f['path']} refused (the fit did not converge in 1 iterations)" in report(one_wrong)


def test_a_verdict_file_of_reviewed_passes_alone_does_not_withhold_the_headline(one_wrong, tmp_path, monkeypatch):
    """A second adjudication file holding only reviewed passes (model m-pass answers every
    question with the gold query; `--review-passes 1`) has no record in the sample's frame, but
    the sample binds it as the report does: the corrected headline is made, not withheld with
    "other adjudication verdict files". By hand, as in the test above: the four failing models
    get t; m-pass (n = 3, s = 3, F = 0) gets (3 + t * 0) / 3 = 1."""
    from jury.cli import app

    shutil.copytree(one_wrong, tmp_path / "p", symlinks=True)
    monkeypatch.chdir(tmp_path / "p")
    gold = {item["question_id"]: item["SQL"] for item in json.loads(Path("gold.json").read_text())}
    Path("passes.jsonl").write_text(
        "".join(
            json.dumps({"model": "m-pass", "question_id": q, "sql": sql, "family": "passfam"}) + "\n" for q, sql in gold.items()
        )
    )

    def pass_juror(req):  # both queries are the gold's: the first one shown is taken as the gold
        from tests.support.fakellm import ballot_reply
        from tests.support.jurytest import blind_answer, user_text

        gold_at = int(re.findall(r"<sql_(\d)>", user_text(req))[0])
        return ballot_reply(blind_answer("genuine_error", gold_at), reasoning="scripted genuine_error")

    with FakeLLMServer() as server:
        for name, _ in FOUR:
            server.script(name, pass_juror)
        panel = write_panel(tmp_path / "p", server.base_url, FOUR)
        res = runner.invoke(
            app, ["adjudicate", "passes.jsonl", "--panel", str(panel), "--review-passes", "1", "-o", "verdicts/passes.json"]
        )
        assert res.exit_code == 0, res.output
    passes = json.loads(Path("verdicts/passes.json").read_text())
    assert passes["records"] and all(r["review_pass"] for r in passes["records"])
    files = ["verdicts/adj.json", "verdicts/passes.json"]
    drawn = jury.review_sample("verdicts/sample.json", verdicts=files, by=["difficulty"], n=6)
    assert [(s.values["difficulty"], s.size) for s in drawn.strata] == [("simple", 8), ("moderate", 4)]
    _two_reviewers_credit({1})
    taken = [int(r.question_id) for r in drawn.records]
    sp = taken.count(3) / (taken.count(2) + taken.count(3))
    t = min(1.0, max(0.0, (2 / 3 + sp - 1) / sp))
    args = ["report", "run.jsonl", "passes.jsonl", "--verdicts", files[0], "--verdicts", files[1]]
    args += ["--review-sample", "verdicts/sample.json", "--sample-review", "ann.json", "--sample-review", "bob.json"]
    res = runner.invoke(app, [*args, "-f", "json", "-o", "r.json"])
    assert res.exit_code == 0, res.output
    corrected = json.loads(Path("r.json").read_text())["corrected"]
    assert corrected.get("models_note") is None, corrected.get("models_note")
    got = {m["model"]: m["value"] for m in corrected["models"]}
    assert got == {**dict.fromkeys(MODELS, pytest.approx(t, abs=1e-12)), "m-pass": pytest.approx(1.0)}
