"""Run ballots through jurors: resumable, cost-capped, every call logged, early stop.

A ballot's identity is the hash of its request (juror model and parameters, exact
messages, reply schema, template hash). A vote already in the store for that hash is
reused, so a run killed at any moment resumes with no repeated calls and a finished
rerun makes none; a panel change re-asks only the jurors whose requests changed.

Across processes sharing a store, a ballot is asked by one of them: the asker holds a
claim on the request hash (a lease, renewed while it asks; a dead holder's claim is
taken over) and the others wait for its vote instead of paying for the same call. The
lease is renewed from a thread of its own, so an asker whose event loop is blocked (an
import, a store write waiting for the lock, a loaded machine) keeps its claim.
A ballot is claimed only once it holds one of its juror's max_concurrency slots, and its
claim is released as soon as its vote is recorded: a process holds (and renews) at most
its jurors' concurrency in claims, and a second process on the same store takes the
ballots nobody is asking. A ballot another process is asking gives its slot back while it
waits for that vote.

Groups are run by a fixed number of workers (GROUP_WORKERS, or more for a wide panel), so
the ballots on their way at any moment are bounded whatever the number of failures.

The first Ctrl-C stops sending ballots and waits (up to the longest juror timeout) for
the calls on the wire, storing their answers; a second Ctrl-C gives up at once.

The ballots themselves, their request hashes and --plan's estimates: jury.judging.plan.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from jury.errors import StoreError
from jury.execution.store import CLAIM_LEASE_S, Store
from jury.judging.ballots import make_parser, reply_schema
from jury.judging.juror import CallResult, JurorSpec
from jury.judging.plan import Ballot, BallotResult, estimate
from jury.judging.providers.pool import JurorPool
from jury.judging.providers.prices import has_price
from jury.judging.redaction import for_store

if TYPE_CHECKING:
    from jury.judging.batch import BatchSession, Pending
    from jury.judging.shards import Shard


class RunOptions(TypedDict, total=False):
    """The keyword options of run_ballots that a job's run (run_audit, run_suite, run_classify) passes on."""

    early_stop: bool
    max_cost: float | None
    progress: Callable[[int, int], None] | None
    pool: JurorPool | None
    shard: Shard | None
    batch: bool


CLAIM_RENEW_S = CLAIM_LEASE_S / 4  # how often an asker renews its claims
CLAIM_POLL_S = 0.2  # how often a process waiting for another's vote looks in the store
GROUP_WORKERS = 64  # groups run at once, at least twice the slots of all jurors (run_ballots)
INTERRUPT_MARGIN_S = 10.0  # after Ctrl-C, wait for calls in flight up to the longest timeout plus this


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
    asked: int = 0  # ballots this run sent requests for (one call each)
    requests: int = 0  # requests those calls sent, retries included (the verdict file's totals.calls counts these)
    reused: int = 0  # votes found in the store (earlier runs, or another process asking now)
    shared: int = 0  # ballots identical to another of this run: one call served both
    skipped: int = 0
    not_asked: int = 0  # cost cap, interrupt or store failure
    other_shard: int = 0  # --shard: ballots of other shards, not asked here (not a failure)
    transport_failures: int = 0  # ballots without a vote (transport or configuration): a rerun asks again
    batch_pending: Counter[str] = field(default_factory=Counter)  # --batch: ballots waiting, per provider batch id
    batch_submitted: int = 0  # --batch: ballots this run submitted through batch APIs
    batch_notes: list[str] = field(default_factory=list)  # --batch: batches that could not be polled
    failure_reasons: Counter[str] = field(default_factory=Counter)
    interrupted: bool = False
    store_error: str | None = None
    unstored: int = 0  # answered calls whose vote could not be stored (store failure)
    unpriced: list[str] = field(default_factory=list)  # juror models litellm cannot price: $0 to the cap
    called: list[str] = field(default_factory=list)  # juror models (not free) this run sent a ballot to
    cost_usd: float = 0.0
    guard: CostGuard | None = None

    def absorb(self, other: RunStats) -> None:
        """Add another run's counts to these (the passes of a repeated panel, one per repeat):
        counts add up, flags and the first store error carry over, lists gain what is new."""
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if f.name == "guard":
                if mine is not None and theirs is not None:
                    mine.spent += theirs.spent
            elif isinstance(mine, bool):
                setattr(self, f.name, mine or theirs)
            elif isinstance(mine, int | float | Counter):
                setattr(self, f.name, mine + theirs)
            elif isinstance(mine, list):
                setattr(self, f.name, mine + [x for x in theirs if x not in mine])
            else:  # store_error: the first
                setattr(self, f.name, mine if mine is not None else theirs)


