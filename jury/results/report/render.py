"""`jury report`'s output: the report as table, csv, json or md (:func:`render_report`).

Pure: reads the ``ReportDocument`` :func:`jury.results.report.build.build_report` returns (or its JSON
dict) and formats it, the flat CSV rows, the main and oracle-routing tables, the rank-stability
table and the notes under them; computes nothing.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from jury.errors import InputError
from jury.results.columns import Proportion
from jury.results.corrected import PeopleAnchored, corrected_text
from jury.results.render import UNWRAPPED_WIDTH, Cell, cell, interval, safe, to_csv, to_json, to_markdown, to_rich_table
from jury.results.report.agreement import agreement_markdown, print_agreement
from jury.results.report.model import (
    AdjudicatedJury,
    AuditClassFile,
    Correlation,
    GoldCleanJury,
    JurorRetest,
    LatentClassFile,
    ModelRank,
    ModelRow,
    OracleRow,
    PeopleDependence,
    ReportDocument,
    TwoSided,
)
from jury.results.report.taxonomy import categories_markdown, print_categories
from jury.results.scoring import gold_errors_line, unanswered_summary
from jury.stats.core import ordinal
from jury.vocab import COLUMNS, COMPOSITION, Column

# ------------------------------------------------------------------ rows and rendering

Bounds = Proportion | TwoSided


def as_report(report: ReportDocument | dict[str, Any]) -> ReportDocument:
    """The report as a ``ReportDocument``; a dict (say, a report read back from JSON) is validated
    against ``ReportDocument`` first."""
    return report if isinstance(report, ReportDocument) else ReportDocument.model_validate(report)


def as_report_dict(report: ReportDocument | dict[str, Any]) -> dict[str, Any]:
    """The report as the JSON dict ``--format json`` writes (a dict is validated first)."""
    return as_report(report).model_dump(mode="json")


def _bounds(p: Bounds | None) -> str:
    """A proportion as "0.845 [0.773, 0.897]"; "—" when it has no value."""
    if p is None or p.value is None or p.low is None or p.high is None:
        return "—"
    return f"{p.value:.3f} [{p.low:.3f}, {p.high:.3f}]"


def _column(row: ModelRow | OracleRow, column: str) -> tuple[Proportion | None, int | None]:
    """A row's proportion in one of COLUMNS and its rank."""
    if column == Column.STRICT:
        return row.strict, row.strict_rank
    if column == Column.GOLD_CLEAN:
        return row.gold_clean, row.gold_clean_rank
    return row.adjudicated, row.adjudicated_rank


def _review_cells(row: ModelRow) -> dict[str, Cell]:
    """A report row's review of passes as flat CSV cells (empty without --review-passes)."""
    review, both = row.pass_review, row.two_sided_adjudicated
    rate = review.false_pass_rate if review is not None else None
    cells: dict[str, Cell] = {
        "reviewed_passes": None if review is None else review.sampled,
        "false_passes": None if review is None else review.false_passes,
    }
    for name, source in (("false_pass_rate", rate), ("two_sided_adjudicated", both)):
        cells.update(
            {
                name: None if source is None else source.value,
                f"{name}_low": None if source is None else source.low,
                f"{name}_high": None if source is None else source.high,
            }
        )
    return cells


