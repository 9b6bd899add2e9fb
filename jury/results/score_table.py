"""Turn scores into what users read: tables, CSV, Markdown, JSON, per-question JSONL."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jury.results.aifunc_columns import add_display as add_aifunc_display
from jury.results.aifunc_columns import add_fields as add_aifunc_fields
from jury.results.aifunc_columns import function_type_text, protocol_settings
from jury.results.render import UNWRAPPED_WIDTH, interval, safe, to_csv, to_json, to_markdown, to_rich_table
from jury.results.scoring import coverage_caption, gold_errors_line
from jury.stats.core import ordinal
from jury.version import __version__, provenance
from jury.vocab import DECIDING_COMPARATORS, JURY_ELIGIBLE, OUTCOMES, Column, Outcome

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation, PairResult, SettingsDescription
    from jury.execution.merged import MergedSource
    from jury.inputs.records import QuestionId
    from jury.results.scoring import ModelScore


HEADLINE_FIELDS = ("comparator", "matches", "accuracy", "accuracy_low", "accuracy_high", "rank")
"""The CSV's headline columns: the chosen comparator's name, its k (matches over ``routed``),
accuracy with its Wilson bounds, and rank. They carry no comparator's name, so no side
comparator's ``<name>_accuracy`` column can share (and overwrite) one of them."""


def _add(row: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """Adds ``fields`` to ``row``; a field already there is a programming error, never a silent overwrite."""
    clash = row.keys() & fields.keys()
    if clash:
        raise AssertionError(f"score row fields written twice: {sorted(clash)}")
    row.update(fields)


def score_rows(scores: Sequence[ModelScore], comparator: str) -> list[dict[str, Any]]:
    """One flat dict per model: the columns of the table and the CSV. The headline (HEADLINE_FIELDS)
    is ``comparator``'s score (``ModelScore.strict``); ``<name>_accuracy`` and ``<name>_rank`` follow
    for every deciding comparator, the chosen one included."""
    rows = []
    for s in scores:
        row: dict[str, Any] = {"model": s.model, "questions": s.questions, "routing_accuracy": s.routing_accuracy}
        _add(row, {"routed": s.routed})
        _add(
            row,
            dict(
                zip(
                    HEADLINE_FIELDS,
                    (comparator, s.strict["k"], s.strict["value"], s.strict["low"], s.strict["high"], s.strict_rank),
                )
            ),
        )
        _add(row, {"jury_eligible": s.jury_eligible})
        _add(row, {o: s.outcomes[o] for o in OUTCOMES})
        for name in DECIDING_COMPARATORS:
            c = s.comparators.get(name)
            _add(row, {f"{name}_accuracy": c["value"] if c is not None else None, f"{name}_rank": s.comparator_ranks.get(name)})
        for col in (Column.GOLD_CLEAN, Column.ADJUDICATED):
            p = getattr(s, col)
            if p is not None:
                _add(
                    row,
                    {
                        f"{col}_k": p["k"],
                        f"{col}_n": p["n"],
                        f"{col}_accuracy": p["value"],
                        f"{col}_low": p["low"],
                        f"{col}_high": p["high"],
                        f"{col}_rank": getattr(s, f"{col}_rank"),
                    },
                )
        _add(row, _extra_metrics(s))
        _add(row, {"gold_questions": s.gold_questions, "answered": s.answered, "missing_rule": s.missing_rule})
        rows.append(row)
    add_aifunc_fields(rows, scores)
    return rows


def _interval(row: dict[str, Any], col: str | None = None) -> str:
    """The interval of column ``col`` (``<col>_accuracy``, ``<col>_low``, ``<col>_high``); None: the headline."""
    prefix = "accuracy" if col is None else f"{col}_accuracy"
    low, high = ("accuracy_low", "accuracy_high") if col is None else (f"{col}_low", f"{col}_high")
    return interval({"value": row.get(prefix), "low": row.get(low), "high": row.get(high)})


def _with_rank(value: str, rank: int | None) -> str:
    """ "0.845 2nd": a rank as `jury report` shows one (no parentheses)."""
    return "—" if value is None else f"{value:.3f} {ordinal(rank)}" if rank else f"{value:.3f}"


WIDE_SCORE_COLUMNS = ("routed", "side comparators")
"""Table and Markdown columns shown only with `jury score --wide` (CSV and JSON hold everything):
the routed count and the accuracy (rank) of each comparator other than the chosen one. The
routing accuracy is shown without --wide only when some model misrouted a question."""


def run_provenance(merged_stores: list[MergedSource] | None, ev: Evaluation) -> dict[str, Any]:
    """provenance(), the stores merged into the store used and the engine databases executed
    through a privileged login (--allow-privileged-login), each only when there are any."""
    from jury.execution.engine_urls import privileged_logins

    out = {**provenance(), "merged_stores": merged_stores} if merged_stores else provenance()
    logins = privileged_logins(path for path, _sha in getattr(ev, "databases", {}).values())
    return {**out, "privileged_logins": logins} if logins else out


def render_scores(
    scores: Sequence[ModelScore],
    ev: Evaluation,
    fmt: str,
    *,
    width: int | None = None,
    wide: bool = True,
    merged_stores: list[MergedSource] | None = None,
) -> str:
    """The score report. ``width``: the table's width (None: unwrapped, for pipes and files);
    ``wide``: include the WIDE_SCORE_COLUMNS in the table and Markdown; ``merged_stores``: the
    stores merged into the store used (``Store.merged_sources``), in the JSON's provenance."""
    settings = ev.settings.describe()
    rows = score_rows(scores, settings["comparator"])
    if fmt == "json":
        return _score_json(scores, ev, merged_stores)
    if fmt == "csv":
        return to_csv(rows, list(rows[0]) if rows else [])
    display = [_display_row(r) for r in rows]
    routing = [] if all(r["routing_accuracy"] in (None, 1.0) for r in rows) and not wide else ["routing"]
    columns, headers = _score_columns(rows, display, settings["comparator"], routing, wide)
    note = _extra_display(rows, display, columns, headers)
    note += add_aifunc_display(rows, display, columns, headers, wide=wide)
    caption = _score_caption(ev, settings, note, bool(rows and not routing))
    if fmt == "md":
        return (
            to_markdown(display, columns, headers) + "\n" + safe(caption, newlines=True) + "\n" + function_type_text(scores, fmt)
        )

    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or UNWRAPPED_WIDTH, soft_wrap=width is None, highlight=False)
    console.print(to_rich_table(display, columns, headers, title=f"{settings['comparator']} execution match"))
    console.print(safe(caption, newlines=True), markup=False)
    return buffer.getvalue() + function_type_text(scores, fmt, width)


