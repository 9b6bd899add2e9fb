"""What keeps the docs true: the README's CLI reference is generated from the commands and must be
current, every command is described in the README, and pytest runs the doctests in jury/."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from cogapp import Cog

from tests.support.cli_reference import command_help
from tests.support.helpers import REPO

README = REPO / "README.md"
BEGIN, END = "<!-- [[[cog", "<!-- [[[end]]] -->"


def prose() -> str:
    """README.md without the generated CLI reference."""
    text = README.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END)
    return text[:start] + text[end:]


def test_cli_reference_is_current(capsys):
    status = Cog().main(["cog", "--check", str(README)])
    assert status == 0, (
        "README.md's CLI reference is stale: regenerate it with `python -m cogapp -r README.md`\n" + capsys.readouterr().out
    )


def test_cli_reference_shows_every_command_and_option():
    helps = command_help()
    assert {"jury", "jury score", "jury adjudicate", "jury import", "jury import bird-predictions"} <= helps.keys()
    assert "--allow-superseded" in helps["jury score"] and "--version" in helps["jury"]
    generated = README.read_text(encoding="utf-8").split(BEGIN, 1)[1].split(END, 1)[0]
    for text in helps.values():
        assert text in generated
    assert "\x1b[" not in generated and "╭" not in generated
    assert not re.search(r"[ \t]$", generated, re.M), "trailing whitespace in the generated block"


@pytest.mark.slow
def test_every_command_is_described_in_the_readme():
    text = prose()
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    leaves = [path for path in command_help() if not any(other.startswith(path + " ") for other in command_help())]
    missing = [path for path in leaves if not re.search(rf"(`|^){re.escape(path)}(?![\w-])", text, re.M)]
    assert not missing, f"commands never shown in README.md outside the CLI reference: {missing}"
    top = [path for path in leaves if path.count(" ") == 1]
    without_heading = [path for path in top if not any(f"`{path}`" in h for h in headings)]
    assert not without_heading, f"commands without a README section: {without_heading}"


def test_importing_every_jury_module_has_no_side_effects(tmp_path):
    """What doctest collection does to jury/: import each module. Nothing printed, written or
    started, no environment change, and litellm stays unimported (the client imports it lazily)."""
    code = r"""
import importlib, json, os, pkgutil, sys, threading
env = dict(os.environ)
import jury
names = [m.name for m in pkgutil.walk_packages(jury.__path__, "jury.") if not m.name.endswith("__main__")]
for name in names:
    importlib.import_module(name)
print(json.dumps({
    "modules": names,
    "litellm": sorted(m for m in sys.modules if m.split(".")[0] == "litellm"),
    "env_changed": sorted(k for k in set(env) | set(os.environ) if env.get(k) != os.environ.get(k)),
    "threads": threading.active_count(),
    "files": os.listdir("."),
}))
"""
    (tmp_path / "cwd").mkdir()
    env = {"PATH": "", "HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path / "cwd", env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    out = json.loads(proc.stdout)
    assert len(out["modules"]) > 40 and "jury.judging.client" in out["modules"] and "jury.cli.score" in out["modules"]
    assert out == {**out, "litellm": [], "env_changed": [], "threads": 1, "files": []}


@pytest.mark.slow  # a pytest child process
def test_pytest_collects_the_doctests_in_jury_without_running_the_app_or_importing_litellm():
    code = (
        "import sys, pytest\n"
        "rc = pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', 'jury'])\n"
        "print('LITELLM', any(m.split('.')[0] == 'litellm' for m in sys.modules), rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert out.rstrip().endswith("LITELLM False 0"), out + proc.stderr
    items = [line for line in out.splitlines() if line.startswith("jury/")]
    assert len(items) >= 10 and all("::" in i for i in items), out
    for module in ("jury/vocab.py", "jury/judging/rules.py", "jury/compare/comparators.py"):
        assert any(i.startswith(module + "::") for i in items), f"no doctests collected from {module}\n{out}"
    assert not any("__main__" in i for i in items) and "Usage:" not in out, out
