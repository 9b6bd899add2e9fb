"""Spider 2.0-AIFunc's tolerance of transient failures: a prediction that times out is run
again, up to ``Settings.timeout_retries`` times, before it is called a timeout.

The benchmark's evaluator gives each execution up to two retries for transient errors
(timeouts and connection failures among them). jury re-runs timeouts only: an error of the
query itself (no such column) is not transient on a read-only database. Each re-run is a
fresh execution that replaces the stored result, so the last attempt's result is the one
scored; a re-run that finishes within the timeout ends the retries. A stored timeout from an
earlier run is re-run too. Gold queries are not re-run (a gold that times out is a
``gold_error``, left out of every denominator). What happened is recorded per prediction:
``{key: {"reruns": attempts made, "status": the final result's status}}``.
"""

from __future__ import annotations

from typing import Protocol, TypedDict

from jury.execution.store import Store
from jury.inputs.records import ExecStatus


class RerunRecord(TypedDict):
    """What happened to one prediction re-run: the attempts made, the final result's status."""

    reruns: int
    status: ExecStatus


class RunAgain(Protocol):
    """Runs the executions ``jobs`` (key -> (db_id, SQL)), those of ``rerun`` even when stored;
    returns how many it ran (jury.compare.outcomes.run_executions, bound)."""

    def __call__(self, jobs: dict[str, tuple[str, str]], /, *, rerun: list[str]) -> int: ...


def rerun_timeouts(
    pred_keys: list[str], jobs: dict[str, tuple[str, str]], store: Store, retries: int, run: RunAgain
) -> dict[str, RerunRecord]:
    """Re-run every prediction of ``pred_keys`` whose stored result is a timeout, up to
    ``retries`` times each, through ``run(jobs, rerun=keys)`` (jury.compare.outcomes'
    run_executions bound to the evaluation's databases and settings); returns the record of
    every one re-run."""
    record: dict[str, RerunRecord] = {}
    pending = [k for k in dict.fromkeys(pred_keys) if k in jobs]
    for _attempt in range(retries):
        stored = store.get_executions(pending)
        pending = [k for k in pending if stored[k].status == "timeout"]
        if not pending:
            break
        run({k: jobs[k] for k in pending}, rerun=pending)
        for k in pending:
            record.setdefault(k, {"reruns": 0, "status": "timeout"})["reruns"] += 1
    if record:
        final = store.get_executions(list(record))
        for k, r in record.items():
            r["status"] = final[k].status
    return record
