"""What the jobs that call jurors share (``jury.adjudicate``, ``jury.audit_gold``, ``jury.reaudit``):
the plan a job would ask (``JurorPlan``), what a run of jurors cost (``Calls``), what every juror
job settles before any work (``JurorRequest``: the output guard, the shard, the signing key, the panel) and after a verdict file is
locked (the schema folder, the cost litellm could not price, the signature), and the text the
command line prints for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, computed_field

from jury.errors import JuryError
from jury.jobs.result import Result, console_text
from jury.pipeline.project import PathLike, Project

if TYPE_CHECKING:
    from rich.console import Console

    from jury.judging.shards import Shard
    from jury.verdicts.signing import Signer

R = TypeVar("R", bound=Result)


# ------------------------------------------------------------------ text


def say(console: Console, text: str) -> None:
    """One line (or several) of plain text, made safe to print (no markup, no control characters)."""
    from jury.results.render import safe

    console.print(safe(text, newlines=True), markup=False, highlight=False)


def fenced(text: str) -> str:
    """Text as a Markdown code block."""
    return f"```text\n{text}```\n" if text.endswith("\n") else f"```text\n{text}\n```\n"


# ------------------------------------------------------------------ the plan

_PLAN_HEADS = {
    "model": "model under test",
    "juror": "juror",
    "juror_model": "juror model",
    "ballots": "ballots",
    "prompt_tokens": "est. prompt tokens",
    "completion_tokens": "est. completion tokens",
    "cost": "est. cost",
}


class JurorPlan(Result):
    """The ballots a job would ask, with the estimated tokens and cost per (model under test and)
    juror; no call is made. ``render`` is what the command's ``--plan`` prints."""

    title: str
    groups: int = Field(description="What the ballots are for: failures, gold queries, ...")
    unit: str
    batch: bool = False
    ballots: list[Any] = Field(default_factory=list, exclude=True, repr=False)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def rows(self) -> list[dict[str, Any]]:
        """Per (model under test,) juror: ballots, estimated tokens, cost_usd, priced (and via batch)."""
        from jury.judging.plan import plan_rows

        return plan_rows(self.ballots, self.batch)

    @property
    def cost_usd(self) -> float:
        """The estimated cost of the priced jurors' ballots."""
        return float(sum(r["cost_usd"] for r in self.rows))

    @property
    def unpriced(self) -> list[str]:
        """Juror models litellm has no price for (their calls count as $0 against a cost cap)."""
        return sorted({r["juror_model"] for r in self.rows if not r["priced"]})

    def _columns(self) -> list[str]:
        return [c for c in _PLAN_HEADS if c in self.rows[0] or c == "cost"] if self.rows else []

    def _display(self) -> list[dict[str, Any]]:
        return [{**r, "cost": f"${r['cost_usd']:.4f}" if r["priced"] else "unknown price"} for r in self.rows]

    def _lines(self) -> list[str]:
        unpriced = self.unpriced
        lines = [
            f"{sum(r['ballots'] for r in self.rows)} ballots for {self.groups} {self.unit}; estimated cost ${self.cost_usd:.4f}"
            + (f" plus unpriced models: {', '.join(unpriced)} (their calls count as $0 against --max-cost)" if unpriced else "")
        ]
        batched = sorted({r["juror"] for r in self.rows if r.get("via") == "batch"})
        if batched:
            guessed = sorted({r["juror"] for r in self.rows if r.get("batch_rate_estimated")})
            lines.append(
                f"batch API (the batch price) for: {', '.join(batched)}"
                + (f"; estimated at 50% of the synchronous price for: {', '.join(guessed)}" if guessed else "")
            )
        return lines

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.results.render import safe, to_csv, to_json, to_markdown, to_rich_table

        columns = self._columns()
        if fmt == "csv":
            keys = [c for c in columns if c != "cost"] + ["cost_usd", "priced"]
            return to_csv(self.rows, keys + (["via"] if any("via" in r for r in self.rows) else []))
        if fmt == "json":
            return to_json(self.model_dump(mode="json"))
        if fmt == "md":
            table = to_markdown(self._display(), columns, [_PLAN_HEADS[c] for c in columns])
            return f"### {safe(self.title)}\n\n{table}\n" + "\n\n".join(safe(line) for line in self._lines()) + "\n"

        def draw(console: Console) -> None:
            console.print(to_rich_table(self._display(), columns, [_PLAN_HEADS[c] for c in columns], title=self.title))
            for line in self._lines():
                say(console, line)

        return console_text(width, draw)


