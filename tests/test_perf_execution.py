"""The fast execution path (issue 12): batched store writes, kept read-only connections,
chunked workers, row digests without per-row json.dumps, a linear-sort `subset`.

Everything here must be exactly what the slow path gave: the digests are cache and verdict
keys, so they are pinned byte for byte."""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import asdict
from pathlib import Path

import pytest

from jury.compare import comparators
from jury.compare.outcomes import Settings, evaluate, run_executions
from jury.execution import backends, batches
from jury.execution import rows as row_hashing
from jury.execution import sqlite as sx
from jury.execution import store as store_mod
from jury.execution.store import Store, decode_rows, encode_rows, execution_key
from jury.inputs.io import load_gold, load_runs
from tests.support.helpers import EXAMPLE

SUPERHERO = EXAMPLE / "databases" / "superhero" / "superhero.sqlite"
REPO = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------- digests

# Row -> sha256 of its token JSON, computed with the json.dumps implementation these replaced.
PINNED = [
    ((), "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"),
    ((None,), "20fd6b1c943b4feb3a77875e18a95d5b0f6a6c8c95a54bd09cddcb88c71bd82c"),
    ((0,), "b8517e4beea4ee068482a81ab29a34b6dce9c761bc24b5ddfeb52aac5ecf7947"),
    ((1,), "feb9d41e18a1e1555fa8e6beb541fa2da3934f49ae3fae1d40a511bcb362238a"),
    ((-1,), "fde0351480b0592b47429ff0ba7da513f9fd5db00ed6002701ee6b1f6feb986c"),
    ((True,), "feb9d41e18a1e1555fa8e6beb541fa2da3934f49ae3fae1d40a511bcb362238a"),
    ((False,), "b8517e4beea4ee068482a81ab29a34b6dce9c761bc24b5ddfeb52aac5ecf7947"),
    ((1.0,), "feb9d41e18a1e1555fa8e6beb541fa2da3934f49ae3fae1d40a511bcb362238a"),
    ((-0.0,), "b8517e4beea4ee068482a81ab29a34b6dce9c761bc24b5ddfeb52aac5ecf7947"),
    ((0.0,), "b8517e4beea4ee068482a81ab29a34b6dce9c761bc24b5ddfeb52aac5ecf7947"),
    ((1.5,), "34849be812607d313f4bb7e6d52467cd18e0894f571b5ee64166607e04031894"),
    ((-2.25,), "fffb4a2fca8a7be8156b0ab379cc15f475ad6691ab4369186017898760ca68f4"),
    ((0.1,), "3342abd7abe627996e8a09c5fbff1386e5425f8536bdc2d3314da47d11b83243"),
    ((1e16,), "77eb174db461d14d28f5e47d6bb4d53f1d0a4b639ea3679ef254ec74c7cfb3dd"),
    ((1e300,), "4b9f4652fa2a1cc0b42af8313dc4d7554f744ae1feff895935c53eaf36ffe647"),
    ((1e-300,), "a249a630115315de7e50aa5a990fb486d7a402b30e5c861e2c161461e2b61bde"),
    ((5e-324,), "9add444b4e6e508099b2e003537a99acec3358845b2c058bbc25a88cd8859d44"),
    ((float("inf"),), "5882e6251283c57c4bdc56a71f7d513d17fc9ea4a02fb1076b7d0ed7fe5001f3"),
    ((float("-inf"),), "cd2f67dd8f6fd478927e21cd5f3e3d8cd6d2f17411d94bd891e69bb6092530f4"),
    ((float("nan"),), "b20d85866dfa0bad21a02aea46feaf3afb8196b1a809f00e0c68dc270abd5213"),
    ((2**63 - 1,), "1063aa5570bf851d98b247aaa4eb25cd88ad243b8c5430aa5dae38b1bb420961"),
    ((-(2**63),), "e91639148c0a6d566653b45cee52454355f97508c3d243f1f5a2a85101af3095"),
    ((2**64 + 3,), "070e5cc88e354c52f1a8aa7134463579425a068322ded344e86aa84199e050ce"),
    ((10**40,), "c5f8d2f71fabf79b9811ed687c2b537b1217a7503778c589020900d4626bbba2"),
    (("",), "46c42354b5a22811e2b30641b290dc72beff59d1df2f53b3a2f10965163ed936"),
    (("a",), "21ff8814c4195162e751e3e2ad7b028ff11dec51c6119d15ec9a35be0b06fe7d"),
    (("1",), "90a03d93e180645649293277f462f4b7c7bfebf7f2230773e5568e9ed0a340e9"),
    (("héllo wörld",), "0aa752422c3abc9041d5068dd8257fb4e6ec76148e9d817fb39f2b2b3212fa00"),
    (("日本語",), "477c06853b4294cbbf3403f9db3a464d89d43a262b9f5d0a0b88421f215f0ddc"),
    (("emoji 🎉",), "ba2e2ceecb621910d0aaa2b7154b9aaa40e7fac2e05dfe4047e33f437727bfab"),
    (('quote " back \\ slash / tab\t nl\n',), "355cbe0955b70b09d8ddea26e781344afb95fee3f8c9000472d71f5b3e8fed2c"),
    (("\x00\x1f\x7f",), "d29ef780f5aebd3aac34492b8e68b2f38a34ed3a651ccf98b36477d7e9bb29bf"),
    ((b"",), "fc0c8bd850594a3da638d54bfd76c026492cf50ab974e7badb8522bb14db0555"),
    ((b"\x00\xffab",), "766e2dafeab901dad023660ec44a69668fd66b8161f06eed5b3bfbb0fc587784"),
    ((1, "a", None, 2.5, b"z"), "554b108fb6de663d2ebb03a63b69b6034e903b58250ebb875fdcc62b230543c6"),
    (("x", 3, 3.0), "05369671424d3aff4090b798fcd7a0d88cdf239891268f38e28682bb9177540e"),
    (([1, "a"],), "d5119893d958088f1fefcabfaaba2cfe1af5ae1f5d7c63e2017b43808f87ad3a"),  # recorded results
    (({"k": 1},), "57365fd0d7cef2b63c2790ee253f5c675c54e3f2055c3ceb715fc22fd0cd1398"),
]
PINNED_SET = "32e6fe26b8fb6cb9560e2baa1c9ee0c8139555c0a6225320d32f8a10620f65ac"
PINNED_ORDERED = "b4d885e835122ad9a9b6e8e93b4fcb36d9bf698d8068de957a1d111165321757"