def _report_row(r: ModelRow, missing: str | None) -> dict[str, Cell]:
    row: dict[str, Cell] = {
        "model": r.model,
        "families": ";".join(r.families),
        "questions": r.questions,
        "routed": r.routed,
        "routing_accuracy": r.routing_accuracy,
    }
    for c in COLUMNS:
        p, rank = _column(r, c)
        row.update(
            {
                f"{c}_k": None if p is None else p.k,
                f"{c}_n": None if p is None else p.n,
                f"{c}_accuracy": None if p is None else p.value,
                f"{c}_low": None if p is None else p.low,
                f"{c}_high": None if p is None else p.high,
                f"{c}_rank": rank,
            }
        )
    row["rank_shift"], row["rank_delta"] = r.rank_shift, r.rank_delta
    row["jury_reached"] = r.jury_reached
    row.update({c: getattr(r.composition, c) for c in COMPOSITION})
    row.update({f"{c}_pct": getattr(r.composition_pct, c) for c in COMPOSITION})
    row["gold_defect_share"] = r.gold_defect_share
    row["near_miss"] = r.near_miss
    row["not_executed"] = r.not_executed
    row["challenging_share"] = r.challenging_share
    row["mean_difficulty"] = r.mean_difficulty
    row["adjudication_cost_usd"] = r.adjudication_cost_usd
    row["adjudication_unpriced_models"] = ";".join(r.adjudication_unpriced_models)
    row.update(_review_cells(r))
    row.update({"gold_questions": r.gold_questions, "answered": r.answered})
    row["missing_rule"] = missing
    if r.gold_clean_jury is not None:  # with audit files only (jury.results.report.audit_fit)
        row.update(
            _jury_csv(Column.GOLD_CLEAN, r.gold_clean_jury, "expected_flag_changes", r.gold_clean_jury.expected_flag_changes)
        )
    if r.adjudicated_jury is not None:  # with adjudication files only (jury.results.report.latent)
        j = r.adjudicated_jury
        row.update(_jury_csv(Column.ADJUDICATED, j, "expected_credit_changes", j.expected_credit_changes))
    if r.adjudicated_people is not None:  # with a review sample only (jury.results.corrected)
        a = r.adjudicated_people
        row.update({"adjudicated_people": a.value, "adjudicated_people_low": a.low, "adjudicated_people_high": a.high})
    if r.execution_errors is not None:  # Spider 2.0-AIFunc's execution-error rate (absent from older reports)
        row.update({"execution_errors": r.execution_errors.k, "execution_error_rate": r.execution_errors.value})
    return row


def _jury_csv(column: Column, j: AdjudicatedJury | GoldCleanJury, changes: str, value: float) -> dict[str, Cell]:
    """A column's questions + jury cells of the CSV: expected, interval, expected changes, rank interval."""
    return {
        f"{column}_expected": j.expected,
        f"{column}_jury_low": j.low,
        f"{column}_jury_high": j.high,
        changes: value,
        f"{column}_jury_rank_low": j.rank.low if j.rank is not None else None,
        f"{column}_jury_rank_high": j.rank.high if j.rank is not None else None,
    }


def _repeat_cells(report: ReportDocument) -> dict[str, dict[str, Cell]]:
    """Per model, its column's spread over repeats (repeat_stability; a model's first file with
    repeats): mean, SD and range of the adjudicated and gold-clean values; empty without repeats."""
    r = report.repeat_stability
    if r is None:
        return {}
    spreads: list[tuple[str, Sequence[Any]]] = [("adjudicated", f.column) for f in r.files]
    spreads += [("gold_clean", f.column) for f in r.audits or []]
    names = sorted({c for c, _ in spreads}, key=[Column.ADJUDICATED.value, Column.GOLD_CLEAN.value].index)
    out: dict[str, dict[str, Cell]] = {}
    for m in report.models:
        cells: dict[str, Cell] = {}
        for column in names:
            col = next((c for name, cols in spreads if name == column for c in cols if c.model == m.model), None)
            for key in ("mean", "sd", "low", "high"):
                cells[f"{column}_repeats_{key}"] = None if col is None else getattr(col, key)
        out[m.model] = cells
    return out


def report_rows(report: ReportDocument | dict[str, Any]) -> list[dict[str, Cell]]:
    """One flat row per model (the CSV): interval bounds in their own columns; with repeated
    panels, each column's spread over the repeats."""
    typed = as_report(report)
    repeats = _repeat_cells(typed)
    return [{**_report_row(r, typed.settings.missing), **repeats.get(r.model, {})} for r in typed.models]


