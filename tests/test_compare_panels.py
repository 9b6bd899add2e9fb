"""`jury compare-panels` and `jury.compare_panels` (issue 33 item 4): two hand-built audit
files with a known overlap give exactly the hand-derived shares and kappa (scikit-learn's
cohen_kappa_score and the Fleiss–Cohen–Everitt variance written out by hand as references),
through the command and the library; two adjudications of the same runs likewise; and the
one-line refusals (different gold or runs, another kind, a tampered lock, a file that is not
a verdict file)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

import jury
from tests.support.badinput import run_jury

JURORS = ("x", "y", "z")

# The two audits, by hand (question -> (A's label, B's label); "valid" or the defect type):
#   q1-q4 both wrong_filter, q5-q6 both wrong_join           6 shared, same type
#   q7-q8 A wrong_filter, B wrong_join                       2 shared, another type
#   q9-q11 only A (wrong_filter), q12-q13 only B (wrong_join)
#   q14-q20 both valid; q21 only in A's file (flagged): left out, counted
WF, WJ, OK = "wrong_filter", "wrong_join", "valid"
HAND = {
    **{q: (WF, WF) for q in range(1, 5)},
    **{q: (WJ, WJ) for q in (5, 6)},
    **{q: (WF, WJ) for q in (7, 8)},
    **{q: (WF, OK) for q in (9, 10, 11)},
    **{q: (OK, WJ) for q in (12, 13)},
    **{q: (OK, OK) for q in range(14, 21)},
}
ONLY_A = {21: WF}


def difficulty(q: int) -> str:
    return "simple" if q % 2 else "moderate"


def write_gold(folder: Path, name: str = "gold.json", extra: str = "") -> Path:
    items = [
        {"question_id": q, "db_id": "shop", "question": f"q{q}{extra}", "SQL": "SELECT 1", "difficulty": difficulty(q)}
        for q in range(1, 22)
    ]
    path = folder / name
    path.write_text(json.dumps(items))
    return path


def audit_votes(label: str, q: int) -> list[dict]:
    """Three votes that give ``label``: a flag by two of three (the third says valid) on odd
    questions, by all three on even ones; a valid question by three valid votes."""

    def v(j, cat, t=None):
        out = {"juror": j, "family": f"fam-{j}", "model": f"openai/{j}", "raw_verdict": cat, "category": cat}
        return {**out, "defect_type": t} if t else out

    if label == OK:
        return [v(j, OK) for j in JURORS]
    if q % 2:
        return [v("x", "defective", label), v("y", "defective", label), v("z", OK)]
    return [v(j, "defective", label) for j in JURORS]


def write_audit(folder: Path, name: str, labels: dict[int, str], gold: Path) -> Path:
    from jury.verdicts.lock import write_locked
    from jury.verdicts.verify import bind_file

    vdir = folder / "verdicts"
    records = [
        {
            "question_id": q,
            "db_id": "shop",
            "difficulty": difficulty(q),
            "jurors": list(JURORS),
            "votes": audit_votes(label, q),
            "flagged": label != OK,
            "decided": True,
            "defect_types": [] if label == OK else [label],
        }
        for q, label in labels.items()
    ]
    doc = {
        "kind": "audit",
        "jury_version": "test",
        "created_at": "2026-12-03T12:00:00Z",
        "inputs": {"gold": bind_file(gold, vdir).model_dump()},
        "prompts": {},
        "settings": {},
        "panel": {"name": f"panel-{name}", "ballot_style": "audit", "k": 3, "jurors": [{"name": j} for j in JURORS]},
        "totals": {},
        "records": records,
    }
    return write_locked(doc, vdir / name)


@pytest.fixture
def audits(tmp_path):
    gold = write_gold(tmp_path)
    a = write_audit(tmp_path, "a.json", {**{q: x for q, (x, _) in HAND.items()}, **ONLY_A}, gold)
    b = write_audit(tmp_path, "b.json", {q: y for q, (_, y) in HAND.items()}, gold)
    return tmp_path, a, b, gold


def fce_se_2x2(t) -> float:
    """Fleiss, Cohen & Everitt (1969), the large-sample SE of kappa, written out for 2 x 2."""
    n = sum(map(sum, t))
    p = [[x / n for x in row] for row in t]
    r = [sum(p[0]), sum(p[1])]
    c = [p[0][0] + p[1][0], p[0][1] + p[1][1]]
    pe = r[0] * c[0] + r[1] * c[1]
    k = (p[0][0] + p[1][1] - pe) / (1 - pe)
    diag = sum(p[i][i] * (1 - (r[i] + c[i]) * (1 - k)) ** 2 for i in (0, 1))
    off = (1 - k) ** 2 * (p[0][1] * (c[0] + r[1]) ** 2 + p[1][0] * (c[1] + r[0]) ** 2)
    return math.sqrt((diag + off - (k - pe * (1 - k)) ** 2) / (n * (1 - pe) ** 2))


def check_audit_numbers(out: dict) -> None:
    """The JSON of the comparison against the hand derivation above."""
    qs = sorted(HAND)
    la, lb = [HAND[q][0] for q in qs], [HAND[q][1] for q in qs]
    fa, fb = [x != OK for x in la], [y != OK for y in lb]
    overall = out["breakdowns"][0]
    assert (overall["stratum"], overall["n"], overall["missing"]) == ("all", 20, 1)
    assert out["records_only_in"] == {"a": 1, "b": 0}
    assert (overall["shared"], overall["only_a"], overall["only_b"], overall["unflagged"]) == (8, 3, 2, 7)
    assert (overall["flags_a"], overall["flags_b"]) == (11, 10)
    assert overall["shared_of_a"] == pytest.approx(8 / 11) and overall["shared_of_b"] == pytest.approx(8 / 10)
    flags, labels = overall["flags"], overall["labels"]
    assert (flags["agree"], flags["n"]) == (15, 20) and flags["agreement"] == pytest.approx(0.75)
    assert (labels["agree"], labels["n"]) == (13, 20) and labels["agreement"] == pytest.approx(0.65)
    # the flag's kappa by hand: p_o = 15/20, p_e = (11 * 10 + 9 * 10) / 20^2 = 0.5, so kappa = 0.5
    assert flags["kappa"] == pytest.approx(0.5, abs=1e-12) == pytest.approx(cohen_kappa_score(fa, fb), abs=1e-12)
    # the labels: p_o = 13/20, p_e = (9*4 + 2*6 + 9*10) / 400 = 0.345, kappa = 0.305 / 0.655
    assert labels["kappa"] == pytest.approx(0.305 / 0.655, abs=1e-12) == pytest.approx(cohen_kappa_score(la, lb), abs=1e-12)
    se = fce_se_2x2([[8, 3], [2, 7]])
    assert flags["kappa_se"] == pytest.approx(se, rel=1e-12)
    assert flags["kappa_wald_low"] == pytest.approx(0.5 - 1.959963984540054 * se, rel=1e-9)
    assert flags["kappa_low"] < 0.5 < flags["kappa_high"] and labels["kappa_low"] < labels["kappa"] < labels["kappa_high"]
    by = {(r["stratum"], r["value"]): r for r in out["breakdowns"]}
    # one type against the rest: A names wrong_filter on q1-4, 7-11 (9), B on q1-4 (4)
    wf = by[("defect type", WF)]
    assert (wf["shared"], wf["only_a"], wf["only_b"], wf["unflagged"]) == (4, 5, 0, 11)
    assert wf["flags"]["kappa"] == pytest.approx(cohen_kappa_score([x == WF for x in la], [y == WF for y in lb]))
    wj = by[("defect type", WJ)]
    assert (wj["shared"], wj["only_a"], wj["only_b"], wj["unflagged"]) == (2, 0, 4, 14)
    assert wf["labels"] is None and wj["labels"] is None
    for level in ("simple", "moderate"):
        row = by[("difficulty", level)]
        members = [i for i, q in enumerate(qs) if difficulty(q) == level]
        assert row["n"] == len(members) == 10
        assert row["labels"]["kappa"] == pytest.approx(cohen_kappa_score([la[i] for i in members], [lb[i] for i in members]))
        assert row["shared"] == sum(fa[i] and fb[i] for i in members)
    assert sum(by[("difficulty", x)]["only_a"] for x in ("simple", "moderate")) == 3
    # the disagreements: every question whose labels differ, with both panels' votes
    differ = [q for q in qs if HAND[q][0] != HAND[q][1]]
    assert [d["question_id"] for d in out["disagreements"]] == differ == [7, 8, 9, 10, 11, 12, 13]
    d7 = out["disagreements"][0]
    assert (d7["a"], d7["b"], d7["flag_differs"]) == (WF, WJ, False)
    assert d7["votes_a"] == ["x: defective (wrong_filter)", "y: defective (wrong_filter)", "z: valid"]
    assert d7["votes_b"] == ["x: defective (wrong_join)", "y: defective (wrong_join)", "z: valid"]
    assert out["disagreements"][2]["flag_differs"] is True


def test_two_audits_give_the_hand_derived_shares_and_kappa_through_the_command_and_the_library(audits):
    tmp, a, b, _gold = audits
    res = run_jury(["compare-panels", a, b, "-f", "json", "--resamples", "400"], tmp)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    check_audit_numbers(out)
    raw_a = json.loads(a.read_text())
    assert out["a"]["content_sha256"] == raw_a["content_sha256"] and out["a"]["records"] == 21
    found = jury.compare_panels(a, b, resamples=400)
    assert isinstance(found, jury.ComparedPanels) and json.loads(found.to_json()) == out
    check_audit_numbers(
        json.loads(jury.compare_panels(str(a), str(b), resamples=0).to_json()) | {"breakdowns": out["breakdowns"]}
    )
    assert found.overall["shared"] == 8


def test_the_table_says_the_shares_in_words_and_csv_and_markdown_hold_the_same_numbers(audits):
    tmp, a, b, _gold = audits
    table = run_jury(["compare-panels", a, b, "--resamples", "200"], tmp)
    assert table.returncode == 0, table.stderr
    text = table.stdout
    assert "8 shared, 3 only A, 2 only B, 7 neither; 8 of A's 11 (72.7 %), 8 of B's 10 (80.0 %)" in text
    assert "agreement on the flag: 15 of 20 (75.0 %); Cohen's kappa 0.500 [" in text
    assert "agreement on the labels: 13 of 20 (65.0 %); Cohen's kappa 0.466 [" in text
    assert "20 records in both files, 1 only in A (left out)" in text
    assert "7 records where the labels differ" in text
    rows = list(csv.DictReader(io.StringIO(run_jury(["compare-panels", a, b, "-f", "csv", "--resamples", "0"], tmp).stdout)))
    assert [(r["stratum"], r["value"]) for r in rows] == [
        ("all", "all"),
        ("defect type", WF),
        ("defect type", WJ),
        ("difficulty", "moderate"),
        ("difficulty", "simple"),
    ]
    assert (rows[0]["shared"], rows[0]["only_a"], rows[0]["only_b"]) == ("8", "3", "2")
    assert float(rows[0]["label_kappa"]) == pytest.approx(0.305 / 0.655) and rows[1]["label_kappa"] == ""
    assert rows[0]["flag_kappa_low"] == ""  # no bootstrap asked for: the FCE interval stands
    assert float(rows[0]["flag_kappa_wald_high"]) == pytest.approx(0.5 + 1.959963984540054 * fce_se_2x2([[8, 3], [2, 7]]))
    md = run_jury(["compare-panels", a, b, "-f", "md", "--resamples", "0"], tmp).stdout
    assert md.startswith("## Two panels compared\n")
    assert "| 7 | shop | simple | wrong_filter | wrong_join | x: defective (wrong_filter)<br>" in md.replace("| — |", "|")


def test_the_same_file_twice_agrees_fully(audits):
    tmp, a, _b, _gold = audits
    out = jury.compare_panels(a, a, resamples=0).overall
    assert out["only_a"] == out["only_b"] == 0 and out["labels"]["agreement"] == 1.0 and out["labels"]["kappa"] == 1.0


# ------------------------------------------------------------------ adjudications


def write_adjudication(folder: Path, name: str, verdicts: dict[tuple[str, int], str], gold: Path, runs: list[Path]) -> Path:
    from jury.verdicts.lock import write_locked
    from jury.verdicts.verify import bind_file
    from jury.vocab import CREDITED_VERDICTS

    vdir = folder / "verdicts"
    records = [
        {
            "question_id": q,
            "db_id": "shop",
            "model": model,
            "families": ["openai"],
            "jurors": list(JURORS),
            "votes": [
                {"juror": j, "family": f"fam-{j}", "model": f"anthropic/{j}", "order": "gold_first", "category": verdict}
                for j in JURORS
            ],
            "verdict": verdict,
            "credited": verdict in CREDITED_VERDICTS,
        }
        for (model, q), verdict in verdicts.items()
    ]
    doc = {
        "kind": "adjudication",
        "jury_version": "test",
        "created_at": "2026-12-03T12:00:00Z",
        "inputs": {"gold": bind_file(gold, vdir).model_dump(), "runs": [bind_file(r, vdir).model_dump() for r in runs]},
        "prompts": {},
        "settings": {},
        "panel": {"name": f"panel-{name}", "ballot_style": "blind", "k": 3, "jurors": [{"name": j} for j in JURORS]},
        "totals": {},
        "records": records,
    }
    return write_locked(doc, vdir / name)


GD, FE, GE, AM = "gold_defect", "format_equivalence", "genuine_error", "ambiguous"
ADJ = {  # (model, question) -> (A's verdict, B's verdict)
    ("m1", 1): (GD, GD),
    ("m1", 2): (GE, GE),
    ("m1", 3): (FE, GD),  # both credited, another verdict
    ("m1", 4): (GE, FE),  # credited only by B
    ("m2", 1): (GD, GD),
    ("m2", 2): (GE, GE),
    ("m2", 3): (AM, GE),
    ("m2", 4): (GD, GE),  # credited only by A
    ("m2", 5): (GE, GE),
}


@pytest.fixture
def adjudications(tmp_path):
    tmp_path = tmp_path / "adjudications"
    tmp_path.mkdir()
    gold = write_gold(tmp_path)
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps({"model": m, "question_id": q, "sql": "SELECT 2"}) + "\n" for m, q in ADJ))
    a = write_adjudication(tmp_path, "a.json", {k: x for k, (x, _) in ADJ.items()}, gold, [run])
    b = write_adjudication(tmp_path, "b.json", {k: y for k, (_, y) in ADJ.items()}, gold, [run])
    return tmp_path, a, b, gold, run


def test_two_adjudications_of_the_same_runs_agree_and_differ_per_verdict_and_model(adjudications):
    tmp, a, b, _gold, _run = adjudications
    res = run_jury(["compare-panels", a, b, "-f", "json", "--resamples", "300"], tmp)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    la, lb = [x for x, _ in ADJ.values()], [y for _, y in ADJ.values()]
    overall = out["breakdowns"][0]
    # credited: A on (m1,1), (m1,3), (m2,1), (m2,4); B on (m1,1), (m1,3), (m1,4), (m2,1)
    assert (overall["shared"], overall["only_a"], overall["only_b"], overall["unflagged"]) == (3, 1, 1, 4)
    assert overall["labels"]["agree"] == 5 and overall["labels"]["kappa"] == pytest.approx(cohen_kappa_score(la, lb))
    credited = {"gold_defect", "format_equivalence"}
    assert overall["flags"]["kappa"] == pytest.approx(cohen_kappa_score([x in credited for x in la], [y in credited for y in lb]))
    by = {(r["stratum"], r["value"]): r for r in out["breakdowns"]}
    assert [v for s, v in by if s == "verdict"] == [GD, FE, GE, AM]  # vocab order
    gd = by[("verdict", GD)]  # A: (m1,1), (m2,1), (m2,4); B: (m1,1), (m1,3), (m2,1)
    assert (gd["shared"], gd["only_a"], gd["only_b"]) == (2, 1, 1)
    m2 = by[("model", "m2")]
    assert m2["n"] == 5 and m2["labels"]["agree"] == 3
    assert {("difficulty", "simple"), ("difficulty", "moderate")} <= set(by)  # from the gold the files bind
    assert [(d["model"], d["question_id"]) for d in out["disagreements"]] == [("m1", 3), ("m1", 4), ("m2", 3), ("m2", 4)]


# ------------------------------------------------------------------ refusals: one line, exit 1


def one_line_error(res, *needles: str) -> str:
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in res.stderr, res.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert res.stdout == ""
    return lines[0]


def test_two_audits_of_different_gold_are_refused_naming_both(audits):
    tmp, a, _b, _gold = audits
    other = write_gold(tmp, "other.json", extra=" (edited)")
    c = write_audit(tmp, "c.json", {q: OK for q in HAND}, other)
    line = one_line_error(run_jury(["compare-panels", a, c], tmp), str(a), str(c), "different gold files", "other.json")
    with pytest.raises(jury.JuryError, match="different gold files"):
        jury.compare_panels(a, c)
    assert "gold.json" in line


def test_two_adjudications_of_different_runs_are_refused_naming_both(adjudications):
    tmp, a, _b, gold, _run = adjudications
    run2 = tmp / "run2.jsonl"
    run2.write_text(json.dumps({"model": "m1", "question_id": 1, "sql": "SELECT 3"}) + "\n")
    c = write_adjudication(tmp, "c.json", {("m1", 1): GD}, gold, [run2])
    one_line_error(run_jury(["compare-panels", a, c], tmp), str(a), str(c), "different runs", "run2.jsonl")


def test_an_audit_and_an_adjudication_are_refused(audits, adjudications):
    _tmp, audit, _b, _gold = audits
    tmp, adj, _b2, _gold2, _run = adjudications
    one_line_error(run_jury(["compare-panels", audit, adj], tmp), str(audit), str(adj), "an audit file", "an adjudication file")


def test_a_tampered_lock_is_refused_before_anything_is_compared(audits):
    tmp, a, b, _gold = audits
    data = json.loads(b.read_text())
    data["records"][0]["votes"][0]["reasoning"] = "edited after the lock"
    b.write_text(json.dumps(data, indent=2))
    one_line_error(run_jury(["compare-panels", a, b], tmp), str(b), "content hash mismatch")
    with pytest.raises(jury.JuryError, match="content hash mismatch"):
        jury.compare_panels(a, b)


def test_a_file_that_is_not_a_verdict_file_is_refused(audits):
    tmp, a, _b, gold = audits
    one_line_error(run_jury(["compare-panels", a, gold], tmp), str(gold))
    plain = tmp / "plain.json"
    plain.write_text('{"kind": "audit", "records": []}')
    one_line_error(run_jury(["compare-panels", plain, a], tmp), str(plain), "not locked")
    one_line_error(run_jury(["compare-panels", a, tmp / "nope.json"], tmp), "nope.json", "no such file")


def test_two_files_without_a_record_in_common_are_refused(audits):
    tmp, a, _b, gold = audits
    c = write_audit(tmp, "c.json", {30: OK, 31: WF}, gold)
    one_line_error(run_jury(["compare-panels", a, c], tmp), str(a), str(c), "no record in common")


def test_the_benchmarks_two_audit_panels_give_207_of_221_and_92_9_percent_in_one_command(tmp_path):
    """The benchmark's figures as two locked audits of 759 questions: B flags 221, A 236, 207
    shared; 11 of the shared name another defect type (the benchmark's own numbers, rebuilt
    as in tests/test_stats_panels.py), so the labels agree on 705 of 759 = 92.9 %."""
    types = ["sql_vs_question", "sql_vs_data", "domain_knowledge"]
    pairs = [(types[i % 3], types[i % 3]) for i in range(196)] + [(types[i % 3], types[(i + 1) % 3]) for i in range(11)]
    pairs += [(types[i % 3], OK) for i in range(29)] + [(OK, types[i % 3]) for i in range(14)] + [(OK, OK)] * 509
    gold = write_gold(tmp_path)
    a = write_audit(tmp_path, "a.json", {q: x for q, (x, _) in enumerate(pairs, 1)}, gold)
    b = write_audit(tmp_path, "b.json", {q: y for q, (_, y) in enumerate(pairs, 1)}, gold)
    res = run_jury(["compare-panels", a, b, "--resamples", "200"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "207 shared, 29 only A, 14 only B, 509 neither; 207 of A's 236 (87.7 %), 207 of B's 221 (93.7 %)" in res.stdout
    assert "agreement on the labels: 705 of 759 (92.9 %)" in res.stdout
    assert "agreement on the flag: 716 of 759 (94.3 %)" in res.stdout
    assert "54 records where the labels differ" in res.stdout


def test_an_output_over_an_input_is_refused_and_a_written_file_holds_the_rendering(adjudications):
    tmp, a, b, gold, _run = adjudications
    before = gold.read_bytes()
    one_line_error(run_jury(["compare-panels", a, b, "-o", gold], tmp), str(gold), "input")
    assert gold.read_bytes() == before
    one_line_error(run_jury(["compare-panels", a, b, "-o", b], tmp), str(b))
    out = tmp / "cmp.json"
    res = run_jury(["compare-panels", a, b, "-f", "json", "-o", out, "--resamples", "0"], tmp)
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text()) == json.loads(jury.compare_panels(a, b, resamples=0).to_json())


def test_undecided_is_a_label_not_a_flag_and_markdown_escapes_what_the_files_say(tmp_path):
    """An audit record whose abstentions left no majority is "undecided": it differs from
    "valid" on the labels, not on the flag. A defect type is the file's text: Markdown shows it
    HTML-escaped with its pipe escaped."""
    from jury.verdicts.lock import write_locked

    gold = write_gold(tmp_path)
    odd = "a<b>|c"
    a = write_audit(tmp_path, "a.json", {1: OK, 2: odd, 3: OK}, gold)
    b_path = write_audit(tmp_path, "b0.json", {1: OK, 2: odd, 3: OK}, gold)
    data = json.loads(b_path.read_text())
    data.pop("content_sha256")
    rec = data["records"][0]  # question 1: one defective vote, two abstentions: no majority either way
    rec["votes"] = [audit_votes(WF, 2)[0], *({**v, "abstained": True, "reason": "unparseable"} for v in audit_votes(OK, 1)[1:])]
    for v in rec["votes"][1:]:
        v.pop("category"), v.pop("raw_verdict")
    rec["decided"], rec["defect_types"] = False, [WF]  # the types of its defective votes, flagged or not
    b = write_locked(data, tmp_path / "verdicts" / "b.json")
    out = jury.compare_panels(a, b, resamples=0)
    overall = out.overall
    assert (overall["shared"], overall["only_a"], overall["only_b"], overall["unflagged"]) == (1, 0, 0, 2)
    assert overall["flags"]["agreement"] == 1.0 and overall["labels"]["agree"] == 2
    assert [(d["question_id"], d["a"], d["b"], d["flag_differs"]) for d in out.disagreements] == [(1, OK, "undecided", False)]
    assert out.disagreements[0]["votes_b"][1:] == ["y: abstained", "z: abstained"]
    md = out.render("md")
    assert "a&lt;b&gt;\\|c" in md and "<b>" not in md
