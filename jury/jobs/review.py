"""``jury.review_app``: the local review page where a person settles what the jury could not,
and what follows it: ``export_review`` (the decisions as human labels) and ``lock_review``
(the decisions as a hash-locked review file).

``review_app`` builds everything ``jury review`` builds before it serves: the queue (from
locked verdict and audit files, each lock checked), the decision store, the launch's token
and the Starlette app. ``ReviewApp.serve()`` serves it with uvicorn, as ``jury review``
does; a test or a notebook can call the app directly (e.g. Starlette's TestClient on
``ReviewApp.path``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from jury.errors import InputError
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.review import ReviewExportOptions, ReviewLockOptions, ReviewOptions
from jury.pipeline.project import PathLike, Project, as_paths
from jury.vocab import DEFAULT_REVIEW_QUEUES

if TYPE_CHECKING:
    from jury.verdicts.signing import Signer

SERVE_NOTE = "Every decision is stored as you make it; Ctrl-C stops the server."


class ReviewApp(Result):
    """The review page of one launch: ``app`` (ASGI), its ``token`` and the ``path`` that
    carries it; ``serve()`` binds ``host``:``port`` and serves until interrupted."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "md")

    app: Any = Field(exclude=True, repr=False)  # the Starlette app
    state: Any = Field(exclude=True, repr=False)  # jury.web.app.ReviewState: queue, store, secrets
    reviewer: str
    host: str
    port: int
    items: int  # items in this reviewer's queue
    decided: int  # of them, decided by this reviewer so far
    notes: list[str] = Field(default_factory=list)  # what `jury review` says on stderr before it serves

    @property
    def token(self) -> str:
        """The launch's secret token: a page must carry it (it is in ``url``)."""
        return str(self.state.token)

    @property
    def root(self) -> str:
        """The launch's path: every page lives under it (anything else is 404)."""
        return str(self.state.root)

    @property
    def path(self) -> str:
        """The launch's entry path with its token (every page lives under ``/<launch>/``)."""
        return f"{self.state.root}/?token={self.state.token}"

    def url(self, port: int | None = None) -> str:
        """The URL to open, on ``port`` (default: the one asked for; 0 means the one bound)."""
        shown = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port if port is None else port}{self.path}"

    def serve(self, announce: Callable[[str], None] | None = None) -> None:
        """Bind (port 0: any free port), call ``announce`` with the URL, serve until interrupted."""
        from jury.web.app import serve

        serve(self.state, self.host, self.port, announce or print)

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        return f"Reviewing {self.items} items as {self.reviewer} ({self.decided} decided so far); open:\n"


def review_app(options: ReviewOptions | None = None, *, project: Project | None = None, **overrides: Any) -> ReviewApp:
    """The review page for locked adjudication files and an audit file, where people settle what the jury
    could not.

    Args:
        options: a ``ReviewOptions`` (jury.options.review: every option of ``jury review``, each
            documented there: ``verdicts``, ``audit`` (default jury.toml's), ``queue``, ``reviewer``,
            ``host``, ``port``, ``db_root``, ``store``, ``sample``), or none. With ``sample`` (a locked
            sample file, ``jury review sample``) its records are the queue (its frame files are the
            verdict and audit files; give neither ``verdicts`` nor ``audit`` nor ``queue``), served
            blind: no panel votes or verdict, before or after deciding, and, as always, no other
            reviewer's decisions and no model names.
        project: the folder's jury.toml defaults (default: the working directory's).
        overrides: ReviewOptions' fields as keyword arguments (``verdicts=``, ``port=``, ...), over
            ``options``'.

    Returns:
        A ReviewApp: the application, its URL with the launch's token, and what it serves.

    Raises:
        InputError: a host or reviewer the page cannot use, before any work.
    """
    from jury.execution.reviews import ReviewStore
    from jury.web.app import ReviewState, bind_address, create_app, is_loopback

    o = job_options(ReviewOptions, "review_app", options, overrides)
    project = project or Project.load()
    who = _reviewer(o.reviewer)
    bind = o.host if o.host is not None else "127.0.0.1"
    bind_address(bind, o.port)  # an address the page cannot serve: one line, before any work
    notes = (
        [] if is_loopback(bind) else [f"Warning: serving on {bind}, reachable from other machines; the token is still required"]
    )
    source = _queue(o, project)
    state = ReviewState(source, ReviewStore(project.store_path(o.store)), who, host=bind, blind=o.sample is not None)
    return ReviewApp(
        app=create_app(state),
        state=state,
        reviewer=who,
        host=bind,
        port=o.port,
        items=len(state.items),
        decided=len(state.decisions()),
        notes=notes,
        store_path=project.store_path(o.store),
    )


