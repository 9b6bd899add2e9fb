"""`jury adjudicate` against the loopback juror server, through real litellm."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import ConfigError
from jury.judging.ballots import blind_category, draw_order
from jury.judging.families import load_registry
from jury.judging.panels import load_panel, select_jurors
from jury.verdicts.lock import load_locked
from tests.support.fakellm import Reply, ballot_reply
from tests.support.jurytest import FAILURES, executed, gold_position, make_project, says, user_text, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]


def adjudicate(tmp, *args):
    return runner.invoke(app, ["adjudicate", "run.jsonl", *args], catch_exceptions=False)


def verdict_files(tmp):
    return sorted((tmp / "verdicts").glob("adjudication-*.json"))


def records(path):
    return {(r.model, r.question_id): r for r in load_locked(path).records}


# ------------------------------------------------------------------ selection


def test_selection_is_family_disjoint_and_ordered(tmp_path):
    panel = load_panel(write_panel(tmp_path, "http://127.0.0.1:1/v1", FOUR + [("je", "openai")]))
    assert [j.name for j in select_jurors(panel, ["openai"])] == ["jb", "jc", "jd"]
    assert [j.name for j in select_jurors(panel, ["anthropic"])] == ["ja", "jc", "jd"]
    # a distill belongs to both families: neither may judge it
    fams = load_registry().families_of("deepseek-r1-distill-qwen-32b")
    assert fams == ["alibaba", "deepseek"]
    with pytest.raises(ConfigError, match=r"has 2 juror families .* but k = 3 .*available: google, xai"):
        select_jurors(panel, ["openai", "anthropic"])


def test_unknown_family_is_an_error_that_says_how_to_declare_it():
    with pytest.raises(ConfigError, match=r"model 'mystery-7b' has no known family: add a pattern .*\"family\""):
        load_registry().families_of("mystery-7b")
    assert load_registry().families_of("mystery-7b", ["acme"]) == ["acme"]


def test_record_family_overrides_registry(tmp_path, monkeypatch, fake_llm):
    make_project(tmp_path, models=("gpt-x",), families={"gpt-x": "google"})
    monkeypatch.chdir(tmp_path)
    for name, _ in FOUR:
        fake_llm.script(name, says("genuine_error"))
    panel = write_panel(tmp_path, fake_llm.base_url, FOUR)
    assert adjudicate(tmp_path, "--panel", str(panel)).exit_code == 0
    rec = next(iter(records(verdict_files(tmp_path)[0]).values()))
    assert rec.families == ["google"] and rec.jurors == ["ja", "jb", "jd"]


# ------------------------------------------------------------------ mapping and order


@pytest.mark.parametrize(
    "category, expected, credited",
    [
        ("gold_defect", "gold_defect", True),
        ("format_equivalence", "format_equivalence", True),
        ("genuine_error", "genuine_error", False),
        ("neither", "genuine_error", False),
        ("ambiguous", "ambiguous", False),
    ],
)
def test_positions_map_back_to_categories_in_both_orders(project, fake_llm, category, expected, credited):
    for name, _ in FOUR:
        fake_llm.script(name, says(category))
    res = adjudicate(project, "--panel", str(write_panel(project, fake_llm.base_url, FOUR)))
    assert res.exit_code == 0, res.output
    recs = records(verdict_files(project)[0])
    assert len(recs) == 6
    orders = {v.order for r in recs.values() for v in r.votes}
    assert orders == {"gold_first", "candidate_first"}  # both orders were exercised
    for rec in recs.values():
        assert rec.verdict == expected and rec.credited is credited
        assert rec.gold_also_wrong is (category == "neither")
        assert all(v.category == expected for v in rec.votes)


def test_blind_category_table():
    assert blind_category("answer_1", "gold_first") == ("genuine_error", False)
    assert blind_category("answer_2", "gold_first") == ("gold_defect", False)
    assert blind_category("answer_1", "candidate_first") == ("gold_defect", False)
    assert blind_category("answer_2", "candidate_first") == ("genuine_error", False)
    assert blind_category("both", "candidate_first") == ("format_equivalence", False)
    assert blind_category("neither", "gold_first") == ("genuine_error", True)


def test_ballot_is_blind_and_recorded_order_is_what_the_juror_saw(project, fake_llm):
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    assert adjudicate(project, "--panel", str(write_panel(project, fake_llm.base_url, FOUR)), "--seed", "7").exit_code == 0
    doc = load_locked(verdict_files(project)[0])
    assert doc.settings["seed"] == 7
    seen = {}
    for req in fake_llm.requests:
        text = user_text(req)
        assert "gpt-x" not in text and "claude-y" not in text  # no model names
        assert "gold" not in text.lower().replace("gold_", "")  # never told which is gold
        cand_sql = re.search(
            r"<sql_\d>\n(SELECT (?:name FROM item WHERE colour = 'green'|price FROM|99).*?)\n</sql", text, re.S
        ).group(1)
        qid = next(q for q, sql in FAILURES.items() if sql == cand_sql)
        seen.setdefault((req["model"], qid), []).append("gold_first" if gold_position(req) == 1 else "candidate_first")
    for (model, qid), rec in records(verdict_files(project)[0]).items():
        for vote in rec.votes:
            assert vote.order == draw_order(7, qid, model, vote.juror)
            assert vote.order in seen[(vote.juror, qid)]


def test_order_is_reproducible_and_depends_on_seed():
    a = [draw_order(0, q, "m", j) for q in range(50) for j in "abc"]
    assert a == [draw_order(0, q, "m", j) for q in range(50) for j in "abc"]
    assert a != [draw_order(1, q, "m", j) for q in range(50) for j in "abc"]
    assert 0.3 < a.count("gold_first") / len(a) < 0.7


# ------------------------------------------------------------------ majorities and abstentions


def test_majority_no_majority_abstention_and_undecided(project, fake_llm):
    # gpt-x (openai) gets jb, jc, jd; claude-y (anthropic) gets ja, jc, jd
    fake_llm.script("ja", says("gold_defect"))
    fake_llm.script("jb", says("format_equivalence"))
    fake_llm.script("jc", Reply(content="I think the first one is better, honestly."))  # prose: abstains
    fake_llm.script("jd", says("genuine_error"))
    res = adjudicate(project, "--panel", str(write_panel(project, fake_llm.base_url, FOUR)))
    assert res.exit_code == 0, res.output
    recs = records(verdict_files(project)[0])
    for q in FAILURES:
        assert recs[("gpt-x", q)].verdict == "undecided"  # FE, abstain, GE: abstention could have decided
        assert recs[("claude-y", q)].verdict == "undecided"
        jc = next(v for v in recs[("gpt-x", q)].votes if v.juror == "jc")
        assert jc.abstained and "unparseable" in jc.reason
    # the prose juror got one repair attempt per ballot, no more
    assert fake_llm.calls("jc") == 2 * 6


@pytest.mark.slow
def test_unparseable_abstentions_are_final_but_transport_failures_are_retried(project, fake_llm):
    fake_llm.script("ja", says("gold_defect"))
    fake_llm.script("jb", says("gold_defect"))
    fake_llm.script("jc", Reply(status=500))
    fake_llm.script("jd", says("gold_defect"))
    panel = str(write_panel(project, fake_llm.base_url, FOUR))
    res = adjudicate(project, "--panel", panel)
    assert res.exit_code == 3 and "a rerun asks only those 6 ballots" in " ".join(res.output.split())
    calls_jc = fake_llm.calls("jc")
    fake_llm.script("jc", says("gold_defect"))
    before = fake_llm.calls()
    assert adjudicate(project, "--panel", panel).exit_code == 0
    assert fake_llm.calls() - before == 6  # only jc's six ballots asked again
    assert fake_llm.calls("jc") == calls_jc + 6


def test_early_stop_skips_the_third_juror_when_two_agree(project, fake_llm):
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    res = adjudicate(project, "--panel", str(write_panel(project, fake_llm.base_url, FOUR)), "--early-stop")
    assert res.exit_code == 0, res.output
    assert fake_llm.calls() == 12  # 6 failures x 2 jurors
    doc = load_locked(verdict_files(project)[0])
    assert doc.settings["early_stop"] is True
    for rec in doc.records:
        assert rec.verdict == "gold_defect"
        assert [v.skipped for v in rec.votes] == [False, False, True]


def test_early_stop_asks_the_third_juror_on_a_split(project, fake_llm):
    fake_llm.script("ja", says("gold_defect"))
    fake_llm.script("jb", says("genuine_error"))
    fake_llm.script("jc", says("gold_defect"))
    fake_llm.script("jd", says("gold_defect"))
    assert adjudicate(project, "--panel", str(write_panel(project, fake_llm.base_url, FOUR)), "--early-stop").exit_code == 0
    # gpt-x: jb, jc disagree -> jd asked; claude-y: ja, jc agree -> jd skipped
    assert fake_llm.calls("jd") == 3
    assert all(r.verdict == "gold_defect" for r in load_locked(verdict_files(project)[0]).records)


def test_labelled_style_reproduces_the_published_protocol(project, fake_llm):
    def labelled(req):
        text = user_text(req)
        assert "Gold (reference) answer" in text and "Model answer" in text
        return ballot_reply("format_equivalence")

    for name, _ in FOUR:
        fake_llm.script(name, labelled)
    panel = write_panel(project, fake_llm.base_url, FOUR, style="labelled")
    assert adjudicate(project, "--panel", str(panel)).exit_code == 0
    doc = load_locked(verdict_files(project)[0])
    assert doc.panel.ballot_style == "labelled"
    assert {r.verdict for r in doc.records} == {"format_equivalence"}
    assert "adjudicate-labelled-v1" in doc.prompts


# ------------------------------------------------------------------ plan, keys, cost


def test_plan_makes_no_calls(project, fake_llm):
    res = adjudicate(project, "--panel", str(write_panel(project, fake_llm.base_url, FOUR)), "--plan")
    assert res.exit_code == 0, res.output
    assert fake_llm.calls() == 0 and not (project / "verdicts").exists()
    assert "18 ballots for 6 failures" in res.output.replace("\n", " ")


def test_missing_key_stops_before_any_call(project, fake_llm, monkeypatch):
    monkeypatch.delenv("JURY_TEST_KEY", raising=False)
    panel = write_panel(project, fake_llm.base_url, FOUR)
    panel.write_text(panel.read_text().replace('family = "google"', 'family = "google"\napi_key_env = "JURY_TEST_KEY"'))
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel)])
    assert res.exit_code == 1 and "set JURY_TEST_KEY" in res.output
    assert fake_llm.calls() == 0


def test_max_cost_stops_before_the_cap_and_keeps_votes(project, fake_llm):
    # a priced model name, served by the loopback server
    priced = ["gpt-4o", "gpt-4o-mini", "gpt-4o-2024-08-06", "gpt-4-turbo"]  # in litellm's price map at its floor too
    jurors = [(n, f, f"openai/{m}") for (n, f), m in zip(FOUR, priced)]
    for m in priced:
        fake_llm.script(m, says("gold_defect"))
    panel = str(write_panel(project, fake_llm.base_url, jurors))
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", panel, "--max-cost", "0.02"])
    assert res.exit_code == 1 and "cost cap" in res.output, res.output
    asked = fake_llm.calls()
    assert 0 < asked < 18
    assert not verdict_files(project)
    from jury.execution.store import Store

    with Store(project / ".jury" / "store.db") as st:
        spent = st.db.execute("SELECT sum(cost_usd) FROM calls").fetchone()[0]
        assert 0 < spent <= 0.02
        assert st.db.execute("SELECT count(*) FROM votes").fetchone()[0] == asked
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", panel])
    assert res.exit_code == 0
    doc = load_locked(verdict_files(project)[0])
    distinct = {v.request_sha256 for r in doc.records for v in r.votes}
    assert fake_llm.calls() == len(distinct)  # the rest, nothing repeated
    assert doc.totals.cost_usd > spent


# ------------------------------------------------------------------ crash and resume


@pytest.mark.slow
def test_killed_run_resumes_without_repeating_calls(project, fake_llm):
    fake_llm.latency_s = 0.3
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    panel.write_text(panel.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    cmd = [sys.executable, "-m", "jury", "adjudicate", "run.jsonl", "--panel", str(panel)]
    proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while fake_llm.calls() < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    first = fake_llm.calls()
    assert 6 <= first < 18 and not verdict_files(project)
    time.sleep(0.5)  # let in-flight requests finish at the server
    first = fake_llm.calls()
    fake_llm.latency_s = 0.0
    done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # every ballot asked once, except at most the ones in flight when the process died
    assert 18 <= fake_llm.calls() <= 18 + 4
    again = fake_llm.calls()
    rerun = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0
    assert fake_llm.calls() == again  # a finished rerun makes no calls at all
    # ...and finds the same verdicts already locked: no duplicate file
    assert "unchanged" in rerun.stdout and len(verdict_files(project)) == 1


def test_api_keys_never_reach_store_or_verdicts(project, fake_llm, monkeypatch):
    secret = "sk-test-secret-value-42"
    monkeypatch.setenv("JURY_TEST_KEY", secret)
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    panel.write_text(panel.read_text().replace("max_retries = 2", 'max_retries = 2\napi_key_env = "JURY_TEST_KEY"'))
    assert adjudicate(project, "--panel", str(panel)).exit_code == 0
    assert secret.encode() not in (project / ".jury" / "store.db").read_bytes()
    wal = project / ".jury" / "store.db-wal"
    assert not wal.exists() or secret.encode() not in wal.read_bytes()
    assert secret not in verdict_files(project)[0].read_text()


def test_identical_ballots_in_one_run_are_asked_once_and_agree_with_the_store(project, fake_llm):
    """Both models give the same wrong SQL: a shared juror with the same drawn order gets the
    same request twice. One call must serve both, and a rerun must reproduce the verdicts."""
    import random

    rng = random.Random(3)
    verdicts = ["answer_1", "answer_2", "both", "neither", "ambiguous"]
    for name, _ in FOUR:
        fake_llm.script(name, lambda req: ballot_reply(rng.choice(verdicts)))  # a fickle juror
    panel = str(write_panel(project, fake_llm.base_url, FOUR))
    assert adjudicate(project, "--panel", panel, "-o", "verdicts/first.json").exit_code == 0
    doc = load_locked(project / "verdicts" / "first.json")
    hashes = [v.request_sha256 for r in doc.records for v in r.votes]
    assert len(set(hashes)) < len(hashes)  # the case arises here
    assert fake_llm.calls() == len(set(hashes))  # one call per distinct request
    calls = fake_llm.calls()
    assert adjudicate(project, "--panel", panel, "-o", "verdicts/second.json").exit_code == 0
    assert fake_llm.calls() == calls
    again = load_locked(project / "verdicts" / "second.json")
    assert [(r.model, r.question_id, r.verdict, [v.raw_verdict for v in r.votes]) for r in again.records] == [
        (r.model, r.question_id, r.verdict, [v.raw_verdict for v in r.votes]) for r in doc.records
    ]


def test_a_missing_key_is_refused_before_any_sql_runs(project, fake_llm, monkeypatch):
    """Issue 42.5: a missing key was found after the whole evaluation (a minute of SQL on BIRD).
    Now it is the first thing checked, from the run files alone: nothing is executed or called."""
    monkeypatch.delenv("JURY_TEST_KEY", raising=False)
    panel = write_panel(project, fake_llm.base_url, FOUR)
    panel.write_text(panel.read_text().replace('family = "google"', 'family = "google"\napi_key_env = "JURY_TEST_KEY"'))
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel)])
    assert res.exit_code == 1 and "no API key for panel 'test': set JURY_TEST_KEY" in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert fake_llm.calls() == 0 and executed(project) == 0 and not verdict_files(project)
    # --plan calls nobody: it needs no key, and executes
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--plan"])
    assert res.exit_code == 0, res.output
    assert executed(project) > 0 and fake_llm.calls() == 0


def test_a_juror_no_model_serves_is_refused_before_any_sql_runs(project, fake_llm):
    """A loopback juror whose server is not running: refused from the run files, nothing executed."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    panel = write_panel(project, f"http://127.0.0.1:{port}/v1", FOUR)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel)])
    assert res.exit_code == 1 and f"nothing answers at http://127.0.0.1:{port}/v1" in res.output
    assert executed(project) == 0


