"""Recorded judges: judgment files (format, schema, loader), `jury labels import flex-judge`,
and `jury calibrate --judgments` against independent computations and FLEX's published kappa."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import InputError
from jury.inputs.io import load_runs
from jury.inputs.judgments import JUDGMENTS_SCHEMA_FILENAME, judgments_schema, load_judgments, parse_judgment
from jury.inputs.labels import load_labels
from jury.results.calibration.compute import calibrate
from tests.support.badinput import Case, check_case
from tests.support.helpers import REPO, SHARED_BIRD, make_db, write_gold, write_runs

runner = CliRunner()

ANSWERS = {
    ("gpt-a", 1): "SELECT name FROM item WHERE colour = 'red'",  # match
    ("gpt-a", 2): "SELECT name FROM item ORDER BY price DESC",
    ("gpt-a", 3): "SELECT 99",
    ("claude-b", 1): "SELECT name FROM item WHERE colour = 'green'",
    ("claude-b", 2): "SELECT name FROM item ORDER BY price",  # match
    ("claude-b", 3): "SELECT count(*) FROM item WHERE price > 1",
}
TRUTH = {("gpt-a", 1): 1, ("gpt-a", 2): 1, ("gpt-a", 3): 0, ("claude-b", 1): 0, ("claude-b", 2): 1, ("claude-b", 3): 1}
# A recorded judge's verdicts: (label, category, candidate_position)
JUDGE = {
    ("gpt-a", 1): ("correct", None, 1),
    ("gpt-a", 2): ("correct", "gold_defect", 1),
    ("gpt-a", 3): ("correct", "gold_defect", 1),  # wrong, and picks the first-shown answer
    ("claude-b", 1): ("incorrect", "genuine_error", 2),  # the gold, shown first
    ("claude-b", 2): ("incorrect", "genuine_error", 1),  # wrong: picks the gold, shown second
    ("claude-b", 3): ("correct", "gold_defect", 1),
}


def write_jsonl(path: Path, lines) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def human_labels() -> list[dict]:
    return [
        {"question_id": q, "model": m, "label": "correct" if t else "incorrect", "annotator": "consensus", "source": "test"}
        for (m, q), t in TRUTH.items()
    ]


def judgments(*, by_sql=frozenset()) -> list[dict]:
    out = []
    for (m, q), (label, cat, pos) in JUDGE.items():
        cand = {"sql": "  " + ANSWERS[(m, q)]} if (m, q) in by_sql else {"model": m}
        line = {"question_id": q, **cand, "judge": "other-tool gpt-z", "label": label, "candidate_position": pos}
        if cat:
            line["category"] = cat
        out.append(line)
    out.append({"question_id": 3, "model": "nobody", "judge": "other-tool gpt-z", "label": "correct"})
    return out


@pytest.fixture
def shop(tmp_path, monkeypatch):
    make_db(tmp_path / "dbs")
    write_gold(tmp_path)
    write_runs(tmp_path, [{"model": m, "question_id": q, "sql": sql} for (m, q), sql in ANSWERS.items()])
    (tmp_path / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    write_jsonl(tmp_path / "labels.jsonl", human_labels())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _norm(sql: str | None) -> str:
    return " ".join((sql or "").split())


def fig(cal, subject, metric):
    found = [f for f in cal.figures if (f.section, f.subject, f.metric) == ("judge", subject, metric)]
    assert len(found) == 1, [(f.section, f.subject, f.metric) for f in cal.figures]
    return found[0]


@pytest.mark.parametrize("by_sql", [frozenset(), frozenset({("gpt-a", 3), ("claude-b", 1)})], ids=["by-model", "by-sql"])
def test_a_recorded_judge_is_measured_like_a_juror_in_its_own_section(shop, by_sql):
    judged = load_judgments([write_jsonl(shop / "judge.jsonl", judgments(by_sql=by_sql))])
    records = load_runs([shop / "run.jsonl"])  # name the model behind a judgment that gives only the SQL
    cal = calibrate(load_labels([shop / "labels.jsonl"]), records=records, judgments=judged)
    truth = [TRUTH[k] for k in JUDGE]
    said = [int(JUDGE[k][0] == "correct") for k in JUDGE]
    subject = "judge other-tool gpt-z"
    assert fig(cal, subject, "accuracy").value == pytest.approx(sum(t == s for t, s in zip(truth, said)) / 6)
    assert fig(cal, subject, "kappa").value == pytest.approx(cohen_kappa_score(truth, said))
    assert fig(cal, subject, "kappa").n == 6
    matrix = next(c for c in cal.confusions if c.subject == subject).matrix
    assert (
        matrix
        == confusion_matrix(["c" if t else "i" for t in truth], ["c" if s else "i" for s in said], labels=["c", "i"]).tolist()
    )
    # picks of a single answer: gold_defect = the candidate, genuine_error = the gold
    picks_first = [(pos == 1) == (cat == "gold_defect") for label, cat, pos in JUDGE.values() if cat]
    share = fig(cal, subject, "first_pick_share")
    assert (share.value, share.n) == (pytest.approx(sum(picks_first) / len(picks_first)), len(picks_first))
    assert fig(cal, subject, "first_pick_p").value == pytest.approx(binomtest(sum(picks_first), len(picks_first)).pvalue)
    # a judge is never an annotator, and its unmatched judgment is said
    assert cal.annotators == ["consensus"] and not [f for f in cal.figures if f.section == "annotators"]
    assert any("1 judgments of other-tool gpt-z" in n for n in cal.notes)


def test_calibrate_command_reports_judges_with_precision_on_strict_failures(shop):
    write_jsonl(shop / "judge.jsonl", judgments())
    res = runner.invoke(
        app,
        ["calibrate", "--labels", "labels.jsonl", "--runs", "run.jsonl", "--judgments", "judge.jsonl", "--json", "c.json"],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    assert "Recorded judges" in res.output
    figures = {(f["section"], f["subject"], f["metric"]): f for f in json.loads((shop / "c.json").read_text())["figures"]}
    # strict failures: everything but (gpt-a, 1) and (claude-b, 2); credited by the judge: gpt-a 2, 3; claude-b 3
    failures = [k for k in JUDGE if k not in {("gpt-a", 1), ("claude-b", 2)}]
    credited = [k for k in failures if JUDGE[k][0] == "correct"]
    right = [k for k in credited if TRUTH[k]]
    precision = figures[("judge", "judge other-tool gpt-z", "precision (credited)")]
    recall = figures[("judge", "judge other-tool gpt-z", "recall (credited)")]
    assert (precision["value"], precision["n"]) == (pytest.approx(len(right) / len(credited)), len(credited))
    assert recall["value"] == pytest.approx(len(right) / sum(TRUTH[k] for k in failures))


CASES = [
    Case(
        "a-label-given-as-judgments",
        ["calibrate", "--labels", "l.jsonl", "--judgments", "l.jsonl"],
        "l.jsonl:1: not a judgment: a judgment names its `judge` (a human label? pass it with --labels)",
        setup=lambda t: write_jsonl(t / "l.jsonl", human_labels()[:1]),
    ),
    Case(
        "judged-twice",
        ["calibrate", "--labels", "l.jsonl", "--judgments", "j.jsonl"],
        "j.jsonl:2: judge 'x' judged question 1 (model 'm') twice (first at",
        setup=lambda t: (
            write_jsonl(t / "l.jsonl", human_labels()[:1]),
            write_jsonl(
                t / "j.jsonl", [{"question_id": 1, "model": "m", "judge": "x", "label": v} for v in ("correct", "incorrect")]
            ),
        ),
    ),
    Case(
        "bad-label",
        ["calibrate", "--labels", "l.jsonl", "--judgments", "j.jsonl"],
        "j.jsonl:1: label",
        setup=lambda t: (
            write_jsonl(t / "l.jsonl", human_labels()[:1]),
            write_jsonl(t / "j.jsonl", [{"question_id": 1, "model": "m", "judge": "x", "label": True}]),
        ),
    ),
]


def _judged(**fields):
    base = {"question_id": 1, "model": "m", "judge": "x", "label": "correct"}
    return lambda t: (write_jsonl(t / "l.jsonl", human_labels()[:1]), write_jsonl(t / "j.jsonl", [base | fields]))


CASES += [
    Case(f"position-{name}", ["calibrate", "--labels", "l.jsonl", "--judgments", "j.jsonl"], f"j.jsonl:1: candidate_position{said}", _judged(candidate_position=value))
    for name, value, said in (
        ("true", True, ": Value error, candidate_position must be the integer 1 or 2, not bool True"),
        ("false", False, ": Value error, candidate_position must be the integer 1 or 2, not bool False"),
        ("float", 1.0, ": Value error, candidate_position must be the integer 1 or 2, not float 1.0"),
        ("string", "2", ": Value error, candidate_position must be the integer 1 or 2, not str '2'"),
        ("three", 3, ": Input should be 1 or 2"),
    )
] + [
    Case(f"label-{label}-category-{category}", ["calibrate", "--labels", "l.jsonl", "--judgments", "j.jsonl"], f"j.jsonl:1: record: Value error, label '{label}' contradicts category '{category}'", _judged(label=label, category=category))
    for label, category in (("incorrect", "gold_defect"), ("incorrect", "format_equivalence"), ("correct", "genuine_error"))
] + [
    Case(
        "question-id-a-float",
        ["calibrate", "--labels", "l.jsonl", "--judgments", "j.jsonl"],
        "j.jsonl:1: question_id: Value error, question_id must be an integer or a string, not a number with a decimal point (1.0)",
        _judged(question_id=1.0),
    ),
    Case(
        "human-label-incorrect-gold-defect",
        ["calibrate", "--labels", "l.jsonl"],
        "l.jsonl:1: record: Value error, label 'incorrect' contradicts category 'gold_defect'",
        lambda t: write_jsonl(t / "l.jsonl", [{"question_id": 1, "model": "m", "label": "incorrect", "category": "gold_defect", "annotator": "A", "source": "s"}]),
    )
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_judgment_files_are_one_line_errors(case, tmp_path):
    check_case(case, tmp_path)


@pytest.mark.parametrize(
    ("obj", "ok"),
    [
        ({"question_id": 1, "model": "m", "judge": "j", "label": "correct"}, True),
        ({"question_id": 1, "sql": "SELECT 1", "judge": "j", "label": "incorrect", "category": "genuine_error", "candidate_position": 2}, True),
        ({"question_id": 1, "judge": "j", "label": "correct"}, False),  # no candidate
        ({"question_id": 1, "model": "m", "judge": "j", "label": "correct", "category": "no_majority"}, False),
        ({"question_id": 1, "model": "m", "judge": "j", "label": "correct", "candidate_position": 3}, False),
        ({"question_id": 1, "model": "m", "judge": "j", "label": "correct", "annotator": "A"}, False),
        ({"question_id": 1, "model": "m", "judge": "j", "label": "correct", "candidate_position": True}, False),
        ({"question_id": 1, "model": "m", "judge": "j", "label": "incorrect", "category": "gold_defect"}, False),
        ({"question_id": 1, "model": "m", "judge": "j", "label": "correct", "category": "genuine_error"}, False),
        ({"question_id": 1, "model": "m", "judge": "j", "label": "correct", "category": "ambiguous"}, True),
        ({"question_id": 1, "model": "m", "judge": "j", "label": "incorrect", "category": "ambiguous"}, True),
        ({"question_id": 1, "model": "m", "judge": "j", "label": "correct", "category": "format_equivalence"}, True),
    ],
)  # fmt: skip
def test_the_committed_schema_is_generated_and_agrees_with_the_loader(obj, ok):
    committed = json.loads((REPO / "verdicts" / "schema" / JUDGMENTS_SCHEMA_FILENAME).read_text())
    assert committed == judgments_schema(), "regenerate: see jury.inputs.judgments.judgments_schema"
    valid = jsonschema.Draft202012Validator(committed).is_valid(obj)
    try:
        parse_judgment(obj, "j.jsonl:1")
        loaded = True
    except InputError:
        loaded = False
    assert valid is ok and loaded is ok


FLEX = SHARED_BIRD.parent / "labels" / "flex" / "results" / "agreement"


@pytest.mark.skipif(not FLEX.is_dir(), reason="../shared FLEX labels not present")
def test_flex_judge_reproduces_its_published_kappa_beside_the_experts(tmp_path, monkeypatch):
    """FLEX's own GPT-4o judge on its 200 expert-labelled pairs: the paper reports kappa 0.87."""
    monkeypatch.chdir(tmp_path)
    gold = str(SHARED_BIRD / "dev.json")
    agreement = [str(FLEX / n) for n in ("fn.jsonl", "fp.jsonl", "experts_agreement_200.csv")]
    res = runner.invoke(app, ["labels", "import", "flex-agreement", *agreement, "--gold", gold, "-o", "labels.jsonl"])
    assert res.exit_code == 0, res.output
    judged = [str(FLEX / n) for n in ("fn_gpt-4o-2024-08-06.jsonl", "fp_gpt-4o-2024-08-06.jsonl")]
    res = runner.invoke(app, ["labels", "import", "flex-judge", *judged, "--gold", gold, "-o", "judge.jsonl"])
    assert res.exit_code == 0, res.output
    # FLEX's two judge variants are two judges: shown the execution results (its failed pairs) or not (its passed pairs)
    out = " ".join(res.output.split())
    assert "100 judgments by the recorded judge FLEX gpt-4o-2024-08-06 " in out
    assert "100 judgments by the recorded judge FLEX gpt-4o-2024-08-06-no-result " in out
    records = load_judgments([tmp_path / "judge.jsonl"])
    assert len(records) == 200 and sum(r.credited for r in records) == 107
    variants = {r.judge: r.pooled_as for r in records}
    assert variants == {"FLEX gpt-4o-2024-08-06": None, "FLEX gpt-4o-2024-08-06-no-result": "FLEX gpt-4o-2024-08-06"}
    assert all(("without execution results" in (r.note or "")) == r.judge.endswith("-no-result") for r in records)
    labels = load_labels([tmp_path / "labels.jsonl"])
    cal = calibrate(labels, judgments=records)
    # FLEX's published 0.87 pools both (its cohen_kappa_score.py concatenates the fp and fn files): so does the pool
    pooled = "judge FLEX gpt-4o-2024-08-06 (pooled with FLEX gpt-4o-2024-08-06-no-result)"
    kappa = fig(cal, pooled, "kappa")
    assert kappa.n == 200 and round(kappa.value, 2) == 0.87
    by_judge = {(r.question_id, r.model, _norm(r.sql)): r for r in records}
    annotators = {lab.annotator for lab in labels.adjudication}
    consensus = [lab for lab in labels.adjudication if lab.annotator == "consensus"]
    assert len(consensus) == 200, annotators
    truth = {(lab.question_id, lab.model, _norm(lab.sql)): lab.label == "correct" for lab in consensus}
    for judge in variants:  # each variant apart, against scikit-learn on its own 100 pairs
        keys = [k for k, r in by_judge.items() if r.judge == judge]
        expected = cohen_kappa_score([truth[k] for k in keys], [by_judge[k].credited for k in keys])
        own = fig(cal, f"judge {judge}", "kappa")
        assert own.n == 100 and own.value == pytest.approx(expected)
    anchors = {f.subject: f.value for f in cal.figures if f.section == "anchor"}
    assert anchors[f"{pooled} (recorded, same items)"] == pytest.approx(kappa.value)
    assert anchors["FLEX with GPT-4o (published)"] == 0.87