@dataclass
class _Session:
    store: Store
    pool: JurorPool
    guard: CostGuard
    stats: RunStats
    inflight: dict[str, asyncio.Future[BallotResult]] = field(default_factory=dict)
    holder: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}")
    claimed: set[str] = field(default_factory=set)
    slots: dict[str, asyncio.Semaphore] = field(default_factory=dict)  # juror -> its max_concurrency slots
    stopping: bool = False
    shard: Shard | None = None  # --shard: ballots outside it are not asked
    batch: BatchSession | None = None  # --batch
    any_batches: bool = False  # the store holds batches: a stored vote may have come through one

    def slot(self, juror: JurorSpec) -> asyncio.Semaphore:
        """The juror's slots (its max_concurrency): a ballot holds one from its claim to its vote."""
        if juror.name not in self.slots:
            self.slots[juror.name] = asyncio.Semaphore(self.pool.limiter(juror.name).max_concurrency)
        return self.slots[juror.name]

    def stop(self) -> None:
        self.stopping = True
        self.pool.stop_requested = True

    def store_failed(self, exc: StoreError) -> None:
        if self.stats.store_error is None:
            self.stats.store_error = str(exc)
        self.stop()


def _from_vote(ballot: Ballot, vote: dict[str, Any], *, from_store: bool = False, cost_usd: float = 0.0) -> BallotResult:
    if vote["ok"]:
        return BallotResult(ballot, "voted", vote["reply"], from_store=from_store, cost_usd=cost_usd)
    return BallotResult(ballot, "abstained", error=vote["error"], from_store=from_store, cost_usd=cost_usd)


async def _ask(ballot: Ballot, s: _Session) -> BallotResult:
    h = ballot.request_sha256
    if h in s.inflight:  # the same request is already on its way in this run: one call serves both
        first = await s.inflight[h]
        if first.status == "not_asked":
            s.stats.not_asked += 1
        elif first.pending is not None:
            s.stats.batch_pending[first.pending] += 1
        elif first.failed:
            s.stats.transport_failures += 1
        else:
            s.stats.shared += 1
        twin = BallotResult(ballot, first.status, first.reply, first.error, from_store=True, failed=first.failed, via=first.via)
        twin.pending = first.pending
        return twin
    stored = s.store.get_vote(h)
    if stored is not None:
        s.stats.reused += 1
        return _via(_from_vote(ballot, stored, from_store=True), s)
    task = asyncio.ensure_future(_call(ballot, s))  # registered before any await: no twin can slip in
    s.inflight[h] = task
    return await task


def _via(result: BallotResult, s: _Session) -> BallotResult:
    """A stored vote marked as batched when its reply came through a batch."""
    if s.any_batches and s.store.voted_by_batch(result.ballot.request_sha256):
        result.via = "batch"
    return result


def _not_asked(ballot: Ballot, s: _Session, why: str) -> BallotResult:
    s.stats.not_asked += 1
    return BallotResult(ballot, "not_asked", error=why)


def _stop_reason(s: _Session) -> str:
    return "store failure" if s.stats.store_error else "interrupted"


def _claim(h: str, s: _Session) -> dict[str, Any] | Literal["stopped", "mine", "held"]:
    """ "mine" once this process holds the claim on `h`; a vote stored meanwhile (by the
    process that held it); "held" while another live process holds it; or "stopped"."""
    if s.stopping:
        return "stopped"
    try:
        holder = s.store.claim(h, s.holder, CLAIM_LEASE_S)
    except StoreError as exc:
        s.store_failed(exc)
        return "stopped"
    vote = s.store.get_vote(h)
    if holder is None:
        if vote is not None:  # stored just before we claimed it
            s.store.release_claim(h, s.holder)
            return vote
        s.claimed.add(h)
        return "mine"
    return vote if vote is not None else "held"


async def _call(ballot: Ballot, s: _Session) -> BallotResult:
    """Ask one ballot under a slot of its juror, claimed for as long as it holds the slot; a
    ballot another process is asking waits for that vote without a slot."""
    h = ballot.request_sha256
    slot = s.slot(ballot.juror)
    while True:
        async with slot:
            got = _claim(h, s)
            if got == "mine":
                try:
                    return await _call_claimed(ballot, s)
                finally:
                    s.claimed.discard(h)
                    s.store.release_claim(h, s.holder)
        if got == "stopped":
            return _not_asked(ballot, s, _stop_reason(s))
        if got != "held":
            s.stats.reused += 1
            return _via(_from_vote(ballot, got, from_store=True), s)
        await asyncio.sleep(CLAIM_POLL_S)  # another live process is asking it: wait for its vote


