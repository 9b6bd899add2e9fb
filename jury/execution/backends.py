"""Where executions run: a process pool on this machine (``local``) or Ray tasks (``ray``).

Both run the same code on every job (``execute_chunk``: jury.execution.sqlite.execute on a
kept read-only connection, with its timeout, row and byte caps and its three write locks,
and the result encoded for the store), so an outcome cannot depend on the executor. The
caller alone writes the store: an executor hands each finished chunk to ``save`` once.

Ray tasks are chunks of jobs (key, database path, database sha256, SQL, timeout, row cap).
A task first checks that each database file it is given (a path every node can read: put
``--db-root`` on shared storage) has the sha256 the driver hashed, then executes; a
changed or unreadable database is an error naming it, never a result. A task whose worker
dies is retried by Ray (``max_retries``); the driver keeps a key's first result only, so
nothing is written twice. Ray is imported here only, and only when the ray executor runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Protocol

from jury.errors import InputError, JuryError, need_extra, one_line
from jury.execution import engine_urls, engines
from jury.execution import sqlite as sql_execute
from jury.execution.batches import EncodedResult, encode_result
from jury.inputs.records import ExecResult
from jury.vocab import ExecutorName

#: (key, database path, database sha256, sql, timeout_s, row_cap)
Job = tuple[str, str, str, str, float, int]
#: (key, the result's stored form) for each job of a chunk, in order
Encoded = list[tuple[str, EncodedResult]]
Save = Callable[[Encoded], None]
#: A Ray task's reply (execute_verified_chunk): ("ok", encoded results), or (problem, path, expected sha256, detail, host)
ChunkReply = tuple[Literal["ok"], Encoded] | tuple[Literal["unreadable", "changed"], str, str, str, str]

#: A worker gets at most this many jobs at once ...
CHUNK_MAX = 64
#: ... and, for a short run, about this many chunks (so the workers stay balanced).
CHUNKS_PER_WORKER = 4
#: A local run executes in this process until its executions have cost it this much CPU ...
LOCAL_FIRST_CPU_S = 1.0
#: ... or taken this long (queries an engine's server runs cost this process little CPU), then
#: starts a process pool for the rest.
LOCAL_FIRST_S = 3.0
#: A Ray task whose worker process dies is run again up to this many times.
RAY_MAX_RETRIES = 3


class Executor(Protocol):
    def run(self, jobs: Sequence[Job], save: Save) -> None:
        """Execute every job; hand each finished chunk's results to ``save`` exactly once."""


