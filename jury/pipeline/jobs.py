"""Whole jobs: adjudicate a run, audit a gold file. Commands and re-audits call these."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from jury.errors import CostCapReached, IncompleteRun, InputError, JuryError
from jury.progress import ProgressFactory, no_progress

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation
    from jury.inputs.run_files import RunFile
    from jury.judging.adjudication import AdjudicationPlan
    from jury.judging.gold_audit import AuditPlan
    from jury.judging.runner import RunStats
    from jury.pipeline.requests import AdjudicationRequest, AuditRequest

PlanT = TypeVar("PlanT")  # AdjudicationPlan or AuditPlan


def require_keys(panel, jurors) -> None:
    """Before any call: every juror's key is set and every juror served on this machine answers
    (require_servers)."""
    jurors = list(jurors)
    missing = panel.missing_keys(jurors)
    if missing:
        raise InputError(
            f"no API key for panel {panel.name!r}: set {', '.join(missing)} (nothing was called); "
            "--plan prices the ballots without calling, and --panel local-demo runs without keys "
            "on two tiny local models (`jury local-juror start` first; pip install 'jury-sql[local]')"
        )
    require_servers(panel, jurors)


def require_priced(panel, jurors, max_cost: float | None) -> None:
    """With a cost cap, every juror has a price: a juror litellm cannot price counted $0 against
    the cap, so the cap did not bound what the run spends. A juror declared ``free`` (your own
    server) or recorded costs nothing and passes."""
    if max_cost is None:
        return
    from jury.judging.client import has_price

    unpriced = [j for j in jurors if not j.costs_nothing and not has_price(j.model)]
    if unpriced:
        j = unpriced[0]
        more = f" (and {len(unpriced) - 1} more juror{'s' if len(unpriced) > 2 else ''})" if len(unpriced) > 1 else ""
        raise InputError(
            f"panel {panel.name!r}, juror {j.name!r}: litellm has no price for model {j.model!r}{more}, so a "
            f"cost cap (max_cost ${max_cost:g}) cannot count its calls (nothing was run); check the model's "
            "name, declare it `free = true` in the panel file if it runs on your own server, or drop the cap"
        )


def jurors_to_ask(panel, registry, records, models: list[str] | None = None) -> list:
    """Every juror of ``panel`` that a ballot of these run records could go to: for each model
    (of ``models``, when given), the family-disjoint jurors jury.judging.panels.select_jurors
    picks. Known from the run files alone, so keys, servers and prices are checked before any
    SQL is executed."""
    from jury.judging.panels import select_jurors

    wanted = set(models) if models else None
    declared: dict[str, list[str]] = {}
    for rec in records:
        if wanted is None or rec.model in wanted:
            declared.setdefault(rec.model, rec.families())
    chosen = {j.name for model, families in declared.items() for j in select_jurors(panel, registry.families_of(model, families))}
    return [j for j in panel.jurors if j.name in chosen]  # in the panel's order


LOOPBACK_PROBE_S = 1.0
"""How long a juror's loopback server has to accept a connection before a run is refused."""


def require_servers(panel, jurors) -> None:
    """A juror whose api_base is on this machine (a loopback address) must accept a TCP
    connection before anything is asked: a server that is not running was a 24-second
    litellm retry ending in "HTTP 500 ... Connection error". One connection per server, for
    at most LOOPBACK_PROBE_S; remote providers are not probed (their own errors say why)."""
    import ipaddress
    import socket
    from urllib.parse import urlsplit

    from jury.pipeline.local_juror import MODELS as LOCAL_MODELS

    seen: set[tuple[str, int]] = set()
    for j in jurors:
        if not j.api_base or j.recorded is not None:
            continue
        try:
            parts = urlsplit(j.api_base)
            host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            continue  # litellm reports a malformed api_base itself
        if host is None:
            continue
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback or (host, port) in seen:
            continue
        seen.add((host, port))
        try:
            socket.create_connection((host, port), timeout=LOOPBACK_PROBE_S).close()
        except OSError as exc:
            alias = j.model.split("/", 1)[-1]
            how = (
                "start it: `jury local-juror start`"
                if alias in LOCAL_MODELS
                else "start the server it names (Ollama, vLLM, llama.cpp, ...)"
            )
            raise InputError(
                f"panel {panel.name!r}, juror {j.name!r}: nothing answers at {j.api_base} "
                f"({exc.strerror or type(exc).__name__}; nothing was called); {how}"
            ) from None


