"""`jury report`: every number checked by hand on tiny cases, then the command end to end.

Scripted jurors (tests/support/fakellm.py) are test doubles: their verdicts exercise the code and
are never reported as real numbers.
"""

import copy
import json
import math
import re
from statistics import NormalDist

import pytest
from typer.testing import CliRunner

from jury.compare.outcomes import Evaluation, PairResult, Settings
from jury.errors import InputError
from jury.inputs.records import GoldItem
from jury.results.report.build import build_report as build_report_model
from jury.results.report.build import render_report, report_rows
from jury.verdicts.documents import validate_document
from tests.support.fakellm import FakeLLMServer, json_reply
from tests.support.jurytest import GOLD_SQL, category_juror, copy_project, make_project, says, user_text, write_panel

runner = CliRunner()
Z = NormalDist().inv_cdf(0.975)


def build_report(*args, **kwargs) -> dict:
    """build_report returns a Report: these tests read its JSON dict (what --format json writes)."""
    return build_report_model(*args, **kwargs).model_dump(mode="json")


def wilson_by_hand(k, n):
    """The closed-form Wilson score interval."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return p, centre - half, centre + half


def check(prop, k, n):
    assert (prop["k"], prop["n"]) == (k, n)
    value, low, high = wilson_by_hand(k, n)
    assert prop["value"] == pytest.approx(value)
    assert prop["low"] == pytest.approx(low, abs=1e-9)
    assert prop["high"] == pytest.approx(high, abs=1e-9)


def pearson_by_hand(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


# ------------------------------------------------------------------ a hand-checkable case
#
# Seven questions; q6 has no difficulty, q7's gold fails (excluded everywhere).
DIFFICULTY = {1: "simple", 2: "simple", 3: "moderate", 4: "challenging", 5: "challenging", 6: None, 7: "challenging"}
GOLD = {q: GoldItem(question_id=q, db_id="shop", sql=f"SELECT {q}", difficulty=d) for q, d in DIFFICULTY.items()}

# model -> families, and question -> outcome ("misrouted" = chose another database);
# a mismatch carries the jury's verdict.
MODELS = {
    "A": (
        ["openai"],
        {
            1: ("mismatch", "gold_defect"),
            2: "match",
            3: ("mismatch", "format_equivalence"),
            4: ("mismatch", "format_equivalence"),
            5: "near_miss",
            6: ("mismatch", "ambiguous"),
        },
    ),
    "B": (
        ["anthropic", "google"],
        {
            1: "match",
            2: "match",
            3: ("mismatch", "genuine_error"),
            4: "error",
            5: "misrouted",
            6: ("mismatch", "format_equivalence"),
        },
    ),
    "C": (
        ["google"],
        {
            1: ("mismatch", "gold_defect"),
            2: ("mismatch", "no_majority"),
            3: ("mismatch", "undecided"),
            4: "timeout",
            5: "missing",
            6: "match",
        },
    ),
    "D": (["deepseek"], {1: "misrouted", 2: "misrouted", 3: "match", 4: "match", 5: ("mismatch", "gold_defect"), 6: "match"}),
}
CREDITED = {"gold_defect", "format_equivalence"}


def make_eval(models=MODELS):
    pairs = []
    for model, (fams, outcomes) in models.items():
        for q in range(1, 8):
            o = outcomes.get(q, "gold_error")
            o = o[0] if isinstance(o, tuple) else o
            routed = o != "misrouted" and not (model == "D" and q == 7)
            pairs.append(
                PairResult(
                    model=model,
                    question_id=q,
                    db_id="shop",
                    chosen_db_id="shop" if routed else "other",
                    routed=routed,
                    outcome=o,
                    families=fams,
                )
            )
    return Evaluation(pairs, {7: "error: no such column: nope"}, Settings(workers=1), {})


def adj_record(model, q, verdict, models=MODELS):
    return {
        "question_id": q,
        "db_id": "shop",
        "model": model,
        "families": models[model][0],
        "jurors": [],
        "votes": [],
        "verdict": verdict,
        "credited": verdict in CREDITED,
    }


HEADER = {
    "$schema": "schema/x.json",
    "jury_version": "test",
    "created_at": "2026-01-01T00:00:00Z",
    "inputs": {"gold": {"path": "gold.json", "sha256": "0" * 64}},
    "prompts": {},
    "panel": {"name": "scripted", "ballot_style": "blind", "k": 3, "jurors": []},
    "settings": {},
    "totals": {},
}


def adj_doc(records, cost_by_model):
    return validate_document({**HEADER, "kind": "adjudication", "records": records, "summary": {"cost_by_model": cost_by_model}})


def audit_doc(flagged):
    recs = [
        {"question_id": q, "db_id": "shop", "jurors": [], "votes": [], "flagged": q in flagged, "decided": True}
        for q in range(1, 8)
    ]
    return validate_document({**HEADER, "kind": "audit", "records": recs})


def verdict_docs(models=MODELS):
    """A's q1 sits in the second file with C and D, so A's cost sums over both files."""
    first, second = [], []
    for model, (_fams, outcomes) in models.items():
        for q, o in outcomes.items():
            if isinstance(o, tuple):
                (second if model in ("C", "D") or (model, q) == ("A", 1) else first).append(adj_record(model, q, o[1], models))
    return [
        ("adj1.json", adj_doc(first, {"A": 0.10, "B": 0.05})),
        ("adj2.json", adj_doc(second, {"A": 0.02, "C": 0.20, "D": 0.01})),
    ]


@pytest.fixture(scope="module")
def full_report():
    """Built once: the bootstrap behind its intervals is most of a report's time."""
    return build_report(make_eval(), GOLD, audit_docs=[audit_doc({2, 6})], adj_docs=verdict_docs(), control="C")