def render_report(report: ReportDocument | dict[str, Any], fmt: str, *, width: int | None = None, wide: bool = True) -> str:
    """The report as table, csv, json or md. ``width``: the table width (None: unwrapped);
    ``wide``: the table and md also show the near-miss and not-executed counts."""
    typed = as_report(report)
    if fmt == "json":
        return to_json(typed.model_dump(mode="json"))
    if fmt == "csv":
        rows = report_rows(typed)
        return to_csv(rows, list(rows[0]) if rows else [])
    if fmt not in ("table", "md"):
        raise InputError(f"unknown format {fmt!r}; choose one of: table, csv, json, md")
    main_cols, main_heads, main = _main_table(typed)
    if not wide:  # `jury report --wide` shows them; csv and json always do
        keep = [i for i, c in enumerate(main_cols) if c not in ("near_miss", "not_executed")]
        main_cols, main_heads = [main_cols[i] for i in keep], [main_heads[i] for i in keep]
    ocols, oheads, orows = _oracle_table(typed)
    notes = _notes(typed)
    oracle_title = (
        f"oracle routing: the {typed.oracle_routing.questions} questions every model routed correctly (one denominator)"
    )
    stability = rank_stability_table(typed)
    if fmt == "md":
        return (
            "## jury report\n\n"
            + to_markdown(main, main_cols, main_heads)
            + "\n"
            + "\n".join(f"- {n}" for n in notes)
            + "\n\n### "
            + oracle_title
            + "\n\n"
            + to_markdown(orows, ocols, oheads)
            + ("" if stability is None else f"\n### {stability[0]}\n\n" + to_markdown(stability[3], stability[1], stability[2]))
            + agreement_markdown(typed.agreement)
            + categories_markdown(typed.error_categories)
            + corrected_text(typed.corrected, fmt)
        )

    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or UNWRAPPED_WIDTH, soft_wrap=width is None, highlight=False)
    console.print(to_rich_table(main, main_cols, main_heads, title="jury report"))
    for n in notes:
        console.print(safe(n), markup=False)
    console.print(to_rich_table(orows, ocols, oheads, title=oracle_title))
    if stability is not None:
        console.print(to_rich_table(stability[3], stability[1], stability[2], title=stability[0]))
    print_agreement(console, typed.agreement)
    print_categories(console, typed.error_categories)
    return buffer.getvalue() + corrected_text(typed.corrected, fmt)


def dollars(x: float | None) -> str:
    """ "$1,234.56", "$0.0123" (cents are not enough below a dollar), or "—"."""
    return "—" if x is None else f"${x:,.2f}" if x >= 1 else f"${x:.4f}"


def _cost_text(row: ModelRow) -> str:
    """The jury cost cell: dollars, or "unknown (x unpriced)" when litellm could not price a juror."""
    unpriced = row.adjudication_unpriced_models
    if row.adjudication_cost_usd is None and unpriced:
        return f"unknown ({', '.join(unpriced)} unpriced)"
    return dollars(row.adjudication_cost_usd)


def _jury_bounds(j: AdjudicatedJury | GoldCleanJury | None) -> str:
    """The expected adjudicated (gold-clean) value and its questions + jury interval: "0.845 [0.760, 0.910]"."""
    if j is None or j.expected is None:
        return "—"
    if j.low is None or j.high is None:
        return f"{j.expected:.3f} [—]"
    return f"{j.expected:.3f} [{j.low:.3f}, {j.high:.3f}]"


def _people_bounds(a: PeopleAnchored | None) -> str:
    """The adjudicated accuracy corrected by people and its interval: "0.845 [0.760, 0.910]"."""
    if a is None or a.value is None:
        return "—"
    return f"{a.value:.3f} [—]" if a.low is None or a.high is None else f"{a.value:.3f} [{a.low:.3f}, {a.high:.3f}]"


def uncertainty_notes(report: ReportDocument) -> list[str]:
    """The questions + jury lines: how the interval was drawn, then one line per adjudication
    file (its fit's juror accuracies and the records whose latent verdict differs, or why the
    fit was refused) with its dependence line; then the same for the audit files (:func:`audit_notes`)."""
    return _adjudication_notes(report) + audit_notes(report)


