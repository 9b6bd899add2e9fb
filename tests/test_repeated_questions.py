"""A gold file that repeats a question (BIRD mini-dev's rows 487 and 488 repeat 137 and 138):
a prediction file's entries at the repeated rows are named in one line, said differently when
their answer differs from the first row's; each question is scored once (issue 42.3)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.badinput import run_jury
from tests.support.helpers import EXAMPLE

DB = "\t----- bird -----\tsuperhero"


def _project(tmp: Path) -> tuple[list[dict], dict[str, str]]:
    dev = json.loads((EXAMPLE / "dev.json").read_text())[:6]
    gold = [*dev, dev[2], dev[4]]  # rows 6 and 7 repeat questions of rows 2 and 4, exactly
    (tmp / "gold.json").write_text(json.dumps(gold))
    (tmp / "databases").symlink_to(EXAMPLE / "databases")
    answers = {str(i): g["SQL"] + DB for i, g in enumerate(dev)}  # every first row answered with its gold
    answers["6"] = dev[2]["SQL"] + DB  # the same answer again
    answers["7"] = "SELECT 1" + DB  # another answer at the repeated row
    (tmp / "predict_dev.json").write_text(json.dumps(answers))
    return gold, answers


def test_entries_at_repeated_rows_are_named_in_one_line(tmp_path):
    gold, _answers = _project(tmp_path)
    args = ["score", "predict_dev.json", "--gold", "gold.json", "--db-root", "databases", "--store", "s.db", "-f", "json"]
    res = run_jury(args, tmp_path)
    assert res.returncode == 0, res.stderr
    q2, q4 = gold[2]["question_id"], gold[4]["question_id"]
    line = next(x for x in res.stderr.splitlines() if "repeat" in x)
    assert f"entries 6 (question {q2!r}, first at 2), 7 (question {q4!r}, first at 4) repeat a question" in line
    assert "(1 of the repeats answers differently there)" in line and "BIRD's scripts score every row" in line
    (model,) = json.loads(res.stdout)["models"]
    assert (model["strict"]["k"], model["strict"]["n"]) == (6, 6)  # six questions, each its gold: by construction