def raise_if_capped(stats) -> None:
    if stats.not_asked:
        raise CostCapReached(
            f"stopped at the cost cap: ${stats.cost_usd:.4f} spent this run, {stats.not_asked} ballots "
            "not asked; every vote so far is stored: rerun with a higher max_cost to go on "
            "(no verdict file written for an incomplete set)"
        )


def raise_if_pending(stats) -> None:
    """--batch: ballots still waiting in providers' batches are not votes yet: no verdict file.
    First, a warning per batch that could not be polled or whose results left lines out."""
    import sys

    for note in getattr(stats, "batch_notes", None) or []:
        print(f"Warning: {note}", file=sys.stderr, flush=True)
    waiting = getattr(stats, "batch_pending", None)
    if not waiting:
        return
    n = sum(waiting.values())
    where = ", ".join(f"{k} ({v})" for k, v in sorted(waiting.items()))
    failed = f"; {stats.transport_failures} more got no vote and will be asked again" if stats.transport_failures else ""
    raise IncompleteRun(
        f"{n} ballot{'s' if n != 1 else ''} pending in batches: {where}{failed}; no verdict file written for an "
        "incomplete set; every reply received is stored: rerun the same command (or `jury batch collect`) once "
        "they end (`jury batch status` lists them)"
    )


def raise_if_incomplete(stats) -> None:
    """A ballot that failed on transport or configuration is not a vote: no verdict file."""
    n = stats.transport_failures
    if not n:
        return
    reason, times = stats.failure_reasons.most_common(1)[0] if stats.failure_reasons else ("unknown", n)
    raise IncompleteRun(
        f"{n} ballot{'s' if n != 1 else ''} got no vote (transport or configuration failure; "
        f"most often: {reason}{f' ({times}x)' if times > 1 else ''}); no verdict file written for an "
        f"incomplete set; every vote received is stored: a rerun asks only " + (f"those {n} ballots" if n != 1 else "that ballot")
    )


def write_failed(exc: OSError, output: Path | None) -> JuryError:
    where = output if output is not None else "the verdicts folder"
    return JuryError(
        f"{where}: cannot write the verdict file: {exc.strerror or exc}; every vote is stored: "
        "rerun once it can be written (no call is repeated)"
    )


@dataclass
class JobResult(Generic[PlanT]):
    plan: PlanT
    records: list[dict] | None = None
    stats: RunStats | None = None
    path: Path | None = None
    reused_file: bool = False  # an identical locked file already existed: nothing was written
    evaluation: Evaluation | None = None
    summary: dict | None = None  # an audit's flag rates (jury.judging.audit.summarize)
    agreement: dict | None = None  # an adjudication's agreement (jury.judging.agreement.agreement_summary)


def load_and_evaluate(
    gold_path: Path,
    runs: Sequence[RunFile | Path],
    db_root: Path | None,
    store,
    settings,
    progress: ProgressFactory = no_progress,
    positions_from: Path | None = None,
    before_execution: Callable[[list], None] | None = None,
    dbs: Sequence[str] = (),
):
    """Gold and runs loaded and checked, every query executed or reused: (gold, records, evaluation).
    A run file may be a published prediction file (load_run_files); ``positions_from``: the gold
    file its entries index by position (default: the gold file); ``before_execution``: called
    with the run records once they are read, before any SQL runs (the checks before work);
    ``dbs``: only the questions of these db_ids (the gold's others and their answers left out)."""
    from jury.compare.outcomes import evaluate
    from jury.inputs.io import load_gold

    gold = load_gold(gold_path)
    notes: list[str] = []  # what reading the runs found that the outputs must say (jury.inputs.importers)
    records = load_run_files(runs, gold, gold_path, positions_from, notes)
    if dbs:
        from jury.compare.gold_checks import select_items

        gold = {g.question_id: g for g in select_items(list(gold.values()), dbs, [], gold_path, "score")}
        kept = [r for r in records if r.question_id in gold]
        lost = [m for m in dict.fromkeys(r.model for r in records) if m not in {r.model for r in kept}]
        if lost:
            raise InputError(
                f"model {lost[0]!r} answers no question of db_id {', '.join(dbs)} in {gold_path}; "
                "is its prediction file indexed by this gold's positions? (--positions-from)"
            )
        records = kept
    if before_execution is not None:
        before_execution(records)
    with progress("executing SQL") as bar:
        ev = evaluate(gold, records, db_root, store, settings, bar)
    ev.input_notes = notes
    return gold, records, ev


