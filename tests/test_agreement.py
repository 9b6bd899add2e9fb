"""Issue 11, agreement and bias: Krippendorff's alpha, pairwise Cohen's kappa and position
bias of every verdict set, in the verdict file's summary, the CLI, the report and one plot.

The figures are checked against independent implementations (the ``krippendorff`` package,
scikit-learn's ``cohen_kappa_score``, ``scipy.stats.binomtest``)."""

from __future__ import annotations

import json
import math

import krippendorff
import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score
from test_report import GOLD, make_eval, verdict_docs
from typer.testing import CliRunner

from jury.cli import app
from jury.judging.agreement import agreement_summary
from jury.judging.ballots import blind_category
from jury.judging.gold_audit import summarize
from jury.results.plots.figures import position_bias_figure, write_plots
from jury.results.report.build import build_report, render_report
from jury.verdicts.documents import validate_document
from jury.verdicts.lock import load_locked
from tests.support.fakellm import ballot_reply, json_reply
from tests.support.jurytest import says, write_panel

runner = CliRunner()
CATS = ["gold_defect", "format_equivalence", "genuine_error", "ambiguous"]
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]


# ------------------------------------------------------------------ a verdict set with every kind of missing vote


def _vote(juror, raw, order, *, abstained=False, skipped=False, swapped=None, inconsistent=False):
    category = None if abstained or skipped or inconsistent or raw is None else blind_category(raw, order)[0]
    return {
        "juror": juror,
        "family": "f",
        "model": f"openai/{juror}",
        "order": order,
        "raw_verdict": None if skipped else raw,
        "category": category,
        "abstained": abstained or inconsistent,
        "skipped": skipped,
        "swapped": swapped,
        "inconsistent": inconsistent,
    }


def blind_records(seed: int = 3, n: int = 40) -> list[dict]:
    """Five jurors, panels of three that change from record to record (as family exclusion
    makes them), abstentions, early-stop skips and --swap halves (some inconsistent)."""
    rng = np.random.default_rng(seed)
    names = ["ja", "jb", "jc", "jd", "je"]
    answers = ["answer_1", "answer_2", "both", "neither", "ambiguous"]
    records = []
    for i in range(n):
        panel = [names[(i + j) % 5] for j in range(3)]
        truth = answers[int(rng.integers(0, 5))]
        votes = []
        for j, juror in enumerate(panel):
            order = "gold_first" if rng.random() < 0.5 else "candidate_first"
            raw = truth if rng.random() < 0.6 else answers[int(rng.integers(0, 5))]
            roll = rng.random()
            if roll < 0.08:
                votes.append(_vote(juror, None, order, abstained=True))
            elif roll < 0.14 and j == 2:
                votes.append(_vote(juror, None, order, skipped=True))
            elif roll < 0.35:  # --swap: the other order's ballot; inconsistent when the categories differ
                other = "candidate_first" if order == "gold_first" else "gold_first"
                raw2 = answers[int(rng.integers(0, 5))]
                cat2 = blind_category(raw2, other)[0]
                swapped = {"order": other, "raw_verdict": raw2, "category": cat2, "abstained": False}
                bad = cat2 != blind_category(raw, order)[0]
                votes.append(_vote(juror, raw, order, swapped=swapped, inconsistent=bad))
            else:
                votes.append(_vote(juror, raw, order))
        records.append({"question_id": i, "model": "m", "jurors": panel, "votes": votes})
    return records


def _counted(v):
    return None if v["abstained"] or v["skipped"] or v["inconsistent"] else v["category"]


def test_alpha_equals_the_krippendorff_package_with_abstentions():
    records = blind_records()
    summary = agreement_summary(records, "blind")
    jurors = sorted({v["juror"] for r in records for v in r["votes"]})
    matrix = np.full((len(jurors), len(records)), np.nan)
    missing = 0
    for u, r in enumerate(records):
        for v in r["votes"]:
            c = _counted(v)
            missing += c is None
            if c is not None:
                matrix[jurors.index(v["juror"]), u] = CATS.index(c)
    assert missing >= 10  # abstentions, skips and inconsistent votes are all in the set
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert summary["krippendorff_alpha"] == pytest.approx(expected, abs=1e-12)
    assert summary["alpha_units"] == int(np.sum(np.sum(~np.isnan(matrix), axis=0) >= 2))
    assert summary["units"] == len(records)