@pytest.fixture
def full(full_report):
    return copy.deepcopy(full_report)


def by_model(report):
    return {m["model"]: m for m in report["models"]}


def test_three_columns_with_wilson_bounds_and_ranks(full):
    m = by_model(full)
    assert list(m) == ["A", "B", "C", "D"]  # run order
    # strict over routed questions (q7 excluded): A 1/6, B 2/5 (q5 misrouted), C 1/6, D 3/4
    check(m["A"]["strict"], 1, 6)
    check(m["B"]["strict"], 2, 5)
    check(m["C"]["strict"], 1, 6)
    check(m["D"]["strict"], 3, 4)
    # gold-clean drops flagged q2, q6: A 0/4 (its q2 match never counts), B 1/3, C 0/4, D 2/3
    check(m["A"]["gold_clean"], 0, 4)
    check(m["B"]["gold_clean"], 1, 3)
    check(m["C"]["gold_clean"], 0, 4)
    check(m["D"]["gold_clean"], 2, 3)
    # adjudicated = matches + credited: A 1+3 of 6, B 2+1 of 5, C 1+1 of 6, D 3+1 of 4
    check(m["A"]["adjudicated"], 4, 6)
    check(m["B"]["adjudicated"], 3, 5)
    check(m["C"]["adjudicated"], 2, 6)
    check(m["D"]["adjudicated"], 4, 4)
    assert [m[x]["strict_rank"] for x in "ABCD"] == [3, 2, 3, 1]  # A and C tie at 1/6
    assert [m[x]["gold_clean_rank"] for x in "ABCD"] == [3, 2, 3, 1]
    assert [m[x]["adjudicated_rank"] for x in "ABCD"] == [2, 3, 4, 1]
    assert [m[x]["rank_shift"] for x in "ABCD"] == ["3rd → 2nd", "2nd → 3rd", "3rd → 4th", "1st → 1st"]
    assert [m[x]["rank_delta"] for x in "ABCD"] == [1, -1, -1, 0]
    assert [m[x]["questions"] for x in "ABCD"] == [7, 7, 7, 7]
    assert [m[x]["routed"] for x in "ABCD"] == [6, 5, 6, 4]
    assert [m[x]["routing_accuracy"] for x in "ABCD"] == pytest.approx([1, 5 / 6, 1, 4 / 6])


