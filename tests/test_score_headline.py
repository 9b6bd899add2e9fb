"""The headline column of `jury score` is the chosen comparator's k/n in every format.

Issue 42.1: the CSV, Markdown and table printed strict's accuracy under the chosen comparator's
heading (a key collision in score_rows): "106 | 0.845" under subset, where 106/129 = 0.822.
The expected numbers come from the per-question output (one boolean per comparator and pair),
counted here, not from the score table."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from tests.support.badinput import run_jury
from tests.support.helpers import EXAMPLE


def _per_question_counts(store, tmp_path, comparator: str) -> dict[str, tuple[int, int]]:
    """(matches under ``comparator``, routed) per model, counted from --per-question's lines."""
    out = tmp_path / f"pq-{comparator}.jsonl"
    res = run_jury(["score", "run.jsonl", "--store", store, "--comparator", comparator, "--per-question", out], EXAMPLE)
    assert res.returncode == 0, res.stderr
    counts: dict[str, list[int]] = {}
    for line in out.read_text().splitlines():
        p = json.loads(line)
        k_n = counts.setdefault(p["model"], [0, 0])
        if p["routed"] and p["outcome"] != "gold_error":
            k_n[0] += bool(p[comparator])
            k_n[1] += 1
    return {m: (k, n) for m, (k, n) in counts.items()}


@pytest.mark.parametrize("comparator", ["subset", "bird", "strict"])
def test_every_format_prints_the_chosen_comparators_k_over_n(example_store, tmp_path, comparator):
    truth = _per_question_counts(example_store, tmp_path, comparator)
    if comparator == "subset":  # the case the collision broke: subset differs from strict on this example
        strict = _per_question_counts(example_store, tmp_path, "strict")
        assert any(truth[m][0] != strict[m][0] for m in truth)

    def score(fmt: str) -> str:
        res = run_jury(["score", "run.jsonl", "--store", example_store, "--comparator", comparator, "-f", fmt], EXAMPLE)
        assert res.returncode == 0, res.stderr
        return res.stdout

    rows = list(csv.DictReader(io.StringIO(score("csv"))))
    assert {r["model"] for r in rows} == set(truth)
    for r in rows:
        k, n = truth[r["model"]]
        assert r["comparator"] == comparator
        assert (int(r["matches"]), int(r["routed"])) == (k, n)
        assert float(r["accuracy"]) == pytest.approx(k / n, abs=1e-12)
        assert float(r[f"{comparator}_accuracy"]) == pytest.approx(k / n, abs=1e-12)
        assert float(r["accuracy_low"]) < k / n < float(r["accuracy_high"])

    models = json.loads(score("json"))["models"]
    assert {m["model"]: (m["strict"]["k"], m["strict"]["n"]) for m in models} == truth

    # the Markdown and the table: "| model | questions | k | 0.822 [...] |" under "<comparator> acc [95% CI]"
    for fmt, sep in (("md", "|"), ("table", "│")):
        text = score(fmt)
        assert f"{comparator} acc [95% CI]" in text
        seen = 0
        for model, (k, n) in truth.items():
            line = next(x for x in text.splitlines() if re.match(rf"\s*[{sep}]\s*{re.escape(model)}\s*[{sep}]", x))
            cells = [c.strip() for c in line.strip().strip(sep).split(sep)]
            i = cells.index(str(k))  # matches, then the headline interval
            assert cells[i + 1].startswith(f"{k / n:.3f} ["), (fmt, model, cells)
            seen += 1
        assert seen == len(truth)


@pytest.mark.parametrize("comparator", ["subset", "strict"])
def test_the_reports_strict_heading_names_another_comparator(example_store, comparator):
    """`jury report --comparator subset` counts subset matches in its strict column: its heading
    says so in the table and Markdown ("strict: subset"); the default keeps "strict"."""
    for fmt in ("table", "md"):
        res = run_jury(["report", "run.jsonl", "--store", example_store, "--comparator", comparator, "-f", fmt], EXAMPLE)
        assert res.returncode == 0, res.stderr
        named = "strict: subset [95% CI] rank" in res.stdout
        assert named is (comparator == "subset") and "strict" in res.stdout
