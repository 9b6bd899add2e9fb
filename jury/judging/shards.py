"""Ballots split across machines: `--shard I/N` asks only the ballots whose request hash
falls in shard I of N.

A ballot's request hash (jury.judging.runner.Ballot.request_sha256) is what the store keys
its vote by, so the shards of one job are disjoint and together cover every ballot, each
machine paying for its own share into its own store; `jury store merge` then puts the
votes in one store and a final run without --shard asks nothing and writes the one
locked verdict file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from jury.errors import InputError

if TYPE_CHECKING:
    from jury.judging.plan import Ballot

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    index: int  # 1..count
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, request_sha256: str) -> bool:
        """True when a request of this hash is asked by this shard: int(hash, 16) mod N = I - 1."""
        return int(request_sha256, 16) % self.count == self.index - 1

    def ballots(self, ballots: Iterable[Ballot]) -> list[Ballot]:
        """The ballots of this shard, in their order."""
        return [b for b in ballots if self.holds(b.request_sha256)]


def parse_shard(text: str | None) -> Shard | None:
    """`--shard I/N` (1 <= I <= N): a Shard; None when not given; bad text is an InputError."""
    if text is None:
        return None
    m = _SHARD.fullmatch(text)
    if m is None:
        raise InputError(f"shard {text!r}: expected I/N, e.g. 1/4 (this machine's shard I of N)")
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1 or not 1 <= index <= count:
        raise InputError(f"shard {text!r}: I must be between 1 and N (N >= 1)")
    return Shard(index, count)


class ShardStats(Protocol):
    """The counts of jury.judging.runner.RunStats a shard's message reports (runner imports this module)."""

    @property
    def asked(self) -> int: ...
    @property
    def requests(self) -> int: ...
    @property
    def reused(self) -> int: ...
    @property
    def shared(self) -> int: ...
    @property
    def other_shard(self) -> int: ...


def shard_message(shard: Shard, stats: ShardStats, store_path: str | Path | None) -> str:
    """What a shard's run prints instead of a verdict file."""
    mine = stats.asked + stats.reused + stats.shared
    return (
        f"shard {shard}: asked {mine} ballots ({stats.asked} calls this run with {stats.requests} requests sent, "
        f"{stats.requests - stats.asked} of them retries; {stats.reused} votes reused from the "
        f"store, {stats.shared} shared), stored in {store_path}; {stats.other_shard} ballots belong to other shards. "
        "No verdict file written: merge the shards' stores with `jury store merge` and run once more without "
        "--shard to lock the verdict file"
    )
