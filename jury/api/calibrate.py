"""``jury.calibrate``: how often execution match, each juror and the panel agree with human labels.

>>> import jury
>>> cal = jury.calibrate("verdicts/adjudication.json", labels="labels.jsonl")  # doctest: +SKIP
>>> [f.value for f in cal.figures if f.subject == "panel" and f.metric == "kappa"]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from jury.api.result import Result
from jury.inputs.run_files import RunFileArgs, run_files
from jury.pipeline.project import PathLike, Project, as_paths
from jury.results.calibration_model import CalibrationDocument

if TYPE_CHECKING:
    from jury.progress import ProgressFactory


class Calibration(Result, CalibrationDocument):
    """What ``jury.calibrate`` returns: every agreement figure (``figures``, each with its n and
    interval), the confusion matrices and the notes, as ``jury calibrate --json`` writes them;
    ``render("table")`` is what ``jury calibrate`` prints, ``json``/``csv``/``md`` what its
    ``--json``/``--csv``/``--markdown`` files hold."""

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.results import calibration_render as render

        if fmt == "json":
            return render.render_json(self)
        if fmt == "csv":
            return render.render_csv(self)
        if fmt == "md":
            return render.render_markdown(self)
        return render.render_table(self, width=width)


def calibrate(
    verdicts: PathLike | Sequence[PathLike] = (),
    *,
    labels: PathLike | Sequence[PathLike],
    audit: PathLike | Sequence[PathLike] = (),
    judgments: PathLike | Sequence[PathLike] = (),
    runs: RunFileArgs = (),
    gold: PathLike | None = None,
    db_root: PathLike | None = None,
    db_url: str | None = None,
    allow_privileged_login: bool = False,
    store: PathLike | None = None,
    annotator: str | None = None,
    seed: int = 0,
    workers: int | None = None,
    executor: str | None = None,
    ray_address: str | None = None,
    allow_superseded: bool = False,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    outputs: Sequence[PathLike | None] = (),
) -> Calibration:
    """Measure validity against human labels: each juror, the panel, the audit and every comparator. No LLM
    is called.

    The reference is the 'consensus' annotator's label, else the annotators' majority, or
    ``annotator``'s.

    Args:
        verdicts: locked adjudication files (each juror and the panel against the labels).
        labels: label JSONL file(s): adjudication and/or gold labels.
        audit: locked audit files (their flags against the gold labels).
        judgments: recorded judges' verdicts (judgment JSONL).
        runs: run files whose SQL is executed against ``gold`` on ``db_root`` (every comparator
            against the labels).
        gold: the gold file (BIRD's dev.json). Default: jury.toml's ``gold``.
        db_root: the folder of ``<db_id>/<db_id>.sqlite`` databases. Default: jury.toml's
            ``db_root``.
        db_url: run on an engine (PostgreSQL, MySQL/MariaDB, DuckDB) at this URL instead of SQLite
            files. Default: jury.toml's ``[databases]``.
        allow_privileged_login: run on an engine through a login that can do more than read (refused
            by default; recorded in the provenance).
        store: the store file. Default: jury.toml's ``store``, else ``.jury/store.db``.
        annotator: the reference annotator (default: consensus, else the majority).
        seed: the seed of the bootstrap intervals.
        workers: parallel execution processes (default: the CPU count).
        executor: where executions run: ``local`` (default) or ``ray``.
        ray_address: the Ray cluster (``executor="ray"``; default: a local Ray runtime).
        allow_superseded: use verdict files that a newer file in their folder supersedes (refused by
            default).
        project: the folder's jury.toml defaults (default: the working directory's).
        progress: a progress factory: called with a task's name, returns a context manager giving a
            ``(done, total)`` callback or None (default: no progress shown).
        outputs: files the caller will write, refused before any work when one is an input, the
            store or a database.

    Returns:
        A Calibration: agreement figures (κ, accuracy, precision, recall) with intervals per
        subject.

    Raises:
        InputError: labels that do not fit (an annotator with no label, verdicts on other answers).
    """
    from jury.errors import InputError
    from jury.inputs.judgments import load_judgments
    from jury.inputs.labels import load_labels
    from jury.pipeline.outputs import guard_outputs
    from jury.pipeline.verdict_inputs import load_verdict_files
    from jury.results.calibration import calibrate as compute

    project = project if project is not None else Project.load()
    label_paths, verdict_paths, audit_paths = as_paths(labels), as_paths(verdicts), as_paths(audit)
    judgment_paths, run_paths = as_paths(judgments), run_files(runs)
    if not label_paths:
        raise InputError("no label files: give at least one human label JSONL file (labels)")
    store_path, root = project.store_path(store), project.db_root(db_root)
    inputs = [*label_paths, *verdict_paths, *audit_paths, *(f.path for f in run_paths), *judgment_paths]
    gold_path = project.path("gold", gold) if run_paths else None
    inputs += [gold_path] if gold_path is not None else []
    guard_outputs(outputs, inputs, store=store_path, db_root=root)
    label_set = load_labels(label_paths)
    recorded = load_judgments(judgment_paths) if judgment_paths else []
    _, adj_docs = load_verdict_files(None, verdict_paths, allow_superseded)  # locks first
    audit_docs = [load_verdict_files(path, [], allow_superseded)[0] for path in audit_paths]
    evaluation, records = None, []
    if run_paths:
        from jury.pipeline.jobs import load_and_evaluate
        from jury.progress import no_progress

        settings = project.settings(
            workers=workers, executor=executor, ray_address=ray_address, db_url=db_url,
            allow_privileged_login=allow_privileged_login,
        )  # fmt: skip
        with project.open_store(store) as st:
            _gold, records, evaluation = load_and_evaluate(
                project.gold(gold), run_paths, root, st, settings, progress or no_progress
            )
    found = compute(
        label_set,
        evaluation=evaluation,
        records=records,
        adjudications=adj_docs,
        audits=audit_docs,
        judgments=recorded,
        annotator=annotator,
        seed=seed,
    )
    return Calibration(**dict(found), inputs=inputs, store_path=store_path, db_root=root)
