"""`jury report`: what a benchmark maintainer publishes. Pure computations, no I/O.

Three columns per model, each a Wilson 95% interval over the questions the model routed
to the right database (gold errors left out everywhere):

- **strict**: the chosen comparator's execution match (``jury.results.scoring``);
- **gold-clean**: strict with the audit's flagged questions removed from numerator and
  denominator (``jury.results.columns.gold_clean``);
- **adjudicated**: strict matches plus the jury's credited verdicts (gold defect, format
  equivalence) over the same denominator (``jury.results.columns.adjudicated``).

Around them: ranks and rank shifts (strict → adjudicated), the composition of each
model's adjudicated misses, near misses and non-executed answers (which never reach the
jury), the difficulty of each model's denominator, correlations across models, format
equivalence by model family, a negative control, the oracle-routing table (the three
columns on the questions every model routed correctly, so models share one denominator),
and juror agreement and position bias per verdict file (``jury.results.agreement_report``).
Every statistic comes from ``jury.stats``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from jury.errors import InputError
from jury.results.agreement_report import agreement_markdown, agreement_sets, print_agreement
from jury.results.columns import (
    adjudicated,
    adjudication_cost,
    flagged_questions,
    gold_clean,
    pass_reviews,
    review_cells,
    two_sided,
    unpriced_jurors,
    verdict_index,
    with_ranks,
)
from jury.results.ranks import DEFAULT_RESAMPLES, rank_stability
from jury.results.render import cell, interval, to_csv, to_json, to_markdown, to_rich_table
from jury.results.report_model import Report
from jury.results.scoring import score_all
from jury.results.taxonomy_report import categories_markdown, category_counts, print_categories
from jury.stats import ordinal, pearson, rank_delta, rank_shift, spearman
from jury.version import __version__, provenance
from jury.vocab import COLUMNS, COMPOSITION, JURY_ELIGIBLE, NOT_EXECUTED, Column, Outcome, Verdict

STRENGTHS = (Column.ADJUDICATED, Column.STRICT, Column.GOLD_CLEAN)  # the order --strength's error lists them in
DIFFICULTY = {"simple": 1, "moderate": 2, "challenging": 3}


# ------------------------------------------------------------------ building the report


def build_report(
    ev,
    gold: dict,
    *,
    audit_docs=(),
    adj_docs=(),
    strength: str | None = "adjudicated",
    control: str | None = None,
    registry=None,
    rank_resamples: int | None = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Report:
    """The report (``Report``; ``.model_dump(mode="json")`` is what ``--format json`` writes).

    ``adj_docs``: (path, VerdictFile) pairs of adjudication files; ``audit_docs``: audit
    VerdictFiles, or (path, VerdictFile) pairs (the report then names their paths). ``strength`` is the column the gold-defect share is correlated with;
    None picks adjudicated, else gold_clean, else strict, by which verdicts were given.
    ``rank_resamples`` (None: none) and ``seed``: the rank-stability bootstrap (jury.results.ranks).
    """
    audit_paths = [str(d[0]) if isinstance(d, tuple) and d[0] is not None else None for d in audit_docs]
    audit_docs = [d[1] if isinstance(d, tuple) else d for d in audit_docs]
    adj_docs = list(adj_docs)
    _check_kinds(audit_docs, adj_docs)
    strength = _choose_strength(strength, bool(audit_docs), bool(adj_docs))
    pairs = ev.pairs
    models = ev.models()
    if control is not None and control not in models:
        raise InputError(f"--control {control!r} is not a model in the runs; models: {', '.join(models)}")
    if control is not None and not adj_docs:
        raise InputError("--control needs adjudication verdicts (--verdicts): the control is the strict → adjudicated lift")

    scores = {s.model: s for s in score_all(pairs)}
    flagged = flagged_questions(audit_docs) if audit_docs else None
    index = verdict_index(adj_docs) if adj_docs else None
    clean = gold_clean(pairs, flagged) if flagged is not None else None
    adj = adjudicated(pairs, index) if index is not None else None  # errors on an unjudged failure
    clean_rank = with_ranks(clean) if clean is not None else {}
    adj_rank = with_ranks(adj) if adj is not None else {}
    reviews = pass_reviews(pairs, adj_docs) if adj_docs else {}
    both = two_sided(adj or {}, reviews, {m: s.routed for m, s in scores.items()})

    rows = []
    for m in models:
        s = scores[m]
        mine = [p for p in pairs if p.model == m and p.outcome != Outcome.GOLD_ERROR]
        routed = [p for p in mine if p.routed]
        outcomes = Counter(p.outcome for p in routed)
        recs = [
            index[(m, p.question_id)]
            for p in routed
            if index is not None and p.outcome == JURY_ELIGIBLE and (m, p.question_id) in index
        ]
        comp = Counter(Verdict.NO_MAJORITY if r.verdict == Verdict.UNDECIDED else r.verdict for r in recs)
        composition = {c: comp[c] for c in COMPOSITION}
        reached = len(recs)
        difficulties = [_difficulty(gold, p.question_id) for p in routed]
        known = [d for d in difficulties if d is not None]
        rows.append(
            {
                "model": m,
                "families": _families(m, recs, mine, registry),
                "questions": s.questions,
                "routed": s.routed,
                "routing_accuracy": s.routing_accuracy,
                "strict": s.strict,
                "strict_rank": s.strict_rank,
                "gold_clean": clean[m] if clean is not None else None,
                "gold_clean_rank": clean_rank.get(m),
                "adjudicated": adj[m] if adj is not None else None,
                "adjudicated_rank": adj_rank.get(m),
                "rank_shift": rank_shift(s.strict_rank, adj_rank.get(m)),
                "rank_delta": rank_delta(s.strict_rank, adj_rank.get(m)),
                "composition": composition,
                "composition_pct": {c: _share(composition[c], reached) for c in COMPOSITION},
                "jury_reached": reached,
                "near_miss": outcomes[Outcome.NEAR_MISS],
                "not_executed": sum(outcomes[o] for o in NOT_EXECUTED),
                "gold_defect_share": _share(composition[Verdict.GOLD_DEFECT], reached),
                "adjudication_cost_usd": adjudication_cost(m, adj_docs),
                "adjudication_unpriced_models": unpriced_jurors(m, adj_docs),
                "challenging_share": _share(sum(d == 3 for d in known), len(known)),
                "mean_difficulty": sum(known) / len(known) if known else None,
                "pass_review": reviews.get(m),
                "two_sided_adjudicated": both.get(m),
            }
        )

    settings = {**ev.settings.describe(), "strength": strength, "control": control}
    return Report.model_validate(
        {
            "jury_version": __version__,
            "provenance": provenance(),
            "settings": settings,
            "verdict_files": [
                {"kind": "audit", "path": p, "content_sha256": d.content_sha256, "panel": d.panel.name}
                for p, d in zip(audit_paths, audit_docs)
            ]
            + [
                {"kind": "adjudication", "path": str(p), "content_sha256": d.content_sha256, "panel": d.panel.name}
                for p, d in adj_docs
            ],
            "models": rows,
            "correlations": _correlations(rows, strength),
            "families": _family_shares(rows),
            "control": _control(rows, control),
            "oracle_routing": _oracle(pairs, models, flagged, index),
            "gold_errors": [{"question_id": q, "error": e} for q, e in ev.gold_errors.items()],
            "agreement": agreement_sets(audit_docs, adj_docs, audit_paths),  # from the records, never the summaries
            "error_categories": category_counts(adj_docs),  # --taxonomy files only
            "rank_stability": None
            if rank_resamples is None
            else rank_stability(
                pairs,
                models,
                {
                    Column.STRICT: {m: scores[m].strict_rank for m in models},
                    Column.GOLD_CLEAN: clean_rank,
                    Column.ADJUDICATED: adj_rank,
                },
                flagged=flagged,
                index=index,
                resamples=rank_resamples,
                seed=seed,
            ),
        }
    )


def _check_kinds(audit_docs, adj_docs) -> None:
    for doc in audit_docs:
        if doc.kind != "audit":
            raise InputError(f"an {doc.kind} file was given as an audit")
    for path, doc in adj_docs:
        if doc.kind != "adjudication":
            raise InputError(f"{path}: is an {doc.kind} file, not an adjudication")


def _choose_strength(strength: str | None, have_audit: bool, have_adj: bool) -> str:
    if strength is None:
        return Column.ADJUDICATED if have_adj else Column.GOLD_CLEAN if have_audit else Column.STRICT
    if strength not in STRENGTHS:
        raise InputError(f"unknown strength {strength!r}; choose one of: {', '.join(STRENGTHS)}")
    if strength == Column.ADJUDICATED and not have_adj:
        raise InputError(
            "--strength adjudicated needs adjudication verdicts: pass --verdicts FILE, or --strength strict or gold_clean"
        )
    if strength == Column.GOLD_CLEAN and not have_audit:
        raise InputError("--strength gold_clean needs an audit: pass --audit FILE, or --strength strict")
    return strength


def _share(k: int, n: int) -> float | None:
    return k / n if n else None


def _difficulty(gold: dict, qid) -> int | None:
    item = gold.get(qid)
    raw = getattr(item, "difficulty", None) if item is not None else None
    return DIFFICULTY.get(raw.strip().lower()) if isinstance(raw, str) else None


def _families(model: str, recs, pairs, registry) -> list[str]:
    """Families named by the adjudication records, else the registry's, else the run records'."""
    from_records = sorted({f for r in recs for f in r.families})
    if from_records:
        return from_records
    declared = sorted({f for p in pairs for f in p.families})
    if registry is not None:
        return list(registry.families_of(model, declared))  # an unknown model is a ConfigError
    return sorted({f.strip().lower() for f in declared if f.strip()})


def _value(row: dict, column: str):
    p = row.get(column)
    return None if p is None else p["value"]


def _correlations(rows: list[dict], strength: str) -> dict:
    routing = [r["routing_accuracy"] for r in rows]
    return {
        "gold_defect_share_vs_strength": {
            **spearman([r["gold_defect_share"] for r in rows], [_value(r, strength) for r in rows]).as_dict(),
            "strength": strength,
        },
        "routing_vs_challenging_share": pearson(routing, [r["challenging_share"] for r in rows]).as_dict(),
        "routing_vs_mean_difficulty": pearson(routing, [r["mean_difficulty"] for r in rows]).as_dict(),
    }


def _family_shares(rows: list[dict]) -> dict:
    """Format-equivalent share of jury-reached misses per family (a model counts in each of its families)."""
    out: dict[str, dict] = {}
    for r in rows:
        for fam in r["families"]:
            f = out.setdefault(fam, {"jury_reached": 0, "format_equivalence": 0, "share": None})
            f["jury_reached"] += r["jury_reached"]
            f["format_equivalence"] += r["composition"]["format_equivalence"]
    for f in out.values():
        f["share"] = _share(f["format_equivalence"], f["jury_reached"])
    return dict(sorted(out.items()))


def _control(rows: list[dict], control: str | None) -> dict | None:
    if control is None:
        return None
    row = next(r for r in rows if r["model"] == control)
    strict, adj = row["strict"]["value"], row["adjudicated"]["value"]
    above = [r for r in rows if adj is not None and _value(r, "adjudicated") is not None and _value(r, "adjudicated") > adj]
    nxt = min(above, key=lambda r: r["adjudicated"]["value"]) if above else None  # first in run order on ties
    nxt_value = nxt["adjudicated"]["value"] if nxt else None
    return {
        "model": control,
        "strict": strict,
        "adjudicated": adj,
        "lift": adj - strict if adj is not None and strict is not None else None,
        "next_model": nxt["model"] if nxt else None,
        "next_adjudicated": nxt_value,
        "gap_to_next": nxt_value - adj if nxt_value is not None else None,
    }


def _oracle(pairs, models: list[str], flagged: set | None, index: dict | None) -> dict:
    """The three columns on the questions every model routed correctly (gold errors out)."""
    routed_by: dict[str, set] = {m: set() for m in models}
    for p in pairs:
        if p.outcome != Outcome.GOLD_ERROR and p.routed:
            routed_by[p.model].add(p.question_id)
    common = set.intersection(*routed_by.values()) if routed_by else set()
    sub = [p for p in pairs if p.question_id in common]
    empty = {"k": 0, "n": 0, "value": None, "low": None, "high": None}
    columns = {
        Column.STRICT: {s.model: s.strict for s in score_all(sub)},
        Column.GOLD_CLEAN: gold_clean(sub, flagged) if flagged is not None else None,
        Column.ADJUDICATED: adjudicated(sub, {k: v for k, v in index.items() if k[1] in common}) if index is not None else None,
    }
    ranked = {c: with_ranks(col) if col else {} for c, col in columns.items()}
    out = []
    for m in models:
        row: dict[str, Any] = {"model": m}
        for c in COLUMNS:
            col = columns[c]
            row[c] = None if col is None else col.get(m, dict(empty))  # no common question: wilson(0, 0)
            row[f"{c}_rank"] = ranked[c].get(m)
        out.append(row)
    return {"questions": len(common), "models": out}


# ------------------------------------------------------------------ rows and rendering


def as_report_dict(report: Report | dict) -> dict:
    """The report as the JSON dict ``--format json`` writes; a dict (say, a report read
    back from JSON) is validated against ``Report`` first."""
    model = report if isinstance(report, Report) else Report.model_validate(report)
    return model.model_dump(mode="json")


def report_rows(report: Report | dict) -> list[dict]:
    """One flat row per model (the CSV): interval bounds in their own columns."""
    report = as_report_dict(report)
    rows = []
    for r in report["models"]:
        row = {
            "model": r["model"],
            "families": ";".join(r["families"]),
            "questions": r["questions"],
            "routed": r["routed"],
            "routing_accuracy": r["routing_accuracy"],
        }
        for c in COLUMNS:
            p = r[c] or {}
            row.update(
                {
                    f"{c}_k": p.get("k"),
                    f"{c}_n": p.get("n"),
                    f"{c}_accuracy": p.get("value"),
                    f"{c}_low": p.get("low"),
                    f"{c}_high": p.get("high"),
                    f"{c}_rank": r[f"{c}_rank"],
                }
            )
        row["rank_shift"], row["rank_delta"] = r["rank_shift"], r["rank_delta"]
        row["jury_reached"] = r["jury_reached"]
        row.update({c: r["composition"][c] for c in COMPOSITION})
        row.update({f"{c}_pct": r["composition_pct"][c] for c in COMPOSITION})
        for key in (
            "gold_defect_share",
            "near_miss",
            "not_executed",
            "challenging_share",
            "mean_difficulty",
            "adjudication_cost_usd",
        ):
            row[key] = r[key]
        row["adjudication_unpriced_models"] = ";".join(r.get("adjudication_unpriced_models") or [])
        row.update(review_cells(r))
        rows.append(row)
    return rows


def render_report(report: Report | dict, fmt: str, *, width: int | None = None, wide: bool = True) -> str:
    """The report as table, csv, json or md. ``width``: the table width (None: unwrapped);
    ``wide``: the table and md also show the near-miss and not-executed counts."""
    report = as_report_dict(report)
    if fmt == "json":
        return to_json(report)
    if fmt == "csv":
        rows = report_rows(report)
        return to_csv(rows, list(rows[0]) if rows else [])
    if fmt not in ("table", "md"):
        raise InputError(f"unknown format {fmt!r}; choose one of: table, csv, json, md")
    main_cols, main_heads, main = _main_table(report)
    if not wide:  # `jury report --wide` shows them; csv and json always do
        keep = [i for i, c in enumerate(main_cols) if c not in ("near_miss", "not_executed")]
        main_cols, main_heads = [main_cols[i] for i in keep], [main_heads[i] for i in keep]
    ocols, oheads, orows = _oracle_table(report)
    notes = _notes(report)
    oracle_title = (
        f"oracle routing: the {report['oracle_routing']['questions']} questions every model routed correctly (one denominator)"
    )
    stability = rank_stability_table(report)
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
            + agreement_markdown(report)
            + categories_markdown(report)
        )
    import io

    from rich.console import Console

    from jury.results.render import UNWRAPPED_WIDTH, safe

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or UNWRAPPED_WIDTH, soft_wrap=width is None, highlight=False)
    console.print(to_rich_table(main, main_cols, main_heads, title="jury report"))
    for n in notes:
        console.print(safe(n), markup=False)
    console.print(to_rich_table(orows, ocols, oheads, title=oracle_title))
    if stability is not None:
        console.print(to_rich_table(stability[3], stability[1], stability[2], title=stability[0]))
    print_agreement(console, report)
    print_categories(console, report)
    return buffer.getvalue()


def _dollars(x: float | None) -> str:
    return "—" if x is None else f"${x:,.2f}" if x >= 1 else f"${x:.4f}"


def _cost_text(row: dict) -> str:
    """The jury cost cell: dollars, or "unknown (x unpriced)" when litellm could not price a juror."""
    unpriced = row.get("adjudication_unpriced_models") or []
    if row["adjudication_cost_usd"] is None and unpriced:
        return f"unknown ({', '.join(unpriced)} unpriced)"
    return _dollars(row["adjudication_cost_usd"])


def _interval(p: dict | None, rank: int | None = None) -> str:
    text = interval(p)
    return text + (f" {ordinal(rank)}" if rank and text != "—" else "")


def _present(report: dict, column: str) -> bool:
    return any(r[column] is not None for r in report["models"])


def _main_table(report: dict):
    cols, heads = ["model", "routed", Column.STRICT], ["model", "routed (acc)", f"{Column.STRICT.label} [95% CI] rank"]
    for c in (Column.GOLD_CLEAN, Column.ADJUDICATED):
        if _present(report, c):
            cols.append(c)
            heads.append(f"{c.label} [95% CI] rank")
    has_adj = _present(report, Column.ADJUDICATED)
    if _present(report, "pass_review"):
        cols += ["false_pass", "two_sided"]
        heads += ["false-pass rate [95% CI] (reviewed)", "two-sided adjudicated [95% CI]"]
    if has_adj:
        cols += ["rank_shift", "misses", "cost"]
        heads += ["rank shift", "jury-reached misses gd/fe/ge/amb/nm", "jury cost"]
    cols += ["near_miss", "not_executed"]
    heads += ["near miss", "not executed"]
    display = []
    for r in report["models"]:
        d = {
            "model": r["model"] + (f" ({', '.join(r['families'])})" if r["families"] else ""),
            "routed": f"{r['routed']} ({cell(r['routing_accuracy'])})",
            "rank_shift": r["rank_shift"],
            "near_miss": r["near_miss"],
            "not_executed": r["not_executed"],
            "cost": _cost_text(r),
            "false_pass": f"{interval(r['pass_review']['false_pass_rate'])} ({r['pass_review']['sampled']})"
            if r.get("pass_review")
            else "—",
            "two_sided": interval(r["two_sided_adjudicated"]) if r.get("two_sided_adjudicated") else "—",
        }
        for c in COLUMNS:
            d[c] = _interval(r[c], r[f"{c}_rank"])
        pct = r["composition_pct"]
        d["misses"] = (
            "—" if not r["jury_reached"] else ("/".join(f"{100 * pct[c]:.0f}" for c in COMPOSITION) + f"% of {r['jury_reached']}")
        )
        display.append(d)
    return cols, heads, display


def _oracle_table(report: dict):
    cols, heads = ["model", Column.STRICT], ["model", f"{Column.STRICT.label} [95% CI] rank"]
    rows = report["oracle_routing"]["models"]
    for c in (Column.GOLD_CLEAN, Column.ADJUDICATED):
        if any(r[c] is not None for r in rows):
            cols.append(c)
            heads.append(f"{c.label} [95% CI] rank")
    display = [{"model": r["model"], **{c: _interval(r[c], r[f"{c}_rank"]) for c in COLUMNS}} for r in rows]
    return cols, heads, display


def rank_cell(entry: dict) -> str:
    """A model's rank, its 95% bootstrap interval and the probability of that rank: "3rd [2nd–5th] p 0.41"."""
    if entry["rank"] is None or entry["low"] is None:
        return "—"
    p = entry["probabilities"][entry["rank"] - 1] if entry["rank"] <= len(entry["probabilities"]) else 0.0
    return f"{ordinal(entry['rank'])} [{ordinal(entry['low'])}–{ordinal(entry['high'])}] p {p:.2f}"