def _adjudication_notes(report: ReportDocument) -> list[str]:
    u = report.adjudication_uncertainty
    if u is None:
        return []
    lines = [
        f"{Column.ADJUDICATED.label} expected [questions + jury 95%]: a Dawid-Skene fit of each verdict file's votes; "
        f"{u.resamples:,} resamples of the questions (seed {u.seed}), every jury verdict drawn from its latent-class "
        f"posterior (joint parameter draws for a file under {u.joint_below} records); the published value stays the "
        "majority rule; expected credit changes = expected records whose credit is not the published rule's"
    ]
    for f in u.files:
        if not f.fitted:
            lines.append(
                f"latent-class fit of {f.path} refused ({f.refused}): published rule kept, its verdicts taken as certain"
            )
            continue
        accuracy = ", ".join(f"{j.juror} {j.accuracy:.2f}" for j in f.jurors)
        lines.append(
            f"latent-class fit of {f.path} ({f.records} records, {f.draws} draws"
            + (f", {f.anchors} anchored by people" if f.anchors else "")
            + f"): juror accuracy {accuracy}; "
            f"latent verdict differs from the majority on {len(f.differs)} records; "
            f"expected verdict changes {f.expected_changes or 0:.1f}, credit changes {f.expected_credit_changes or 0:.1f}"
        )
        lines.append(f"{f.path}: {dependence_line(f)}")
        if f.people_dependence is not None:
            lines.append(f"{f.path}: {people_dependence_line(f.people_dependence)}")
    return lines


DIFFERS_LISTED = 20
"""The text report lists at most this many of an audit file's questions whose latent flag differs."""


def _flag_differs(f: AuditClassFile) -> str:
    """ "q3 (defective → valid: ja defective, jb valid, jc —), ..." for the first DIFFERS_LISTED."""
    shown = [
        f"{d.question_id} ({d.published} → {d.latent}: " + ", ".join(f"{v.juror} {v.category or '—'}" for v in d.votes) + ")"
        for d in f.differs[:DIFFERS_LISTED]
    ]
    more = len(f.differs) - len(shown)
    return "; ".join(shown) + (f"; and {more} more (--format json)" if more > 0 else "")


def audit_notes(report: ReportDocument) -> list[str]:
    """The gold-clean column's questions + jury lines: how the interval was drawn, then per audit
    file its fit's juror accuracies and the questions whose latent flag differs from the
    published one, with their votes (or why the fit was refused), and its dependence line."""
    u = report.audit_uncertainty
    if u is None:
        return []
    lines = [
        f"{Column.GOLD_CLEAN.label} expected [questions + jury 95%]: a Dawid-Skene fit of each audit file's valid/defective "
        f"votes; {u.resamples:,} resamples of the questions (seed {u.seed}), every audited question's flag drawn from its "
        f"latent-class posterior ({u.draws} draws); the published value stays the majority rule; expected flag changes = "
        "expected questions whose flag is not the published one",
        f"{Column.GOLD_CLEAN.label} questions + jury assumes that whether a model matched a gold says nothing more about "
        "the gold than the auditors' votes do: where models match defective golds less often (the usual case) it is too "
        "narrow, as the published interval is (docs/report.md)",
    ]
    for f in u.files:
        name = f.path or "the audit"
        if not f.fitted:
            lines.append(f"latent-class fit of {name} refused ({f.refused}): published flags kept, taken as certain")
            continue
        accuracy = ", ".join(f"{j.juror} {j.accuracy:.2f}" for j in f.jurors)
        differs = f": {_flag_differs(f)}" if f.differs else ""
        lines.append(
            f"latent-class fit of {name} ({f.records} gold queries): juror accuracy {accuracy}; expected flag changes "
            f"{f.expected_changes or 0:.1f}; latent flag differs from the published one on {len(f.differs)} questions{differs}"
        )
        lines.append(f"{name}: {dependence_line(f)}")
    return lines


def _retest_kappa(j: JurorRetest) -> str:
    if j.kappa is None:
        return f"{j.juror} —"
    return f"{j.juror} {j.kappa:.2f}" + (f" [{j.low:.2f}, {j.high:.2f}]" if j.low is not None and j.high is not None else "")


