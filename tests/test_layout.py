"""The package reads as the pipeline: stages as folders, small modules, imports only going down."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "jury"
STAGES = ["inputs", "execution", "compare", "judging", "verdicts", "results", "pipeline", "web", "api", "cli"]


def test_every_stage_is_a_package_and_nothing_else_is():
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(STAGES)
    for stage in STAGES:
        assert (PACKAGE / stage / "__init__.py").is_file(), stage
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == [
        "__init__.py",
        "__main__.py",
        "errors.py",
        "plugins.py",
        "stats.py",
        "stats_agreement.py",
        "stats_correction.py",
        "stats_latent.py",
        "stats_panels.py",
        "stats_repeats.py",
        "stats_sampling.py",
        "stats_uncertainty.py",
        "version.py",
        "vocab.py",
    ]


def test_import_contract_holds():
    """lint-imports of the interpreter running the tests, whatever PATH says: the script beside
    sys.executable, else the same entry point run by it (a virtualenv borrowing its packages).
    import-linter is a dev dependency, so a missing one fails rather than skips."""
    exe = Path(sys.executable).parent / "lint-imports"
    entry = "import sys; from importlinter.cli import lint_imports_command; sys.argv = ['lint-imports']; lint_imports_command()"
    cmd = [str(exe)] if exe.is_file() else [sys.executable, "-c", entry]
    proc = subprocess.run(cmd, cwd=PACKAGE.parent, capture_output=True, text=True)
    assert "No module named 'importlinter'" not in proc.stderr, f"import-linter is not installed for {sys.executable}"
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " kept, 0 broken" in proc.stdout
