"""``merge_stores``: the stores of several machines (or ``--shard`` runs) merged into one.

A store from another machine is untrusted input: every row is checked (types, the live run's
size caps, every vote against its own call log's stored reply) before anything is merged, and
with ``trusted_key`` every input must carry ``<store>.sig`` by one of those keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from jury.errors import InputError
from jury.jobs.result import Result, console_text
from jury.options import job_options
from jury.options.store import StoreMergeOptions
from jury.pipeline.project import PathLike, as_paths

if TYPE_CHECKING:
    from rich.console import Console

TITLE = "store merge"
COLUMNS = ["table", "added", "present"]
HEADERS = ["table", "rows added", "already there"]


class StoreMerge(Result):
    """What a merge did: rows added and already there per table, what was not merged, the
    inputs' sha256 (and signers) recorded in the merged store."""

    output: Path
    created: bool
    stores: int  # how many stores were merged
    trust_executions: bool
    added: dict[str, int]
    present: dict[str, int]
    dropped: dict[str, int]  # not merged: machine-local (claims, the path cache)
    untrusted: dict[str, int]  # not merged: computed again from the databases here
    votes_checked: int
    sources: list[dict[str, Any]] = Field(default_factory=list)  # path, sha256, signed_by per input

    @property
    def rows(self) -> list[dict[str, Any]]:
        """One row per table merged: rows added and rows already present."""
        return [
            {"table": t, "added": self.added.get(t, 0), "present": self.present.get(t, 0)}
            for t in sorted(set(self.added) | set(self.present))
        ]

    @property
    def lines(self) -> list[str]:
        """The lines under the table: what was merged where, and what was not."""
        dropped = ", ".join(f"{t} {n}" for t, n in sorted(self.dropped.items()) if n)
        lines = [
            f"{'created' if self.created else 'merged into'} {self.output} from {self.stores} stores"
            + (f"; not merged (machine-local): {dropped}" if dropped else ""),
            f"votes checked against their call logs: {self.votes_checked}",
        ]
        untrusted = ", ".join(f"{t} {n}" for t, n in sorted(self.untrusted.items()) if n)
        if self.trust_executions:
            lines.append("executions trusted (--trust-executions): recorded in the merged store and its verdict files")
        elif untrusted:
            lines.append(
                f"not merged (untrusted, computed again from the databases here): {untrusted}; "
                "where a database is not here they cannot be computed (--trust-executions keeps them)"
            )
        lines += [
            f"{Path(r['path']).name}: sha256 {r['sha256']}" + (f", {r['signed_by']}" if r["signed_by"] else "")
            for r in self.sources
        ]
        return lines

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.results.render import safe, to_csv, to_json, to_markdown

        if fmt == "csv":
            return to_csv(self.rows, COLUMNS)
        if fmt == "json":
            return to_json(self.model_dump(mode="json"))
        if fmt == "md":
            return to_markdown(self.rows, COLUMNS, HEADERS) + "\n" + "".join(f"{safe(line)}  \n" for line in self.lines)
        return console_text(width, table_and_lines((self.rows, COLUMNS, HEADERS, TITLE), self.lines))


def table_and_lines(
    table: tuple[list[dict[str, Any]], list[str], list[str], str] | None, lines: list[str]
) -> Callable[[Console], None]:
    """Draws (for console_text) a table (rows, columns, headers, title), then plain lines made safe."""
    from jury.results.render import safe, to_rich_table

    def draw(console: Console) -> None:
        if table is not None:
            rows, columns, headers, title = table
            console.print(to_rich_table(rows, columns, headers, title=title))
        for line in lines:
            console.print(safe(line, newlines=True), markup=False, highlight=False)

    return draw


def merge_stores(
    stores: PathLike | Sequence[PathLike],
    output: PathLike,
    options: StoreMergeOptions | None = None,
    **overrides: Any,
) -> StoreMerge:
    """Merge ``stores`` (opened read-only, never changed) into ``output`` (created, or an existing
    jury store merged into; never one of the inputs): executions, votes, the call log, gold
    orders, checked databases, timings and review decisions, each by its key.

    Executions and the other results computed from databases are merged only with
    ``trust_executions`` (recorded in the merged store and every verdict file written from it).
    With ``trusted_key`` (OpenSSH public key files) every input must carry ``<store>.sig`` by
    one of those keys; the signer is recorded with the input's sha256. The same key in two
    stores must hold the same result, else nothing is merged and the error names both files.

    ``options``: a ``StoreMergeOptions`` (jury.options.store: every option of ``jury store merge``
    but the stores, each documented there), or none; ``overrides``: its fields as keyword arguments
    (``trust_executions=``, ``trusted_key=``), over ``options``'. A bad one is an InputError (an
    unknown name a TypeError).
    """
    from jury.execution.merge import merge_stores as merge
    from jury.judging.vote_check import VoteCheck
    from jury.pipeline.outputs import guard_outputs

    o = job_options(StoreMergeOptions, "merge_stores", options, overrides)
    trust_executions = o.trust_executions
    inputs, out = as_paths(stores), Path(output)
    guard_outputs([out], [Path(f"{s}{sfx}") for s in inputs for sfx in ("", "-wal", "-shm", "-journal")])
    signers: dict[Path, str] = {}
    keys = o.trusted_key
    if keys:
        from jury.verdicts.signing import check_file_signature, load_trusted_keys

        trusted = load_trusted_keys(keys)
        for store in inputs:
            if not store.is_file():
                continue  # the merge says so
            ok, said = check_file_signature(store, trusted)
            if not ok:
                raise InputError(f"{store}: {said}; nothing merged")
            signers[store] = said.removeprefix("signed by trusted key ").split(" ", 1)[0]  # the key's fingerprint
    report = merge(inputs, out, votes=VoteCheck(), trust_executions=trust_executions, signers=signers)
    return StoreMerge(
        output=out,
        created=report.created,
        stores=len(inputs),
        trust_executions=trust_executions,
        added=dict(report.added),
        present=dict(report.present),
        dropped=dict(report.dropped),
        untrusted=dict(report.untrusted),
        votes_checked=report.votes_checked,
        sources=list(report.sources),
        inputs=inputs,
        store_path=out,
    )
