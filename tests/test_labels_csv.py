"""`jury labels import csv`: a generic CSV of gold labels (question_id, defective, type, note, annotator)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from jury.errors import InputError
from jury.inputs.io import load_gold
from jury.inputs.label_import import import_labels
from jury.inputs.labels import dump_labels, load_labels
from tests.support.helpers import write_gold

HEADER = ["question_id", "defective", "type", "note", "annotator"]


def write(path: Path, rows) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows(rows)
    return path


def test_rows_become_gold_labels(tmp_path):
    gold = load_gold(write_gold(tmp_path))
    f = write(
        tmp_path / "mine.csv",
        [
            [1, "true", "wrong_table", "reads the wrong table", "ann"],
            [2, "no", "", "", "ann"],
            [1, "1", "", "", "bob"],  # defective, no type
            [999, "false", "", "", "ann"],  # not in the gold file: reported, not labelled
        ],
    )
    report = import_labels("csv", [f], gold)
    got = [(lab.question_id, lab.annotator, lab.gold_defective, lab.defect_type, lab.note) for lab in report.labels]
    assert got == [
        (1, "ann", True, "wrong_table", "reads the wrong table"),
        (2, "ann", False, None, None),
        (1, "bob", True, None, None),
    ]
    assert {lab.source for lab in report.labels} == {"csv:mine.csv"}
    assert len(report.unmatched) == 1 and "999" in report.unmatched[0]
    out = tmp_path / "labels.jsonl"
    out.write_text(dump_labels(report.labels))
    assert len(load_labels([out]).gold) == 3


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ([1, "maybe", "", "", "ann"], "mine.csv:2: defective = 'maybe'"),
        ([1, "true", "typo", "", "ann"], "mine.csv:2: type = 'typo': one of"),
        ([1, "false", "other", "", "ann"], "mine.csv:2: type = 'other' on a row that is not defective"),
        ([1, "true", "", "", " "], "mine.csv:2: annotator is empty"),
    ],
)
def test_bad_rows_are_one_line(tmp_path, row, message):
    gold = load_gold(write_gold(tmp_path))
    with pytest.raises(InputError, match=message) as exc:
        import_labels("csv", [write(tmp_path / "mine.csv", [row])], gold)
    assert "\n" not in str(exc.value)


def test_a_second_row_of_one_annotator_is_refused(tmp_path):
    gold = load_gold(write_gold(tmp_path))
    f = write(tmp_path / "mine.csv", [[1, "true", "", "", "ann"], [1, "false", "", "", "ann"]])
    with pytest.raises(InputError, match=r"mine.csv:3: 'ann' labelled question 1 already at .*mine.csv:2"):
        import_labels("csv", [f], gold)