def test_composition_shares_and_costs(full):
    m = by_model(full)
    assert m["A"]["composition"] == {
        "gold_defect": 1,
        "format_equivalence": 2,
        "genuine_error": 0,
        "ambiguous": 1,
        "no_majority": 0,
    }
    assert m["A"]["composition_pct"] == pytest.approx(
        {"gold_defect": 0.25, "format_equivalence": 0.5, "genuine_error": 0.0, "ambiguous": 0.25, "no_majority": 0.0}
    )
    # C: no_majority counts no_majority and undecided
    assert m["C"]["composition"] == {
        "gold_defect": 1,
        "format_equivalence": 0,
        "genuine_error": 0,
        "ambiguous": 0,
        "no_majority": 2,
    }
    assert m["C"]["composition_pct"]["no_majority"] == pytest.approx(2 / 3)
    assert [m[x]["jury_reached"] for x in "ABCD"] == [4, 2, 3, 1]
    assert [m[x]["gold_defect_share"] for x in "ABCD"] == pytest.approx([0.25, 0.0, 1 / 3, 1.0])
    assert [m[x]["near_miss"] for x in "ABCD"] == [1, 0, 0, 0]
    assert [m[x]["not_executed"] for x in "ABCD"] == [0, 1, 2, 0]  # B error; C timeout + missing
    assert [m[x]["adjudication_cost_usd"] for x in "ABCD"] == pytest.approx([0.12, 0.05, 0.20, 0.01])
    assert m["B"]["families"] == ["anthropic", "google"]


def test_difficulty_of_each_denominator(full):
    m = by_model(full)
    # known difficulties of routed questions (q6 unknown, q7 a gold error):
    # A, C: s s m c c -> 2/5 challenging, mean (1+1+2+3+3)/5; B: s s m c; D: m c c
    assert [m[x]["challenging_share"] for x in "ABCD"] == pytest.approx([2 / 5, 1 / 4, 2 / 5, 2 / 3])
    assert [m[x]["mean_difficulty"] for x in "ABCD"] == pytest.approx([2.0, 7 / 4, 2.0, 8 / 3])


def test_correlations_by_hand(full):
    c = full["correlations"]
    g = c["gold_defect_share_vs_strength"]
    # share ranks (ascending) A2 B1 C3 D4; adjudicated ranks A3 B2 C1 D4; d = -1 -1 2 0
    assert g["strength"] == "adjudicated" and g["method"] == "spearman" and g["n"] == 4
    assert g["r"] == pytest.approx(1 - 6 * (1 + 1 + 4 + 0) / (4 * (16 - 1)))  # 0.4
    routing = [1, 5 / 6, 1, 4 / 6]
    r = c["routing_vs_challenging_share"]
    assert r["method"] == "pearson" and r["n"] == 4
    assert r["r"] == pytest.approx(pearson_by_hand(routing, [2 / 5, 1 / 4, 2 / 5, 2 / 3]))
    assert c["routing_vs_mean_difficulty"]["r"] == pytest.approx(pearson_by_hand(routing, [2, 7 / 4, 2, 8 / 3]))
    assert set(g) >= {"r", "p_value", "n", "ci_low", "ci_high"}


def test_strength_can_be_strict_and_correlation_follows_it():
    rep = build_report(make_eval(), GOLD, adj_docs=verdict_docs(), strength="strict")
    g = rep["correlations"]["gold_defect_share_vs_strength"]
    # strict A 1/6, B 2/5, C 1/6, D 3/4: average ranks A 1.5 B 3 C 1.5 D 4; shares A2 B1 C3 D4
    x, y = [2, 1, 3, 4], [1.5, 3, 1.5, 4]
    assert g["strength"] == "strict" and g["r"] == pytest.approx(pearson_by_hand(x, y))
    assert rep["settings"]["strength"] == "strict"


def test_family_shares_count_a_model_in_each_family(full):
    f = full["families"]
    # google = B (2 reached, 1 format-equivalent) + C (3 reached, 0)
    assert f["google"] == {"jury_reached": 5, "format_equivalence": 1, "share": pytest.approx(0.2)}
    assert f["anthropic"] == {"jury_reached": 2, "format_equivalence": 1, "share": pytest.approx(0.5)}
    assert f["openai"] == {"jury_reached": 4, "format_equivalence": 2, "share": pytest.approx(0.5)}
    assert f["deepseek"] == {"jury_reached": 1, "format_equivalence": 0, "share": 0.0}


