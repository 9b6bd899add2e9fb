"""`jury store merge`: stores of several machines into one (jury/execution/merge.py)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import StoreError
from jury.execution.merge import merge_stores as _merge_stores
from jury.execution.reviews import ReviewStore
from jury.execution.store import Store
from jury.judging.juror import JurorSpec
from jury.judging.vote_check import VoteCheck
from tests.support.badinput import Case, check_case

runner = CliRunner()
JUROR = JurorSpec(name="ja", model="openai/gpt-4o", family="openai")


def h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def result(verdict="answer_1", cost=0.01, tokens=(100, 20), attempts=1, reasoning="r"):
    """A juror's answer as the live run stores it: the reply text and what the parser makes of it."""
    return SimpleNamespace(
        ok=True, text=json.dumps({"reasoning": reasoning, "verdict": verdict}),
        parsed={"reasoning": reasoning, "verdict": verdict}, error=None, attempts=attempts,
        prompt_tokens=tokens[0], completion_tokens=tokens[1], cost_usd=cost, latency_s=0.5, log=[{"status": "ok"}],
    )  # fmt: skip


def merge_stores(inputs, output, **kw):
    """merge.merge_stores with the live run's vote check, as `jury store merge` calls it."""
    return _merge_stores(inputs, output, votes=VoteCheck(), **kw)


def add_vote(st: Store, request: str, verdict="answer_1", cost=0.01, question=1) -> None:
    res = result(verdict, cost)
    st.record_vote(request, "adjudication", question, "gpt-x", JUROR, res)
    st.link_vote_call(request, st.record_call(request, "adjudication", JUROR, [{"role": "user", "content": "q"}], res))


def add_failed_call(st: Store, request: str, cost=0.002) -> None:
    """A call that failed on transport: logged and paid, no vote."""
    res = result(cost=cost, attempts=3)
    res.ok, res.parsed, res.error = False, None, "HTTP 500"
    st.record_call(request, "adjudication", JUROR, [{"role": "user", "content": "q"}], res)


def add_execution(st: Store, key: str, digest: str, status="ok") -> None:
    row = (key, "db" * 32, f"SELECT {key[:4]}", status, "[]", "[]", 0, 0, digest, digest, None, 0.01, None, 30.0, 100000)
    st.put_executions([row])


def make_store(path: Path, votes=(), executions=(), failed=()) -> Path:
    with Store(path) as st:
        for request, verdict in votes:
            add_vote(st, request, verdict)
        for key, digest in executions:
            add_execution(st, key, digest)
        for request in failed:
            add_failed_call(st, request)
        st.claim(h("claimed"), "host:1:x", 60)  # a live lease: never merged
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def merge(*args):
    return runner.invoke(app, ["store", "merge", *map(str, args)], catch_exceptions=False)


@pytest.fixture
def two(tmp_path):
    a = make_store(tmp_path / "a.db", votes=[(h("r1"), "answer_1"), (h("r2"), "answer_2")], executions=[(h("e1"), "d1")])
    b = make_store(tmp_path / "b.db", votes=[(h("r3"), "both")], executions=[(h("e1"), "d1"), (h("e2"), "d2")], failed=[h("r4")])
    return a, b


def test_merge_keeps_everything_and_is_idempotent(two, tmp_path):
    a, b = two
    before = {p: digest(p) for p in two}
    files = sorted(tmp_path.iterdir())
    out = tmp_path / "out.db"
    res = merge(a, b, "-o", out, "--trust-executions")
    assert res.exit_code == 0, res.output
    assert "created" in res.output and "not merged (machine-local): claims 2" in res.output
    assert {p: digest(p) for p in two} == before  # inputs opened read-only: not a byte changed
    assert sorted(p for p in tmp_path.iterdir() if not p.name.startswith("out.db")) == files  # no -wal/-shm left
    assert count(out, "votes") == 3 and count(out, "calls") == 4 and count(out, "executions") == 2
    assert count(out, "claims") == 0
    requests = [h(f"r{i}") for i in range(1, 5)]
    with Store(a) as sa, Store(b) as sb, Store(out) as so:
        merged = so.call_costs(requests)
        shards = {**sa.call_costs(requests), **sb.call_costs(requests)}
        assert merged == shards and so.call_totals(requests)["cost_usd"] == pytest.approx(0.032)
        # each vote links to its own call in the merged log
        for request in requests[:3]:
            call_id = so.get_vote(request)["call_id"]
            assert so.conn.execute("SELECT request_sha256 FROM calls WHERE id = ?", [call_id]).fetchone()[0] == request
    res = merge(a, b, "-o", out, "--trust-executions")  # again: nothing new
    assert res.exit_code == 0, res.output
    assert count(out, "votes") == 3 and count(out, "calls") == 4 and count(out, "executions") == 2
    res = merge(b, "-o", out, "--trust-executions")
    assert res.exit_code == 0 and count(out, "calls") == 4
    with Store(out) as so:
        assert so.call_costs(requests) == merged