def reference_digest(row) -> bytes:
    """The encoding the digests were defined with: json.dumps of the value tokens."""
    blob = json.dumps([row_hashing._value_token(v) for v in row], separators=(",", ":")).encode()
    return hashlib.sha256(blob).digest()


@pytest.mark.parametrize(("row", "expected"), PINNED, ids=[repr(r)[:40] for r, _ in PINNED])
def test_row_digest_is_pinned(row, expected):
    assert row_hashing.row_digest_bytes(row).hex() == expected
    assert reference_digest(row).hex() == expected


def test_set_and_ordered_digests_are_pinned():
    rows = [r for r, _ in PINNED]
    assert row_hashing.result_hash(rows) == PINNED_SET
    assert row_hashing.ordered_hash(rows) == PINNED_ORDERED


def _random_value(rng: random.Random):
    kind = rng.randrange(9)
    if kind == 0:
        return None
    if kind == 1:
        return rng.randint(-(2**70), 2**70)
    if kind == 2:
        return rng.choice([0.0, -0.0, 1.0, 3.0, 1e16, 2.0**53, 2.0**53 + 2, math.inf, -math.inf, math.nan])
    if kind == 3:
        return rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-300, 300)
    if kind == 4:
        return struct_float(rng)
    if kind == 5:
        return "".join(
            chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 32), rng.randrange(0x80, 0x3000), 0x1F600]))
            for _ in range(rng.randrange(8))
        )
    if kind == 6:
        return rng.randbytes(rng.randrange(6))
    if kind == 7:
        return rng.choice([True, False])
    return rng.randint(-5, 5)


