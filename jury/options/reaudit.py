"""``jury.reaudit``'s options (``jury reaudit``'s, less the verdict files: its first argument)."""

from __future__ import annotations

from jury.options.groups import JurorCalls


class ReauditOptions(JurorCalls):
    """What ``jury.reaudit`` can be asked: whether it only checks, and what its re-runs share with
    every job calling jurors (the cost cap, the batch APIs, the store, the signature). A path or a
    setting left None is jury.toml's (``project``), else the built-in default."""

    check: bool = False
    """Call nothing: exit 1 if any file is stale, 4 if one cannot be checked (a bound file is absent), 0 if
    all are current (for cron and CI)."""
