"""Prediction files imported as run JSONL (``jury import``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from jury.errors import InputError
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.imports import ImportOptions
from jury.pipeline.project import PathLike, Project

if TYPE_CHECKING:
    from jury.inputs.importers import ImportReport


class RunImport(Result):
    """Imported run records; renders as run JSONL."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json", "md")

    records: list[Any]  # jury.inputs.records.RunRecord
    model: str
    entries: int
    missing: list[Any] = Field(default_factory=list)  # question ids without an answer
    odd: list[str] = Field(default_factory=list)  # entries that were not plain SQL strings
    output: Path | None = None  # where the records were written
    notes: list[str] = Field(default_factory=list)  # what the command line says on stderr

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.inputs.io import dump_runs

        if fmt == "json":
            from jury.results.render import to_json

            return to_json([r.model_dump(mode="json", exclude_none=True) for r in self.records])
        text = dump_runs(self.records)
        return f"```json\n{text}```\n" if fmt == "md" else text


def import_bird_predictions(
    file: PathLike,
    options: ImportOptions | None = None,
    *,
    importer: str = "bird-predictions",
    project: Project | None = None,
    **overrides: Any,
) -> RunImport:
    """Import a BIRD prediction file (predict_dev.json, or one SQL per line) as ``model``'s run
    records (default: the file's name without its suffix), indexing questions by their position
    in ``positions_from`` (default: jury.toml's positions_from, else ``gold``) and keeping the
    questions of ``gold`` (default: jury.toml's gold), and of the db_ids ``only_db`` when
    given; written as run JSONL to ``output`` when given (never over an input, the store or a
    database). A non-string entry becomes a line with ``sql: null``, an empty line or entry a
    line with its blank SQL, and an absent position no line (jury.vocab.Unanswered);
    ``family`` overrides the family registry. ``importer``: the importer reading the file,
    BIRD's (``bird-predictions``) or an installed plugin's (docs/plugins.md).

    ``options``: an ``ImportOptions`` (jury.options.imports: every option of ``jury import
    bird-predictions``, each documented there), or none; ``overrides``: its fields as keyword
    arguments (``model=``, ``gold=``, ``only_db=``, ...), over ``options``'. A bad one is an
    InputError (an unknown name a TypeError)."""
    from jury.inputs.importers import POSITIONS_HINT, Selection, model_name, read_predictions
    from jury.inputs.io import dump_runs, load_gold, load_gold_list
    from jury.inputs.writer import write_output
    from jury.pipeline.outputs import guard_outputs
    from jury.results.render import safe

    o = job_options(ImportOptions, "import_bird_predictions", options, overrides)
    project = project or Project.load()
    source, gold_path = Path(file), project.gold(o.gold)
    positions = project.path("positions_from", o.positions_from)
    model = o.model if o.model is not None else model_name(source)
    out = o.output
    read = [p for p in (source, gold_path, positions) if p is not None]
    guard_outputs([out], read, store=project.store_path(None), db_root=project.db_root(None))
    dbs = o.only_db
    keep = set(load_gold(gold_path)) if positions is not None else None
    order = load_gold_list(positions if positions is not None else gold_path)
    report = read_predictions(importer, source, order, model, Selection(set(dbs) or None, keep, o.family))
    if not report.records:
        if dbs:
            raise InputError(f"{source}: no questions left after keeping only db_id {', '.join(dbs)}")
        raise InputError(f"{source}: none of its {report.entries} predictions is a question of {gold_path}; {POSITIONS_HINT}")
    if out is not None:
        write_output(out, dump_runs(report.records))
    return RunImport(
        records=report.records,
        model=model,
        entries=report.entries,
        missing=list(report.missing),
        odd=list(report.odd),
        output=out,
        notes=[*([f"wrote {safe(out)}"] if out is not None else []), *_said(report, model)],
        inputs=[source, gold_path],
        store_path=project.store_path(None),
        db_root=project.db_root(None),
    )


def _said(report: ImportReport, model: str) -> list[str]:
    """What the import says: the answers, entries, missing and odd entries (the first five shown)."""
    from jury.compare.coverage import by_cause, unanswered_cause
    from jury.results.render import safe

    causes = f" ({by_cause(report.unanswered)})" if report.missing and report.unanswered else ""
    answers = sum(unanswered_cause(r) is None for r in report.records)
    return [
        safe(
            f"{model}: {answers} answers from {report.entries} entries; {len(report.missing)} missing{causes}, {len(report.odd)} odd"
        ),
        *(safe(f"  odd entry {line}") for line in report.odd[:5]),
    ]
