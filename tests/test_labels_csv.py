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


def test_a_csv_import_reads_its_rows_one_at_a_time(tmp_path, monkeypatch):
    """Issue 43: the importer consumes the file's lines as an iterator: its first label comes out
    when only the header and its row have been read, and a bad row further on is found when the
    import gets there (the file is never held whole, nor its labels)."""
    import jury.inputs.label_import as li
    from jury.inputs.label_import import LabelImportReport, iter_csv_labels

    gold = load_gold(write_gold(tmp_path))
    f = write(tmp_path / "mine.csv", [[1, "true", "", "", f"a{i}"] for i in range(50)] + [[1, "maybe", "", "", "z"]])
    pulled = []
    real = li.text_lines

    def counting(*args, **kwargs):
        cm = real(*args, **kwargs)

        class Counted:
            def __enter__(self):
                lines = cm.__enter__()
                return (pulled.append(line) or line for line in lines)

            def __exit__(self, *exc):
                return cm.__exit__(*exc)

        return Counted()

    monkeypatch.setattr(li, "text_lines", counting)
    labels = iter_csv_labels([f], gold, LabelImportReport("csv"))
    first = next(labels)
    assert (first.question_id, first.annotator) == (1, "a0") and len(pulled) <= 3
    assert len([next(labels) for _ in range(10)]) == 10 and len(pulled) <= 13
    with pytest.raises(InputError, match=r"mine.csv:52: defective = 'maybe'"):
        list(labels)


def test_an_import_with_an_output_streams_the_labels_it_would_keep(tmp_path):
    """With an output, a csv import writes each label as it is read (``labels`` stays empty,
    ``labels_written`` counts them): the file is the one the in-memory import renders, and a bad
    row anywhere leaves the output as it was (nothing half-written, no temporary file)."""
    from jury.jobs.labels import import_labels as api_import

    gold_path = write_gold(tmp_path)
    rows = [[1, "true", "wrong_table", "n", "ann"], [2, "no", "", "", "ann"], [1, "1", "", "", "bob"], [999, "no", "", "", "x"]]
    f = write(tmp_path / "mine.csv", rows)
    kept = api_import("csv", [f], gold=gold_path)
    out = tmp_path / "labels.jsonl"
    found = api_import("csv", [f], gold=gold_path, output=out)
    assert found.labels == [] and found.labels_written == 3 and found.written == [out]
    assert out.read_text() == kept.render() and len(load_labels([out]).gold) == 3
    assert "csv:mine.csv: 2 labels by ann" in found.notes and "csv:mine.csv: 1 labels by bob" in found.notes
    assert found.notes == kept.notes and len(found.unmatched) == 1
    bad = write(tmp_path / "bad.csv", [*rows[:3], [3, "maybe", "", "", "ann"]])
    with pytest.raises(InputError, match="bad.csv:5: defective"):
        api_import("csv", [bad], gold=gold_path, output=out)
    assert out.read_text() == kept.render() and sorted(p.name for p in tmp_path.glob(".*")) == []
    with pytest.raises(InputError, match="no labels"):
        api_import("csv", [write(tmp_path / "none.csv", [[999, "no", "", "", "x"]])], gold=gold_path, output=tmp_path / "n.jsonl")
    assert not (tmp_path / "n.jsonl").exists()
