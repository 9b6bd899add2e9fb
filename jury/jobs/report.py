"""``jury.report``: strict, gold-clean and adjudicated accuracy with intervals, ranks and figures.

Given a ``Score`` (``jury.score``) the report reuses its evaluation (nothing is executed
again) and the locked files it read, unless others are given; given run files it evaluates
them first, as ``jury report`` does. Every check the command line makes runs here: locks
and recomputed verdicts, superseded files, the audit's gold binding, verdicts made for other
inputs, outputs that would overwrite an input.

>>> import jury
>>> ev = jury.score("run.jsonl", gold="dev.json", db_root="databases")  # doctest: +SKIP
>>> jury.report(ev).render("md")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from jury.errors import InputError, JuryError, did_you_mean
from jury.inputs.records import GoldItem, QuestionId, RunRecord
from jury.inputs.run_files import RunFile, RunFileArgs, run_files
from jury.jobs.result import Result
from jury.jobs.score import Score, db_filter, evaluation_settings
from jury.options import validated
from jury.options.report import ReportOptions
from jury.pipeline.project import PathLike, Project, as_paths
from jury.progress import no_progress
from jury.results.corrected import Corrected, ModelAnchored, PeopleAnchored, RateByKind, SampleShare
from jury.results.report.model import ReportDocument as ReportModel
from jury.results.report.render import render_report
from jury.results.review_report import ReviewInfo
from jury.results.scoring import coverage_warning
from jury.stats.core import BootstrapInterval
from jury.vocab import DEFAULT_GOLD_ERRORS, DEFAULT_MISSING

if TYPE_CHECKING:
    from jury.progress import ProgressFactory
    from jury.results.site.folder import SiteSummary


@dataclass
class ReportSources:
    """What a report was built from: the site and the figures need it."""

    evaluation: Any  # jury.compare.outcomes.Evaluation
    gold: dict[QuestionId, GoldItem]
    records: list[RunRecord]
    gold_path: Path
    runs: list[RunFile]
    verdicts: Any  # jury.pipeline.verdict_inputs.VerdictInputs
    families: Path | None = None
    strength: str | None = None
    control: str | None = None
    rank_resamples: int | None = 1000  # None: no rank intervals
    seed: int = 0
    positions_from: Path | None = None
    models: list[str] | None = None  # model= (only these models of the runs)
    dbs: list[str] | None = None  # db= (only these databases' questions)
    compare_panels: list[Path] | None = None  # compare_panels= (the site's "Two panels compared")
    corrected: list[Path] | None = None  # review_sample=, sample_reviews=, settled= (the corrected section)


class Chart(BaseModel):
    """One figure of the report as PNG bytes; a notebook shows it."""

    name: str
    png: bytes = Field(repr=False)

    def _repr_png_(self) -> bytes:
        return self.png


class Report(Result, ReportModel):
    """What ``jury.report`` returns: the report of ``jury report -f json`` (its fields are
    ``jury.results.report.model.ReportDocument``'s) that renders itself as table, csv, json or md,
    writes its html site (``write_site``) and its figures (``write_plots``, ``charts``)."""

    notes: list[str] = Field(default_factory=list, exclude=True, description="What the command line prints on stderr.")
    review_info: ReviewInfo | None = Field(None, exclude=True, description="The human review's decisions and agreement.")
    panels: Any = Field(None, exclude=True, description="compare_panels=: jury.compare_panels's result (the site shows it).")
    sources: Any = Field(None, exclude=True, repr=False)  # ReportSources

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.pipeline.verdict_inputs import review_text

        return render_report(self, fmt, width=width, wide=wide) + review_text(self.review_info, fmt)

    def write_site(self, folder: PathLike) -> SiteSummary:
        """Write the static html site (``jury report -f html``) into ``folder``: an absent or
        empty folder, or a site jury wrote before; never a folder holding an input."""
        from jury.results.site.build import SiteSources, build_site, check_site_dir, site_command

        folder = Path(folder)
        check_site_dir(folder, self.inputs)
        s: ReportSources = self.sources
        v = s.verdicts
        sources = SiteSources(
            report=self,
            evaluation=s.evaluation,
            gold=s.gold,
            records=s.records,
            audit=v.reviewed_audit,
            adjudications=v.reviewed_adjudications,
            review=v.review,
            inputs=[
                ("gold", s.gold_path),
                *(("run", r.path) for r in s.runs),
                ("families", s.families),
                ("review", v.review_path),
            ],
            panels=None if self.panels is None else self.panels.model_dump(mode="json"),
            command=site_command(
                s.runs,
                s.gold_path,
                v.audit_path,
                v.verdict_paths,
                v.review_path,
                s.families,
                s.strength,
                s.control,
                s.evaluation.settings,
                s.rank_resamples,  # type: ignore[arg-type]  # None (no rank intervals) is written as "None"
                s.seed,
                folder,
            )
            + _more_flags(s),
        )
        return build_site(sources, folder)

    def write_plots(self, folder: PathLike) -> list[Path]:
        """Write every figure whose data is present into ``folder`` as PNG (each names the
        verdict files it came from); none over an input, the store, a database or a locked
        verdict file. Returns the paths written."""
        from jury.pipeline.outputs import guard_outputs

        plots = _plots()
        folder = Path(folder)
        if os.path.lexists(folder) and not folder.is_dir():
            raise InputError(f"plots folder {folder}: cannot write there: not a folder (a file, a device, a FIFO or a socket)")
        guard_outputs(
            [folder / name for name, _build, _kinds in plots.FIGURES], self.inputs, store=self.store_path, db_root=self.db_root
        )
        try:
            written: list[Path] = plots.write_plots(self, folder)
            return written
        except OSError as exc:
            raise InputError(f"plots folder {folder}: cannot write there: {exc.strerror or exc}") from None

    def charts(self) -> list[Chart]:
        """The figures ``write_plots`` writes, as PNG bytes (a notebook shows each)."""
        plots = _plots()
        with tempfile.TemporaryDirectory(prefix="jury-charts-") as tmp:
            return [Chart(name=p.stem, png=p.read_bytes()) for p in plots.write_plots(self, tmp)]


def _more_flags(s: ReportSources) -> list[str]:
    """The rebuild command's flags site_command does not write: the missing and gold-error rules
    when not the default, the positions file of prediction files, the models kept."""

    flags: list[str] = []
    if s.evaluation.settings.missing != DEFAULT_MISSING:
        flags += ["--missing", str(s.evaluation.settings.missing)]
    if s.evaluation.settings.gold_errors != DEFAULT_GOLD_ERRORS:
        flags += ["--gold-errors", str(s.evaluation.settings.gold_errors)]
    if s.positions_from is not None:
        flags += ["--positions-from", str(s.positions_from)]
    for db in s.dbs or []:
        flags += ["--db", db]
    for m in s.models or []:
        flags += ["--model", m]
    for p in s.compare_panels or []:
        flags += ["--compare-panels", str(p)]
    if s.corrected:
        sample, a, b, *settled = s.corrected
        flags += ["--review-sample", str(sample), "--sample-review", str(a), "--sample-review", str(b)]
        flags += [x for r in settled for x in ("--settled", str(r))]
    return flags


def _corrected(sample: Path, reviews: list[Path], settled: Path | None, gold_file: Path) -> tuple[Any, Any]:
    """The corrected section (jury.results.corrected): ``jury.review_corrected``'s computation
    for every kind of record the sample holds, its frame bound to the report's gold; and the
    adjudication kind's computation (None without adjudication records), which
    :func:`_anchored` corrects each model's accuracy with."""
    from jury.inputs.io import sha256_file
    from jury.jobs.review_corrected import correction
    from jury.options.review import ReviewCorrectedOptions
    from jury.verdicts.sample import load_sample

    if len(reviews) != 2:
        raise InputError(f"review_sample: give two reviewers' review files (sample_review), got {len(reviews)}")
    drawn = load_sample(sample)
    kinds = [k for k in ("gold", "adjudication") if any(str(r.kind) == k for r in drawn.records)]
    rates, names, adjudication = [], [], None
    for kind in kinds:
        c = correction(sample, reviews[0], reviews[1], ReviewCorrectedOptions(settled=settled, kind=kind))
        adjudication = c if kind == "adjudication" else adjudication
        if sha256_file(c.gold_path) != sha256_file(gold_file):
            raise InputError(f"{sample}: its frame was made for the gold {c.gold_path}, not for this report's {gold_file}")
        got, names = c.rate, c.reviewers

        def share(d: Any) -> SampleShare:
            return SampleShare(value=d.value, low=d.low, high=d.high, n=d.n)

        rates.append(
            RateByKind(
                kind=kind,  # type: ignore[arg-type]
                **got.headline(),
                bootstrap_low=got.bootstrap.low,
                bootstrap_high=got.bootstrap.high,
                sensitivity=share(got.accuracy.sensitivity),
                specificity=share(got.accuracy.specificity),
            )
        )
    section = Corrected(
        sample_file=str(sample),
        sample_sha256=str(drawn.content_sha256),
        review_files=[str(r) for r in reviews],
        settled=None if settled is None else str(settled),
        reviewers=names,
        confidence=0.95,
        rates=rates,
        models_note=None,
        pooled=True,
    )
    return section, adjudication


def _undefined(counts: Any, reason: str) -> Any:
    from jury.stats.correction import CorrectedAccuracy

    published = (counts.matches + counts.credited) / counts.routed if counts.routed else None
    return CorrectedAccuracy(counts, published, None, None, BootstrapInterval(None, None, 0, 0), reason)


def _anchored(section: Any, adjudication: Any, built: Any, seed: int) -> tuple[Any, list[Any]]:
    """Each model's adjudicated accuracy corrected by the reviewers
    (jury.stats.correction.corrected_accuracies; Se and Sp pooled over the frame's models, or each
    model's own when the sample was drawn by model): the corrected section with its ``models`` rows,
    and the report's model rows with ``adjudicated_people``. Made only when the sample's frame is this
    report's adjudication files (otherwise ``models_note`` says why); without a corrected section
    (None), the model rows as built."""
    from jury.stats.correction import ModelCounts, corrected_accuracies

    rows = list(built.models)
    if section is None or adjudication is None:
        return section, rows
    mine = sorted(f.content_sha256 for f in built.verdict_files if f.kind == "adjudication")
    if not mine:
        return section.model_copy(update={"models_note": "the report has no adjudication verdict files"}), rows
    if sorted(adjudication.verdict_files) != mine:
        note = "the sample's frame holds other adjudication verdict files than this report's"
        return section.model_copy(update={"models_note": note}), rows
    counts = {
        r.model: ModelCounts(r.adjudicated.n, r.strict.k, r.jury_reached, r.adjudicated.k - r.strict.k)
        for r in rows
        if r.adjudicated is not None
    }
    a = adjudication
    if "model" in a.by:  # a sample drawn by model: each model corrected by its own records' Se and Sp
        got = {}
        for m, c in counts.items():
            mine = [i for i, owner in enumerate(a.owners) if owner == m]
            at = {i: j for j, i in enumerate(mine)}
            picked = [(at[i], y) for i, y in zip(a.positions, a.truth) if i in at]
            if not mine or not picked:
                got[m] = _undefined(c, "no record of this model in the sample")
                continue
            got.update(
                corrected_accuracies(
                    [a.flags[i] for i in mine], [a.strata[i] for i in mine], [j for j, _ in picked],
                    [y for _, y in picked], {m: c}, seed=seed,
                )[1]
            )  # fmt: skip
        pooled = False
    else:
        got = corrected_accuracies(a.flags, a.strata, a.positions, a.truth, counts, seed=seed)[1]
        pooled = True
    anchored = {
        m: PeopleAnchored(
            published=g.published,
            value=g.value,
            low=g.bootstrap.low,
            high=g.bootstrap.high,
            credited_share=g.credited_share,
            judged=g.counts.judged,
            credited=g.counts.credited,
            reason=g.reason or (None if g.bootstrap.low is not None else "too few resamples had a value for an interval"),
        )
        for m, g in got.items()
    }
    rows_anchored = [ModelAnchored(model=m, **v.model_dump()) for m, v in anchored.items()]
    section = section.model_copy(update={"models": rows_anchored, "pooled": pooled})
    return section, [r.model_copy(update={"adjudicated_people": anchored.get(r.model)}) for r in rows]


def _only_models(
    ev: Any, records: list[RunRecord], model: str | Sequence[str] | None
) -> tuple[Any, list[RunRecord], list[str] | None]:
    """(evaluation, records, the models kept) of the models named by ``model`` (one name or several;
    None or none named: every model, and None for the models kept), the others' answers left out; an
    unknown name is an error listing the models."""

    wanted = ([model] if model else []) if isinstance(model, str) else list(model or [])
    if not wanted:
        return ev, records, None
    have = ev.models()
    unknown = [m for m in wanted if m not in have]
    if unknown:
        hint = did_you_mean(unknown[0], have) or ";"
        raise InputError(f"model {unknown[0]!r} is not a model of the runs{hint} models: {', '.join(have)}")
    keep = set(wanted)
    ev = replace(ev, pairs=[p for p in ev.pairs if p.model in keep], coverage={m: c for m, c in ev.coverage.items() if m in keep})
    return ev, [r for r in records if r.model in keep], ev.models()


def _plots() -> ModuleType:
    try:
        import jury.results.plots.figures as plots
    except ImportError as exc:
        raise JuryError(f"plots: cannot load jury.results.plots.figures ({exc})") from None
    return plots


def report(
    score_or_runs: Score | RunFileArgs = None,
    options: ReportOptions | None = None,
    *,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    outputs: Sequence[PathLike | None] = (),
    site_dir: PathLike | None = None,
    **overrides: Any,
) -> Report:
    """Strict, gold-clean and adjudicated accuracy per model, with intervals, ranks and correlations.

    Args:
        score_or_runs: a Score (its evaluation and locked files are reused: nothing is executed) or
            run JSONL file(s) or prediction files, evaluated here (named as ``jury.score``'s ``runs``).
        options: a ``ReportOptions`` (jury.options.report: every option of ``jury report`` but how it is
            shown, each documented there), or none. With a Score, the locked files left out (``audit``,
            ``verdicts``, ``review``) are the Score's, and ``missing``, ``gold_errors`` and ``db``, when
            given, must be the Score's; ``rank_resamples=None``: no rank intervals.
        project: the jury.toml the paths and settings left None default to (None: the working directory's).
        progress: a progress-bar factory.
        outputs: files the caller will write, refused before any work when one is an input or the store.
        site_dir: a site folder the caller will write, checked before any work.
        overrides: ReportOptions' fields as keyword arguments (``audit=``, ``verdicts=``, ...), over ``options``'.

    Returns:
        A Report: the columns per model, rank stability, correlations and composition (it renders itself).

    Raises:
        InputError: a bad input, a strength without the files it needs, an unknown strength.
    """
    from jury.pipeline.verdict_inputs import check_audit_against_gold, load_verdict_inputs, review_note

    r, o = _options(options, overrides, progress, outputs)
    _check_strength(r.strength)
    project = project if project is not None else Project.load()
    base, run_paths = _runs(score_or_runs)
    f = _ReportFiles.of(r, project, base)
    store_path, root, positions, inputs = _inputs(project, base, o, run_paths, f.all(), site_dir)
    locked = load_verdict_inputs(  # locks first
        f.audit, f.verdicts, f.review, r.allow_superseded, base=base.verdicts if base is not None else None
    )
    gold_for = None if not (f.panels or f.sample) else base.gold_path if base is not None else project.gold(o["gold"])
    panels, corrected, adjudication_sample, registry = _beside(f, gold_for, run_paths, r.seed)
    ev, gold_items, records, gold_file = _evaluation(project, base, o, run_paths, root, positions)
    ev, records, models = _only_models(ev, records, r.model)
    check_audit_against_gold(locked.reviewed_audit, ev, gold_items, gold_file)
    built = _build(ev, gold_items, locked, gold_file, run_paths, r, registry)
    corrected, rows = _anchored(corrected, adjudication_sample, built, r.seed)
    sources = ReportSources(
        ev, gold_items, records, gold_file, run_paths, locked, f.families, r.strength, r.control, r.rank_resamples, r.seed,
        positions_from=positions, models=models, dbs=base.dbs if base is not None else db_filter(o["db"]), compare_panels=f.panels or None, corrected=f.corrected() or None,
    )  # fmt: skip
    return Report.model_validate({
        **{name: getattr(built, name) for name in ReportModel.model_fields}, "models": rows, "corrected": corrected,
        "notes": [*ev.input_notes, *(w for w in (coverage_warning(ev),) if w)] + review_note(locked.review_info),
        "review_info": locked.review_info, "panels": panels, "sources": sources, "inputs": inputs, "store_path": store_path,
        "db_root": root,
    })  # fmt: skip


def _runs(score_or_runs: Score | RunFileArgs) -> tuple[Score | None, list[RunFile]]:
    """(the Score given, else None; the run files): a Score's runs, or the run files named."""
    base, run_paths = (
        (score_or_runs, score_or_runs.runs) if isinstance(score_or_runs, Score) else (None, run_files(score_or_runs))
    )
    if not run_paths:
        raise InputError("no run files: give a Score (jury.score) or at least one run JSONL file")
    return base, run_paths


@dataclass
class _ReportFiles:
    """The files a report reads beside the runs, as paths (the audit: jury.toml's unless a Score's)."""

    audit: Path | None
    verdicts: list[Path]
    review: Path | None
    panels: list[Path]
    families: Path | None
    sample: Path | None
    sample_reviews: list[Path]
    settled: Path | None

    @classmethod
    def of(cls, r: ReportOptions, project: Project, base: Score | None) -> _ReportFiles:
        def path(value: PathLike | None) -> Path | None:
            return Path(value) if value is not None else None

        f = cls(
            audit=project.path("audit", r.audit) if base is None or r.audit is not None else None,
            verdicts=as_paths(r.verdicts),
            review=path(r.review),
            panels=as_paths(r.compare_panels),
            families=path(r.families),
            sample=path(r.review_sample),
            sample_reviews=as_paths(r.sample_review),
            settled=path(r.settled),
        )
        if f.sample is None and (f.sample_reviews or f.settled is not None):
            raise InputError("sample_review and settled correct the panel's rates on a sample: give review_sample too")
        return f

    def corrected(self) -> list[Path]:
        """The files of the rates corrected on a sample: the sample, its reviews, their settled round."""
        return [p for p in (self.sample, *self.sample_reviews, self.settled) if p is not None]

    def all(self) -> list[Path | None]:
        return [self.audit, *self.verdicts, self.families, self.review, *self.panels, *self.corrected()]


def _beside(f: _ReportFiles, gold: Path | None, run_paths: list[RunFile], seed: int) -> tuple[Any, Any, Any, Any]:
    """What the report shows beside the columns, each read from its files: the panels compared, the
    rates corrected on a reviewed sample (and its adjudication sample), the family registry."""
    panels = corrected = adjudication_sample = registry = None
    if f.panels:
        assert gold is not None  # the report's gold, given when there are panels or a sample
        from jury.jobs.compare_panels import panels_for_report

        panels = panels_for_report(f.panels, gold, run_paths, seed=seed)
    if f.sample is not None:
        assert gold is not None
        corrected, adjudication_sample = _corrected(f.sample, f.sample_reviews, f.settled, gold)
    if f.families is not None:
        from jury.judging.families import load_registry

        registry = load_registry(f.families)
    return panels, corrected, adjudication_sample, registry


def _options(
    options: ReportOptions | None,
    overrides: dict[str, Any],
    progress: ProgressFactory | None,
    outputs: Sequence[PathLike | None],
) -> tuple[ReportOptions, dict[str, Any]]:
    """The options (the fields ``options`` was given, then ``overrides``), and how run files are
    evaluated: the options' fields with ``db`` as given (None: not given, so a Score's databases
    are not checked), ``progress`` and ``outputs``."""
    given = (
        {name: getattr(options, name) for name in options.model_fields_set & set(ReportOptions.model_fields)}
        if options is not None
        else {}
    )
    asked = {**given, **overrides}
    r: ReportOptions = validated(ReportOptions, "report", asked)
    return r, {**dict(r), "db": asked.get("db"), "progress": progress, "outputs": outputs}


def _inputs(
    project: Project,
    base: Score | None,
    o: dict[str, Any],
    run_paths: list[RunFile],
    files: list[Path | None],
    site_dir: PathLike | None,
) -> tuple[Path | None, Path | None, Path | None, list[Path | None]]:
    """(store path, db root, positions_from, every input): a Score's, else the arguments' (then
    jury.toml's), with the locked ``files``; the outputs and the site folder are refused
    before any work when one of them would overwrite an input."""
    from jury.pipeline.outputs import guard_outputs

    positions = None
    if base is not None:
        store_path, root = base.store_path, base.db_root
        inputs = [*base.inputs, *files]
    else:
        store_path, root = project.store_path(o["store"]), project.db_root(o["db_root"])
        positions = project.path("positions_from", o["positions_from"])
        inputs = [*(f.path for f in run_paths), project.path("gold", o["gold"]), *files, positions]
    inputs = list(dict.fromkeys(p for p in inputs if p is not None))
    if site_dir is not None:
        from jury.results.site.build import check_site_dir

        check_site_dir(Path(site_dir), inputs)
    guard_outputs(o["outputs"], inputs, store=store_path, db_root=root)
    return store_path, root, positions, inputs


def _check_strength(strength: str | None) -> None:
    from jury.results.report.build import STRENGTHS

    if strength is not None and strength not in STRENGTHS:
        hint = did_you_mean(strength, STRENGTHS) or ";"
        raise InputError(f"unknown strength {strength!r}{hint} choose one of: {', '.join(STRENGTHS)}")


def _evaluation(
    project: Project, base: Score | None, o: dict[str, Any], run_paths: list[RunFile], root: Path | None, positions: Path | None
) -> tuple[Any, Any, Any, Path]:
    """(evaluation, gold items, run records, gold file): a Score's own (another ``missing`` rule
    is an error), else the runs executed (or reused from the store) here."""
    if base is not None:
        missing = o["missing"]
        if missing is not None and missing != base.evaluation.settings.missing:
            raise InputError(
                f"missing={missing!r}, but the Score was made with missing={str(base.evaluation.settings.missing)!r}: "
                "score again with that rule, or give the run files"
            )
        rule = o["gold_errors"]
        if rule is not None and rule != base.evaluation.settings.gold_errors:
            raise InputError(
                f"gold_errors={rule!r}, but the Score was made with gold_errors={str(base.evaluation.settings.gold_errors)!r}: "
                "score again with that rule, or give the run files"
            )
        if o["db"] is not None and db_filter(o["db"]) != base.dbs:
            raise InputError(
                f"db={o['db']!r}, but the Score was made with db={base.dbs!r}: score again with those databases, "
                "or give the run files"
            )
        return base.evaluation, base.gold, base.records, base.gold_path
    from jury.pipeline.jobs import load_and_evaluate

    settings = _settings(project, o)
    gold_file = project.gold(o["gold"])
    with project.open_store(o["store"]) as st:
        gold_items, records, ev = load_and_evaluate(
            gold_file, run_paths, root, st, settings, o["progress"] or no_progress, positions, dbs=db_filter(o["db"])
        )
    return ev, gold_items, records, gold_file


def _settings(project: Project, o: dict[str, Any]) -> Any:
    """The evaluation settings of `jury report`: normalisation only when asked for (jury.toml's
    float_digits is `jury score`'s), the rest from the arguments, else jury.toml."""
    options = None
    if o["casefold"] or o["float_digits"] is not None:
        from jury.compare.comparators import NormalizeOptions

        options = NormalizeOptions(casefold=o["casefold"], float_sig_digits=o["float_digits"])
    return project.settings(options=options, **evaluation_settings(o))


def _build(
    ev: Any,
    gold_items: Any,
    locked: Any,
    gold_file: Any,
    run_paths: Any,
    r: ReportOptions,
    registry: Any,
) -> ReportModel:
    """build_report on the reviewed files (``r``'s strength, control, rank resamples and seed); verdicts that
    do not fit first say which input they were made for."""
    from jury.results.report.build import build_report

    audit_doc, adj_docs = locked.reviewed_audit, locked.reviewed_adjudications
    try:
        return build_report(
            ev,
            gold_items,
            audit_docs=[audit_doc] if audit_doc is not None else [],  # (path, doc): the report names the path
            adj_docs=adj_docs,
            registry=registry,
            review=locked.review[1] if locked.review is not None else None,  # each juror's agreement with people
            **r.model_dump(include={"strength", "control", "rank_resamples", "seed"}),
        )
    except InputError:
        from jury.verdicts.documents import check_made_for

        check_made_for(adj_docs, gold_file, run_paths)
        raise
