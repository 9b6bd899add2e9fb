"""Assemble verdict documents (header bindings, totals, records) and write them locked."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from jury.errors import JuryError, VerdictError
from jury.verdicts.documents import FORMAT_VERSION, LOCK_KEY, FileBinding, Inputs, PanelBinding, schema_filename, write_schemas
from jury.verdicts.lock import default_path, is_locked_file, load_locked, lock, utc_now, write_locked
from jury.verdicts.verify import bind_file, bind_run, bind_template
from jury.version import __version__, provenance

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation
    from jury.execution.engine_urls import Databases
    from jury.execution.store import Store
    from jury.judging.agreement import AgreementSummary
    from jury.judging.ballots import Template
    from jury.judging.panels import Panel
    from jury.judging.plan import Ballot
    from jury.judging.rules import AuditSummary
    from jury.judging.runner import RunStats
    from jury.verdicts.documents import VerdictFile


class VerdictsConfig(Protocol):
    """Where verdict files go: a jury.inputs.config.Config, or a stand-in naming one folder."""

    def path_of(self, key: str, flag: None, default: str) -> Path | None: ...


class VerdictPlan(Protocol):
    """A judging plan (adjudication, audit, test suite): its panel, template and ballots."""

    @property
    def panel(self) -> Panel: ...

    @property
    def template(self) -> Template: ...

    def ballots(self) -> list[Ballot]: ...


# Left out when a rerun is compared with the files already written (identical_file): the
# lock, the time, and the provenance. A rerun with the same inputs, panel, settings and votes
# is the same verdict set whichever checkout, commit or litellm release re-ran it (its votes
# come from the store); the file already written keeps the provenance of the run that made
# it, and a new commit in a development checkout must not write a duplicate file.
_VOLATILE = (LOCK_KEY, "created_at", "provenance")


def verdicts_dir(cfg: VerdictsConfig, output: Path | None) -> Path:
    if output is not None:
        return Path(output).parent
    folder = cfg.path_of("verdicts_dir", None, "verdicts")
    assert folder is not None  # a default was given
    return folder


def ensure_schema(folder: Path, kind: str) -> None:
    """A verdict file names its JSON Schema by relative path: make sure it is there."""
    if not (folder / "schema" / schema_filename(kind)).is_file():
        write_schemas(folder / "schema")


def store_provenance(store: Store, databases: Databases | None = None, more_urls: Iterable[object] = ()) -> dict[str, Any]:
    """provenance(), the stores merged into `store` (`jury store merge`) when there are any, and
    the engine databases of ``databases`` (and ``more_urls``: those of the cross-engine check)
    executed through a privileged login when there are any."""
    from jury.execution.engine_urls import privileged_logins

    merged = store.merged_sources() if hasattr(store, "merged_sources") else []
    out = {**provenance(), "merged_stores": merged} if merged else provenance()
    logins = privileged_logins([*(path for path, _sha in (databases or {}).values()), *more_urls])
    return {**out, "privileged_logins": logins} if logins else out


def bind_database(path: str | Path, folder: Path, sha: str) -> FileBinding:
    """A SQLite file bound by its path and sha256; a database on an engine by its URL (no
    password: URLs hold none; no query string) and its fingerprint (jury.execution.engines)."""
    from jury.execution.engine_urls import is_url, redact

    if is_url(path):
        return FileBinding(path=redact(str(path)), sha256=sha)  # a URL is a str
    return bind_file(path, folder, sha)


def header(
    kind: str,
    folder: Path,
    panel: Panel,
    template: Template,
    gold_path: str | Path,
    run_paths: Iterable[str | os.PathLike[str]],
    databases: Databases,
    settings: dict[str, Any],
    store: Store,
    request_hashes: list[str],
    supersedes: str | None = None,
    more_urls: Iterable[object] = (),
) -> dict[str, Any]:
    """Everything a verdict file binds: inputs, prompts, panel, settings, totals (``more_urls``:
    engine databases executed beyond ``databases``, for provenance.privileged_logins)."""
    panel_binding = panel.binding()
    if panel.path is not None:
        b = bind_file(panel.path, folder)
        panel_binding["path"], panel_binding["sha256"] = b.path, b.sha256
    return {
        "$schema": f"schema/{schema_filename(kind)}",
        "kind": kind,
        "format_version": FORMAT_VERSION,
        "jury_version": __version__,
        "provenance": store_provenance(store, databases, more_urls),
        "created_at": utc_now(),
        "supersedes": supersedes,
        "inputs": {
            "gold": bind_file(gold_path, folder).model_dump(),
            "runs": [bind_run(p, folder).model_dump() for p in run_paths],
            "databases": {db: bind_database(path, folder, sha).model_dump() for db, (path, sha) in databases.items()},
        },
        "prompts": {template.name: bind_template(template.path, panel.path, folder).model_dump()},
        "panel": panel_binding,
        "settings": settings,
        "totals": with_retries(store.call_totals(request_hashes), store.call_costs(request_hashes)),
    }


# ------------------------------------------------------------------ reruns: before any call

BINDING_KEYS = ("kind", "inputs", "prompts", "panel", "settings")


def job_bindings(doc: dict[str, Any]) -> dict[str, Any]:
    """What makes two verdict sets the same job: kind, inputs, prompt templates, panel and
    settings, normalised as a locked file stores them (not time, totals, votes or version)."""

    return {
        "kind": doc["kind"],
        "inputs": Inputs.model_validate(doc["inputs"]).model_dump(mode="json"),
        "prompts": {k: FileBinding.model_validate(v).model_dump(mode="json") for k, v in doc["prompts"].items()},
        "panel": PanelBinding.model_validate(doc["panel"]).model_dump(mode="json"),
        "settings": json.loads(json.dumps(doc["settings"], sort_keys=True, default=str)),
    }


def binding_differences(have: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """Dotted names of what differs between two job_bindings ("panel.jurors", "settings.seed")."""
    out: list[str] = []
    for key in BINDING_KEYS:
        a, b = have.get(key), want.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key}.{k}" for k in sorted(set(a) | set(b), key=str) if a.get(k) != b.get(k)]
        else:
            out.append(key)
    return out


def refuse_foreign_output(output: Path | None) -> None:
    """Before any work (execution included): an existing ``-o`` that is not a locked verdict
    file is refused, since the writer would refuse it after every query had run."""

    if output is not None and Path(output).exists() and not is_locked_file(Path(output)):
        raise VerdictError(
            f"{output}: already exists and is not a locked verdict file; jury never writes over a "
            "file: choose another -o (nothing was run)"
        )


def existing_verdicts(
    cfg: VerdictsConfig, output: Path | None, doc: dict[str, Any], supersedes: str | None = None
) -> tuple[Path, VerdictFile] | None:
    """Before any call: the locked file that already holds this job's verdict set, as
    (path, document), or None when the job must run.

    With ``-o``: an existing locked file there with the same bindings is reused; one with
    other bindings (or any other existing file) is refused, naming what differs, so no call
    is paid for a file that could not be written. Without ``-o``: a current (not superseded)
    locked file in the verdicts folder with the same bindings is reused. A re-audit
    (``supersedes`` set) always writes its own successor."""

    want = job_bindings(doc)
    if output is not None:
        out = Path(output)
        if not out.exists():
            return None
        refuse_foreign_output(out)
        have = load_locked(out)
        diffs = binding_differences(job_bindings(have.model_dump(by_alias=True, mode="json")), want)
        if diffs:
            raise VerdictError(
                f"{out}: already holds another verdict set ({', '.join(diffs)} differ from this job); "
                f"a locked verdict file is never rewritten: choose another -o (nothing was called)"
            )
        return out, have
    if supersedes is not None:
        return None
    folder = verdicts_dir(cfg, output)
    docs: dict[Path, VerdictFile] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if not is_locked_file(path):
            continue
        try:
            docs[path] = load_locked(path)
        except (JuryError, OSError):  # damaged or unreadable: `jury verify` reports it
            continue
    superseded = {d.supersedes for d in docs.values() if d.supersedes}
    for path, have in docs.items():
        data = have.model_dump(by_alias=True, mode="json")
        if data.get(LOCK_KEY) in superseded or have.kind != doc["kind"]:
            continue
        if not binding_differences(job_bindings(data), want):
            return path, have
    return None


def adjudication_header(
    cfg: VerdictsConfig,
    output: Path | None,
    plan: VerdictPlan,
    store: Store,
    ev: Evaluation,
    gold_path: str | Path,
    run_paths: Iterable[str | os.PathLike[str]],
    settings: dict[str, Any],
    supersedes: str | None = None,
) -> dict[str, Any]:
    """The adjudication file's header, bound to the inputs as the job read them (before any call)."""
    folder = verdicts_dir(cfg, output)
    return header(
        "adjudication", folder, plan.panel, plan.template, gold_path, run_paths, ev.databases, settings, store, [], supersedes
    )