def test_negative_control(full):
    c = full["control"]
    assert c["model"] == "C" and full["settings"]["control"] == "C"
    assert c["strict"] == pytest.approx(1 / 6) and c["adjudicated"] == pytest.approx(2 / 6)
    assert c["lift"] == pytest.approx(1 / 6)
    assert c["next_model"] == "B" and c["next_adjudicated"] == pytest.approx(0.6)
    assert c["gap_to_next"] == pytest.approx(0.6 - 2 / 6)
    text = render_report(full, "table")
    assert "C rises from 0.167 to 0.333 and stays 0.267 below the next row (B)" in text
    top = build_report(make_eval(), GOLD, adj_docs=verdict_docs(), control="D")["control"]
    assert top["next_model"] is None and top["gap_to_next"] is None
    # a model tied with the control is not "the next row": E copies C, the next row is still B
    five = {**MODELS, "E": MODELS["C"]}
    tied = build_report(make_eval(five), GOLD, adj_docs=verdict_docs(five), control="C")["control"]
    assert tied["next_model"] == "B" and tied["gap_to_next"] == pytest.approx(0.6 - 2 / 6)


def test_oracle_routing_shares_one_denominator(full):
    o = full["oracle_routing"]
    # B misroutes q5, D misroutes q1 and q2, q7's gold fails: common = {3, 4, 6}
    assert o["questions"] == 3
    m = {r["model"]: r for r in o["models"]}
    check(m["A"]["strict"], 0, 3)
    check(m["B"]["strict"], 0, 3)
    check(m["C"]["strict"], 1, 3)
    check(m["D"]["strict"], 3, 3)
    for x in "ABC":  # q6 flagged: q3, q4 left
        check(m[x]["gold_clean"], 0, 2)
    check(m["D"]["gold_clean"], 2, 2)
    check(m["A"]["adjudicated"], 2, 3)  # q3, q4 format-equivalent
    check(m["B"]["adjudicated"], 1, 3)  # q6 format-equivalent
    check(m["C"]["adjudicated"], 1, 3)  # q6 match, q3 undecided
    check(m["D"]["adjudicated"], 3, 3)
    assert [m[x]["strict_rank"] for x in "ABCD"] == [3, 3, 2, 1]
    assert [m[x]["adjudicated_rank"] for x in "ABCD"] == [2, 3, 3, 1]
    assert [m[x]["gold_clean_rank"] for x in "ABCD"] == [2, 2, 2, 1]


def test_without_verdicts_the_columns_are_none():
    rep = build_report(make_eval(), GOLD, strength="strict")
    m = by_model(rep)["A"]
    assert m["gold_clean"] is None and m["adjudicated"] is None and m["adjudicated_rank"] is None
    assert m["rank_shift"] == "—" and m["rank_delta"] is None
    assert m["jury_reached"] == 0 and m["gold_defect_share"] is None and m["adjudication_cost_usd"] is None
    assert all(v is None for v in m["composition_pct"].values())
    assert rep["oracle_routing"]["models"][0]["adjudicated"] is None
    assert m["families"] == ["openai"]  # from the run records
    assert build_report(make_eval(), GOLD, audit_docs=[audit_doc({2})], strength=None)["settings"]["strength"] == "gold_clean"


def test_library_errors():
    ev = make_eval()
    with pytest.raises(InputError, match="strength adjudicated needs adjudication verdicts"):
        build_report(ev, GOLD, strength="adjudicated")
    with pytest.raises(InputError, match="strength gold_clean needs an audit"):
        build_report(ev, GOLD, strength="gold_clean")
    with pytest.raises(InputError, match=r"control 'Z' is not a model in the runs; models: A, B, C, D"):
        build_report(ev, GOLD, adj_docs=verdict_docs(), control="Z")
    docs = verdict_docs()[:1]  # C and D's failures unjudged
    with pytest.raises(InputError, match="jury-eligible failures have no verdict"):
        build_report(ev, GOLD, adj_docs=docs)


