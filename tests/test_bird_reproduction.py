"""On the superhero questions the `bird` comparator must reproduce BIRD's own rule exactly.

The pinned figures were measured by the team with an independent implementation of
BIRD's evaluation (set(pred) == set(gold), errors and timeouts score 0).
"""

import pytest

from jury.compare.outcomes import Settings, evaluate
from jury.execution.store import Store
from jury.inputs.importers import Selection, import_bird_predictions
from jury.inputs.io import load_gold, load_gold_list, load_runs
from jury.results.scoring import score_all
from tests.support.helpers import EXAMPLE, SHARED_BIRD

PINNED = {
    "codes-15b-evidence": 109,
    "gsr": 117,
    "ta-sql-gpt4": 106,
    "codes-1b": 75,
    "dail-sql-9shot-presklsim": 97,
}


def bird_matches(gold, records, db_root, tmp_path):
    with Store(tmp_path / "store.db") as store:
        ev = evaluate(gold, records, db_root, store, Settings(comparator="bird", workers=2))
    return {s.model: (s.strict["k"], s.routed) for s in score_all(ev.pairs)}


def test_bundled_example_reproduces_bird(tmp_path):
    gold = load_gold(EXAMPLE / "dev.json")
    records = load_runs([EXAMPLE / "run.jsonl"], gold)
    got = bird_matches(gold, records, EXAMPLE / "databases", tmp_path)
    assert {m: got[m] for m in PINNED} == {m: (k, 129) for m, k in PINNED.items()}


@pytest.mark.skipif(not SHARED_BIRD.is_dir(), reason="../shared BIRD data not present")
def test_shared_predictions_imported_afresh_reproduce_bird(tmp_path):
    dev = load_gold_list(SHARED_BIRD / "dev.json")
    files = {
        "codes-15b-evidence": "codes-15b-evidence.json",
        "gsr": "gsr.sql",
        "ta-sql-gpt4": "ta-sql-gpt4.json",
        "codes-1b": "codes-1b.json",
        "dail-sql-9shot-presklsim": "dail-sql-9shot-presklsim.txt",
    }
    records = []
    for model, name in files.items():
        rep = import_bird_predictions(SHARED_BIRD / "predictions" / name, dev, model, Selection(only_db={"superhero"}))
        assert len(rep.records) == 129
        records += rep.records
    gold = {g.question_id: g for g in dev}
    got = bird_matches(gold, records, SHARED_BIRD / "databases", tmp_path)
    assert got == {m: (k, 129) for m, k in PINNED.items()}
