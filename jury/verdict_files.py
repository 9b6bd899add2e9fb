"""Assemble verdict documents (header bindings, totals, records) and write them locked."""

from __future__ import annotations

from pathlib import Path

from jury import __version__
from jury.verdicts import (
    LOCK_KEY, bind_file, default_path, load_locked, lock, schema_filename, utc_now, write_locked, write_schemas,
)

_VOLATILE = (LOCK_KEY, "created_at")


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
    # a request shared by several models (same wrong SQL, same order) was paid once: split it
    sharers: dict[str, set[str]] = {}
    for b in plan.ballots():
        sharers.setdefault(b.request_sha256, set()).add(b.model)
    costs = store.call_costs(sharers)
    cost_by_model = {b.model: 0.0 for b in plan.ballots()}
    calls_by_model = dict.fromkeys(cost_by_model, 0.0)
    for h, models in sharers.items():
        row = costs.get(h, {"cost_usd": 0.0, "calls": 0})
        for m in models:
            cost_by_model[m] += row["cost_usd"] / len(models)
            calls_by_model[m] += row["calls"] / len(models)
    doc["summary"] = {
        "failures": len(records),
        "credited": sum(r["credited"] for r in records),
        "cost_by_model": cost_by_model,
        "calls_by_model": calls_by_model,
    }
    doc["records"] = records
    return _write(doc, output, folder)


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
    return _write(doc, output, folder)


def _write(doc: dict, output: Path | None, folder: Path) -> tuple[Path, bool]:
    """Write the locked file; (path, False). Without -o, an identical verdict set already
    locked in the folder (same inputs, panel, settings, votes; only the time differs) is
    reused instead of writing a copy: (its path, True)."""
    if output is not None:
        return write_locked(doc, Path(output)), False
    same = identical_file(doc, folder)
    if same is not None:
        return same, True
    return write_locked(doc, default_path(doc["kind"], folder, doc["created_at"])), False


def identical_file(doc: dict, folder: Path) -> Path | None:
    def stable(d: dict) -> dict:
        return {k: v for k, v in d.items() if k not in _VOLATILE}

    want = stable(lock(doc))
    for path in sorted(folder.glob(f"{doc['kind']}-*.json")):
        try:
            have = load_locked(path)
        except Exception:  # noqa: BLE001 - a broken neighbour is verify's business, not a match
            continue
        if stable(lock(have)) == want:
            return path
    return None
