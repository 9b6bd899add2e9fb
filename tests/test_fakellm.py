"""The fake OpenAI-compatible server and the network guard that the rest of the suite leans on."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.fakellm import MAX_HANG_S, FakeLLMServer, Reply, ballot_reply, estimate_tokens, json_reply, truncated_reply
from tests.support.netguard import NetworkBlocked, is_loopback_host

REPO = Path(__file__).resolve().parent.parent


def post(server: FakeLLMServer, body: dict, *, path: str = "/chat/completions", auth: bool = True, timeout: float = 5):
    headers = {"Authorization": "Bearer sk-fake-key"} if auth else {}
    return httpx.post(server.base_url + path, json=body, headers=headers, timeout=timeout)


def chat(model: str, content: str = "Which answer is right?", **extra) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": content}], **extra}


# ---- the server --------------------------------------------------------------------------


def test_scripted_reply_has_openai_shape_and_is_recorded(fake_llm):
    fake_llm.script("juror-a", json_reply({"reasoning": "same rows", "verdict": "answer_1"}))
    rf = {"type": "json_schema", "json_schema": {"name": "ballot", "schema": {"type": "object"}, "strict": True}}
    prompt = "Compare answer 1 and answer 2 and give a verdict."
    before = time.time()
    response = post(fake_llm, chat("juror-a", prompt, response_format=rf, temperature=0))
    assert response.status_code == 200
    body = response.json()
    assert body["id"].startswith("chatcmpl-")
    assert body["model"] == "juror-a"
    content = body["choices"][0]["message"]["content"]
    assert json.loads(content) == {"reasoning": "same rows", "verdict": "answer_1"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"]["prompt_tokens"] == len(prompt) // 4
    assert body["usage"]["completion_tokens"] == len(content) // 4
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]

    [entry] = fake_llm.requests
    assert entry["model"] == "juror-a"
    assert entry["messages"] == [{"role": "user", "content": prompt}]
    assert entry["response_format"] == rf
    assert entry["params"] == {"temperature": 0}
    assert entry["had_auth"] is True and entry["status"] == 200 and entry["source"] == "script"
    assert "sk-fake-key" not in json.dumps(fake_llm.requests)
    assert before <= entry["timestamp"] <= time.time()  # the wall-clock time it was received


def test_token_estimate_has_a_floor_of_one():
    assert estimate_tokens("") == 1
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("a" * 40) == 10


def test_v1_path_auth_flag_and_call_counts(fake_llm):
    fake_llm.script("m1", "hello")
    fake_llm.script("m2", "world")
    assert post(fake_llm, chat("m1"), path="/chat/completions", auth=False).status_code == 200
    assert httpx.post(f"http://127.0.0.1:{fake_llm.port}/chat/completions", json=chat("m1")).status_code == 200
    assert post(fake_llm, chat("m2")).status_code == 200
    assert fake_llm.calls() == 3 and fake_llm.calls("m1") == 2 and fake_llm.calls("m2") == 1
    assert [r["had_auth"] for r in fake_llm.requests] == [False, False, True]
    assert [r["path"] for r in fake_llm.requests] == ["/v1/chat/completions", "/chat/completions", "/v1/chat/completions"]


def test_unscripted_model_gets_openai_style_404(fake_llm):
    response = post(fake_llm, chat("nobody"))
    assert response.status_code == 404
    error = response.json()["error"]
    assert "nobody" in error["message"] and error["code"] == "model_not_found"
    assert fake_llm.requests[0]["source"] == "unscripted"
    assert httpx.post(fake_llm.base_url + "/embeddings", json={}).status_code == 404


def test_default_responder_answers_every_unscripted_model():
    with FakeLLMServer(default=ballot_reply("answer_2")) as server:
        body = post(server, chat("any-model-at-all")).json()
        assert json.loads(body["choices"][0]["message"]["content"])["verdict"] == "answer_2"
        server.set_default(None)
        assert post(server, chat("any-model-at-all")).status_code == 404


def test_fault_queue_is_consumed_in_order_before_the_responder(fake_llm):
    fake_llm.script("m", "fine")
    fake_llm.fail_next("m", [Reply(status=429, retry_after=1), Reply(status=500), Reply(status=503, error_message="busy")])
    first = post(fake_llm, chat("m"))
    assert first.status_code == 429 and first.headers["Retry-After"] == "1"
    assert first.json()["error"]["type"] == "rate_limit_error"
    second = post(fake_llm, chat("m"))
    assert second.status_code == 500 and "Retry-After" not in second.headers
    third = post(fake_llm, chat("m"))
    assert third.status_code == 503 and third.json()["error"]["message"] == "busy"
    assert post(fake_llm, chat("m")).json()["choices"][0]["message"]["content"] == "fine"
    assert [r["source"] for r in fake_llm.requests] == ["fault", "fault", "fault", "script"]
    assert [r["status"] for r in fake_llm.requests] == [429, 500, 503, 200]


def test_callable_responder_sees_the_request(fake_llm):
    seen = []

    def responder(request: dict):
        seen.append(request)
        last = request["messages"][-1]["content"]
        return {"echo": last} if last.startswith("json") else f"plain:{last}"

    fake_llm.script("m", responder)
    assert post(fake_llm, chat("m", "hi")).json()["choices"][0]["message"]["content"] == "plain:hi"
    assert json.loads(post(fake_llm, chat("m", "json please")).json()["choices"][0]["message"]["content"]) == {
        "echo": "json please"
    }
    assert [r["model"] for r in seen] == ["m", "m"]


def test_broken_responder_becomes_a_500(fake_llm):
    fake_llm.script("m", lambda request: 1 / 0)
    response = post(fake_llm, chat("m"))
    assert response.status_code == 500 and "ZeroDivisionError" in response.json()["error"]["message"]


def test_malformed_body_and_truncated_reply(fake_llm):
    fake_llm.script("bad", Reply(malformed_body=True))
    fake_llm.script("cut", truncated_reply('{"reasoning": "long text", "verdict": "answer_1"}', 12))
    response = post(fake_llm, chat("bad"))
    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.text)
    choice = post(fake_llm, chat("cut")).json()["choices"][0]
    assert choice["finish_reason"] == "length" and choice["message"]["content"] == '{"reasoning"'


def test_latency_per_reply_and_server_wide():
    """The server-wide latency holds a reply back; a reply's own latency_s=0 overrides it. Checked
    by order, not by a stopwatch: the fast reply arrives while the slow one is still held (its
    latency is far longer than the test), and stopping the server drops the held reply."""
    with FakeLLMServer(latency_s=MAX_HANG_S) as server:
        server.script("slow", "ok")
        server.script("fast", Reply(content="ok", latency_s=0))
        outcome: list[object] = []
        slow = threading.Thread(target=lambda: outcome.append(_post_or_error(server, chat("slow"), timeout=60)))
        slow.start()
        while server.calls("slow") == 0 and slow.is_alive():  # the slow request reached the server
            time.sleep(0.01)
        assert post(server, chat("fast")).json()["choices"][0]["message"]["content"] == "ok"
        assert slow.is_alive() and outcome == []  # still held back by the server-wide latency
    slow.join(timeout=30)
    assert not slow.is_alive()
    [held] = outcome
    assert isinstance(held, (httpx.RemoteProtocolError, httpx.ReadError)), repr(held)  # dropped by stop(), never answered
    assert [r["model"] for r in server.requests] == ["slow", "fast"]


def _post_or_error(server: FakeLLMServer, body: dict, *, timeout: float) -> object:
    try:
        return post(server, body, timeout=timeout)
    except httpx.HTTPError as exc:
        return exc


def test_hang_times_the_client_out_and_stop_cuts_a_hanging_reply_short():
    server = FakeLLMServer().start()
    server.script("stuck", Reply(content="late", hang=True))
    with pytest.raises(httpx.ReadTimeout):
        post(server, chat("stuck"), timeout=0.3)
    # a second hanging request is still being served while we stop: stop() drops it, so its
    # client sees the connection closed without a reply, not its own (longer) read timeout
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(_post_or_error(server, chat("stuck"), timeout=MAX_HANG_S - 5)))
    worker.start()
    while server.calls("stuck") < 2 and worker.is_alive():
        time.sleep(0.01)
    server.stop()
    worker.join(timeout=MAX_HANG_S)
    assert not worker.is_alive()
    [cut] = outcome
    assert isinstance(cut, (httpx.RemoteProtocolError, httpx.ReadError)), repr(cut)  # closed unanswered, not timed out
    server.stop()  # idempotent


def test_max_in_flight_is_measured_at_the_server():
    """Three requests held in flight together by a barrier in the responder (never by a latency
    the machine's load could outlast: the third could then arrive after the first ended)."""
    together = threading.Barrier(3, timeout=60)

    def held(_request):
        together.wait()
        return "ok"

    with FakeLLMServer() as server:
        server.script("m", held)
        threads = [threading.Thread(target=post, args=(server, chat("m"))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert server.max_in_flight("m") == 3 and server.max_in_flight() == 3
        server.script("m", "ok")
        post(server, chat("m"))
        assert server.max_in_flight("m") == 3


def test_script_mode_serves_a_fixed_verdict(tmp_path):
    proc = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "tests" / "support" / "fakellm.py"),
            "--port",
            "0",
            "--latency",
            "0.05",
            "--verdict",
            "answer_2",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        response = httpx.post(base_url + "/chat/completions", json=chat("whatever"), timeout=5)
        content = json.loads(response.json()["choices"][0]["message"]["content"])
        assert content["verdict"] == "answer_2" and content["reasoning"]
    finally:
        proc.terminate()
        proc.wait(timeout=5)


# ---- the network guard ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "host, loopback",
    [
        ("127.0.0.1", True),
        ("127.4.5.6", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("10.255.255.1", False),
        ("8.8.8.8", False),
        ("::ffff:8.8.8.8", False),
        ("api.openai.com", False),
        ("localhost.example.com", False),
        ("", False),
        (None, False),
    ],
)
def test_loopback_classification(host, loopback):
    assert is_loopback_host(host) is loopback


def test_guard_refuses_non_loopback_without_dns(no_network):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(NetworkBlocked, match="10.255.255.1"):
            sock.connect(("10.255.255.1", 80))
        with pytest.raises(NetworkBlocked):
            sock.connect_ex(("10.255.255.1", 80))
        # a hostname is refused before any lookup: NetworkBlocked, not socket.gaierror
        with pytest.raises(NetworkBlocked, match="example.com"):
            sock.connect(("example.com", 80))
    finally:
        sock.close()
    with pytest.raises(NetworkBlocked, match="api.openai.com"):
        socket.create_connection(("api.openai.com", 443), timeout=5)
    with pytest.raises(NetworkBlocked, match="api.anthropic.com"):
        socket.getaddrinfo("api.anthropic.com", 443)
    with pytest.raises(httpx.ConnectError, match="network access blocked"):  # httpx wraps the OSError
        httpx.get("https://api.openai.com/v1/models", timeout=5)
    # each attempt was refused by the guard itself, before any connect or DNS lookup (a hostname
    # is refused as a name, never resolved): nothing reached the network to time out
    assert no_network.violations == [
        "connect to ('10.255.255.1', 80)",
        "connect_ex to ('10.255.255.1', 80)",
        "connect to ('example.com', 80)",
        "create_connection to ('api.openai.com', 443)",
        "DNS lookup of 'api.anthropic.com'",
        "create_connection to ('api.openai.com', 443)",  # httpx's
    ]
    no_network.clear()  # provoked on purpose: do not fail this test in teardown


def test_guard_lets_loopback_and_unix_sockets_through(fake_llm, tmp_path):
    fake_llm.script("m", "ok")
    assert httpx.post(f"http://localhost:{fake_llm.port}/v1/chat/completions", json=chat("m")).status_code == 200
    with socket.create_connection(("127.0.0.1", fake_llm.port), timeout=5):
        pass
    assert socket.getaddrinfo("localhost", fake_llm.port)
    a, b = socket.socketpair()
    a.close()
    b.close()
    path = str(tmp_path / "s.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(path)
    client.close()
    listener.close()


@pytest.mark.real_api
def test_real_api_marker_is_skipped_by_default():
    pytest.fail("a real_api test ran without --real-api")


def test_guard_fails_a_test_that_swallows_the_error_and_real_api_opt_in(tmp_path):
    """Run pytest on a scratch suite: a swallowed refusal still fails the test in teardown;
    real_api tests are skipped without --real-api and run unguarded with it."""
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(REPO)!r})
            from tests.support.netguard import no_network, pytest_addoption, pytest_collection_modifyitems  # noqa: F401
            """
        )
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    real_api: real provider\n")
    (tmp_path / "test_scratch.py").write_text(
        textwrap.dedent(
            """
            import socket
            import pytest

            def test_swallows():
                try:
                    socket.create_connection(("10.255.255.1", 80), timeout=5)
                except OSError:
                    pass

            @pytest.mark.real_api
            def test_unguarded():
                assert socket.socket.connect.__qualname__ == "socket.connect"
            """
        )
    )
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)]
    default = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "1 passed, 1 skipped, 1 error" in default.stdout, default.stdout
    assert "tried to reach the network" in default.stdout and "10.255.255.1" in default.stdout
    opted_in = subprocess.run(cmd + ["--real-api", "-k", "unguarded"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "1 passed" in opted_in.stdout and "skipped" not in opted_in.stdout, opted_in.stdout


def test_fail_next_takes_a_single_reply_str_or_dict(fake_llm):
    fake_llm.script("m", "later")
    fake_llm.fail_next("m", "first")
    fake_llm.fail_next("m", {"second": 2})
    fake_llm.fail_next("m", Reply(status=502))
    contents = [post(fake_llm, chat("m")) for _ in range(4)]
    assert contents[0].json()["choices"][0]["message"]["content"] == "first"
    assert json.loads(contents[1].json()["choices"][0]["message"]["content"]) == {"second": 2}
    assert contents[2].status_code == 502
    assert contents[3].json()["choices"][0]["message"]["content"] == "later"