def _retest(repeats: int, jurors: Sequence[JurorRetest], what: str = "") -> str:
    """ "test-retest Cohen's kappa [95% bootstrap] ja 0.47 [...], jb 1.00" (Fleiss' kappa for R > 2)."""
    how = "Cohen's kappa [95% bootstrap]" if repeats == 2 else "Fleiss' kappa"
    return f"test-retest {how}{what} " + ", ".join(_retest_kappa(j) for j in jurors)


def _spread(column: Sequence[Any]) -> str:
    """A column's spread over repeats: "model mean ± SD (range low–high)" per model with all four."""
    return "; ".join(
        f"{col.model} {col.mean:.3f} ± {col.sd:.3f} (range {col.low:.3f}–{col.high:.3f})"
        for col in column
        if col.mean is not None and col.sd is not None and col.low is not None and col.high is not None
    )


def repeat_notes(report: ReportDocument) -> list[str]:
    """Per adjudication file asked R >= 2 times: its jurors' test-retest kappa, the verdicts
    that change between repeats and the adjudicated column's spread; per audit file asked R >= 2
    times: its jurors' test-retest kappa on their flag votes, the flags that change and the
    gold-clean column's spread (jury.results.report.repeats)."""
    s = report.repeat_stability
    if s is None:
        return []
    lines = []
    for f in s.files:
        c = f.verdicts_changed
        lines.append(
            f"repeats of {f.path} (R = {f.repeats}; published verdicts are repeat 0's): {_retest(f.repeats, f.jurors)}"
            + f"; verdicts that change between repeats {c.k}/{c.n} ({interval(c.model_dump())})"
        )
        spread = _spread(f.column)
        if spread:
            lines.append(f"{Column.ADJUDICATED.label} over the repeats of {f.path} (mean ± SD): {spread}")
    for a in s.audits or []:
        c, rate = a.flags_changed, a.flag_rate
        shares = "/".join("—" if x is None else f"{x:.3f}" for x in rate.values)
        lines.append(
            f"repeats of {a.path} (R = {a.repeats}; published flags are repeat 0's): "
            + _retest(a.repeats, a.jurors, " on flag votes")
            + f"; flags that change between repeats {c.k}/{c.n} ({interval(c.model_dump())}); share flagged per repeat {shares}"
        )
        spread = _spread(a.column)
        if spread:
            lines.append(f"{Column.GOLD_CLEAN.label} over the repeats of {a.path} (mean ± SD): {spread}")
    return lines


def dependence_line(f: LatentClassFile | AuditClassFile) -> str:
    """Whether the file's jurors err together (jury.stats.dependence), in one sentence."""
    d = f.dependence
    if d is None or d.p_value is None:
        need = "" if d is None else f" (no pair of jurors shares {d.min_common} records)"
        return f"jurors erring together not checked{need}"
    if d.p_value < d.alpha:
        pair = next((p for p in d.pairs if d.largest and p.jurors == d.largest), None)
        where = "" if pair is None else f" (largest excess: {pair.jurors[0]}\u2013{pair.jurors[1]} {pair.excess:+.2f})"
        return (
            f"jurors err together? p = {d.p_value:.3f}{where}: the questions + jury interval assumes they do not; "
            "read it as too narrow"
        )
    return f"no sign of jurors erring together (p = {d.p_value:.2f})"


def people_dependence_line(d: PeopleDependence) -> str:
    """Whether the jurors err together on the records people labelled, in one sentence."""
    if d.p_value is None:
        return "jurors erring together not checked against people (no labelled record has two votes)"
    p = "p < 0.001" if d.p_value < 0.001 else f"p = {d.p_value:.3f}"
    seen = f"{d.observed} pairs of jurors agreed on a wrong answer where {d.expected:.1f} were expected"
    if d.p_value < d.alpha:
        return (
            f"checked against people on {d.records} records, jurors err together: {seen} ({p}); "
            "the questions + jury interval is too narrow, the interval corrected by people is the one to read"
        )
    return f"checked against people on {d.records} records, no sign of jurors erring together: {seen} ({p})"