def struct_float(rng: random.Random) -> float:
    """Any finite double from its bits (subnormals, huge and tiny magnitudes)."""
    import struct

    while True:
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(x):
            return x


def test_row_digest_equals_the_json_encoding_on_random_rows():
    rng = random.Random(12)
    rows = [tuple(_random_value(rng) for _ in range(rng.randrange(6))) for _ in range(5000)]
    for row in rows:
        assert row_hashing.row_digest_bytes(row) == reference_digest(row), row


def test_store_row_encoding_is_unchanged():
    """encode_rows/decode_rows' fast paths give the text and rows the wrapped form gives."""

    def old_encode(rows):
        return json.dumps([[store_mod._encode_value(v) for v in r] for r in rows], separators=(",", ":"))

    rng = random.Random(7)
    for with_bytes in (False, True):
        rows = [
            tuple(v for v in (_random_value(rng) for _ in range(4)) if with_bytes or not isinstance(v, bytes)) for _ in range(300)
        ]
        text = encode_rows(rows)
        assert text == old_encode(rows)
        back = decode_rows(text)
        assert back == [tuple(store_mod._decode_value(v) for v in r) for r in json.loads(text)]
        assert [row_hashing.row_digest_bytes(r) for r in back] == [row_hashing.row_digest_bytes(r) for r in rows]
    assert decode_rows(encode_rows([("{not a blob}", b"{")])) == [("{not a blob}", b"{")]


# --------------------------------------------------------------------------- subset


def old_subset(gold, pred, *, order_matters=False, tolerance=0.01):
    """`subset` as it was: every (gold column, predicted column) pair sorted afresh."""
    if not gold or not pred:
        return not gold and not pred
    gcols = [list(c) for c in zip(*gold)]
    pcols = [list(c) for c in zip(*pred)]
    return all(any(comparators._vectors_match(g, p, tolerance, order_matters) for p in pcols) for g in gcols)


def test_subset_gives_what_it_gave_before():
    rng = random.Random(3)
    pool = [None, 0, 1, 1.0, 1.005, 2, "1", "a", "b", math.nan, 2.5, 2.509, True]
    for _ in range(4000):
        w, wp, n = rng.randrange(1, 4), rng.randrange(1, 5), rng.randrange(0, 5)
        gold = [tuple(rng.choice(pool) for _ in range(w)) for _ in range(n)]
        if rng.random() < 0.4:  # a prediction built from the gold's columns, shuffled
            cols = [list(c) for c in zip(*gold)] if gold else []
            extra = [[rng.choice(pool) for _ in range(n)] for _ in range(wp - 1)]
            allcols = cols + extra
            rng.shuffle(allcols)
            pred = [tuple(c[i] for c in allcols) for i in range(n)] if allcols else []
            if rng.random() < 0.5:
                rng.shuffle(pred)
        else:
            pred = [tuple(rng.choice(pool) for _ in range(wp)) for _ in range(rng.randrange(0, 5))]
        for om in (False, True):
            assert comparators.subset(gold, pred, order_matters=om) == old_subset(gold, pred, order_matters=om), (gold, pred, om)


# --------------------------------------------------------------------------- kept connections


@pytest.fixture
def db_copy(tmp_path):
    dst = tmp_path / "superhero.sqlite"
    shutil.copy(SUPERHERO, dst)
    yield dst
    sx.close_connections()


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