def test_identical_calls_within_one_store_are_all_kept(tmp_path):
    """The call log is a multiset: two identical rows of one store stay two (a retry logged twice)."""
    a = tmp_path / "a.db"
    with Store(a) as st:
        for _ in range(2):
            st.conn.execute(
                "INSERT INTO calls (request_sha256, kind, juror, ok, cost_usd, created_at) VALUES (?, 'audit', 'ja', 0, 0.5, 't')",
                [h("x")],
            )
    out = tmp_path / "out.db"
    merge_stores([a], out)
    merge_stores([a], out)
    assert count(out, "calls") == 2


def test_a_disagreeing_vote_is_a_one_line_error_naming_both_files(tmp_path):
    a = make_store(tmp_path / "a.db", votes=[(h("r1"), "answer_1")])
    b = make_store(tmp_path / "b.db", votes=[(h("r1"), "answer_2")])
    out = tmp_path / "out.db"
    with pytest.raises(StoreError) as err:
        merge_stores([a, b], out)
    msg = str(err.value)
    assert str(a) in msg and str(b) in msg and h("r1") in msg and "votes" in msg and "\n" not in msg
    assert not out.exists()  # one transaction: nothing half-merged is left behind


def test_a_disagreeing_execution_is_an_error_and_an_existing_output_is_unchanged(tmp_path):
    a = make_store(tmp_path / "a.db", executions=[(h("e1"), "d1")])
    b = make_store(tmp_path / "b.db", executions=[(h("e1"), "other")])
    out = tmp_path / "out.db"
    merge_stores([a], out, trust_executions=True)
    rows = count(out, "executions")
    with pytest.raises(StoreError, match=rf"{out} and {b} disagree on executions key {h('e1')} \(result_sha256"):
        merge_stores([b], out, trust_executions=True)
    assert count(out, "executions") == rows


def test_merge_into_an_existing_store(two, tmp_path):
    a, b = two
    out = make_store(tmp_path / "out.db", votes=[(h("r9"), "neither")])
    res = merge(a, b, "-o", out)
    assert res.exit_code == 0 and "merged into" in res.output
    assert count(out, "votes") == 4


def test_review_decisions_are_merged_once(tmp_path):
    a = make_store(tmp_path / "a.db")
    decision = {"verdict_sha256": "v" * 64, "kind": "adjudication", "question_id": 1, "reviewer": "ann", "choice": "1"}
    ReviewStore(a).record({**decision, "decided_at": "2026-01-01T00:00:00Z"})
    out = tmp_path / "out.db"
    merge_stores([a, make_store(tmp_path / "b.db")], out)
    merge_stores([a], out)
    assert [d["reviewer"] for d in ReviewStore(out).decisions(["v" * 64])] == ["ann"]
    assert count(out, "review_decisions") == 1


def test_an_older_store_is_read_as_it_is_and_a_newer_one_refused(tmp_path):
    old = make_store(tmp_path / "old.db", votes=[(h("r1"), "answer_1")])
    with sqlite3.connect(old) as conn:  # as a jury before m006 left it
        conn.execute("DROP TABLE gold_orders")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm006_gold_orders'")
    before = digest(old)
    out = tmp_path / "out.db"
    merge_stores([old], out)
    assert digest(old) == before and count(out, "votes") == 1  # not migrated: read as it is
    new = make_store(tmp_path / "new.db")
    with sqlite3.connect(new) as conn:
        conn.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES ('jury', 'm999_future', 'now')")
    with pytest.raises(StoreError, match=r"made by a newer jury \(migration jury.m999_future"):
        merge_stores([new], tmp_path / "out2.db")


# ------------------------------------------------------------------ an input store is untrusted


def edit(path: Path, sql: str, *params) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(sql, params)