def _interval(p: Proportion | None, rank: int | None = None) -> str:
    text = _bounds(p)
    return text + (f" {ordinal(rank)}" if rank and text != "—" else "")


def _present(rows: Sequence[ModelRow | OracleRow], column: str) -> bool:
    return any(_column(r, column)[0] is not None for r in rows)


def _short(report: ReportDocument) -> bool:
    """Whether some model's run answers fewer than all the gold's questions."""
    return any(r.answered is not None and r.gold_questions is not None and r.answered < r.gold_questions for r in report.models)


def coverage_note(report: ReportDocument) -> str | None:
    """Every model's coverage in one line when all are complete; else what the rule did."""
    rows = [r for r in report.models if r.answered is not None]
    if not rows:
        return None
    if not _short(report):
        return f"coverage: every model answered all {rows[0].gold_questions:,} gold questions"
    fail = report.settings.missing == "fail"
    counts = [r.counted_wrong if fail else r.left_out for r in rows]
    rule = f"--missing {'fail' if fail else 'exclude'}"
    if any(c is None for c in counts):  # a report of an older jury: the rule only
        return f"coverage: see answered/gold; {rule} (which unanswered questions it left out or counted wrong is not recorded)"
    total: Counter[str] = Counter()
    for c in counts:
        total.update(c or {})
    done = unanswered_summary(fail, dict(total))
    return f"coverage: see answered/gold; unanswered questions: {done} ({rule})"


def _main_columns(report: ReportDocument) -> tuple[list[str], list[str]]:
    cols, heads = ["model", "routed", str(Column.STRICT)], ["model", "routed (acc)", f"{strict_label(report)} [95% CI] rank"]
    if _short(report):
        cols.insert(1, "coverage")
        heads.insert(1, "answered/gold")
    for c in (Column.GOLD_CLEAN, Column.ADJUDICATED):
        if _present(report.models, c):
            cols.append(c)
            heads.append(f"{c.label} [95% CI] rank")
    if any(r.adjudicated_people is not None for r in report.models):
        cols.append("adjudicated_people")
        heads.append(f"headline: {Column.ADJUDICATED.label} corrected by people [95% CI: questions + sample]")
    if any(r.pass_review is not None for r in report.models):
        cols += ["false_pass", "two_sided"]
        heads += ["false-pass rate [95% CI] (reviewed)", "two-sided adjudicated [95% CI]"]
    if any(r.gold_clean_jury is not None for r in report.models):
        cols += ["gold_clean_jury", "flag_changes"]
        heads += [f"{Column.GOLD_CLEAN.label} expected [questions + jury 95%]", "expected flag changes"]
    if any(r.adjudicated_jury is not None for r in report.models):
        cols += ["adjudicated_jury", "credit_changes"]
        heads += [f"{Column.ADJUDICATED.label} expected [questions + jury 95%]", "expected credit changes"]
    if _present(report.models, Column.ADJUDICATED):
        cols += ["rank_shift", "misses", "cost"]
        heads += ["rank shift", "jury-reached misses gd/fe/ge/amb/nm", "jury cost"]
    cols += ["near_miss", "not_executed"]
    heads += ["near miss", "not executed"]
    return cols, heads


def _main_row(r: ModelRow) -> dict[str, Cell]:
    review = r.pass_review
    d: dict[str, Cell] = {
        "model": r.model + (f" ({', '.join(r.families)})" if r.families else ""),
        "routed": f"{r.routed} ({cell(r.routing_accuracy)})",
        "coverage": "—" if r.answered is None else f"{r.answered}/{r.gold_questions}",
        "rank_shift": r.rank_shift,
        "near_miss": r.near_miss,
        "not_executed": r.not_executed,
        "cost": _cost_text(r),
        "false_pass": f"{_bounds(review.false_pass_rate)} ({review.sampled})" if review is not None else "—",
        "two_sided": _bounds(r.two_sided_adjudicated) if r.two_sided_adjudicated is not None else "—",
        "adjudicated_jury": _jury_bounds(r.adjudicated_jury),
        "gold_clean_jury": _jury_bounds(r.gold_clean_jury),
        "flag_changes": "—" if r.gold_clean_jury is None else f"{r.gold_clean_jury.expected_flag_changes:.1f}",
        "adjudicated_people": _people_bounds(r.adjudicated_people),
        "credit_changes": "—" if r.adjudicated_jury is None else f"{r.adjudicated_jury.expected_credit_changes:.1f}",
    }
    for c in COLUMNS:
        d[c] = _interval(*_column(r, c))
    pct = r.composition_pct
    d["misses"] = (
        "—"
        if not r.jury_reached
        else ("/".join(f"{100 * (getattr(pct, c) or 0):.0f}" for c in COMPOSITION) + f"% of {r.jury_reached}")
    )
    return d


