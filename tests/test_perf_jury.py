"""Issue 12 (performance), the jury side: each vote and each call log is one plain INSERT.

sqlite-utils' ``insert`` ran several statements per row (table introspection included) on
every vote and every call log; the store now writes each with one statement, still
committed before it counts (autocommit: a vote is durable when record_vote returns). No
timing assertions: pinned are the statements run, the rows written and the semantics kept
(a stored vote never changes; the call log's id is its rowid).
"""

from __future__ import annotations

import json

from jury.execution.store import Store
from jury.judging.juror import CallResult, JurorSpec

JUROR = JurorSpec(name="j1", model="openai/j1", family="fam-a", api_base="http://127.0.0.1:9/v1")


def _statements(store: Store) -> list[str]:
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    return seen


def test_a_vote_is_one_insert_committed_at_once_and_never_replaced(tmp_path):
    path = tmp_path / "store.db"
    with Store(path) as st:
        seen = _statements(st)
        first = CallResult(ok=True, parsed={"verdict": "both"}, text='{"verdict": "both"}', attempts=1)
        st.record_vote("h1", "adjudication", 7, "model-x", JUROR, first)
        assert len(seen) == 1 and seen[0].startswith("INSERT OR IGNORE INTO votes")
        assert not st.conn.in_transaction  # committed: durable before it counts
        other = CallResult(ok=False, error="bad output", attempts=2)
        st.record_vote("h1", "adjudication", 7, "model-x", JUROR, other)
        assert st.get_vote("h1") == {"ok": True, "reply": {"verdict": "both"}, "error": None, "call_id": None}
    with Store(path) as st:  # and read back by a new connection
        row = st.conn.execute(
            "SELECT kind, question_id, model, juror, juror_model, juror_family, ok, reply FROM votes"
        ).fetchall()
        assert row == [("adjudication", "7", "model-x", "j1", "openai/j1", "fam-a", 1, json.dumps({"verdict": "both"}))]


def test_a_call_log_is_one_insert_and_its_id_is_the_rowid(tmp_path):
    with Store(tmp_path / "store.db") as st:
        seen = _statements(st)
        res = CallResult(
            ok=True,
            parsed={"verdict": "both"},
            text="t",
            attempts=2,
            prompt_tokens=11,
            completion_tokens=3,
            cost_usd=0.25,
            latency_s=0.5,
            log=[{"attempt": 1, "status": "ok", "error": None, "wait_s": 0.0}],
        )
        messages = [{"role": "user", "content": "é"}]
        ids = [st.record_call(f"h{i}", "audit", JUROR, messages, res) for i in range(3)]
        assert ids == [1, 2, 3] and all(isinstance(i, int) for i in ids)
        assert len(seen) == 3 and all(s.startswith("INSERT INTO calls") for s in seen)
        row = st.conn.execute(
            "SELECT request_sha256, kind, juror, juror_model, messages, params, ok, text, parsed, error, attempts, "
            "prompt_tokens, completion_tokens, cost_usd, latency_s, log FROM calls WHERE id = 2"
        ).fetchone()
        assert row == (
            "h1",
            "audit",
            "j1",
            "openai/j1",
            json.dumps(messages, ensure_ascii=False),
            json.dumps(JUROR.public_dict(), sort_keys=True),
            1,
            "t",
            json.dumps({"verdict": "both"}),
            None,
            2,
            11,
            3,
            0.25,
            0.5,
            json.dumps(res.log),
        )
        st.record_vote("h1", "audit", 1, "m", JUROR, res)
        st.link_vote_call("h1", ids[1])
        assert st.get_vote("h1")["call_id"] == 2
