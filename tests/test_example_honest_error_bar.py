"""Issue 44's done-when on the bundled example (examples/bird-superhero: 15 systems x 129
questions): a scripted panel of known error rates adjudicates every failure twice (`jury
adjudicate --repeats 2`), and `jury report` in every format shows the published value with
Wilson's interval, the questions + jury interval, each juror's estimated accuracy, the dependence
check, the records whose latent verdict differs from the majority and the test-retest kappa.

Scripted jurors are test doubles. The truth of a record and each juror's vote are functions of
(gold SQL, candidate SQL) alone, by a hash: jurors ja, jb, jc are right with probability 0.9,
0.8, 0.7 and order-blind (asked again, they say the same); jd (0.75) answers by the order the
two SQL texts were shown, so its repeats differ where the seeded shuffles differ. Expected
values come from the scripts (a juror's share of votes equal to the hashed truth, counted here
from the verdict file's votes), never from the report.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from tests.support.fakellm import FakeLLMServer, ballot_reply
from tests.support.jurytest import blind_answer, user_text, write_panel

pytestmark = pytest.mark.slow
runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "bird-superhero"
CATEGORIES = ("gold_defect", "format_equivalence", "genuine_error", "ambiguous")
PRIORS = (0.25, 0.15, 0.5, 0.1)
JURORS = {"ja": ("anthropic", 0.9), "jb": ("google", 0.8), "jc": ("xai", 0.7), "jd": ("mistral", 0.75)}
SQL = re.compile(r"<sql_(\d)>\n(.*?)\n</sql_\d>", re.S)


def unit(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def truth(gold: str, candidate: str) -> str:
    u, acc = unit("truth", gold, candidate), 0.0
    for c, p in zip(CATEGORIES, PRIORS):
        acc += p
        if u < acc:
            return c
    return CATEGORIES[-1]


def vote(juror: str, gold: str, candidate: str, order: int = 0) -> str:
    """The juror's category: the truth with its accuracy, else another category by hash; jd's
    draw also depends on the order the texts were shown."""
    key = (juror, gold, candidate, order if juror == "jd" else 0)
    right = truth(gold, candidate)
    if unit("right", *key) < JURORS[juror][1]:
        return right
    others = [c for c in CATEGORIES if c != right]
    return others[int(unit("wrong", *key) * 3)]


QUESTION = re.compile(r"<question>\n(.*?)\n</question>", re.S)


def responder(juror: str, golds: dict[str, set[str]]):
    """``golds``: question text -> its gold SQL texts (a candidate may be another question's gold)."""

    def respond(req):
        text = user_text(req)
        texts = dict(SQL.findall(text))
        mine = golds[QUESTION.search(text).group(1)]
        gold_at = next(int(i) for i, sql in texts.items() if sql in mine)
        gold, candidate = texts[str(gold_at)], texts[str(3 - gold_at)]
        category = vote(juror, gold, candidate, gold_at)
        return ballot_reply(blind_answer(category, gold_at), reasoning=f"scripted {category}")

    return respond


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The example copied, adjudicated twice by the scripted panel into verdicts/adj.json."""
    tmp = tmp_path_factory.mktemp("example")
    shutil.copytree(EXAMPLE, tmp, dirs_exist_ok=True, symlinks=True)
    golds: dict[str, set[str]] = {}
    for q in json.loads((tmp / "dev.json").read_text()):
        golds.setdefault(q["question"], set()).add(q["SQL"])
    with FakeLLMServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        for name in JURORS:
            server.script(name, responder(name, golds))
        panel = write_panel(tmp, server.base_url, [(n, f) for n, (f, _) in JURORS.items()], k=4)
        res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--repeats", "2", "-o", "verdicts/adj.json"])
        assert res.exit_code == 0, res.output
    return tmp


def report(project: Path, *args: str) -> str:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        res = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", *args])
    assert res.exit_code == 0, res.output
    return res.stdout


def realised_accuracy(project: Path) -> dict[str, float]:
    """Each juror's share of repeat-0 counted votes equal to the hashed truth, from the file."""
    doc = json.loads((project / "verdicts" / "adj.json").read_text())
    gold_of = {q["question_id"]: q["SQL"] for q in json.loads((project / "dev.json").read_text())}
    runs = {}
    for line in (project / "run.jsonl").read_text().splitlines():
        r = json.loads(line)
        runs[(r["model"], r["question_id"])] = r["sql"]
    right: dict[str, list[bool]] = {}
    for rec in doc["records"]:
        t = truth(gold_of[rec["question_id"]], runs[(rec["model"], rec["question_id"])])
        for v in rec["votes"]:
            if v.get("category") and not v.get("abstained") and not v.get("skipped"):
                right.setdefault(v["juror"], []).append(v["category"] == t)
    return {j: sum(r) / len(r) for j, r in right.items()}


def test_every_format_shows_both_intervals_the_jurors_and_the_checks(example):
    rep = json.loads(report(example, "-f", "json"))
    (f,) = rep["adjudication_uncertainty"]["files"]
    assert f["fitted"] and f["records"] > 300
    realised = realised_accuracy(example)
    estimated = {j["juror"]: j["accuracy"] for j in f["jurors"]}
    assert set(estimated) == set(JURORS)
    for juror, value in realised.items():  # the fit recovers each juror's error rate
        assert estimated[juror] == pytest.approx(value, abs=0.05), juror
    assert f["dependence"]["p_value"] is not None
    for m in rep["models"]:
        pub, jur = m["adjudicated"], m["adjudicated_jury"]
        assert pub["low"] <= pub["value"] <= pub["high"]
        assert jur["low"] <= jur["expected"] <= jur["high"]
    kappa = {j["juror"]: j for j in rep["repeat_stability"]["files"][0]["jurors"]}
    assert kappa["ja"]["kappa"] == pytest.approx(1.0) and kappa["jd"]["kappa"] < 0.95

    table = report(example)
    md = report(example, "-f", "md")
    for text in (table, md):
        assert "questions + jury" in text
        assert re.search(r"juror accuracy ja 0\.\d\d, jb 0\.\d\d", text)
        assert f"latent verdict differs from the majority on {len(f['differs'])} records" in text
        assert "jurors err together" in text or "no sign of jurors erring together" in text
        assert "test" in text and "retest" in text

    rows = list(csv.DictReader(io.StringIO(report(example, "-f", "csv"))))
    assert len(rows) == len(rep["models"])
    for row in rows:
        assert float(row["adjudicated_jury_low"]) <= float(row["adjudicated_expected"]) <= float(row["adjudicated_jury_high"])
        assert float(row["adjudicated_low"]) <= float(row["adjudicated_accuracy"]) <= float(row["adjudicated_high"])

    site = example / "site"
    report(example, "-f", "html", "-o", str(site))
    front = (site / "index.html").read_text()
    assert "own uncertainty" in front and "questions + jury" in front
    assert {p.stem for p in (site / "jurors").glob("*.html")} >= set(JURORS)