WRITES = [
    "BEGIN",
    "BEGIN IMMEDIATE",
    "SAVEPOINT s",
    "DROP TABLE superhero",
    "DELETE FROM superhero",
    "UPDATE superhero SET height_cm = 0",
    "INSERT INTO colour VALUES (9999, 'ultraviolet')",
    "ATTACH DATABASE 'other.db' AS other",
    "PRAGMA query_only = 0",
    "PRAGMA writable_schema=1",
    "PRAGMA journal_mode=WAL",
    "SELECT load_extension('mod_spatialite')",
    "CREATE TEMP TABLE t(x)",
    "CREATE TEMP VIEW v AS SELECT 1",
    "VACUUM",
]


def test_kept_connection_refuses_writes_and_carries_nothing_over(db_copy):
    before = sha(db_copy)
    first = sx.execute(db_copy, "SELECT count(*) FROM superhero", cached=True)
    conn = sx.cached_connection(db_copy)
    for sql in WRITES:
        r = sx.execute(db_copy, sql, cached=True)
        assert r.status == "error", sql
        assert sx.cached_connection(db_copy) is conn  # the same kept connection ...
        assert not conn.in_transaction, sql  # ... with no transaction left open
        assert conn.execute("PRAGMA query_only").fetchone() == (1,)
        again = sx.execute(db_copy, "SELECT count(*) FROM superhero", cached=True)
        assert again.rows == first.rows == [(750,)]
    assert sha(db_copy) == before
    assert not (db_copy.parent / "other.db").exists()


def test_kept_connection_is_reused_and_timeouts_still_apply(db_copy):
    conn = sx.cached_connection(db_copy)
    assert sx.cached_connection(str(db_copy)) is conn
    r = sx.execute(
        db_copy,
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        timeout_s=0.5,
        cached=True,
    )
    assert r.status == "timeout"
    assert sx.execute(db_copy, "SELECT 1", cached=True).rows == [(1,)]
    assert sx.cached_connection(db_copy) is conn


def test_a_replaced_database_gets_a_fresh_connection(db_copy, tmp_path):
    assert sx.execute(db_copy, "SELECT count(*) FROM superhero", cached=True).rows == [(750,)]
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE superhero (id)")
        c.execute("INSERT INTO superhero VALUES (1)")
    c.close()
    other.replace(db_copy)
    assert sx.execute(db_copy, "SELECT count(*) FROM superhero", cached=True).rows == [(1,)]
    db_copy.unlink()
    gone = sx.execute(db_copy, "SELECT 1", cached=True)
    assert gone.status == "error" and "cannot open database" in (gone.error or "")


# --------------------------------------------------------------------------- batched writes


def make_jobs(tmp_path: Path, store: Store, n: int):
    db = tmp_path / "numbers.sqlite"
    if not db.exists():
        with sqlite3.connect(db) as c:
            c.execute("CREATE TABLE t (x INTEGER)")
            c.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(50)])
        c.close()
    sha_db = store.file_sha256(db)
    databases = {"numbers": (db, sha_db)}
    jobs = {}
    for i in range(n):
        sql = f"SELECT x, x * {i} FROM t WHERE x < {i % 50}"
        jobs[execution_key(sha_db, sql)] = ("numbers", sql)
    return jobs, databases


def stored_count(path: Path) -> int:
    with sqlite3.connect(path) as c:
        (n,) = c.execute("SELECT count(*) FROM executions").fetchone()
    c.close()
    return n


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_keeps_every_result_received_and_a_rerun_runs_only_the_rest(tmp_path, workers, monkeypatch):
    monkeypatch.setattr(backends, "LOCAL_FIRST_CPU_S", 0.0)  # 2 workers: the pool from the first job
    path = tmp_path / "store.db"
    seen: list[int] = []

    def interrupt(done: int, total: int) -> None:
        seen.append(done)
        if done >= 70:
            raise KeyboardInterrupt

    with Store(path) as store:
        jobs, databases = make_jobs(tmp_path, store, 300)
        settings = Settings(workers=workers)
        with pytest.raises(KeyboardInterrupt):
            run_executions(jobs, databases, store, settings, interrupt)
    received = seen[-1]
    assert 70 <= received < 300
    assert stored_count(path) == received  # the unwritten batch was flushed in the finally
    with Store(path) as store:
        assert run_executions(jobs, databases, store, Settings(workers=workers)) == 300 - received
        assert run_executions(jobs, databases, store, Settings(workers=workers)) == 0
    assert stored_count(path) == 300