def test_a_forged_vote_is_refused_naming_the_vote(tmp_path):
    """A vote edited with sqlite3 no longer matches its call log's reply: nothing is merged."""
    a = make_store(tmp_path / "a.db", votes=[(h("r1"), "answer_1"), (h("r2"), "answer_2")])
    edit(a, "UPDATE votes SET reply = ? WHERE request_sha256 = ?", json.dumps({"reasoning": "r", "verdict": "both"}), h("r2"))
    out = tmp_path / "out.db"
    res = runner.invoke(app, ["store", "merge", str(a), "-o", str(out)])
    assert res.exit_code == 1, res.output
    line = res.output.strip()
    assert "\n" not in line and "Traceback" not in res.output
    assert f"{a}: votes row 2 (request {h('r2')}" in " ".join(line.split()), res.output
    assert "is not what jury's parser makes of its call log" in " ".join(line.split())
    assert not out.exists()


def test_forged_abstentions_and_orphan_votes_are_refused(tmp_path):
    a = make_store(tmp_path / "a.db", votes=[(h("r1"), "answer_1")])
    edit(a, "UPDATE votes SET ok = 0, reply = NULL, error = 'unparseable reply: x'")
    with pytest.raises(StoreError, match=r"votes row 1 .*did not end in an unparseable reply"):
        merge_stores([a], tmp_path / "out.db")
    b = make_store(tmp_path / "b.db", votes=[(h("r1"), "answer_1")])
    edit(b, "DELETE FROM calls")
    with pytest.raises(StoreError, match=r"votes row 1 .*no call log to check it against"):
        merge_stores([b], tmp_path / "out.db")


def test_a_vote_matching_its_call_log_is_merged_with_every_style(tmp_path):
    """Votes of each ballot style (blind, labelled, audit, with a taxonomy category) pass the check."""
    a = tmp_path / "a.db"
    replies = [
        ("adjudication", {"reasoning": "same rows", "verdict": "format_equivalence"}),
        ("adjudication", {"reasoning": "x", "verdict": "neither", "error_category": "join_error"}),
        ("audit", {"reasoning": "bad join", "verdict": "defective", "defect_type": "sql_vs_data"}),
        ("audit", {"reasoning": "fine", "verdict": "valid", "defect_type": None}),
    ]
    with Store(a) as st:
        for i, (kind, reply) in enumerate(replies):
            text = "Here you go:\n```json\n" + json.dumps({**reply, "verdict": reply["verdict"].upper()}) + "\n```"
            res = SimpleNamespace(**{**vars(result()), "text": text, "parsed": reply})
            st.record_vote(h(f"s{i}"), kind, i, None, JUROR, res)
            st.link_vote_call(h(f"s{i}"), st.record_call(h(f"s{i}"), kind, JUROR, [], res))
    report = merge_stores([a], tmp_path / "out.db")
    assert report.votes_checked == 4 and count(tmp_path / "out.db", "votes") == 4


GARBAGE = [
    ("votes", "kind = NULL", "votes row 1: kind is NULL"),
    ("votes", "reply = 'not json'", "votes row 1: reply 'not json': expected JSON text"),
    ("votes", "reply = '[1]'", "votes row 1: reply '[1]': expected a JSON object"),
    ("votes", "ok = 'yes'", "votes row 1: ok 'yes': expected an integer"),
    ("votes", "question_id = NULL", "votes row 1: question_id is NULL"),
    ("calls", "log = '{{{'", "calls row 1: log '{{{': expected JSON text"),
    ("calls", "cost_usd = -1", "calls row 1: cost_usd -1.0: expected a number >= 0"),
    ("calls", "request_sha256 = 'abc'", "calls row 1: request_sha256 'abc': expected a sha256"),
    ("executions", "rows = 'garbage'", "executions row 1: rows 'garbage': expected JSON text"),
    ("executions", "columns = NULL", "executions row 1: columns is NULL"),
    ("executions", "status = 'great'", "executions row 1: status 'great': expected one of ok, error, timeout"),
]


@pytest.mark.parametrize("table, change, said", GARBAGE, ids=[f"{t}-{c.split()[0]}" for t, c, _ in GARBAGE])
def test_rows_of_the_wrong_type_are_refused_in_one_line(tmp_path, table, change, said):
    """Before: merged with exit 0, and `jury score` or `adjudicate` then crashed with a traceback."""
    a = make_store(tmp_path / "a.db", votes=[(h("r1"), "answer_1")], executions=[(h("e1"), "d1")])
    edit(a, f"UPDATE {table} SET {change}")
    out = tmp_path / "out.db"
    res = runner.invoke(app, ["store", "merge", str(a), "-o", str(out), "--trust-executions"])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) <= 2
    assert f"{a}: {said}" in " ".join(res.output.split()), res.output
    assert not out.exists()