def load_run_files(
    runs: Sequence[RunFile | Path],
    gold: dict,
    gold_path: Path,
    positions_from: Path | None = None,
    notes: list[str] | None = None,
) -> list:
    """Run records of run JSONL files and of published prediction files, told apart by their
    content (jury.inputs.kinds): BIRD's predict_dev.json and one SQL per line are each one model,
    named NAME when given as NAME=PATH (jury.inputs.run_files), else after the file, whose
    entries index ``positions_from`` (default: the gold file) by position; only the gold's
    questions are kept (``notes`` gets a line on entries that repeat a question). A NAME given for a run JSONL (which names its models in its lines), a
    model named twice and a model answering a question twice, across the files, are errors."""
    from jury.inputs.importers import prediction_runs
    from jury.inputs.io import load_gold_list, load_runs
    from jury.inputs.kinds import PREDICTION_KINDS, sniff_kind
    from jury.inputs.run_files import run_files

    files = run_files(runs)
    predicted = [f for f in files if sniff_kind(f.path) in PREDICTION_KINDS]
    jsonl = [f for f in files if f not in predicted]
    for f in jsonl:
        if f.model is not None:
            raise InputError(
                f"{f}: NAME=PATH names a prediction file's model, and {f.path} is a run file, "
                "which names its models in its lines; give it without NAME="
            )
    records = load_runs([f.path for f in jsonl], gold) if jsonl or not predicted else []
    if not predicted:
        if positions_from is not None:
            raise InputError(f"positions_from ({positions_from}) is for prediction files; none of the runs is one")
        return records
    positions = load_gold_list(positions_from if positions_from is not None else gold_path)
    from_files = prediction_runs(predicted, gold, positions, notes)
    mine = {r.model for r in records}
    for r in from_files:
        if r.model in mine:
            named = next((f for f in predicted if f.model == r.model), None)
            raise InputError(
                f"model {r.model!r} is both "
                + (f"the NAME of {named}" if named is not None else "a prediction file's name")
                + f" and a model of the run files ({', '.join(str(f) for f in jsonl)}); "
                + ("give it another NAME" if named is not None else "name it apart with NAME=PATH")
            )
    return records + from_files


def adjudication_job(request: AdjudicationRequest, store, progress: ProgressFactory = no_progress) -> JobResult[AdjudicationPlan]:
    """Run an adjudication as ``request`` decided it: execute (or reuse) every query, plan the
    ballots, reuse the locked file already holding this verdict set, else ask the jurors and
    write the locked file (with a shard: only its ballots, and no file)."""
    from jury.judging.adjudication import plan_adjudication, run_adjudication
    from jury.judging.agreement import agreement_summary
    from jury.verdicts.assemble import adjudication_header, existing_verdicts, run_calls, write_adjudication

    r = request

    def checks_before_work(records: list) -> None:  # keys, servers and prices before any SQL runs
        if r.plan_only and r.max_cost is None:  # a plan calls nobody: nothing to check before it
            return
        jurors = jurors_to_ask(r.panel, r.registry, records, r.models)
        if not r.plan_only:
            require_keys(r.panel, jurors)
        require_priced(r.panel, jurors, r.max_cost)

    gold, records, ev = load_and_evaluate(
        r.gold_path, r.run_paths, r.db_root, store, r.settings, progress, r.positions_from, checks_before_work, r.dbs
    )
    plan = plan_adjudication(
        ev, gold, records, r.panel, r.registry, models=r.models, seed=r.seed, swap=bool(r.swap),
        review_passes=r.review_passes, taxonomy=r.taxonomy, repeats=r.repeats,
    )  # fmt: skip
    if r.plan_only:
        return JobResult(plan, evaluation=ev)
    # the ballots hold the results they show (previews, built once): the rows of every execution
    # are let go before the calls, whose peak memory then does not grow with them (issue 46)
    ev.results.clear()
    head = adjudication_header(r.config, r.output, plan, store, ev, r.gold_path, r.run_paths, _recorded(r, plan), r.supersedes)
    found = existing_verdicts(r.config, r.output, head, r.supersedes)
    if found is not None:  # this verdict set is already locked there: reuse it, call nothing
        records = [x.model_dump(mode="json") for x in found[1].records]
        return JobResult(plan, records, None, found[0], True, ev, agreement=agreement_summary(records, r.panel.ballot_style))
    with progress("asking jurors") as bar:
        verdicts, stats = run_adjudication(
            plan, store, early_stop=r.early_stop, max_cost=r.max_cost, progress=bar, shard=r.shard, batch=r.batch
        )
    raise_if_capped(stats)
    raise_if_pending(stats)
    raise_if_incomplete(stats)
    if r.shard is not None:  # an incomplete set by design: the votes are stored, no verdict file
        return JobResult(plan, None, stats, None, False, ev)
    agreement = agreement_summary(verdicts, r.panel.ballot_style)  # the file's and the result's, computed once
    try:
        path, reused = write_adjudication(r.config, r.output, head, plan, verdicts, agreement, store, run_calls(stats))
    except OSError as exc:
        raise write_failed(exc, r.output) from None
    return JobResult(plan, verdicts, stats, path, reused, ev, agreement=agreement)


