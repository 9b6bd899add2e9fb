"""A cold score's fast paths (issue 46): the local executor runs a short run in this process and
starts its pool only for what is left once the run has cost LOCAL_FIRST_CPU_S of CPU or taken
LOCAL_FIRST_S; ResultAccumulator.add hashes and sizes a row without a call per value.

Each path must give exactly what the others give and what hashlib, json and sqlite3 give
directly: the digests are store keys, and a store written before must still be trusted."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import time

import pytest

from jury.execution import backends
from jury.execution import rows as row_hashing
from jury.execution.store import Store, decode_rows
from tests.test_perf_execution import _random_value, make_jobs, reference_digest


def reference_set(rows) -> str:
    """The set digest as defined: the sum of the distinct rows' sha256 values, mod 2**256."""
    total = sum({int.from_bytes(reference_digest(r), "big") for r in rows}) % (1 << 256)
    return f"{total:064x}"


def reference_ordered(rows) -> str:
    return hashlib.sha256(b"".join(reference_digest(r) for r in rows)).hexdigest()


def reference_bytes(rows) -> int:
    """What the kept rows cost as the cap counts it: text and blobs by length, anything else 8."""
    return sum(len(v) if isinstance(v, (str, bytes)) else 8 for r in rows for v in r)


# --------------------------------------------------------------------------- executor


def run_local(jobs, here_s: float, *, here_cpu_s: float = 3600.0, sleep_first: float = 0.0, spin_first: float = 0.0):
    """(the chunks saved in order, key -> encoded result) of a LocalExecutor of 2 workers whose
    first save sleeps (wall-clock time only) or spins (CPU) as long as asked."""
    chunks: list[list[str]] = []
    results = {}

    def save(encoded):
        if not chunks:
            time.sleep(sleep_first)
            end = time.process_time() + spin_first
            while time.process_time() < end:
                pass
        chunks.append([k for k, _ in encoded])
        results.update(encoded)

    backends.LocalExecutor(2, here_cpu_s=here_cpu_s, here_s=here_s).run(jobs, save)
    return chunks, results


@pytest.fixture
def numbers_jobs(tmp_path):
    with Store(tmp_path / "store.db") as store:
        jobs, databases = make_jobs(tmp_path, store, 40)
    path, sha = databases["numbers"]
    listed = [(k, str(path), sha, sql, 30.0, 100_000) for k, (_db, sql) in jobs.items()]
    return listed, path


