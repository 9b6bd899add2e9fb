"""``jury.compare_panels``: two verdict files of the same inputs, by two panels, compared.

Two audits of the same gold (the flags shared, only in A, only in B) or two adjudications of
the same runs (the verdicts that agree and differ, per verdict): overall agreement, Cohen's
kappa with its intervals, per defect type (or verdict), per difficulty (and per model), and
the records where the two differ with both panels' votes — the benchmark's "207 of its 221
flags were shared, 92.9 % agreement" in one call. Both locks are checked and each file's
verdicts recomputed from its votes before anything is read; two files of different kinds, of
different gold or of different runs are refused in one line naming both. The numbers are
:func:`jury.stats.panels.compare_panels`'s; the labels are jury.results.panel_comparison's.

>>> import jury
>>> print(jury.compare_panels("verdicts/audit-a.json", "verdicts/audit-b.json"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import InputError, JuryError, VerdictError
from jury.inputs.records import QuestionId
from jury.inputs.run_files import RunFile
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.compare_panels import ComparePanelsOptions
from jury.pipeline.project import PathLike
from jury.results.panel_comparison import PanelBreakdown, PanelsCompared, compare_documents, render_comparison

if TYPE_CHECKING:
    from jury.verdicts.documents import VerdictFile


class ComparedPanels(Result, PanelsCompared):
    """What ``jury.compare_panels`` returns.

    ``kind``: "audit" or "adjudication"; ``a``, ``b``: each file (path, lock, panel, jurors,
    records); ``breakdowns``: the overall comparison first (stratum "all"), then one per
    defect type or verdict (one against the rest), per difficulty and, for adjudications, per
    model: records, flags both / only A / only B / neither, the shares of each panel's flags
    the other shares, and agreement and Cohen's kappa (bootstrap interval, Fleiss–Cohen–Everitt
    SE and Wald interval) on the flag and on the labels; ``disagreements``: the records whose
    labels differ, both labels and both panels' votes."""

    @property
    def overall(self) -> PanelBreakdown:
        """The comparison over every record both files hold (the first breakdown)."""
        return self.breakdowns[0]

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:

        return render_comparison(self.model_dump(mode="json"), fmt, width)


def compare_panels(
    a: PathLike,
    b: PathLike,
    options: ComparePanelsOptions | None = None,
    *,
    outputs: Sequence[PathLike | None] = (),
    **overrides: Any,
) -> ComparedPanels:
    """Compare two locked verdict files: two audits of the same gold, or two adjudications of
    the same runs (the same gold and the same run files, by sha256).

    Difficulty comes from the audit records, else (an adjudication) from the gold file the first
    file binds when it is on disk unchanged.

    Args:
        a: panel A's verdict file: an audit, or an adjudication.
        b: panel B's verdict file, of the same kind and the same gold (and runs).
        options: a ``ComparePanelsOptions`` (jury.options.compare_panels: every option of ``jury
            compare-panels`` but how it shows the comparison, each documented there: ``resamples``
            (0: none, the Fleiss–Cohen–Everitt interval only), ``seed``, ``confidence``), or none.
        outputs: files the caller will write, refused before any work when one is an input (the two
            files, the gold file read for the difficulties).
        overrides: ComparePanelsOptions' fields as keyword arguments (``resamples=``, ``seed=``,
            ``confidence=``), over ``options``'.

    Returns:
        A ComparedPanels: the comparison over every record both files hold, then per breakdown.

    Raises:
        VerdictError: a file that is not a locked verdict file, whose lock fails or whose verdicts
            do not follow from its votes, or two files of different kinds or inputs, in one line.
        InputError: a file that does not exist, or a bad option, named in one line.
    """
    from jury.pipeline.outputs import guard_outputs
    from jury.verdicts.reaudit import resolve_bound

    o = job_options(ComparePanelsOptions, "compare_panels", options, overrides)
    paths = [Path(a), Path(b)]
    guard_outputs(outputs, paths)
    docs = _load(paths)
    gold = resolve_bound(paths[0].parent, docs[0][1].inputs.gold.path)
    guard_outputs(outputs, [*paths, gold])
    return _compare(docs, gold, resamples=o.resamples, seed=o.seed, confidence=o.confidence)