def test_pairwise_kappa_equals_sklearn_on_the_records_both_rated():
    records = blind_records(seed=5)
    summary = agreement_summary(records, "blind")
    pairs = summary["pairwise_kappa"]
    assert [(p["a"], p["b"]) for p in pairs][:2] == [("ja", "jb"), ("ja", "jc")]  # panel order
    assert len(pairs) == 10
    checked = 0
    for p in pairs:
        a, b = [], []
        for r in records:
            by = {v["juror"]: _counted(v) for v in r["votes"]}
            if by.get(p["a"]) is not None and by.get(p["b"]) is not None:
                a.append(by[p["a"]])
                b.append(by[p["b"]])
        assert p["n"] == len(a)
        if p["kappa"] is None:
            assert len(a) == 0 or len(set(a) | set(b)) == 1
            continue
        assert p["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
        checked += 1
    assert checked >= 5


def test_position_bias_counts_each_half_and_tests_against_one_half():
    records = blind_records(seed=7)
    summary = agreement_summary(records, "blind")
    bias = summary["position_bias"]
    panel_k = panel_n = 0
    for juror, b in bias["jurors"].items():
        k = n = 0
        for r in records:
            for v in r["votes"]:
                if v["juror"] != juror or v["skipped"]:
                    continue
                for half in (v, v["swapped"]):  # the swapped half is a ballot of its own
                    if half and half["raw_verdict"] in ("answer_1", "answer_2"):
                        n += 1
                        k += half["raw_verdict"] == "answer_1"
        assert (b["k"], b["n"]) == (k, n) and n > 0
        test = binomtest(k, n, 0.5)
        assert b["p_value"] == pytest.approx(test.pvalue, abs=1e-12)
        assert b["share"] == pytest.approx(k / n)
        ci = test.proportion_ci(method="wilson")
        assert (b["low"], b["high"]) == pytest.approx((ci.low, ci.high))
        panel_k, panel_n = panel_k + k, panel_n + n
    assert (bias["panel"]["k"], bias["panel"]["n"]) == (panel_k, panel_n)
    assert bias["panel"]["p_value"] == pytest.approx(binomtest(panel_k, panel_n, 0.5).pvalue)
    inconsistent = {j: sum(v["inconsistent"] for r in records for v in r["votes"] if v["juror"] == j) for j in bias["jurors"]}
    assert summary["inconsistent"] == inconsistent and sum(inconsistent.values()) > 0


def test_labelled_ballots_and_audits_have_no_position_bias():
    records = blind_records(n=10)
    for style in ("labelled", "audit"):
        s = agreement_summary(records, style)
        assert s["position_bias"] is None and s["position_bias_note"]
        assert s["krippendorff_alpha"] == agreement_summary(records, "blind")["krippendorff_alpha"]
    assert "gold" in agreement_summary(records, "labelled")["position_bias_note"]


def test_audit_summary_keeps_fleiss_kappa_and_adds_alpha_over_questions_with_abstentions():
    def rec(q, cats):
        votes = [
            {"juror": f"j{i}", "category": c, "abstained": c is None, "skipped": False, "defect_type": None}
            for i, c in enumerate(cats)
        ]
        return {"question_id": q, "votes": votes, "flagged": False, "decided": True, "difficulty": None, "split": None}

    records = [
        rec(1, ["valid", "valid", "defective"]),
        rec(2, ["defective", "defective", None]),  # Fleiss' kappa drops this one; alpha keeps it
        rec(3, ["valid", "valid", "valid"]),
        rec(4, ["defective", "valid", "defective"]),
    ]
    s = summarize(records)
    assert "fleiss_kappa" in s and s["fleiss_kappa"] is not None
    a = s["agreement"]
    matrix = np.array(
        [[0 if v["category"] == "valid" else 1 if v["category"] else np.nan for v in r["votes"]] for r in records]
    ).T
    assert a["krippendorff_alpha"] == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
    assert a["alpha_units"] == 4 and a["position_bias"] is None


# ------------------------------------------------------------------ end to end: a juror that always says answer_1


def always_first(request):
    return ballot_reply("answer_1", reasoning="scripted: always the first answer")


def test_a_juror_that_always_picks_answer_1_shows_in_the_file_the_cli_the_report_and_the_plot(project, fake_llm):
    fake_llm.script("ja", says("genuine_error"))
    fake_llm.script("jb", says("genuine_error"))
    fake_llm.script("jc", always_first)  # judges all six failures (google is neither model's family)
    fake_llm.script("jd", says("gold_defect"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"])
    assert res.exit_code == 0, res.output
    doc = load_locked(project / "verdicts" / "adj.json")
    bias = doc.summary["agreement"]["position_bias"]
    jc = bias["jurors"]["jc"]
    assert (jc["k"], jc["n"], jc["share"]) == (6, 6, 1.0)
    assert jc["p_value"] == pytest.approx(binomtest(6, 6, 0.5).pvalue) and jc["p_value"] < 0.05
    assert bias["jurors"]["jd"]["n"] == 6  # says gold_defect: always a single answer, either position
    # the summary is what the records give
    assert doc.summary["agreement"] == agreement_summary([r.model_dump(mode="json") for r in doc.records], "blind")
    line = next(x for x in res.output.splitlines() if x.startswith("agreement:"))
    assert "Krippendorff's alpha" in line and "pairwise Cohen's kappa" in line and "first answer picked" in line

    rep = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "--format", "json", "--plots", "figs"])
    assert rep.exit_code == 0, rep.output
    data = json.loads(rep.stdout)
    (a,) = data["agreement"]
    assert a["path"] == "verdicts/adj.json" and a["style"] == "blind"
    assert a["position_bias"]["jurors"]["jc"] == jc
    assert a["krippendorff_alpha"] == doc.summary["agreement"]["krippendorff_alpha"]
    png = project / "figs" / "position_bias.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 8_000

    md = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "--format", "md"])
    assert "agreement and position bias: adjudication verdicts/adj.json" in md.stdout
    assert "| jc | 1.000 [" in md.stdout and "Krippendorff's alpha (nominal)" in md.stdout


