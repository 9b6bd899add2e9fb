"""The package reads as the pipeline: stages as folders, small modules, imports only going down."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

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
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    proc = subprocess.run([exe], cwd=PACKAGE.parent, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "2 kept, 0 broken" in proc.stdout