def _recorded(r: AdjudicationRequest, plan) -> dict:
    """The settings an adjudication file records (and binds: a re-run reads them back)."""
    recorded = {"seed": r.seed, "early_stop": r.early_stop, "models": r.models, **r.settings.describe()}
    if r.swap:  # recorded only when used, so files made without them keep their bindings
        recorded["swap"] = True
    if r.taxonomy is not None:
        recorded["taxonomy"] = r.taxonomy.binding()
    if r.positions_from is not None:  # prediction files as runs: the positions they index, bound (reaudit reads it)
        from jury.verdicts.assemble import verdicts_dir
        from jury.verdicts.verify import bind_file

        recorded["positions_from"] = bind_file(r.positions_from, verdicts_dir(r.config, r.output)).model_dump()
    if r.dbs:  # only these databases' questions (recorded only when used, as swap)
        recorded["dbs"] = list(r.dbs)
    if r.repeats > 1:  # recorded only when used, as swap
        recorded["repeats"] = r.repeats
    if r.review_passes:
        recorded["review_passes"] = r.review_passes
        recorded["reviewed_passes"] = {m: {"sampled": s, "matches": n} for m, (s, n) in plan.reviewed.items()}
    return recorded


def audit_job(request: AuditRequest, store, progress: ProgressFactory = no_progress) -> JobResult[AuditPlan]:
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


def _audit_run(r: AuditRequest, store, progress, plan, databases, found_checks, check_settings, cross) -> JobResult[AuditPlan]:
    """The audit after its plan: the locked file already holding this verdict set, or the votes
    and the locked file."""
    from jury.judging.gold_audit import run_audit, summarize
    from jury.verdicts.assemble import audit_header, run_calls, write_audit

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
        path, reused = write_audit(r.config, r.output, head, plan, records, summary, store, run_calls(stats))
    except OSError as exc:
        raise write_failed(exc, r.output) from None
    return JobResult(plan, records, stats, path, reused, summary=summary)


def _gold_checks(items, databases, passes, progress: ProgressFactory, store, against=None) -> tuple[dict, dict]:
    """The deterministic checks of every gold item with SQL to execute (no model): (question_id
    -> findings, the settings they ran with). A check whose inputs did not change since it was
    stored is read from the store (jury.compare.gold_check_store); the others run on one
    process per CPU and are stored."""
    from jury.compare.gold_check_store import stored_gold_checks
    from jury.compare.outcomes import Settings
    from jury.vocab import DEFAULT_COMPARATOR, DEFAULT_GOLD_PASSES, DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

    passes = tuple(passes or DEFAULT_GOLD_PASSES)
    with progress("checking gold SQL") as bar:
        results = stored_gold_checks(
            store, items, databases, passes=passes, comparator=DEFAULT_COMPARATOR, timeout_s=DEFAULT_TIMEOUT_S,
            row_cap=DEFAULT_ROW_CAP, progress=bar, against=against, workers=Settings().workers,
        ).results  # fmt: skip
    settings = {"passes": list(passes), "comparator": DEFAULT_COMPARATOR, "timeout_s": DEFAULT_TIMEOUT_S}
    if against is not None:  # recorded only when it ran: audits without it keep their bindings
        settings["cross_engine"] = {
            "against": against.label,
            "databases": {db_id: [str(path), sha] for db_id, (path, sha) in sorted(against.databases.items())},
        }
    return {r.question_id: r.checks for r in results}, settings


def _existing_audit(cfg, output, head: dict, legacy: dict | None, supersedes: str | None):
    """existing_verdicts for an audit job; with ``legacy`` (the same job's header without the
    checks, when the jurors do not see them) a locked file made without checks (before they
    existed, or with --no-checks) also holds this verdict set: the checks change no vote, so
    a rerun of such a job is up to date rather than a second file (or a refused -o)."""
    from jury.errors import VerdictError
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
