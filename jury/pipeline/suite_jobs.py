"""Test-suite runs: load them, send format-equivalence candidates to the jury, lock the verdicts.

A test-suite run has no gold file: the expected outputs are recorded in the run itself, so
the verdict file's ``inputs.gold`` binds the first run file (and ``inputs.runs`` every run
file). Its settings carry ``"suite": true``; its records name the judged ``test``. A file of
error classifications (``--classify``, panel ballot style ``classify``) also records
``settings.taxonomy``; each record's ``error_category`` is the jurors' majority pick.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import InputError
from jury.judging.panels import require_keys, warn_unknown_params
from jury.pipeline.jobs import (
    JobResult,
    raise_if_capped,
    raise_if_incomplete,
    raise_if_pending,
    write_failed,
)
from jury.progress import ProgressFactory, no_progress
from jury.vocab import CLASSIFY_STYLE

if TYPE_CHECKING:
    from jury.execution.store import Store
    from jury.inputs.records import RunRecord
    from jury.judging.families import FamilyRegistry
    from jury.judging.panels import Panel
    from jury.judging.runner import RunStats
    from jury.judging.suite_ballots import SuitePlan
    from jury.judging.taxonomies import Taxonomy
    from jury.progress import Progress
    from jury.results.suites import TestKey
    from jury.verdicts.assemble import VerdictsConfig
    from jury.verdicts.documents import AdjudicationFile

# ask(progress bar) -> (the verdict records, the run's stats)
Ask = Callable[["Progress | None"], tuple[list[dict[str, Any]], "RunStats"]]


def load_suite_runs(run_paths: list[Path]) -> list[RunRecord]:
    from jury.inputs.io import load_runs
    from jury.results.suites import suite_records

    return suite_records(load_runs(run_paths), ", ".join(str(p) for p in run_paths))


def suite_job(
    cfg: VerdictsConfig,
    store: Store,
    *,
    run_paths: list[Path],
    panel: Panel,
    registry: FamilyRegistry,
    classify: Taxonomy | None = None,
    seed: int = 0,
    early_stop: bool = False,
    max_cost: float | None = None,
    output: Path | None = None,
    plan_only: bool = False,
    progress: ProgressFactory = no_progress,
    batch: bool = False,
) -> JobResult[SuitePlan]:
    """Ask the panel's jurors about every format-equivalence candidate, or with ``classify`` (a
    jury.judging.taxonomies.Taxonomy) for the category of every errored failing test its rules
    leave unclassified; write a locked adjudication file (or reuse the identical one already
    written). ``batch``: format ballots through the providers' batch APIs. The first run file
    stands for the gold (it holds the expected outputs)."""
    from jury.judging.agreement import agreement_summary
    from jury.verdicts.assemble import existing_verdicts, header, verdicts_dir, write_adjudication

    what, symmetric = (
        ("suite adjudication", "a test-suite ballot is symmetric")
        if classify is None
        else ("error classification", "a classification ballot has no answer order")
    )
    if panel.ballot_style == "audit":
        raise InputError(f"panel {panel.name!r} ({panel.path}) is an audit panel; {what} needs a blind or labelled one")
    if panel.swap:
        raise InputError(f"panel {panel.name!r} ({panel.path}) sets swap: {symmetric}, use a panel without swap")
    warn_unknown_params(panel)
    plan, ask, settings = _suite_plan(
        load_suite_runs(run_paths), store, panel, registry, classify, seed, early_stop, max_cost, batch
    )
    if plan_only:
        return JobResult(plan)
    folder = verdicts_dir(cfg, output)
    head = header("adjudication", folder, plan.panel, plan.template, run_paths[0], run_paths, {}, settings, store, [])
    found = existing_verdicts(cfg, output, head)
    if found is not None:
        return JobResult(plan, [r.model_dump(mode="json") for r in found[1].records], None, found[0], True)
    require_keys(plan.panel, {b.juror.name: b.juror for b in plan.ballots()}.values())
    with progress("asking jurors") as bar:
        verdicts, stats = ask(bar)
    raise_if_capped(stats)
    raise_if_pending(stats)
    raise_if_incomplete(stats)
    try:
        agreement = agreement_summary(verdicts, plan.panel.ballot_style)
        path, reused = write_adjudication(cfg, output, head, plan, verdicts, agreement, store)
    except OSError as exc:
        raise write_failed(exc, output) from None
    return JobResult(plan, verdicts, stats, path, reused, agreement=agreement)


def _suite_plan(
    records: list[RunRecord],
    store: Store,
    panel: Panel,
    registry: FamilyRegistry,
    classify: Taxonomy | None,
    seed: int,
    early_stop: bool,
    max_cost: float | None,
    batch: bool,
) -> tuple[SuitePlan, Ask, dict[str, Any]]:
    """(plan, ask(progress) -> (records, stats), the verdict file's settings) of format ballots,
    or of classification ballots with the taxonomy ``classify``."""
    settings: dict[str, Any] = {"suite": True, "seed": seed, "early_stop": early_stop}
    if classify is None:
        from jury.judging.suite_ballots import plan_suite, run_suite
        from jury.results.suites import format_candidates

        plan = plan_suite(format_candidates(records), panel, registry, seed=seed)
        return (
            plan,
            lambda bar: run_suite(plan, store, early_stop=early_stop, max_cost=max_cost, progress=bar, batch=batch),
            settings,
        )
    from jury.judging.suite_classify import classify_candidates, plan_classify, run_classify

    cplan = plan_classify(classify_candidates(records, classify), panel, registry, classify, seed=seed)
    return (
        cplan,
        lambda bar: run_classify(cplan, store, early_stop=early_stop, max_cost=max_cost, progress=bar),
        {**settings, "taxonomy": classify.binding()},
    )


def suite_verdict_docs(
    verdict_paths: list[Path], run_paths: list[Path], allow_superseded: bool = False
) -> list[tuple[Path, AdjudicationFile]]:
    """(path, document) of locked suite verdict files (format ballots or error classifications);
    a file made for other run files (or not a suite file) is refused."""
    from jury.inputs.io import sha256_file
    from jury.verdicts.lock import load_current

    runs = {sha256_file(p) for p in run_paths}
    docs: list[tuple[Path, AdjudicationFile]] = []
    for path in verdict_paths:
        doc = load_current(path, "adjudication", allow_superseded=allow_superseded)
        if not doc.settings.get("suite"):
            raise InputError(f"{path}: not a test-suite verdict file (made by `jury adjudicate`, not `jury suites --adjudicate`)")
        bound = {b.sha256 for b in doc.inputs.runs}
        if not bound <= runs:
            raise InputError(f"{path}: was made for other run files than {', '.join(map(str, run_paths))} (their sha256 differ)")
        docs.append((path, doc))
    return docs


def is_classification(doc: AdjudicationFile) -> bool:
    """A suite verdict file of error classifications (`jury suites --classify`), not format ballots."""
    return doc.panel.ballot_style == CLASSIFY_STYLE


def credited_of(docs: list[tuple[Path, AdjudicationFile]]) -> set[TestKey]:
    """The key (jury.results.suites.suite_test_key) of every test the format-ballot files credit."""
    from jury.results.suites import suite_test_key

    return {
        suite_test_key(r.model, r.question_id, r.episode, r.turn, r.test)
        for _, doc in docs
        if not is_classification(doc)
        for r in doc.records
        if r.credited and r.test is not None
    }


def classified_of(docs: list[tuple[Path, AdjudicationFile]], taxonomy: Taxonomy) -> dict[TestKey, str | None]:
    """Test key -> the category the jurors' majority picked (None: none) of the error-classification
    files; one made with another taxonomy file (its sha256), or two disagreeing on a test, is refused."""
    from jury.results.suites import suite_test_key

    out: dict[TestKey, str | None] = {}
    for path, doc in docs:
        if not is_classification(doc):
            continue
        tax = doc.settings.get("taxonomy") or {}
        if tax.get("sha256") != taxonomy.sha256:
            raise InputError(
                f"{path}: classified with taxonomy {tax.get('name')!r} (sha256 {str(tax.get('sha256'))[:12]}…), not with "
                f"{taxonomy.path} (sha256 {taxonomy.sha256[:12]}…): give that taxonomy, or classify again with --classify"
            )
        for r in doc.records:
            assert r.test is not None  # load_current's rules refuse a classification without a test
            key = suite_test_key(r.model, r.question_id, r.episode, r.turn, r.test)
            if key in out and out[key] != r.error_category:
                raise InputError(
                    f"{path}: classifies test {r.test!r} of model {r.model!r} otherwise than another --verdicts file"
                )
            out[key] = r.error_category
    return out