def strict_label(report: ReportDocument) -> str:
    """The strict column's heading: "strict", or "strict: NAME" under another comparator
    (--comparator), whose matches the column then counts."""
    name = report.settings.comparator
    return str(Column.STRICT.label) if name in (None, "", str(Column.STRICT)) else f"{Column.STRICT.label}: {name}"


def _label(report: ReportDocument, column: str) -> str:
    return strict_label(report) if column == Column.STRICT else str(Column(column).label)


def _main_table(report: ReportDocument) -> tuple[list[str], list[str], list[dict[str, Cell]]]:
    cols, heads = _main_columns(report)
    return cols, heads, [_main_row(r) for r in report.models]


def _oracle_table(report: ReportDocument) -> tuple[list[str], list[str], list[dict[str, Cell]]]:
    cols, heads = ["model", str(Column.STRICT)], ["model", f"{strict_label(report)} [95% CI] rank"]
    rows = report.oracle_routing.models
    for c in (Column.GOLD_CLEAN, Column.ADJUDICATED):
        if _present(rows, c):
            cols.append(c)
            heads.append(f"{c.label} [95% CI] rank")
    display: list[dict[str, Cell]] = [{"model": r.model, **{c: _interval(*_column(r, c)) for c in COLUMNS}} for r in rows]
    return cols, heads, display


def rank_cell(entry: ModelRank) -> str:
    """A model's rank, its 95% bootstrap interval and the probability of that rank: "3rd [2nd–5th] p 0.41"."""
    if entry.rank is None or entry.low is None or entry.high is None:
        return "—"
    p = entry.probabilities[entry.rank - 1] if entry.rank <= len(entry.probabilities) else 0.0
    return f"{ordinal(entry.rank)} [{ordinal(entry.low)}–{ordinal(entry.high)}] p {p:.2f}"


def rank_stability_table(report: ReportDocument) -> tuple[str, list[str], list[str], list[dict[str, Cell]]] | None:
    """(title, columns, headings, rows) of the rank-stability section; None without it."""
    rs = report.rank_stability
    if rs is None:
        return None
    present = [c for c in COLUMNS if c in rs.columns]
    cols = ["model", *present]
    heads = ["model", *(f"{_label(report, c)} rank [95% interval] p(rank)" for c in present)]
    rows: list[dict[str, Cell]] = [
        {"model": r.model, **{c: rank_cell(rs.columns[c][i]) for c in present}} for i, r in enumerate(report.models)
    ]
    title = (
        f"rank stability: {rs.resamples:,} bootstrap resamples of the {rs.questions:,} questions (seed {rs.seed}); "
        "p(rank) = share of resamples giving the model its rank"
    )
    jury_columns = (
        (Column.GOLD_CLEAN, [r.gold_clean_jury.rank if r.gold_clean_jury is not None else None for r in report.models]),
        (Column.ADJUDICATED, [r.adjudicated_jury.rank if r.adjudicated_jury is not None else None for r in report.models]),
    )
    drawn = {Column.GOLD_CLEAN: "flags", Column.ADJUDICATED: "verdicts"}
    for column, jury_ranks in jury_columns:
        if any(j is not None for j in jury_ranks):  # the same resamples as the questions + jury interval
            cols.append(f"{column}_jury_rank")
            heads.append(f"{column.label} rank [questions + jury 95%] p(rank)")
            for row, j in zip(rows, jury_ranks):
                row[f"{column}_jury_rank"] = rank_cell(j) if j is not None else "—"
            title += f"; the {column.label} questions + jury column draws the {drawn[column]} too (its interval's resamples)"
    return title, cols, heads, rows


