"""jury.judging.providers (and the modules it is built from: juror, limits, retries, replies)
through the real litellm against the loopback fake server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import warnings
from types import SimpleNamespace

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from jury.judging.juror import CallResult, JurorSpec
from jury.judging.limits import Limiter, SendGate
from jury.judging.providers.pool import JurorPool
from jury.judging.providers.prices import call_cost, estimate_call
from jury.judging.replies import REPAIR_PROMPT, extract_json_object
from jury.judging.retries import retry_after_s
from tests.support.fakellm import FakeLLMServer, Reply, ballot_reply, json_reply, truncated_reply

KEY_ENV = "JURY_TEST_FAKE_KEY"
SECRET = "sk-test-SECRET-0123456789abcdef"
SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "verdict": {"type": "string", "enum": ["answer_1", "answer_2"]}},
    "required": ["reasoning", "verdict"],
    "additionalProperties": False,
}
MESSAGES = [
    {"role": "system", "content": "You are a careful SQL judge."},
    {"role": "user", "content": "Question: how many rows? Answer 1: 3. Answer 2: 4. Which is right?"},
]


def parse_ballot(text: str) -> dict:
    obj = extract_json_object(text)
    if obj.get("verdict") not in ("answer_1", "answer_2"):
        raise ValueError(f"verdict must be answer_1 or answer_2, not {obj.get('verdict')!r}")
    return obj


class RecordingSleep:
    """Stands in for asyncio.sleep: records the waits, sleeps for real only when told to."""

    def __init__(self, real: bool = False) -> None:
        self.waits: list[float] = []
        self.real = real

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(seconds if self.real else 0)


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    return SECRET


@pytest.fixture
def juror(fake_llm, key):
    """Factory: a JurorSpec for server model `name`, reached through litellm's openai/ provider."""

    def make(name: str = "juror-a", **overrides) -> JurorSpec:
        fields = dict(
            name=name,
            model=f"openai/{name}",
            family="fake",
            api_base=fake_llm.base_url,
            api_key_env=KEY_ENV,
            timeout_s=10,
            max_retries=3,
        )
        fields.update(overrides)
        return JurorSpec(**fields)

    return make


def call(pool: JurorPool, name: str = "juror-a", messages=MESSAGES, schema=SCHEMA, parse=parse_ballot) -> CallResult:
    return asyncio.run(pool.call(name, messages, schema=schema, parse=parse))


def assert_no_secret(result: CallResult) -> None:
    assert SECRET not in result.model_dump_json()


# ---- the happy path ------------------------------------------------------------------------


def test_json_reply_is_parsed_counted_and_recorded(fake_llm, juror):
    fake_llm.script("juror-a", json_reply({"reasoning": "Answer 1 counts distinct rows.", "verdict": "answer_1"}))
    sleep = RecordingSleep()
    before = time.monotonic()
    result = call(JurorPool([juror()], sleep=sleep))
    after = time.monotonic()
    assert result.ok and result.error is None
    assert result.parsed == {"reasoning": "Answer 1 counts distinct rows.", "verdict": "answer_1"}
    assert json.loads(result.text) == result.parsed
    assert result.attempts == 1 and sleep.waits == []
    assert result.log == [{"attempt": 1, "status": "ok", "error": None, "wait_s": 0.0}]
    prompt_chars = sum(len(m["content"]) for m in MESSAGES)
    assert result.prompt_tokens == prompt_chars // 4
    assert result.completion_tokens == len(result.text) // 4
    assert result.cost_usd == 0.0  # litellm has no price for "juror-a"

    [request] = fake_llm.requests
    # the latency covers the request (the server saw it inside the call) and nothing outside the call
    assert before < request["monotonic"] < after
    assert 0 < result.latency_s <= after - before
    assert request["model"] == "juror-a"
    assert request["messages"] == MESSAGES
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "ballot", "schema": SCHEMA, "strict": True},
    }
    assert request["params"]["temperature"] == 0
    assert request["had_auth"] is True
    assert_no_secret(result)


