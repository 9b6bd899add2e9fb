"""Per-model error-category counts of adjudication files made with --taxonomy.

A record counts under its error_category (the majority pick of its genuine-error votes);
a genuine error without a majority pick counts as "no majority".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import InputError
from jury.results.render import Cell, safe, to_markdown, to_rich_table
from jury.results.report.model import ErrorCategories
from jury.results.suites import SuiteErrorCounts, suite_test_key
from jury.vocab import Verdict

if TYPE_CHECKING:
    from rich.console import Console

    from jury.judging.taxonomies import Taxonomy
    from jury.verdicts.documents import AdjudicationFile

NO_PICK = "no majority"


def category_counts(adj_docs: Iterable[tuple[str | Path, AdjudicationFile]]) -> dict[str, Any] | None:
    """{"taxonomy": name, "categories": [ids], "models": {model: {id: n, NO_PICK: n}}} over the
    failures (not reviewed passes) of the files made with a taxonomy; None when none was.
    Files made with different taxonomies cannot be counted together (InputError)."""
    out: dict[str, Any] | None = None
    for path, doc in adj_docs:
        tax = doc.settings.get("taxonomy")
        if not isinstance(tax, dict):
            continue
        if out is None:
            out = {"taxonomy": tax["name"], "categories": list(tax["categories"]), "models": {}}
        elif out["taxonomy"] != tax["name"]:
            raise InputError(
                f"{path}: made with taxonomy {tax['name']!r}, another file with {out['taxonomy']!r}: their error "
                "categories cannot be counted together"
            )
        for r in doc.records:
            if r.review_pass or r.verdict != Verdict.GENUINE_ERROR.value:
                continue
            row = out["models"].setdefault(r.model, dict.fromkeys([*out["categories"], NO_PICK], 0))
            row[r.error_category or NO_PICK] += 1
    return out


def _rows(counts: ErrorCategories) -> tuple[list[dict[str, Cell]], list[str], list[str]]:
    cols = [*counts.categories, NO_PICK]
    rows: list[dict[str, Cell]] = [{"model": m, **row, "total": sum(row.values())} for m, row in counts.models.items()]
    return rows, ["model", *cols, "total"], ["model", *cols, "genuine errors"]


def categories_markdown(counts: ErrorCategories | None) -> str:
    """The report's error-category section as Markdown ("" without a --taxonomy file)."""
    if not counts:
        return ""
    rows, cols, heads = _rows(counts)
    title = f"\n### error categories of genuine errors ({safe(counts.taxonomy)})\n\n"
    return title + to_markdown(rows, cols, heads) + f"- {NOTE}\n"


def print_categories(console: Console, counts: ErrorCategories | None) -> None:
    """The report's error-category section as a rich table on ``console`` (nothing without one)."""
    if not counts:
        return
    rows, cols, heads = _rows(counts)
    console.print(to_rich_table(rows, cols, heads, title=f"error categories of genuine errors ({counts.taxonomy})"))
    console.print(NOTE, markup=False)


NOTE = (
    "a genuine_error verdict counts under the category a strict majority of its genuine-error votes picked; "
    f'"{NO_PICK}": none did'
)


UNCLASSIFIED = "unclassified"


def suite_error_counts(
    records: Sequence[Any], taxonomy: Taxonomy, jurors: Mapping[tuple[Any, ...], str | None] | None = None
) -> SuiteErrorCounts:
    """Test-suite runs: per model, its failing tests that raised an error, by the category the
    taxonomy's rules give the error string (jury.judging.taxonomies.Taxonomy.classify);
    "unclassified" when no rule, or rules of two categories, match. Reference failures
    (``reference_error``) are left out, as from the metrics. Every count comes from rules.

    ``jurors`` (from `jury suites --classify` verdicts: test key -> the jurors' majority
    category or None) classifies the errors the rules leave: such a test counts under its
    category, or under "no majority" when the jurors reached none; "by_source" then splits
    each model's counts into those from the rules and those from the jurors."""

    out: SuiteErrorCounts = {"taxonomy": taxonomy.name, "categories": list(taxonomy.ids), "source": "rules", "models": {}}
    buckets = [*taxonomy.ids, UNCLASSIFIED] if jurors is None else [*taxonomy.ids, NO_PICK, UNCLASSIFIED]
    if jurors is not None:
        out["source"] = "rules and jurors"
        out["by_source"] = {}
    for r in records:
        if r.tests is None or r.reference_error:
            continue
        row = out["models"].setdefault(r.model, dict.fromkeys(buckets, 0))
        if jurors is not None:
            split = out["by_source"].setdefault(
                r.model, {"rules": dict.fromkeys(taxonomy.ids, 0), "jurors": dict.fromkeys([*taxonomy.ids, NO_PICK], 0)}
            )
        for t in r.tests:
            if t.passed or t.error is None:
                continue
            by_rule = taxonomy.classify(t.error)
            key = suite_test_key(r.model, r.question_id, r.episode, r.turn, t.name)
            if by_rule is not None:
                row[by_rule] += 1
                if jurors is not None:
                    split["rules"][by_rule] += 1
            elif jurors is not None and key in jurors:
                picked = jurors[key] or NO_PICK
                row[picked] += 1
                split["jurors"][picked] += 1
            else:
                row[UNCLASSIFIED] += 1
    return out


def suite_counts_note(counts: SuiteErrorCounts) -> str:
    """The suite report's lines of error categories: from the rules, and with --classify
    verdicts, how many of each came from the rules and how many from the jurors."""
    if "by_source" not in counts:
        lines = [f"error categories of failing tests with an error ({counts['taxonomy']}; from the taxonomy's rules):"]
        for model, row in counts["models"].items():
            lines.append(f"  {model}: " + ", ".join(f"{k} {v}" for k, v in row.items()))
        return "\n".join(lines)
    lines = [
        f"error categories of failing tests with an error ({counts['taxonomy']}; from the taxonomy's rules, the rest "
        f"from the jurors' majority; {NO_PICK}: the jurors reached no category):"
    ]
    for model, row in counts["models"].items():
        split = counts["by_source"][model]
        parts = []
        for k, v in row.items():
            origin = [f"{src} {split[src][k]}" for src in ("rules", "jurors") if split[src].get(k)]
            parts.append(f"{k} {v}" + (f" ({', '.join(origin)})" if origin else ""))
        lines.append(f"  {model}: " + ", ".join(parts))
    return "\n".join(lines)