def test_audit_gold_prints_the_agreement_line(project, fake_llm):
    def valid(request):
        return json_reply({"reasoning": "scripted", "verdict": "valid", "defect_type": None})

    five = FOUR + [("je", "deepseek")]
    for name, _ in five:
        fake_llm.script(name, valid)
    panel = write_panel(project, fake_llm.base_url, five, style="audit", k=5, name="audit.toml")
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", str(panel)])
    assert res.exit_code == 0, res.output
    assert "agreement: Krippendorff's alpha — (n = 4); pairwise Cohen's kappa —" in res.output  # one category: undefined
    assert "first answer picked" not in res.output


# ------------------------------------------------------------------ the report reads records, not summaries


def test_report_computes_agreement_from_records_for_old_and_forged_summaries():
    docs = verdict_docs()
    votes = [_vote(j, "answer_1", "gold_first") for j in ("ja", "jb", "jc")]
    path, first = docs[0]
    data = first.model_dump(by_alias=True, mode="json")
    data["records"][0]["votes"], data["records"][0]["jurors"] = votes, ["ja", "jb", "jc"]
    data["summary"]["agreement"] = {"krippendorff_alpha": 0.99, "position_bias": None}  # never read
    forged = validate_document(data)
    report = build_report(make_eval(), GOLD, adj_docs=[(path, forged), docs[1]]).model_dump(mode="json")
    a = report["agreement"][0]
    assert a["krippendorff_alpha"] is None  # one category: undefined, whatever the summary says
    assert a["position_bias"]["jurors"]["ja"]["k"] == 1
    assert "agreement" not in docs[1][1].summary and report["agreement"][1]["units"] == len(docs[1][1].records)
    assert "agreement and position bias" in render_report(report, "table", width=200)


