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

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator
from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.errors import InputError, VerdictError
from jury.jobs.juror_jobs import JurorJob, JurorRequest, finish, guarded, juror_plan, juror_request_fields, renamed
from jury.judging.agreement import agreement_line
from jury.judging.panels import require_keys, require_priced, warn_unknown_params
from jury.judging.rules import AuditSummary, FlagRate
from jury.options import job_options
from jury.options.audit import AuditOptions
from jury.pipeline.jobs import JobResult, raise_if_capped, raise_if_incomplete, raise_if_pending, write_failed
from jury.pipeline.project import PathLike, Project
from jury.progress import ProgressFactory, no_progress
from jury.vocab import DEFAULT_COMPARATOR, DEFAULT_GOLD_PASSES, DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S, GOLD_CHECKS, GoldCheck

if TYPE_CHECKING:
    from jury.compare.gold_checks import CheckFinding, CrossEngine
    from jury.execution.engine_urls import Databases
    from jury.execution.store import Store
    from jury.inputs.records import GoldItem, QuestionId
    from jury.judging.gold_audit import AuditPlan


class CheckCounts(TypedDict):
    """:func:`check_counts`: the gold queries the deterministic checks covered, those any check
    flagged, and how many each check flagged (every check of jury.vocab.GOLD_CHECKS)."""

    checked: int
    flagged: int
    by_check: dict[GoldCheck, int]


class Audit(JurorJob):
    """What ``jury.audit_gold`` returns: the plan (``plan``), and after a run the summary (flag
    rates overall, by difficulty, by split and per juror, Fleiss' kappa, defect types and
    agreement), what the deterministic checks flagged (``checks``), the calls and the file."""

    summary: AuditSummary | None = None
    checks: CheckCounts | None = Field(
        None, description="Gold queries checked, flagged by any check, and flagged per check (None: no checks ran)."
    )
    records: list[dict[str, Any]] = Field(default_factory=list, exclude=True, repr=False)  # the audit file's records

    def _summary_lines(self) -> list[str]:
        return [*audit_lines(self.summary), *([] if self.checks is None else [check_line(self.checks)])]

    def _csv(self) -> str:
        """One row per juror: defective votes, valid votes, flag rate and abstentions."""
        from jury.results.render import to_csv

        jurors = {} if self.summary is None else self.summary["jurors"]
        rows = [{"juror": name, **j} for name, j in jurors.items()]
        return to_csv(rows, ["juror", "defective", "valid_votes", "flag_rate", "abstentions"])


class AuditRequest(JurorRequest):
    """A gold audit: which gold items, which audit panel, which deterministic checks first.

    Building one refuses a panel whose ballot style is not ``audit`` and a panel that shows the
    checks to its jurors when ``checks`` is off."""

    db_urls: Any = Field(None, description="Where each db_id's database is on an engine (jury.execution.engines).")
    dbs: list[str] | None = Field(None, description="Only these db_ids.")
    question_ids: list[str] | None = Field(None, description="Only these questions.")
    split: str | None = Field(None, description="The split of the items without one.")
    checks: bool = Field(True, description="Run the deterministic gold checks first (no model) and record them.")
    check_passes: tuple[int, ...] | None = Field(None, description="The checks' passes (None: Spider 2.0-AIFunc's).")
    against: tuple[Path, str | None, Path | None] | None = Field(
        None, description="(gold file, engine URL, SQLite root) of the cross-engine check."
    )
    repeats: int = Field(1, description="Ask the panel this many times, each repeat its own stored vote (--repeats).")

    @model_validator(mode="after")
    def _decide(self) -> AuditRequest:
        panel = self.panel
        if panel.ballot_style != "audit":
            raise InputError(
                f"panel {panel.name!r} ({panel.path}) is a {panel.ballot_style} adjudication panel; "
                'the gold audit needs ballot_style = "audit"'
            )
        warn_unknown_params(panel)
        if self.repeats < 1:
            raise InputError(f"repeats must be at least 1, got {self.repeats}")
        self._refuse_foreign_output()
        if panel.show_checks and not self.checks:
            raise InputError(
                f"panel {panel.name!r} ({panel.path}) sets show_checks: the jurors need the checks (checks cannot be off)"
            )
        return self


