"""``jury.audit_gold``: a panel of jurors judges every gold query itself, never seeing model output.

A juror sees the question, the evidence (a panel option), the gold SQL and the columns of
the tables it touches (optionally a preview of the gold result and the deterministic gold
checks). A query is flagged when the panel's quorum (default: a strict majority of the panel,
abstentions included) says defective. The verdicts are locked in an audit file (use it with
``jury.score(audit=...)``); ``render()`` is what ``jury audit-gold`` prints.

>>> import jury
>>> audit = jury.audit_gold("dev.json", panel="audit")  # doctest: +SKIP
>>> print(audit)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from jury.api.juror_jobs import JurorJob, finish, guarded, juror_plan, juror_request_fields, renamed
from jury.options import validated
from jury.options.audit import AuditOptions
from jury.pipeline.project import PathLike, Project

if TYPE_CHECKING:
    from jury.pipeline.jobs import JobResult
    from jury.pipeline.requests import AuditRequest
    from jury.progress import ProgressFactory


class Audit(JurorJob):
    """What ``jury.audit_gold`` returns: the plan (``plan``), and after a run the summary (flag
    rates overall, by difficulty, by split and per juror, Fleiss' kappa, defect types and
    agreement), what the deterministic checks flagged (``checks``), the calls and the file."""

    summary: dict[str, Any] | None = None
    checks: dict[str, Any] | None = Field(
        None, description="Gold queries checked, flagged by any check, and flagged per check (None: no checks ran)."
    )
    records: list[dict[str, Any]] = Field(default_factory=list, exclude=True, repr=False)  # the audit file's records

    def _summary_lines(self) -> list[str]:
        return [*audit_lines(self.summary), *([] if self.checks is None else [check_line(self.checks)])]

    def _csv(self) -> str:
        """One row per juror: defective votes, valid votes, flag rate and abstentions."""
        from jury.results.render import to_csv

        jurors = (self.summary or {}).get("jurors", {})
        rows = [{"juror": name, **j} for name, j in jurors.items()]
        return to_csv(rows, ["juror", "defective", "valid_votes", "flag_rate", "abstentions"])


def audit_lines(summary: dict[str, Any] | None) -> list[str]:
    """The audit's summary as the command prints it."""
    if summary is None:
        return []
    o = summary["overall"]

    def pct(r: dict[str, Any]) -> str:
        return "—" if r["rate"] is None else f"{100 * r['rate']:.1f}%"

    lines = [f"flagged {o['flagged']} of {o['questions']} gold queries ({pct(o)}); undecided {summary['undecided']}"]
    for title, key in (("by difficulty", "by_difficulty"), ("by split", "by_split")):
        parts = [f"{k}: {v['flagged']}/{v['questions']} ({pct(v)})" for k, v in summary[key].items()]
        lines.append(f"  {title}: " + "; ".join(parts))
    for name, j in summary["jurors"].items():
        rate = "—" if j["flag_rate"] is None else f"{100 * j['flag_rate']:.1f}%"
        lines.append(f"  juror {name}: flags {j['defective']} of {j['valid_votes']} ({rate}), abstained {j['abstentions']}")
    kappa = summary["fleiss_kappa"]
    lines.append(f"  Fleiss' kappa: {'—' if kappa is None else f'{kappa:.3f}'}")
    if summary["defect_types"]:
        lines.append("  defect types (votes): " + ", ".join(f"{k} {v}" for k, v in summary["defect_types"].items()))
    if summary.get("agreement") is not None:
        from jury.judging.agreement import agreement_line

        lines.append("  " + agreement_line(summary["agreement"]))
    return lines


