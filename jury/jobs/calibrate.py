"""``jury.calibrate``: how often execution match, each juror and the panel agree with human labels.

>>> import jury
>>> cal = jury.calibrate("verdicts/adjudication.json", labels="labels.jsonl")  # doctest: +SKIP
>>> [f.value for f in cal.figures if f.subject == "panel" and f.metric == "kappa"]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from jury.errors import InputError
from jury.inputs.run_files import run_files
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.calibrate import CalibrateOptions
from jury.pipeline.project import PathLike, Project
from jury.results.calibration.model import CalibrationDocument

if TYPE_CHECKING:
    from pathlib import Path

    from jury.compare.outcomes import Evaluation
    from jury.inputs.records import RunRecord
    from jury.inputs.run_files import RunFile
    from jury.progress import ProgressFactory


class Calibration(Result, CalibrationDocument):
    """What ``jury.calibrate`` returns: every agreement figure (``figures``, each with its n and
    interval), the confusion matrices and the notes, as ``jury calibrate --json`` writes them;
    ``render("table")`` is what ``jury calibrate`` prints, ``json``/``csv``/``md`` what its
    ``--json``/``--csv``/``--markdown`` files hold."""

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.results.calibration import render

        if fmt == "json":
            return render.render_json(self)
        if fmt == "csv":
            return render.render_csv(self)
        if fmt == "md":
            return render.render_markdown(self)
        return render.render_table(self, width=width)


def calibrate(
    verdicts: PathLike | Sequence[PathLike] = (),
    options: CalibrateOptions | None = None,
    *,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    outputs: Sequence[PathLike | None] = (),
    **overrides: Any,
) -> Calibration:
    """Measure validity against human labels: each juror, the panel, the audit and every comparator. No LLM
    is called.

    The reference is the 'consensus' annotator's label, else the annotators' majority, or
    ``annotator``'s.

    Args:
        verdicts: locked adjudication files (each juror and the panel against the labels): the
            ``verdicts`` option, given first.
        options: a ``CalibrateOptions`` (jury.options.calibrate: every option of ``jury calibrate``
            but the files it writes, each documented there; ``labels`` required), or none.
        project: the folder's jury.toml defaults (default: the working directory's).
        progress: a progress-bar factory (jury.progress; default: no progress shown).
        outputs: files the caller will write, refused before any work when one is an input, the
            store or a database.
        overrides: CalibrateOptions' fields as keyword arguments (``labels=``, ``runs=``,
            ``annotator=``, ...), over ``options``'.

    Returns:
        A Calibration: agreement figures (κ, accuracy, precision, recall) with intervals per
        subject.

    Raises:
        InputError: labels that do not fit (an annotator with no label, verdicts on other answers).
    """
    from jury.inputs.judgments import load_judgments
    from jury.inputs.labels import load_labels
    from jury.pipeline.outputs import guard_outputs
    from jury.pipeline.verdict_inputs import load_verdict_files
    from jury.results.calibration.compute import calibrate as compute

    o = job_options(CalibrateOptions, "calibrate", options, {**({"verdicts": verdicts} if verdicts else {}), **overrides})
    project = project if project is not None else Project.load()
    run_paths = run_files(o.runs)
    if not o.labels:
        raise InputError("no label files: give at least one human label JSONL file (labels)")
    store_path, root = project.store_path(o.store), project.db_root(o.db_root)
    gold_path = project.path("gold", o.gold) if run_paths else None
    inputs = [*o.labels, *o.verdicts, *o.audit, *(f.path for f in run_paths), *o.judgments, *([gold_path] if gold_path else [])]
    guard_outputs(outputs, inputs, store=store_path, db_root=root)
    label_set = load_labels(o.labels)
    recorded = load_judgments(o.judgments) if o.judgments else []
    _, adj_docs = load_verdict_files(None, o.verdicts, o.allow_superseded)  # locks first
    audit_docs = [load_verdict_files(path, [], o.allow_superseded)[0] for path in o.audit]
    evaluation, records = _evaluated(project, o, run_paths, root, progress) if run_paths else (None, [])
    found = compute(
        label_set, evaluation=evaluation, records=records, adjudications=adj_docs, audits=audit_docs, judgments=recorded,
        annotator=o.annotator, seed=o.seed if o.seed is not None else 0,
    )  # fmt: skip
    return Calibration(**dict(found), inputs=inputs, store_path=store_path, db_root=root)


def _evaluated(
    project: Project, o: CalibrateOptions, run_paths: list[RunFile], root: Path | None, progress: ProgressFactory | None
) -> tuple[Evaluation, list[RunRecord]]:
    """The runs executed (or reused from the store) and compared with the gold: every comparator's
    outcome per answer, to score against the labels."""
    from jury.pipeline.jobs import load_and_evaluate
    from jury.progress import no_progress

    settings = project.settings(
        workers=o.workers, executor=o.executor, ray_address=o.ray_address, db_url=o.db_url,
        allow_privileged_login=o.allow_privileged_login,
    )  # fmt: skip
    with project.open_store(o.store) as st:
        _gold, records, evaluation = load_and_evaluate(
            project.gold(o.gold), run_paths, root, st, settings, progress or no_progress
        )
    return evaluation, records