# ------------------------------------------------------------------ a recorded judge on a panel

PANEL_JURORS = [("ja", "xai"), ("jb", "deepseek")]  # with the recorded judge (google): 3 families apart from both models


def recorded_panel(project, base_url, judge_file="judge.jsonl", extra=""):
    from tests.support.jurytest import write_panel

    panel = write_panel(project, base_url, PANEL_JURORS)
    panel.write_text(
        panel.read_text()
        + f'\n[[jurors]]\nname = "flexjudge"\nmodel = "recorded/other-tool gpt-z"\nfamily = "google"\nrecorded = "{judge_file}"\n{extra}'
    )
    return panel


def test_a_recorded_judge_sits_on_a_panel_beside_live_jurors(project, fake_llm):
    """Its votes come from its file through each ballot's drawn order; a ballot it has no
    judgment for abstains; the file's content binds its votes; verify accepts the result."""
    from jury.verdicts.lock import load_locked
    from jury.verdicts.verify import verify_file
    from tests.support.jurytest import FAILURES, says

    for name, _ in PANEL_JURORS:
        fake_llm.script(name, says("genuine_error"))
    said = {(m, 1): ("correct", "gold_defect") for m in ("gpt-x", "claude-y")}
    said[("gpt-x", 2)] = ("correct", None)  # no category: counts as format equivalence
    said[("claude-y", 2)] = ("incorrect", None)
    lines = [{"question_id": q, "model": m, "judge": "other-tool gpt-z", "label": lab, "reasoning": f"recorded {m} {q}"}
             | ({"category": cat} if cat else {}) for (m, q), (lab, cat) in said.items()]  # fmt: skip
    lines.append(
        {"question_id": 3, "sql": FAILURES[3], "judge": "other-tool gpt-z", "label": "incorrect"}
    )  # by SQL, for both models
    write_jsonl(project / "judge.jsonl", lines)
    panel = recorded_panel(project, fake_llm.base_url)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "adj.json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    doc = load_locked(project / "adj.json")
    votes = {(r.model, r.question_id): next(v for v in r.votes if v.juror == "flexjudge") for r in doc.records}
    calls = len(fake_llm.requests)
    assert len(votes) == 6 and {r["model"] for r in fake_llm.requests} == {"ja", "jb"}  # the recorded judge called nothing
    expected = {("gpt-x", 1): "gold_defect", ("claude-y", 1): "gold_defect", ("gpt-x", 2): "format_equivalence"}
    expected |= {("claude-y", 2): "genuine_error", ("gpt-x", 3): "genuine_error", ("claude-y", 3): "genuine_error"}
    assert {k: v.category for k, v in votes.items()} == expected
    assert votes[("gpt-x", 1)].reasoning == "recorded gpt-x 1" and votes[("gpt-x", 1)].model == "recorded/other-tool gpt-z"
    for v in votes.values():  # the raw answer follows each ballot's drawn order
        if v.category == "gold_defect":
            assert v.raw_verdict == ("answer_2" if v.order == "gold_first" else "answer_1")
    assert verify_file(project / "adj.json").ok
    # a changed judgment file is another juror: its votes are asked again, the live jurors' reused
    lines[0]["label"] = "incorrect"
    lines[0].pop("category")
    write_jsonl(project / "judge.jsonl", lines)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "adj2.json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    again = load_locked(project / "adj2.json")
    changed = next(
        v for r in again.records if (r.model, r.question_id) == ("gpt-x", 1) for v in r.votes if v.juror == "flexjudge"
    )
    assert changed.category == "genuine_error" and len(fake_llm.requests) == calls


