"""Spider 2.0-AIFunc's figures in the score report: the execution-error rate of every model,
execution accuracy per AI-function type (``--function-set``) and the median and all-solved
time ratios (``--efficiency``), as CSV fields, table columns and a per-type table.

The **execution-error rate** is the share of a model's routed questions (strict's
denominator: gold errors and misrouted answers left out) whose answer fails to execute or
times out (outcomes ``error`` and ``timeout``), with a Wilson 95% interval. A question without a
usable answer (``missing``) is not an execution error; under ``--missing fail`` it is
counted wrong but not here.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jury.results.render import UNWRAPPED_WIDTH, interval, safe, to_markdown, to_rich_table
from jury.results.scoring import proportion
from jury.vocab import Outcome

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult, Settings
    from jury.compare.reruns import RerunRecord
    from jury.results.scoring import ExecutionErrors, ModelScore

EXECUTION_FAILURES = (Outcome.ERROR, Outcome.TIMEOUT)


def execution_error_column(
    pairs: Sequence[PairResult], reruns: Mapping[str, RerunRecord] | None = None
) -> dict[str, ExecutionErrors]:
    """model -> {k: answers that fail or time out, n: routed questions, value, low, high,
    errors, timeouts}; with ``reruns`` (jury.compare.reruns' record, by prediction key) also
    ``timeouts_rerun`` (routed answers re-run after a timeout) and ``rerun_recovered`` (those
    whose last run did not time out)."""
    counts: dict[str, list[int]] = {}
    for p in pairs:
        c = counts.setdefault(p.model, [0, 0, 0, 0, 0])
        if p.excluded or not p.routed:
            continue
        c[0] += p.outcome == Outcome.ERROR
        c[1] += p.outcome == Outcome.TIMEOUT
        c[2] += 1
        again = (reruns or {}).get(p.pred_key) if p.pred_key is not None else None
        if again is not None:
            c[3] += 1
            c[4] += again["status"] != "timeout"
    out: dict[str, ExecutionErrors] = {}
    for m, (e, t, n, rerun, recovered) in counts.items():
        share = proportion(e + t, n)
        row: ExecutionErrors = {
            "k": share["k"],
            "n": share["n"],
            "value": share["value"],
            "low": share["low"],
            "high": share["high"],
            "errors": e,
            "timeouts": t,
        }
        if reruns is not None:
            row.update({"timeouts_rerun": rerun, "rerun_recovered": recovered})
        out[m] = row
    return out


def function_type_names(scores: Sequence[ModelScore]) -> list[str]:
    """Every function type any model has, in the order of the first model that has each."""
    names: dict[str, None] = {}
    for s in scores:
        names.update(dict.fromkeys(s.function_types or {}))
    return list(names)


def add_fields(rows: list[dict[str, Any]], scores: Sequence[ModelScore]) -> None:
    """The CSV fields: execution_errors(_rate, _low, _high), timeouts; per function type
    ex_<TYPE>_k, ex_<TYPE>_n, ex_<TYPE> (every type in every row, empty when a model has no
    question of it); time_ratio_median and the all-solved ratios with --efficiency."""
    types = function_type_names(scores)
    for row, s in zip(rows, scores):
        e = s.execution_errors
        if e is not None:
            row.update(
                {
                    "execution_errors": e["errors"],
                    "execution_timeouts": e["timeouts"],
                    "execution_error_rate": e["value"],
                    "execution_error_low": e["low"],
                    "execution_error_high": e["high"],
                }
            )
            if "timeouts_rerun" in e:
                row.update({"timeouts_rerun": e["timeouts_rerun"], "rerun_recovered": e["rerun_recovered"]})
        for name in types:
            p = (s.function_types or {}).get(name)
            row.update({f"ex_{name}_k": p and p["k"], f"ex_{name}_n": p and p["n"], f"ex_{name}": p["value"] if p else None})
        if s.efficiency is not None:
            eff = s.efficiency
            for key in ("time_ratio_median", "all_solved_questions", "time_ratio_all_solved", "time_ratio_all_solved_median"):
                row[key] = eff.get(key)


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def add_display(
    rows: list[dict[str, Any]], display: list[dict[str, Any]], columns: list[str], headers: list[str], *, wide: bool
) -> str:
    """Table and Markdown columns: the execution-error rate (with --wide, or whenever a
    function-set breakdown was asked for), the median time ratio and the all-solved ratios
    beside the mean (with --efficiency). Returns a caption note."""
    note = ""
    show_errors = rows and "execution_error_rate" in rows[0] and (wide or any(k.startswith("ex_") for k in rows[0]))
    if show_errors:
        for d, r in zip(display, rows):
            d["exec_errors_shown"] = (
                "—"
                if r["execution_error_rate"] is None
                else f"{r['execution_error_rate']:.3f} ({r['execution_errors'] + r['execution_timeouts']})"
            )
        columns.append("exec_errors_shown")
        headers.append("exec error rate (n)")
        note += "\nexec error rate: answers that fail or time out, over routed questions"
    if rows and "time_ratio_median" in rows[0]:
        at = columns.index("ratio_shown") + 1 if "ratio_shown" in columns else len(columns)
        for d, r in zip(display, rows):
            d["ratio_median_shown"] = _number(r["time_ratio_median"])
            d["all_solved_shown"] = (
                "—"
                if r["time_ratio_all_solved"] is None
                else f"{r['time_ratio_all_solved']:.3f} / {r['time_ratio_all_solved_median']:.3f}"
            )
        columns[at:at] = ["ratio_median_shown", "all_solved_shown"]
        headers[at:at] = ["t_pred/t_gold median", "all-solved mean / median"]
        n = rows[0]["all_solved_questions"]
        note += f"\nall-solved: t_pred/t_gold over the {n} question{'s' if n != 1 else ''} every model matched and timed"
    return note


def function_type_text(scores: Sequence[ModelScore], fmt: str, width: int | None = None) -> str:
    """The per-function-type table below the score table (table and md formats), or ""."""
    types = function_type_names(scores)
    if not types or fmt not in ("table", "md"):
        return ""
    rows = []
    for s in scores:
        row = {"model": s.model}
        for name in types:
            p = (s.function_types or {}).get(name)
            row[name] = "—" if p is None else f"{interval(p)} ({p['k']}/{p['n']})"
        rows.append(row)
    headers = ["model", *(f"EX {name}" for name in types)]
    caption = (
        "execution accuracy per function type: a question counts under each function its gold calls "
        "(of the --function-set pattern); (none): golds calling none"
    )
    if fmt == "md":
        return "\n" + to_markdown(rows, ["model", *types], headers) + "\n" + safe(caption) + "\n"

    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or UNWRAPPED_WIDTH, soft_wrap=width is None, highlight=False)
    console.print(to_rich_table(rows, ["model", *types], headers, title="execution accuracy by function type"))
    console.print(safe(caption), markup=False)
    return buffer.getvalue()


def add_execution_errors(
    scores: Sequence[ModelScore], pairs: Sequence[PairResult], reruns: Mapping[str, RerunRecord] | None = None
) -> None:
    """Fill every score's ``execution_errors`` (:func:`execution_error_column`; the re-run
    counts when ``reruns`` is given, i.e. timeout retries were asked for)."""
    column = execution_error_column(pairs, reruns)
    for s in scores:
        s.execution_errors = column.get(s.model)


def protocol_settings(settings: Settings) -> dict[str, Any]:
    """The JSON's record of Spider 2.0-AIFunc's execution protocol, when it was asked for:
    ``timeout_retries`` (re-runs of a timed-out prediction) and ``same_window`` (nothing
    reused from the store)."""
    out: dict[str, Any] = {}
    if settings.timeout_retries:
        out["timeout_retries"] = settings.timeout_retries
    if settings.same_window:
        out["same_window"] = True
    return out