def test_a_hard_crash_loses_at_most_one_batch(tmp_path):
    """os._exit mid-run (no finally runs): the store holds all but at most one batch."""
    script = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        sys.path.insert(0, {str(REPO)!r})
        from jury.compare.outcomes import Settings, run_executions
        from jury.execution import backends, batches
        from jury.execution.store import Store
        from tests.test_perf_execution import make_jobs
        batches.EXECUTION_FLUSH_S = 3600.0  # batches by count only: the worst case
        tmp = Path({str(tmp_path)!r})
        def crash(done, total):
            if done == 150:
                os._exit(9)
        store = Store(tmp / "store.db")
        jobs, databases = make_jobs(tmp, store, 300)
        run_executions(jobs, databases, store, Settings(workers=1), crash)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    kept = stored_count(tmp_path / "store.db")
    batch = batches.EXECUTION_BATCH
    assert kept == (150 // batch) * batch  # every full batch is there; only the partial one is lost
    with Store(tmp_path / "store.db") as store:
        jobs, databases = make_jobs(tmp_path, store, 300)
        assert run_executions(jobs, databases, store, Settings(workers=1)) == 300 - kept


def test_results_are_written_in_batches_without_table_introspection(tmp_path):
    statements: list[str] = []
    with Store(tmp_path / "store.db") as store:
        jobs, databases = make_jobs(tmp_path, store, 200)
        store.db.conn.set_trace_callback(statements.append)
        run_executions(jobs, databases, store, Settings(workers=1))
        store.db.conn.set_trace_callback(None)
    assert not [s for s in statements if "table_info" in s.lower()]
    begins = [s for s in statements if s.startswith("BEGIN")]
    assert 1 <= len(begins) <= 200 // batches.EXECUTION_BATCH + 10  # a few time-based flushes at most
    assert stored_count(tmp_path / "store.db") == 200


def test_a_batch_write_failure_is_one_line_store_error(tmp_path):
    from jury.errors import StoreError

    with Store(tmp_path / "store.db") as store:
        jobs, databases = make_jobs(tmp_path, store, 10)
        store.db.conn.execute(
            "CREATE TRIGGER full BEFORE INSERT ON executions BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
        with pytest.raises(StoreError, match="cannot write to the store: database or disk is full"):
            run_executions(jobs, databases, store, Settings(workers=1))


# --------------------------------------------------------------------------- chunked workers


def test_chunked_workers_give_what_one_worker_gives(tmp_path, monkeypatch):
    monkeypatch.setattr(backends, "LOCAL_FIRST_CPU_S", 0.0)  # 2 workers: the pool from the first job
    gold = load_gold(EXAMPLE / "dev.json")
    records = [r for r in load_runs([EXAMPLE / "run.jsonl"], gold)]
    models = sorted({r.model for r in records})[:2]  # ~390 queries: 2 workers x 4 chunks of up to 64, twice over
    records = [r for r in records if r.model in models]
    out = {}
    stored = {}
    for workers in (1, 2):
        path = tmp_path / f"store{workers}.db"
        with Store(path) as store:
            ev = evaluate(gold, records, EXAMPLE / "databases", store, Settings(workers=workers))
            assert ev.executed > 64 * 4  # the pool path, several chunks (CHUNK_MAX 64)
            out[workers] = [asdict(p) for p in ev.pairs]
            stored[workers] = store.db.execute(
                "SELECT key, db_sha256, sql, status, columns, rows, row_count, truncated, result_sha256, "
                "ordered_sha256, error, timeout_s, row_cap FROM executions ORDER BY key"
            ).fetchall()
    assert out[1] == out[2]
    assert stored[1] == stored[2]
