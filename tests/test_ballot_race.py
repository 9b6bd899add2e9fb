"""Two runners on one store wanting the same ballot at the same moment: it is asked once (issue 46).

Each test forces its interleaving with events, never with sleeps: two runners (each its own
thread, store connection and session, as two processes would have) ask one ballot against the
loopback juror, whose first request is parked until the other runner has made its decision
(seen the claim held, or sent a request of its own). The server counts the requests.
"""

from __future__ import annotations

import threading
from pathlib import Path

from jury.execution.store import Store
from jury.judging.juror import JurorSpec
from jury.judging.plan import Ballot
from tests.support.fakellm import FakeLLMServer, ballot_reply

WAIT_S = 60.0  # a guard against a hang only: every wait below ends on an event


def _label(result) -> str | None:
    return (result.reply or {}).get("verdict")


class _Race:
    """The first request waits at the server until a runner decided not to ask (its claim came
    back held) or a second request arrived (a runner paid again)."""

    def __init__(self, server: FakeLLMServer, store_path: Path) -> None:
        self.server, self.path = server, store_path
        self.first_arrived = threading.Event()
        self.decided = threading.Event()
        self.parked_ok: bool | None = None
        self._lock = threading.Lock()
        self._seen = 0
        server.script("ja", self._respond)
        juror = JurorSpec(name="ja", model="openai/ja", family="openai", api_base=server.base_url, max_retries=0, timeout_s=120)
        self.ballot = Ballot("adjudication", 1, "m", juror, "blind", [{"role": "user", "content": "which?"}], "0" * 64)

    def _respond(self, request: dict):
        with self._lock:
            self._seen += 1
            first = self._seen == 1
        if first:
            self.first_arrived.set()
            self.parked_ok = self.decided.wait(WAIT_S)
        else:
            self.decided.set()  # a second request for the same ballot: the race was lost
        return ballot_reply("answer_1")

    def observed(self, store: Store) -> Store:
        """`store` with its claims watched: a claim that comes back held is this runner's decision."""
        real = store.claim

        def claim(h, holder, lease_s):
            got = real(h, holder, lease_s)
            if got is not None:
                self.decided.set()
            return got

        store.claim = claim  # type: ignore[method-assign]
        return store

    def run(self, open_store, out: list) -> threading.Thread:
        """A runner in its own thread, on its own connection (``open_store()``, opened there)."""
        from jury.judging.runner import run_ballots

        def go() -> None:
            store = open_store()
            try:
                out.append(run_ballots([[self.ballot]], store, _label)[0][0][0])
            except BaseException as exc:  # shown by the assertion on `out`
                out.append(exc)
            finally:
                store.close()

        t = threading.Thread(target=go, daemon=True)
        t.start()
        return t


def _same_vote(a: list, b: list) -> None:
    assert len(a) == len(b) == 1, (a, b)
    assert a[0].status == b[0].status == "voted", (a, b)
    assert a[0].reply == b[0].reply


def _no_claims_left(path: Path) -> None:
    with Store(path) as st:
        assert st.conn.execute("SELECT count(*) FROM claims").fetchone() == (0,)
        assert st.conn.execute("SELECT count(*) FROM votes").fetchone() == (1,)


def test_a_ballot_on_the_wire_in_one_runner_is_waited_for_by_the_other(tmp_path, fake_llm):
    """The first runner's request is on the wire (parked) when the second wants the ballot: the
    second sees the claim held, waits, and takes the first one's vote. One call."""
    path = tmp_path / "store.db"
    Store(path).close()
    race = _Race(fake_llm, path)
    first: list = []
    second: list = []
    t1 = race.run(lambda: Store(path), first)
    assert race.first_arrived.wait(WAIT_S)
    t2 = race.run(lambda: race.observed(Store(path)), second)
    t1.join(WAIT_S)
    t2.join(WAIT_S)
    assert race.parked_ok
    assert fake_llm.calls("ja") == 1
    _same_vote(first, second)
    _no_claims_left(path)