def _queue(o: ReviewOptions, project: Project) -> Any:
    """What the page serves (jury.pipeline.review_queue.ReviewSource): the queues' items of the locked
    files, or a sample file's records, served blind."""
    from jury.pipeline.review_queue import build_queue, parse_queues

    names, sample_n = parse_queues(o.queue or [str(q) for q in DEFAULT_REVIEW_QUEUES])
    if o.sample is not None and (o.verdicts or o.audit is not None or o.queue):
        raise InputError("--sample serves the sample's own records: give no --verdicts, --audit or --queue with it")
    with project.open_store(o.store) as st:
        if o.sample is not None:
            return _sample_queue(Path(o.sample), st, project.settings(), project.db_root(o.db_root))
        audit = project.path("audit", o.audit)
        return build_queue(o.verdicts, audit, names, sample_n, st, project.settings(), project.db_root(o.db_root))


def _sample_queue(path: Path, store: Any, settings: Any, db_root: Path | None) -> Any:
    """The queue of a locked sample file: its frame files (each lock checked, and unchanged
    since the sample was drawn), its records only, with the panel's votes and verdict left out."""
    from jury.pipeline.review_queue import MAX_SAMPLE, build_queue
    from jury.verdicts.sample import load_sample

    doc = load_sample(path)  # its lock, its rules, its frame's locks and hashes
    files = [Path(f.path) if Path(f.path).is_absolute() else path.parent / f.path for f in doc.frame]
    kinds = [f.kind for f in doc.frame]
    audits = [p for p, k in zip(files, kinds) if k == "audit"]
    if len(audits) > 1:
        raise InputError(f"{path}: its frame holds {len(audits)} audit files; the page serves one at a time")
    adjudications = [p for p, k in zip(files, kinds) if k == "adjudication"]
    source = build_queue(adjudications, audits[0] if audits else None, [], MAX_SAMPLE, store, settings, db_root)
    wanted = {(str(r.kind), r.verdict_file, r.model, r.question_id) for r in doc.records}
    source.items = [it for it in source.items if (str(it.kind), it.verdict_sha256, it.model, it.question_id) in wanted]
    for it in source.items:
        it.votes, it.jury_verdict = [], "withheld"
    source.queues = [f"sample-file:{doc.content_sha256}"]
    return source


def _reviewer(name: str | None) -> str:
    import getpass

    who = (name or "").strip() or getpass.getuser()
    if not who or any(ord(c) < 32 for c in who):
        raise InputError(f"reviewer {who!r}: give a name without control characters")
    return who


class ReviewExport(Result):
    """The decisions as human labels (``jury calibrate`` reads them): one per item and reviewer.
    Renders as the label JSONL."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json", "md")

    labels: list[Any]  # jury.inputs.labels.Label
    output: Path | None = None  # where they were written
    notes: list[str] = Field(default_factory=list)

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.inputs.labels import dump_labels

        if fmt == "json":
            from jury.results.render import to_json

            return to_json([lab.model_dump(mode="json", exclude_none=True) for lab in self.labels])
        text = dump_labels(self.labels)
        return f"```json\n{text}```\n" if fmt == "md" else text


def export_review(
    output: PathLike | None = None,
    options: ReviewExportOptions | None = None,
    *,
    project: Project | None = None,
    **overrides: Any,
) -> ReviewExport:
    """The stored decisions on the items of ``verdicts`` and ``audit`` as human labels (only
    ``reviewer``'s, default everyone's), written to ``output`` (label JSONL) when given; an
    output that is an input, the store or a locked file is refused before anything is read.
    ``options``: an ``ReviewExportOptions`` (jury.options.review; ``overrides``: its fields as keyword
    arguments)."""
    from jury.inputs.labels import dump_labels
    from jury.inputs.writer import write_output
    from jury.pipeline.outputs import guard_outputs
    from jury.results.render import safe
    from jury.verdicts.review import labels_of

    o = job_options(ReviewExportOptions, "export_review", options, overrides)
    reviewer = o.reviewer
    project = project or Project.load()
    files, audit_path, store_path = as_paths(o.verdicts), project.path("audit", o.audit), project.store_path(o.store)
    out = Path(output) if output is not None else None
    guard_outputs([out], [*files, audit_path], store=store_path)
    _source, decisions = _decisions(files, audit_path, store_path, reviewer)
    labels = labels_of(decisions)
    notes = []
    if out is not None:
        write_output(out, dump_labels(labels))
        notes.append(f"wrote {safe(f'{len(labels)} labels')} to {safe(out)}")
    return ReviewExport(labels=labels, output=out, notes=notes, inputs=[*files, *as_paths(audit_path)], store_path=store_path)


class ReviewLock(Result):
    """The review file written: how many decisions by how many reviewers, its signature."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "md")

    path: Path
    decisions: int
    reviewers: int
    signature: Path | None = None
    fingerprint: str | None = None  # the signing key's
    new_schema: Path | None = None  # the schema folder written beside it

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        lines = [f"locked {self.decisions} decisions by {self.reviewers} reviewer(s) in {self.path}"]
        if self.signature is not None:
            lines.append(f"signed {self.path}: {self.signature} (key {self.fingerprint})")
        if self.new_schema is not None:
            lines.append(f"wrote {self.new_schema}/ beside {self.path}: the JSON Schema its $schema names")
        return "".join(line + "\n" for line in lines)


