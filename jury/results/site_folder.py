"""The site's inputs, output folder and verification block (see :mod:`jury.results.site`).

What a site is built from (:class:`SiteSources`); the checks that keep a build from writing
over anything but an earlier jury site (its marker, ``.jury-site.json``) or a folder holding
an input; the `jury report` argv that rebuilds the site; and the front page's verification
block: the inputs' hashes, the verdict files' hashes and signatures, the commands to rerun.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jury.errors import InputError

MARKER = ".jury-site.json"


@dataclass
class SiteSources:
    """What a site is built from (all already loaded and checked by `jury report`)."""

    report: Any  # Report or its JSON dict
    evaluation: Any  # jury.compare.outcomes.Evaluation
    gold: dict  # question id -> GoldItem
    records: list  # RunRecord
    audit: tuple | None = None  # (path, AuditFile), the review applied
    adjudications: list = field(default_factory=list)  # [(path, AdjudicationFile)], the review applied
    review: tuple | None = None  # (path, ReviewFile)
    inputs: list = field(default_factory=list)  # [(role, path)]: gold, runs, families, ...
    command: list[str] = field(default_factory=list)  # the `jury report` argv that rebuilds the site


@dataclass
class SiteSummary:
    path: Path
    files: int
    bytes: int


# ------------------------------------------------------------------ the output folder


def check_site_dir(out: Path, inputs=()) -> None:
    """Refuse a folder that is neither absent, empty nor a site jury wrote (its marker), and a
    folder holding one of the inputs."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"-o {out}: is a file; -f html writes a folder")
    where = out.resolve()
    for p in inputs:
        if p is None:
            continue
        rp = Path(p).resolve()
        if rp == where or where in rp.parents:
            raise InputError(f"-o {out}: holds the input {p}; the site never writes over an input (choose another folder)")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise InputError(f"-o {out}: is a non-empty folder that is not a jury site (no {MARKER}); choose an empty or new folder")


def _previous_files(out: Path) -> list[str]:
    try:
        data = json.loads((out / MARKER).read_text(encoding="utf-8"))
        return [f for f in data.get("files", []) if isinstance(f, str)]
    except (OSError, ValueError, AttributeError):
        return []


# ------------------------------------------------------------------ provenance and verification


def sha256_of(path: Path) -> str | None:
    from jury.inputs.io import sha256_file

    try:
        return sha256_file(path)
    except OSError:
        return None


def site_command(
    runs, gold, audit, verdicts, review, families, strength, control, settings, rank_resamples: int, seed: int, output
) -> list[str]:
    """The `jury report` argv that rebuilds a site (run from the same folder)."""
    argv = ["jury", "report", *map(str, runs), "--gold", str(gold)]
    for flag, value in (
        ("--audit", audit),
        *(("--verdicts", v) for v in verdicts),
        ("--review", review),
        ("--families", families),
    ):
        if value is not None:
            argv += [flag, str(value)]
    for flag, value in (("--strength", strength), ("--control", control)):
        if value is not None:
            argv += [flag, value]
    argv += ["--comparator", settings.comparator, "--near-miss", f"{settings.near_miss:g}"]
    argv += ["--rank-resamples", str(rank_resamples), "--seed", str(seed), "-f", "html", "-o", str(output)]
    return argv


def _verification(report: dict, sources: SiteSources) -> dict:
    from jury.verdicts.signing import signature_label

    inputs = []
    for role, path in sources.inputs:
        if path is not None:
            inputs.append({"role": role, "path": str(path), "sha256": sha256_of(Path(path)) or "(unreadable)"})
    for db_id, (path, sha) in sorted(getattr(sources.evaluation, "databases", {}).items()):
        inputs.append({"role": f"database {db_id}", "path": str(path), "sha256": sha})
    verdicts = []
    files = ([("audit", sources.audit[0], sources.audit[1])] if sources.audit else []) + [
        ("adjudication", p, d) for p, d in sources.adjudications
    ]
    if sources.review:
        files.append(("review", sources.review[0], sources.review[1]))
    for kind, path, doc in files:
        ok, note = signature_label(path, None)
        verdicts.append(
            {
                "kind": kind,
                "path": str(path),
                "content_sha256": doc.content_sha256,
                "file_sha256": sha256_of(Path(path)) or "(unreadable)",
                "signature": note if ok else f"INVALID: {note}",
                "panel": getattr(getattr(doc, "panel", None), "name", None),
            }
        )
    verify_cmd = shlex.join(["jury", "verify", *(v["path"] for v in verdicts)]) if verdicts else None
    return {
        "jury_version": report["jury_version"],
        "provenance": report["provenance"],
        "inputs": inputs,
        "verdicts": verdicts,
        "verify": verify_cmd,
        "report": shlex.join(sources.command) if sources.command else None,
    }
