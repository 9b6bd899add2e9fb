"""The shape of a store's record of the stores merged into it (:meth:`jury.execution.store.Store.merged_sources`),
in a module of its own: a result model (``jury.jobs.score.Score.merged_stores``) declares it
without loading the store."""

from __future__ import annotations

from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12


class MergedSource(TypedDict):
    """One store `jury store merge` merged into this one: its path and sha256 when merged, its
    size, the key fingerprint its signature was checked with and whether its executions were trusted."""

    path: str
    sha256: str
    size: int | None
    signed_by: str | None
    trust_executions: bool
