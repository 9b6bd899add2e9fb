"""Build a small installed plugin package: what ``pip install`` leaves on a path.

``write_plugin`` writes a module and the ``<name>-<version>.dist-info`` directory beside it
(METADATA, entry_points.txt and RECORD), so a folder put on ``sys.path`` (or a child's
PYTHONPATH) holds an installed distribution that importlib.metadata reads exactly as it reads
one pip installed into site-packages.
"""

from __future__ import annotations

import os
from pathlib import Path

# A comparator of another benchmark's rule: a prediction counts when it returns as many rows
# as the gold (the values never matter). Hand-checkable against the shop database.
SAME_COUNT = '''
def same_count(gold_rows, pred_rows, *, order_matters=False, options=None, **_):
    """Correct when the prediction has as many rows as the gold."""
    return len(gold_rows) == len(pred_rows)
'''


def write_plugin(
    root: Path,
    *,
    distribution: str = "jury-same-count",
    version: str = "0.1.0",
    module: str = "jury_same_count",
    source: str = SAME_COUNT,
    entry_points: dict[str, dict[str, str]] | None = None,
) -> Path:
    """``root`` holding the module ``module`` (``source``) and the dist-info of ``distribution``
    declaring ``entry_points`` (group -> name -> "module:attribute"); returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    points = entry_points if entry_points is not None else {"jury.comparators": {"same_count": f"{module}:same_count"}}
    (root / f"{module}.py").write_text(source)
    info = root / f"{distribution.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in names.items()) + "\n"
            for group, names in points.items()
        )
    )
    (info / "RECORD").write_text(f"{module}.py,,\n{info.name}/METADATA,,\n{info.name}/entry_points.txt,,\n{info.name}/RECORD,,\n")
    return root


def env_with(root: Path) -> dict[str, str]:
    """This environment with ``root`` first on PYTHONPATH (a child process sees the plugin installed)."""
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "COLUMNS": "200"}