def test_params_override_temperature_and_no_schema_means_no_response_format(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.script("juror-b", ballot_reply())
    pool = JurorPool(
        [juror(params={"temperature": 0.7, "max_tokens": 300}), juror("juror-b", structured_output=False)],
        sleep=RecordingSleep(),
    )
    assert call(pool, schema=None).ok
    assert call(pool, "juror-b").ok
    first, second = fake_llm.requests
    assert first["response_format"] is None and second["response_format"] is None
    assert first["params"]["temperature"] == 0.7 and first["params"]["max_tokens"] == 300
    assert second["params"]["temperature"] == 0


def test_cost_and_tokens_are_summed_over_attempts(fake_llm, juror):
    import litellm

    fake_llm.script("gpt-4o-mini", ballot_reply(prompt_tokens=1000, completion_tokens=100))
    fake_llm.fail_next("gpt-4o-mini", Reply(content="I think the first one.", prompt_tokens=1000, completion_tokens=100))
    result = call(JurorPool([juror("gpt-4o-mini")], sleep=RecordingSleep()), "gpt-4o-mini")
    assert result.ok and result.attempts == 2
    assert (result.prompt_tokens, result.completion_tokens) == (2000, 200)
    prompt_cost, completion_cost = litellm.cost_per_token(model="gpt-4o-mini", prompt_tokens=1000, completion_tokens=100)
    assert result.cost_usd == pytest.approx(2 * (prompt_cost + completion_cost))
    assert result.cost_usd > 0


@pytest.mark.parametrize(
    ("name", "prompt_tokens", "completion_tokens"),
    [("gpt-4o-mini", 1234, 56), ("gpt-5.6", 1234, 56), ("gpt-5.6", 300_000, 900)],  # gpt-5.6: tiered above 272k
)
def test_priced_juror_cost_is_litellms_completion_cost(fake_llm, juror, name, prompt_tokens, completion_tokens):
    """The cost recorded from the juror's price looked up once (or, for a tiered price, litellm
    per call) is what litellm.completion_cost gives for the same usage: litellm is the source."""
    import litellm

    fake_llm.script(name, ballot_reply(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens))
    params = {"temperature": 1} if name.startswith("gpt-5") else {}  # litellm refuses temperature 0 for it
    result = call(JurorPool([juror(name, params=params)], sleep=RecordingSleep()), name)
    assert result.ok and (result.prompt_tokens, result.completion_tokens) == (prompt_tokens, completion_tokens)
    usage = litellm.Usage(
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, total_tokens=prompt_tokens + completion_tokens
    )
    expected = litellm.completion_cost(completion_response=litellm.ModelResponse(model=name, usage=usage), model=f"openai/{name}")
    assert expected > 0
    assert result.cost_usd == pytest.approx(expected, rel=1e-12)


def test_cached_prompt_tokens_are_priced_by_litellm():
    """A reply whose usage reports cached prompt tokens is priced at litellm's cache-read rate
    (litellm.completion_cost of the response), not at the juror's plain per-token price."""
    import litellm

    usage = litellm.Usage(
        prompt_tokens=2000, completion_tokens=100, total_tokens=2100, prompt_tokens_details={"cached_tokens": 1500}
    )
    response = litellm.ModelResponse(model="gpt-4o-mini", usage=usage)
    expected = litellm.completion_cost(completion_response=response, model="openai/gpt-4o-mini")
    prompt_price, completion_price = litellm.cost_per_token(model="gpt-4o-mini", prompt_tokens=1, completion_tokens=1)
    assert expected < 2000 * prompt_price + 100 * completion_price  # the cached part costs less
    assert call_cost("openai/gpt-4o-mini", response, 2000, 100) == pytest.approx(expected, rel=1e-12)


def test_a_registered_litellm_callback_still_sees_every_call(fake_llm, juror, monkeypatch):
    """jury turns litellm's own logging off only while nobody listens: a user's success
    callback is called for each call, and sees the messages as sent (not redacted)."""
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    seen: list[str] = []
    contents: list[str] = []

    class Recorder(CustomLogger):
        async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
            seen.append(kwargs.get("model"))
            contents.append(str((kwargs.get("messages") or [{}])[-1].get("content")))

    monkeypatch.setattr(litellm, "callbacks", [Recorder()])
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.script("juror-a", ballot_reply())
    pool = JurorPool([juror()], sleep=RecordingSleep())

    async def both() -> list[CallResult]:
        out = [await pool.call("juror-a", MESSAGES, schema=SCHEMA, parse=parse_ballot) for _ in range(2)]
        for _ in range(100):  # litellm logs on its worker task, after the reply
            if len(seen) == 2:
                break
            await asyncio.sleep(0.02)
        return out

    results = asyncio.run(both())
    assert all(r.ok for r in results)
    assert seen == ["juror-a", "juror-a"]
    assert contents == [MESSAGES[-1]["content"]] * 2


# ---- transient failures are retried --------------------------------------------------------


def test_rate_limit_retry_after_is_honoured(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.fail_next("juror-a", Reply(status=429, retry_after=1))
    sleep = RecordingSleep()
    # a 30 s backoff base shows the wait came from Retry-After, not from the backoff
    result = call(JurorPool([juror()], sleep=sleep, backoff_base_s=30))
    assert result.ok and result.attempts == 2 and fake_llm.calls("juror-a") == 2
    [wait] = sleep.waits
    assert 1.0 <= wait <= 1.1
    assert [e["status"] for e in result.log] == ["rate_limited", "ok"]
    assert result.log[0]["wait_s"] == wait and "429" in result.log[0]["error"]


def test_rate_limit_wait_is_really_slept(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.fail_next("juror-a", Reply(status=429, retry_after=1))
    result = call(JurorPool([juror()]))  # the real asyncio.sleep
    assert result.ok and result.attempts == 2
    first, second = fake_llm.requests
    wait = result.log[0]["wait_s"]
    assert wait >= 1.0  # the Retry-After
    # the server saw the retry no sooner than the recorded wait after the 429, and the wait is in the latency
    assert second["monotonic"] - first["monotonic"] >= wait
    assert result.latency_s >= wait


def test_retry_after_beyond_backoff_max_gives_up_at_once(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.fail_next("juror-a", Reply(status=429, retry_after=3600))
    sleep = RecordingSleep()
    result = call(JurorPool([juror()], sleep=sleep, backoff_max_s=60))
    assert not result.ok and result.attempts == 1 and sleep.waits == []
    assert "3600" in result.error and "429" in result.error


def test_server_error_then_success_backs_off(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.fail_next("juror-a", Reply(status=500))
    sleep = RecordingSleep()
    result = call(JurorPool([juror()], sleep=sleep, backoff_base_s=0.5))
    assert result.ok and result.attempts == 2
    [wait] = sleep.waits
    assert 0.5 <= wait <= 0.55
    assert [e["status"] for e in result.log] == ["server_error", "ok"]


def test_hang_times_out_then_success(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    hang_s = 10
    fake_llm.fail_next("juror-a", Reply(content="too late", hang=True, hang_s=hang_s))
    result = call(JurorPool([juror(timeout_s=1)], sleep=RecordingSleep()))
    assert result.ok and result.attempts == 2
    assert [e["status"] for e in result.log] == ["timeout", "ok"]
    first, second = fake_llm.requests
    # by the server's own clock: the retry came after the client's 1 s timeout and before the
    # hung reply would have been sent, so the client gave up on its timeout, not the server
    assert 1.0 <= second["monotonic"] - first["monotonic"] < hang_s


def test_malformed_body_then_success(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.fail_next("juror-a", Reply(malformed_body=True))
    result = call(JurorPool([juror()], sleep=RecordingSleep()))
    assert result.ok and result.attempts == 2
    assert result.log[0]["status"] == "server_error" and "malformed" in result.log[0]["error"]


def test_mixed_faults_then_success(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply("answer_2"))
    fake_llm.fail_next("juror-a", [Reply(status=429), Reply(status=503), Reply(status=502)])
    sleep = RecordingSleep()
    result = call(JurorPool([juror(max_retries=3)], sleep=sleep, backoff_base_s=1, backoff_max_s=3))
    assert result.ok and result.parsed["verdict"] == "answer_2" and result.attempts == 4
    assert [round(w) for w in sleep.waits] == [1, 2, 3]  # 1, 2, then capped at 3 (jitter <= 10%)


def test_max_retries_exhausted(fake_llm, juror):
    fake_llm.script("juror-a", Reply(status=503))
    sleep = RecordingSleep()
    result = call(JurorPool([juror(max_retries=3)], sleep=sleep))
    assert not result.ok and result.parsed is None
    assert result.attempts == 4 and fake_llm.calls("juror-a") == 4
    assert len(sleep.waits) == 3 and sleep.waits[0] < sleep.waits[1] < sleep.waits[2]
    assert "503" in result.error and "gave up after 3 retries" in result.error
    assert [e["status"] for e in result.log] == ["server_error"] * 4


def test_connection_refused_is_retried_then_abstains(juror, key):
    dead = FakeLLMServer().start()
    base_url = dead.base_url
    dead.stop()  # nothing listens on that port any more
    sleep = RecordingSleep()
    result = call(JurorPool([juror(api_base=base_url, max_retries=1)], sleep=sleep))
    assert not result.ok and result.attempts == 2 and len(sleep.waits) == 1
    assert result.log[0]["status"] == "server_error"


# ---- client errors fail at once ------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_not_retried(fake_llm, juror, status):
    fake_llm.script("juror-a", Reply(status=status, error_message=f"nope {status}: Incorrect API key provided: {SECRET}"))
    sleep = RecordingSleep()
    result = call(JurorPool([juror()], sleep=sleep))
    assert not result.ok and result.attempts == 1 and fake_llm.calls() == 1 and sleep.waits == []
    assert str(status) in result.error and result.log[0]["status"] == "client_error"
    assert "[redacted]" in result.error
    assert_no_secret(result)


def test_unscripted_model_404_is_not_retried(fake_llm, juror):
    result = call(JurorPool([juror("nobody-home")], sleep=RecordingSleep()), "nobody-home")
    assert not result.ok and result.attempts == 1 and "404" in result.error


def test_missing_key_abstains_without_calling(fake_llm, juror, monkeypatch):
    fake_llm.script("juror-a", ballot_reply())
    spec = juror(api_key_env="JURY_TEST_UNSET_KEY")
    monkeypatch.delenv("JURY_TEST_UNSET_KEY", raising=False)
    assert spec.missing_key() == "JURY_TEST_UNSET_KEY"
    result = call(JurorPool([spec], sleep=RecordingSleep()))
    assert not result.ok and result.attempts == 0 and fake_llm.calls() == 0
    assert "JURY_TEST_UNSET_KEY" in result.error


def test_rejected_response_format_is_dropped_and_remembered(fake_llm, juror):
    def responder(request):
        if request.get("response_format"):
            return Reply(status=400, error_message="Invalid parameter: 'response_format' of type 'json_schema' is not supported")
        return ballot_reply()

    fake_llm.script("juror-a", responder)
    pool = JurorPool([juror()], sleep=RecordingSleep())
    first = call(pool)
    assert first.ok and first.attempts == 2
    assert [r["response_format"] is not None for r in fake_llm.requests] == [True, False]
    assert pool.structured_kind("juror-a") == "off"  # remembered: the next call sends none
    assert "response_format" in first.log[0]["error"]
    second = call(pool)
    assert second.ok and second.attempts == 1 and fake_llm.requests[-1]["response_format"] is None


# ---- parsing and the repair turn -----------------------------------------------------------


def test_prose_wrapped_json_is_extracted(fake_llm, juror):
    fake_llm.script(
        "juror-a",
        'Sure. Here is my ballot:\n```json\n{"reasoning": "Answer 2 drops a {join} row.", "verdict": "answer_2"}\n```\nThanks!',
    )
    result = call(JurorPool([juror()], sleep=RecordingSleep()))
    assert result.ok and result.attempts == 1
    assert result.parsed == {"reasoning": "Answer 2 drops a {join} row.", "verdict": "answer_2"}


def test_prose_without_json_gets_one_repair_turn(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply("answer_2"))
    fake_llm.fail_next("juror-a", Reply(content="I believe the second answer is right."))
    result = call(JurorPool([juror()], sleep=RecordingSleep()))
    assert result.ok and result.parsed["verdict"] == "answer_2" and result.attempts == 2
    assert [e["status"] for e in result.log] == ["bad_output", "ok"]
    repair_messages = fake_llm.requests[1]["messages"]
    assert repair_messages[: len(MESSAGES)] == MESSAGES
    assert repair_messages[-2] == {"role": "assistant", "content": "I believe the second answer is right."}
    assert repair_messages[-1]["role"] == "user"
    assert repair_messages[-1]["content"].startswith("Your reply was not valid JSON for the required schema: ")
    assert repair_messages[-1]["content"].endswith("Reply with only the JSON object.")
    assert "no JSON object" in repair_messages[-1]["content"]
    assert REPAIR_PROMPT.split("{reason}")[0] in repair_messages[-1]["content"]


def test_schema_violation_gets_repaired_with_the_parse_reason(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply("answer_1"))
    fake_llm.fail_next("juror-a", json_reply({"reasoning": "hmm", "verdict": "both"}))
    result = call(JurorPool([juror()], sleep=RecordingSleep()))
    assert result.ok and result.attempts == 2
    assert "'both'" in fake_llm.requests[1]["messages"][-1]["content"]


def test_persistent_garbage_abstains(fake_llm, juror):
    fake_llm.script("juror-a", "Honestly, both queries look fine to me.")
    result = call(JurorPool([juror()], sleep=RecordingSleep()))
    assert not result.ok and result.parsed is None
    assert result.attempts == 2 and fake_llm.calls() == 2
    assert result.error.startswith("unparseable reply: ") and "\n" not in result.error
    assert result.text == "Honestly, both queries look fine to me."
    assert [e["status"] for e in result.log] == ["bad_output", "bad_output"]


def test_truncated_reply_counts_as_bad_output(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.fail_next("juror-a", truncated_reply('{"reasoning": "a long chain of thought", "verdict": "answer_1"}', 30))
    result = call(JurorPool([juror()], sleep=RecordingSleep()))
    assert result.ok and result.attempts == 2
    assert result.log[0]["status"] == "bad_output" and "finish_reason=length" in result.log[0]["error"]


def test_empty_reply_is_repaired_without_an_empty_assistant_turn(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.fail_next("juror-a", Reply(content=""))
    result = call(JurorPool([juror()], sleep=RecordingSleep()))
    assert result.ok and result.attempts == 2
    assert [m["role"] for m in fake_llm.requests[1]["messages"]] == ["system", "user", "user"]


def test_repair_turn_failing_transiently_uses_the_retry_budget(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.fail_next("juror-a", [Reply(content="no json here"), Reply(status=500)])
    result = call(JurorPool([juror(max_retries=1)], sleep=RecordingSleep()))
    assert result.ok and result.attempts == 3
    assert [e["status"] for e in result.log] == ["bad_output", "server_error", "ok"]
    assert "Reply with only the JSON object." in fake_llm.requests[2]["messages"][-1]["content"]


# ---- limits --------------------------------------------------------------------------------


def test_concurrency_is_limited_per_juror(juror, key):
    with FakeLLMServer(latency_s=0.2) as server:
        server.set_default(ballot_reply())
        spec_a = juror("juror-a", api_base=server.base_url, max_concurrency=2)
        spec_b = juror("juror-b", api_base=server.base_url, max_concurrency=2)
        pool = JurorPool([spec_a, spec_b], sleep=RecordingSleep())

        async def run_all():
            calls = [pool.call("juror-a", MESSAGES, schema=SCHEMA, parse=parse_ballot) for _ in range(8)]
            calls += [pool.call("juror-b", MESSAGES, schema=SCHEMA, parse=parse_ballot) for _ in range(2)]
            return await asyncio.gather(*calls)

        results = asyncio.run(run_all())
        assert all(r.ok for r in results)
        assert server.calls("juror-a") == 8
        assert server.max_in_flight("juror-a") == 2  # never more, and the limit was used
        assert server.max_in_flight() == 4  # juror-b has its own limiter
        # by the server's clock: request k+2 of juror-a waits for one of requests k, k+1 to be
        # answered, which takes the server's own 0.2 s
        arrivals = sorted(r["monotonic"] for r in server.requests if r["model"] == "juror-a")
        assert all(later - earlier >= server.latency_s for earlier, later in zip(arrivals, arrivals[2:], strict=False))


def test_rpm_spaces_requests(fake_llm, juror, monkeypatch):
    """Each request waits for its slot in a leaky bucket of one request per 60/rpm seconds
    (aiolimiter's AsyncLimiter(1, 60/rpm), whose spacing is its own tested guarantee): checked by
    what was asked of the bucket, not by a clock, so a loaded machine cannot fail it."""
    fake_llm.script("juror-a", ballot_reply())
    sleep = RecordingSleep()
    pool = JurorPool([juror(rpm=600)], sleep=sleep)  # one request per 0.1 s
    limiter = pool.limiter("juror-a")
    buckets: list[tuple[float, float, int]] = []  # (max_rate, time_period, id) of each request's bucket
    real_pace = Limiter.pace

    async def pace(self):
        await real_pace(self)
        buckets.append((self._rate.max_rate, self._rate.time_period, id(self._rate)))

    monkeypatch.setattr(Limiter, "pace", pace)

    async def run_all():
        return await asyncio.gather(*[pool.call("juror-a", MESSAGES, schema=SCHEMA, parse=parse_ballot) for _ in range(4)])

    assert all(r.ok for r in asyncio.run(run_all()))
    assert limiter.max_concurrency == 4 and fake_llm.calls("juror-a") == 4  # all four could go at once
    # every request went through the one bucket of one request per 60/600 = 0.1 s, no burst allowance
    assert [(rate, period) for rate, period, _ in buckets] == [(1, 0.1)] * 4
    assert len({bucket for _, _, bucket in buckets}) == 1
    assert sleep.waits == []  # pacing is not backoff


def test_limiter_survives_a_new_event_loop():
    limiter = Limiter(1, rpm=6000)

    async def hold():
        await limiter.pace()
        async with limiter:
            await asyncio.sleep(0)

    async def two():
        await asyncio.gather(hold(), hold())

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # aiolimiter warns when one of its limiters is reused across loops
        asyncio.run(two())
        asyncio.run(two())
    assert limiter.in_flight == 0


class FakeClocks:
    """A wall clock and a CPU clock that move only when told to, and a sleep that records."""

    def __init__(self) -> None:
        self.now = 100.0
        self.cpu = 5.0
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    def gate(self, max_gap_s: float = 0.02) -> SendGate:
        return SendGate(max_gap_s=max_gap_s, clock=lambda: self.now, cpu=lambda: self.cpu, sleep=self.sleep)


def test_send_gate_spaces_requests_by_the_cpu_a_call_costs():
    """Worked by hand: 12 ms of CPU from the first request to the third finished call is 4 ms a
    call, so requests asked for at one moment leave 0, 4 and 8 ms apart."""
    c = FakeClocks()
    gate = c.gate()

    async def three():
        for _ in range(3):
            await gate.wait()

    asyncio.run(three())  # nothing has finished yet: no spacing
    assert c.waits == [] and gate.gap_s == 0.0
    c.cpu += 0.012
    for _ in range(3):
        gate.finished()
    assert gate.gap_s == pytest.approx(0.004)
    c.now += 1.0
    asyncio.run(three())
    assert c.waits == pytest.approx([0.004, 0.008])  # the first leaves at once
    c.now += 1.0  # idle for longer than the spacing: no wait
    asyncio.run(three())
    assert c.waits[2:] == pytest.approx([0.004, 0.008])


def test_send_gate_spacing_is_capped():
    """A process busy with other work (0.5 s of CPU over one call) spaces by the cap, 20 ms."""
    c = FakeClocks()
    gate = c.gate(max_gap_s=0.02)

    async def two():
        await gate.wait()
        await gate.wait()

    asyncio.run(two())
    c.cpu += 0.5
    gate.finished()
    assert gate.gap_s == 0.02
    c.now += 1.0
    asyncio.run(two())
    assert c.waits == pytest.approx([0.02])


def test_send_gate_ignores_a_finish_before_any_request():
    c = FakeClocks()
    gate = c.gate()
    c.cpu += 1.0
    gate.finished()  # e.g. a batch's reply read without a request
    assert gate.gap_s == 0.0


def test_every_request_of_a_pool_passes_its_send_gate(fake_llm, juror, monkeypatch):
    """One gate per pool, shared by its jurors: each request waits at it once and reports back once."""
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.script("juror-b", ballot_reply())
    pool = JurorPool([juror("juror-a"), juror("juror-b")], sleep=RecordingSleep())
    seen: list[tuple[str, int]] = []
    real_wait, real_finished = SendGate.wait, SendGate.finished

    async def wait(self):
        seen.append(("wait", id(self)))
        await real_wait(self)

    def finished(self):
        seen.append(("finished", id(self)))
        real_finished(self)

    monkeypatch.setattr(SendGate, "wait", wait)
    monkeypatch.setattr(SendGate, "finished", finished)

    async def run_all():
        calls = [pool.call(name, MESSAGES, schema=SCHEMA, parse=parse_ballot) for name in ("juror-a", "juror-b") * 3]
        return await asyncio.gather(*calls)

    assert all(r.ok for r in asyncio.run(run_all()))
    assert fake_llm.calls("juror-a") == fake_llm.calls("juror-b") == 3
    assert sorted(kind for kind, _ in seen) == ["finished"] * 6 + ["wait"] * 6
    assert len({gate for _, gate in seen}) == 1


def test_stop_requested_during_backoff_sends_no_retry(fake_llm, juror):
    """Ctrl-C while a call waits to retry: it comes back interrupted and sends nothing more."""
    fake_llm.script("juror-a", ballot_reply())
    fake_llm.fail_next("juror-a", Reply(status=503))
    pools: list[JurorPool] = []

    async def sleep_then_stop(seconds: float) -> None:
        pools[0].stop_requested = True  # as the runner's SIGINT handler does, mid-backoff

    pool = JurorPool([juror()], sleep=sleep_then_stop)
    pools.append(pool)
    result = call(pool)
    assert result.interrupted and not result.ok
    assert result.error == "interrupted before the request was sent"
    assert result.attempts == 1 and fake_llm.calls() == 1
    assert result.log[0]["status"] == "server_error" and result.log[0]["wait_s"] > 0


def test_stop_requested_before_the_call_sends_nothing(fake_llm, juror):
    fake_llm.script("juror-a", ballot_reply())
    pool = JurorPool([juror()], sleep=RecordingSleep())
    pool.stop_requested = True
    result = call(pool)
    assert result.interrupted and result.attempts == 0 and fake_llm.calls() == 0


# ---- specs, helpers, isolation -------------------------------------------------------------


def test_spec_public_dict_missing_key_and_validation(monkeypatch):
    monkeypatch.setenv("JURY_TEST_PRESENT_KEY", SECRET)
    spec = JurorSpec(
        name="gpt-4.1",
        model="openai/gpt-4.1",
        family="openai",
        api_base="https://user:pw@example.invalid/v1",
        api_key_env="JURY_TEST_PRESENT_KEY",
        params={"top_p": 0.5},
    )
    public = spec.public_dict()
    assert public == {
        "name": "gpt-4.1",
        "model": "openai/gpt-4.1",
        "family": "openai",
        "api_base": "https://example.invalid/v1",
        "params": {"temperature": 0, "top_p": 0.5},
        "structured_output": True,
    }
    assert SECRET not in json.dumps(public)
    assert spec.missing_key() is None
    monkeypatch.delenv("JURY_TEST_PRESENT_KEY")
    assert spec.missing_key() == "JURY_TEST_PRESENT_KEY"
    assert JurorSpec(name="local", model="ollama_chat/qwen3", family="qwen").missing_key() is None
    with pytest.raises(ValueError, match="api_key"):
        JurorSpec(name="x", model="openai/x", family="f", params={"api_key": "sk-oops"})
    with pytest.raises(ValueError):
        JurorSpec(name="x", model="openai/x", family="f", max_concurency=3)  # typo: extra fields are refused


def test_pool_rejects_duplicate_and_unknown_names():
    spec = JurorSpec(name="a", model="openai/a", family="f")
    with pytest.raises(ValueError, match="unique"):
        JurorPool([spec, spec])
    with pytest.raises(KeyError, match="nobody"):
        asyncio.run(JurorPool([spec]).call("nobody", MESSAGES, schema=None, parse=parse_ballot))


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"verdict": "answer_1"}', {"verdict": "answer_1"}),
        ('```json\n{"verdict": "answer_2"}\n```', {"verdict": "answer_2"}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('My ballot: {"reasoning": "uses \\"}\\" and {x}", "verdict": "answer_1"} -- done', None),
        ('prose {not json} then {"ok": true}', {"ok": True}),
        ('{"outer": {"inner": [1, {"deep": null}]}} trailing {"second": 1}', {"outer": {"inner": [1, {"deep": None}]}}),
        ('see {notes} first\n```json\n{"fenced": 1}\n```', {"fenced": 1}),
    ],
)
def test_extract_json_object(text, expected):
    result = extract_json_object(text)
    if expected is None:
        assert result == {"reasoning": 'uses "}" and {x}', "verdict": "answer_1"}
    else:
        assert result == expected


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("no braces at all", "no JSON object"),
        ('{"verdict": "answer_1", "reasoning": "cut', "not closed"),
        ("{'single': 'quotes'}", "invalid JSON"),
        ("[1, 2, 3]", "no JSON object"),
    ],
)
def test_extract_json_object_errors(text, reason):
    with pytest.raises(ValueError, match=reason):
        extract_json_object(text)


def test_retry_after_parsing():
    def exc_with(headers):
        return SimpleNamespace(response=SimpleNamespace(headers=headers), litellm_response_headers=None, headers=None)

    assert retry_after_s(exc_with({"retry-after": "2"})) == 2.0
    assert retry_after_s(exc_with({"Retry-After": "1.5"})) == 1.5
    assert retry_after_s(exc_with({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert retry_after_s(exc_with({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # in the past
    assert retry_after_s(exc_with({})) is None
    assert retry_after_s(ValueError("no response at all")) is None


def test_estimate_call_prices_known_models_and_says_none_otherwise():
    import litellm

    known = JurorSpec(name="gpt-4o-mini", model="openai/gpt-4o-mini", family="openai")
    unknown = JurorSpec(name="x", model="openai/no-such-model-anywhere", family="f")
    tokens, cost = estimate_call(known, MESSAGES, 400)
    assert 20 < tokens < 80  # ~40 tokens of prompt plus message overhead
    expected = sum(litellm.cost_per_token(model="gpt-4o-mini", prompt_tokens=tokens, completion_tokens=400))
    assert cost == pytest.approx(expected) and cost > 0
    assert estimate_call(unknown, MESSAGES, 400) == (tokens, None)
    # a model name litellm would fetch a Hugging Face tokenizer for: no network (the guard would fail us)
    hf = JurorSpec(name="llama", model="huggingface/meta-llama/Llama-3-8b", family="meta")
    assert estimate_call(hf, MESSAGES, 400)[0] == tokens


def test_importing_the_client_does_not_import_litellm():
    code = "import jury.judging.providers.pool, jury.judging.providers.prices, jury.judging.providers.params, jury.judging.providers.batch_bodies, sys; assert 'litellm' not in sys.modules, 'litellm imported'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_keyless_local_juror_never_sends_the_environment_openai_key(fake_llm, monkeypatch):
    """A juror with api_base and no api_key_env must not borrow OPENAI_API_KEY."""
    import asyncio

    from jury.judging.juror import LOCAL_PLACEHOLDER_KEY

    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret-key-0123456789")
    fake_llm.script("local-juror", ballot_reply("both"))
    spec = JurorSpec(name="local", model="openai/local-juror", family="meta", api_base=fake_llm.base_url)
    result = asyncio.run(
        JurorPool([spec]).call("local", [{"role": "user", "content": "hi"}], schema=None, parse=extract_json_object)
    )
    assert result.ok and result.parsed["verdict"] == "both"
    import hashlib

    sent = fake_llm.requests[-1]["auth_sha256"]
    assert sent == hashlib.sha256(f"Bearer {LOCAL_PLACEHOLDER_KEY}".encode()).hexdigest()


def test_latency_excludes_time_queued_for_a_slot():
    """Four calls through one slot: each call's latency is its own time holding the slot, not the queue's.

    Checked by ordering on one clock, not against a wall-clock budget: with one slot, a call's
    latency fits between the end of the call before it and its own end, and covers its own
    request as the server saw it; a latency counted from the queue would reach back to the start."""
    with FakeLLMServer(latency_s=0.2) as server:
        server.script("slow", ballot_reply("both"))
        spec = JurorSpec(name="s", model="openai/slow", family="meta", api_base=server.base_url, max_concurrency=1)
        pool = JurorPool([spec])
        msgs = [{"role": "user", "content": "x"}]

        async def timed():
            result = await pool.call("s", msgs, schema=None, parse=extract_json_object)
            return result, time.monotonic()

        async def main():
            return await asyncio.gather(*(timed() for _ in range(4)))

        start = time.monotonic()
        finished = sorted(asyncio.run(main()), key=lambda pair: pair[1])
        arrivals = sorted(r["monotonic"] for r in server.requests)
    assert all(r.ok for r, _ in finished) and len(arrivals) == 4
    ends = [end for _, end in finished]
    for k, (result, end) in enumerate(finished):
        previous_end = ends[k - 1] if k else start
        assert result.latency_s >= server.latency_s  # the server's own delay is part of it
        assert result.latency_s <= end - previous_end  # no time from before the slot was free
        assert previous_end <= arrivals[k] <= end  # the request went out while this call held the slot


def test_absurdly_nested_json_is_a_bad_reply_not_a_crash():
    deep = '{"reasoning": ' + "[" * 100_000 + "]" * 100_000 + ', "verdict": "both"}'
    with pytest.raises(ValueError, match="nested too deeply"):
        extract_json_object(deep)
