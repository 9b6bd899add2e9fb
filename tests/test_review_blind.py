"""Two reviewers blind to each other and to the panel: a locked sample served per reviewer
without the panel's votes or verdict or the other reviewer's decisions, each reviewer's
decisions locked in their own review file, and `jury review agreement` (kappa against
sklearn, alpha against the krippendorff package)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from starlette.testclient import TestClient
from typer.testing import CliRunner

import jury
from jury.cli import app
from jury.verdicts.review import load_review
from jury.verdicts.sample import load_sample

runner = CliRunner()
BASE = "http://127.0.0.1:8765"
CHOICES = ("answer_1", "answer_2", "both", "neither", "ambiguous")


def _client(page) -> TestClient:
    client = TestClient(page.app, base_url=f"{BASE}{page.root}/", follow_redirects=False)
    assert client.get(f"?token={page.token}").status_code == 303
    return client


def _all_sampled(files) -> Path:
    frame = len(json.loads(files["adj"].read_text())["records"]) + len(json.loads(files["audit"].read_text())["records"])
    jury.review_sample("verdicts/sample.json", verdicts=[files["adj"]], audit=files["audit"], by=["flag"], n=frame)
    return Path("verdicts/sample.json")


def _decide(page, pick) -> dict:
    """Decide every item of the page with pick(item index, item) -> choice; {item key: choice}."""
    client = _client(page)
    made = {}
    for n, item in enumerate(page.state.items):
        choice = pick(n, item)
        r = client.post(f"item/{n}?csrf={page.state.csrf}", data={"choice": choice, "note": f"NOTE-{page.reviewer}-{n}"})
        assert r.status_code == 303, r.text
        made[(str(item.kind), item.model, item.question_id)] = choice
    return made


def test_two_blind_reviewers_their_own_files_and_their_agreement(reviewable):
    tmp, files = reviewable
    sample = _all_sampled(files)
    drawn = load_sample(sample)
    juror_words = [
        v["reasoning"]
        for f in ("adj", "audit")
        for r in json.loads(files[f].read_text())["records"]
        for v in r["votes"]
        if v.get("reasoning")
    ]
    assert juror_words

    ann = jury.review_app(sample=sample, reviewer="ann")
    assert ann.items == len(drawn.records) >= 4
    ann_made = _decide(ann, lambda n, it: CHOICES[n % 5] if it.kind == "adjudication" else ("defective" if n % 2 else "valid"))
    bob = jury.review_app(sample=sample, reviewer="bob")
    client = _client(bob)
    for n in range(bob.items):  # before and after bob decides: none of ann's decisions, no vote, no verdict
        before = client.get(f"item/{n}").text
        item = bob.state.items[n]
        choice = CHOICES[(n + 1) % 5] if item.kind == "adjudication" else ("defective" if n % 3 else "valid")
        r = client.post(f"item/{n}?csrf={bob.state.csrf}", data={"choice": choice, "note": f"NOTE-bob-{n}"})
        assert r.status_code == 303
        after = client.get(f"item/{n}").text
        assert 'id="jury"' in after and f"NOTE-bob-{n}" in after  # bob's own decision is shown to bob
        for html in (before, after):
            assert "NOTE-ann" not in html and "the jury said" not in html and "<th>juror</th>" not in html
            assert not any(words in html for words in juror_words)
        assert "gpt-x" not in before  # the model's identity only after deciding, as on every review page
    # the same page without the sample shows the votes after deciding: the checks above can fail
    open_page = jury.review_app(verdicts=[files["adj"]], audit=files["audit"], reviewer="carol")
    _decide(open_page, lambda n, it: "both" if it.kind == "adjudication" else "valid")
    shown = _client(open_page).get("item/0").text
    assert "the jury said" in shown and any(words in shown for words in juror_words)

    for who in ("ann", "bob"):
        res = runner.invoke(
            app, ["review", "lock", "-o", f"verdicts/review-{who}.json", "--reviewer", who, "--sample", str(sample)]
        )
        assert res.exit_code == 0, res.output
        doc = load_review(f"verdicts/review-{who}.json")
        assert doc.reviewers == [who] and len(doc.records) == len(drawn.records)
        assert doc.settings["sample_file"] == drawn.content_sha256
        assert {r.jury_verdict for r in doc.records} == {"withheld"}
    a, b = load_review("verdicts/review-ann.json"), load_review("verdicts/review-bob.json")
    assert {(str(r.kind), r.model, r.question_id): r.choice for r in a.records} == ann_made
    # the labels both reviewers gave, straight from the files: category (adjudication), choice (gold)
    key = lambda r: (str(r.kind), r.model, r.question_id)  # noqa: E731
    la = {key(r): r.category if r.kind == "adjudication" else r.choice for r in a.records}
    lb = {key(r): r.category if r.kind == "adjudication" else r.choice for r in b.records}
    items = sorted(la, key=str)
    ya, yb = [la[k] for k in items], [lb[k] for k in items]
    assert ya != yb
    got = jury.review_agreement("verdicts/review-ann.json", "verdicts/review-bob.json")
    assert isinstance(got, jury.ReviewAgreement) and got.n == len(items)
    # answers and gold queries are two scales: a kappa and an alpha each, none pooled
    assert got.kappa["value"] is None and [g["kind"] for g in got.kinds] == ["gold", "adjudication"]
    for g in got.kinds:
        ka, kb = [la[k] for k in items if k[0] == g["kind"]], [lb[k] for k in items if k[0] == g["kind"]]
        codes = {c: i for i, c in enumerate(sorted(set(ka) | set(kb)))}
        assert g["n"] == len(ka)
        if len(codes) < 2:  # the page orders are drawn: one label throughout leaves both undefined
            assert g["kappa"]["value"] is None and g["alpha"]["value"] is None
            continue
        assert g["kappa"]["value"] == pytest.approx(cohen_kappa_score(ka, kb))
        data = np.array([[codes[x] for x in ka], [codes[y] for y in kb]], dtype=float)
        assert g["alpha"]["value"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    assert {(d["kind"], d["model"], d["question_id"]) for d in got.disagreements} == {k for k in items if la[k] != lb[k]}
    lo, hi = got.kappa["interval"]
    assert lo is None or lo <= got.kappa["value"] <= hi
    res = runner.invoke(app, ["review", "agreement", "verdicts/review-ann.json", "verdicts/review-bob.json"])
    assert res.exit_code == 0 and "Cohen's kappa" in res.stdout and "Krippendorff's alpha" in res.stdout, res.output


def test_agreement_refuses_one_reviewer_twice_and_a_tampered_file(reviewable):
    tmp, files = reviewable
    sample = _all_sampled(files)
    _decide(jury.review_app(sample=sample, reviewer="ann"), lambda n, it: "both" if it.kind == "adjudication" else "valid")
    assert runner.invoke(app, ["review", "lock", "-o", "r1.json", "--reviewer", "ann", "--sample", str(sample)]).exit_code == 0
    # a copy (locking the same decisions again holds a new created_at once a second has passed, which
    # a loaded machine makes likely: then it is the same reviewer's second file, refused below as r4)
    Path("r2.json").write_bytes(Path("r1.json").read_bytes())
    res = runner.invoke(app, ["review", "agreement", "r1.json", "r2.json"])
    assert res.exit_code == 1 and "hold the same locked review" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    _decide(jury.review_app(sample=sample, reviewer="ann"), lambda n, it: "ambiguous" if it.kind == "adjudication" else "valid")
    assert runner.invoke(app, ["review", "lock", "-o", "r4.json", "--reviewer", "ann", "--sample", str(sample)]).exit_code == 0
    res = runner.invoke(app, ["review", "agreement", "r1.json", "r4.json"])
    assert res.exit_code == 1 and "both are 'ann'" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    Path("r3.json").write_text(Path("r2.json").read_text().replace('"ann"', '"bob"'))
    res = runner.invoke(app, ["review", "agreement", "r1.json", "r3.json"])
    assert res.exit_code == 1 and "content hash mismatch" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = runner.invoke(app, ["review", "--sample", str(sample), "--verdicts", str(files["adj"])])
    assert res.exit_code == 1 and "--sample serves" in res.stderr


def test_an_adjudication_round_settles_every_disagreement_and_names_who(reviewable):
    tmp, files = reviewable
    sample = _all_sampled(files)
    _decide(jury.review_app(sample=sample, reviewer="ann"), lambda n, it: "both" if it.kind == "adjudication" else "valid")
    _decide(
        jury.review_app(sample=sample, reviewer="bob"), lambda n, it: "ambiguous" if it.kind == "adjudication" else "defective"
    )
    for who in ("ann", "bob"):
        assert (
            runner.invoke(app, ["review", "lock", "-o", f"{who}.json", "--reviewer", who, "--sample", str(sample)]).exit_code == 0
        )
    differ = jury.review_agreement("ann.json", "bob.json").disagreements
    assert differ and all(d["a"] != d["b"] for d in differ)
    rows = ["question_id,model,label,settled_by,note"]
    for i, d in enumerate(differ):
        label = "format_equivalence" if d["kind"] == "adjudication" else "valid"
        rows.append(f"{d['question_id']},{d['model'] or ''},{label},{'cat' if i % 2 else 'ann+bob'},settled {i}")
    Path("round.csv").write_text("\n".join(rows[:-1]) + "\n")  # one disagreement left out: refused
    res = runner.invoke(app, ["review", "settle", "ann.json", "bob.json", "-o", "round.json", "--decisions", "round.csv"])
    assert res.exit_code == 1 and "does not settle" in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output
    assert not Path("round.json").exists()
    Path("round.csv").write_text("\n".join(rows) + "\n")
    res = runner.invoke(app, ["review", "settle", "ann.json", "bob.json", "-o", "round.json", "--decisions", "round.csv"])
    assert res.exit_code == 0, res.output
    doc = json.loads(Path("round.json").read_text())
    assert doc["kind"] == "adjudication round" and doc["content_sha256"].startswith("sha256:")
    assert [r["reviewer"] for r in doc["reviews"]] == ["ann", "bob"]
    assert len(doc["records"]) == len(differ)
    assert [r["settled_by"] for r in doc["records"]] == [["cat"] if i % 2 else ["ann", "bob"] for i in range(len(differ))]
    from jury.errors import VerdictError
    from jury.verdicts.adjudication_round import load_round

    assert load_round("round.json").content_sha256 == doc["content_sha256"]
    again = jury.adjudication_round(
        "round-2.json", "ann.json", "bob.json", settled=[dict(r) for r in csv.DictReader(io.StringIO("\n".join(rows)))]
    )
    assert again.settled == len(differ) and load_round("round-2.json").records == load_round("round.json").records
    Path("bad.json").write_text(Path("round.json").read_text().replace('"cat"', '"eve"', 1))
    with pytest.raises(VerdictError, match="content hash mismatch"):
        load_round("bad.json")
    # the corrected rate needs every disagreement settled: refused without the round, taken with it
    res = runner.invoke(app, ["review", "corrected", str(sample), "ann.json", "bob.json"])
    assert res.exit_code == 1 and "settle it first" in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output
    res = runner.invoke(
        app, ["review", "corrected", str(sample), "ann.json", "bob.json", "--settled", "round.json", "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    gold = [r for r in doc["records"] if r["kind"] == "gold"]
    assert got["sample"] == len([r for r in load_sample(sample).records if r.kind == "gold"]) and gold
    assert got["reviewers"] == ["ann", "bob"]


def test_answers_and_gold_queries_get_a_kappa_each_not_one_pooled(reviewable):
    """Two reviewers on a sample of answers and gold queries: the two kinds are two scales (valid /
    defective; the verdicts), and pooled into one kappa the kind alone agrees: here 0.5 on the gold
    queries and 0.4 on the answers read as a pooled 0.62 (the old output). Each kind gets its own kappa and
    alpha (scikit-learn and the krippendorff package over that kind's items, read from the files);
    the overall kappa and alpha are None, and the table gives a line per kind."""
    _tmp, files = reviewable
    sample = _all_sampled(files)

    def pick(odd: bool, item) -> str:
        if item.kind == "adjudication":
            return "both" if odd else "neither"
        return "defective" if odd else "valid"

    _decide(jury.review_app(sample=sample, reviewer="ann"), lambda n, it: pick(int(it.question_id) % 2 == 1, it))
    _decide(jury.review_app(sample=sample, reviewer="bob"), lambda n, it: pick(int(it.question_id) % 3 == 0, it))
    for who in ("ann", "bob"):
        res = runner.invoke(app, ["review", "lock", "-o", f"{who}.json", "--reviewer", who, "--sample", str(sample)])
        assert res.exit_code == 0, res.output
    got = jury.review_agreement("ann.json", "bob.json")
    labels = {}
    for who in ("ann", "bob"):
        for r in json.loads(Path(f"{who}.json").read_text())["records"]:
            label = r["category"] if r["kind"] == "adjudication" else r["choice"]
            labels.setdefault(r["kind"], {}).setdefault((r["model"], r["question_id"]), {})[who] = label
    assert got.kappa["value"] is None and got.alpha["value"] is None
    assert [g["kind"] for g in got.kinds] == ["gold", "adjudication"]
    for g in got.kinds:
        pairs = list(labels[g["kind"]].values())
        ya, yb = [p["ann"] for p in pairs], [p["bob"] for p in pairs]
        assert g["n"] == len(pairs) and g["agreement"] == pytest.approx(sum(x == y for x, y in zip(ya, yb)) / len(pairs))
        assert g["kappa"]["value"] is not None
        assert g["kappa"]["value"] == pytest.approx(cohen_kappa_score(ya, yb), abs=1e-12)
        codes = {c: i for i, c in enumerate(sorted(set(ya) | set(yb)))}
        data = np.array([[codes[x] for x in ya], [codes[y] for y in yb]], dtype=float)
        assert g["alpha"]["value"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    res = runner.invoke(app, ["review", "agreement", "ann.json", "bob.json"])
    assert res.exit_code == 0, res.output
    for g in got.kinds:
        assert f"  {g['kind']}: {g['n']} items, agreement {g['agreement']:.3f}" in res.stdout.splitlines()
        assert f"    Cohen's kappa {g['kappa']['value']:.3f} " in res.stdout