def rank_stability_table(report: dict):
    """(title, columns, headings, rows) of the rank-stability section; None without it."""
    rs = report.get("rank_stability")
    if not rs:
        return None
    present = [c for c in COLUMNS if c in rs["columns"]]
    cols = ["model", *present]
    heads = ["model", *(f"{Column(c).label} rank [95% interval] p(rank)" for c in present)]
    rows = [{"model": r["model"], **{c: rank_cell(rs["columns"][c][i]) for c in present}} for i, r in enumerate(report["models"])]
    title = (
        f"rank stability: {rs['resamples']:,} bootstrap resamples of the {rs['questions']:,} questions (seed {rs['seed']}); "
        "p(rank) = share of resamples giving the model its rank"
    )
    return title, cols, heads, rows


def _corr_text(c: dict) -> str:
    if c["r"] is None:
        return f"undefined (n = {c['n']}: needs 3 models with both values, each side varying)"
    text = f"r = {c['r']:.3f} (n = {c['n']}, p = {c['p_value']:.3g}"
    if c["ci_low"] is not None:
        text += f", 95% CI [{c['ci_low']:.3f}, {c['ci_high']:.3f}]"
    elif c.get("resamples"):
        text += ", no CI: under 90% of bootstrap resamples defined"
    if c.get("resamples"):
        text += f"; {c.get('degenerate_resamples') or 0:,} of {c['resamples']:,} resamples degenerate"
    return text + ")"