def audit_lines(summary: AuditSummary | None) -> list[str]:
    """The audit's summary as the command prints it."""
    if summary is None:
        return []
    o = summary["overall"]

    def pct(r: FlagRate) -> str:
        return "—" if r["rate"] is None else f"{100 * r['rate']:.1f}%"

    lines = [f"flagged {o['flagged']} of {o['questions']} gold queries ({pct(o)}); undecided {summary['undecided']}"]
    for title, rates in (("by difficulty", summary["by_difficulty"]), ("by split", summary["by_split"])):
        parts = [f"{k}: {v['flagged']}/{v['questions']} ({pct(v)})" for k, v in rates.items()]
        lines.append(f"  {title}: " + "; ".join(parts))
    for name, j in summary["jurors"].items():
        rate = "—" if j["flag_rate"] is None else f"{100 * j['flag_rate']:.1f}%"
        lines.append(f"  juror {name}: flags {j['defective']} of {j['valid_votes']} ({rate}), abstained {j['abstentions']}")
    kappa = summary["fleiss_kappa"]
    lines.append(f"  Fleiss' kappa: {'—' if kappa is None else f'{kappa:.3f}'}")
    if summary["defect_types"]:
        lines.append("  defect types (votes): " + ", ".join(f"{k} {v}" for k, v in summary["defect_types"].items()))

    lines.append("  " + agreement_line(summary["agreement"]))
    return lines


def check_counts(records: list[dict[str, Any]]) -> CheckCounts | None:
    """How many gold queries the deterministic checks covered and flagged (any, and per check);
    None when no record has checks."""

    checked = [r["checks"] for r in records if r.get("checks") is not None]
    if not checked:
        return None
    counts = {name: sum(any(f["name"] == name for f in c) for c in checked) for name in GOLD_CHECKS}
    out: CheckCounts = {"checked": len(checked), "flagged": sum(bool(c) for c in checked), "by_check": counts}
    return out


def check_line(checks: CheckCounts) -> str:
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

    o = job_options(AuditOptions, "audit_gold", options, overrides)
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


def audit_job(request: AuditRequest, store: Store, progress: ProgressFactory = no_progress) -> JobResult[AuditPlan]:
    """Run a gold audit as ``request`` decided it: the deterministic gold checks first (before
    any juror call; recorded in each record's ``checks`` and in settings.checks, shown to the
    jurors when the panel's show_checks is on), then the plan, the locked file already holding
    this verdict set or the jurors' votes and the locked file (with a shard: no file)."""
    from jury.compare.gold_checks import select_items
    from jury.compare.outcomes import execute_gold, resolve_databases
    from jury.inputs.io import load_gold
    from jury.judging.gold_audit import plan_audit

    r = request
    if not r.plan_only:  # keys, servers and prices before any SQL runs
        require_keys(r.panel, r.panel.jurors)
    require_priced(r.panel, r.panel.jurors, r.max_cost)
    items = select_items(list(load_gold(r.gold_path).values()), r.dbs or [], r.question_ids or [], r.gold_path, "audit")
    items = [i if i.split or not r.split else i.model_copy(update={"split": r.split}) for i in items]
    databases = resolve_databases([i for i in items if not i.has_recording], r.db_root, store, r.db_urls)
    results = None
    if r.panel.show_preview:
        with progress("executing gold SQL") as bar:
            results = execute_gold(items, databases, store, progress=bar)
    found_checks, check_settings, cross = None, None, None
    if r.checks and (r.panel.show_checks or not r.plan_only):  # executions only: no juror is called here
        if r.against is not None:
            from jury.compare.gold_checks import cross_engine_side

            cross = cross_engine_side(items, Path(r.against[0]), r.against[1], r.against[2], store, r.db_root)
        found_checks, check_settings = _gold_checks(items, databases, r.check_passes, progress, store, cross)
    plan = plan_audit(items, r.panel, databases, results, found_checks, repeats=r.repeats)
    if r.plan_only:
        return JobResult(plan)
    return _audit_run(r, store, progress, plan, databases, found_checks, check_settings, cross)


