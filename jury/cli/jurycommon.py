"""What the commands that call jurors share: printing plans and run statistics."""

from __future__ import annotations


def print_run_stats(console, stats, path, reused_file: bool = False) -> None:
    if stats is None:  # the job's verdict set was already locked: nothing was asked
        console.print(f"up to date: {path} already holds this verdict set (unchanged; nothing called, nothing written)")
        return
    if stats.unpriced:
        console.print(
            f"[yellow]--max-cost could not count {', '.join(stats.unpriced)}: litellm has no price for "
            "them, so their calls counted as $0 against the cap[/]"
        )
    console.print(
        f"calls this run: {stats.asked}; votes reused from the store: {stats.reused}; identical "
        f"requests shared within this run: {stats.shared}; skipped by early stop: {stats.skipped}; "
        f"cost this run ${stats.cost_usd:.4f}\nverdict file: {path}"
        + (" (unchanged: an identical verdict set was already locked there; nothing written)" if reused_file else "")
    )


def print_plan(console, ballots, title: str, groups: int, unit: str) -> None:
    from jury.judging.runner import plan_rows
    from jury.results.render import to_rich_table

    rows = plan_rows(ballots)
    for r in rows:
        r["cost"] = f"${r['cost_usd']:.4f}" if r["priced"] else "unknown price"
    cols = (
        [c for c in ("model", "juror", "juror_model", "ballots", "prompt_tokens", "completion_tokens", "cost") if c in rows[0]]
        if rows
        else []
    )
    heads = {
        "model": "model under test",
        "juror": "juror",
        "juror_model": "juror model",
        "ballots": "ballots",
        "prompt_tokens": "est. prompt tokens",
        "completion_tokens": "est. completion tokens",
        "cost": "est. cost",
    }
    console.print(to_rich_table(rows, cols, [heads[c] for c in cols], title=title))
    total = sum(r["cost_usd"] for r in rows)
    unpriced = sorted({r["juror_model"] for r in rows if not r["priced"]})
    console.print(
        f"{sum(r['ballots'] for r in rows)} ballots for {groups} {unit}; estimated cost ${total:.4f}"
        + (f" plus unpriced models: {', '.join(unpriced)} (their calls count as $0 against --max-cost)" if unpriced else "")
    )
