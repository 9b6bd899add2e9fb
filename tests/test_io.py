import json

import pytest

from jury.errors import InputError
from jury.inputs.importers import import_bird_predictions
from jury.inputs.io import load_gold, load_gold_list, load_runs
from tests.support.helpers import GOLD, SHARED_BIRD, write_gold, write_runs


def test_gold_accepts_sql_alias_and_order_override(tmp_path):
    items = [dict(GOLD[0]), dict(GOLD[1])]
    items[0]["sql"] = items[0].pop("SQL")
    items[1]["order_matters"] = False
    gold = load_gold(write_gold(tmp_path, items))
    assert gold[1].sql.startswith("SELECT name")
    assert gold[2].order_matters is False


@pytest.mark.parametrize(
    "content, expected",
    [
        (
            '{"model": "m", "question_id": 1, "sql": "SELECT 1"}\n{"model": "m", "question_id": 2, "sql": "SELECT 1"\n',
            "run.jsonl:2: malformed JSON",
        ),
        ('{"model": "m", "question_id": 99, "sql": "SELECT 1"}\n', "run.jsonl:1: unknown question_id 99"),
        (
            '{"model": "m", "question_id": 1, "sql": "x"}\n\n{"model": "m", "question_id": "1", "sql": "y"}\n',
            "run.jsonl:3: duplicate answer of model 'm' to question 1 (first at",
        ),
        ('{"model": "m", "question_id": 1, "sqll": "x"}\n', "run.jsonl:1: sqll: Extra inputs are not permitted"),
        ("[1, 2]\n", "run.jsonl:1: expected an object, got list"),
        ("   \n", "run.jsonl: file is empty"),
    ],
)
def test_bad_runs_name_file_and_line(tmp_path, content, expected):
    gold = load_gold(write_gold(tmp_path))
    path = tmp_path / "run.jsonl"
    path.write_text(content)
    with pytest.raises(InputError) as exc:
        load_runs([path], gold)
    assert expected in str(exc.value)
    assert "\n" not in str(exc.value)


def test_non_utf8_names_the_line(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"model": "m", "question_id": 1, "sql": "x"}\n{"model": "\xff"}\n')
    with pytest.raises(InputError, match=r"run.jsonl:2: not UTF-8"):
        load_runs([path])


def test_duplicates_across_files(tmp_path):
    rec = {"model": "m", "question_id": 1, "sql": "SELECT 1"}
    a, b = write_runs(tmp_path, [rec], "a.jsonl"), write_runs(tmp_path, [rec], "b.jsonl")
    with pytest.raises(InputError, match=r"b.jsonl:1: duplicate .* \(first at .*a.jsonl:1\)"):
        load_runs([a, b])


def test_gold_errors(tmp_path):
    bad = tmp_path / "gold.json"
    bad.write_text('[{"question_id": 1, "db_id": "x"}]')
    with pytest.raises(InputError, match=r"gold.json:1: item 0: SQL: Field required"):
        load_gold(bad)
    bad.write_text('[{"question_id": 1,\n "db_id": "x", }]')
    with pytest.raises(InputError, match=r"gold.json:2: malformed JSON"):
        load_gold(bad)


def test_bird_json_importer(tmp_path):
    gold = load_gold_list(write_gold(tmp_path))
    pred = tmp_path / "predict_dev.json"
    pred.write_text(
        json.dumps(
            {
                "0": "SELECT name FROM item WHERE colour = 'red'\t----- bird -----\tshop",
                "1": 42,
                "2": "SELECT count(*) FROM item /* Answer the following */ SELECT 1\t----- bird -----\tother",
            }
        )
    )
    rep = import_bird_predictions(pred, gold, "m")
    by_q = {r.question_id: r for r in rep.records}
    assert by_q[1].db_id == "shop" and by_q[1].sql.endswith("'red'")
    assert by_q[2].sql is None and 4 not in by_q  # non-string entry: no SQL; absent position: no record, as in run JSONL
    assert by_q[3].sql.endswith("SELECT 1") and by_q[3].db_id == "other"  # junk kept as written
    assert sorted(rep.missing) == [2, 4] and len(rep.odd) == 1
    assert rep.unanswered == {"not_string": 1, "absent": 1}


