"""What the commands that call jurors share: key checks, the cost cap, run statistics."""

from __future__ import annotations

from jury.errors import InputError, JuryError


class CostCapReached(JuryError):
    """--max-cost stopped the run before every ballot was asked."""


def require_keys(panel, jurors) -> None:
    missing = panel.missing_keys(list(jurors))
    if missing:
        raise InputError(f"no API key for panel {panel.name!r}: set {', '.join(missing)} (nothing was called)")


def raise_if_capped(stats) -> None:
    if stats.not_asked:
        raise CostCapReached(
            f"stopped at the cost cap: ${stats.cost_usd:.4f} spent this run, {stats.not_asked} ballots "
            "not asked; every vote so far is stored: rerun with a higher --max-cost to go on "
            "(no verdict file written for an incomplete set)"
        )


def print_run_stats(console, stats, path) -> None:
    if stats.transport_failures:
        console.print(
            f"[yellow]{stats.transport_failures} ballots failed on transport or configuration errors "
            "and count as abstentions here; they are not stored as votes, so a rerun asks them again[/]"
        )
    console.print(
        f"calls this run: {stats.asked} (reused from the store: {stats.reused}, skipped by early stop: "
        f"{stats.skipped}); cost this run ${stats.cost_usd:.4f}\nverdict file: {path}"
    )


def print_plan(console, rows: list[dict], title: str, groups: int, unit: str) -> None:
    from jury.render import to_rich_table

    for r in rows:
        r["cost"] = f"${r['cost_usd']:.4f}" if r["priced"] else "unknown price"
    cols = [c for c in ("model", "juror", "juror_model", "ballots", "prompt_tokens", "completion_tokens", "cost") if c in rows[0]] if rows else []
    heads = {"model": "model under test", "juror": "juror", "juror_model": "juror model", "ballots": "ballots",
             "prompt_tokens": "est. prompt tokens", "completion_tokens": "est. completion tokens", "cost": "est. cost"}
    console.print(to_rich_table(rows, cols, [heads[c] for c in cols], title=title))
    total = sum(r["cost_usd"] for r in rows)
    unpriced = sorted({r["juror_model"] for r in rows if not r["priced"]})
    console.print(
        f"{sum(r['ballots'] for r in rows)} ballots for {groups} {unit}; estimated cost ${total:.4f}"
        + (f" plus unpriced models: {', '.join(unpriced)}" if unpriced else "")
    )
