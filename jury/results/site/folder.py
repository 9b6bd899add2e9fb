"""The site's inputs, output folder and verification block (see :mod:`jury.results.site.build`).

What a site is built from (:class:`SiteSources`); the checks that keep a build from writing
over anything but an earlier jury site (its marker, ``.jury-site.json``) or a folder holding
an input; the `jury report` argv that rebuilds the site; and the front page's verification
block: the inputs' hashes, the verdict files' hashes and signatures, the commands to rerun.

The marker is the site's manifest: ``{"generator": "jury X", "files": {name: sha256}}``, every
file the build wrote with the sha256 of what it wrote. A later build removes a listed file it
no longer writes only when the name is one a build writes (relative, slug-named parts: no
``/`` at the start, no ``..``, no hidden names), the file is a regular file reached inside the
folder (no symlink, no folder link leading out), and its content still has the recorded
hash. Anything else in a manifest (an absolute path, ``../``, a symlink, a directory, a
device, a changed file, malformed JSON) is a one-line refusal before anything is written or
removed. A manifest of an older jury (a list of names, no hashes) is checked the same way,
but the files it lists are never removed (no hash says they are still the ones jury wrote):
the build names them, and they stay until removed by hand.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation
    from jury.inputs.records import GoldItem, QuestionId, RunRecord
    from jury.results.report.model import ReportDocument
    from jury.verdicts.documents import AdjudicationFile, AuditFile
    from jury.verdicts.review import ReviewFile

from jury.errors import InputError

MARKER = ".jury-site.json"
MAX_MARKER_BYTES = 16 << 20  # a site of 100,000 pages lists about 10 MB
_NAME_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")  # what the site's pages, folders and slugs are made of
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass
class SiteSources:
    """What a site is built from (all already loaded and checked by `jury report`)."""

    report: ReportDocument | dict[str, Any]  # ReportDocument or its JSON dict
    evaluation: Evaluation
    gold: Mapping[QuestionId, GoldItem]
    records: list[RunRecord]
    audit: tuple[str | Path | None, AuditFile] | None = None  # the review applied
    adjudications: list[tuple[str | Path, AdjudicationFile]] = field(default_factory=list)  # the review applied
    review: tuple[str | Path, ReviewFile] | None = None
    inputs: list[tuple[str, Path | None]] = field(default_factory=list)  # [(role, path)]: gold, runs, families, ...
    command: list[str] = field(default_factory=list)  # the `jury report` argv that rebuilds the site
    panels: dict[str, Any] | None = None  # --compare-panels: jury.compare_panels's result as JSON (jury.results.panel_comparison)


@dataclass
class SiteSummary:
    path: Path
    files: int
    bytes: int
    kept: list[str] = field(default_factory=list)  # stale files an older manifest listed without a hash: left in place


# ------------------------------------------------------------------ the output folder


def check_site_dir(out: Path, inputs: Iterable[str | Path | None] = ()) -> None:
    """Refuse a folder that is neither absent, empty nor a site jury wrote (its marker), a
    folder holding one of the inputs, and a marker whose manifest is not one jury writes
    (see the module's docstring)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"-o {out}: is not a folder (a file, a device, a FIFO or a socket); -f html writes a folder")
    where = out.resolve()
    for p in inputs:
        if p is None:
            continue
        rp = Path(p).resolve()
        if rp == where or where in rp.parents:
            raise InputError(f"-o {out}: holds the input {p}; the site never writes over an input (choose another folder)")
    if out.is_dir() and any(out.iterdir()) and not os.path.lexists(out / MARKER):
        raise InputError(f"-o {out}: is a non-empty folder that is not a jury site (no {MARKER}); choose an empty or new folder")
    if out.is_dir():
        for name in read_manifest(out):
            listed_file(out, name)


def read_manifest(out: Path) -> dict[str, str | None]:
    """The files an earlier build listed in ``out``'s marker, each with its recorded sha256
    (None in an older jury's manifest); {} without a marker. InputError for a marker that is
    not a regular file of jury's manifest format, or that lists a name no build writes."""
    from jury.inputs.io import loads_document, read_text

    marker = out / MARKER
    try:
        info = os.lstat(marker)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InputError(f"{marker}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{marker}: is not a regular file (a symlink, folder or device); jury writes it as a file: refused")
    if info.st_size > MAX_MARKER_BYTES:
        raise InputError(f"{marker}: {info.st_size} bytes is larger than a site manifest ({MAX_MARKER_BYTES >> 20} MiB)")
    data = loads_document(read_text(marker), str(marker))
    files = data.get("files") if isinstance(data, dict) else None
    if isinstance(files, list) and all(isinstance(f, str) for f in files):  # an older jury's manifest: no hashes
        listed: dict[str, str | None] = dict.fromkeys(files)
    elif isinstance(files, dict) and all(isinstance(h, str) and _SHA256.fullmatch(h) for h in files.values()):
        listed = dict(files)
    else:
        raise InputError(f'{marker}: not a jury site manifest (expected "files": {{name: sha256}}); refused')
    for name in listed:
        if not _site_name(name):
            raise InputError(
                f"{marker}: lists {name[:80]!r}, not a name a site build writes (relative, no '..', no hidden parts); "
                "nothing removed"
            )
    return listed


def _site_name(name: str) -> bool:
    parts = name.split("/")
    return 0 < len(name) <= 4096 and all(_NAME_PART.fullmatch(part) for part in parts) and name != MARKER


def listed_file(out: Path, name: str) -> Path | None:
    """The regular file at a manifest's ``name`` inside ``out`` (None when nothing is there);
    InputError when it is a symlink, a folder, a device, or reached through a folder link that
    leads out of ``out``."""
    target = out / name
    try:
        info = os.lstat(target)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise InputError(f"{target}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        what = "a symlink" if stat.S_ISLNK(info.st_mode) else "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise InputError(f"{out / MARKER}: lists {name!r}, which is {what}; a site build removes only its own files: refused")
    if os.path.realpath(target) != os.path.join(os.path.realpath(out), *name.split("/")):
        raise InputError(f"{out / MARKER}: lists {name!r}, which a folder link leads out of {out}: refused")
    return target


def stale_files(out: Path, written: set[str]) -> tuple[list[Path], list[str]]:
    """(files to remove, names kept) of the manifest's entries the new build does not write:
    removed only when the content still has the recorded hash; an entry without one (an older
    jury's manifest) is kept. InputError for any other entry (see listed_file) or a changed file."""
    from jury.inputs.io import sha256_file

    remove, kept = [], []
    for name, recorded in read_manifest(out).items():
        target = listed_file(out, name)
        if target is None or name in written:
            continue
        if recorded is None:
            kept.append(name)
            continue
        if sha256_file(target) != recorded:
            raise InputError(
                f"{out / MARKER}: lists {name!r}, whose content changed since the build that wrote it; "
                "it is not removed (move it away, or take it off the manifest): refused"
            )
        remove.append(target)
    return remove, kept


# ------------------------------------------------------------------ provenance and verification


def sha256_of(path: Path) -> str | None:
    from jury.inputs.io import sha256_file

    try:
        return sha256_file(path)
    except OSError:
        return None


def public_path(path: str | os.PathLike[str]) -> str:
    """A file as the published site names it: relative to the folder `jury report` ran in, never
    the maintainer's absolute path (their folders on a public page). An engine URL is kept as
    it is (jury redacts it where it is made); a relative path as given."""
    text = str(path)
    if "://" in text or not os.path.isabs(text):
        return text
    try:
        return os.path.relpath(text, Path.cwd())
    except ValueError:  # another drive: the name alone
        return Path(text).name


def site_command(
    runs: Sequence[str | os.PathLike[str]],
    gold: str | Path,
    audit: str | Path | None,
    verdicts: Sequence[str | Path],
    review: str | Path | None,
    families: str | Path | None,
    strength: str | None,
    control: str | None,
    settings: Any,
    rank_resamples: int,
    seed: int,
    output: str | Path,
) -> list[str]:
    """The `jury report` argv that rebuilds a site (run from the same folder; a run file as it was
    given: NAME=PATH for a named prediction file, jury.inputs.run_files)."""
    argv = ["jury", "report", *map(_public_run, runs), "--gold", public_path(gold)]
    for flag, value in (
        ("--audit", audit),
        *(("--verdicts", v) for v in verdicts),
        ("--review", review),
        ("--families", families),
    ):
        if value is not None:
            argv += [flag, public_path(value)]
    for flag, value in (("--strength", strength), ("--control", control)):
        if value is not None:
            argv += [flag, value]
    argv += ["--comparator", settings.comparator, "--near-miss", f"{settings.near_miss:g}"]
    argv += ["--rank-resamples", str(rank_resamples), "--seed", str(seed), "-f", "html", "-o", public_path(output)]
    return argv


def _public_run(run: str | os.PathLike[str]) -> str:
    """A run argument as the site shows it: NAME=PATH keeps its NAME (jury.inputs.run_files)."""
    path = getattr(run, "path", None)
    if path is None:
        return public_path(run)
    model = getattr(run, "model", None)
    return public_path(path) if model is None else f"{model}={public_path(path)}"


def verification_data(report: dict[str, Any], sources: SiteSources) -> dict[str, Any]:
    from jury.verdicts.signing import signature_label

    inputs = []
    for role, path in sources.inputs:
        if path is not None:
            inputs.append({"role": role, "path": public_path(path), "sha256": sha256_of(Path(path)) or "(unreadable)"})
    for db_id, (path, sha) in sorted(getattr(sources.evaluation, "databases", {}).items()):
        inputs.append({"role": f"database {db_id}", "path": public_path(path), "sha256": sha})
    verdicts: list[dict[str, Any]] = []
    files: list[tuple[str, Any, Any]] = ([("audit", sources.audit[0], sources.audit[1])] if sources.audit else []) + [
        ("adjudication", p, d) for p, d in sources.adjudications
    ]
    if sources.review:
        files.append(("review", sources.review[0], sources.review[1]))
    for kind, file, doc in files:
        ok, note = signature_label(file, None)
        verdicts.append(
            {
                "kind": kind,
                "path": public_path(file),
                "content_sha256": doc.content_sha256,
                "file_sha256": sha256_of(Path(file)) or "(unreadable)",
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
