"""Packaging: what an installed jury carries, what its core install imports, and the one line
a feature says when its extra ([plots], [web], [sign], [ray]) is not installed."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from jury.errors import MissingExtra, need_extra
from tests.support.badinput import basic_project
from tests.support.clirun import run_jury_inprocess
from tests.support.helpers import REPO
from tests.support.jurytest import make_project, says, write_panel

# What the core install leaves out (the extras) and what `import jury` must not pay for.
EXTRAS_PACKAGES = ("matplotlib", "starlette", "uvicorn", "jinja2", "cryptography", "ray")
HEAVY = (*EXTRAS_PACKAGES, "litellm", "scipy")
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]


@pytest.mark.slow  # builds a wheel with pip
def test_wheel_ships_panels_and_prompts(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("jury_sql-*.whl")  # the distribution jury-sql (the import name is jury)
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"jury/panels/{p.relative_to(REPO / 'panels').as_posix()}" for p in (REPO / "panels").rglob("*.toml")}
    shipped |= {f"jury/prompts/{p.name}" for p in (REPO / "prompts").glob("*.md")}
    assert {n for n in names if n.startswith(("jury/panels/", "jury/prompts/")) and not n.endswith(".py")} == shipped
    assert "jury/panels/taxonomies/plsqlbench.toml" in names and "jury/prompts/adjudicate-suite-v1.md" in names
    assert "jury/judging/providers/pool.py" in names and "jury/cli/__init__.py" in names
    # every module of the source tree is in the wheel (a package missing from pyproject's list is not)
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "jury").rglob("*.py")}
    assert modules - names == set()


def test_every_package_of_the_source_tree_is_listed_for_the_wheel():
    """pyproject's [tool.setuptools] packages names each package under jury/ (a folder with an
    __init__.py): one left out ships no module of it, and an installed jury fails on import
    (jury.stats was, when the statistics became a package)."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "jury").rglob("__init__.py") if "__pycache__" not in p.parts
    }
    assert found - listed == set()


# ------------------------------------------------------------------ the core stays light


def test_import_jury_and_its_public_names_import_no_extra_nor_litellm_or_scipy():
    """`python -X importtime -c "import jury"`, then every public name (jury.score, jury.report,
    ...: each imports its jury.jobs module): none of it imports an extra's package, litellm or scipy."""
    code = (
        "import sys, jury\nprint('-- names', file=sys.stderr, flush=True)\nfor name in jury.__all__:\n    getattr(jury, name)\n"
    )
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    on_import, _, on_names = proc.stderr.partition("-- names\n")
    assert on_names, proc.stderr

    def imported(log: str) -> set[str]:  # "import time: self | cumulative | [indent]module"
        return {line.rsplit("|", 1)[1].strip().split(".")[0] for line in log.splitlines() if line.startswith("import time:")}

    assert "jury" in imported(on_import) and "pydantic" in imported(on_names)  # the log is what it claims to be
    assert imported(on_import) & set(HEAVY) == set()
    assert imported(on_names) & set(HEAVY) == set()


# ------------------------------------------------------------------ a missing extra is one line


def without(monkeypatch, *packages: str) -> None:
    """As if ``packages`` were not installed: importing one or a submodule raises
    ModuleNotFoundError; jury's modules that import an extra when imported (the charts, the site,
    the review page) are dropped, so they import again. All is put back after the test."""
    for name in list(sys.modules):
        if name.split(".")[0] in packages:
            monkeypatch.setitem(sys.modules, name, None)
    for package in packages:
        monkeypatch.setitem(sys.modules, package, None)
    for name in sorted(sys.modules, key=lambda name: -name.count(".")):  # a package's modules before it
        if name.startswith(("jury.results.plots", "jury.results.site")) or name == "jury.web.app":
            parent, _, child = name.rpartition(".")
            monkeypatch.setattr(sys.modules[parent], child, sys.modules[name])  # restored as it was afterwards
            monkeypatch.delitem(sys.modules, name)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, (proc.returncode, proc.stderr)
    return lines[0]


@pytest.mark.parametrize(
    ("hidden", "args", "line"),
    [
        (("matplotlib",), ["--plots", "plots"], "Error: writing plots needs matplotlib: pip install 'jury-sql[plots]'"),
        (
            ("matplotlib",),
            ["-f", "html", "-o", "site"],
            "Error: the html site needs matplotlib: pip install 'jury-sql[plots,web]'",
        ),
        (("jinja2",), ["-f", "html", "-o", "site"], "Error: the html site needs jinja2: pip install 'jury-sql[plots,web]'"),
    ],
    ids=["plots", "site-without-matplotlib", "site-without-jinja2"],
)
def test_report_without_plots_or_web_names_the_install_command(hidden, args, line, tmp_path, monkeypatch):
    basic_project(tmp_path)
    without(monkeypatch, *hidden)
    proc = run_jury_inprocess(["report", "run.jsonl", *args], tmp_path)
    assert one_error_line(proc) == line
    assert not (tmp_path / "plots").exists() and not (tmp_path / "site").exists()