def _load(paths: list[Path]) -> list[tuple[Path, VerdictFile]]:
    """The two files as (path, VerdictFile), each lock and its rules checked, of one kind and inputs."""
    from jury.verdicts.lock import load_locked

    for path in paths:
        if not path.is_file():
            raise InputError(f"{path}: {'is a directory, expected a verdict file' if path.is_dir() else 'no such file'}")
    docs = [(path, load_locked(path)) for path in paths]  # the locks and the rules first
    _same_inputs(docs)
    return docs


def _compare(docs: Sequence[tuple[Path, VerdictFile]], gold: Path, **options: Any) -> ComparedPanels:

    difficulty = _gold_difficulty(gold, docs[0][1]) if docs[0][1].kind == "adjudication" else None
    data = compare_documents(docs[0], docs[1], difficulty=difficulty, **options)
    return ComparedPanels(**dict(data), inputs=[p for p, _ in docs] + [gold])


def panels_for_report(
    paths: Sequence[PathLike], gold_file: Path, run_paths: Sequence[Path | RunFile], *, seed: int = 0
) -> ComparedPanels:
    """``jury.report(compare_panels=[a, b])``: the two files compared, for the html site's "Two
    panels compared" section. Refused unless there are exactly two, made for the report's gold
    file (and, adjudications, for run files among the report's)."""
    from jury.verdicts.documents import check_made_for

    given = [Path(p) for p in paths]
    if len(given) != 2:
        raise InputError(f"compare_panels: give two verdict files (--compare-panels A --compare-panels B), got {len(given)}")
    docs = _load(given)
    check_made_for(docs, gold_file, run_paths)
    defaults = ComparePanelsOptions(seed=seed)
    return _compare(docs, gold_file, resamples=defaults.resamples, seed=seed, confidence=defaults.confidence)


def _same_inputs(docs: Sequence[tuple[Path, VerdictFile]]) -> None:
    """Refuse, naming both files, two files of different kinds, gold or runs."""

    (pa, da), (pb, db) = docs
    if da.kind != db.kind:
        raise VerdictError(
            f"{pa} is an {da.kind} file and {pb} an {db.kind} file: compare two audits of the same gold "
            "or two adjudications of the same runs"
        )
    ga, gb = da.inputs.gold, db.inputs.gold
    if ga.sha256 != gb.sha256:
        raise VerdictError(
            f"{pa} and {pb} are of different gold files: {pa} binds {ga.path} (sha256 {ga.sha256[:12]}), "
            f"{pb} binds {gb.path} (sha256 {gb.sha256[:12]}); compare two {da.kind}s of the same gold"
        )
    if da.kind == "adjudication":
        ra, rb = {r.sha256: r.path for r in da.inputs.runs}, {r.sha256: r.path for r in db.inputs.runs}
        if set(ra) != set(rb):
            only_a = ", ".join(f"{p} ({s[:12]})" for s, p in ra.items() if s not in rb) or "none"
            only_b = ", ".join(f"{p} ({s[:12]})" for s, p in rb.items() if s not in ra) or "none"
            raise VerdictError(
                f"{pa} and {pb} adjudicate different runs: only {pa} binds {only_a}; only {pb} binds {only_b}; "
                "compare two adjudications of the same run files"
            )


def _gold_difficulty(gold: Path, doc: VerdictFile) -> dict[QuestionId, str | None] | None:
    """question id -> difficulty from ``gold``, the gold file ``doc`` binds, when it is on disk
    unchanged (None otherwise: no breakdown by difficulty)."""
    from jury.inputs.io import load_gold, sha256_file

    if not gold.is_file() or sha256_file(gold) != doc.inputs.gold.sha256:
        return None
    try:
        items = load_gold(gold)
    except JuryError:
        return None
    return {q: item.difficulty for q, item in items.items() if getattr(item, "difficulty", None)}