async def _ask_juror(ballot: Ballot, s: _Session) -> CallResult:
    """The juror's reply to the ballot: from its judgment file (a recorded juror), else a call."""
    if ballot.juror.recorded is not None:
        from jury.judging.recorded import recorded_call

        return recorded_call(ballot, make_parser(ballot.style, ballot.taxonomy))
    return await s.pool.call(
        ballot.juror.name,
        ballot.messages,
        schema=reply_schema(ballot.style, ballot.taxonomy),
        parse=make_parser(ballot.style, ballot.taxonomy),
    )


async def _call_claimed(ballot: Ballot, s: _Session) -> BallotResult:

    h = ballot.request_sha256
    if s.stopping:
        return _not_asked(ballot, s, _stop_reason(s))
    est = 0.0
    batch_id = None
    if s.batch is not None and s.batch.handles(ballot.juror):  # a batch's reply, or none yet
        outcome = await s.batch.ask(ballot, s.pool)
        if not isinstance(outcome, tuple):
            return _batch_pending(ballot, s, outcome)
        result, batch_id = outcome  # its price was counted against --max-cost when it was submitted
    elif s.guard.cap is not None:
        est = estimate(ballot)[1] or 0.0
    if batch_id is None and not s.guard.reserve(est):
        return _not_asked(ballot, s, "cost cap reached")
    if batch_id is None:  # else the reply came through the batch
        result = await _ask_juror(ballot, s)
    s.guard.settle(est, result.cost_usd if batch_id is None else 0.0)
    s.stats.cost_usd += result.cost_usd
    if result.interrupted and result.attempts == 0:
        return _not_asked(ballot, s, _stop_reason(s))
    s.stats.asked += 1
    if not ballot.juror.costs_nothing and ballot.juror.model not in s.stats.called:
        s.stats.called.append(ballot.juror.model)
    s.stats.requests += result.attempts
    result = for_store(result, ballot.juror)  # the one gate into the store: secrets out, sizes capped
    final = (result.ok or is_final_abstention(result)) and not result.interrupted
    try:
        if final:
            # the vote first (insert-if-absent, then read back: if another process stored this
            # request's vote first, everyone uses that one); then the call's log.
            s.store.record_vote(h, ballot.kind, ballot.question_id, ballot.model, ballot.juror, result)
        call_id = s.store.record_call(h, ballot.kind, ballot.juror, ballot.messages, result)
        if final:
            s.store.link_vote_call(h, call_id)
            if batch_id is not None:
                s.store.mark_batch_used(batch_id, h)
    except StoreError as exc:
        s.store_failed(exc)
    if final:
        vote = s.store.get_vote(h)
        if vote is not None:
            return _via(_from_vote(ballot, vote, cost_usd=result.cost_usd), s)
        s.stats.unstored += 1
        return BallotResult(ballot, "abstained", error="answer could not be stored", cost_usd=result.cost_usd, failed=True)
    if result.interrupted:
        return _not_asked(ballot, s, _stop_reason(s))
    s.stats.transport_failures += 1
    s.stats.failure_reasons[result.error or "unknown error"] += 1
    return BallotResult(ballot, "abstained", error=result.error, cost_usd=result.cost_usd, failed=True)


def _batch_pending(ballot: Ballot, s: _Session, pending: Pending) -> BallotResult:
    """A batch juror's ballot without a reply yet: waiting in an
    open batch, failed there (a rerun submits it again) or not sent (the cost cap)."""
    if pending.kind == "capped":
        return _not_asked(ballot, s, pending.why)
    result = BallotResult(ballot, "abstained", error=pending.why, failed=True)
    if pending.kind == "pending":
        s.stats.batch_pending[pending.where] += 1
        result.pending = pending.where
    else:
        s.stats.transport_failures += 1
        s.stats.failure_reasons[pending.why] += 1
    return result


def is_final_abstention(result: CallResult) -> bool:
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
    group: list[Ballot],
    label: Callable[[BallotResult], str | None],
    session: _Session,
    early_stop: bool,
    tick: Callable[[int], None],
) -> list[BallotResult]:
    k = len(group)
    store, stats = session.store, session.stats

    async def ask(i: int) -> BallotResult:
        if session.shard is not None and not session.shard.holds(group[i].request_sha256):
            stats.other_shard += 1
            tick(1)
            return BallotResult(group[i], "not_asked", error=f"not this shard ({session.shard})")
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