def test_rows_and_renderings(full):
    rows = report_rows(full)
    assert [r["model"] for r in rows] == ["A", "B", "C", "D"]
    a = rows[0]
    for c in ("strict", "gold_clean", "adjudicated"):
        assert {f"{c}_accuracy", f"{c}_low", f"{c}_high", f"{c}_rank", f"{c}_k", f"{c}_n"} <= set(a)
    assert a["adjudicated_k"] == 4 and a["rank_shift"] == "3rd → 2nd" and a["format_equivalence"] == 2
    assert a["format_equivalence_pct"] == pytest.approx(0.5) and a["adjudication_cost_usd"] == pytest.approx(0.12)
    csv = render_report(full, "csv").splitlines()
    assert csv[0].startswith("model,families,questions,routed,routing_accuracy,strict_k,strict_n,strict_accuracy,strict_low")
    assert len(csv) == 5
    assert json.loads(render_report(full, "json"))["models"][0]["model"] == "A"
    md = render_report(full, "md")
    assert "| model |" in md and "oracle routing: the 3 questions" in md
    table = render_report(full, "table")
    assert "Spearman, gold-defect share vs adjudicated accuracy: r = 0.400 (n = 4" in table
    assert "google 0.200 (1/5)" in table


# ------------------------------------------------------------------ the command, end to end


def juror(verdicts: dict[int, str]):
    """A blind juror answering per question: verdicts maps question id -> category."""
    return category_juror(verdicts.__getitem__)


def audit_juror(flag: set[int]):
    text_to_q = {"Names of red items?": 1, "Items by price, cheapest first?": 2, "How many items?": 3, "Broken gold": 4}

    def respond(req):
        q = text_to_q[re.search(r"<question>\n(.*?)\n</question>", user_text(req), re.S).group(1)]
        return json_reply(
            {
                "reasoning": "scripted audit",
                "verdict": "defective" if q in flag else "valid",
                "defect_type": "sql_vs_question" if q in flag else None,
            }
        )

    return respond


FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
FIVE = FOUR + [("je", "deepseek")]