def _audit_run(
    r: AuditRequest,
    store: Store,
    progress: ProgressFactory,
    plan: AuditPlan,
    databases: Databases,
    found_checks: dict[QuestionId, list[CheckFinding]] | None,
    check_settings: dict[str, Any] | None,
    cross: CrossEngine | None,
) -> JobResult[AuditPlan]:
    """The audit after its plan: the locked file already holding this verdict set, or the votes
    and the locked file."""
    from jury.judging.gold_audit import run_audit, summarize
    from jury.verdicts.assemble import audit_header, run_calls, write_verdicts

    audit_settings = {
        "quorum": r.panel.quorum,
        "split": r.split,
        "dbs": r.dbs or None,
        "question_ids": sorted({str(q) for q in r.question_ids}) if r.question_ids else None,
    }
    if r.repeats > 1:  # recorded only when used: audits asked once keep their bindings
        audit_settings["repeats"] = r.repeats
    legacy = None
    if check_settings is not None:  # recorded only when they ran: jobs without them keep their bindings
        if not r.panel.show_checks:  # the jurors' ballots are those of the same job without checks
            legacy = audit_header(r.config, r.output, plan, store, databases, r.gold_path, dict(audit_settings), r.supersedes)
        audit_settings["checks"] = check_settings
    against_urls = [path for path, _sha in cross.databases.values()] if cross is not None else []
    head = audit_header(r.config, r.output, plan, store, databases, r.gold_path, audit_settings, r.supersedes, against_urls)
    found = _existing_audit(r.config, r.output, head, legacy, r.supersedes)
    if found is not None:  # this verdict set is already locked there: reuse it, call nothing
        records = [x.model_dump(mode="json") for x in found[1].records]
        return JobResult(plan, records, None, found[0], True, summary=summarize(records))
    with progress("auditing gold SQL") as bar:
        records, stats = run_audit(plan, store, max_cost=r.max_cost, progress=bar, shard=r.shard, batch=r.batch)
    raise_if_capped(stats)
    raise_if_pending(stats)
    raise_if_incomplete(stats)
    if r.shard is not None:  # an incomplete set by design: the votes are stored, no verdict file
        return JobResult(plan, None, stats)
    for record in records:
        findings = (found_checks or {}).get(record["question_id"])
        if findings is not None:  # absent for an item with nothing to execute, or without checks
            record["checks"] = [f.model_dump(mode="json") for f in findings]
    summary = summarize(records)
    try:
        path, reused = write_verdicts("audit", r.config, r.output, head, plan, records, summary, store, run_calls(stats))
    except OSError as exc:
        raise write_failed(exc, r.output) from None
    return JobResult(plan, records, stats, path, reused, summary=summary)


def _gold_checks(
    items: list[GoldItem],
    databases: Databases,
    passes: tuple[int, ...] | None,
    progress: ProgressFactory,
    store: Store,
    against: CrossEngine | None = None,
) -> tuple[dict[QuestionId, list[CheckFinding]], dict[str, Any]]:
    """The deterministic checks of every gold item with SQL to execute (no model): (question_id
    -> findings, the settings they ran with). A check whose inputs did not change since it was
    stored is read from the store (jury.compare.gold_check_store); the others run on one
    process per CPU and are stored."""
    from jury.compare.gold_check_store import CheckSettings, stored_gold_checks
    from jury.compare.outcomes import Settings

    passes = tuple(passes or DEFAULT_GOLD_PASSES)
    checks = CheckSettings(passes=passes, comparator=DEFAULT_COMPARATOR, timeout_s=DEFAULT_TIMEOUT_S, row_cap=DEFAULT_ROW_CAP)
    with progress("checking gold SQL") as bar:
        results = stored_gold_checks(
            store, items, databases, checks, progress=bar, against=against, workers=Settings().workers
        ).results
    settings = {"passes": list(passes), "comparator": DEFAULT_COMPARATOR, "timeout_s": DEFAULT_TIMEOUT_S}
    if against is not None:  # recorded only when it ran: audits without it keep their bindings
        settings["cross_engine"] = {
            "against": against.label,
            "databases": {db_id: [str(path), sha] for db_id, (path, sha) in sorted(against.databases.items())},
        }
    return {r.question_id: r.checks for r in results}, settings


def _existing_audit(
    cfg: Any, output: Path | None, head: dict[str, Any], legacy: dict[str, Any] | None, supersedes: str | None
) -> Any:  # existing_verdicts': (path, AuditFile) or None
    """existing_verdicts for an audit job; with ``legacy`` (the same job's header without the
    checks, when the jurors do not see them) a locked file made without checks (before they
    existed, or with --no-checks) also holds this verdict set: the checks change no vote, so
    a rerun of such a job is up to date rather than a second file (or a refused -o)."""
    from jury.verdicts.assemble import existing_verdicts

    if legacy is None:
        return existing_verdicts(cfg, output, head, supersedes)
    try:
        found = existing_verdicts(cfg, output, head, supersedes)  # a file with checks first
    except VerdictError as exc:  # -o names a file of another job, unless it is this one without checks
        try:
            return existing_verdicts(cfg, output, legacy, supersedes)
        except VerdictError:
            raise exc from None
    return found if found is not None else existing_verdicts(cfg, output, legacy, supersedes)