def test_both_runners_check_the_store_before_either_claims_and_one_asks(tmp_path, fake_llm):
    """The window of check-then-call: both runners have found no vote in the store before either
    takes a claim (the first is parked between its look and its claim until the second has looked).
    The claim is taken in a write transaction (BEGIN IMMEDIATE): one of them gets it, the other
    sees it held. One call."""
    path = tmp_path / "store.db"
    Store(path).close()
    race = _Race(fake_llm, path)
    h = race.ballot.request_sha256
    second_looked = threading.Event()
    parked_before_claim: list[bool] = []

    def first_store() -> Store:
        store = race.observed(Store(path))
        observed_claim = store.claim

        def claim_after_the_other_looked(req, holder, lease_s):
            if req == h and not parked_before_claim:
                parked_before_claim.append(second_looked.wait(WAIT_S))
            return observed_claim(req, holder, lease_s)

        store.claim = claim_after_the_other_looked  # type: ignore[method-assign]
        return store

    def second_store() -> Store:
        store = race.observed(Store(path))
        real_get = store.get_vote

        def get_vote(req):
            vote = real_get(req)
            if req == h and vote is None:
                second_looked.set()
            return vote

        store.get_vote = get_vote  # type: ignore[method-assign]
        return store

    first: list = []
    second: list = []
    t1 = race.run(first_store, first)
    t2 = race.run(second_store, second)
    t1.join(WAIT_S)
    t2.join(WAIT_S)
    assert parked_before_claim == [True]
    assert race.parked_ok
    assert fake_llm.calls("ja") == 1
    _same_vote(first, second)
    _no_claims_left(path)


def test_the_race_harness_catches_a_runner_that_asks_without_a_claim(tmp_path, fake_llm):
    """The harness against a deliberately racy runner (its claims always granted, as a
    check-then-call without a claim would be): the interleaving is forced, so the second runner
    pays again, every time. What the tests above assert is not luck."""
    path = tmp_path / "store.db"
    Store(path).close()
    race = _Race(fake_llm, path)

    def racy() -> Store:
        store = Store(path)
        store.claim = lambda h, holder, lease_s: None  # type: ignore[method-assign]
        return store

    first: list = []
    second: list = []
    t1 = race.run(lambda: Store(path), first)
    assert race.first_arrived.wait(WAIT_S)
    t2 = race.run(racy, second)
    t1.join(WAIT_S)
    t2.join(WAIT_S)
    assert race.parked_ok
    assert fake_llm.calls("ja") == 2  # paid twice: the harness sees it


def test_an_asker_whose_event_loop_is_stalled_keeps_its_claim(tmp_path, fake_llm, monkeypatch):
    """The window of issue 46: a live asker's claim ran out while its event loop was blocked
    (litellm's import, ~3 s of CPU, happens under the first claim; on a loaded machine it took
    longer than the lease), so the other runner took the claim over and paid again. The first
    runner is blocked here inside its call, before its request, while the clock moves past its
    lease (a stall as long as two leases); its claim must be renewed meanwhile, so the second
    runner sees it held and waits for its vote. One call."""
    import jury.execution.store as store_mod
    import jury.judging.runner as runner_mod
    from jury.judging.providers import pool, setup

    path = tmp_path / "store.db"
    Store(path).close()
    race = _Race(fake_llm, path)
    h = race.ballot.request_sha256
    monkeypatch.setattr(runner_mod, "CLAIM_RENEW_S", 0.02)
    offset = [0.0]  # seconds the store's clock is ahead of real time: the stall
    real_time = store_mod.time

    class Clock:
        def __getattr__(self, name):
            return getattr(real_time, name)

        def time(self) -> float:
            return real_time.time() + offset[0]

    monkeypatch.setattr(store_mod, "time", Clock())
    stalled, renewed = threading.Event(), threading.Event()
    real_renew = store_mod.VoteStoreMixin.renew_claims

    def renew_claims(self, hashes, holder, lease_s):
        hashes = list(hashes)
        real_renew(self, hashes, holder, lease_s)
        if offset[0] and h in hashes:
            renewed.set()

    monkeypatch.setattr(store_mod.VoteStoreMixin, "renew_claims", renew_claims)
    real_install = setup.install_capped_session
    blocked_once: list[bool] = []

    def install(litellm):  # runs in the asker's event loop, under its claim, before the request
        if not blocked_once:
            blocked_once.append(True)
            stalled.set()
            renewed.wait(10.0)  # blocks the loop; the guard only ends the test on today's code
        return real_install(litellm)

    monkeypatch.setattr(pool, "install_capped_session", install)
    first: list = []
    second: list = []
    t1 = race.run(lambda: Store(path), first)
    assert stalled.wait(WAIT_S)
    offset[0] = 2 * store_mod.CLAIM_LEASE_S  # the stall: by the clock, the first claim's lease ran out
    renewed_in_time = renewed.wait(10.0)
    t2 = race.run(lambda: race.observed(Store(path)), second)
    t1.join(WAIT_S)
    t2.join(WAIT_S)
    assert fake_llm.calls("ja") == 1  # on a loop-driven renewal: 2, the second runner took the claim over
    assert renewed_in_time  # the claim was renewed while the asker's loop was blocked
    _same_vote(first, second)
    _no_claims_left(path)
