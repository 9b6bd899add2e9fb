"""`jury labels import`: FLEX, Wretblad et al. and Arcwise human labels into jury's label format."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
from sklearn.metrics import cohen_kappa_score

from jury.errors import InputError
from jury.inputs.io import dump_runs, load_gold, load_runs
from jury.inputs.label_import import (
    FAIL_CATEGORIES,
    PASS_CATEGORIES,
    _majority,
    dump_gold_items,
    import_labels,
    normalise_question,
)
from jury.inputs.labels import CONSENSUS, dump_labels, load_labels
from jury.vocab import Verdict
from tests.support.badinput import Case, check_case, run_jury
from tests.support.helpers import GOLD, REPO, SHARED_BIRD, write_gold

SHARED_LABELS = SHARED_BIRD.parent / "labels"
FLEX = SHARED_LABELS / "flex" / "results"
SCHEMAS = REPO / "verdicts" / "schema"
needs_shared = pytest.mark.skipif(not SHARED_LABELS.is_dir(), reason="../shared label data not present")


def schema_check(path: Path, kind: str) -> None:
    validator = jsonschema.Draft202012Validator(json.loads((SCHEMAS / f"labels-{kind}-v1.schema.json").read_text()))
    for line in path.read_text().splitlines():
        validator.validate(json.loads(line))


def write_out(tmp_path: Path, report) -> tuple[Path, Path, Path]:
    paths = tmp_path / "labels.jsonl", tmp_path / "run.jsonl", tmp_path / "gold-out.jsonl"
    paths[0].write_text(dump_labels(report.labels))
    paths[1].write_text(dump_runs(report.runs))
    paths[2].write_text(dump_gold_items(report.gold_items))
    return paths


# ---------------------------------------------------------------- the real sets (../shared)


@needs_shared
def test_flex_agreement_reproduces_the_published_kappas(tmp_path):
    gold = load_gold(SHARED_BIRD / "dev.json")
    files = [FLEX / "agreement" / name for name in ("experts_agreement_200.csv", "fp.jsonl", "fn.jsonl")]
    report = import_labels("flex-agreement", files, gold)
    assert (len(report.labels), len(report.runs), report.unmatched, report.ambiguous) == (800, 200, [], [])
    assert report.by_annotator() == Counter({("flex-agreement", who): 200 for who in ("A", "B", "C", CONSENSUS)})
    labels_path, run_path, gold_path = write_out(tmp_path, report)
    labels = load_labels([labels_path])
    schema_check(labels_path, "adjudication")
    written_gold = load_gold(gold_path)
    runs = load_runs([run_path], written_gold)
    assert len({(r.model, r.question_id) for r in runs}) == 200
    assert all(written_gold[r.question_id].recorded is not None and r.recorded is not None for r in runs)
    ex = {(r.model, r.question_id): int(r.recorded.match) for r in runs}  # type: ignore[union-attr]
    by = {
        who: {(lab.model, lab.question_id): int(lab.credited) for lab in labels.adjudication if lab.annotator == who}
        for who in ("A", "B", "C", CONSENSUS)
    }
    keys = sorted(ex, key=str)
    kappa = cohen_kappa_score([ex[k] for k in keys], [by[CONSENSUS][k] for k in keys])
    assert round(kappa, 2) == 0.62
    pairwise = {
        a + b: round(cohen_kappa_score([by[a][k] for k in keys], [by[b][k] for k in keys]), 2)
        for a, b in (("A", "B"), ("A", "C"), ("B", "C"))
    }
    assert pairwise == {"AB": 0.82, "AC": 0.77, "BC": 0.79}
    assert report.counts["consensus 0.5 labelled incorrect"] == 2


@needs_shared
def test_flex_categories_real(tmp_path):
    gold = load_gold(SHARED_BIRD / "dev.json")
    cat = FLEX / "categorization_agreement"
    files = [cat / "categorized_fp100.jsonl", cat / "experts_categorization.csv", cat / "categorized_fn100.jsonl"]
    report = import_labels("flex-categories", files, gold)
    assert len(report.runs) == 200 and report.unmatched == []
    assert len(report.labels) + len(report.unresolved) == 200
    assert len(report.labels) == 190
    assert sum(r.db_id == "superhero" for r in report.runs) == 15
    labels_path, run_path, gold_path = write_out(tmp_path, report)
    schema_check(labels_path, "adjudication")
    load_runs([run_path], load_gold(gold_path))
    labels = load_labels([labels_path]).adjudication
    # every passed pair the experts judged wrong is a genuine error; credited categories are correct
    runs = {(r.model, r.question_id): r for r in report.runs}
    for lab in labels:
        passed = runs[(lab.model, lab.question_id)].recorded.match  # type: ignore[union-attr]
        if lab.category in (Verdict.GOLD_DEFECT, Verdict.FORMAT_EQUIVALENCE):
            assert lab.label == "correct" and not passed
        if lab.label == "incorrect":
            assert lab.category == Verdict.GENUINE_ERROR
    assert Counter(lab.category for lab in labels)[Verdict.GOLD_DEFECT] == 44


@needs_shared
def test_wretblad_real(tmp_path):
    gold = load_gold(SHARED_BIRD / "dev.json")
    w = SHARED_LABELS / "wretblad"
    report = import_labels("wretblad", [w / "financial_annotations.csv", w / "sampled_annotations.csv"], gold)
    assert Counter(lab.source for lab in report.labels) == {"wretblad-financial": 106, "wretblad-sampled": 80}
    assert report.unmatched == [] and report.counts["question text differs"] == 15
    assert Counter(lab.source for lab in report.labels if lab.gold_defective) == {
        "wretblad-financial": 32,
        "wretblad-sampled": 21,
    }
    path = tmp_path / "w.jsonl"
    path.write_text(dump_labels(report.labels))
    schema_check(path, "gold")
    assert len(load_labels([path]).gold) == 186


@needs_shared
def test_arcwise_real(tmp_path):
    gold = load_gold(SHARED_BIRD / "dev.json")
    original = SHARED_BIRD / "mini-dev" / "data" / "mini_dev_sqlite.json"
    report = import_labels("arcwise", [SHARED_BIRD / "corrections" / "arcwise_mini_dev_cleaned.json"], gold, original=original)
    assert len(report.labels) == 498 and report.unmatched == []
    assert report.counts["changed"] == 129 and report.counts["SQL changed"] == 78
    assert sum(lab.gold_defective for lab in report.labels) == 129
    assert sum(lab.corrected_sql is not None for lab in report.labels) == 78
    assert report.counts["original SQL differs from the gold file"] == 13
    path = tmp_path / "a.jsonl"
    path.write_text(dump_labels(report.labels))
    schema_check(path, "gold")


# ---------------------------------------------------------------- synthetic sets


def pair(index, question, ex, pred="SELECT 1", gt_exec="| 1 |\nshape=(1, 1)"):
    return {
        "index": index,
        "schema": "Database: shop\nCREATE TABLE item (id INTEGER)",
        "question": question,
        "hint": "",
        "pred_sql": pred,
        "pred_exec": "| 1 |\nshape=(1, 1)",
        "gt_sql": "SELECT count(*) FROM item" if index == 3 else "SELECT name FROM item WHERE colour = 'red'",
        "gt_exec": gt_exec,
        "hardness": "simple",
        "ex": ex,
    }


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_csv(path: Path, header, rows, bom: str = "") -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        fh.write(bom)
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


AGREE_HEADER = ["Index", "FN_consensus", "FN_avg", "FN_A", "FN_B", "FN_C", "FP_consensus", "FP_avg", "FP_A", "FP_B", "FP_C"]


def agreement_files(tmp: Path, rows=None) -> list[Path]:
    """Named as FLEX names them: fn.jsonl holds the passed pairs, fp.jsonl the failed ones."""
    passed = [pair(1, "Names of red items?", 1), pair(1, "Names of red items", 1, pred="SELECT 2"), pair(99, "Unknown?", 1)]
    failed = [pair(3, "How many items?", 0), pair(77, "names of RED items?", 0), pair(1, "Names of red items?", 0, pred="x")]
    rows = rows or [
        [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1],
        [1, 1, 0.67, 1, 1, 0, 0.5, 0.33, 1, 0, 0],
        [2, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1],
    ]
    return [
        write_jsonl(tmp / "fn.jsonl", passed),
        write_jsonl(tmp / "fp.jsonl", failed),
        write_csv(tmp / "experts_agreement_200.csv", AGREE_HEADER, rows),
    ]


def gold_items(tmp: Path):
    return load_gold(write_gold(tmp))


def test_flex_agreement_synthetic_matches_labels_and_lists_the_unmatched(tmp_path):
    report = import_labels("flex-agreement", agreement_files(tmp_path), gold_items(tmp_path))
    # 6 pairs; pair 99 matches neither by id nor by text: listed, not labelled
    assert len(report.unmatched) == 1 and "fn.jsonl:3" in report.unmatched[0] and "99" in report.unmatched[0]
    # index 77 is no gold id; its text matches question 1 (case and punctuation aside)
    assert any("id 77" in d and "question 1" in d for d in report.differences)
    models = Counter((r.model, r.question_id) for r in report.runs)
    assert set(models.values()) == {1}
    assert set(models) == {
        ("flex-ex-pass", 1),
        ("flex-ex-pass-2", 1),
        ("flex-ex-fail", 3),
        ("flex-ex-fail", 1),
        ("flex-ex-fail-2", 1),
    }
    assert len(report.labels) == 5 * 4
    consensus = {(lab.model, lab.question_id): lab for lab in report.labels if lab.annotator == CONSENSUS}
    split = consensus[("flex-ex-pass-2", 1)]
    assert split.label == "incorrect" and "0.5" in (split.note or "")
    assert consensus[("flex-ex-fail", 3)].label == "incorrect" and consensus[("flex-ex-fail", 1)].label == "correct"
    assert {r.recorded.match for r in report.runs if r.model.startswith("flex-ex-pass")} == {True}  # type: ignore[union-attr]
    assert [g.question_id for g in report.gold_items] == [3, 1]
    assert report.gold_items[0].schema_text and report.gold_items[0].recorded.preview.startswith("| 1 |")  # type: ignore[union-attr]


def test_flex_gold_sql_differing_from_the_gold_file_is_kept_and_reported(tmp_path):
    files = agreement_files(tmp_path)
    rows = [json.loads(line) for line in files[1].read_text().splitlines()]
    rows[0]["gt_sql"] = "SELECT COUNT(id) FROM item"
    write_jsonl(files[1], rows)
    report = import_labels("flex-agreement", files, gold_items(tmp_path))
    assert report.gold_items[0].sql == "SELECT COUNT(id) FROM item"
    assert report.counts["gt_sql differs from the gold file"] == 1
    assert any("gt_sql" in d and "fp.jsonl:1" in d for d in report.differences)


def test_ambiguous_text_match_is_reported(tmp_path):
    items = [dict(GOLD[0]), dict(GOLD[0], question_id=8)]
    gold = load_gold(write_gold(tmp_path, items))
    files = agreement_files(tmp_path)
    rows = [json.loads(line) for line in files[1].read_text().splitlines()]
    rows[0] = pair(55, "Names of red items?", 0)
    write_jsonl(files[1], rows)
    report = import_labels("flex-agreement", files, gold)
    assert any("fp.jsonl:1" in a and "1, 8" in a for a in report.ambiguous)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda f: f[2].write_text(f[2].read_text().replace("FN_B", "FN_X")),
            "experts_agreement_200.csv:1: missing column 'FN_B'",
        ),
        (lambda f: f[2].write_text(f[2].read_text().replace("\n2,0,0,0,0,0,", "\n2,0,0,0,7,0,")), "csv:4: FN_B is '7'"),
        (lambda f: f[2].write_text(f[2].read_text().replace("\n1,1,", "\n5,1,")), "csv:3: Index is '5'"),
        (lambda f: f[0].write_text(f[0].read_text().replace('"ex": 1}', '"ex": 3}', 1)), "fn.jsonl:1: 'ex' is 3"),
        (lambda f: f[1].write_text(f[1].read_text() + '{"index": "x"}\n'), "fp.jsonl:4: missing or malformed 'index'"),
        (lambda f: f[1].write_text(f[1].read_text() + "{nope\n"), "fp.jsonl:4"),
        (lambda f: f[0].write_text(f[0].read_text().replace('"ex": 1}', '"ex": 0}', 1)), "fn.jsonl: mixes passed"),
        (lambda f: f[2].write_text("\n".join(f[2].read_text().splitlines()[:3]) + "\n"), "2 rows but 3 pairs"),
        (lambda f: f[2].write_text(f[2].read_text() + "3,0,0\n"), "csv:5: 3 fields, the header has 11"),
    ],
)
def test_flex_bad_input_names_file_and_line(tmp_path, edit, message):
    files = agreement_files(tmp_path)
    edit(files)
    with pytest.raises(InputError, match=None) as err:
        import_labels("flex-agreement", files, gold_items(tmp_path))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_flex_files_are_recognised_by_content_and_all_three_needed(tmp_path):
    files = agreement_files(tmp_path)
    with pytest.raises(InputError, match="no file of passed pairs"):
        import_labels("flex-agreement", files[1:], gold_items(tmp_path))
    with pytest.raises(InputError, match="a second file of failed pairs"):
        import_labels("flex-agreement", [*files, files[1]], gold_items(tmp_path))


def test_majority_rule():
    assert _majority({"Structure": 3, "Incorrect GT (FN)": 2}, FAIL_CATEGORIES) == ("correct", Verdict.FORMAT_EQUIVALENCE)
    assert _majority({"Structure": 2, "Value Repr.": 3}, FAIL_CATEGORIES) == ("correct", Verdict.FORMAT_EQUIVALENCE)
    assert _majority({"Structure": 2, "Incorrect GT (FN)": 2}, FAIL_CATEGORIES) == ("correct", None)
    assert _majority({"Incorrect GT (FP)": 2, "FLEX is incorrect (FP)": 2}, PASS_CATEGORIES) is None
    assert _majority({"Schema Link": 1, "Multi Rows": 1}, PASS_CATEGORIES) is None
    assert _majority({"Multi Rows": 3, "FLEX is incorrect (FP)": 2}, PASS_CATEGORIES) == ("incorrect", Verdict.GENUINE_ERROR)


def test_flex_categories_synthetic(tmp_path):
    header = [*PASS_CATEGORIES, *FAIL_CATEGORIES]

    def row(**votes):
        return [votes.get(name.replace(" ", "_").replace(".", "").replace("(", "").replace(")", ""), 0) for name in header]

    files = [
        write_jsonl(tmp_path / "categorized_fn100.jsonl", [pair(1, "Names of red items?", 0), pair(3, "How many items?", 0)]),
        write_jsonl(tmp_path / "categorized_fp100.jsonl", [pair(3, "How many items?", 1), pair(1, "Names of red items?", 1)]),
        write_csv(
            tmp_path / "experts_categorization.csv",
            header,
            [row(Incorrect_GT_FN=3, Schema_Link=2), row(Structure=1, FLEX_is_incorrect_FP=3)],
            bom="\ufeff",
        ),
    ]
    report = import_labels("flex-categories", files, gold_items(tmp_path))
    got = {(lab.model, lab.question_id): (lab.label, lab.category) for lab in report.labels}
    assert got == {
        ("flex-cat-fail", 1): ("correct", Verdict.GOLD_DEFECT),
        ("flex-cat-pass", 3): ("incorrect", Verdict.GENUINE_ERROR),
        ("flex-cat-pass", 1): ("correct", None),
    }
    assert len(report.unresolved) == 1 and "categorized_fn100.jsonl:2" in report.unresolved[0]
    assert {lab.annotator for lab in report.labels} == {"majority"}


FIN_HEADER = ["Question ID", "Original question", "Original gold SQL", "Suggested fixed question", "Suggested fixed gold_sql"]
FIN_HEADER += ["Comment", "Error Category"]


def test_wretblad_synthetic(tmp_path):
    gold = gold_items(tmp_path)
    fin = write_csv(
        tmp_path / "financial_annotations.csv",
        FIN_HEADER,
        [
            [
                1,
                "Names of red items?",
                "SELECT name FROM item WHERE colour = 'red'",
                "",
                "SELECT name FROM item",
                "wrong",
                "1, 3",
            ],
            [2, "Items by price?", "SELECT name FROM item", "", "", "vague", "2"],
            ["", "", "", "", "", "", ""],
            [3, "How many items?", "SELECT count(*) FROM item", "", "", "", ""],
            [42, "Gone?", "SELECT 1", "", "", "", "6"],
            [4, "Broken gold", "SELECT nope FROM item WHERE 1", "", "SELECT nope FROM item", "fixed since", "3"],
        ],
        bom="\ufeff",
    )
    sampled = tmp_path / "sampled_annotations.csv"
    sampled.write_text(
        '"\ufeffquestion_id","db_id","question","SQL","evidence","Comment","difficulty","Annotation"\n'
        '3,shop,How many items?,SELECT count(*) FROM item,,no map,simple,"3,6"\n'
        "2,shop,Items by price?,SELECT name FROM item ORDER BY price,,,simple,6\n"
    )
    report = import_labels("wretblad", [sampled], gold)
    got = {(lab.source, lab.question_id): (lab.gold_defective, lab.defect_type) for lab in report.labels}
    assert got == {("wretblad-sampled", 3): (True, "sql_vs_question"), ("wretblad-sampled", 2): (True, "sql_vs_data")}
    report = import_labels("wretblad", [fin, sampled], gold)
    got = {(lab.source, lab.question_id): (lab.gold_defective, lab.defect_type) for lab in report.labels}
    assert got == {
        ("wretblad-financial", 1): (True, "sql_vs_question"),
        ("wretblad-financial", 4): (False, None),  # the gold file's SQL is their fix
    }  # 2 and 3: the same annotators gave them other verdicts in the sampled file: left unlabelled
    assert sorted(u.split(": ", 1)[0].rsplit("/", 1)[-1] for u in report.unresolved) == [
        "sampled_annotations.csv:2",
        "sampled_annotations.csv:3",
    ]
    first = next(lab for lab in report.labels if lab.question_id == 1)
    assert first.corrected_sql == "SELECT name FROM item" and "1, 3" in (first.note or "") and "wrong" in (first.note or "")
    assert len(report.unmatched) == 1 and "financial_annotations.csv:6" in report.unmatched[0]
    assert any("csv:3" in d and "question 2" in d for d in report.differences)  # text differs, matched by id
    assert report.counts["defect fixed in the gold file"] == 1


def test_wretblad_repeated_question_is_labelled_once_or_left_unresolved(tmp_path):
    """A question annotated twice in one set: the same verdict is one label; different verdicts
    leave it unlabelled and listed (two labels by one annotator would stop calibrate)."""
    gold = gold_items(tmp_path)
    fin = write_csv(
        tmp_path / "financial_annotations.csv",
        FIN_HEADER,
        [
            [1, "Names of red items?", "SELECT name FROM item WHERE colour = 'red'", "", "", "", "3"],
            [2, "Items by price?", "SELECT name FROM item", "", "", "", "2"],
            [1, "Names of red items?", "SELECT name FROM item WHERE colour = 'red'", "", "", "", "1"],
            [2, "Items by price?", "SELECT name FROM item", "", "", "again", "2"],
            [1, "Names of red items?", "SELECT name FROM item WHERE colour = 'red'", "", "", "", "3"],
        ],
    )
    report = import_labels("wretblad", [fin], gold)
    assert [(lab.question_id, lab.defect_type) for lab in report.labels] == [(2, "ambiguous_question")]
    assert report.counts["wretblad-financial items"] == 1 and report.counts["wretblad-financial defective"] == 1
    assert any("csv:4" in u and "question 1" in u and "different categories" in u and "csv:2" in u for u in report.unresolved)
    assert any("csv:6" in u and "question 1" in u for u in report.unresolved)
    assert any("csv:5" in d and "question 2" in d and "labelled once" in d for d in report.differences)
    out = tmp_path / "labels.jsonl"
    out.write_text(dump_labels(report.labels))
    load_labels([out])  # calibrate's loader accepts what the import wrote


def test_wretblad_bad_category_and_missing_column(tmp_path):
    gold = gold_items(tmp_path)
    bad = write_csv(tmp_path / "f.csv", FIN_HEADER, [[1, "q", "SELECT 1", "", "", "", "1, 3"], [2, "q", "s", "", "", "", "3, 9"]])
    with pytest.raises(InputError, match=r"f\.csv:3: error category '3, 9'"):
        import_labels("wretblad", [bad], gold)
    no_comment = write_csv(tmp_path / "g.csv", [h for h in FIN_HEADER if h != "Comment"], [[1, "q", "s", "", "", "3"]])
    with pytest.raises(InputError, match=r"g\.csv:1: missing column 'Comment'"):
        import_labels("wretblad", [no_comment], gold)


def test_arcwise_synthetic(tmp_path):
    gold = gold_items(tmp_path)
    cleaned = [dict(g) for g in GOLD]
    cleaned[0]["SQL"] = "SELECT  name\nFROM item WHERE colour = 'red'"  # whitespace only: unchanged
    cleaned[1]["SQL"] = "SELECT name FROM item ORDER BY price, id"
    cleaned[1]["correction"] = "ties"
    cleaned[2]["question"] = "How many items are there?"
    cleaned[2]["correction"] = "clearer"
    cleaned.append(dict(GOLD[0], question_id=404))
    path = tmp_path / "arcwise.json"
    path.write_text(json.dumps(cleaned))
    report = import_labels("arcwise", [path], gold)
    got = {lab.question_id: (lab.gold_defective, lab.defect_type, lab.corrected_sql, lab.note) for lab in report.labels}
    assert got == {
        1: (False, None, None, None),
        2: (True, None, "SELECT name FROM item ORDER BY price, id", "ties"),
        3: (True, "ambiguous_question", None, "question reworded, SQL kept: clearer"),
        4: (False, None, None, None),
    }
    assert len(report.unmatched) == 1 and "item 4" in report.unmatched[0]


def test_normalise_question():
    assert normalise_question(" Names of RED\titems?? ") == "names of red items"


# ---------------------------------------------------------------- the command line


def test_cli_writes_labels_runs_and_gold(tmp_path):
    write_gold(tmp_path)
    names = [p.name for p in agreement_files(tmp_path)]
    args = ["labels", "import", "flex-agreement", *names, "--gold", "gold.json", "-o", "l.jsonl"]
    proc = run_jury([*args, "--runs-out", "r.jsonl", "--gold-out", "g.jsonl"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "flex-agreement: 5 labels by consensus" in proc.stderr
    assert "unmatched: 1" in proc.stderr and "fn.jsonl:3" in proc.stderr
    assert len(load_labels([tmp_path / "l.jsonl"]).adjudication) == 20
    assert len(load_runs([tmp_path / "r.jsonl"], load_gold(tmp_path / "g.jsonl"))) == 5
    stdout = run_jury(["labels", "import", "flex-agreement", *names, "--gold", "gold.json"], tmp_path)
    assert stdout.returncode == 0 and len(stdout.stdout.splitlines()) == 20


SAMPLED_HEADER = '"\ufeffquestion_id","db_id","question","SQL","evidence","Comment","difficulty","Annotation"\n'


@pytest.mark.parametrize("qid", ["2", " 2", "002", "2 "])
def test_cli_a_question_both_wretblad_files_annotate_differently_is_not_labelled(tmp_path, qid):
    """financial_annotations.csv and sampled_annotations.csv are one team's work: a question the
    two files give contradicting verdicts is left unlabelled (the label file holds neither), one
    they agree on is labelled once."""
    write_gold(tmp_path)
    write_csv(
        tmp_path / "financial_annotations.csv",
        FIN_HEADER,
        [
            [2, "Items by price?", "SELECT name FROM item", "", "", "", "5"],
            [3, "How many items?", "SELECT count(*) FROM item", "", "", "", "3"],
        ],
    )
    (tmp_path / "sampled_annotations.csv").write_text(
        SAMPLED_HEADER
        + f'"{qid}",shop,Items by price?,SELECT name FROM item ORDER BY price,,,simple,2\n'
        + "3,shop,How many items?,SELECT count(*) FROM item,,,simple,3\n"
    )
    files = ["financial_annotations.csv", "sampled_annotations.csv"]
    proc = run_jury(["labels", "import", "wretblad", *files, "--gold", "gold.json", "-o", "l.jsonl"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    labels = load_labels([tmp_path / "l.jsonl"]).gold
    assert [(lab.question_id, lab.source) for lab in labels] == [(3, "wretblad-financial")]  # 3: labelled once
    assert "sampled_annotations.csv:2: question 2 annotated twice with different categories" in proc.stderr
    assert "sampled_annotations.csv:3: question 3 repeated" in proc.stderr


def _flex_setup(tmp: Path) -> None:
    agreement_files(tmp)


CASES = [
    Case(
        "labels-output-is-input",
        ["labels", "import", "flex-agreement", "fn.jsonl", "fp.jsonl", "experts_agreement_200.csv", "-o", "fp.jsonl"],
        "fp.jsonl: is the input file",
        setup=_flex_setup,
        unchanged=["fp.jsonl"],
    ),
    Case(
        "labels-runs-out-is-gold",
        ["labels", "import", "flex-agreement", "fn.jsonl", "fp.jsonl", "experts_agreement_200.csv", "--runs-out", "gold.json"],
        "gold.json: is the input file",
        setup=_flex_setup,
        unchanged=["gold.json"],
    ),
    Case("labels-unknown-kind", ["labels", "import", "spider", "x.csv"], "spider"),
    Case("labels-missing-file", ["labels", "import", "wretblad", "nope.csv"], "nope.csv: no such file"),
    Case(
        "labels-runs-out-not-flex",
        ["labels", "import", "wretblad", "x.csv", "--runs-out", "r.jsonl"],
        "runs_out, gold_out and family are for the flex kinds",
    ),
    Case(
        "labels-bad-vote",
        ["labels", "import", "flex-agreement", "fn.jsonl", "fp.jsonl", "experts_agreement_200.csv"],
        "experts_agreement_200.csv:2: FN_A is 'yes'",
        setup=lambda tmp: agreement_files(tmp, rows=[[0, 0, 0, "yes", 0, 0, 1, 1, 1, 1, 1]] * 3),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_labels_bad_input(case, tmp_path):
    check_case(case, tmp_path)