def test_a_ballot_the_recorded_judge_never_judged_is_a_stored_abstention(project, fake_llm):
    from jury.verdicts.lock import load_locked
    from tests.support.jurytest import says

    for name, _ in PANEL_JURORS:
        fake_llm.script(name, says("format_equivalence"))
    write_jsonl(project / "judge.jsonl", [{"question_id": 1, "model": "gpt-x", "judge": "other-tool gpt-z", "label": "correct"}])
    panel = recorded_panel(project, fake_llm.base_url)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "adj.json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    votes = [v for r in load_locked(project / "adj.json").records for v in r.votes if v.juror == "flexjudge"]
    assert sum(not v.abstained for v in votes) == 1
    assert {v.reason for v in votes if v.abstained} == {"the recorded judge 'other-tool gpt-z' has no judgment of this answer"}


@pytest.mark.parametrize(
    ("judge_file", "extra", "message"),
    [
        ("nope.jsonl", "", "recorded = 'nope.jsonl'"),
        ("judge.jsonl", 'judge = "someone else"\n', "judge 'someone else' judged nothing in"),
        ("two.jsonl", "", "holds 2 judges ('a', 'b'); say which with judge"),
    ],
)
def test_a_recorded_juror_is_checked_when_the_panel_loads(project, fake_llm, judge_file, extra, message):
    write_jsonl(project / "judge.jsonl", [{"question_id": 1, "model": "gpt-x", "judge": "j", "label": "correct"}])
    write_jsonl(project / "two.jsonl", [{"question_id": 1, "model": "gpt-x", "judge": n, "label": "correct"} for n in "ab"])
    panel = recorded_panel(project, fake_llm.base_url, judge_file, extra)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--plan"])
    assert res.exit_code == 1 and message in res.output and "Traceback" not in res.output
    assert fake_llm.calls() == 0


