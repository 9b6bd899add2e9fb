"""Jurors through a LiteLLM Proxy: the panel's api_base points at the proxy, which forwards to
the scripted jurors (README "Ballots across machines").

The proxy's own dependencies are not jury's: `pip install 'litellm[proxy]'` does not install
cleanly for the litellm release jury runs on here (the extra pins `litellm-proxy==<release>`
and proxy-extras builds that the package index does not have), so the test runs only where a
proxy is found: the `litellm` CLI named by JURY_LITELLM_PROXY (e.g. from a separate venv with
the extra's other requirements), or this environment's when it can import the proxy server.
Otherwise it is skipped, saying why.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.verdicts.lock import load_locked
from tests.support.jurytest import says, write_panel

MASTER_KEY = "sk-jury-test-0123456789abcdef0123456789abcdef"  # the proxy's key for this test only
UPSTREAM_KEY = "sk-upstream-for-the-fake"
JURORS = [
    ("ja", "openai", "gpt-4o"),
    ("jb", "anthropic", "gpt-4.1"),
    ("jc", "google", "gpt-4o-2024-08-06"),
    ("jd", "xai", "gpt-4.1-2025-04-14"),
]


def proxy_command() -> list[str] | None:
    named = os.environ.get("JURY_LITELLM_PROXY")
    if named:
        return [named]
    here = shutil.which("litellm", path=str(Path(sys.executable).parent))
    if here is None:
        return None
    probe = subprocess.run([sys.executable, "-c", "import litellm.proxy.proxy_server"], capture_output=True, timeout=120)
    return [here] if probe.returncode == 0 else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, timeout_s: float = 120) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"the proxy exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health/liveliness", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise AssertionError("the proxy did not start in time")


@pytest.mark.slow
def test_adjudication_through_a_litellm_proxy(project, fake_llm, tmp_path):
    command = proxy_command()
    if command is None:
        pytest.skip(
            "no LiteLLM Proxy here: `pip install 'litellm[proxy]'` does not install cleanly for this litellm "
            "(see the module docstring); set JURY_LITELLM_PROXY to a litellm CLI with the proxy extras"
        )
    for _, _, model in JURORS:
        fake_llm.script(model, says("gold_defect"))
    config = tmp_path / "proxy.yaml"
    config.write_text(
        "model_list:\n"
        + "".join(
            f"  - model_name: {m}\n    litellm_params:\n      model: openai/{m}\n"
            f"      api_base: {fake_llm.base_url}\n      api_key: {UPSTREAM_KEY}\n"
            for _, _, m in JURORS
        )
        + f"general_settings:\n  master_key: {MASTER_KEY}\n"
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    log = (tmp_path / "proxy.log").open("wb")
    proc = subprocess.Popen(
        [*command, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_ready(url, proc)
        panel = write_panel(project, url, [(n, f, f"openai/{m}") for n, f, m in JURORS])
        panel.write_text(panel.read_text().replace("max_retries = 2", 'max_retries = 2\napi_key_env = "JURY_PROXY_KEY"'))
        os.environ["JURY_PROXY_KEY"] = MASTER_KEY
        try:
            res = CliRunner().invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel)], catch_exceptions=False)
        finally:
            del os.environ["JURY_PROXY_KEY"]
        assert res.exit_code == 0, res.output
        doc = load_locked(next((project / "verdicts").glob("adjudication-*.json")))
        distinct = {v.request_sha256 for r in doc.records for v in r.votes}
        assert fake_llm.calls() == len(distinct) > 0
        # every call reached the jurors through the proxy: with the proxy's upstream key, not jury's
        upstream = hashlib.sha256(f"Bearer {UPSTREAM_KEY}".encode()).hexdigest()
        assert {r["auth_sha256"] for r in fake_llm.requests} == {upstream}
        assert all(r.verdict == "gold_defect" for r in doc.records)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
