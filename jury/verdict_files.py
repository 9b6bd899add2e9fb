"""Assemble verdict documents (header bindings, totals, records) and write them locked."""

from __future__ import annotations

from pathlib import Path

from jury import __version__
from jury.verdicts import bind_file, default_path, schema_filename, utc_now, write_locked, write_schemas


def verdicts_dir(cfg, output: Path | None) -> Path:
    if output is not None:
        return Path(output).parent
    return cfg.path_of("verdicts_dir", None, "verdicts")


def ensure_schema(folder: Path, kind: str) -> None:
    """A verdict file names its JSON Schema by relative path: make sure it is there."""
    if not (folder / "schema" / schema_filename(kind)).is_file():
        write_schemas(folder / "schema")


def header(kind: str, folder: Path, panel, template, gold_path, run_paths, databases, settings, store,
           request_hashes, supersedes: str | None = None) -> dict:
    """Everything a verdict file binds: inputs, prompts, panel, settings, totals."""
    panel_binding = panel.binding()
    if panel.path is not None:
        b = bind_file(panel.path, folder)
        panel_binding["path"], panel_binding["sha256"] = b.path, b.sha256
    return {
        "$schema": f"schema/{schema_filename(kind)}",
        "kind": kind,
        "format_version": 1,
        "jury_version": __version__,
        "created_at": utc_now(),
        "supersedes": supersedes,
        "inputs": {
            "gold": bind_file(gold_path, folder).model_dump(),
            "runs": [bind_file(p, folder).model_dump() for p in run_paths],
            "databases": {db: bind_file(path, folder).model_dump() for db, (path, _sha) in databases.items()},
        },
        "prompts": {template.name: bind_file(template.path, folder).model_dump()},
        "panel": panel_binding,
        "settings": settings,
        "totals": store.call_totals(request_hashes),
    }


def write_adjudication(cfg, output, plan, records, store, ev, gold_path, run_paths, settings,
                       supersedes: str | None = None) -> Path:
    folder = verdicts_dir(cfg, output)
    ensure_schema(folder, "adjudication")
    doc = header(
        "adjudication", folder, plan.panel, plan.template, gold_path, run_paths, ev.databases,
        settings, store, [b.request_sha256 for b in plan.ballots()], supersedes,
    )
    by_model: dict[str, list[str]] = {}
    for b in plan.ballots():
        by_model.setdefault(b.model, []).append(b.request_sha256)
    doc["summary"] = {
        "failures": len(records),
        "credited": sum(r["credited"] for r in records),
        "cost_by_model": {m: store.call_totals(h)["cost_usd"] for m, h in by_model.items()},
        "calls_by_model": {m: store.call_totals(h)["calls"] for m, h in by_model.items()},
    }
    doc["records"] = records
    path = Path(output) if output else default_path("adjudication", folder, doc["created_at"])
    return write_locked(doc, path)


def write_audit(cfg, output, plan, records, summary, store, databases, gold_path, settings,
                supersedes: str | None = None) -> Path:
    folder = verdicts_dir(cfg, output)
    ensure_schema(folder, "audit")
    doc = header(
        "audit", folder, plan.panel, plan.template, gold_path, [], databases,
        settings, store, [b.request_sha256 for b in plan.ballots()], supersedes,
    )
    doc["summary"] = summary
    doc["records"] = records
    path = Path(output) if output else default_path("audit", folder, doc["created_at"])
    return write_locked(doc, path)
