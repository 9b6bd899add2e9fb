"""`jury suites`: PLSQLBench's test-suite metrics of runs that record test outcomes."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import FORMAT_HELP, check_format, config, emit, guard_outputs, handle_errors, open_store, progress_bar


@handle_errors
def suites(
    runs: list[Path] = typer.Argument(..., help="Run JSONL files whose records carry `tests` (recorded test outcomes)."),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the metrics to this file instead of stdout."),
    verdicts: list[Path] = typer.Option(
        [], "--verdicts", help="Locked suite verdict file(s) (from --adjudicate): adds the adjudicated metrics (repeatable)."
    ),
    adjudicate: bool = typer.Option(
        False,
        "--adjudicate",
        help="Send failing tests whose expected and actual outputs differ as text (no error) to the jury as "
        "format-equivalence ballots, lock the verdicts, and add the adjudicated metrics.",
    ),
    classify: bool = typer.Option(
        False,
        "--classify",
        help="With --taxonomy: send failing tests whose error the taxonomy's rules leave unclassified to the jury "
        "for one category each, lock the verdicts, and count the errors by category from rules and jurors.",
    ),
    panel: str | None = typer.Option(
        None, help="With --adjudicate or --classify: panel TOML file, or a name in panels/ (default: default)."
    ),
    families: Path | None = typer.Option(
        None, help="With --adjudicate or --classify: family registry TOML (default panels/families.toml)."
    ),
    seed: int | None = typer.Option(
        None,
        help="With --adjudicate: seed of the output-order shuffle; with --classify: of the order categories are listed "
        "in (default 0).",
    ),
    early_stop: bool = typer.Option(
        False, "--early-stop", help="With --adjudicate or --classify: stop asking once a majority is settled."
    ),
    max_cost: float | None = typer.Option(
        None, min=0, help="With --adjudicate or --classify: stop before total spend passes USD."
    ),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="With --adjudicate: send the ballots of OpenAI and Anthropic jurors through their batch APIs (about half "
        "the price; results within 24 h): exits 3 while ballots are pending, rerun to collect (jury batch status).",
    ),
    plan: bool = typer.Option(
        False, "--plan", help="With --adjudicate or --classify: make no calls; print the ballots and estimated cost."
    ),
    verdicts_out: Path | None = typer.Option(
        None,
        "--verdicts-out",
        help="With --adjudicate or --classify: verdict file to write (default verdicts/adjudication-<time>.json).",
    ),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db)."),
    allow_superseded: bool = typer.Option(False, "--allow-superseded", help="Use --verdicts files a newer file supersedes."),
    taxonomy: str | None = typer.Option(
        None,
        help="Error taxonomy (a name in panels/taxonomies/, e.g. plsqlbench, or a TOML path): count each model's "
        "failing tests that raised an error by the category the taxonomy's rules give the error string (and, "
        "with --classify or --classify verdicts, the jurors give the rest).",
    ),
) -> None:
    """PLSQLBench's metrics per model, with 95% intervals (Wilson or bootstrap).

    Single-turn tasks: MeanTestPass@1 (mean of tests passed / tests) and SuitePass@1 (share of
    tasks whose every test passed). Episodes (records sharing `episode`): EpisodePass@1,
    TurnSuitePass@1 and MeanTestPass@1 (of each episode's tests passed / tests); each task or
    episode weighs equally. Shares of units (SuitePass, EpisodePass) get Wilson intervals,
    means of fractions (MeanTestPass, TurnSuitePass) a seeded bootstrap over units.
    Records with `reference_error: true` are excluded and listed.
    With --adjudicate or --verdicts, the adjudicated metrics count a failing test the jury
    judged format-equivalent as passed. With --taxonomy, errored failing tests are counted
    by category: by the taxonomy's rules, and (--classify, or its --verdicts file) by the
    jurors' majority for the errors the rules leave.
    """
    from jury.cli.common import make_console
    from jury.errors import InputError
    from jury.pipeline.suite_jobs import classified_of, credited_of, is_classification, load_suite_runs, suite_verdict_docs
    from jury.results.suites import suite_metrics, suite_test_key

    check_format(fmt)
    cfg = config()
    guard_outputs([output, verdicts_out], [*runs, *verdicts], store=cfg.store_path(store), verdict_output=True)
    if adjudicate and classify:
        raise InputError("--adjudicate and --classify each write a verdict file: run them one at a time")
    if not (adjudicate or classify) and (plan or verdicts_out is not None):
        raise InputError("--plan and --verdicts-out go with --adjudicate or --classify")
    if classify and taxonomy is None:
        raise InputError("--classify needs --taxonomy NAME (the categories the jurors pick from), e.g. --taxonomy plsqlbench")
    records = load_suite_runs(list(runs))
    tax = None
    if taxonomy is not None:  # checked before any juror call
        from jury.judging.taxonomies import load_taxonomy

        tax = load_taxonomy(taxonomy)
    docs = suite_verdict_docs(verdicts, list(runs), allow_superseded) if verdicts else []
    credited = credited_of(docs)
    adjudicated = any(not is_classification(d) for _, d in docs)
    juror_categories = None
    if any(is_classification(d) for _, d in docs):
        if tax is None:
            path, doc = next((p, d) for p, d in docs if is_classification(d))
            raise InputError(
                f"{path}: holds error classifications (`jury suites --classify`): give --taxonomy "
                f"{doc.settings.get('taxonomy', {}).get('name')} to count them"
            )
        juror_categories = classified_of(docs, tax)
    if classify:
        assert tax is not None
        from jury.cli.jurycommon import print_plan, print_run_stats
        from jury.judging.families import load_registry
        from jury.judging.panels import load_panel, resolve_panel_path
        from jury.pipeline.suite_jobs import classify_job

        panel_obj = load_panel(resolve_panel_path(cfg.get("panel", panel), "default.toml"))
        console = make_console(stderr=True)
        with open_store(cfg, store) as st:
            cjob = classify_job(
                cfg,
                st,
                run_paths=list(runs),
                panel=panel_obj,
                registry=load_registry(families),
                taxonomy=tax,
                seed=cfg.get("seed", seed, 0),
                early_stop=early_stop,
                max_cost=cfg.get("max_cost", max_cost, None),
                output=verdicts_out,
                plan_only=plan,
                progress=progress_bar,
            )
        if plan:
            title = f"error classification plan: panel {panel_obj.name}, taxonomy {tax.name}, no calls made"
            print_plan(make_console(), cjob.plan.ballots(), title, len(cjob.plan.groups), "errors the rules leave")
            return
        assert cjob.records is not None
        juror_categories = dict(juror_categories or {})
        for r in cjob.records:
            key = suite_test_key(r["model"], r["question_id"], r.get("episode"), r.get("turn"), r["test"])
            juror_categories[key] = r.get("error_category")
        print_run_stats(console, cjob.stats, cjob.path, cjob.reused_file)
    if adjudicate:
        from jury.cli.jurycommon import print_plan, print_run_stats
        from jury.judging.families import load_registry
        from jury.judging.panels import load_panel, resolve_panel_path
        from jury.pipeline.suite_jobs import suite_job

        panel_obj = load_panel(resolve_panel_path(cfg.get("panel", panel), "default.toml"))
        console = make_console(stderr=True)
        with open_store(cfg, store) as st:
            job = suite_job(
                cfg,
                st,
                run_paths=list(runs),
                panel=panel_obj,
                registry=load_registry(families),
                seed=cfg.get("seed", seed, 0),
                early_stop=early_stop,
                max_cost=cfg.get("max_cost", max_cost, None),
                output=verdicts_out,
                plan_only=plan,
                progress=progress_bar,
                batch=batch,
            )
        if plan:
            print_plan(
                make_console(),
                job.plan.ballots(),
                f"suite plan: panel {panel_obj.name}, no calls made",
                len(job.plan.groups),
                "failing tests",
                batch,
            )
            return
        assert job.records is not None
        credited |= {
            suite_test_key(r["model"], r["question_id"], r.get("episode"), r.get("turn"), r["test"])
            for r in job.records
            if r["credited"]
        }
        adjudicated = True
        print_run_stats(console, job.stats, job.path, job.reused_file)
    from jury.results.suites import render_suites

    strict = suite_metrics(records)
    extra = None
    if tax is not None:
        from jury.results.taxonomy_report import suite_counts_note, suite_error_counts

        counts = suite_error_counts(records, tax, juror_categories)
        extra = {"error_categories": counts} if fmt == "json" else {"note": suite_counts_note(counts)}
    emit(render_suites(strict, suite_metrics(records, credited) if adjudicated else None, fmt, extra=extra), output)