def check_counts(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How many gold queries the deterministic checks covered and flagged (any, and per check);
    None when no record has checks."""
    from jury.vocab import GOLD_CHECKS

    checked = [r["checks"] for r in records if r.get("checks") is not None]
    if not checked:
        return None
    counts = {name: sum(any(f["name"] == name for f in c) for c in checked) for name in GOLD_CHECKS}
    return {"checked": len(checked), "flagged": sum(bool(c) for c in checked), "by_check": counts}


def check_line(checks: dict[str, Any]) -> str:
    """One line: how many gold queries each deterministic check flagged."""
    return f"gold checks flagged {checks['flagged']} of {checks['checked']} gold queries: " + (
        "; ".join(f"{name} {n}" for name, n in checks["by_check"].items() if n) or "none"
    )


def audit_gold(
    gold: PathLike | None = None,
    options: AuditOptions | None = None,
    *,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    plan_only: bool | None = None,
    **overrides: Any,
) -> Audit:
    """Audit the gold SQL itself: each juror of the audit panel judges each gold query alone.

    Args:
        gold: the gold file (BIRD's dev.json). Default: jury.toml's ``gold``.
        options: an ``AuditOptions`` (jury.options.audit: every option of ``jury audit-gold`` but the
            gold file, each documented there: ``panel`` (a name, a TOML path or a loaded Panel),
            ``db``, ``question_id``, ``quorum``, ``plan``, ``max_cost``, ``repeats``, ``checks``,
            ``against_gold``, ``output``, ``store``, ``shard``, ...), or none.
        project: the folder's jury.toml defaults (default: the working directory's).
        progress: a progress factory: called with a task's name, returns a context manager giving a
            ``(done, total)`` callback or None (default: no progress shown).
        plan_only: the old name of ``plan``, kept as an alias.
        overrides: AuditOptions' fields as keyword arguments (``panel=``, ``plan=``, ``db_root=``,
            ...), over ``options``'.

    Returns:
        An Audit: the audit file written (or reused), the flagged gold queries and the calls made;
        with ``plan``, the plan.

    Raises:
        CostCapReached: ``max_cost`` was reached.
        IncompleteRun: some ballots got no vote.
        InputError: a bad input.
    """
    from jury.errors import InputError
    from jury.pipeline.jobs import audit_job
    from jury.pipeline.requests import AuditRequest
    from jury.progress import no_progress

    given = dict(options) if options is not None else {}
    o: AuditOptions = validated(AuditOptions, "audit_gold", {**given, **overrides})
    plan = bool(renamed(o.plan, plan_only, "plan", "plan_only", False))
    project = project or Project.load()
    gold_path = project.path("gold", gold)
    fields = juror_request_fields(
        project, output=o.output, inputs=[gold_path], store=o.store, db_root=o.db_root, shard=o.shard, sign=o.sign
    )
    if gold_path is None:
        raise InputError("no gold file: give the gold file or set gold in jury.toml")
    chosen = project.panel(o.panel, "audit_panel", "audit.toml")
    if project.get("quorum", o.quorum) is not None:
        chosen.quorum = project.get("quorum", o.quorum)
    against = None
    if o.against_gold is not None:
        url = project.engine_url(o.against_db_url, "--against-db-url", o.allow_privileged_login)
        against = (o.against_gold, url, o.against_db_root)
    request = AuditRequest(
        panel=chosen, gold_path=gold_path, db_urls=project.db_urls(o.db_url, o.allow_privileged_login),
        dbs=o.db or None, question_ids=o.question_id or None, split=project.get("split", o.split, None),
        max_cost=project.get("max_cost", o.max_cost, None), plan_only=plan, checks=o.checks, batch=o.batch,
        against=against, repeats=o.repeats, **fields,
    )  # fmt: skip
    with project.open_store(o.store) as st:
        job = audit_job(request, st, progress or no_progress)
    return _result(request, job)


def _result(request: AuditRequest, job: JobResult[Any]) -> Audit:
    """What a run (or the plan) of a gold audit returns: the plan, the summary and records, the
    checks' counts, the calls and the audit file."""
    unit = "gold queries" + (f", each asked {request.repeats} times (--repeats)" if request.repeats > 1 else "")
    asked = juror_plan(request, "audit", job.plan.ballots(), len(job.plan.items), unit)
    result = Audit(panel=request.panel.name, plan=asked, plan_only=request.plan_only, **guarded(request))
    if request.plan_only:
        return result
    if job.summary is not None:  # not a shard's run
        result.summary, result.records = job.summary, job.records or []
        result.checks = check_counts(result.records)
    finish(request, result, job)
    return result