def chunk_size(total: int, workers: int) -> int:
    return max(1, min(CHUNK_MAX, -(-total // (workers * CHUNKS_PER_WORKER))))


def execute_chunk(chunk: Sequence[Job]) -> Encoded:
    """Worker entry point (both executors): run each job on this process's kept read-only
    connections; (key, the result's stored form) for each, in order."""
    return [(key, encode_result(execute_one(db, sql, timeout_s, row_cap))) for key, db, _sha, sql, timeout_s, row_cap in chunk]


def execute_one(db: str, sql: str, timeout_s: float, row_cap: int) -> ExecResult:
    """One job on this process's kept connection: a SQLite file, or an engine URL
    (jury.execution.engines: PostgreSQL, MySQL/MariaDB, DuckDB)."""
    if engine_urls.is_url(db):
        return engines.execute(db, sql, timeout_s=timeout_s, row_cap=row_cap, cached=True)
    return sql_execute.execute(db, sql, timeout_s=timeout_s, row_cap=row_cap, cached=True)


@dataclass
class LocalExecutor:
    """Today's executor: the jobs run in this process first, and a ProcessPoolExecutor of
    ``workers`` processes starts for the rest only once they have cost this process
    ``here_cpu_s`` of CPU or taken ``here_s`` of wall-clock time (None: LOCAL_FIRST_CPU_S,
    LOCAL_FIRST_S; issue 46). A short run (the bundled example's 1,105 executions cost about
    half a second) never pays for the pool's start and its processes, however loaded the
    machine; a long one starts its pool that much later, and after the one query running then
    (a query is not moved once it runs; its timeout bounds it). One worker runs everything here."""

    workers: int
    here_cpu_s: float | None = None
    here_s: float | None = None

    def run(self, jobs: Sequence[Job], save: Save) -> None:
        cpu_until = time.process_time() + (LOCAL_FIRST_CPU_S if self.here_cpu_s is None else self.here_cpu_s)
        until = time.monotonic() + (LOCAL_FIRST_S if self.here_s is None else self.here_s)
        done = 0
        try:
            while done < len(jobs) and (self.workers == 1 or (time.process_time() < cpu_until and time.monotonic() < until)):
                save(execute_chunk([jobs[done]]))
                done += 1
        finally:  # before a fork too: a worker must not inherit this process's open connections
            sql_execute.close_connections()
            engines.close_connections()
        if done < len(jobs):
            _run_pool(jobs[done:], min(self.workers, len(jobs) - done), save)


def _run_pool(jobs: Sequence[Job], workers: int, save: Save) -> None:
    """The jobs in chunks on a new pool of ``workers`` processes, each chunk saved as it ends."""
    from concurrent.futures import ProcessPoolExecutor, as_completed  # imported only by a run that starts a pool

    size = chunk_size(len(jobs), workers)
    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        futures = [pool.submit(execute_chunk, jobs[i : i + size]) for i in range(0, len(jobs), size)]
        for fut in as_completed(futures):
            save(fut.result())
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


_hashed: dict[tuple[str, int, int, int], str] = {}  # (path, size, mtime_ns, inode) -> sha256, per worker process


def database_sha256(path: str) -> str:
    """The file's sha256, hashed once per worker process while its size and mtime stay."""
    from jury.inputs.io import sha256_file

    if engine_urls.is_url(path):  # a server's database: its fingerprint (schema and row counts)
        return engines.fingerprint(path)
    st = os.stat(path)
    ident = (path, st.st_size, st.st_mtime_ns, st.st_ino)
    if ident not in _hashed:
        _hashed[ident] = sha256_file(path)
    return _hashed[ident]


def execute_verified_chunk(chunk: Sequence[Job]) -> ChunkReply:
    """Ray task body: ("ok", encoded results) once every database of the chunk has the sha256
    the driver sent, else (problem, path, expected sha256, detail, host) executing nothing."""
    for path, sha in dict.fromkeys((job[1], job[2]) for job in chunk):
        try:
            got = database_sha256(path)
        except (OSError, JuryError) as exc:
            return ("unreadable", path, sha, getattr(exc, "strerror", None) or str(exc), socket.gethostname())
        if got != sha:
            return ("changed", path, sha, got, socket.gethostname())
    return ("ok", execute_chunk(chunk))


def import_ray() -> ModuleType:
    """Ray, or MissingExtra: "executor 'ray' needs ray: pip install 'jury-sql[ray]'"."""
    return need_extra("ray", "ray", "executor 'ray'")


@dataclass
class RayExecutor:
    """Chunks of jobs as Ray tasks on a cluster (``address``, else RAY_ADDRESS) or, without
    one, on a local Ray runtime of ``workers`` CPUs started for this run."""

    workers: int
    address: str | None = None
    max_retries: int = RAY_MAX_RETRIES
    task: Callable[[Sequence[Job]], ChunkReply] = execute_verified_chunk

    def run(self, jobs: Sequence[Job], save: Save) -> None:
        if not jobs:
            return
        ray = import_ray()
        started, temp_dir = self._connect(ray)
        try:
            self._run(ray, jobs, save)
        except ray.exceptions.RayError as exc:
            raise JuryError(
                f"a Ray task failed (after up to {self.max_retries} retries): {one_line(exc, first_line=True)}"
            ) from None
        finally:
            if started:
                ray.shutdown()
            if temp_dir is not None:
                shutil.rmtree(temp_dir, ignore_errors=True)

    def _connect(self, ray: ModuleType) -> tuple[bool, str | None]:
        """(whether this run started Ray, the temp dir of a local runtime it started)."""
        if ray.is_initialized():  # a caller's runtime (a library user, a test): used, left running
            return False, None
        address = self.address or os.environ.get("RAY_ADDRESS") or None
        quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
        if address is not None:
            _reachable(address)
            _authenticated(ray, address)
            try:
                ray.init(address=address, **quiet)
            except Exception as exc:  # ConnectionError, ValueError, RuntimeError: all one line
                raise JuryError(f"cannot connect to the Ray cluster at {address!r}: {one_line(exc, first_line=True)}") from None
            return True, None
        # A short folder: Ray puts unix sockets under it, and their paths are limited to ~100 bytes.
        temp_dir = tempfile.mkdtemp(prefix="jray-", dir="/tmp" if os.path.isdir("/tmp") else None)
        try:
            ray.init(num_cpus=self.workers, include_dashboard=False, _temp_dir=temp_dir, **quiet)
        except Exception as exc:
            shutil.rmtree(temp_dir, ignore_errors=True)
            raise JuryError(f"cannot start a local Ray runtime: {one_line(exc, first_line=True)}") from None
        return True, temp_dir

    def _run(self, ray: ModuleType, jobs: Sequence[Job], save: Save) -> None:
        cpus = max(1, int(ray.cluster_resources().get("CPU", self.workers)))
        size = chunk_size(len(jobs), cpus)
        shared = {path: path if engine_urls.is_url(path) else str(Path(path).resolve()) for path in {job[1] for job in jobs}}
        chunks = [[(k, shared[p], *rest) for k, p, *rest in jobs[i : i + size]] for i in range(0, len(jobs), size)]
        remote = ray.remote(max_retries=self.max_retries, num_cpus=1)(self.task)
        limit = cpus * CHUNKS_PER_WORKER  # tasks in flight: results come back as they finish
        pending: list[object] = []  # Ray's object refs of the tasks in flight
        written: set[str] = set()
        submitted = 0
        try:
            while submitted < len(chunks) or pending:
                while submitted < len(chunks) and len(pending) < limit:
                    pending.append(remote.remote(chunks[submitted]))
                    submitted += 1
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    fresh = [(k, enc) for k, enc in _results(ray.get(ref)) if k not in written]
                    written.update(k for k, _ in fresh)
                    save(fresh)
        except BaseException:
            for ref in pending:
                with contextlib.suppress(Exception):  # a task that just finished cannot be cancelled
                    ray.cancel(ref)
            raise


def _reachable(address: str, timeout_s: float = 5.0) -> None:
    """A host:port address must accept a connection within timeout_s (Ray itself retries an
    unreachable one for minutes); "auto" and ray:// addresses are left to Ray."""
    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise JuryError(f"cannot connect to the Ray cluster at {address!r}: {exc.strerror or exc}") from None


RAY_AUTH_HINT = (
    "with Ray's token authentication this machine needs the cluster's token: RAY_AUTH_MODE=token and the "
    "token in RAY_AUTH_TOKEN, a file named by RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token (docs/execution.md, Executions on Ray)"
)


def _authenticated(ray: ModuleType, address: str) -> None:
    """A cluster that refuses this client's credentials (Ray's token authentication) says so
    with Ray's own cause, at once: ray.init would retry for a minute and then report only that
    it "failed to connect". One GCS connection is made, with the token Ray would send; any other
    failure is left to ray.init. "auto" and ray:// addresses are left to Ray."""
    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return
    refused = getattr(getattr(ray, "exceptions", None), "AuthenticationError", None)
    try:  # Ray's own steps of ray.init: the token check (Ray's C++ client aborts without a token), one connection
        from ray._private.authentication.authentication_token_setup import ensure_token_if_auth_enabled
        from ray._raylet import GcsClient  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover  (a Ray without them has no token authentication either)
        return
    if refused is None:  # pragma: no cover
        return
    try:
        ensure_token_if_auth_enabled(None, create_token_if_missing=False)
        with _quiet_stderr():  # Ray's C++ client logs the refusal on fd 2 too: one line is said, below
            GcsClient(address)
    except refused as exc:
        cause = getattr(exc, "message", None) or one_line(exc, first_line=True)
        raise JuryError(
            f"cannot connect to the Ray cluster at {address!r}: authentication failed ({_one_line_cause(cause)}); "
            + RAY_AUTH_HINT
        ) from None
    except Exception:  # unreachable, a version mismatch, ...: ray.init reports it
        return


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 sent to /dev/null for the duration (C++ logging bypasses sys.stderr)."""
    try:
        saved = os.dup(2)
    except OSError:  # pragma: no cover  (no fd 2: nothing to quiet)
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _one_line_cause(message: str) -> str:
    """The first sentence of Ray's message: "RPC error: InvalidAuthToken: Authentication token is
    missing or incorrect" (the rest is Ray's advice, given in our own words)."""
    first = " ".join(message.split())
    return first.split(". ", 1)[0].rstrip(".")


def _results(reply: ChunkReply) -> Encoded:
    if reply[0] == "ok":
        return reply[1]
    problem, path, expected, detail, host = reply
    if problem == "changed":
        raise InputError(
            f"{path}: the database a Ray worker on {host} reads has sha256 {detail[:12]}…, not {expected[:12]}… "
            "as on this machine; every node must read the same file (put --db-root on shared storage)"
        )
    raise InputError(
        f"{path}: a Ray worker on {host} cannot read this database ({detail}); every node must read the database root (db_root) at the same path"
    )


def make_executor(name: str, workers: int, address: str | None = None) -> Executor:
    if name == ExecutorName.LOCAL:
        return LocalExecutor(workers)
    if name == ExecutorName.RAY:
        return RayExecutor(workers, address)
    raise InputError(f"unknown executor {name!r}; choose one of: {', '.join(ExecutorName)}")
