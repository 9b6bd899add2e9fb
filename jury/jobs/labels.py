"""``jury.jobs.labels.import_labels``: a published human-label set as jury label JSONL.

>>> from jury.jobs.labels import import_labels
>>> found = import_labels("wretblad", ["financial_annotations.csv"], gold="dev.json")  # doctest: +SKIP
>>> found.write("labels.jsonl")  # doctest: +SKIP
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from jury.errors import InputError
from jury.inputs.io import database_path, dump_runs, load_gold
from jury.inputs.judgments import JudgeRecord, dump_judgments
from jury.inputs.labels import AdjudicationLabel, GoldLabel, dump_labels
from jury.inputs.records import GoldItem, QuestionId, RunRecord
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.labels import LabelsImportOptions
from jury.pipeline.project import PathLike, Project, as_paths
from jury.vocab import Comparator, DefectType, Outcome

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult
    from jury.inputs.label_import import LabelImportReport
    from jury.inputs.label_sets import LabelSet

SHOWN = 5  # how many unmatched items and differences the notes list


class LabelImport(Result):
    """What one import produced (``labels``, or a recorded judge's ``judgments`` for flex-judge;
    FLEX's pairs as ``runs`` and ``gold_items``) and everything it could not place. ``render()``
    is the label (or judgment) JSONL `jury labels import` prints; ``notes`` its counts and lists;
    ``written``: the files written."""

    FORMATS: ClassVar[tuple[str, ...]] = ("jsonl",)

    kind: str
    labels: list[AdjudicationLabel | GoldLabel] = Field(default_factory=list)
    judgments: list[JudgeRecord] = Field(default_factory=list)
    runs: list[RunRecord] = Field(default_factory=list)
    gold_items: list[GoldItem] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    unmatched: list[str] = Field(default_factory=list, description="Items no gold item matched.")
    ambiguous: list[str] = Field(default_factory=list, description="Items whose text matches two or more gold items.")
    unresolved: list[str] = Field(default_factory=list, description="Items matched but not labelled.")
    differences: list[str] = Field(default_factory=list, description="Where the set and the gold file disagree.")
    notes: list[str] = Field(default_factory=list, description="What the command line prints on stderr.")
    labels_written: int = Field(
        0,
        description="Labels written to the output as they were read and not kept in ``labels`` "
        "(a csv import with an output streams: ``labels`` is then empty).",
    )
    written: list[Path] = Field(default_factory=list)

    def render(self, fmt: str = "jsonl", *, width: int | None = None, wide: bool = False) -> str:
        """The imported labels as ``fmt``: ``"jsonl"`` (the label file), or a summary table.

        Args:
            fmt: ``"jsonl"`` (the default), ``"table"``, ``"csv"``, ``"json"`` or ``"md"``.
            width: the table's width (default: the terminal's).
            wide: every column, however wide.
        """
        return super().render(fmt, width=width, wide=wide)

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.inputs.label_sets import LabelSet

        return dump_judgments(self.judgments) if self.kind == LabelSet.FLEX_JUDGE else dump_labels(self.labels)

    def runs_jsonl(self) -> str:
        """FLEX's pairs as run JSONL."""

        return dump_runs(self.runs)

    def gold_jsonl(self) -> str:
        """The pairs' gold items as JSONL."""
        from jury.inputs.label_import import dump_gold_items

        return dump_gold_items(self.gold_items)

    def write(self, path: str | Path, fmt: str | None = None, *, wide: bool = False) -> Path:
        """Write ``render(fmt)`` to ``path`` (through jury's one output writer) and return it.

        Args:
            path: where to write.
            fmt: the format (default: jsonl, the label file).
            wide: every column, however wide.
        """
        return super().write(path, fmt or "jsonl", wide=wide)

    def __str__(self) -> str:
        return "\n".join(self.notes)

    def _repr_markdown_(self) -> str:
        return "".join(f"- {note}\n" for note in self.notes)


