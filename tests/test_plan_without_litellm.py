"""`jury adjudicate --plan` without importing litellm (issue 46): prices from litellm's bundled
map (jury.judging.price_map, checked against litellm in tests/test_price_map.py) and the
unknown-params warning from litellm's earlier answers (jury.judging.params_cache)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jury.judging import params_cache, price_map
from jury.judging.juror import JurorSpec
from jury.judging.providers import params, setup

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "bird-superhero"

# the CLI in a child process, the fast paths on or off; says on stderr whether litellm was imported
WRAPPER = """
import sys
from jury.judging import params_cache, price_map
price_map.enabled = params_cache.enabled = {fast}
from jury.cli import main
sys.argv = ["jury", *sys.argv[1:]]
try:
    main()
finally:
    print("litellm imported:", "litellm" in sys.modules, file=sys.stderr)
"""


def plan(project: Path, fast: bool, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}  # as a user runs it
    env.update(COLUMNS="200", PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER.format(fast=fast), "adjudicate", "run.jsonl", "--plan", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.mark.slow  # plans the bundled example three times in child processes, twice through litellm
def test_plan_of_the_example_imports_no_litellm_and_is_unchanged(tmp_path):
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".jury", "verdicts"))
    # the default panel with a typo in one juror's params: the plan must still warn of it
    panel = (ROOT / "panels" / "default.toml").read_text()
    typo = project / "typo.toml"
    typo.write_text(panel.replace("params = { temperature = 0 }", "params = { temprature = 0 }", 1))
    slow = plan(project, False)  # litellm prices and checks params, as before; its answers are cached
    assert "litellm imported: True" in slow.stderr
    fast = plan(project, True)
    assert "litellm imported: False" in fast.stderr, fast.stderr
    assert fast.stdout == slow.stdout and "adjudication plan" in fast.stdout and "$" in fast.stdout
    slow_typo, fast_typo = plan(project, False, "--panel", str(typo)), plan(project, True, "--panel", str(typo))
    assert "litellm imported: False" in fast_typo.stderr, fast_typo.stderr
    warning = "juror 'gpt-4.1' (openai/gpt-4.1): params temprature is not known to litellm"
    assert warning in " ".join(slow_typo.stderr.split()) and warning in " ".join(fast_typo.stderr.split())
    assert fast_typo.stdout == slow_typo.stdout


@pytest.fixture
def without_litellm(monkeypatch):
    """litellm imported in this process (to compare), the cache read as in a process without it."""
    setup.import_litellm()
    monkeypatch.setattr(price_map, "litellm_imported", lambda: False)
    monkeypatch.setenv(price_map.LOCAL_MAP_ENV, "True")


def test_unknown_params_are_litellms_answer_kept_in_the_cache(without_litellm, monkeypatch, tmp_path):
    monkeypatch.setenv("JURY_CACHE_DIR", str(tmp_path))
    juror = JurorSpec(name="j", model="openai/gpt-4.1", family="f", params={"temprature": 0, "seed": 1})
    assert params_cache.lookup(juror.model, None) == (False, None)
    assert params.unknown_params(juror) == ["temprature"]  # litellm asked, its answer written
    found, known = params_cache.lookup(juror.model, None)
    assert found and "seed" in known and "temperature" in known

    def no_litellm(*a, **k):
        raise AssertionError("litellm asked again")

    monkeypatch.setattr(params, "supported_params", no_litellm)
    assert params.unknown_params(juror) == ["temprature"]
    # another api_base, another litellm environment, another litellm version: asked anew
    assert params_cache.lookup(juror.model, "http://localhost:1/v1")[0] is False
    monkeypatch.setenv("LITELLM_MODIFY_PARAMS", "True")
    assert params_cache.lookup(juror.model, None)[0] is False
    monkeypatch.delenv("LITELLM_MODIFY_PARAMS")
    data = json.loads((tmp_path / params_cache.FILE_NAME).read_text())
    (tmp_path / params_cache.FILE_NAME).write_text(json.dumps({**data, "litellm": "0.0.1"}))
    assert params_cache.lookup(juror.model, None)[0] is False


def test_the_cache_is_not_read_where_litellm_answers(monkeypatch, tmp_path):
    monkeypatch.setenv("JURY_CACHE_DIR", str(tmp_path))
    setup.import_litellm()
    juror = JurorSpec(name="j", model="openai/gpt-4.1", family="f", params={"temprature": 0})
    params_cache.remember(juror.model, None, ["temprature"])  # a wrong answer in the file
    assert params.unknown_params(juror) == ["temprature"]  # litellm imported: litellm answered, not the file
    (answer,) = json.loads((tmp_path / params_cache.FILE_NAME).read_text())["answers"].values()
    assert "temperature" in answer and "temprature" not in answer  # and its answer replaced the wrong one


def test_an_unwritable_or_broken_cache_is_no_error(without_litellm, monkeypatch, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("JURY_CACHE_DIR", str(blocked / "sub"))  # a folder that cannot be made
    juror = JurorSpec(name="j", model="openai/gpt-4.1", family="f", params={"temprature": 0})
    assert params.unknown_params(juror) == ["temprature"]
    monkeypatch.setenv("JURY_CACHE_DIR", str(tmp_path))
    (tmp_path / params_cache.FILE_NAME).write_text("{not json")
    assert params_cache.lookup(juror.model, None) == (False, None)
    assert params.unknown_params(juror) == ["temprature"]
    assert params_cache.lookup(juror.model, None)[0] is True
