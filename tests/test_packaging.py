"""An installed jury (not only a checkout) must carry its shipped panels and ballot templates."""

import subprocess
import sys
import zipfile

import pytest

from tests.support.helpers import REPO


@pytest.mark.slow  # builds a wheel with pip
def test_wheel_ships_panels_and_prompts(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("jury-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"jury/panels/{p.relative_to(REPO / 'panels').as_posix()}" for p in (REPO / "panels").rglob("*.toml")}
    shipped |= {f"jury/prompts/{p.name}" for p in (REPO / "prompts").glob("*.md")}
    assert {n for n in names if n.startswith(("jury/panels/", "jury/prompts/")) and not n.endswith(".py")} == shipped
    assert "jury/panels/taxonomies/plsqlbench.toml" in names and "jury/prompts/adjudicate-suite-v1.md" in names
    assert "jury/judging/client.py" in names and "jury/cli/__init__.py" in names