@pytest.fixture(scope="module")
def judged_template(tmp_path_factory):
    """make_project plus an audit (q3 flagged) and an adjudication, written by the CLI into
    verdicts/; built once for this module."""
    tmp = tmp_path_factory.mktemp("judged")
    make_project(tmp)
    runs = tmp / "run.jsonl"
    lines = [json.loads(x) for x in runs.read_text().splitlines()]
    lines[0]["sql"] = GOLD_SQL[1]  # gpt-x q1 matches
    runs.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with FakeLLMServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        for name, _ in FIVE:
            server.script(name, audit_juror({3}))
        panel = write_panel(tmp, server.base_url, FIVE, style="audit", k=5, name="audit.toml")
        res = runner.invoke(app(), ["audit-gold", "gold.json", "--panel", str(panel), "-o", "verdicts/audit.json"])
        assert res.exit_code == 0, res.output
        for name, _ in FOUR:
            server.script(name, juror({1: "gold_defect", 2: "format_equivalence", 3: "genuine_error"}))
        panel = write_panel(tmp, server.base_url, FOUR)
        res = runner.invoke(app(), ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"])
        assert res.exit_code == 0, res.output
    return tmp


@pytest.fixture
def judged_project(judged_template, tmp_path, monkeypatch):
    """A copy of the judged project in tmp_path, the working directory."""
    copy_project(judged_template, tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def app():
    from jury.cli import app as the_app

    return the_app


def report(*args):
    return runner.invoke(app(), ["report", "run.jsonl", *args])


def test_cli_every_format(judged_project):
    args = ("--audit", "verdicts/audit.json", "--verdicts", "verdicts/adj.json", "--control", "claude-y")
    res = report(*args, "--format", "json")
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert {"settings", "models", "correlations", "families", "control", "oracle_routing"} <= set(rep)
    assert rep["settings"]["strength"] == "adjudicated" and rep["settings"]["comparator"] == "strict"
    m = {x["model"]: x for x in rep["models"]}
    keys = {
        "model",
        "families",
        "questions",
        "routed",
        "routing_accuracy",
        "strict",
        "strict_rank",
        "gold_clean",
        "gold_clean_rank",
        "adjudicated",
        "adjudicated_rank",
        "rank_shift",
        "rank_delta",
        "composition",
        "composition_pct",
        "jury_reached",
        "near_miss",
        "not_executed",
        "gold_defect_share",
        "adjudication_cost_usd",
        "challenging_share",
        "mean_difficulty",
    }
    assert keys <= set(m["gpt-x"])
    # gpt-x: q1 match, q2 format-equivalent, q3 genuine error -> 2/3; claude-y: q1 gold defect too -> 2/3
    assert (m["gpt-x"]["strict"]["k"], m["gpt-x"]["adjudicated"]["k"], m["gpt-x"]["adjudicated"]["n"]) == (1, 2, 3)
    assert (m["claude-y"]["strict"]["k"], m["claude-y"]["adjudicated"]["k"]) == (0, 2)
    assert m["claude-y"]["composition"]["gold_defect"] == 1 and m["claude-y"]["jury_reached"] == 3
    assert (m["gpt-x"]["gold_clean"]["k"], m["gpt-x"]["gold_clean"]["n"]) == (1, 2)  # q3 flagged
    assert m["gpt-x"]["families"] == ["openai"] and m["claude-y"]["families"] == ["anthropic"]
    assert m["gpt-x"]["adjudication_cost_usd"] is None and m["gpt-x"]["adjudication_unpriced_models"]  # scripted jurors: unpriced
    assert rep["control"]["model"] == "claude-y" and rep["oracle_routing"]["questions"] == 3
    assert rep["gold_errors"] == []  # the runs do not answer q4, the broken gold

    res = report(*args, "--format", "csv")
    assert res.exit_code == 0, res.output
    header = res.stdout.splitlines()[0].split(",")
    assert {
        "strict_accuracy",
        "strict_low",
        "strict_high",
        "gold_clean_low",
        "gold_clean_high",
        "adjudicated_accuracy",
        "adjudicated_low",
        "adjudicated_high",
        "rank_shift",
        "gold_defect_pct",
        "near_miss",
        "not_executed",
        "adjudication_cost_usd",
    } <= set(header)
    assert len(res.stdout.splitlines()) == 3

    res = report(*args, "--format", "md")
    assert res.exit_code == 0 and res.stdout.startswith("## jury report") and "| gpt-x (openai) |" in res.stdout
    res = report(*args)
    assert res.exit_code == 0 and "jury report" in res.stdout and "negative control: claude-y" in res.stdout
    res = report(*args, "-f", "json", "-o", "out/report.json")
    assert res.exit_code == 0 and json.loads((judged_project / "out" / "report.json").read_text())["models"]


def test_cli_plots(judged_project):
    pytest.importorskip("jury.results.plots.figures")
    res = report("--verdicts", "verdicts/adj.json", "--plots", "figs", "-f", "json")
    assert res.exit_code == 0, res.output
    written = sorted(p.name for p in (judged_project / "figs").iterdir())
    assert written and all(f"wrote figs/{name}" in res.stderr for name in written)
    assert json.loads(res.stdout)["models"]


def test_cli_refuses_a_tampered_verdict_file_before_anything_else(judged_project):
    path = judged_project / "verdicts" / "adj.json"
    text = path.read_text()
    i = text.index("scripted genuine_error")
    path.write_text(text[:i] + "S" + text[i + 1 :])  # one byte changed
    res = report("--verdicts", str(path))
    assert res.exit_code == 1 and "adj.json" in res.output and "content hash mismatch" in res.output
    assert len(res.output.strip().splitlines()) == 1
    # the lock is checked before the gold and the runs are even read
    res = report("--verdicts", str(path), "--gold", "no-such-gold.json")
    assert res.exit_code == 1 and "content hash mismatch" in res.output


def test_cli_errors(judged_project):
    res = report("--strength", "adjudicated")
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1
    assert res.output.startswith("Error: strength adjudicated needs adjudication verdicts")
    res = report("--verdicts", "verdicts/adj.json", "--control", "nobody")
    assert res.exit_code == 1 and "'nobody' is not a model in the runs; models: gpt-x, claude-y" in res.output
    assert len(res.output.strip().splitlines()) == 1
    res = report("--verdicts", "verdicts/audit.json")
    assert res.exit_code == 1 and "is an audit file, not an adjudication" in res.output
    res = report("--strength", "fastest")
    assert res.exit_code == 1 and "unknown strength 'fastest'" in res.output
    # no verdicts and no --strength: falls back to strict, no error
    res = report("-f", "json")
    assert res.exit_code == 0 and json.loads(res.stdout)["settings"]["strength"] == "strict"


def test_spearman_interval_with_four_models_and_its_degenerate_resamples(full):
    """Four models: a few of the 2,000 paired resamples have a constant side (rho undefined);
    they are left out and counted, and the interval is still given, in JSON and in the text."""
    g = full["correlations"]["gold_defect_share_vs_strength"]
    assert g["n"] == 4 and g["resamples"] == 2000
    assert 0 < g["degenerate_resamples"] < 200  # ~4/256 of the resamples are all one model
    assert g["ci_low"] is not None and g["ci_low"] <= g["r"] <= g["ci_high"]
    assert full["correlations"]["routing_vs_challenging_share"]["degenerate_resamples"] is None  # Pearson: no bootstrap
    for fmt in ("table", "md"):
        text = " ".join(render_report(full, fmt).split())
        assert (
            f"95% CI [{g['ci_low']:.3f}, {g['ci_high']:.3f}]; {g['degenerate_resamples']} of 2,000 resamples degenerate" in text
        )


@pytest.mark.slow
def test_cli_names_the_bound_input_a_verdict_file_was_made_for(judged_project):
    """Verdicts of another run or gold: the error names the bound input that differs, not a
    count of failures without a verdict."""
    runs = [json.loads(x) for x in (judged_project / "run.jsonl").read_text().splitlines()]
    runs.append({"model": "gemini-z", "question_id": 3, "sql": "SELECT 98"})  # a run the verdicts never saw
    (judged_project / "other-run.jsonl").write_text("".join(json.dumps(x) + "\n" for x in runs))
    for command in ("report", "score"):
        res = runner.invoke(app(), [command, "other-run.jsonl", "--verdicts", "verdicts/adj.json"])
        assert res.exit_code == 1, res.output
        assert len(res.output.strip().splitlines()) == 1
        assert "adj.json was made for another run file: it binds run.jsonl" in res.output, res.output
        assert "no verdict" not in res.output

    gold = json.loads((judged_project / "gold.json").read_text())
    gold[1]["SQL"] = "SELECT name FROM item ORDER BY price DESC"  # question 2's gold changed
    (judged_project / "other-gold.json").write_text(json.dumps(gold))
    res = runner.invoke(app(), ["report", "run.jsonl", "--gold", "other-gold.json", "--verdicts", "verdicts/adj.json"])
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1
    assert "adj.json was made for another gold file: it binds gold.json" in res.output, res.output
    assert "other-gold.json" in res.output


def test_two_sided_column_when_every_match_was_reviewed_without_a_false_pass():
    """Reviewed passes are known exactly: 120 of 120 matches reviewed, none false, leaves the
    two-sided column equal to the adjudicated one, interval included (it used to move the low
    bound from 0.582 to 0.563)."""
    from jury.results.columns import two_sided
    from jury.stats.core import wilson

    adjudicated = {"m": wilson(130, 200).as_dict()}
    reviews = {
        "m": {"sampled": 120, "decided": 120, "false_passes": 0, "matches": 120, "false_pass_rate": wilson(0, 120).as_dict()}
    }
    both = two_sided(adjudicated, reviews, {"m": 200})["m"]
    assert (both["value"], both["low"], both["high"]) == (0.65, adjudicated["m"]["low"], adjudicated["m"]["high"])
    assert both["estimated_false_passes"] == 0.0 and both["n"] == 200
    # a tenth of them reviewed: the unreviewed matches may hide false passes, so the low bound drops
    reviews["m"].update(sampled=12, decided=12, false_pass_rate=wilson(0, 12).as_dict())
    sampled = two_sided(adjudicated, reviews, {"m": 200})["m"]
    assert sampled["value"] == 0.65 and sampled["low"] < both["low"] and sampled["high"] == pytest.approx(both["high"])


# ------------------------------------------------------------------ unknown prices
#
# A juror litellm cannot price makes the cost unknown, never $0, and every output says which
# jurors; old verdict files without the field still load.

# gpt-x (openai) is judged by jb, jc, jd; claude-y (anthropic) by ja, jc, jd. Only ja is unpriced.
# Models litellm prices at its declared floor (1.53) as well as today: .ci/min-deps runs these tests there.
PRICED = [
    ("ja", "openai", "openai/ja"),
    ("jb", "anthropic", "openai/gpt-4o"),
    ("jc", "google", "openai/gpt-4o-mini"),
    ("jd", "xai", "openai/gpt-4o-2024-08-06"),
]


@pytest.fixture(scope="module")
def unpriced_template(tmp_path_factory):
    """An adjudication by PRICED (ja unpriced) in verdicts/adj.json, and what the command
    printed; built once for this module."""
    tmp = tmp_path_factory.mktemp("unpriced")
    make_project(tmp)
    with FakeLLMServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        for name in ("ja", "gpt-4o", "gpt-4o-mini", "gpt-4o-2024-08-06"):
            server.script(name, says("genuine_error"))
        panel = write_panel(tmp, server.base_url, PRICED)
        res = runner.invoke(app(), ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"])
    assert res.exit_code == 0, res.output
    return tmp, res.output


@pytest.fixture
def unpriced_project(unpriced_template, tmp_path, monkeypatch):
    template, output = unpriced_template
    copy_project(template, tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path, output


def test_verdict_file_records_unpriced_jurors_and_unknown_costs(unpriced_project):
    from jury.verdicts.lock import load_locked

    project, output = unpriced_project
    doc = load_locked(project / "verdicts" / "adj.json")
    assert doc.totals.unpriced_models == ["openai/ja"]
    costs = doc.summary["cost_by_model"]
    assert costs["claude-y"] is None  # ja judged it: its cost is unknown, not the priced part
    assert costs["gpt-x"] > 0
    text = " ".join(output.split())
    assert "cost unknown" in text and "openai/ja" in text and "claude-y" in text


def report_of_adj(*args):
    res = report("--verdicts", "verdicts/adj.json", *args)
    assert res.exit_code == 0, res.output
    return res.stdout


def test_report_shows_unknown_cost_and_names_the_jurors(unpriced_project):
    import csv
    import io

    rep = json.loads(report_of_adj("-f", "json"))
    m = {x["model"]: x for x in rep["models"]}
    assert m["claude-y"]["adjudication_cost_usd"] is None
    assert m["claude-y"]["adjudication_unpriced_models"] == ["openai/ja"]
    assert m["gpt-x"]["adjudication_cost_usd"] > 0 and m["gpt-x"]["adjudication_unpriced_models"] == []

    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(report_of_adj("-f", "csv")))}
    assert rows["claude-y"]["adjudication_cost_usd"] == ""
    assert rows["claude-y"]["adjudication_unpriced_models"] == "openai/ja"
    assert float(rows["gpt-x"]["adjudication_cost_usd"]) > 0 and rows["gpt-x"]["adjudication_unpriced_models"] == ""

    md = report_of_adj("-f", "md")
    assert "unknown (openai/ja unpriced)" in md and "$0.0000" not in md
    table = " ".join(report_of_adj().split())
    assert "unknown (openai/ja unpriced)" in table


def test_old_files_without_the_field_still_load_and_report(unpriced_project):
    from jury.verdicts.lock import content_hash, load_locked

    project, _ = unpriced_project
    path = project / "verdicts" / "adj.json"
    data = json.loads(path.read_text())
    del data["totals"]["unpriced_models"]  # as written before the field existed
    data["summary"]["cost_by_model"] = {k: (v or 0.0) for k, v in data["summary"]["cost_by_model"].items()}
    data["content_sha256"] = content_hash(data)
    old = project / "verdicts" / "old.json"
    old.write_text(json.dumps(data))
    assert load_locked(old).totals.unpriced_models is None
    res = report("--verdicts", str(old), "-f", "json")
    assert res.exit_code == 0, res.output
    m = {x["model"]: x for x in json.loads(res.stdout)["models"]}
    assert m["claude-y"]["adjudication_cost_usd"] is not None and m["claude-y"]["adjudication_unpriced_models"] == []


def test_audit_records_unpriced_jurors(tmp_path, monkeypatch, fake_llm):
    from jury.verdicts.lock import load_locked

    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror(set()))
    panel = write_panel(tmp_path, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    res = runner.invoke(app(), ["audit-gold", "gold.json", "--panel", str(panel), "-o", "verdicts/audit.json"])
    assert res.exit_code == 0, res.output
    doc = load_locked(tmp_path / "verdicts" / "audit.json")
    assert doc.totals.unpriced_models == sorted(f"openai/{n}" for n, _ in FIVE)
    assert "cost unknown" in " ".join(res.output.split())