def test_a_cost_cap_refuses_a_juror_it_cannot_price(project, fake_llm):
    """Issue 42.5: a juror litellm has no price for was counted $0 against --max-cost, so the cap
    bounded nothing. With a cap it is refused in one line, before any SQL, --plan included; a
    juror the panel declares free passes."""
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    panel = write_panel(project, fake_llm.base_url, FOUR)  # openai/ja ...: names no price map knows
    for extra in ([], ["--plan"]):
        res = adjudicate(project, "--panel", str(panel), "--max-cost", "5", *extra)
        assert res.exit_code == 1, res.output
        out = " ".join(res.output.split())
        assert "juror 'ja': litellm has no price for model 'openai/ja' (and 3 more jurors)" in out
        assert "cost cap (max_cost $5)" in out and "free = true" in out
        assert len(res.output.strip().splitlines()) == 1
        assert fake_llm.calls() == 0 and executed(project) == 0
    panel.write_text(panel.read_text().replace("[[jurors]]\n", "[[jurors]]\nfree = true\n"))
    res = adjudicate(project, "--panel", str(panel), "--max-cost", "5")
    assert res.exit_code == 0, res.output
    assert fake_llm.calls() > 0


@pytest.mark.parametrize(
    "model, families",
    [
        ("gpt-4o", ["openai"]),
        ("o3-mini", ["openai"]),
        ("openai/o1", ["openai"]),
        ("gpt-oss-120b", ["openai"]),
        ("openrouter/anthropic/claude-3.5-sonnet", ["anthropic"]),
        ("bedrock/anthropic.claude-3-haiku", ["anthropic"]),
        ("ollama/qwen2.5-coder:7b", ["alibaba"]),
        ("ollama_chat/gemma3", ["google"]),
        ("llamafile/mistral-7b", ["mistral"]),
        ("groq/llama-3.1-70b", ["meta"]),
        ("sambanova/DeepSeek-R1", ["deepseek"]),
        ("amazon.nova-pro-v1:0", ["amazon"]),
        ("AIDC-AI/Marco-o1", ["alibaba"]),
        ("deepseek-r1-distill-qwen-32b", ["alibaba", "deepseek"]),
        ("EleutherAI/gpt-neox-20b", ["eleutherai"]),
        ("palmyra-x-004", ["writer"]),
        ("qwen2.5-7b-seed-42", ["alibaba"]),
        ("phi-4", ["microsoft"]),
        ("codes-15b", ["bigcode"]),
    ],
)
def test_family_patterns_match_the_model_name_not_its_route(model, families):
    assert load_registry().families_of(model) == families


