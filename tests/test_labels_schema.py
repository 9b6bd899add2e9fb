"""The label formats' JSON Schemas in verdicts/schema/ are generated from the models, and
each accepts what the loader accepts and refuses what it refuses."""

from __future__ import annotations

import json

import jsonschema
import pytest

from jury.errors import InputError
from jury.inputs.labels import label_schema, label_schema_filename, parse_label
from tests.support.helpers import REPO


@pytest.mark.parametrize("kind", ["adjudication", "gold"])
def test_committed_label_schema_is_generated(kind):
    committed = json.loads((REPO / "verdicts" / "schema" / label_schema_filename(kind)).read_text())
    assert committed == label_schema(kind), "regenerate: see jury.inputs.labels.label_schema"


@pytest.mark.parametrize(
    ("kind", "obj", "ok"),
    [
        ("adjudication", {"question_id": 1, "model": "m", "label": "correct", "annotator": "A", "source": "s"}, True),
        ("adjudication", {"question_id": 1, "sql": "SELECT 1", "label": "incorrect", "category": "genuine_error", "annotator": "A", "source": "s"}, True),
        ("adjudication", {"question_id": 1, "model": "m", "label": "maybe", "annotator": "A", "source": "s"}, False),
        ("adjudication", {"question_id": 1, "model": "m", "label": "correct", "category": "no_majority", "annotator": "A", "source": "s"}, False),
        ("adjudication", {"question_id": 1, "model": "m", "label": "incorrect", "category": "gold_defect", "annotator": "A", "source": "s"}, False),
        ("adjudication", {"question_id": 1, "model": "m", "label": "correct", "category": "genuine_error", "annotator": "A", "source": "s"}, False),
        ("adjudication", {"question_id": 1, "model": "m", "label": "correct", "category": "ambiguous", "annotator": "A", "source": "s"}, True),
        ("gold", {"question_id": 2, "gold_defective": True, "defect_type": "sql_vs_question", "annotator": "w", "source": "s"}, True),
        ("gold", {"question_id": 2, "gold_defective": "yes", "annotator": "w", "source": "s"}, False),
        ("gold", {"question_id": 2, "gold_defective": False, "annotator": "w", "source": "s", "colour": 1}, False),
    ],
)  # fmt: skip
def test_schema_and_loader_agree(kind, obj, ok):
    schema = label_schema(kind)
    valid = jsonschema.Draft202012Validator(schema).is_valid(obj)
    try:
        parse_label(obj, "labels.jsonl:1")
        loaded = True
    except InputError:
        loaded = False
    assert valid is ok and loaded is ok


def test_a_candidate_must_be_named():
    with pytest.raises(InputError, match="give `model` or `sql`"):
        parse_label({"question_id": 1, "label": "correct", "annotator": "A", "source": "s"}, "l.jsonl:3")
