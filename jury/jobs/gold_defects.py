"""``jury.gold_defects``: the gold queries an audit flagged, as a table to send upstream.

Each flagged gold query with the defect types and every vote with its reasons, the
deterministic checks' evidence the audit file records, a preview of the gold's result
(executed now, or reused from the store) and the audit file's hash as provenance.
``render("md" | "csv" | "json" | "table")`` is what ``jury report --gold-defects`` prints.

>>> import jury
>>> print(jury.gold_defects("verdicts/audit.json").render("md"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jury.errors import InputError, JuryError
from jury.inputs.records import GoldItem, QuestionId
from jury.jobs.result import Result
from jury.pipeline.project import PathLike, Project
from jury.results.gold_defects import DefectsProvenance, GoldDefect, defect_rows, provenance, render_gold_defects

if TYPE_CHECKING:
    from jury.execution.engine_urls import DatabaseURLs
    from jury.execution.store import Store
    from jury.progress import Progress, ProgressFactory
    from jury.verdicts.documents import AuditFile


class GoldDefects(Result):
    """What ``jury.gold_defects`` returns: the provenance (the audit file: path, lock, file sha256,
    panel) and one entry per flagged gold query (``defects``)."""

    provenance: DefectsProvenance
    defects: list[GoldDefect]

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:

        return render_gold_defects(self.provenance, self.defects, fmt, width)


def gold_defects(
    audit: PathLike | None = None,
    *,
    gold: PathLike | None = None,
    db_root: PathLike | None = None,
    db_url: str | None = None,
    store: PathLike | None = None,
    allow_superseded: bool = False,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    outputs: Sequence[PathLike | None] = (),
) -> GoldDefects:
    """The gold queries a locked audit file flagged, by its panel or by the deterministic checks it ran: a
    table to send upstream.

    Args:
        audit: the locked audit file (default: jury.toml's ``audit``).
        gold: the gold file the audit bound (default: jury.toml's, else the file the audit names);
            another file, or the same path changed since, is refused.
        db_root: where the gold queries run for their result preview (default: jury.toml's, else
            beside the databases the audit bound); a database that is not here leaves its previews out.
        db_url: run on an engine (PostgreSQL, MySQL/MariaDB, DuckDB) at this URL instead of SQLite
            files. Default: jury.toml's ``[databases]``.
        store: the store file. Default: jury.toml's ``store``, else ``.jury/store.db``.
        allow_superseded: use verdict files that a newer file in their folder supersedes (refused by
            default).
        project: the folder's jury.toml defaults (default: the working directory's).
        progress: a progress-bar factory (jury.progress; default: no progress shown).
        outputs: files the caller will write, refused before any work when one is an input.

    Returns:
        GoldDefects: one row per flagged gold query with its reasons and a result preview.

    Raises:
        InputError: a bad or superseded audit (unless ``allow_superseded``), another gold file.
    """
    from jury.inputs.io import load_gold, sha256_file
    from jury.pipeline.outputs import guard_outputs
    from jury.progress import no_progress

    project = project if project is not None else Project.load()
    audit_path, doc = _audit(project, audit, allow_superseded)  # the lock first
    gold_path = _gold(project, gold, audit_path, doc)
    store_path = project.store_path(store)
    guard_outputs(outputs, [audit_path, gold_path], store=store_path, db_root=project.db_root(db_root))
    _check_bound(gold_path, audit_path, doc)
    items = load_gold(gold_path)
    flagged = [items[r.question_id] for r in doc.records if (r.flagged or r.checks) and r.question_id in items]
    root = _root(project, db_root, audit_path, doc)
    with project.open_store(store) as st, (progress or no_progress)("executing gold SQL") as bar:
        previews = _previews(flagged, root, st, project.db_urls(db_url), bar)
    return GoldDefects(
        provenance=provenance(audit_path, doc, sha256_file(audit_path), doc.inputs.gold),
        defects=defect_rows(doc, items, previews),
        inputs=[audit_path, gold_path],
        store_path=store_path,
        db_root=root,
    )


def _audit(project: Project, audit: PathLike | None, allow_superseded: bool) -> tuple[Path, AuditFile]:
    """The audit file asked for (jury.toml's by default) and its document, its lock checked."""
    from jury.verdicts.documents import AuditFile
    from jury.verdicts.lock import load_current

    audit_path = project.path("audit", audit)
    if audit_path is None:
        raise InputError("the gold-defect table is made from an audit file: give it (--audit) or set audit in jury.toml")
    doc = load_current(audit_path, "audit", allow_superseded=allow_superseded)
    assert isinstance(doc, AuditFile)  # load_current checked its kind
    return audit_path, doc


def _gold(project: Project, gold: PathLike | None, audit_path: Path, doc: AuditFile) -> Path:
    """The gold file: ``gold``, else jury.toml's, else the one the audit bound (beside the audit)."""
    from jury.verdicts.reaudit import resolve_bound

    given = project.path("gold", gold)
    return given if given is not None else resolve_bound(audit_path.parent, doc.inputs.gold.path)


def _check_bound(gold_path: Path, audit_path: Path, doc: AuditFile) -> None:
    """Refuse a gold file other than the one the audit bound (or that file changed since)."""
    from jury.inputs.io import sha256_file

    bound = doc.inputs.gold
    if not gold_path.is_file() or sha256_file(gold_path) != bound.sha256:
        raise InputError(
            f"{gold_path}: not the gold file {audit_path} audited ({bound.path}, sha256 {bound.sha256[:12]}…): "
            "give that file with --gold"
        )


def _root(project: Project, db_root: PathLike | None, audit_path: Path, doc: AuditFile) -> Path | None:
    """Where the previews run: ``db_root``, else jury.toml's, else beside the databases the audit bound."""
    from jury.verdicts.reaudit import resolve_bound

    root = project.db_root(db_root)
    if root is None and doc.inputs.databases:
        root = resolve_bound(audit_path.parent, next(iter(doc.inputs.databases.values())).path).parent.parent
    return root


def _previews(
    flagged: list[GoldItem], root: Path | None, st: Store, urls: DatabaseURLs | None, bar: Progress | None
) -> dict[QuestionId, str]:
    """Each flagged gold query's result preview, database by database: a database that cannot be
    reached here leaves its queries a note instead."""
    from jury.compare.outcomes import Settings, execute_gold, resolve_databases
    from jury.results.site.answers import preview

    previews: dict[QuestionId, str] = {}
    for db_id in dict.fromkeys(i.db_id for i in flagged):
        mine = [i for i in flagged if i.db_id == db_id]
        try:
            runnable = [i for i in mine if not i.has_recording]
            databases = resolve_databases(runnable, root, st, urls) if runnable else {}
            results = execute_gold(mine, databases, st, Settings(workers=1), bar)
        except JuryError as exc:
            previews.update({i.question_id: f"(not executed here: {exc})" for i in mine})
            continue
        previews.update({q: preview(res) for q, res in results.items()})
    return previews