def _notes(report: dict) -> list[str]:
    s, corr = report["settings"], report["correlations"]
    g = corr["gold_defect_share_vs_strength"]
    notes = [
        f"comparator: {s['comparator']}; near-miss threshold {s['near_miss_threshold']}; timeout {s['timeout_s']:g} s; "
        f"normalize {json.dumps(s['normalize'])}; accuracy over routed questions, Wilson 95% intervals",
        f"Spearman, gold-defect share vs {Column(g['strength']).label} accuracy: {_corr_text(g)}",
        f"Pearson, routing accuracy vs challenging share of the denominator: {_corr_text(corr['routing_vs_challenging_share'])}",
        f"Pearson, routing accuracy vs mean difficulty of the denominator: {_corr_text(corr['routing_vs_mean_difficulty'])}",
    ]
    if any(f["jury_reached"] for f in report["families"].values()):
        notes.append(
            "format-equivalent share of jury-reached misses by family: "
            + "; ".join(
                f"{fam} {cell(f['share'])} ({f['format_equivalence']}/{f['jury_reached']})"
                for fam, f in report["families"].items()
            )
        )
    c = report["control"]
    if c is not None:
        line = f"negative control: {c['model']} rises from {cell(c['strict'])} to {cell(c['adjudicated'])}"
        if c["next_model"] is None:
            line += " and is the top row"
        else:
            line += f" and stays {c['gap_to_next']:.3f} below the next row ({c['next_model']})"
        notes.append(line)
    if report["gold_errors"]:
        notes.append(
            "gold queries that fail (left out of every denominator): "
            + ", ".join(f"{e['question_id']} ({e['error']})" for e in report["gold_errors"][:10])
        )
    return notes