def import_labels(
    kind: str,
    files: PathLike | Sequence[PathLike],
    options: LabelsImportOptions | None = None,
    *,
    project: Project | None = None,
    **overrides: Any,
) -> LabelImport:
    """Import FLEX's (``flex-agreement``, ``flex-categories``; ``flex-judge``: FLEX's own LLM
    judge's verdicts, as judgments), Wretblad et al.'s (``wretblad``) or Arcwise's (``arcwise``)
    labels from ``files``, matched to the gold file (default jury.toml's gold); ``platinum``: a
    corrected gold file in BIRD's dev.json shape (``csv``: gold labels anyone wrote).

    ``output``: write the labels (judgments) there; flex kinds: ``runs_out`` and ``gold_out``
    write the pairs as run JSONL and their gold items, ``family``: the model family recorded on
    those runs; arcwise: ``original`` is the original mini-dev gold (default: the gold file).
    Every output is refused before any work when it would overwrite an input, the store or a
    database file. A set that yields no label is refused.

    ``options``: a ``LabelsImportOptions`` (jury.options.labels: every option of ``jury labels
    import``, each documented there), or none; ``overrides``: its fields as keyword arguments
    (``gold=``, ``output=``, ``family=``, ...), over ``options``'. A bad one is an InputError (an
    unknown name a TypeError)."""
    from jury.inputs.label_import import import_labels as read_set
    from jury.inputs.label_sets import KINDS, LabelSet
    from jury.pipeline.outputs import guard_outputs

    o = job_options(LabelsImportOptions, "import_labels", options, overrides)
    gold, output, original = o.gold, o.output, o.original
    if kind not in KINDS:
        raise InputError(f"unknown label set {kind!r}; choose one of: {', '.join(KINDS)}")
    name = LabelSet(kind)
    if (o.runs_out or o.gold_out or o.family) and not name.startswith("flex"):
        raise InputError(f"runs_out, gold_out and family are for the flex kinds (FLEX's pairs), not {name}")
    project = project if project is not None else Project.load()
    paths, gold_path = as_paths(files), project.gold(gold)
    store, db_root = project.store_path(o.store), project.db_root(o.db_root)
    guard_outputs([output, o.runs_out, o.gold_out], [*paths, gold_path, original], store=store, db_root=db_root)
    if name == LabelSet.CSV and output is not None:
        report, streamed = _stream_csv(paths, load_gold(gold_path), Path(output))
    else:
        report, streamed = read_set(name, paths, load_gold(gold_path), original=original), 0
    if report.changed:
        _decide_changes(
            report, project, db_root=o.db_root, store=o.store, comparator=o.comparator, timeout=o.timeout,
            need_databases=name == LabelSet.PLATINUM,
        )  # fmt: skip
    if not report.labels and not report.judgments and not streamed:
        raise InputError(f"{name}: no labels (unmatched: {len(report.unmatched)}, unresolved: {len(report.unresolved)})")
    found = _imported(name, report, o.family, streamed, [Path(p) for p in (*paths, gold_path, original) if p is not None])
    found.notes = _notes(found, report.by_annotator())
    _write(found, o, streamed)
    return found


def _imported(name: LabelSet, report: LabelImportReport, family: str | None, streamed: int, inputs: list[Path]) -> LabelImport:
    """What the importer read, as the result: the labels, judgments, runs (with ``family``), gold items,
    counts and what did not match."""
    runs = [r.model_copy(update={"family": family}) for r in report.runs] if family else report.runs
    return LabelImport(
        kind=str(name),
        **{
            f: getattr(report, f)
            for f in ("labels", "judgments", "gold_items", "unmatched", "ambiguous", "unresolved", "differences")
        },
        runs=runs,
        counts=dict(report.counts),
        labels_written=streamed,
        inputs=inputs,
    )


def _write(found: LabelImport, o: LabelsImportOptions, streamed: int) -> None:
    """The import's files: the labels (unless streamed there already), the runs and the gold items of
    FLEX's pairs, each added to ``found.written``."""
    from jury.inputs.writer import write_output

    output = o.output
    if streamed and output is not None:
        found.written.append(Path(output))
    for path, text in ((output, found.render), (o.runs_out, found.runs_jsonl), (o.gold_out, found.gold_jsonl)):
        if path is not None and not (streamed and path is output):
            write_output(Path(path), text())
            found.written.append(Path(path))


def _stream_csv(paths: list[Path], gold: dict[QuestionId, GoldItem], output: Path) -> tuple[LabelImportReport, int]:
    """A csv import written to ``output`` as it is read, one label line at a time through the
    one writer (into its temporary file, renamed over ``output`` at the end): no label is kept,
    so the memory is the gold file's and the duplicate check's whatever the rows. A set that
    yields no label, or a bad row anywhere, leaves ``output`` as it was."""
    from jury.inputs.label_import import LabelImportReport, iter_csv_labels
    from jury.inputs.label_sets import LabelSet
    from jury.inputs.writer import write_output

    report = LabelImportReport(LabelSet.CSV)
    written = 0

    def lines() -> Iterator[str]:
        nonlocal written
        for label in iter_csv_labels(paths, gold, report):
            written += 1
            report.annotated[(label.source, label.annotator)] += 1
            yield label.model_dump_json(exclude_none=True) + "\n"
        if not written:
            raise InputError(
                f"{LabelSet.CSV}: no labels (unmatched: {len(report.unmatched)}, unresolved: {len(report.unresolved)})"
            )

    write_output(output, lines())
    return report, written


