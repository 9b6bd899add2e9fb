"""`--shard I/N` on adjudicate and audit-gold, `jury store merge`, and the final run that locks
one verdict file from the merged store without a call (issue 15, "Ballots across machines")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import InputError
from jury.execution.store import Store
from jury.judging.shards import Shard, parse_shard
from jury.verdicts.lock import load_locked
from tests.support.badinput import Case, check_case
from tests.support.fakellm import Reply
from tests.support.jurytest import says, write_panel

runner = CliRunner()
# priced juror models (litellm knows their prices), served by the loopback server: costs are not $0
PRICED = [
    ("ja", "openai", "openai/gpt-4o"),
    ("jb", "anthropic", "openai/gpt-4.1"),
    ("jc", "google", "openai/gpt-4o-2024-08-06"),
    ("jd", "xai", "openai/gpt-4.1-2025-04-14"),
]


def jury(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def priced_panel(project: Path, fake_llm, category="gold_defect") -> str:
    for _, _, model in PRICED:
        fake_llm.script(model.split("/", 1)[1], says(category))
    return str(write_panel(project, fake_llm.base_url, PRICED))


def paid(doc) -> tuple:
    """What a verdict set paid, apart from transport retries (`calls` counts attempts: a
    loopback connection reset retried in one run and not in the other is no difference)."""
    summary = {k: v for k, v in doc.summary.items() if k != "calls_by_model"}
    return summary, doc.totals.model_dump(exclude={"calls", "retries"})


def attempts(*stores: Path) -> int:
    return sum(store_rows(s, "SELECT coalesce(sum(attempts), 0) FROM calls")[0][0] for s in stores)


def distinct_requests(path: Path) -> set[str]:
    return {v.request_sha256 for r in load_locked(path).records for v in r.votes}


def store_rows(path: Path, sql: str):
    with Store(path) as st:
        return st.conn.execute(sql).fetchall()


# ------------------------------------------------------------------ the shard predicate


@pytest.mark.parametrize("text, want", [("1/1", Shard(1, 1)), ("2/3", Shard(2, 3)), (" 4 / 4 ", Shard(4, 4))])
def test_parse_shard(text, want):
    assert parse_shard(text) == want


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "x", "1/2/3", "-1/2", ""])
def test_parse_shard_refuses_bad_values(text):
    with pytest.raises(InputError, match=r"^shard "):
        parse_shard(text)


def test_shards_partition_the_request_hashes():
    import hashlib

    hashes = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(300)]
    shards = [Shard(i, 3) for i in (1, 2, 3)]
    owners = [[s for s in shards if s.holds(h)] for h in hashes]
    assert all(len(o) == 1 for o in owners)  # each hash in exactly one shard
    assert all(sum(o[0] == s for o in owners) > 50 for s in shards)  # and the shards are not lopsided


# ------------------------------------------------------------------ bad input, one line, exit 1

CASES = [
    Case("shard-not-a-fraction", ["adjudicate", "run.jsonl", "--shard", "half"], "shard 'half': expected I/N"),
    Case("shard-index-zero", ["adjudicate", "run.jsonl", "--shard", "0/2"], "I must be between 1 and N"),
    Case("shard-index-past-count", ["audit-gold", "gold.json", "--shard", "3/2"], "I must be between 1 and N"),
    Case(
        "shard-with-early-stop",
        ["adjudicate", "run.jsonl", "--shard", "1/2", "--early-stop", "--panel", "panels/default.toml"],
        "shard and early_stop cannot be combined",
        setup=lambda tmp: (
            (tmp / "panels").mkdir()
            or (tmp / "panels" / "default.toml").write_text(
                Path(__file__).resolve().parents[1].joinpath("panels", "default.toml").read_text()
            )
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_shard_input(case, tmp_path):
    check_case(case, tmp_path)


# ------------------------------------------------------------------ adjudication: shards, merge, final run


def test_sharded_adjudication_merges_into_the_unsharded_verdicts(project, fake_llm):
    panel = priced_panel(project, fake_llm)
    # the reference: one machine, one store, its file outside verdicts/ (else the shards find it there: up to date)
    res = jury("adjudicate", "run.jsonl", "--panel", panel, "--store", "whole.db", "-o", "ref/whole.json")
    assert res.exit_code == 0, res.output
    whole = project / "ref" / "whole.json"
    requests = distinct_requests(whole)
    assert fake_llm.calls() == len(requests) == 17  # 6 failures x 3 jurors; two models share one wrong SQL
    fake_llm.reset()

    asked = []
    for i in (1, 2):
        res = jury("adjudicate", "run.jsonl", "--panel", panel, "--shard", f"{i}/2", "--store", f"s{i}.db")
        assert res.exit_code == 0, res.output
        m = re.search(
            rf"shard {i}/2: asked (\d+) ballots .* stored in s{i}\.db; (\d+) ballots belong to other shards", res.output
        )
        assert m, res.output
        assert "jury store merge" in res.output and "without --shard" in res.output
        asked.append(int(m.group(1)))
        assert int(m.group(1)) + int(m.group(2)) == 18
        votes = {h for (h,) in store_rows(project / f"s{i}.db", "SELECT request_sha256 FROM votes")}
        assert votes and all(Shard(i, 2).holds(h) for h in votes)  # only its own ballots were asked
    assert sum(asked) == 18 and all(asked)
    assert fake_llm.calls() == 17  # each request asked once, by one shard
    assert not list((project / "verdicts").glob("adjudication-*.json"))  # no shard wrote a verdict file

    res = jury("store", "merge", "s1.db", "s2.db", "-o", "merged.db")
    assert res.exit_code == 0, res.output
    fake_llm.reset()
    res = jury("adjudicate", "run.jsonl", "--panel", panel, "--store", "merged.db", "-o", "verdicts/final.json")
    assert res.exit_code == 0, res.output
    assert fake_llm.calls() == 0  # every vote came from the merged store
    assert "calls this run: 0 ballots asked, 0 requests sent (0 retries); votes reused from the store: 18" in " ".join(
        res.output.split()
    )

    a, b = load_locked(whole), load_locked(project / "verdicts" / "final.json")
    assert [r.model_dump() for r in a.records] == [r.model_dump() for r in b.records]
    assert paid(a) == paid(b) and a.summary["cost_by_model"]["gpt-x"] > 0  # costs survive the merge
    assert b.totals.cost_usd > 0 and b.totals.calls == attempts(project / "s1.db", project / "s2.db")
    # the merged call log holds every call of the shards
    assert len(store_rows(project / "merged.db", "SELECT id FROM calls")) == 17
    res = jury("verify", "verdicts/final.json")
    assert res.exit_code == 0, res.output


def test_plan_with_shard_shows_only_its_ballots(project, fake_llm):
    panel = priced_panel(project, fake_llm)
    counts = []
    for spec in ("1/1", "1/3", "2/3", "3/3"):
        res = jury("adjudicate", "run.jsonl", "--panel", panel, "--plan", "--shard", spec)
        assert res.exit_code == 0, res.output
        assert f"shard {spec} (only its ballots)" in res.output
        counts.append(int(re.search(r"(\d+) ballots for \d+ failures", res.output).group(1)))
    assert counts[0] == 18 and sum(counts[1:]) == 18
    assert fake_llm.calls() == 0


def test_a_failed_ballot_in_a_shard_is_still_an_incomplete_run(project, fake_llm):
    panel = priced_panel(project, fake_llm)
    fake_llm.script("gpt-4o", Reply(status=401, error_message="bad key"))
    res = jury("adjudicate", "run.jsonl", "--panel", panel, "--shard", "1/1")
    assert res.exit_code == 3, res.output
    assert "no verdict file written" in res.output


# ------------------------------------------------------------------ the gold audit, sharded


def audit_panel(project: Path, fake_llm) -> str:
    jurors = [*PRICED, ("je", "deepseek", "openai/gpt-4o-mini")]
    for _, _, model in jurors:
        fake_llm.script(model.split("/", 1)[1], Reply(content=json.dumps({"reasoning": "r", "verdict": "valid"})))
    return str(write_panel(project, fake_llm.base_url, jurors, style="audit", k=5, name="audit.toml"))


def test_sharded_audit_merges_into_the_unsharded_audit(project, fake_llm):
    panel = audit_panel(project, fake_llm)
    res = jury("audit-gold", "gold.json", "--panel", panel, "--store", "whole.db", "-o", "ref/whole.json")
    assert res.exit_code == 0, res.output
    total = fake_llm.calls()
    fake_llm.reset()
    for i in (1, 2, 3):
        res = jury("audit-gold", "gold.json", "--panel", panel, "--shard", f"{i}/3", "--store", f"s{i}.db")
        assert res.exit_code == 0, res.output
        assert f"shard {i}/3: asked" in res.output and "No verdict file written" in res.output
    assert fake_llm.calls() == total
    res = jury("store", "merge", "s1.db", "s2.db", "s3.db", "-o", "merged.db")
    assert res.exit_code == 0, res.output
    fake_llm.reset()
    res = jury("audit-gold", "gold.json", "--panel", panel, "--store", "merged.db", "-o", "verdicts/final.json")
    assert res.exit_code == 0, res.output
    assert fake_llm.calls() == 0
    a, b = load_locked(project / "ref" / "whole.json"), load_locked(project / "verdicts" / "final.json")
    assert [r.model_dump() for r in a.records] == [r.model_dump() for r in b.records]
    assert paid(a) == paid(b) and b.totals.cost_usd > 0
    assert b.totals.calls == attempts(*(project / f"s{i}.db" for i in (1, 2, 3)))


# ------------------------------------------------------------------ a store from another machine is untrusted


def _key(path: Path) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
    )
    pub = Path(f"{path}.pub")
    pub.write_bytes(key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH) + b" me\n")
    return pub


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_forged_shard_vote_never_reaches_a_signed_verdict_file(project, fake_llm):
    """Two shards; every vote of shard 2 edited to "both" with sqlite3: the merge refuses it in
    one line naming the vote, so no merged store exists for a signed final run. The honest
    shards merge, and the signed final run lists both stores' sha256 in its provenance."""
    import shutil
    import sqlite3

    panel = priced_panel(project, fake_llm, "genuine_error")
    for i in (1, 2):
        res = jury("adjudicate", "run.jsonl", "--panel", panel, "--shard", f"{i}/2", "--store", f"s{i}.db")
        assert res.exit_code == 0, res.output
    shutil.copy(project / "s2.db", project / "honest2.db")
    with sqlite3.connect(project / "s2.db") as conn:
        forged = conn.execute("UPDATE votes SET reply = json_set(reply, '$.verdict', 'both')").rowcount
    assert forged > 0
    res = runner.invoke(app, ["store", "merge", "s1.db", "s2.db", "-o", "m.db"])
    assert res.exit_code == 1, res.output
    said = " ".join(res.output.split())
    assert re.search(r"s2\.db: votes row \d+ \(request [0-9a-f]{64}, juror j[a-d]\): reply .*\"both\"", said), said
    assert "is not what jury's parser makes of its call log" in said and "Traceback" not in res.output
    assert not (project / "m.db").exists()  # nothing merged: no store for the final run to use

    res = jury("store", "merge", "s1.db", "honest2.db", "-o", "m.db")
    assert res.exit_code == 0, res.output
    pub = _key(project / "key")
    fake_llm.reset()
    res = jury("adjudicate", "run.jsonl", "--panel", panel, "--store", "m.db", "-o", "verdicts/final.json", "--sign", "key")
    assert res.exit_code == 0, res.output
    assert fake_llm.calls() == 0
    doc = json.loads((project / "verdicts" / "final.json").read_text())
    assert {r["verdict"] for r in doc["records"]} == {"genuine_error"}  # no failure credited
    merged = doc["provenance"]["merged_stores"]
    assert [(Path(m["path"]).name, m["sha256"], m["trust_executions"]) for m in merged] == [
        ("s1.db", _sha256(project / "s1.db"), False),
        ("honest2.db", _sha256(project / "honest2.db"), False),
    ]
    res = jury("verify", "verdicts/final.json", "--trusted-key", str(pub))
    assert res.exit_code == 0, res.output


