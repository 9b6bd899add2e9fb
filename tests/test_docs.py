"""What keeps the docs true: the CLI reference (docs/cli.md) is generated from the commands and
must be current, every command is described in the docs' prose, every page is in mkdocs.yml's
nav, README.md's quick start holds its three commands, and pytest runs the doctests in jury/.
CI builds the site with .ci/docs (`mkdocs build --strict`), which fails on a broken link or
anchor: the tests at the end run that script on a copy of the docs, clean and with one planted."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cogapp import Cog

from tests.support.cli_reference import command_help
from tests.support.helpers import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
CLI_REFERENCE = DOCS / "cli.md"
BEGIN, END = "<!-- [[[cog", "<!-- [[[end]]] -->"


def prose() -> str:
    """Every docs page but the generated CLI reference, one text."""
    pages = sorted(p for p in DOCS.rglob("*.md") if p != CLI_REFERENCE)
    return "\n".join(p.read_text(encoding="utf-8") for p in pages)


def nav_pages(nav: list) -> list[str]:
    """The page files mkdocs.yml's nav names, at any depth."""
    pages: list[str] = []
    for entry in nav:
        items = entry.values() if isinstance(entry, dict) else [entry]
        for item in items:
            pages.extend(nav_pages(item) if isinstance(item, list) else [item])
    return pages


def test_cli_reference_is_current(capsys):
    status = Cog().main(["cog", "--check", str(CLI_REFERENCE)])
    assert status == 0, "docs/cli.md is stale: regenerate it with `python -m cogapp -r docs/cli.md`\n" + capsys.readouterr().out


def test_cli_reference_shows_every_command_and_option():
    helps = command_help()
    assert {"jury", "jury score", "jury adjudicate", "jury import", "jury import bird-predictions"} <= helps.keys()
    assert "--allow-superseded" in helps["jury score"] and "--version" in helps["jury"]
    generated = CLI_REFERENCE.read_text(encoding="utf-8").split(BEGIN, 1)[1].split(END, 1)[0]
    for text in helps.values():
        assert text in generated
    assert "\x1b[" not in generated and "╭" not in generated
    assert not re.search(r"[ \t]$", generated, re.M), "trailing whitespace in the generated block"


@pytest.mark.slow
def test_every_command_is_described_in_the_docs():
    text = prose()
    headings = [line for line in text.splitlines() if re.match(r"#{1,3} ", line)]
    leaves = [path for path in command_help() if not any(other.startswith(path + " ") for other in command_help())]
    missing = [path for path in leaves if not re.search(rf"(`|^){re.escape(path)}(?![\w-])", text, re.M)]
    assert not missing, f"commands never shown in docs/ outside the CLI reference: {missing}"
    top = [path for path in leaves if path.count(" ") == 1]
    without_heading = [path for path in top if not any(f"`{path}`" in h for h in headings)]
    assert not without_heading, f"commands without a heading in docs/: {without_heading}"


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    nav = nav_pages(config["nav"])
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages, (
        f"in docs/ but not in the nav: {sorted(set(pages) - set(nav))}; in the nav only: {sorted(set(nav) - set(pages))}"
    )
    assert len(nav) == len(set(nav)), "a page is in the nav twice"
    assert config["theme"]["name"] == "material" and config["strict"] == "true"


def test_readme_quick_start_holds_its_three_commands():
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if not line.startswith("#")]
    assert block.startswith("# in the repository's root")
    assert commands == [
        "pip install -e '.[dev]'",
        "cd examples/bird-superhero && jury score run.jsonl && cd ../..",
        "python -m pytest -q",
    ]
    assert (REPO / "examples" / "bird-superhero" / "run.jsonl").is_file()
    assert len(text.splitlines()) <= 250, "README.md is the short introduction: the reference lives in docs/"


def test_readme_links_into_docs_name_existing_pages():
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    assert len(links) >= 10
    assert [link for link in links if not (REPO / link).is_file()] == []


@pytest.mark.slow  # a subprocess importing every module: the doctest collection imports them too
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
    assert len(out["modules"]) > 40 and "jury.judging.providers.pool" in out["modules"] and "jury.cli.score" in out["modules"]
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