@pytest.mark.parametrize("model", ["arcee-ai/SuperNova-Medius", "ollama/mystery-7b", "photon-1"])
def test_names_that_only_look_like_a_family_are_unknown(model):
    with pytest.raises(ConfigError, match="has no known family"):
        load_registry().families_of(model)


def test_schema_on_the_ballot_does_not_depend_on_which_query_is_gold(tmp_path):
    from jury.execution.schema import describe_columns
    from tests.support.helpers import make_db

    db = make_db(tmp_path)
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE power(id INTEGER, item_id INTEGER)")
    conn.commit()
    conn.close()
    a, b = "SELECT name FROM item", "SELECT count(*) FROM power JOIN item ON power.item_id = item.id"
    assert describe_columns(db, a, b) == describe_columns(db, b, a)
    assert describe_columns(db, a, b).splitlines()[0].startswith("item(")


def test_preview_is_bounded_and_one_value_cannot_fake_rows():
    from jury.inputs.records import ExecResult
    from jury.judging.ballots import PREVIEW_CHARS, preview

    tricky = preview(ExecResult(status="ok", columns=["a", "b"], rows=[("line1\nline2 | fake", "x" * 5000)], row_count=1))
    lines = tricky.splitlines()
    assert lines[1].startswith("line1\\nline2 \\| fake | xxx") and lines[1].endswith("…")
    assert "(1 row in total)" in tricky  # the row is shown, cut, not dropped
    wide = preview(ExecResult(status="ok", columns=[f"c{i}" for i in range(600)], rows=[tuple(range(600))] * 3, row_count=3))
    assert len(wide) <= PREVIEW_CHARS + 100 and "showing the first 1" in wide


def test_a_released_ballot_keeps_its_request_hash_and_drops_its_prompt():
    """Adjudication drops each group's prompts once it is done (memory bounded at a benchmark's
    size); the verdict file still needs every ballot's request hash, which must stay the one
    the prompt gave (the key its vote is stored under)."""
    from jury.judging.juror import JurorSpec
    from jury.judging.plan import Ballot

    juror = JurorSpec(name="ja", model="openai/ja", family="openai")

    def ballot(text):
        return Ballot("adjudication", 1, "m", juror, "blind", [{"role": "user", "content": text}], "0" * 64)

    kept, released, other = ballot("the prompt"), ballot("the prompt"), ballot("another prompt")
    assert kept.request_sha256 != other.request_sha256  # the hash does depend on the prompt
    released.release()
    assert released.messages == []
    assert released.request_sha256 == kept.request_sha256
