"""Run ballots through jurors: resumable, cost-capped, every call logged, early stop.

A ballot's identity is the hash of its request (juror model and parameters, exact
messages, reply schema, template hash). A vote already in the store for that hash is
reused, so a run killed at any moment resumes with no repeated calls and a finished
rerun makes none; a panel change re-asks only the jurors whose requests changed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jury.jury.ballot import REPLY_SCHEMAS, make_parser
from jury.jury.client import JurorPool, JurorSpec

COMPLETION_TOKENS_ESTIMATE = 400  # reasoning + verdict; used only for plans and the cost cap


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass
class Ballot:
    kind: str  # "adjudication" | "audit"
    question_id: Any
    model: str | None  # model under test (None for audits)
    juror: JurorSpec
    style: str  # blind | labelled | audit
    messages: list[dict]
    template_sha256: str
    meta: dict = field(default_factory=dict)  # e.g. {"order": "gold_first"}

    @property
    def request_sha256(self) -> str:
        return hashlib.sha256(
            canonical(
                {
                    "juror_model": self.juror.model,
                    "api_base": self.juror.api_base,
                    "params": self.juror.generation_params(),
                    "structured_output": self.juror.structured_output,
                    "messages": self.messages,
                    "reply_schema": REPLY_SCHEMAS[self.style],
                    "template_sha256": self.template_sha256,
                }
            )
        ).hexdigest()


@dataclass
class BallotResult:
    ballot: Ballot
    status: str  # voted | abstained | skipped | not_asked
    reply: dict | None = None
    error: str | None = None
    from_store: bool = False
    cost_usd: float = 0.0


@dataclass
class CostGuard:
    """Stop before a call that could carry total spend past the cap."""

    cap: float | None
    spent: float = 0.0
    reserved: float = 0.0
    stopped: bool = False

    def reserve(self, estimate: float) -> bool:
        if self.cap is None:
            return True
        if self.stopped or self.spent + self.reserved + estimate > self.cap:
            self.stopped = True
            return False
        self.reserved += estimate
        return True

    def settle(self, estimate: float, actual: float) -> None:
        if self.cap is not None:
            self.reserved -= estimate
        self.spent += actual


@dataclass
class RunStats:
    asked: int = 0
    reused: int = 0
    skipped: int = 0
    not_asked: int = 0
    transport_failures: int = 0  # abstentions not stored as votes: a rerun asks again
    unpriced: list[str] = field(default_factory=list)  # juror models litellm cannot price: $0 to the cap
    cost_usd: float = 0.0
    guard: CostGuard | None = None


def estimate(ballot: Ballot) -> tuple[int, float | None]:
    from jury.jury.client import estimate_call

    return estimate_call(ballot.juror, ballot.messages, COMPLETION_TOKENS_ESTIMATE)


def plan_rows(ballots: list[Ballot]) -> list[dict]:
    """For --plan: ballots, estimated tokens and cost per (model under test, juror). No calls."""
    agg: dict[tuple, dict] = {}
    for b in ballots:
        row = agg.setdefault((b.model, b.juror.name), {
            **({"model": b.model} if b.model is not None else {}),
            "juror": b.juror.name, "juror_model": b.juror.model, "ballots": 0,
            "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0, "priced": True,
        })
        tokens, cost = estimate(b)
        row["ballots"] += 1
        row["prompt_tokens"] += tokens
        row["completion_tokens"] += COMPLETION_TOKENS_ESTIMATE
        if cost is None:
            row["priced"] = False
        else:
            row["cost_usd"] += cost
    return list(agg.values())


@dataclass
class _Session:
    store: Any
    pool: JurorPool
    guard: CostGuard
    stats: RunStats
    inflight: dict[str, asyncio.Future] = field(default_factory=dict)


def _from_vote(ballot: Ballot, vote: dict, **kw) -> BallotResult:
    if vote["ok"]:
        return BallotResult(ballot, "voted", vote["reply"], **kw)
    return BallotResult(ballot, "abstained", error=vote["error"], **kw)


async def _ask(ballot: Ballot, s: _Session) -> BallotResult:
    h = ballot.request_sha256
    if h in s.inflight:  # the same request is already on its way in this run: one call serves both
        first = await s.inflight[h]
        if first.status != "not_asked":
            s.stats.reused += 1
        else:
            s.stats.not_asked += 1
        return BallotResult(ballot, first.status, first.reply, first.error, from_store=True)
    stored = s.store.get_vote(h)
    if stored is not None:
        s.stats.reused += 1
        return _from_vote(ballot, stored, from_store=True)
    task = asyncio.ensure_future(_call(ballot, s))  # registered before any await: no twin can slip in
    s.inflight[h] = task
    return await task


async def _call(ballot: Ballot, s: _Session) -> BallotResult:
    h = ballot.request_sha256
    est = 0.0
    if s.guard.cap is not None:
        est = estimate(ballot)[1] or 0.0
    if not s.guard.reserve(est):
        s.stats.not_asked += 1
        return BallotResult(ballot, "not_asked", error="cost cap reached")
    result = await s.pool.call(
        ballot.juror.name, ballot.messages,
        schema=REPLY_SCHEMAS[ballot.style], parse=make_parser(ballot.style),
    )
    s.guard.settle(est, result.cost_usd)
    s.stats.asked += 1
    s.stats.cost_usd += result.cost_usd
    call_id = s.store.record_call(h, ballot.kind, ballot.juror, ballot.messages, result)
    if result.ok or is_final_abstention(result):
        # insert-if-absent, then read back: if another process stored this request's vote
        # first, everyone uses that one, so the verdict file and a later rerun agree.
        s.store.record_vote(h, ballot.kind, ballot.question_id, ballot.model, ballot.juror, result, call_id)
        return _from_vote(ballot, s.store.get_vote(h), cost_usd=result.cost_usd)
    s.stats.transport_failures += 1
    return BallotResult(ballot, "abstained", error=result.error, cost_usd=result.cost_usd)


def is_final_abstention(result) -> bool:
    """An abstention worth keeping: the juror answered, but never parseably.

    Failures of transport or configuration (rate limits and 5xx past the retries,
    timeouts, a bad key) are logged as calls but not stored as votes, so a rerun asks
    again instead of freezing an outage into the verdicts.
    """
    return bool(result.log) and result.log[-1].get("status") == "bad_output"


def settled(labels: list[str | None], k: int) -> bool:
    """True once some label holds a strict majority of k: more votes cannot change it."""
    counts = Counter(x for x in labels if x is not None)
    return bool(counts) and counts.most_common(1)[0][1] >= k // 2 + 1


async def _run_group(
    group: list[Ballot], label: Callable[[BallotResult], str | None], session: _Session,
    early_stop: bool, tick: Callable[[int], None],
) -> list[BallotResult]:
    k = len(group)
    store, stats = session.store, session.stats

    async def ask(i: int) -> BallotResult:
        res = await _ask(group[i], session)
        tick(1)
        return res

    if not early_stop:
        return list(await asyncio.gather(*(ask(i) for i in range(k))))
    first = k // 2 + 1
    results = list(await asyncio.gather(*(ask(i) for i in range(first))))
    for i in range(first, k):
        if settled([label(r) for r in results], k):
            stored = store.get_vote(group[i].request_sha256)
            if stored is not None and stored["ok"]:  # free: already paid for earlier
                results.append(_from_vote(group[i], stored, from_store=True))
                stats.reused += 1
            else:
                results.append(BallotResult(group[i], "skipped"))
                stats.skipped += 1
            tick(1)
        else:
            results.append(await ask(i))
    return results


def run_ballots(
    groups: list[list[Ballot]],
    store,
    label: Callable[[BallotResult], str | None],
    *,
    early_stop: bool = False,
    max_cost: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    pool: JurorPool | None = None,
) -> tuple[list[list[BallotResult]], RunStats]:
    """Ask every group's jurors (each group: one question for one model, or one gold query)."""
    jurors: dict[str, JurorSpec] = {}
    for g in groups:
        for b in g:
            jurors.setdefault(b.juror.name, b.juror)
    guard = CostGuard(max_cost)
    stats = RunStats(guard=guard)
    if max_cost is not None:
        from jury.jury.client import has_price

        stats.unpriced = sorted({j.model for j in jurors.values() if not has_price(j.model)})
    total = sum(len(g) for g in groups)
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    async def main() -> list[list[BallotResult]]:
        session = _Session(store, pool or JurorPool(list(jurors.values())), guard, stats)
        tick(0)
        return list(
            await asyncio.gather(*(_run_group(g, label, session, early_stop, tick) for g in groups))
        )

    results = asyncio.run(main())
    return results, stats
