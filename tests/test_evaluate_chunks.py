"""evaluate compares CHUNK_QUESTIONS questions at a time and keeps only the results ``keep``
wants (issue 46): the outcomes, an adjudication's ballots and its verdict records are the same
whatever the chunk size, and an adjudication keeps exactly the results its ballots show."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

import jury
import jury.judging.adjudication as adjudication
from jury.compare import outcomes
from jury.inputs.io import load_gold, load_runs
from jury.verdicts.lock import load_locked
from tests.support.helpers import make_db, write_gold, write_runs
from tests.support.jurytest import says, write_panel

FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]

# By model (not by question), so a chunk's pairs are spread over the records; "SELECT 99" answers
# three questions (one result shared across chunks); matches, an error and a missing answer.
RUNS = [
    {"model": "gpt-x", "question_id": 1, "sql": "SELECT name FROM item WHERE colour = 'green'"},
    {"model": "gpt-x", "question_id": 2, "sql": "SELECT price FROM item ORDER BY price"},
    {"model": "gpt-x", "question_id": 3, "sql": "SELECT 99"},
    {"model": "claude-y", "question_id": 1, "sql": "SELECT name FROM item WHERE colour = 'red'"},
    {"model": "claude-y", "question_id": 2, "sql": "SELECT 99"},
    {"model": "claude-y", "question_id": 3, "sql": "SELECT count(*) FROM item"},
    {"model": "gemini-z", "question_id": 1, "sql": "SELECT 99"},
    {"model": "gemini-z", "question_id": 2, "sql": "SELECT nope FROM item"},
    {"model": "gemini-z", "question_id": 3, "sql": ""},
]


def _project(tmp: Path) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    make_db(tmp / "dbs")
    write_gold(tmp)
    write_runs(tmp, RUNS)
    (tmp / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    return tmp


def _evaluate(tmp: Path, keep=None) -> outcomes.Evaluation:
    gold = load_gold(tmp / "gold.json")
    with jury.Store(tmp / "store.db") as store:
        return outcomes.evaluate(
            gold, load_runs([tmp / "run.jsonl"], gold), tmp / "dbs", store, outcomes.Settings(workers=1), keep=keep
        )


@pytest.mark.parametrize("chunk", [1, 2])
def test_outcomes_and_results_do_not_depend_on_the_chunk_size(tmp_path, monkeypatch, chunk):
    project = _project(tmp_path)
    whole = _evaluate(project)
    monkeypatch.setattr(outcomes, "CHUNK_QUESTIONS", chunk)
    chunked = _evaluate(project)
    assert [asdict(p) for p in chunked.pairs] == [asdict(p) for p in whole.pairs]
    assert [(p.model, p.question_id) for p in chunked.pairs] == [(r["model"], r["question_id"]) for r in RUNS if r["sql"]]
    assert chunked.gold_errors == whole.gold_errors
    assert list(chunked.results) == list(whole.results)  # every result, in the same order
    assert chunked.results == whole.results


def test_keep_keeps_the_results_of_the_pairs_it_wants_only(tmp_path, monkeypatch):
    project = _project(tmp_path)
    monkeypatch.setattr(outcomes, "CHUNK_QUESTIONS", 1)
    whole = _evaluate(project)
    kept = _evaluate(project, keep=lambda p: p.outcome == "mismatch")
    assert [asdict(p) for p in kept.pairs] == [asdict(p) for p in whole.pairs]
    wanted = {k for p in whole.pairs if p.outcome == "mismatch" for k in (p.gold_key, p.pred_key)}
    assert set(kept.results) == wanted and len(wanted) < len(whole.results)
    assert all(kept.results[k] == whole.results[k] for k in wanted)


def _adjudicate(project: Path, fake_llm, monkeypatch, **kwargs):
    """An adjudication in ``project``: (its ballots, the results its evaluation kept, its verdict records)."""
    monkeypatch.chdir(project)
    seen: dict = {}
    plan = adjudication.plan_adjudication

    def planned(ev, *args, **kw):
        seen["results"] = set(ev.results)
        seen["plan"] = plan(ev, *args, **kw)
        return seen["plan"]

    monkeypatch.setattr(adjudication, "plan_adjudication", planned)
    panel = write_panel(project, fake_llm.base_url, FOUR)
    done = jury.adjudicate("run.jsonl", panel=str(panel), seed=3, **kwargs)
    ballots = [(b.question_id, b.model, b.juror.name, b.meta, b.request_sha256) for b in seen["plan"].ballots()]
    files = sorted((project / "verdicts").glob("adjudication-*.json"))
    verdicts = [r.model_dump(mode="json") for r in load_locked(files[0]).records] if files else None
    return ballots, seen["results"], verdicts, done


def test_an_adjudication_is_the_same_in_chunks_of_one_question(tmp_path, monkeypatch, fake_llm):
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    whole = _adjudicate(_project(tmp_path / "whole"), fake_llm, monkeypatch)
    monkeypatch.setattr(outcomes, "CHUNK_QUESTIONS", 1)
    chunked = _adjudicate(_project(tmp_path / "chunked"), fake_llm, monkeypatch)
    assert whole[0] and chunked[0] == whole[0]  # the same ballots, prompts and all (their request hashes)
    assert chunked[2] is not None and chunked[2] == whole[2]  # the same verdict records
    assert json.dumps(chunked[3].models, default=str) == json.dumps(whole[3].models, default=str)


@pytest.mark.parametrize("kwargs", [{}, {"model": "gemini-z"}])
def test_an_adjudication_keeps_exactly_the_results_its_ballots_show(tmp_path, monkeypatch, fake_llm, kwargs):
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    monkeypatch.setattr(outcomes, "CHUNK_QUESTIONS", 1)
    ballots, kept, _, _ = _adjudicate(_project(tmp_path), fake_llm, monkeypatch, plan=True, **kwargs)
    shown = {k for *_, meta, _ in ballots for k in (meta["gold_key"], meta["answer_key"])}
    assert shown and kept == shown


def test_review_passes_keep_every_result(tmp_path, monkeypatch, fake_llm):
    monkeypatch.setattr(outcomes, "CHUNK_QUESTIONS", 1)
    project = _project(tmp_path)
    _, kept, _, _ = _adjudicate(project, fake_llm, monkeypatch, plan=True, review_passes=1.0)
    assert kept == set(_evaluate(project).results)


def test_the_ballots_of_one_answer_in_one_order_share_their_prompt_text(tmp_path, monkeypatch, fake_llm):
    seen = []
    plan = adjudication.plan_adjudication
    monkeypatch.setattr(adjudication, "plan_adjudication", lambda *a, **k: seen.append(plan(*a, **k)) or seen[-1])
    monkeypatch.chdir(_project(tmp_path))
    jury.adjudicate("run.jsonl", panel=str(write_panel(tmp_path, fake_llm.base_url, FOUR)), plan=True, repeats=2)
    alike: dict = {}
    for b in seen[0].ballots():
        alike.setdefault((b.model, b.question_id, b.meta["order"]), []).append(b)
    shared = [group for group in alike.values() if len(group) > 1]
    assert shared  # jurors (and repeats) that see one answer in the same order
    for first, *others in shared:
        for b in others:
            assert b.messages == first.messages and b.messages is not first.messages  # each its own dicts
            assert all(m is not n and m["content"] is n["content"] for m, n in zip(b.messages, first.messages, strict=True))
