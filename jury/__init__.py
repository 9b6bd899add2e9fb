"""jury: strict execution match, LLM-jury adjudication and gold audits for text-to-SQL.

The public API, stable across releases (everything else is internal and may move):

- ``load_gold(path)`` and ``load_runs(paths, gold)``: read and check the inputs;
- ``evaluate(gold, runs, db_root, store, settings)``: execute every query (cached in the
  store) and give each (model, question) its outcome; ``Settings`` and ``Store`` go with it;
- ``adjudicate(...)`` and ``audit_gold(...)``: whole jobs that ask a panel and write a
  locked verdict file (``load_panel`` reads a panel);
- ``load_verdicts(path)`` and ``verify(path)``: read a locked verdict file (its lock and
  rules checked) and verify it against the files it binds;
- ``build_report(evaluation, gold, audit_docs=..., adj_docs=...)``: the three columns.

Names are imported on first use, so ``import jury`` stays cheap (no litellm, no scipy).

>>> import jury
>>> sorted(jury.__all__)[:3]
['Settings', 'Store', '__version__']
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from jury.version import __version__

_EXPORTS = {
    "load_gold": ("jury.inputs.io", "load_gold"),
    "load_runs": ("jury.inputs.io", "load_runs"),
    "Settings": ("jury.compare.outcomes", "Settings"),
    "evaluate": ("jury.compare.outcomes", "evaluate"),
    "Store": ("jury.execution.store", "Store"),
    "load_panel": ("jury.judging.panels", "load_panel"),
    "adjudicate": ("jury.pipeline.jobs", "adjudication_job"),
    "audit_gold": ("jury.pipeline.jobs", "audit_job"),
    "load_verdicts": ("jury.verdicts.lock", "load_locked"),
    "verify": ("jury.verdicts.verify", "verify_file"),
    "build_report": ("jury.results.report", "build_report"),
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