# ------------------------------------------------------------------ the calls


class Calls(BaseModel):
    """What one run of jurors did: ballots asked (one call each), requests sent (retries included),
    votes reused from the store, identical requests shared, ballots an early stop skipped, and
    its cost in USD (without the juror models litellm cannot price)."""

    asked: int
    requests: int
    reused: int
    shared: int
    skipped: int
    cost_usd: float
    unpriced: list[str] = Field(default_factory=list, description="Juror models litellm has no price for.")
    uncounted: list[str] = Field(
        default_factory=list, description="With a cost cap: juror models counted as $0 against it (no price)."
    )

    @property
    def retries(self) -> int:
        """Requests sent beyond the first of each ballot asked (retries and repair turns)."""
        return self.requests - self.asked

    @classmethod
    def of(cls, stats: Any) -> Calls:
        """From a jury.judging.runner.RunStats; the unpriced models are those of the jurors this run
        called (``stats.called``) that litellm has no price for: a reused vote costs this run nothing."""
        from jury.judging.providers.prices import has_price

        capped = stats.guard is not None and stats.guard.cap is not None
        counts = {k: getattr(stats, k) for k in ("asked", "requests", "reused", "shared", "skipped", "cost_usd")}
        return cls(
            **counts,
            unpriced=sorted({m for m in stats.called if not has_price(m)}),
            uncounted=list(stats.unpriced) if capped else [],
        )


def run_lines(calls: Calls | None, path: Path | None, reused_file: bool) -> list[str]:
    """What a run of jurors says about its calls and its verdict file (None: the set was already locked)."""
    if calls is None:
        return [f"up to date: {path} already holds this verdict set (unchanged; nothing called, nothing written)"]
    lines = []
    if calls.uncounted:
        lines.append(
            f"--max-cost could not count {', '.join(calls.uncounted)}: litellm has no price for "
            "them, so their calls counted as $0 against the cap"
        )
    lines.append(
        f"{calls_line(calls)}\nverdict file: {path}"
        + (" (unchanged: an identical verdict set was already locked there; nothing written)" if reused_file else "")
    )
    return lines


def cost_text(calls: Calls) -> str:
    """ "cost this run $X", or "unknown" when this run called a juror litellm has no price for."""
    if calls.unpriced:  # litellm has no price for some jurors: the sum is not the cost
        priced = f"; ${calls.cost_usd:.4f} for the others" if calls.cost_usd else ""
        return f"cost this run unknown (litellm has no price for {', '.join(calls.unpriced)}{priced})"
    return f"cost this run ${calls.cost_usd:.4f}"


def calls_line(calls: Calls) -> str:
    """ "calls this run: N ballots asked, ...": what one run of jurors called and reused."""
    retries = calls.retries
    return (
        f"calls this run: {calls.asked} ballots asked, {calls.requests} requests sent "
        f"({retries} retr{'y' if retries == 1 else 'ies'}); "
        f"votes reused from the store: {calls.reused}; identical "
        f"requests shared within this run: {calls.shared}; skipped by early stop: {calls.skipped}; " + cost_text(calls)
    )


# ------------------------------------------------------------------ before and after the work


def load_signer(key: PathLike | None) -> Signer | None:
    """The signing key, loaded before any work so a bad key fails before a call is paid for."""
    if key is None:
        return None
    from jury.verdicts.signing import load_signer as load

    return load(Path(key))


def missing_schema(cfg: Any, output: Path | None) -> Path | None:
    """The schema/ folder a verdict file written to ``output`` names (beside it), when it is not
    there yet: writing the file writes it, and the job says so."""
    from jury.verdicts.assemble import verdicts_dir

    folder = verdicts_dir(cfg, output) / "schema"
    return None if folder.exists() else folder


def unpriced_lines(path: Path | None) -> list[str]:
    """Lines naming the juror models litellm could not price in a written verdict file."""
    if path is None:
        return []
    from jury.verdicts.lock import locked_head

    head = locked_head(path)  # not the records (issue 46)
    totals = head["totals"]
    unpriced = totals.get("unpriced_models") or []
    if not unpriced:
        return []
    unknown = sorted(m for m, c in (head["summary"].get("cost_by_model") or {}).items() if c is None)
    return [
        f"cost unknown: litellm has no price for {', '.join(unpriced)}; the file's totals.cost_usd "
        f"(${totals['cost_usd']:.4f}) leaves their calls out"
        + (f", and the cost for {', '.join(unknown)} is unknown" if unknown else "")
    ]


