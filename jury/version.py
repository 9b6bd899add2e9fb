"""jury's version, importable from any stage without importing the package's public API;
``provenance()``: what a score, report or verdict file records about the software behind it."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from importlib import metadata
from pathlib import Path

__version__ = "0.1.0"

PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # the checkout (or site-packages) holding jury/
_REVISION = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")  # SHA-1 or SHA-256 object names


def provenance() -> dict[str, str | None]:
    """``{"jury_version", "litellm_version", "git_revision"}``: jury's version, litellm's
    installed version (from its package metadata: litellm is not imported; None if it is not
    installed) and, when jury runs from a git checkout, that checkout's ``HEAD`` (None when
    installed from a wheel or when git is absent or fails; never an error)."""
    return {
        "jury_version": __version__,
        "litellm_version": distribution_version("litellm"),
        "git_revision": git_revision(),
    }


def distribution_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def git_revision(root: str | Path = PACKAGE_ROOT) -> str | None:
    """``git rev-parse HEAD`` of ``root`` when ``root`` itself is a git checkout (has ``.git``):
    a jury installed into a virtualenv that sits inside some other repository is not that
    repository's revision. None when git is missing, times out or fails."""
    return _git_revision(str(Path(root).resolve()))


@functools.lru_cache(maxsize=8)
def _git_revision(root: str) -> str | None:
    if not (Path(root) / ".git").exists():  # a directory, or a file in a worktree / submodule
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # no GIT_DIR pointing elsewhere
    try:
        done = subprocess.run(
            ["git", "-C", root, "rev-parse", "--verify", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git on PATH, not executable, timed out
        return None
    revision = done.stdout.strip()
    return revision if done.returncode == 0 and _REVISION.match(revision) else None
