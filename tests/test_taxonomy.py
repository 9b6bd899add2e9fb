"""Error taxonomies: the shipped TOML files, the loader's one-line errors, `jury adjudicate
--taxonomy` with loopback jurors (votes, majority, verify), and rule classification."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import ConfigError
from jury.judging.ballots import make_parser, reply_schema
from jury.judging.taxonomies import TAXONOMIES_DIR, load_taxonomy, majority_category
from jury.verdicts.lock import content_hash, load_locked
from tests.support.fakellm import json_reply
from tests.support.jurytest import gold_position, user_text, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]


def test_shipped_taxonomies_hold_the_protocols_categories():
    spider = load_taxonomy("spider2-aifunc")
    assert spider.ids == ("C1", "C2", "C3", "C4", "C5")
    assert [c[1] for c in spider.categories] == [
        "schema grounding",
        "predicate and filter",
        "query logic",
        "function usage",
        "annotation issue",
    ]
    pls = load_taxonomy("plsqlbench")
    assert pls.ids == ("logic", "artifact", "grounding")
    assert {p.stem for p in TAXONOMIES_DIR.glob("*.toml")} == {"spider2-aifunc", "plsqlbench"}


@pytest.mark.parametrize(
    "error, expected",
    [
        ("ORA-00942: table or view does not exist", "grounding"),
        ("sqlite3.OperationalError: no such table: emp", "grounding"),
        ('ORA-00904: "SALARYX": invalid identifier', "grounding"),
        ('PLS-00103: Encountered the symbol "END"', "artifact"),
        ("ORA-01476: divisor is equal to zero", "logic"),
        ("ORA-20001: custom application error", None),  # no rule: left to jurors
        ("ORA-00942 then PLS-00103", None),  # two classes match: ambiguous, left to jurors
    ],
)
def test_rules_classify_only_unambiguous_errors(error, expected):
    assert load_taxonomy("plsqlbench").classify(error) == expected


def test_majority_category():
    assert majority_category(["C1", "C1", "C2"]) == "C1"
    assert majority_category(["C1", "C2", None]) is None
    assert majority_category(["C1", None]) is None  # one of two is no majority


def test_reply_schema_and_parser_constrain_the_category():
    tax = load_taxonomy("plsqlbench")
    schema = reply_schema("blind", tax)
    assert schema["properties"]["error_category"]["enum"] == ["logic", "artifact", "grounding", None]
    assert "error_category" in schema["required"]
    assert "error_category" not in reply_schema("blind")["properties"]  # without: unchanged
    parse = make_parser("blind", tax)
    assert parse('{"reasoning": "", "verdict": "answer_1", "error_category": "logic"}')["error_category"] == "logic"
    with pytest.raises(ValueError, match="error_category must be one of logic, artifact, grounding or null"):
        parse('{"reasoning": "", "verdict": "answer_1", "error_category": "C9"}')


BAD_TOML = [
    ('name = "t"\n[[categories]]\nid = "a"\nlabel = "A"\ndefinition = "x"\n', "categories: List should have at least 2 items"),
    (
        'name = "t"\n[[categories]]\nid = "a"\nlabel = "A"\ndefinition = "x"\n[[categories]]\nid = "a"\nlabel = "B"\ndefinition = "y"\n',
        "categories[1].id: 'a' is given twice",
    ),
    (
        'name = "t"\n[[categories]]\nid = "a"\nlabel = "A"\ndefinition = "x"\n[[categories]]\nid = "b"\nlabel = "B"\n',
        "categories[1].definition: Field required",
    ),
    (
        'name = "t"\n[[categories]]\nid = "a"\nlabel = "A"\ndefinition = "x"\n[[categories]]\nid = "b"\nlabel = "B"\n'
        'definition = "y"\n[[rules]]\npattern = "("\ncategory = "a"\n',
        "rules[0].pattern: not a regular expression",
    ),
    (
        'name = "t"\n[[categories]]\nid = "a"\nlabel = "A"\ndefinition = "x"\n[[categories]]\nid = "b"\nlabel = "B"\n'
        'definition = "y"\n[[rules]]\npattern = "x"\ncategory = "c"\n',
        "rules[0].category: 'c' is not a category id (ids: a, b)",
    ),
    ('name = "t"\ncolour = 1\n', "categories: Field required"),
    ("name = \n", "not valid TOML"),
]


@pytest.mark.parametrize("text, message", BAD_TOML)
def test_bad_taxonomy_is_one_line_naming_file_and_key(tmp_path, text, message):
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_taxonomy(path)
    assert str(exc.value).startswith(f"{path}: ") and message in str(exc.value) and "\n" not in str(exc.value)


def test_unknown_taxonomy_names_the_shipped_ones():
    with pytest.raises(ConfigError, match=r"taxonomy file not found \(shipped taxonomies: plsqlbench, spider2-aifunc\)"):
        load_taxonomy("nope")


# ------------------------------------------------------------------ jury adjudicate --taxonomy


def picks(category: str, error_category):
    """A juror that votes genuine error (the gold is right) and names `error_category`."""

    def respond(request):
        text = user_text(request)
        assert '"error_category"' in text and "C1" in text  # the block with the categories is shown
        verdict = f"answer_{gold_position(request)}" if category == "genuine_error" else "both"
        return json_reply({"reasoning": "scripted", "verdict": verdict, "error_category": error_category})

    return respond


def test_adjudicate_with_taxonomy_stores_votes_and_majority(project, fake_llm):
    fake_llm.script("ja", picks("genuine_error", "C1"))
    fake_llm.script("jb", picks("genuine_error", "C1"))
    fake_llm.script("jc", picks("genuine_error", "C3"))
    fake_llm.script("jd", picks("genuine_error", "C3"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--taxonomy", "spider2-aifunc"])
    assert res.exit_code == 0, res.output
    [path] = sorted((project / "verdicts").glob("adjudication-*.json"))
    doc = load_locked(path)
    assert doc.settings["taxonomy"]["name"] == "spider2-aifunc"
    by_model = {}
    for r in doc.records:
        assert r.verdict == "genuine_error"
        by_model.setdefault(r.model, set()).add(r.error_category)
        picked = [v.error_category for v in r.votes]
        assert r.error_category == majority_category(picked)
    # gpt-x (openai) is judged by jb, jc, jd: C1, C3, C3 -> C3; claude-y by ja, jc, jd -> C3
    assert by_model == {"gpt-x": {"C3"}, "claude-y": {"C3"}}
    assert runner.invoke(app, ["verify", str(path)]).exit_code == 0
    # per-model category counts
    from jury.results.report.model import ErrorCategories
    from jury.results.report.taxonomy import categories_markdown, category_counts

    counts = category_counts([(path, doc)])
    assert counts["models"]["gpt-x"] == {"C1": 0, "C2": 0, "C3": 3, "C4": 0, "C5": 0, "no majority": 0}
    text = categories_markdown(ErrorCategories.model_validate(counts))  # the report's section
    assert "error categories of genuine errors (spider2-aifunc)" in text
    assert "| gpt-x | 0 | 0 | 3 | 0 | 0 | 0 | 3 |" in text  # C1..C5, no majority, total


def test_a_tampered_category_is_refused_by_verify(project, fake_llm):
    for name, _ in FOUR:
        fake_llm.script(name, picks("genuine_error", "C2"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    assert runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--taxonomy", "spider2-aifunc"]).exit_code == 0
    [path] = sorted((project / "verdicts").glob("adjudication-*.json"))
    data = json.loads(path.read_text())
    data["records"][0]["error_category"] = "C4"
    data["content_sha256"] = content_hash(data)  # re-locked: only the rules can catch it
    bad = project / "bad.json"
    bad.write_text(json.dumps(data))
    res = runner.invoke(app, ["verify", str(bad)])
    assert res.exit_code == 1 and "error_category 'C4' does not follow from its votes" in res.output


def test_without_taxonomy_files_have_no_new_keys(project, fake_llm):
    from tests.support.jurytest import says

    for name, _ in FOUR:
        fake_llm.script(name, says("genuine_error"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    assert runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel)]).exit_code == 0
    [path] = sorted((project / "verdicts").glob("adjudication-*.json"))
    text = path.read_text()
    assert "error_category" not in text and '"test":' not in text and "taxonomy" not in text
    assert all("error_category" not in user_text(r) for r in fake_llm.requests)