def _corr_text(c: Correlation) -> str:
    if c.r is None:  # jury.stats.core: fewer than 3 pairs, else a side that does not vary
        if c.n < 3:
            return f"undefined (n = {c.n}: needs 3 models with both values)"
        return f"undefined (n = {c.n}: one side has the same value for every model, so nothing varies with it)"
    text = f"r = {c.r:.3f} (n = {c.n}, p = {c.p_value:.3g}"
    if c.ci_low is not None:
        text += f", 95% CI [{c.ci_low:.3f}, {c.ci_high:.3f}]"
    elif c.resamples:
        text += ", no CI: under 90% of bootstrap resamples defined"
    if c.resamples:
        text += f"; {c.degenerate_resamples or 0:,} of {c.resamples:,} resamples degenerate"
    return text + ")"


DEMO_PANEL = "local-demo"
"""The shipped panel of two tiny models on this machine (panels/local-demo.toml): a demo of the
pipeline whose verdicts must never be published."""


def decided_by(report: ReportDocument) -> list[str]:
    """One line per verdict file: the column it decides and the panel that decided it (a
    `local-demo` column says it must not be published)."""
    return [row.text for row in decided_by_rows(report)]


class DecidedBy(NamedTuple):
    """One of decided_by's lines; demo: decided by the local-demo panel."""

    text: str
    demo: bool


def decided_by_rows(report: ReportDocument) -> list[DecidedBy]:
    """decided_by's lines with whether the local-demo panel decided them."""
    lines = []
    for vf in report.verdict_files:
        column = Column.GOLD_CLEAN.label if vf.kind == "audit" else Column.ADJUDICATED.label
        lock = f"{vf.content_sha256[:19]}…" if vf.content_sha256 else ""
        where = ", ".join(x for x in (vf.path, lock) if x)
        line = f"{column} column decided by panel {vf.panel or '(unnamed)'}" + (f" ({where})" if where else "")
        demo = vf.panel == DEMO_PANEL
        if demo:
            line += ": two tiny local models, a demo of the pipeline; never publish a number it decided"
        lines.append(DecidedBy(line, demo))
    return lines


def _notes(report: ReportDocument) -> list[str]:
    s, corr = report.settings, report.correlations
    g = corr.gold_defect_share_vs_strength
    notes = [
        f"comparator: {s.comparator}; near-miss threshold {s.near_miss_threshold}; timeout {s.timeout_s:g} s; "
        f"normalize {json.dumps(s.normalize.model_dump())}; accuracy over routed questions, Wilson 95% intervals",
        f"Spearman, gold-defect share vs {Column(g.strength).label} accuracy: {_corr_text(g)}",
        f"Pearson, routing accuracy vs challenging share of the denominator: {_corr_text(corr.routing_vs_challenging_share)}",
        f"Pearson, routing accuracy vs mean difficulty of the denominator: {_corr_text(corr.routing_vs_mean_difficulty)}",
    ]
    coverage = coverage_note(report)
    if coverage:
        notes.insert(1, coverage)
    notes += decided_by(report)
    notes += uncertainty_notes(report)
    notes += repeat_notes(report)
    if any(f.jury_reached for f in report.families.values()):
        notes.append(
            "format-equivalent share of jury-reached misses by family: "
            + "; ".join(f"{fam} {cell(f.share)} ({f.format_equivalence}/{f.jury_reached})" for fam, f in report.families.items())
        )
    c = report.control
    if c is not None:
        line = f"negative control: {c.model} rises from {cell(c.strict)} to {cell(c.adjudicated)}"
        if c.next_model is None:
            line += " and is the top row"
        else:
            line += f" and stays {c.gap_to_next:.3f} below the next row ({c.next_model})"
        notes.append(line)
    if report.gold_errors:
        notes.append(gold_errors_line({e.question_id: e.error for e in report.gold_errors}, report.settings.gold_errors))
    return notes