def test_text_importer_without_final_newline_and_too_many_lines(tmp_path):
    gold = load_gold_list(write_gold(tmp_path))
    txt = tmp_path / "pred.sql"
    txt.write_text("SELECT 1\n\nSELECT 3\nSELECT 4")
    rep = import_bird_predictions(txt, gold, "m")
    assert [r.sql for r in rep.records] == ["SELECT 1", "", "SELECT 3", "SELECT 4"]  # an empty line: blank SQL
    assert rep.missing == [2] and rep.unanswered == {"empty": 1}
    assert all(r.db_id is None for r in rep.records)
    txt.write_text("a\nb\nc\nd\ne\n")
    with pytest.raises(InputError, match="5 lines but the gold file has only 4"):
        import_bird_predictions(txt, gold, "m")


def test_identical_repeated_gold_items_are_tolerated_and_positions_kept(tmp_path):
    """BIRD mini-dev repeats two items verbatim; predictions still index by position."""
    items = [GOLD[0], GOLD[1], GOLD[0], GOLD[2]]
    path = write_gold(tmp_path, items)
    assert list(load_gold(path)) == [1, 2, 3]
    assert [g.question_id for g in load_gold_list(path)] == [1, 2, 1, 3]
    txt = tmp_path / "pred.sql"
    txt.write_text("SELECT 'a'\nSELECT 'b'\nSELECT 'repeat'\nSELECT 'c'\n")
    rep = import_bird_predictions(txt, load_gold_list(path), "m")
    assert [(r.question_id, r.sql) for r in rep.records] == [(1, "SELECT 'a'"), (2, "SELECT 'b'"), (3, "SELECT 'c'")]
    assert rep.odd == ["2: repeats question 1 (entry 0); skipped"] and rep.repeats == [(2, 0, True)]  # its answer differs
    changed = dict(GOLD[0], SQL="SELECT 1")
    with pytest.raises(InputError, match=r"item 2: duplicate question_id 1 with different content"):
        load_gold(write_gold(tmp_path, [GOLD[0], GOLD[1], changed]))


@pytest.mark.skipif(not SHARED_BIRD.is_dir(), reason="../shared BIRD data not present")
def test_mini_dev_predictions_import(tmp_path):
    gold = load_gold_list(SHARED_BIRD / "mini-dev" / "data" / "mini_dev_sqlite.json")
    assert len(gold) == 500
    pred = next((SHARED_BIRD / "mini-dev" / "predictions" / "TA_output").glob("*gpt-4-o*"))
    rep = import_bird_predictions(pred, gold, "gpt-4o")
    assert len(rep.records) == 498 and len(rep.odd) >= 2


def test_importer_refuses_empty_model_json_lists_and_repeated_keys(tmp_path):
    gold = load_gold_list(write_gold(tmp_path))
    pred = tmp_path / "p.json"
    pred.write_text('{"0": "SELECT 1"}')
    with pytest.raises(InputError, match="model must name the model"):
        import_bird_predictions(pred, gold, " ")
    pred.write_text("[1, 2]")
    with pytest.raises(InputError, match="a JSON list"):
        import_bird_predictions(pred, gold, "m")
    pred.write_text('{"0": "SELECT 1", "00": "SELECT 2"}')
    with pytest.raises(InputError, match="key '00' repeats question position 0"):
        import_bird_predictions(pred, gold, "m")


# ---------------------------------------------------------------- a file of the wrong kind