def _score_json(scores: Sequence[ModelScore], ev: Evaluation, merged_stores: list[MergedSource] | None) -> str:
    """`jury score --format json`."""
    return to_json(
        {
            "jury_version": __version__,
            "provenance": run_provenance(merged_stores, ev),
            "settings": {
                **ev.settings.describe(),
                "missing": str(ev.settings.missing),
                "gold_errors": str(ev.settings.gold_errors),
                **protocol_settings(ev.settings),
            },
            "models": [s.model_dump() for s in scores],
            "gold_errors": [{"question_id": q, "error": e} for q, e in ev.gold_errors.items()],
            "recorded_pairs": ev.recorded_pairs,
        }
    )


def _display_row(r: dict[str, Any]) -> dict[str, Any]:
    """A score row with its table cells (interval, routing, rank, other outcomes, side comparators, coverage)."""
    d = dict(r)
    d["headline_ci"] = _interval(r)
    d["routing"] = "—" if r["routing_accuracy"] is None else f"{r['routing_accuracy']:.3f}"
    d["rank"] = ordinal(r["rank"]) if r["rank"] else "—"
    # the mismatches have their own column (the jury-eligible count)
    d["misses"] = " ".join(f"{o}={r[o]}" for o in OUTCOMES if o not in (Outcome.MATCH, JURY_ELIGIBLE) and r[o]) or "—"
    for name in DECIDING_COMPARATORS:
        d[name] = _with_rank(r[f"{name}_accuracy"], r[f"{name}_rank"])
    d["coverage"] = "—" if r["answered"] is None else f"{r['answered']}/{r['gold_questions']}"
    return d


def _score_columns(
    rows: list[dict[str, Any]], display: list[dict[str, Any]], comparator: str, routing: list[str], wide: bool
) -> tuple[list[str], list[str]]:
    """The table's columns and headings; fills the gold-clean and adjudicated cells of ``display``."""
    side = [n for n in DECIDING_COMPARATORS if n != comparator] if wide else []  # the chosen one is the main column
    routed = ["routed"] if wide else []
    short = any(r["answered"] is not None and r["answered"] < r["gold_questions"] for r in rows)
    answered = ["coverage"] if short else []  # shown when a model is short; the caption says so otherwise
    columns = [
        "model",
        "questions",
        *answered,
        *routing,
        *routed,
        "matches",
        "headline_ci",
        "rank",
        "jury_eligible",
        "misses",
        *side,
    ]
    headers = [
        "model",
        "questions",
        *(["answered/gold"] if short else []),
        *(["routing acc"] if routing else []),
        *routed,
        "matches",
        f"{comparator} acc [95% CI]",
        "rank",
        "mismatch (to jury)",
        "other outcomes",
        *(f"{n} acc rank" for n in side),
    ]
    for col, head in ((c, c.label) for c in (Column.GOLD_CLEAN, Column.ADJUDICATED)):
        if rows and f"{col}_accuracy" in rows[0]:
            for d, r in zip(display, rows):
                d[col] = _interval(r, col) + (f" {ordinal(r[f'{col}_rank'])}" if r[f"{col}_rank"] else "")
            columns.insert(columns.index("jury_eligible"), col)
            headers.insert(headers.index("mismatch (to jury)"), f"{head} [95% CI] rank")
    return columns, headers