def _on_sigint(
    session: _Session, jurors: list[str], grace: float, task: asyncio.Task[Any], loop: asyncio.AbstractEventLoop
) -> Callable[[], None]:
    """The first Ctrl-C: send no new ballot, wait up to ``grace`` s for the calls in flight
    (their answers stored), then cancel ``task``; a second one cancels it at once."""
    stats = session.stats

    def on_sigint() -> None:
        if session.stopping and stats.interrupted:
            print("Interrupted again: not waiting for the calls in flight.", file=sys.stderr, flush=True)
            task.cancel()
            return
        stats.interrupted = True
        session.stop()
        flying = sum(session.pool.limiter(j).in_flight for j in jurors)
        print(
            f"Interrupted: sending no new ballots; waiting up to {grace:g} s for the {flying} calls "
            "in flight and storing their answers (Ctrl-C again to stop at once).",
            file=sys.stderr,
            flush=True,
        )
        loop.call_later(grace, task.cancel)

    return on_sigint


def _start_renewing(session: _Session) -> Callable[[], None]:
    """Keep this process's claims on the ballots it is asking alive, from a thread of its own on a
    connection of its own; returns the function that stops it. Renewing from the event loop let a
    live asker's claim run out while the loop was blocked (litellm's import under the first claim,
    a store write waiting for the lock, a loaded machine), and another process then took the claim
    over and paid for the ballot again (issue 46)."""

    stop = threading.Event()
    path = getattr(session.store, "path", None)

    def renew() -> None:
        own: Store | None = None
        try:
            while not stop.wait(CLAIM_RENEW_S):
                held = list(session.claimed)  # one C-level copy of a set the loop changes
                if not held:
                    continue
                if own is None:
                    own = Store(str(path))
                own.renew_claims(held, session.holder, CLAIM_LEASE_S)
        except StoreError as exc:
            session.store_failed(exc)
        finally:
            if own is not None:
                own.close()

    if path is None:  # a store without a file (never in a run): renew from the loop
        task = asyncio.ensure_future(_renew_claims(session))
        return lambda: None if task.cancel() else None
    thread = threading.Thread(target=renew, name="jury-claims", daemon=True)
    thread.start()

    def halt() -> None:
        stop.set()
        thread.join()

    return halt


async def _renew_claims(session: _Session) -> None:
    """Renew the claims from the event loop (a store without a file: _start_renewing), until cancelled."""
    while True:
        await asyncio.sleep(CLAIM_RENEW_S)
        try:
            session.store.renew_claims(list(session.claimed), session.holder, CLAIM_LEASE_S)
        except StoreError as exc:
            session.store_failed(exc)


async def _prepare_batches(
    session: _Session, groups: list[list[Ballot]], guard: CostGuard, shard: Shard | None, *, every_juror: bool
) -> None:
    """Submit this run's batch-capable ballots (every juror's with --batch) as provider batches."""
    from jury.judging.batch import BatchSession

    store, stats = session.store, session.stats
    session.batch = BatchSession(store, session.holder, every_juror=every_juror)
    mine = [b for g in groups for b in g if shard is None or shard.holds(b.request_sha256)]
    try:
        await session.batch.prepare(mine, guard)
    except StoreError as exc:
        session.store_failed(exc)
    stats.batch_submitted = session.batch.submitted
    stats.batch_notes = session.batch.problems
    session.any_batches = session.any_batches or store.has_batches()


def run_repeats(
    groups: list[list[Ballot]],
    repeats: int,
    store: Store,
    label: Callable[[BallotResult], str | None],
    *,
    max_cost: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    **kwargs: Any,
) -> tuple[list[list[BallotResult]], RunStats]:
    """run_ballots for a panel asked ``repeats`` times (--repeats): ``groups`` come R at a time,
    one per repeat of the same item (repeat 0 first). Repeat r + 1's ballots are asked once
    every ballot of repeat r is answered (one pass per repeat, the cost cap counting the spend
    of the passes before); the results come back in ``groups``' order."""
    if repeats == 1:
        return run_ballots(groups, store, label, max_cost=max_cost, progress=progress, **kwargs)
    everything: list[list[BallotResult]] = [[] for _ in groups]
    total = sum(len(g) for g in groups)
    stats: RunStats | None = None
    offset = 0
    for repeat in range(repeats):
        where = list(range(repeat, len(groups), repeats))
        chosen = [groups[i] for i in where]
        left = None if max_cost is None else max(0.0, max_cost - (stats.cost_usd if stats is not None else 0.0))

        def tick(done: int, _total: int, base: int = offset) -> None:
            if progress is not None:
                progress(base + done, total)

        results, run = run_ballots(chosen, store, label, max_cost=left, progress=tick, **kwargs)
        offset += sum(len(g) for g in chosen)
        for i, res in zip(where, results):
            everything[i] = res
        if stats is None:
            stats = run
            if stats.guard is not None:
                stats.guard.cap = max_cost
        else:
            stats.absorb(run)
    assert stats is not None  # repeats >= 2: at least one pass ran
    return everything, stats