def sign_written(path: Path, signer: Signer | None, lines: list[str]) -> Path | None:
    """Sign a locked file with ``signer`` (a detached SSH signature beside it, kept when this key
    signed it already); the line saying so goes to ``lines``. Returns the signature's path."""
    if signer is None:
        return None
    from jury.verdicts.signing import sign_file

    sig_path, written = sign_file(path, signer)
    if written:
        lines.append(f"signed {path}: {sig_path} (key {signer.fingerprint})")
    else:
        lines.append(f"{path} was already signed by this key: {sig_path} kept")
    return sig_path


@contextmanager
def keeping(result: R) -> Iterator[R]:
    """A JuryError raised inside carries ``result`` as it is so far (``exc.partial``): what was
    done before the error (files written, re-runs) is not lost; the command line prints it first."""
    try:
        yield result
    except JuryError as exc:
        if exc.partial is None:
            exc.partial = result
        raise


def renamed(new: Any, old: Any, new_name: str, old_name: str, default: Any = None) -> Any:
    """The value of an argument renamed to match its command-line option (``plan`` for
    ``--plan``, ``model`` for ``--model``), given under its new name or its old one (a
    documented alias kept for the code that uses it); both, with different values, is an error."""
    if old is None:
        return default if new is None else new
    if new is not None and new != default and new != old:
        raise JuryError(f"{new_name}= and {old_name}= are the same argument ({old_name} is its old name): give one")
    return old


class JurorRequest(BaseModel):
    """What every juror job settles before any work. Building one warns (stderr) of the juror
    params litellm does not know, and refuses an existing ``output`` that is not a locked
    verdict file (unless ``plan_only``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    config: Any = Field(description="Where the verdicts folder is: a jury.inputs.config.Config (its verdicts_dir).")
    panel: Any = Field(description="The jury.judging.panels.Panel asked, loaded (the job's own copy).")
    gold_path: Path = Field(description="The gold file.")
    db_root: Path | None = Field(None, description="The folder of <db_id>/<db_id>.sqlite.")
    max_cost: float | None = Field(None, description="USD: stop (CostCapReached) before the run's spend passes it.")
    output: Path | None = Field(None, description="The verdict file to write (None: a new one in the verdicts folder).")
    plan_only: bool = Field(False, description="Make no call: only the plan (--plan).")
    supersedes: str | None = Field(None, description="The content hash of the file a re-run replaces.")
    shard: Any = Field(None, description="A jury.judging.shards.Shard: ask only its ballots, write no verdict file.")
    batch: bool = Field(False, description="Send OpenAI and Anthropic jurors' ballots through their batch APIs.")
    # what only the API's caller needs after the job: the result's write guard and the signature
    store_path: Path | None = Field(None, description="The store's path (what a result may not overwrite).")
    inputs: list[Path] = Field(default_factory=list, description="The files read (what a result may not overwrite).")
    signer: Any = Field(None, description="A jury.verdicts.signing.Signer that signs the locked file.")
    new_schema: Path | None = Field(None, description="The schema/ folder writing the verdict file will create.")

    def _refuse_foreign_output(self) -> None:
        if not self.plan_only:
            from jury.verdicts.assemble import refuse_foreign_output

            refuse_foreign_output(self.output)


def juror_request_fields(
    project: Project,
    *,
    output: PathLike | None,
    inputs: list[Path | None],
    store: PathLike | None,
    db_root: PathLike | None,
    shard: str | Shard | None,
    sign: PathLike | None,
) -> dict[str, Any]:
    """What every juror job's request settles first, before its panel (the fields of
    JurorRequest they name): the output is none of its inputs, the shard
    parsed, the signing key loaded, the schema folder the verdict file will need."""
    from jury.judging.shards import Shard, parse_shard
    from jury.pipeline.outputs import guard_outputs

    out = Path(output) if output is not None else None
    store_path, root = project.store_path(store), project.db_root(db_root)
    given = [p for p in inputs if p is not None]
    guard_outputs([out], given, store=store_path, db_root=root, verdict_output=True)
    this_shard = shard if isinstance(shard, Shard) or shard is None else parse_shard(shard)
    signer = load_signer(sign)
    return {
        "config": project.config,
        "output": out,
        "store_path": store_path,
        "db_root": root,
        "inputs": given,
        "shard": this_shard,
        "signer": signer,
        "new_schema": missing_schema(project.config, out),
    }


def juror_plan(request: JurorRequest, kind: str, ballots: list[Any], groups: int, unit: str) -> JurorPlan:
    """The JurorPlan of a job's ballots (only the shard's, with a shard), titled as ``--plan`` prints it."""
    shard = request.shard
    if shard is not None:
        ballots = shard.ballots(ballots)
    where = f", shard {shard} (only its ballots)" if shard is not None else ""
    title = f"{kind} plan: panel {request.panel.name}{where}" + (", no calls made" if request.plan_only else "")
    return JurorPlan(title=title, groups=groups, unit=unit, batch=request.batch, ballots=ballots)


def guarded(request: JurorRequest) -> dict[str, Any]:
    """The fields that tell a result's ``write`` what it may not overwrite."""
    return {"inputs": request.inputs, "store_path": request.store_path, "db_root": request.db_root}


