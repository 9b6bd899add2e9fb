"""``jury.jobs.store.merge_stores``' options (``jury store merge``'s, less the input stores, its
arguments, and the merged store, what it writes: the library's second argument)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jury.options import Flag, OneOrMany, Options


class StoreMergeOptions(Options):
    """What ``jury.jobs.store.merge_stores`` can be asked: whether the inputs' executions are trusted,
    and which keys every input store must be signed by."""

    trust_executions: bool = False
    """Also merge the inputs' executions, timings, gold orders and database checks (by default they are
    computed again from the databases here); recorded in the merged store and every verdict file written
    from it."""
    trusted_key: Annotated[OneOrMany[Path], Flag(flags=("--trusted-key",))] = []
    """OpenSSH public key file (repeatable): every input store must carry <store>.sig by one of these
    keys; the signer is recorded with the store's sha256."""