def run_ballots(
    groups: list[list[Ballot]],
    store: Store,
    label: Callable[[BallotResult], str | None],
    *,
    early_stop: bool = False,
    max_cost: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    pool: JurorPool | None = None,
    shard: Shard | None = None,
    batch: bool = False,
    on_group: Callable[[list[BallotResult]], None] | None = None,
) -> tuple[list[list[BallotResult]], RunStats]:
    """Ask every group's jurors (each group: one question for one model, or one gold query);
    with `shard` (a jury.judging.shards.Shard) only the ballots in it, the others `not_asked`
    and counted in stats.other_shard. ``on_group``: called with each group's results as soon
    as the group is done (adjudication drops its prompts there)."""
    jurors = _jurors_of(groups)
    guard = CostGuard(max_cost)
    stats = _new_stats(guard, jurors)
    total = sum(len(g) for g in groups)
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    async def main() -> list[list[BallotResult]]:
        session = _Session(store, pool or JurorPool(list(jurors.values())), guard, stats, shard=shard)
        session.pool.stop_requested = False
        loop = asyncio.get_running_loop()
        this = asyncio.current_task()
        assert this is not None  # main() runs as asyncio.run's task
        grace = max((j.timeout_s for j in jurors.values()), default=0.0) + INTERRUPT_MARGIN_S
        # not the main thread, or no signals here: Ctrl-C then stops at once, as before
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, _on_sigint(session, list(jurors), grace, this, loop))
        session.any_batches = store.has_batches()
        if batch or any(j.batch for j in jurors.values()):  # --batch, or jurors with batch = true
            await _prepare_batches(session, groups, guard, shard, every_juror=batch)
        stop_renewing = _start_renewing(session)
        tick(0)
        slots = sum(session.pool.limiter(name).max_concurrency for name in jurors)
        try:
            return await _run_groups(groups, label, session, early_stop, tick, on_group, slots)
        finally:
            stop_renewing()
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGINT)

    try:
        results = asyncio.run(main())
    except asyncio.CancelledError:  # a second Ctrl-C, or the wait after the first ran out
        raise KeyboardInterrupt from None
    _raise_if_stopped(stats)
    return results, stats


def _jurors_of(groups: list[list[Ballot]]) -> dict[str, JurorSpec]:
    """The jurors the ballots ask, by name, in the order they first appear."""
    jurors: dict[str, JurorSpec] = {}
    for g in groups:
        for b in g:
            jurors.setdefault(b.juror.name, b.juror)
    return jurors


def _new_stats(guard: CostGuard, jurors: dict[str, JurorSpec]) -> RunStats:
    """The run's stats; under a cost cap, naming the jurors' models with no known price."""
    stats = RunStats(guard=guard)
    if guard.cap is not None:
        stats.unpriced = sorted({j.model for j in jurors.values() if not j.costs_nothing and not has_price(j.model)})
    return stats


async def _run_groups(
    groups: list[list[Ballot]],
    label: Callable[[BallotResult], str | None],
    session: _Session,
    early_stop: bool,
    tick: Callable[[int], None],
    on_group: Callable[[list[BallotResult]], None] | None,
    slots: int,
) -> list[list[BallotResult]]:
    """Every group's results, in the groups' order: workers (enough to keep the jurors'
    ``slots`` busy) each take the next group not yet started."""
    results: list[list[BallotResult]] = [[] for _ in groups]
    todo = iter(enumerate(groups))

    async def worker() -> None:
        for i, group in todo:  # one iterator for every worker: each group once, in order
            results[i] = await _run_group(group, label, session, early_stop, tick)
            if on_group is not None:
                on_group(results[i])

    await asyncio.gather(*(worker() for _ in range(min(len(groups), max(GROUP_WORKERS, 2 * slots)))))
    return results


def _raise_if_stopped(stats: RunStats) -> None:
    """A StoreError when a vote could not be stored, KeyboardInterrupt after a Ctrl-C."""
    if stats.store_error:
        lost = f"; {stats.unstored} answered calls could not be stored" if stats.unstored else ""
        raise StoreError(
            f"{stats.store_error} (stopped: every vote stored before the failure is kept{lost}; "
            "no verdict file written; free space and rerun, no stored vote is asked again)"
        )
    if stats.interrupted:
        raise KeyboardInterrupt