def test_the_live_runs_caps_apply(tmp_path):
    """A reply text past the store cap, or a reasoning longer than a live run stores, is refused."""
    from jury.judging.redaction import MAX_STORED_REASONING_CHARS, MAX_STORED_TEXT_CHARS

    a = make_store(tmp_path / "a.db", votes=[(h("r1"), "answer_1")])
    edit(a, "UPDATE calls SET text = ?", "x" * (MAX_STORED_TEXT_CHARS + 1000))
    with pytest.raises(StoreError, match=r"a.db: calls row 1: text is 101,000 long, more than a live run stores"):
        merge_stores([a], tmp_path / "out.db")
    # a vote whose reasoning is past the cap: its reply text says the same, but a live run would have cut it
    long = "y" * (MAX_STORED_REASONING_CHARS * 2)
    b = tmp_path / "b.db"
    with Store(b) as st:
        res = result(reasoning=long)
        st.record_vote(h("r1"), "adjudication", 1, "gpt-x", JUROR, res)
        st.link_vote_call(h("r1"), st.record_call(h("r1"), "adjudication", JUROR, [], res))
    with pytest.raises(
        StoreError, match=r"votes row 1 .*its reasoning is 40,000 characters, more than a live run stores \(20,000\)"
    ):
        merge_stores([b], tmp_path / "out.db")
    edit(b, "UPDATE votes SET reply = ?", json.dumps({"reasoning": "z" * (1 << 20), "verdict": "answer_1"}))
    with pytest.raises(StoreError, match=r"votes row 1: reply is 1,048,6\d\d long, more than a live run stores"):
        merge_stores([b], tmp_path / "out.db")


def test_executions_are_not_merged_unless_trusted_and_the_sources_are_recorded(two, tmp_path):
    a, b = two
    out = tmp_path / "out.db"
    res = merge(a, b, "-o", out)
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "not merged (untrusted, computed again from the databases here): executions 3" in said
    assert count(out, "executions") == 0 and count(out, "votes") == 3
    with Store(out) as st:
        sources = st.merged_sources()
    assert [(s["path"], s["sha256"], s["trust_executions"]) for s in sources] == [
        (str(a.resolve()), digest(a), False),
        (str(b.resolve()), digest(b), False),
    ]
    assert f"a.db: sha256 {digest(a)}" in said
    merge(a, b, "-o", out)  # again: nothing new recorded
    assert count(out, "merged_stores") == 2
    out2 = tmp_path / "out2.db"
    res = merge(out, "-o", out2, "--trust-executions")  # a merged store merged again keeps its history
    assert res.exit_code == 0 and "executions trusted (--trust-executions)" in res.output
    with Store(out2) as st:
        assert [(s["sha256"], s["trust_executions"]) for s in st.merged_sources()] == [
            (digest(a), False),
            (digest(b), False),
            (digest(out), True),
        ]


def test_trusted_key_requires_a_signature_by_it_and_records_the_signer(two, tmp_path):
    from jury.verdicts.signing import load_signer, signature_path

    a, b = two
    key = tmp_path / "id_ed25519"
    _write_key(key)
    signer = load_signer(key)
    signature_path(a).write_text(signer.sign(a.read_bytes()))
    res = runner.invoke(app, ["store", "merge", str(a), str(b), "-o", str(tmp_path / "o.db"), "--trusted-key", f"{key}.pub"])
    assert res.exit_code == 1 and "b.db: no signature" in " ".join(res.output.split()), res.output
    assert not (tmp_path / "o.db").exists()
    res = runner.invoke(app, ["store", "merge", str(a), "-o", str(tmp_path / "o.db"), "--trusted-key", f"{key}.pub"])
    assert res.exit_code == 0, res.output
    with Store(tmp_path / "o.db") as st:
        assert st.merged_sources()[0]["signed_by"] == signer.fingerprint


def _write_key(path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
    )
    Path(f"{path}.pub").write_bytes(
        key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH) + b" test\n"
    )


# ------------------------------------------------------------------ bad input, one line, exit 1


def _stores(tmp: Path) -> None:
    make_store(tmp / "a.db", votes=[(h("r1"), "answer_1")])
    make_store(tmp / "b.db", votes=[(h("r1"), "answer_2")])
    (tmp / "notes.txt").write_text("not a store\n")
    (tmp / "empty.db").write_bytes(b"")