@pytest.mark.parametrize(
    ("hidden", "package"),
    [
        (("starlette",), "starlette"),
        (("uvicorn",), "uvicorn"),
        (("jinja2",), "jinja2"),
        (("python_multipart", "multipart"), "python-multipart"),
    ],
    ids=["starlette", "uvicorn", "jinja2", "python-multipart"],
)
def test_review_page_without_web_names_the_install_command_before_reading_anything(hidden, package, tmp_path, monkeypatch):
    basic_project(tmp_path)
    without(monkeypatch, *hidden)
    proc = run_jury_inprocess(["review", "--verdicts", "verdicts/adj.json"], tmp_path)  # not read: the extra comes first
    assert one_error_line(proc) == f"Error: the review page needs {package}: pip install 'jury-sql[web]'"
    assert proc.stdout == ""


def test_review_app_without_web_raises_the_jury_error(tmp_path, monkeypatch):
    import jury

    monkeypatch.chdir(basic_project(tmp_path))
    without(monkeypatch, "starlette")
    with pytest.raises(jury.MissingExtra, match=r"^the review page needs starlette: pip install 'jury-sql\[web\]'$"):
        jury.review_app(verdicts="verdicts/adj.json")


def write_key(path: Path) -> Path:
    """An Ed25519 private key in OpenSSH form, its public key line beside it (``.pub``)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate()
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
    )
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    path.with_name(f"{path.name}.pub").write_bytes(public + b" alice@test\n")
    return path


def test_without_sign_signing_stops_before_any_call_and_a_signature_is_not_passed_unchecked(tmp_path, monkeypatch, fake_llm):
    make_project(tmp_path)
    for name, _ in FOUR:
        fake_llm.script(name, says("genuine_error"))
    panel = str(write_panel(tmp_path, fake_llm.base_url, FOUR))
    key = write_key(tmp_path / "alice")
    signed = run_jury_inprocess(["adjudicate", "run.jsonl", "--panel", panel, "-o", "verdicts/adj.json", "--sign", key], tmp_path)
    assert signed.returncode == 0 and (tmp_path / "verdicts" / "adj.json.sig").is_file(), signed.stderr
    (tmp_path / "verdicts" / "copy.json").write_bytes((tmp_path / "verdicts" / "adj.json").read_bytes())  # no .sig beside it
    calls = fake_llm.calls()

    without(monkeypatch, "cryptography")
    proc = run_jury_inprocess(["adjudicate", "run.jsonl", "--panel", panel, "-o", "verdicts/again.json", "--sign", key], tmp_path)
    assert one_error_line(proc) == "Error: signing needs cryptography: pip install 'jury-sql[sign]'"
    assert fake_llm.calls() == calls and not (tmp_path / "verdicts" / "again.json").exists()
    proc = run_jury_inprocess(["verify", "verdicts/adj.json"], tmp_path)
    assert one_error_line(proc) == "Error: checking signatures needs cryptography: pip install 'jury-sql[sign]'"
    proc = run_jury_inprocess(["verify", "verdicts/copy.json"], tmp_path)  # the lock alone: the core checks it
    assert proc.returncode == 0 and "copy.json" in proc.stdout, proc.stderr
    proc = run_jury_inprocess(["verify", "verdicts/copy.json", "--trusted-key", f"{key}.pub"], tmp_path)
    assert one_error_line(proc) == "Error: checking signatures needs cryptography: pip install 'jury-sql[sign]'"


def test_executor_ray_without_ray_names_the_install_command(tmp_path, monkeypatch):
    basic_project(tmp_path)
    without(monkeypatch, "ray")
    proc = run_jury_inprocess(["score", "run.jsonl", "--executor", "ray"], tmp_path)
    assert one_error_line(proc) == "Error: executor 'ray' needs ray: pip install 'jury-sql[ray]'"


def test_need_extra_names_the_cause_of_a_broken_install(tmp_path, monkeypatch):
    (tmp_path / "jury_broken_extra.py").write_text("raise ImportError('libfoo.so.1: cannot open shared object file')\n")
    (tmp_path / "jury_half_extra.py").write_text("import jury_absent_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert need_extra("json", "x", "parsing").loads("[1]") == [1]
    with pytest.raises(MissingExtra) as broken:
        need_extra("jury_broken_extra", "plots", "writing plots")
    assert str(broken.value) == (
        "writing plots needs jury_broken_extra: pip install 'jury-sql[plots]' (libfoo.so.1: cannot open shared object file)"
    )
    with pytest.raises(MissingExtra) as half:
        need_extra("jury_half_extra", "web", "the review page")
    assert (
        str(half.value)
        == "the review page needs jury_half_extra: pip install 'jury-sql[web]' (No module named 'jury_absent_dependency')"
    )