def _score_caption(ev: Evaluation, settings: SettingsDescription, note: str, routing_hidden: bool) -> str:
    """The lines under the table: settings, the extra metrics' note, coverage, routing, recorded pairs, gold errors."""
    caption = (
        f"comparator: {settings['comparator']}; near-miss threshold {settings['near_miss_threshold']}; "
        f"timeout {settings['timeout_s']:g} s; normalize {json.dumps(settings['normalize'])}"
    )
    caption += note
    covered = coverage_caption(ev)
    if covered:
        caption += "\n" + covered
    if routing_hidden:
        caption += "\nevery model routed every question to the right database (routing accuracy 1.000; shown with --wide)"
    if ev.recorded_pairs:
        n = ev.recorded_pairs
        caption += (
            f"\n{n} (model, question) pair{'s' if n != 1 else ''} scored on results recorded elsewhere "
            "(a recorded outcome counts for every comparator)"
        )
    if ev.gold_errors:
        caption += "\n" + gold_errors_line(ev.gold_errors, ev.settings.gold_errors)
    return caption


def _extra_metrics(s: ModelScore) -> dict[str, Any]:
    """CSV/table fields of `jury score --function-set` and `--efficiency` (only when asked for)."""
    row: dict[str, Any] = {}
    if s.soft_f1 is not None:
        row.update({"soft_f1": s.soft_f1["value"], "soft_f1_n": s.soft_f1["n"], "soft_f1_undecided": s.soft_f1["undecided"]})
    if s.function_set is not None:
        p = s.function_set
        row.update({"fsa_k": p["k"], "fsa_n": p["n"], "fsa": p["value"], "fsa_low": p["low"], "fsa_high": p["high"]})
    if s.efficiency is not None:
        e: Mapping[str, object] = s.efficiency
        keys = ("ves", "r_ves", "time_ratio", "faster_share", "timed_matches", "untimed_matches", "failed_timings")
        row.update({k: e[k] for k in (*keys, "repeats", "cpu")})
        row["measured_at"] = e["measured_to"]
    return row


def _extra_display(rows: list[dict[str, Any]], display: list[dict[str, Any]], columns: list[str], headers: list[str]) -> str:
    """Adds the Soft-F1, FSA and efficiency columns to the table; returns the caption's note on timings."""
    if rows and "soft_f1" in rows[0]:
        for d, r in zip(display, rows):
            d["soft_f1_shown"] = "—" if r["soft_f1"] is None else f"{r['soft_f1']:.3f}"
        columns.append("soft_f1_shown")
        headers.append("Soft-F1 (mini-dev)")
    if rows and "fsa" in rows[0]:
        for d, r in zip(display, rows):
            d["fsa_ci"] = _interval({"fsa_accuracy": r["fsa"], "fsa_low": r["fsa_low"], "fsa_high": r["fsa_high"]}, "fsa")
        columns.append("fsa_ci")
        headers.append("function-set acc [95% CI]")
    if rows and "ves" in rows[0]:
        for d, r in zip(display, rows):
            d["ves_shown"] = "—" if r["ves"] is None else f"{r['ves']:.2f}"
            d["r_ves_shown"] = "—" if r["r_ves"] is None else f"{r['r_ves']:.2f}"
            d["ratio_shown"] = "—" if r["time_ratio"] is None else f"{r['time_ratio']:.3f}"
            d["faster_shown"] = "—" if r["faster_share"] is None else f"{r['faster_share']:.3f} of {r['timed_matches']}"
        columns.extend(["ves_shown", "r_ves_shown", "ratio_shown", "faster_shown"])
        headers.extend(["VES", "R-VES", "t_pred/t_gold", "pred faster"])
        r = rows[0]
        untimed = sum(x["untimed_matches"] for x in rows)
        left_out = f"; left out of VES and R-VES, matches never timed (recorded outcomes): {untimed}" if untimed else ""
        return (
            f"\nefficiency: {r['repeats']} timed repetitions per matched pair, measured on this machine "
            f"(CPU {r['cpu']}), latest {max(str(x['measured_at']) for x in rows)}; VES x100 as BIRD, "
            f"R-VES as BIRD mini-dev{left_out}"
        )
    return ""


def per_question_jsonl(pairs: Iterable[PairResult], soft_f1: Mapping[tuple[str, QuestionId], float | None] | None = None) -> str:
    """One JSON line per (model, question); ``soft_f1`` ((model, question_id) -> score): a
    ``soft_f1`` field on each line (jury score --soft-f1)."""
    out = []
    for p in pairs:
        extra = {"soft_f1": soft_f1.get((p.model, p.question_id))} if soft_f1 is not None else {}
        out.append(
            json.dumps(
                {
                    "model": p.model,
                    "question_id": p.question_id,
                    "db_id": p.db_id,
                    "chosen_db_id": p.chosen_db_id,
                    "routed": p.routed,
                    "outcome": p.outcome,
                    "overlap": p.overlap,
                    "order_matters": p.order_matters,
                    **{name: p.comparator_matches.get(name) for name in DECIDING_COMPARATORS},
                    "error": p.error,
                    **extra,
                },
                ensure_ascii=False,
            )
        )
    return "\n".join(out) + "\n"