def finish(request: JurorRequest, result: JurorJob, job: Any) -> JurorJob:
    """A job that ran (or found its verdict set locked): its calls, its file, the lines after
    it, and its signature when asked."""
    from jury.judging.shards import shard_message

    if request.shard is not None and job.stats is not None:  # the shard's votes are stored: no verdict file
        result.shard_note = shard_message(request.shard, job.stats, request.store_path)
        result.calls = Calls.of(job.stats)
        return result
    result.calls = None if job.stats is None else Calls.of(job.stats)
    result.path, result.reused_file = job.path, job.reused_file
    new_schema = request.new_schema
    if new_schema is not None and job.path is not None and new_schema.is_dir():
        result.written.append(f"wrote {new_schema}/ beside {job.path}: the JSON Schemas its $schema names")
    result.written += unpriced_lines(job.path)
    if job.path is not None:
        with keeping(result):
            result.signature = sign_written(job.path, request.signer, result.written)
    return result


# ------------------------------------------------------------------ the result of a job


class JurorJob(Result):
    """Base of Adjudication and Audit: a job that asks a panel and locks its verdicts in a file.

    ``plan_only``: nothing was asked and ``render`` is the plan's; with a shard, ``shard_note``
    says where its votes went (no verdict file); else ``path`` is the verdict file written (or
    found already holding this verdict set: ``calls`` None, or ``reused_file``)."""

    panel: str
    plan: JurorPlan
    plan_only: bool = False
    shard_note: str | None = None
    calls: Calls | None = None
    path: Path | None = None
    reused_file: bool = False
    written: list[str] = Field(
        default_factory=list, description="After the file: the schema folder written, unknown costs, the signature."
    )
    signature: Path | None = None

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.results.render import safe, to_json

        if self.plan_only:
            return self.plan.render(fmt, width=width, wide=wide)
        if fmt == "json":
            return to_json(self.model_dump(mode="json"))
        if fmt == "csv":
            if self.shard_note is not None and self.calls is not None:  # no verdicts: the shard's calls
                from jury.results.render import to_csv

                return to_csv([self.calls.model_dump()], list(Calls.model_fields))
            return self._csv()
        if fmt == "md":
            if self.shard_note is not None:
                return fenced(self.shard_note)
            lines = [*self._summary_lines(), *run_lines(self.calls, self.path, self.reused_file), *self.written]
            paragraphs = [safe(line, newlines=True).replace("\n", "  \n") for line in lines]  # a line break each
            return self._markdown() + "".join(f"\n{p}\n" for p in paragraphs)
        return self._text(width)

    def _text(self, width: int | None) -> str:
        def draw(console: Console) -> None:
            if self.shard_note is not None:
                say(console, self.shard_note)
                return
            self._draw(console)
            for line in [*run_lines(self.calls, self.path, self.reused_file), *self.written]:
                say(console, line)

        return console_text(width, draw)

    def _draw(self, console: Console) -> None:
        """The job's own summary (a table, lines) before its calls and file."""
        for line in self._summary_lines():
            say(console, line)

    def _summary_lines(self) -> list[str]:
        return []

    def _markdown(self) -> str:
        return ""

    def _csv(self) -> str:
        raise NotImplementedError
