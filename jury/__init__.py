"""jury: strict execution match, LLM-jury adjudication and gold audits for text-to-SQL.

The public API (everything else is internal and may move). The jobs, each returning a typed
result that renders itself (``render("table" | "csv" | "json" | "md")``, ``write(path)``):

- ``score(runs, gold=…, db_root=…)``: execute every query (cached in the store) and score
  strict execution match, with gold-clean and adjudicated columns from locked files;
- ``report(score_or_runs, audit=…, verdicts=…)``: the three columns with intervals, ranks,
  correlations and the rest of what a maintainer publishes;
- ``adjudicate(runs, panel=…)`` and ``audit_gold(panel=…)``: ask a panel and lock its verdicts
  in a verdict file; ``reaudit(files)``: re-run the locked files that the panel, templates or
  inputs as they are now make stale (``reaudit(files, check=True)`` only says which);
- ``check_gold()``, ``calibrate(verdicts, labels=…)``, ``verify(file)``, ``suites(runs)``,
  ``review_app(verdicts=…)``, ``gold_defects(audit)`` (the audit's flagged gold queries, a
  table to send upstream) and ``compare_panels(a, b)`` (two panels' verdict files compared).

The loaders and building blocks: ``load_gold``, ``load_runs``, ``load_panel``,
``load_verdicts``, ``evaluate``, ``Settings``, ``Store`` and ``Project`` (a folder's
``jury.toml`` defaults); the errors: ``JuryError`` and its subclasses.

Names are imported on first use, so ``import jury`` stays cheap (no litellm, no scipy).

>>> import jury
>>> "score" in jury.__all__ and "report" in jury.__all__
True

Every call shown above is a real signature (tests/test_docs.py binds each one).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from jury.version import __version__

_EXPORTS = {
    # the jobs
    "score": ("jury.jobs.score", "score"),
    "report": ("jury.jobs.report", "report"),
    "adjudicate": ("jury.jobs.adjudicate", "adjudicate"),
    "audit_gold": ("jury.jobs.audit", "audit_gold"),
    "reaudit": ("jury.jobs.reaudit", "reaudit"),
    "check_gold": ("jury.jobs.check_gold", "check_gold"),
    "calibrate": ("jury.jobs.calibrate", "calibrate"),
    "verify": ("jury.jobs.verify", "verify"),
    "suites": ("jury.jobs.suites", "suites"),
    "review_app": ("jury.jobs.review", "review_app"),
    "review_sample": ("jury.jobs.review_sample", "review_sample"),
    "review_agreement": ("jury.jobs.review_agreement", "review_agreement"),
    "adjudication_round": ("jury.jobs.review_agreement", "adjudication_round"),
    "review_corrected": ("jury.jobs.review_corrected", "review_corrected"),
    "gold_defects": ("jury.jobs.gold_defects", "gold_defects"),
    "compare_panels": ("jury.jobs.compare_panels", "compare_panels"),
    "error_sample": ("jury.jobs.error_sample", "error_sample"),
    # their options (jury.options: each job's options, declared once; the command line reads them too)
    "ScoreOptions": ("jury.options.score", "ScoreOptions"),
    "ReportOptions": ("jury.options.report", "ReportOptions"),
    "AdjudicateOptions": ("jury.options.adjudicate", "AdjudicateOptions"),
    "AuditOptions": ("jury.options.audit", "AuditOptions"),
    "ReauditOptions": ("jury.options.reaudit", "ReauditOptions"),
    "ComparePanelsOptions": ("jury.options.compare_panels", "ComparePanelsOptions"),
    "CheckGoldOptions": ("jury.options.check_gold", "CheckGoldOptions"),
    "CalibrateOptions": ("jury.options.calibrate", "CalibrateOptions"),
    "SuitesOptions": ("jury.options.suites", "SuitesOptions"),
    "VerifyOptions": ("jury.options.verify", "VerifyOptions"),
    "StoreMergeOptions": ("jury.options.store", "StoreMergeOptions"),
    "BatchOptions": ("jury.options.batch", "BatchOptions"),
    "DbLoadOptions": ("jury.options.db", "DbLoadOptions"),
    "DbGrantsOptions": ("jury.options.db", "DbGrantsOptions"),
    "LocalJurorOptions": ("jury.options.local_juror", "LocalJurorOptions"),
    "LocalJurorStartOptions": ("jury.options.local_juror", "LocalJurorStartOptions"),
    "ImportOptions": ("jury.options.imports", "ImportOptions"),
    "LabelsImportOptions": ("jury.options.labels", "LabelsImportOptions"),
    "ReviewOptions": ("jury.options.review", "ReviewOptions"),
    "ReviewExportOptions": ("jury.options.review", "ReviewExportOptions"),
    "ReviewLockOptions": ("jury.options.review", "ReviewLockOptions"),
    "ReviewSampleOptions": ("jury.options.review", "ReviewSampleOptions"),
    "ReviewAgreementOptions": ("jury.options.review", "ReviewAgreementOptions"),
    "ReviewCorrectedOptions": ("jury.options.review", "ReviewCorrectedOptions"),
    "ReviewSettleOptions": ("jury.options.review", "ReviewSettleOptions"),
    # the results they return
    "Result": ("jury.jobs.result", "Result"),
    "Score": ("jury.jobs.score", "Score"),
    "Report": ("jury.jobs.report", "Report"),
    "Adjudication": ("jury.jobs.adjudicate", "Adjudication"),
    "Audit": ("jury.jobs.audit", "Audit"),
    "Reaudit": ("jury.jobs.reaudit", "Reaudit"),
    "GoldCheck": ("jury.jobs.check_gold", "GoldCheck"),
    "Calibration": ("jury.jobs.calibrate", "Calibration"),
    "Verification": ("jury.jobs.verify", "Verification"),
    "SuiteScores": ("jury.jobs.suites", "SuiteScores"),
    "GoldDefects": ("jury.jobs.gold_defects", "GoldDefects"),
    "ComparedPanels": ("jury.jobs.compare_panels", "ComparedPanels"),
    "ErrorSample": ("jury.jobs.error_sample", "ErrorSample"),
    "ReviewSample": ("jury.jobs.review_sample", "ReviewSample"),
    "ReviewAgreement": ("jury.jobs.review_agreement", "ReviewAgreement"),
    # loaders and building blocks
    "Project": ("jury.pipeline.project", "Project"),
    "load_gold": ("jury.inputs.io", "load_gold"),
    "load_runs": ("jury.inputs.io", "load_runs"),
    "load_panel": ("jury.judging.panels", "load_panel"),
    "load_verdicts": ("jury.verdicts.lock", "load_locked"),
    "evaluate": ("jury.compare.outcomes", "evaluate"),
    "Settings": ("jury.compare.outcomes", "Settings"),
    "Store": ("jury.execution.store", "Store"),
    # errors
    "JuryError": ("jury.errors", "JuryError"),
    "InputError": ("jury.errors", "InputError"),
    "ConfigError": ("jury.errors", "ConfigError"),
    "StoreError": ("jury.errors", "StoreError"),
    "IncompleteRun": ("jury.errors", "IncompleteRun"),
    "CannotCheck": ("jury.errors", "CannotCheck"),
    "MissingExtra": ("jury.errors", "MissingExtra"),
    "CostCapReached": ("jury.errors", "CostCapReached"),
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'jury' has no attribute {name!r}") from None
    value = getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