CASES = [
    Case(
        "output-is-an-input",
        ["store", "merge", "a.db", "b.db", "-o", "a.db"],
        "is the input file a.db",
        _stores,
        unchanged=["a.db"],
    ),
    Case("output-is-an-input-wal", ["store", "merge", "a.db", "-o", "a.db-wal"], "is the input file a.db-wal", _stores),
    Case(
        "output-not-a-store",
        ["store", "merge", "a.db", "-o", "notes.txt"],
        "notes.txt: is not a jury store",
        _stores,
        unchanged=["notes.txt", "a.db"],
    ),
    Case("input-not-a-store", ["store", "merge", "notes.txt", "-o", "out.db"], "notes.txt: is not a jury store", _stores),
    Case("input-empty", ["store", "merge", "empty.db", "-o", "out.db"], "empty.db: is not a jury store", _stores),
    Case("input-missing", ["store", "merge", "nope.db", "-o", "out.db"], "nope.db: no such store file", _stores),
    Case(
        "disagreement",
        ["store", "merge", "a.db", "b.db", "-o", "out.db"],
        "a.db and b.db disagree on votes request_sha256",
        _stores,
        unchanged=["a.db", "b.db"],
    ),
    Case(
        "output-is-a-locked-verdict-file",
        ["store", "merge", "a.db", "-o", "locked.json"],
        "is a locked verdict file",
        lambda tmp: (_stores(tmp), (tmp / "locked.json").write_text('{"kind": "audit", "content_sha256": "x"}')),
    ),
]


def _schema_edit(*statements: str, name: str = "bad.db"):
    """A store whose tables were changed after its migrations ran (by hand, or by another tool)."""

    def setup(tmp: Path) -> None:
        _stores(tmp)
        make_store(tmp / name, votes=[(h("r9"), "answer_1")], executions=[(h("e9"), "d9")])
        conn = sqlite3.connect(tmp / name)
        with conn:
            for sql in statements:
                conn.execute(sql)
        conn.close()  # checkpointed now, not when the connection is collected

    return setup


# executions without its key column: the same table under another name, rebuilt without it
_NO_KEY = (
    "CREATE TABLE executions_x AS SELECT db_sha256, sql, status, columns, rows, row_count, truncated, result_sha256, "
    "ordered_sha256, error, elapsed_s, timeout_s, row_cap, created_at FROM executions",
    "DROP TABLE executions",
    "ALTER TABLE executions_x RENAME TO executions",
)
CASES += [
    Case("executions-lacks-key", ["store", "merge", "bad.db", "-o", "out.db"], "bad.db: is not a jury store (table executions lacks column key;", _schema_edit(*_NO_KEY)),
    Case("votes-lacks-a-column", ["store", "merge", "bad.db", "-o", "out.db"], "(table votes lacks column juror_family;", _schema_edit("ALTER TABLE votes DROP COLUMN juror_family")),
    Case("no-calls-table", ["store", "merge", "bad.db", "-o", "out.db"], "bad.db: is not a jury store (no calls table", _schema_edit("DROP TABLE calls")),
    Case(
        "executions-key-not-primary",
        ["store", "merge", "bad.db", "-o", "out.db"],
        "(table executions's primary key is none, not key)",
        _schema_edit("CREATE TABLE executions_x AS SELECT * FROM executions", "DROP TABLE executions", "ALTER TABLE executions_x RENAME TO executions"),
    ),
    Case(
        "a-migration-recorded-without-the-one-before",
        ["store", "merge", "bad.db", "-o", "out.db"],
        "is not a jury store (its recorded migrations",
        _schema_edit("DROP TABLE executions", "DELETE FROM _sqlite_migrations WHERE name = 'm001_executions'"),
    ),
    Case(
        "executions-is-a-view",
        ["store", "merge", "bad.db", "-o", "out.db"],
        "bad.db: is not a jury store (no executions table",
        _schema_edit("ALTER TABLE executions RENAME TO e2", "CREATE VIEW executions AS SELECT * FROM e2"),
    ),
    Case(
        "output-store-lacks-a-column",
        ["store", "merge", "a.db", "-o", "bad.db"],
        "bad.db: is not a jury store (table executions lacks column key;",
        _schema_edit(*_NO_KEY),
        unchanged=["bad.db", "a.db"],
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_merge_input(case, tmp_path):
    check_case(case, tmp_path)
    if case.id in ("disagreement", "input-not-a-store", "input-missing") or case.id.startswith(
        ("executions-", "votes-", "no-", "a-")
    ):
        assert not (tmp_path / "out.db").exists()
