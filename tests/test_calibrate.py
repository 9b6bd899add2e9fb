"""`jury calibrate`: agreement figures against independent computations (scikit-learn, the
`krippendorff` package), on a tiny SQLite project with loopback jurors; the CLI; FLEX."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_recall_fscore_support
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import InputError
from jury.execution.store import Store
from jury.inputs.labels import load_labels
from jury.pipeline.jobs import load_and_evaluate
from jury.results.calibration.compute import calibrate
from jury.verdicts.lock import load_locked
from tests.support.badinput import Case, check_case
from tests.support.fakellm import json_reply
from tests.support.helpers import SHARED_BIRD, make_db, write_gold, write_runs
from tests.support.jurytest import says, user_text, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
FIVE = [*FOUR, ("je", "deepseek")]
QUESTION = {"Names of red items?": 1, "Items by price, cheapest first?": 2, "How many items?": 3, "Broken gold": 4}

# (model, question) -> SQL; m-a is an openai model, m-b an anthropic one.
ANSWERS = {
    ("gpt-a", 1): "SELECT name FROM item WHERE colour = 'red'",  # match
    ("gpt-a", 2): "SELECT name FROM item ORDER BY price DESC",  # bird match, strict mismatch
    ("gpt-a", 3): "SELECT 99",  # mismatch
    ("claude-b", 1): "SELECT name FROM item WHERE colour = 'green'",  # mismatch
    ("claude-b", 2): "SELECT name FROM item ORDER BY price",  # match
    ("claude-b", 3): "SELECT count(*) FROM item WHERE price > 1",  # mismatch (3 vs 4)
}
# Human labels per pair: annotators A, B, C (1 = correct) and an optional consensus.
HUMAN = {
    ("gpt-a", 1): ("1", "1", "1", None),
    ("gpt-a", 2): ("1", "0", "1", None),
    ("gpt-a", 3): ("0", "0", "1", "0"),
    ("claude-b", 1): ("1", "1", "0", "0"),  # consensus overrides the majority
    ("claude-b", 2): ("1", "1", "1", "1"),
    ("claude-b", 3): ("1", "1", "0", None),
}
CATEGORY = {("gpt-a", 3): "genuine_error", ("claude-b", 1): "genuine_error", ("claude-b", 3): "gold_defect"}


def reference(pair) -> bool:
    a, b, c, consensus = HUMAN[pair]
    if consensus is not None:
        return consensus == "1"
    return [a, b, c].count("1") >= 2


def label_lines(*, by_sql: set = frozenset()) -> list[dict]:
    lines = []
    for (model, qid), votes in HUMAN.items():
        cand = {"sql": "  " + ANSWERS[(model, qid)].replace(" ", "   ")} if (model, qid) in by_sql else {"model": model}
        for who, v in zip(("A", "B", "C", "consensus"), votes):
            if v is not None:
                lab = {
                    "question_id": qid,
                    **cand,
                    "label": "correct" if v == "1" else "incorrect",
                    "annotator": who,
                    "source": "test",
                }
                credited = CATEGORY.get((model, qid)) in ("gold_defect", "format_equivalence")
                if who in ("consensus", "A") and (model, qid) in CATEGORY and (v == "1") == credited:
                    lab["category"] = CATEGORY[(model, qid)]  # only where it agrees with the label (A's claude-b 1 does not)
                lines.append(lab)
    # a candidate no run has, and one split evenly between two annotators
    lines.append({"question_id": 3, "model": "nobody", "label": "correct", "annotator": "A", "source": "test"})
    lines.append({"question_id": 1, "model": "tie", "label": "correct", "annotator": "A", "source": "test"})
    lines.append({"question_id": 1, "model": "tie", "label": "incorrect", "annotator": "B", "source": "test"})
    return lines


def write_labels(tmp: Path, lines, name="labels.jsonl") -> Path:
    path = tmp / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture
def shop(tmp_path, monkeypatch):
    make_db(tmp_path / "dbs")
    write_gold(tmp_path)
    write_runs(tmp_path, [{"model": m, "question_id": q, "sql": sql} for (m, q), sql in ANSWERS.items()])
    (tmp_path / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def evaluate_shop(tmp: Path):
    with Store(tmp / "store.db") as st:
        from jury.compare.outcomes import Settings

        _gold, records, ev = load_and_evaluate(tmp / "gold.json", [tmp / "run.jsonl"], tmp / "dbs", st, Settings(workers=1))
    return records, ev


def fig(cal, section, subject, metric, reference=None):
    found = [
        f
        for f in cal.figures
        if (f.section, f.subject, f.metric) == (section, subject, metric) and (reference is None or f.reference == reference)
    ]
    assert len(found) == 1, (section, subject, metric, [(f.section, f.subject, f.metric) for f in cal.figures])
    return found[0]


def conf(cal, subject, reference="reference"):
    return next(c for c in cal.confusions if c.subject == subject and c.reference == reference)


def credit(b: bool) -> str:
    return "correct" if b else "incorrect"


# ------------------------------------------------------------------ comparators and annotators


def test_comparator_figures_equal_sklearn(shop):
    labels = load_labels([write_labels(shop, label_lines(by_sql={("claude-b", 3)}))])
    records, ev = evaluate_shop(shop)
    cal = calibrate(labels, evaluation=ev, records=records, resamples=300)
    assert cal.labelled == 7 and cal.ties == 1 and cal.matched == 6  # 6 pairs + 'nobody'; 'tie' left out
    assert cal.unmatched == ["question 3, model 'nobody'"]
    truth = [reference((p.model, p.question_id)) for p in ev.pairs]
    for name in ("bird", "strict", "relaxed", "subset"):
        said = [bool(p.comparator_matches[name]) for p in ev.pairs]
        k = fig(cal, "comparator", name, "kappa")
        assert k.n == 6
        assert k.value == pytest.approx(cohen_kappa_score([credit(t) for t in truth], [credit(s) for s in said]))
        assert fig(cal, "comparator", name, "accuracy").value == pytest.approx(np.mean(np.equal(truth, said)))
        expected = confusion_matrix([credit(t) for t in truth], [credit(s) for s in said], labels=["correct", "incorrect"])
        assert conf(cal, name).matrix == expected.tolist()
    # strict and bird differ on gpt-a question 2 (right rows, wrong order)
    strict = {(p.model, p.question_id): p.comparator_matches["strict"] for p in ev.pairs}
    bird = {(p.model, p.question_id): p.comparator_matches["bird"] for p in ev.pairs}
    assert strict[("gpt-a", 2)] is False and bird[("gpt-a", 2)] is True
    k = fig(cal, "comparator", "strict", "kappa")
    assert k.low is not None and k.low <= k.value <= k.high


def test_annotator_agreement_equals_sklearn_and_krippendorff(shop):
    labels = load_labels([write_labels(shop, label_lines())])
    cal = calibrate(labels, resamples=100)
    keys = list(HUMAN)
    raters = {"A": [HUMAN[k][0] for k in keys], "B": [HUMAN[k][1] for k in keys], "C": [HUMAN[k][2] for k in keys]}
    # the 'nobody' candidate (A only) and the tie (A and B) are rated too
    raters["A"] += ["1", "1"]
    raters["B"] += [None, "0"]
    raters["C"] += [None, None]
    for a, b in (("A", "B"), ("A", "C"), ("B", "C")):
        both = [(x, y) for x, y in zip(raters[a], raters[b]) if x is not None and y is not None]
        f = fig(cal, "annotators", f"{a} ~ {b}", "kappa")
        assert f.n == len(both)
        assert f.value == pytest.approx(cohen_kappa_score([x for x, _ in both], [y for _, y in both]))
    data = np.array([[np.nan if v is None else float(v) for v in raters[r]] for r in "ABC"])
    alpha = fig(cal, "annotators", "all annotators", "alpha")
    assert alpha.value == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    assert alpha.n == 7  # units with at least two ratings
    assert "do not apply" in " ".join(cal.notes)
    assert not cal.anchors_apply and not any(f.section == "anchor" for f in cal.figures)


def test_one_annotator_as_the_reference(shop):
    labels = load_labels([write_labels(shop, label_lines())])
    records, ev = evaluate_shop(shop)
    cal = calibrate(labels, evaluation=ev, records=records, annotator="C", resamples=100)
    truth = [HUMAN[(p.model, p.question_id)][2] == "1" for p in ev.pairs]
    said = [bool(p.comparator_matches["strict"]) for p in ev.pairs]
    assert fig(cal, "comparator", "strict", "kappa").value == pytest.approx(
        cohen_kappa_score([credit(t) for t in truth], [credit(s) for s in said])
    )
    assert cal.reference == "annotator C"
    with pytest.raises(InputError, match="annotator 'Z' labelled nothing"):
        calibrate(labels, annotator="Z")


# ------------------------------------------------------------------ jurors and the panel (loopback)


def by_question(mapping: dict[int, str]):
    """A juror reaching mapping[question] on each question (in either answer order)."""

    def respond(request):
        q = QUESTION[re.search(r"<question>\n(.*?)\n</question>", user_text(request), re.S).group(1)]
        return says(mapping[q])(request)

    return respond


def test_juror_and_panel_figures_equal_independent_computations(shop, fake_llm):
    fake_llm.script("ja", by_question({1: "gold_defect", 2: "format_equivalence", 3: "gold_defect"}))
    fake_llm.script("jb", by_question({1: "genuine_error", 2: "format_equivalence", 3: "genuine_error"}))
    fake_llm.script("jc", by_question({1: "genuine_error", 2: "genuine_error", 3: "gold_defect"}))
    fake_llm.script("jd", by_question({1: "gold_defect", 2: "format_equivalence", 3: "genuine_error"}))
    panel = write_panel(shop, fake_llm.base_url, FOUR)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    vpath = next((shop / "verdicts").glob("adjudication-*.json"))
    doc = load_locked(vpath)
    labels = load_labels([write_labels(shop, label_lines())])
    records, ev = evaluate_shop(shop)
    cal = calibrate(labels, evaluation=ev, records=records, adjudications=[(vpath, doc)], resamples=200)

    recs = {(r.model, r.question_id): r for r in doc.records}
    outcome = {(p.model, p.question_id): p.outcome for p in ev.pairs}
    assert {k for k, o in outcome.items() if o == "match"} == {("gpt-a", 1), ("claude-b", 2)}
    # the panel: a verdict where there is one, a strict match the jury never saw is credited
    panel_truth, panel_said = [], []
    for pair in HUMAN:
        panel_truth.append(reference(pair))
        panel_said.append(recs[pair].credited if pair in recs else outcome[pair] == "match")
    k = fig(cal, "panel", "panel", "kappa")
    assert k.n == 6
    assert k.value == pytest.approx(cohen_kappa_score([credit(t) for t in panel_truth], [credit(s) for s in panel_said]))
    assert (
        conf(cal, "panel").matrix
        == confusion_matrix(
            [credit(t) for t in panel_truth], [credit(s) for s in panel_said], labels=["correct", "incorrect"]
        ).tolist()
    )
    assert any("never saw them" in n for n in cal.notes)
    # precision/recall of 'credited' on the items strict matching failed
    failed = [i for i, pair in enumerate(HUMAN) if outcome[pair] != "match"]
    p, r, _, _ = precision_recall_fscore_support(
        [panel_truth[i] for i in failed], [panel_said[i] for i in failed], average="binary", zero_division=np.nan
    )
    assert fig(cal, "panel", "panel", "precision (credited)").value == pytest.approx(p, nan_ok=True)
    assert fig(cal, "panel", "panel", "recall (credited)").value == pytest.approx(r)
    # per juror: only over the pairs that juror voted on
    for juror in ("ja", "jb", "jc", "jd"):
        votes = [(pair, v.category) for pair, rec in recs.items() for v in rec.votes if v.juror == juror and not v.abstained]
        truth = [credit(reference(pair)) for pair, _ in votes]
        said = [credit(cat in ("gold_defect", "format_equivalence")) for _, cat in votes]
        f = fig(cal, "juror", f"juror {juror}", "kappa")
        assert f.n == len(votes) > 0
        if len(set(truth)) > 1 or len(set(said)) > 1:
            assert f.value == pytest.approx(cohen_kappa_score(truth, said))
        cats = [(CATEGORY[pair], cat) for pair, cat in votes if pair in CATEGORY]
        ca = fig(cal, "juror", f"juror {juror}", "category_accuracy")
        assert ca.n == len(cats) and ca.value == pytest.approx(np.mean([a == b for a, b in cats]))
        ck = fig(cal, "juror", f"juror {juror}", "category_kappa")
        if len({a for a, _ in cats} | {b for _, b in cats}) > 1:
            assert ck.value == pytest.approx(cohen_kappa_score([a for a, _ in cats], [b for _, b in cats]))
    # without the runs: only the judged pairs, by the verdicts alone
    alone = calibrate(labels, adjudications=[(vpath, doc)], resamples=100)
    judged = [pair for pair in HUMAN if pair in recs]
    k = fig(alone, "panel", "panel", "kappa")
    assert k.n == len(judged) == 3  # gpt-a question 2 is a near miss: never judged
    truth, said = [credit(reference(p)) for p in judged], [credit(recs[p].credited) for p in judged]
    assert k.value == pytest.approx(cohen_kappa_score(truth, said))
    assert any("Without --runs" in n for n in alone.notes)
    assert not any(f.section == "comparator" for f in alone.figures)
    # the openai juror never judged the openai model
    assert all(v.juror != "ja" for pair, rec in recs.items() if pair[0] == "gpt-a" for v in rec.votes)


def test_a_verdict_for_another_answer_is_refused(shop, fake_llm):
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    panel = write_panel(shop, fake_llm.base_url, FOUR)
    assert runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel)], catch_exceptions=False).exit_code == 0
    vpath = next((shop / "verdicts").glob("adjudication-*.json"))
    changed = dict(ANSWERS)
    changed[("gpt-a", 3)] = "SELECT 98"
    write_runs(shop, [{"model": m, "question_id": q, "sql": sql} for (m, q), sql in changed.items()])
    labels = load_labels([write_labels(shop, label_lines())])
    records, ev = evaluate_shop(shop)
    with pytest.raises(InputError, match="the verdict judged another answer"):
        calibrate(labels, evaluation=ev, records=records, adjudications=[(vpath, load_locked(vpath))])


# ------------------------------------------------------------------ audits


def audit_juror(defective: set[int]):
    def respond(req):
        q = QUESTION[re.search(r"<question>\n(.*?)\n</question>", user_text(req), re.S).group(1)]
        bad = q in defective
        return json_reply(
            {"reasoning": "scripted", "verdict": "defective" if bad else "valid", "defect_type": "other" if bad else None}
        )

    return respond


def test_audit_precision_recall_f1_per_source_and_union(shop, fake_llm):
    for name, flagged in zip(("ja", "jb", "jc", "jd", "je"), ({1, 2}, {1}, {1, 3}, {2}, {1, 2, 3})):
        fake_llm.script(name, audit_juror(flagged))
    panel = write_panel(shop, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", str(panel)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    apath = next((shop / "verdicts").glob("audit-*.json"))
    doc = load_locked(apath)
    sources = {"s1": {1: True, 2: False, 3: False, 4: True}, "s2": {1: False, 2: True, 3: False}}
    lines = [
        {"question_id": q, "gold_defective": d, "annotator": "x", "source": s} for s, qs in sources.items() for q, d in qs.items()
    ]
    labels = load_labels([write_labels(shop, lines, "gold-labels.jsonl")])
    cal = calibrate(labels, audits=[(apath, doc)])
    union = {q: sources["s1"].get(q, False) or sources["s2"].get(q, False) for q in sources["s1"] | sources["s2"]}
    subjects = {"panel": {r.question_id: r.flagged for r in doc.records if r.decided}}
    for r in doc.records:
        for v in r.votes:
            if not v.abstained:
                subjects.setdefault(f"juror {v.juror}", {})[r.question_id] = v.category == "defective"
    assert len(subjects) == 6
    for subject, flags in subjects.items():
        for ref_name, ref in (("s1", sources["s1"]), ("s2", sources["s2"]), ("union of sources", union)):
            common = [q for q in flags if q in ref]
            truth, said = [ref[q] for q in common], [flags[q] for q in common]
            p, r, f, _ = precision_recall_fscore_support(truth, said, average="binary", zero_division=np.nan)
            for metric, value in (("precision", p), ("recall", r), ("f1", f)):
                got = fig(cal, "audit", subject, f"{metric} (flagged)", ref_name)
                assert got.value == pytest.approx(value, nan_ok=True) if got.value is not None else np.isnan(value)
            assert fig(cal, "audit", subject, "f1 (flagged)", ref_name).n == len(common)


# ------------------------------------------------------------------ the command


def test_cli_prints_tables_and_writes_every_file(shop):
    write_labels(shop, label_lines())
    res = runner.invoke(
        app,
        [
            "calibrate",
            "--labels",
            "labels.jsonl",
            "--runs",
            "run.jsonl",
            "--json",
            "c.json",
            "--csv",
            "c.csv",
            "--markdown",
            "c.md",
        ],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    assert "Agreement with the reference label" in res.output and "strict" in res.output
    data = json.loads((shop / "c.json").read_text())
    assert data["labelled"] == 7 and data["ties"] == 1
    rows = list(csv.DictReader(io.StringIO((shop / "c.csv").read_text())))
    assert list(rows[0]) == ["section", "subject", "reference", "metric", "value", "low", "high", "n"]
    assert len(rows) == len(data["figures"]) and all(row["n"] != "" for row in rows)
    strict = next(r for r in rows if (r["subject"], r["metric"]) == ("strict", "kappa"))
    assert float(strict["value"]) == pytest.approx(
        next(f["value"] for f in data["figures"] if f["subject"] == "strict" and f["metric"] == "kappa")
    )
    md = (shop / "c.md").read_text()
    assert "## Agreement with the reference label" in md and "| strict |" in md


CASES = [
    Case("labels-missing", ["calibrate", "--labels", "nope.jsonl"], "nope.jsonl"),
    Case(
        "labels-bad-line",
        ["calibrate", "--labels", "bad.jsonl"],
        "bad.jsonl:2",
        setup=lambda t: (t / "bad.jsonl").write_text(
            '{"question_id": 1, "model": "m", "label": "correct", "annotator": "A", "source": "s"}\n'
            '{"question_id": 1, "model": "m", "label": "maybe", "annotator": "B", "source": "s"}\n'
        ),
    ),
    Case(
        "labels-not-a-label",
        ["calibrate", "--labels", "bad.jsonl"],
        "not a label",
        setup=lambda t: (t / "bad.jsonl").write_text('{"question_id": 1}\n'),
    ),
    Case(
        "output-is-input",
        ["calibrate", "--labels", "l.jsonl", "--csv", "l.jsonl"],
        "an output never overwrites it",
        setup=lambda t: (t / "l.jsonl").write_text(
            '{"question_id": 1, "model": "m", "label": "correct", "annotator": "A", "source": "s"}\n'
        ),
        unchanged=("l.jsonl",),
    ),
    Case(
        "verdicts-not-locked",
        ["calibrate", "--labels", "l.jsonl", "--verdicts", "gold.json"],
        "gold.json",
        setup=lambda t: (t / "l.jsonl").write_text(
            '{"question_id": 1, "model": "m", "label": "correct", "annotator": "A", "source": "s"}\n'
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case, tmp_path):
    check_case(case, tmp_path)


# ------------------------------------------------------------------ FLEX's 200 expert-labelled pairs

FLEX = SHARED_BIRD.parent / "labels" / "flex" / "results" / "agreement"


def _flex_importer_ready() -> bool:
    try:
        from jury.inputs import label_import  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not FLEX.is_dir(), reason="../shared FLEX labels not present")
@pytest.mark.skipif(
    not _flex_importer_ready(), reason="`jury labels import flex-agreement` (jury/inputs/label_import) not yet there"
)
def test_flex_agreement_reproduces_the_published_execution_match_kappa(tmp_path):
    files = [str(FLEX / "fn.jsonl"), str(FLEX / "fp.jsonl"), str(FLEX / "experts_agreement_200.csv")]
    imp = subprocess.run(
        [shutil.which("jury") or "jury", "labels", "import", "flex-agreement", *files, "--gold", str(SHARED_BIRD / "dev.json"),
         "-o", "labels.jsonl", "--runs-out", "run.jsonl", "--gold-out", "gold.jsonl"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert imp.returncode == 0, imp.stderr
    res = runner.invoke(
        app,
        ["calibrate", "--labels", str(tmp_path / "labels.jsonl"), "--runs", str(tmp_path / "run.jsonl"),
         "--gold", str(tmp_path / "gold.jsonl"), "--store", str(tmp_path / "store.db"), "--json", str(tmp_path / "c.json")],
        catch_exceptions=False,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    cal = json.loads((tmp_path / "c.json").read_text())
    figures = {(f["section"], f["subject"], f["metric"]): f for f in cal["figures"]}
    strict = figures[("comparator", "strict", "kappa")]
    assert strict["n"] == 200 and round(strict["value"], 2) == 0.62
    assert figures[("anchor", "strict (jury, same items)", "kappa")]["value"] == pytest.approx(strict["value"])
    assert figures[("anchor", "execution match (published)", "kappa")]["value"] == 0.62
    pairwise = sorted(round(f["value"], 2) for (s, _, m), f in figures.items() if s == "annotators" and m == "kappa")
    assert pairwise == [0.77, 0.79, 0.82]
    assert cal["anchors_apply"] is True