@pytest.mark.slow
@pytest.mark.skipif(
    not (REPO.parent / "shared" / "data" / "labels" / "flex").is_dir(), reason="../shared FLEX labels not present"
)
def test_readme_calibrate_block_runs_and_leaves_nothing_in_its_folder(tmp_path):
    """The README's calibrate block, run as written in a folder beside ../shared, prints FLEX's
    execution-match kappa and leaves no file in that folder (it left run.jsonl, labels.jsonl
    and gold.jsonl in the repository's root); the store is .jury/, which git ignores."""
    import subprocess
    import sys

    text = README.read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```bash\n(.*?)```", text, re.S) if "jury calibrate" in b)
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "shared").symlink_to(REPO.parent / "shared")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(tmp_path)}
    proc = subprocess.run(["bash", "-e", "-c", block], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "0.620" in proc.stdout and "200" in proc.stdout
    assert sorted(p.name for p in root.iterdir()) == [".jury"]
    assert ".jury/" in (REPO / ".gitignore").read_text().splitlines()


def test_every_call_the_package_docstring_shows_binds_to_the_real_signature():
    """jury/__init__.py's docstring shows the jobs as calls (``reaudit(files, check=True)``):
    each names an exported function and binds to its signature (positional arguments and
    keywords as written), so the front door never shows an argument that does not exist."""
    import inspect

    import jury

    calls = re.findall(r"``(\w+)\(([^`]*)\)``", jury.__doc__ or "")
    assert len(calls) >= 11
    for name, args in calls:
        if name in ("render", "write"):  # the results' methods, shown by what they take
            assert callable(getattr(jury.Result, name))
            continue
        assert name in jury.__all__, name
        parts = [a.strip() for a in args.split(",") if a.strip()]
        positional = [object() for a in parts if "=" not in a]
        keywords = {a.split("=", 1)[0].strip(): object() for a in parts if "=" in a}
        try:
            inspect.signature(getattr(jury, name)).bind(*positional, **keywords)
        except TypeError as exc:
            raise AssertionError(f"jury.__doc__ shows {name}({args}), which does not bind: {exc}") from None


def _undocumented(qualname: str, obj) -> list[str]:
    """``qualname`` and its public methods and properties that have no docstring of their own
    (a class's inherited one, or a dataclass's generated signature, does not count)."""
    import inspect

    own = vars(obj).get("__doc__") if inspect.isclass(obj) else obj.__doc__
    generated = inspect.isclass(obj) and (own or "").startswith(f"{obj.__name__}(")
    missing = [qualname] if not (own or "").strip() or generated else []
    if inspect.isclass(obj):
        for name, member in vars(obj).items():
            if name.startswith("_") or not (
                isinstance(member, (property, staticmethod, classmethod)) or inspect.isfunction(member)
            ):
                continue
            fn = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
            if not (fn.__doc__ or "").strip():
                missing.append(f"{qualname}.{name}")
    return missing


def test_every_public_member_has_a_docstring():
    """What `help()` and the API pages show: every name jury exports, every public function and
    class of jury.jobs's modules, and their public methods and properties, say what they do."""
    import importlib
    import inspect
    import pkgutil

    import jury
    import jury.jobs

    missing: list[str] = []
    for name in jury.__all__:
        if name != "__version__":
            missing += _undocumented(f"jury.{name}", getattr(jury, name))
    for info in pkgutil.iter_modules(jury.jobs.__path__):
        module = importlib.import_module(f"jury.jobs.{info.name}")
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isclass(obj) or inspect.isfunction(obj):
                missing += _undocumented(f"{module.__name__}.{name}", obj)
    assert sorted(set(missing)) == []


JOBS = ["score", "report", "adjudicate", "audit_gold", "reaudit", "check_gold", "calibrate", "verify", "suites", "review_app"]


@pytest.mark.parametrize("name", [*JOBS, "gold_defects", "evaluate"])
def test_a_jobs_docstring_documents_each_parameter_once_in_its_args_section(name):
    """The API pages' parameter tables (mkdocstrings, Google style): a job's ``Args:`` names
    every parameter of its signature, in order, and nothing else."""
    import inspect

    import jury

    fn = getattr(jury, name)
    doc = inspect.getdoc(fn) or ""
    assert "\nArgs:\n" in doc and "\nReturns:\n" in doc, name
    section = doc.split("\nArgs:\n", 1)[1].split("\n\n", 1)[0]
    documented = [m.group(1) for m in re.finditer(r"^    (\w+): ", section, re.M)]
    assert documented == list(inspect.signature(fn).parameters)


CI_DOCS = REPO / ".ci" / "docs"


def test_ci_builds_the_docs_only_through_ci_docs():
    """.ci/run calls .ci/docs, the script the tests below run, and builds the site no other way
    (a second spelling of the command could drift back to `--quiet`, which makes strict pass)."""
    ci_run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line.split("#")[0] for line in ci_run.splitlines() if not line.lstrip().startswith("#")]
    assert [line.strip() for line in commands if ".ci/docs" in line] == ["bash .ci/docs"]
    assert not [line for line in commands if "mkdocs" in line]
    script = [line for line in CI_DOCS.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")]
    assert [line for line in script if "mkdocs build --strict" in line]
    assert not [line for line in script if re.search(r"mkdocs .*(--quiet|\s-q\b)", line)]


def docs_copy(tmp_path: Path) -> Path:
    """mkdocs.yml and docs/ copied to a temporary root; jury/ linked in for mkdocstrings."""
    import shutil

    root = tmp_path / "site-src"
    root.mkdir()
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(DOCS, root / "docs")
    (root / "jury").symlink_to(REPO / "jury", target_is_directory=True)
    return root


def ci_docs(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(CI_DOCS), str(root)], capture_output=True, text=True, timeout=300)


def test_ci_docs_builds_the_real_docs(tmp_path):
    """The docs as they are build cleanly through CI's script (so the failure below is the plant's)."""
    result = ci_docs(docs_copy(tmp_path))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "link",
    [
        "[a heading that is not there](score.md#no-such-heading)",  # another page's anchor
        "[a heading that is not there](#no-such-heading)",  # the page's own
    ],
)
def test_ci_docs_fails_on_a_broken_anchor(tmp_path, link):
    root = docs_copy(tmp_path)
    page = root / "docs" / "library.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\nSee {link}.\n", encoding="utf-8")
    result = ci_docs(root)
    assert result.returncode != 0
    assert "no-such-heading" in result.stderr
