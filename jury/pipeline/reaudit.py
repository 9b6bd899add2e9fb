"""Re-run a stale verdict file with today's panel and inputs, through the same jobs as the
commands: the votes of unchanged jurors (same request hash) come from the store and only
changed jurors are called. The new file names its predecessor in ``supersedes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import InputError
from jury.inputs.run_files import RunFile
from jury.verdicts.documents import AdjudicationFile, AuditFile
from jury.verdicts.lock import load_locked
from jury.verdicts.reaudit import Staleness, adjudication_diff, audit_diff, resolve_bound

if TYPE_CHECKING:
    from jury.judging.families import FamilyRegistry


def rerun(st: Staleness, store, *, max_cost=None, progress=None, batch: bool = False) -> tuple[Path, dict, Any]:
    """Re-run a stale file with today's panel and inputs; returns (new file, diff, the run's
    jury.judging.runner.RunStats: None when an identical file was already locked). batch: --batch."""
    from jury.judging.panels import load_panel
    from jury.pipeline.jobs import adjudication_job, audit_job
    from jury.pipeline.requests import AdjudicationRequest, AuditRequest

    if st.blockers:
        raise InputError(f"{st.path}: cannot re-run: {'; '.join(st.blockers)}")
    doc, base = st.doc, st.path.parent
    assert doc.panel.path is not None  # check_file blocks a file with no bound panel
    panel = load_panel(resolve_bound(base, doc.panel.path))
    db_root = None
    if doc.inputs.databases:
        first = next(iter(doc.inputs.databases.values()))
        db_root = resolve_bound(base, first.path).parent.parent
    s = doc.settings
    # what both jobs get: the file's inputs as they are now, a new file beside the old one naming it
    same: dict[str, Any] = {
        "config": _FolderConfig(base),
        "gold_path": resolve_bound(base, doc.inputs.gold.path),
        "db_root": db_root,
        "panel": panel,
        "max_cost": max_cost,
        "output": None,
        "supersedes": doc.content_sha256,
        "batch": batch,
    }
    steps = {"progress": progress} if progress else {}
    if isinstance(doc, AuditFile):  # what a verdict file of kind "audit" validates as
        if panel.quorum is None:  # the panel file's own quorum wins; else the one recorded (--quorum)
            panel.quorum = s.get("quorum")
        checks = s.get("checks")
        audit = audit_job(
            AuditRequest(
                question_ids=[str(r.question_id) for r in doc.records],
                split=s.get("split"),
                checks=isinstance(checks, dict),  # re-run with the checks when the file has them
                check_passes=tuple(checks["passes"]) if isinstance(checks, dict) else None,
                repeats=s.get("repeats", 1),  # every repeat re-run: unchanged jurors' votes come from the store
                **same,
            ),
            store,
            **steps,
        )
        assert audit.path is not None  # a job that is not a plan names its file
        new_audit = load_locked(audit.path)
        assert isinstance(new_audit, AuditFile)  # the audit job wrote it
        return audit.path, audit_diff(doc, new_audit), audit.stats
    assert isinstance(doc, AdjudicationFile)  # the other kind
    from jury.judging.families import load_registry

    request = AdjudicationRequest(
        run_paths=[RunFile(resolve_bound(base, r.path), r.model) for r in doc.inputs.runs],
        dbs=s.get("dbs") or [],
        registry=_RecordedFamilies(doc, load_registry()),
        settings=_recorded_settings(s),
        seed=s.get("seed", 0),
        early_stop=s.get("early_stop", False),
        swap=s.get("swap", False),
        review_passes=s.get("review_passes", 0.0),
        repeats=s.get("repeats", 1),
        models=s.get("models"),
        positions_from=resolve_bound(base, s["positions_from"]["path"]) if s.get("positions_from") else None,
        **same,
    )
    job = adjudication_job(request, store, **steps)
    assert job.path is not None  # a job that is not a plan names its file
    new = load_locked(job.path)
    assert isinstance(new, AdjudicationFile)  # the adjudication job wrote it
    return job.path, adjudication_diff(doc, new), job.stats


def _recorded_settings(s: dict):
    """The evaluation settings an adjudication file recorded."""
    from jury.compare.comparators import NormalizeOptions
    from jury.compare.outcomes import Settings
    from jury.vocab import DEFAULT_COMPARATOR, DEFAULT_NEAR_MISS, DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

    norm = s.get("normalize") or {}
    return Settings(
        comparator=s.get("comparator", DEFAULT_COMPARATOR),
        near_miss=s.get("near_miss_threshold", DEFAULT_NEAR_MISS),
        timeout_s=s.get("timeout_s", DEFAULT_TIMEOUT_S),
        row_cap=s.get("row_cap", DEFAULT_ROW_CAP),
        options=NormalizeOptions(casefold=norm.get("casefold", False), float_sig_digits=norm.get("float_sig_digits")),
    )


@dataclass
class _FolderConfig:
    """A config whose verdicts folder is the given one (re-audits write beside the old file)."""

    folder: Path

    def path_of(self, key, flag=None, default=None):
        if key == "verdicts_dir":
            return self.folder
        return Path(flag) if flag is not None else None


@dataclass
class _RecordedFamilies:
    """The families a verdict file recorded per model win over today's registry."""

    doc: AdjudicationFile
    registry: FamilyRegistry

    def families_of(self, model: str, declared=None) -> list[str]:
        for r in self.doc.records:
            if r.model == model:
                return list(r.families)
        return self.registry.families_of(model, declared)