def test_a_short_run_runs_here_a_long_one_in_the_pool_and_each_gives_what_sqlite3_gives(numbers_jobs):
    jobs, db = numbers_jobs
    here_chunks, here = run_local(jobs, 3600.0)
    pool_chunks, pool = run_local(jobs, 0.0)
    split_chunks, split = run_local(jobs, 0.05, sleep_first=0.2)  # past the wall-clock budget, not the CPU one
    cpu_chunks, cpu = run_local(jobs, 3600.0, here_cpu_s=0.05, spin_first=0.2)  # past the CPU budget
    size = backends.chunk_size(len(jobs), 2)
    assert here_chunks == [[job[0]] for job in jobs]  # one at a time, here
    assert sorted(map(len, pool_chunks)) == sorted(min(size, len(jobs) - i) for i in range(0, len(jobs), size))
    rest = backends.chunk_size(len(jobs) - 1, 2)
    for chunks in (split_chunks, cpu_chunks):
        assert chunks[0] == [jobs[0][0]] and len(chunks) == 1 + -(-(len(jobs) - 1) // rest)  # then the pool's
    conn = sqlite3.connect(db)
    for key, _db, _sha, sql, _t, _cap in jobs:
        rows = conn.execute(sql).fetchall()
        expected = (
            "ok",
            json.dumps(["x", sql.split(",")[1].split(" FROM")[0].strip()]),
            json.dumps(rows, separators=(",", ":")),
            len(rows),
            0,
            reference_set(rows),
            reference_ordered(rows),
            None,
        )
        for got in (here[key], pool[key], split[key], cpu[key]):
            assert got[:8] == expected and got[9] is None  # all but the time
            assert decode_rows(got[2]) == rows
    conn.close()


def test_one_worker_never_starts_a_pool(numbers_jobs, monkeypatch):
    jobs, _db = numbers_jobs
    monkeypatch.setattr(backends, "_run_pool", lambda *a: pytest.fail("a pool for one worker"))
    monkeypatch.setattr(backends, "LOCAL_FIRST_S", 0.0)
    monkeypatch.setattr(backends, "LOCAL_FIRST_CPU_S", 0.0)
    saved = []
    backends.LocalExecutor(1).run(jobs, saved.extend)
    assert [k for k, _ in saved] == [job[0] for job in jobs]


@pytest.mark.parametrize("budget", ["LOCAL_FIRST_S", "LOCAL_FIRST_CPU_S"])
def test_the_budgets_are_read_at_run_time_and_either_starts_the_pool(numbers_jobs, monkeypatch, budget):
    jobs, _db = numbers_jobs
    pooled = []
    monkeypatch.setattr(backends, "_run_pool", lambda rest, workers, save: pooled.append((len(rest), workers)))
    monkeypatch.setattr(backends, budget, 0.0)
    backends.LocalExecutor(3).run(jobs, lambda encoded: None)
    assert pooled == [(len(jobs), 3)]


# --------------------------------------------------------------------------- accumulator


def random_rows(seed: int, n: int):
    rng = random.Random(seed)
    return [tuple(_random_value(rng) for _ in range(rng.randrange(5))) for _ in range(n)] + [(1,), (1.0,), (1,)]


@pytest.mark.parametrize("cap", [0, 7, 100_000])
def test_accumulated_digests_and_kept_rows_are_what_hashlib_gives(cap):
    rows = random_rows(46, 2000)
    acc = row_hashing.ResultAccumulator(cap)
    for row in rows:
        acc.add(row)
    res = acc.result(["c"], 0.0)
    assert res.result_sha256 == reference_set(rows)
    assert res.ordered_sha256 == reference_ordered(rows)
    assert res.rows == rows[:cap] and res.row_count == len(rows) and res.truncated == (len(rows) > cap)
    assert res.raw_sha256 is None


def test_the_kept_bytes_cap_stops_at_the_row_that_passes_it(monkeypatch):
    rows = random_rows(7, 500)
    limit = reference_bytes(rows[:300]) - 1  # row 300 is the first whose kept values pass it
    assert reference_bytes(rows[:299]) <= limit
    monkeypatch.setattr(row_hashing, "MAX_RESULT_BYTES", limit)
    acc = row_hashing.ResultAccumulator(100_000)
    with pytest.raises(row_hashing.ResultTooLarge, match="its first 300 rows hold more than"):
        for row in rows:
            acc.add(row)
    assert acc.count == 300 and acc.kept == []


def test_raw_digests_start_at_the_first_row_that_differs():
    rows = random_rows(3, 300)
    raw = {5: b"\x01" * 32, 9: b"\x02" * 32}  # rows whose driver values hash otherwise
    acc = row_hashing.ResultAccumulator(100_000, raw=True)
    for i, row in enumerate(rows):
        acc.add(row, raw.get(i))
    res = acc.result(["c"], 0.0)
    digests = {int.from_bytes(raw.get(i) or reference_digest(r), "big") for i, r in enumerate(rows)}
    assert res.raw_sha256 == f"{sum(digests) % (1 << 256):064x}"
    assert res.result_sha256 == reference_set(rows)
    plain = row_hashing.ResultAccumulator(100_000, raw=True)
    for row in rows:
        plain.add(row)
    assert plain.result([], 0.0).raw_sha256 == reference_set(rows)  # no row differs: the normalised digest
    bad = row_hashing.ResultAccumulator(100_000, raw=True)
    for i, row in enumerate(rows):
        bad.add(row, row_hashing.UNHASHABLE_ROW if i == 200 else None)
    assert bad.result([], 0.0).raw_sha256 == row_hashing.UNHASHABLE


# --------------------------------------------------------------------------- the command line


def test_main_freezes_the_heap_only_for_the_process_own_command_line(monkeypatch, capsys):
    """`jury ...` (argv None) freezes what imports made, since the process ends with the call; a
    caller passing argv in its own process (a test) keeps every object collectable."""
    import gc

    from jury.cli import main

    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    with pytest.raises(SystemExit):
        main(["--version"])
    assert frozen == []
    monkeypatch.setattr("sys.argv", ["jury", "score", "--help"])
    with pytest.raises(SystemExit):
        main()
    assert frozen == [True]