def test_position_bias_figure_marks_one_half_and_skips_without_data():
    records = blind_records(n=20)
    report = {"agreement": [{**agreement_summary(records, "blind"), "path": "a.json"}]}
    fig = position_bias_figure(report)
    ax = fig.axes[0]
    assert any(math.isclose(line.get_xdata()[0], 0.5) for line in ax.lines if len(line.get_xdata()) == 2)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("panel") and len(labels) == 6  # five jurors and the panel (panel at the bottom)
    fig.clear()
    assert position_bias_figure({"agreement": [{**agreement_summary(records, "labelled"), "path": "b"}]}) is None
    assert position_bias_figure({"settings": {}, "models": []}) is None


def test_write_plots_adds_position_bias_png_only_when_there_is_a_blind_set(tmp_path):
    report = build_report(make_eval(), GOLD, adj_docs=verdict_docs()).model_dump(mode="json")  # no votes
    assert "position_bias.png" not in [p.name for p in write_plots(report, tmp_path / "a")]
    report["agreement"] = [{**agreement_summary(blind_records(n=12), "blind"), "path": "x"}]
    assert "position_bias.png" in [p.name for p in write_plots(report, tmp_path / "b")]


def test_with_swap_an_always_first_juror_is_inconsistent_and_both_halves_count(project, fake_llm):
    for name in ("ja", "jb", "jd"):
        fake_llm.script(name, says("genuine_error"))
    fake_llm.script("jc", always_first)
    panel = write_panel(project, fake_llm.base_url, FOUR)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--swap", "-o", "verdicts/adj.json"])
    assert res.exit_code == 0, res.output
    doc = load_locked(project / "verdicts" / "adj.json")
    a = doc.summary["agreement"]
    jc = a["position_bias"]["jurors"]["jc"]
    assert (jc["k"], jc["n"]) == (12, 12) and jc["p_value"] == pytest.approx(binomtest(12, 12, 0.5).pvalue)
    assert a["inconsistent"]["jc"] == 6 and a["inconsistent"]["jd"] == 0  # answer_1 in both orders: two categories
    assert a["position_bias"]["jurors"]["jd"]["n"] == 12 and a["position_bias"]["jurors"]["jd"]["share"] == 0.5
    assert "inconsistent across orders 6" in res.output
    rep = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "--format", "json"])
    assert json.loads(rep.stdout)["agreement"][0]["inconsistent"]["jc"] == 6


def test_report_heads_the_audit_and_adjudication_sections_alike():
    """The audit's agreement section was headed by its hash, the adjudication's by its path:
    both now by path and short hash, in the table, the Markdown and the JSON."""
    from test_report import audit_doc

    audit = audit_doc({2}).model_copy(update={"content_sha256": "sha256:" + "a" * 64})
    (path, adj), second = verdict_docs()
    adj = adj.model_copy(update={"content_sha256": "sha256:" + "b" * 64})
    report = build_report(make_eval(), GOLD, audit_docs=[("verdicts/audit.json", audit)], adj_docs=[(path, adj), second])
    data = report.model_dump(mode="json")
    assert data["verdict_files"][0]["path"] == "verdicts/audit.json"
    for text in (render_report(data, "table", width=300), render_report(data, "md")):
        assert f"agreement and position bias: audit verdicts/audit.json (sha256:{'a' * 12}…)" in text
        assert f"agreement and position bias: adjudication adj1.json (sha256:{'b' * 12}…)" in text
    # a bare doc (library callers) is still named by its hash
    bare = build_report(make_eval(), GOLD, audit_docs=[audit], strength=None).model_dump(mode="json")
    assert bare["verdict_files"][0]["path"] is None
    assert f"agreement and position bias: audit sha256:{'a' * 12}…" in render_report(bare, "md")