def lock_review(
    output: PathLike, options: ReviewLockOptions | None = None, *, project: Project | None = None, **overrides: Any
) -> ReviewLock:
    """Write the stored decisions on the items of ``verdicts`` and ``audit`` as a hash-locked
    review file ``output`` (never overwritten; same lock and bindings as verdict files), signed
    with the Ed25519 key ``sign`` when given (a bad key fails before anything is written).
    ``reviewer``: only that reviewer's decisions (one reviewer's own file, as a blind double
    review needs); ``sample``: a locked sample file whose frame files are the verdict and audit
    files and whose records alone are locked (its ``content_sha256`` is in the file's settings).
    ``options``: a ``ReviewLockOptions`` (jury.options.review; ``overrides``: its fields as keyword arguments)."""
    from jury.pipeline.outputs import guard_outputs
    from jury.pipeline.review_queue import review_head
    from jury.verdicts.review import review_document, write_review

    o = job_options(ReviewLockOptions, "lock_review", options, overrides)
    verdicts, audit, store, sign, reviewer, sample = o.verdicts, o.audit, o.store, o.sign, o.reviewer, o.sample
    project = project or Project.load()
    out = Path(output)
    files, audit_path, store_path = as_paths(verdicts), project.path("audit", audit), project.store_path(store)
    drawn = None
    if sample is not None:
        if files or audit is not None:
            raise InputError("--sample names its own verdict and audit files: give no --verdicts or --audit with it")
        drawn, files, audit_path = _sample_frame(Path(sample))
    guard_outputs([out], [*files, *as_paths(audit_path)], store=store_path, verdict_output=False)
    if os.path.lexists(out):  # before any work: write_review would refuse it after reading every decision
        raise InputError(f"{out}: already exists; a review file is never overwritten (choose another -o)")
    signer = None
    if sign is not None:
        from jury.verdicts.signing import load_signer

        signer = load_signer(sign)
    source, decisions = _decisions(files, audit_path, store_path, reviewer)
    if drawn is not None:
        wanted = {(str(r.kind), r.verdict_file, r.model, r.question_id) for r in drawn.records}
        decisions = [d for d in decisions if (d["kind"], d["verdict_sha256"], d["model"], d["question_id"]) in wanted]
    if not decisions:
        raise InputError("no review decisions stored for these verdict files: nothing to lock (run `jury review` first)")
    head = review_head(source, out.parent, None)
    if drawn is not None:
        head["settings"] = {"sample_file": drawn.content_sha256, "blind": True}
    new_schema = None if (out.parent / "schema").exists() else out.parent / "schema"
    path = write_review(review_document(head, decisions), out)
    return _locked(path, decisions, new_schema, signer, [*files, *as_paths(audit_path)], store_path)


def _sample_frame(sample: Path) -> tuple[Any, list[Path], Path | None]:
    """A locked sample file (jury.verdicts.sample), its frame's adjudication files and audit file."""
    from jury.verdicts.sample import load_sample

    drawn = load_sample(sample)
    frame = [Path(f.path) if Path(f.path).is_absolute() else sample.parent / f.path for f in drawn.frame]
    files = [p for p, f in zip(frame, drawn.frame) if f.kind == "adjudication"]
    audit_path = next((p for p, f in zip(frame, drawn.frame) if f.kind == "audit"), None)
    return drawn, files, audit_path


def _locked(
    path: Path,
    decisions: list[dict[str, Any]],
    new_schema: Path | None,
    signer: Signer | None,
    inputs: list[Path],
    store_path: Path,
) -> ReviewLock:
    """The review file written: its counts, the schema folder made beside it, its signature when asked."""
    result = ReviewLock(
        path=path,
        decisions=len(decisions),
        reviewers=len({d["reviewer"] for d in decisions}),
        new_schema=new_schema if new_schema is not None and new_schema.is_dir() else None,
        inputs=inputs,
        store_path=store_path,
    )
    if signer is not None:
        from jury.verdicts.signing import sign_file

        result.signature, _written = sign_file(path, signer)
        result.fingerprint = signer.fingerprint
    return result


def _decisions(files: list[Path], audit: Path | None, store: Path, reviewer: str | None) -> Any:
    from jury.execution.reviews import ReviewStore
    from jury.pipeline.review_queue import load_sources

    source = load_sources(files, audit)
    return source, ReviewStore(store).decisions(source.verdict_shas, reviewer)
