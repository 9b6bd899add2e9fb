"""``jury.jobs.batches``' options (``jury batch status``'s and ``jury batch collect``'s)."""

from __future__ import annotations

from jury.options.groups import Votes


class BatchOptions(Votes):
    """What ``batch_status`` and ``collect_batches`` can be asked: the store the batches were sent
    from (default: jury.toml's, else .jury/store.db)."""