def audit_header(
    cfg: VerdictsConfig,
    output: Path | None,
    plan: VerdictPlan,
    store: Store,
    databases: Databases,
    gold_path: str | Path,
    settings: dict[str, Any],
    supersedes: str | None = None,
    more_urls: Iterable[object] = (),
) -> dict[str, Any]:
    """The audit file's header, bound to the inputs as the job read them (before any call);
    ``more_urls``: the cross-engine check's databases (provenance only)."""
    folder = verdicts_dir(cfg, output)
    return header(
        "audit", folder, plan.panel, plan.template, gold_path, [], databases, settings, store, [], supersedes, more_urls
    )


def _paid(head: dict[str, Any], plan: VerdictPlan, store: Store) -> dict[str, Any]:
    """The header with this plan's calls totalled from the store and the time of writing."""
    hashes = [b.request_sha256 for b in plan.ballots()]
    return {**head, "created_at": utc_now(), "totals": with_retries(store.call_totals(hashes), store.call_costs(hashes))}


def with_retries(totals: Mapping[str, float], costs: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """``totals`` (calls: every request sent, retries included) with ``ballots_asked`` (the
    requests at least one was sent for) and ``retries`` (the calls beyond one per ballot)."""
    asked = sum(1 for row in costs.values() if row["calls"] > 0)
    return {**totals, "ballots_asked": asked, "retries": totals["calls"] - asked}


def run_calls(stats: RunStats) -> dict[str, float]:
    """``Totals.this_run`` of the run whose jury.judging.runner.RunStats are ``stats``."""
    return {"ballots_asked": stats.asked, "requests": stats.requests, "votes_reused": stats.reused, "cost_usd": stats.cost_usd}


def _this_run(doc: dict[str, Any], this_run: dict[str, float] | None) -> None:
    """A file that supersedes another says what the run that wrote it called (its totals count
    every call of the set, those of the votes it reused too)."""
    if this_run is not None and doc.get("supersedes"):
        doc["totals"]["this_run"] = this_run


def write_verdicts(
    kind: Literal["audit", "adjudication"],
    cfg: VerdictsConfig,
    output: Path | None,
    head: dict[str, Any],
    plan: VerdictPlan,
    records: list[dict[str, Any]],
    summary: AuditSummary | AgreementSummary,
    store: Store,
    this_run: dict[str, float] | None = None,
) -> tuple[Path, bool]:
    """Lock the ``kind`` verdicts under ``head`` (audit_header, adjudication_header): (path, reused)
    as `_write` returns it. ``summary``: an audit's summary, or an adjudication's agreement
    (its summary adds the failures, credits and costs by model). ``this_run``: run_calls() of
    the run, recorded when the file supersedes another."""
    folder = verdicts_dir(cfg, output)
    ensure_schema(folder, kind)
    doc = _paid(head, plan, store)
    _this_run(doc, this_run)
    if kind == "adjudication":
        doc["summary"] = _adjudication_summary(doc, plan, records, summary, store)
    else:
        unpriced = unpriced_requests(plan.ballots(), store.call_costs([b.request_sha256 for b in plan.ballots()]))
        doc["totals"]["unpriced_models"] = sorted(set(unpriced.values()))
        doc["summary"] = summary
    doc["records"] = records
    return _write(doc, output, folder)


def _adjudication_summary(
    doc: dict[str, Any], plan: VerdictPlan, records: list[dict[str, Any]], agreement: object, store: Store
) -> dict[str, Any]:
    """An adjudication file's summary (its totals' unpriced models set in ``doc``)."""
    # a request shared by several models (same wrong SQL, same order) was paid once: split it
    sharers: dict[str, set[str | None]] = {}  # an adjudication ballot's model is never None
    for b in plan.ballots():
        sharers.setdefault(b.request_sha256, set()).add(b.model)
    costs = store.call_costs(sharers)
    cost_by_model: dict[str | None, float | None] = {b.model: 0.0 for b in plan.ballots()}
    calls_by_model = dict.fromkeys(cost_by_model, 0.0)
    unpriced = unpriced_requests(plan.ballots(), costs)
    doc["totals"]["unpriced_models"] = sorted(set(unpriced.values()))
    for h, models in sharers.items():
        row = costs.get(h, {"cost_usd": 0.0, "calls": 0})
        for m in models:
            if cost_by_model[m] is not None:  # None: a call litellm could not price, so unknown
                cost_by_model[m] = None if h in unpriced else cost_by_model[m] + row["cost_usd"] / len(models)
            calls_by_model[m] += row["calls"] / len(models)
    return {
        "failures": sum(not r.get("review_pass") for r in records),
        "credited": sum(r["credited"] for r in records if not r.get("review_pass")),
        "cost_by_model": cost_by_model,
        "calls_by_model": calls_by_model,
        "agreement": agreement,  # informative (jury.judging.agreement.agreement_summary): readers recompute it
    }


def unpriced_requests(ballots: Iterable[Ballot], costs: Mapping[str, Mapping[str, float]]) -> dict[str, str]:
    """{request hash: juror model} of the requests that were called (a call is logged) by a
    juror model litellm has no price for: their cost is unknown, not $0."""
    from jury.judging.providers.prices import has_price

    priced: dict[str, bool] = {}
    out: dict[str, str] = {}
    for b in ballots:
        if b.juror.costs_nothing:  # a recorded judge, or a juror declared free: $0, not unknown
            continue
        h, model = b.request_sha256, b.juror.model
        if model not in priced:
            priced[model] = has_price(model)
        if not priced[model] and costs.get(h, {}).get("calls", 0) > 0:
            out[h] = model
    return out


def _write(doc: dict[str, Any], output: Path | None, folder: Path) -> tuple[Path, bool]:
    """Write the locked file; (path, False). Without -o, an identical verdict set already
    locked in the folder (same inputs, panel, settings, votes; only the time differs) is
    reused instead of writing a copy: (its path, True)."""
    if output is not None:
        return write_locked(doc, Path(output)), False
    same = identical_file(doc, folder)
    if same is not None:
        return same, True
    return write_locked(doc, default_path(doc["kind"], folder, doc["created_at"])), False


def identical_file(doc: dict[str, Any], folder: Path) -> Path | None:
    def stable(d: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in d.items() if k not in _VOLATILE}

    want = stable(lock(doc))
    for path in sorted(folder.glob(f"{doc['kind']}-*.json")):
        try:
            have = load_locked(path)
        except (JuryError, OSError):  # damaged or unreadable: `jury verify` reports it
            continue
        if stable(lock(have)) == want:
            return path
    return None