PANEL_TOML = 'name = "p"\nballot_style = "blind"\nk = 1\n\n[[jurors]]\nname = "a"\nmodel = "openai/x"\nfamily = "openai"\n'
LABEL_LINE = '{"question_id": 1, "model": "m", "label": "correct", "annotator": "A", "source": "s"}\n'
VERDICT_HEAD = '{\n  "content_sha256": "sha256:' + "0" * 64 + '",\n  "format_version": 2,\n  "kind": "adjudication"\n}\n'


def _kind_files(tmp_path):
    """One file of each kind jury reads, as a user would have them."""
    records = [{"model": "m", "question_id": q, "db_id": "shop", "sql": "SELECT 1"} for q in (1, 2)]
    files = {
        "gold": write_gold(tmp_path),  # BIRD's dev.json layout: a JSON list
        "run": write_runs(tmp_path, records),
        "label": tmp_path / "labels.jsonl",
        "panel": tmp_path / "panel.toml",
        "adjudication": tmp_path / "verdicts.json",
    }
    files["label"].write_text(LABEL_LINE)
    files["panel"].write_text(PANEL_TOML)
    files["adjudication"].write_text(VERDICT_HEAD)
    return files


def test_sniff_kind_tells_every_kind_of_file(tmp_path):
    from jury.inputs.kinds import sniff_kind

    for kind, path in _kind_files(tmp_path).items():
        assert sniff_kind(path) == kind, path
    jsonl_gold = tmp_path / "mini_dev.jsonl"  # BIRD mini-dev ships gold as JSONL too
    jsonl_gold.write_text("".join(json.dumps(item) + "\n" for item in GOLD))
    assert sniff_kind(jsonl_gold) == "gold"
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"x": 1}\n')
    assert sniff_kind(odd) is None  # unknown: the loader's own checks speak


@pytest.mark.parametrize(
    "given, loader, expected",
    [
        ("gold", "runs", "gold.json is a gold file, not a run file"),
        ("panel", "runs", "panel.toml is a panel file, not a run file"),
        ("label", "runs", "labels.jsonl is a label file, not a run file"),
        ("adjudication", "runs", "verdicts.json is an adjudication verdict file, not a run file"),
        ("run", "gold", "run.jsonl is a run file, not a gold file"),
        ("label", "gold", "labels.jsonl is a label file, not a gold file"),
        ("run", "labels", "run.jsonl is a run file, not a label file"),
        ("gold", "labels", "gold.json is a gold file, not a label file"),
    ],
)
def test_a_file_of_another_kind_is_named_as_such(tmp_path, given, loader, expected):
    from jury.inputs.labels import load_labels

    path = _kind_files(tmp_path)[given]
    load = {"runs": lambda p: load_runs([p]), "gold": load_gold, "labels": lambda p: load_labels([p])}[loader]
    with pytest.raises(InputError) as err:
        load(path)
    assert str(err.value).endswith(expected) and "\n" not in str(err.value)


def test_a_run_file_as_gold_is_refused_before_its_records_are_read(tmp_path):
    """Run records validate as gold items (db_id, sql) until one lacks db_id: the kind is told
    from the first record, not a thousand lines in."""
    records = [{"model": "m", "question_id": q, "db_id": "shop", "sql": "SELECT 1"} for q in range(1, 1033)]
    records.append({"model": "m", "question_id": 1033, "sql": "SELECT 1"})
    path = write_runs(tmp_path, records)
    with pytest.raises(InputError, match=r"run.jsonl is a run file, not a gold file$"):
        load_gold(path)


def test_verdict_loader_names_a_run_or_gold_file(tmp_path):
    from jury.errors import VerdictError
    from jury.verdicts.lock import load_locked

    files = _kind_files(tmp_path)
    with pytest.raises(VerdictError, match=r"run.jsonl is a run file, not a verdict file$"):
        load_locked(files["run"])
    with pytest.raises(VerdictError, match=r"gold.json is a gold file, not a verdict file$"):
        load_locked(files["gold"])