def _forge_executions(store: Path, gold_sql: str, forged_sqls: list[str]) -> None:
    """Give the candidates' stored executions the gold's rows and digests (as an editor could)."""
    import sqlite3

    with sqlite3.connect(store) as conn:
        gold = conn.execute(
            "SELECT status, columns, rows, row_count, truncated, result_sha256, ordered_sha256 FROM executions WHERE sql = ?",
            [gold_sql],
        ).fetchone()
        assert gold is not None
        for sql in forged_sqls:
            n = conn.execute(
                "UPDATE executions SET status = ?, columns = ?, rows = ?, row_count = ?, truncated = ?, result_sha256 = ?, "
                "ordered_sha256 = ? WHERE sql = ?",
                [*gold, sql],
            ).rowcount
            assert n == 1


def _strict_matches(output: str) -> dict[str, int]:
    doc = json.loads(output)
    return {m["model"]: m["strict"]["k"] for m in doc["models"]}, doc["provenance"].get("merged_stores")


def test_forged_executions_are_computed_again_unless_trusted(project):
    from tests.support.jurytest import FAILURES, GOLD_SQL

    res = jury("score", "run.jsonl", "--store", "theirs.db", "--format", "json")
    assert res.exit_code == 0, res.output
    truth, _ = _strict_matches(res.stdout)
    assert truth == {"gpt-x": 0, "claude-y": 0}
    # two wrong candidates (questions 1 and 3) get the gold's rows and digests in the other machine's store
    _forge_executions(project / "theirs.db", GOLD_SQL[1], [FAILURES[1]])
    _forge_executions(project / "theirs.db", GOLD_SQL[3], [FAILURES[3]])
    res = jury("score", "run.jsonl", "--store", "theirs.db", "--format", "json")
    assert _strict_matches(res.stdout)[0]["gpt-x"] == 2  # the forgery, read from the forged store itself

    res = jury("store", "merge", "theirs.db", "-o", "m.db")
    assert res.exit_code == 0, res.output
    assert re.search(
        r"not merged \(untrusted, computed again from the databases here\): .*executions \d+", " ".join(res.output.split())
    )
    res = jury("score", "run.jsonl", "--store", "m.db", "--format", "json")
    assert res.exit_code == 0, res.output
    matches, merged = _strict_matches(res.stdout)
    assert matches == truth  # executed again here: 0 of 3, the truth
    assert [(m["sha256"], m["trust_executions"]) for m in merged] == [(_sha256(project / "theirs.db"), False)]

    res = jury("store", "merge", "theirs.db", "-o", "trusted.db", "--trust-executions")
    assert res.exit_code == 0 and "executions trusted (--trust-executions)" in res.output
    res = jury("score", "run.jsonl", "--store", "trusted.db", "--format", "json")
    matches, merged = _strict_matches(res.stdout)
    assert matches["gpt-x"] == 2 and merged[0]["trust_executions"] is True  # the choice is on record
