"""What the commands that call jurors share: printing plans and run statistics."""

from __future__ import annotations


def print_run_stats(console, stats, path, reused_file: bool = False) -> None:
    if stats is None:  # the job's verdict set was already locked: nothing was asked
        console.print(f"up to date: {path} already holds this verdict set (unchanged; nothing called, nothing written)")
        return
    if stats.unpriced and stats.guard is not None and stats.guard.cap is not None:
        console.print(
            f"[yellow]--max-cost could not count {', '.join(stats.unpriced)}: litellm has no price for "
            "them, so their calls counted as $0 against the cap[/]"
        )
    retries = stats.requests - stats.asked
    unpriced = _unpriced(stats, path) if stats.asked else []
    if unpriced:  # litellm has no price for some jurors: the sum is not the cost
        priced = f"; ${stats.cost_usd:.4f} for the others" if stats.cost_usd else ""
        cost = f"cost this run unknown (litellm has no price for {', '.join(unpriced)}{priced})"
    else:
        cost = f"cost this run ${stats.cost_usd:.4f}"
    console.print(
        f"calls this run: {stats.asked} ballots asked, {stats.requests} requests sent "
        f"({retries} retr{'y' if retries == 1 else 'ies'}); "
        f"votes reused from the store: {stats.reused}; identical "
        f"requests shared within this run: {stats.shared}; skipped by early stop: {stats.skipped}; "
        f"{cost}\nverdict file: {path}"
        + (" (unchanged: an identical verdict set was already locked there; nothing written)" if reused_file else "")
    )


def _unpriced(stats, path) -> list[str]:
    """The juror models litellm has no price for: the run's (known with --max-cost), else the
    verdict file's totals.unpriced_models."""
    if stats.unpriced or path is None:
        return list(stats.unpriced)
    from jury.errors import JuryError
    from jury.verdicts.lock import load_locked

    try:
        return list(load_locked(path).totals.unpriced_models or [])
    except JuryError:
        return []


def print_plan(console, ballots, title: str, groups: int, unit: str, batch: bool = False) -> None:
    from jury.judging.runner import plan_rows
    from jury.results.render import to_rich_table

    rows = plan_rows(ballots, batch)
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
    batched = sorted({r["juror"] for r in rows if r.get("via") == "batch"})
    if batched:
        guessed = sorted({r["juror"] for r in rows if r.get("batch_rate_estimated")})
        console.print(
            f"batch API (the batch price) for: {', '.join(batched)}"
            + (f"; estimated at 50% of the synchronous price for: {', '.join(guessed)}" if guessed else ""),
            markup=False,
            highlight=False,
        )