def test_the_reference_category_never_contradicts_the_reference_label(tmp_path):
    """Two annotators say correct without a category and a third says incorrect, genuine_error:
    the reference is correct, so genuine_error (the outvoted annotator's) is no reference
    category for it. Before, it was, and a judge agreeing with the reference scored 0.5."""
    labels = [
        {"question_id": 1, "model": "m", "label": "correct", "annotator": "A", "source": "t"},
        {"question_id": 1, "model": "m", "label": "correct", "annotator": "B", "source": "t"},
        {"question_id": 1, "model": "m", "label": "incorrect", "category": "genuine_error", "annotator": "C", "source": "t"},
        *(
            {"question_id": 2, "model": "m", "label": "correct", "category": "gold_defect", "annotator": a, "source": "t"}
            for a in "ABC"
        ),
        # majority correct: the category comes from the two who said so (format_equivalence 2, gold_defect 0)
        {"question_id": 3, "model": "m", "label": "correct", "category": "format_equivalence", "annotator": "A", "source": "t"},
        {"question_id": 3, "model": "m", "label": "correct", "category": "format_equivalence", "annotator": "B", "source": "t"},
        {"question_id": 3, "model": "m", "label": "incorrect", "category": "genuine_error", "annotator": "C", "source": "t"},
    ]
    said = {1: "gold_defect", 2: "gold_defect", 3: "gold_defect"}
    lines = [{"question_id": q, "model": "m", "judge": "J", "label": "correct", "category": c} for q, c in said.items()]
    cal = calibrate(
        load_labels([write_jsonl(tmp_path / "l.jsonl", labels)]),
        judgments=load_judgments([write_jsonl(tmp_path / "j.jsonl", lines)]),
    )
    # by hand: reference categories {2: gold_defect, 3: format_equivalence}; question 1 has none
    truth, pred = ["gold_defect", "format_equivalence"], [said[2], said[3]]
    accuracy = fig(cal, "judge J", "category_accuracy")
    assert (accuracy.value, accuracy.n) == (0.5, 2)
    cats = ["gold_defect", "format_equivalence", "genuine_error", "ambiguous"]
    [matrix] = [c.matrix for c in cal.confusions if c.subject == "judge J" and c.labels == cats]
    assert matrix == confusion_matrix(truth, pred, labels=cats).tolist()
    assert fig(cal, "judge J", "accuracy").value == 1.0  # every credit agrees with the reference label