def _decide_changes(
    report: LabelImportReport,
    project: Project,
    *,
    db_root: PathLike | None,
    store: PathLike | None,
    comparator: str | None,
    timeout: float | None,
    need_databases: bool,
) -> None:
    """Decide each changed SQL of ``report`` (``report.changed``: the original gold items) by
    executing the original and the corrected query on the question's database and comparing the
    results under the comparator (the item's ``order_matters`` kept): a different result (or
    either query failing) is a defect, an equal one a format-only change (not defective)."""
    from jury.compare.outcomes import evaluate

    name = project.get("comparator", comparator, Comparator.BIRD)
    settings = project.settings(comparator=name, timeout=timeout)
    root = project.db_root(db_root)
    by_qid = {lab.question_id: lab for lab in report.labels if isinstance(lab, GoldLabel)}
    gold: dict[QuestionId, GoldItem] = {}
    records: list[RunRecord] = []
    for qid, before in report.changed.items():
        label = by_qid[qid]
        assert label.corrected_sql is not None
        if settings.db_urls.url_for(before.db_id) is None and (root is None or not database_path(root, before.db_id).is_file()):
            where = f"no database file for db_id {before.db_id!r} under {root}" if root else "no db_root"
            if need_databases:
                raise InputError(
                    f"{report.kind}: question {qid!r}: {where}; a changed SQL is decided by executing it "
                    "(give --db-root or set db_root in jury.toml)"
                )
            report.counts["SQL changed, not executed (no database)"] += 1
            label.note = "; ".join(filter(None, [label.note, f"not executed ({where}): defective by the changed text"]))
            continue
        gold[qid] = before.model_copy(update={"result": None, "recorded": None})
        records.append(RunRecord(model="corrected", question_id=qid, db_id=before.db_id, sql=label.corrected_sql))
    if not records:
        return
    with project.open_store(store) as st:
        evaluation = evaluate(gold, records, root, st, settings)
    for pair in evaluation.pairs:
        _decided(report, by_qid[pair.question_id], pair, name)


def _decided(report: LabelImportReport, label: GoldLabel, pair: PairResult, comparator: str) -> None:
    """A changed SQL decided by its execution: the same result is a format-only change (a
    rewording when the question's text changed too), a different one a defect; the label's note
    says which and why."""

    if pair.outcome == Outcome.MATCH:
        report.counts["SQL changed, same result (format-only)"] += 1
        label.gold_defective, label.corrected_sql = False, None
        change = f"format-only change: the corrected SQL gives the same result under {comparator}"
        reworded = report.reworded.get(pair.question_id)
        if reworded:  # the SQL kept in effect, the text reworded: as arcwise labels a rewording
            label.gold_defective, label.defect_type = True, DefectType.AMBIGUOUS_QUESTION
            change += f"; {' and '.join(reworded)} reworded"
    else:
        report.counts["SQL changed, result differs"] += 1
        if pair.outcome == Outcome.GOLD_ERROR:
            why = f"the original fails: {pair.error}"
        elif pair.outcome in (Outcome.ERROR, Outcome.TIMEOUT):
            why = f"the corrected SQL: {pair.outcome} {pair.error or ''}".rstrip()
        else:
            why = str(pair.outcome)
        change = f"SQL changed, result differs under {comparator} ({why})"
    label.note = "; ".join(filter(None, [change, label.note]))


def _notes(found: LabelImport, by_annotator: Counter[tuple[str, str]]) -> list[str]:
    """The counts per source and annotator, then what could not be matched or labelled."""
    notes = [f"{source}: {n} labels by {annotator}" for (source, annotator), n in by_annotator.items()]
    notes += [
        f"{found.kind}: {n} judgments by the recorded judge {judge} (not human labels: give them to calibrate --judgments)"
        for judge, n in Counter(j.judge for j in found.judgments).items()
    ]
    if found.runs:
        notes.append(f"{len(found.runs)} run records, {len(found.gold_items)} gold items")
    notes.append("; ".join(f"{key}: {n}" for key, n in found.counts.items()))
    for title, items in (
        ("unmatched", found.unmatched),
        ("ambiguous text matches", found.ambiguous),
        ("not labelled", found.unresolved),
        ("differences", found.differences),
    ):
        if items:
            notes.append(f"{title}: {len(items)}")
            notes += [f"  {line}" for line in items[:SHOWN]]
            if len(items) > SHOWN:
                notes.append(f"  ... and {len(items) - SHOWN} more")
    return notes
