"""FLEX's expert judgements of model answers (HeegyuKim/FLEX), as jury labels, runs and gold.

Both sets hold (prediction, question) pairs of BIRD dev as JSONL (``index`` = the BIRD
question id, ``schema``, ``question``, ``pred_sql``, ``pred_exec``, ``gt_sql``, ``gt_exec``,
``ex``: 1 when execution match passed). A pair file is recognised by its content — every
pair passed (``ex`` = 1) or every pair failed — never by its name: in the agreement set
``fn.jsonl`` holds the *passed* pairs and ``fp.jsonl`` the failed ones.

``flex-agreement`` (``fn.jsonl``, ``fp.jsonl``, ``experts_agreement_200.csv``): row *i* of
the CSV judges line *i* of the failed pairs (columns ``FN_*``) and line *i* of the passed
pairs (``FP_*``); 1 = the prediction is correct. Each pair gets a label from each expert
(annotator ``A``, ``B``, ``C``) and the consensus (annotator ``consensus``); a consensus of
0.5 (the experts stayed split) is labelled incorrect, with a note saying so.

``flex-categories`` (``categorized_fn100.jsonl`` = failed pairs FLEX judged correct,
``categorized_fp100.jsonl`` = passed pairs FLEX judged wrong, ``experts_categorization.csv``:
row *i*, how many of 3 experts chose each category for line *i* of each file). A pair is
labelled (annotator ``majority``) from the categories at least 2 experts chose; when those
map differently, the most-voted wins; a tie between different labels, or no category with
2 votes, leaves the pair unlabelled and listed (``unresolved``). The mapping:

================================  ==========  ===================  =================================
FLEX category                     label       category             why
================================  ==========  ===================  =================================
Incorrect GT (FN)                 correct     gold_defect          the gold is wrong, the answer right
Structure, Value Repr.            correct     format_equivalence   same answer, other shape or form
Multiple Ans FN                   correct     ambiguous            one of several valid answers
                                                                   (jury does not credit ambiguous)
Other FN                          correct     (none)               right for another reason
FLEX is incorrect (FN)            incorrect   genuine_error        FLEX wrongly credited a failure
Schema Link, Filtering Cond,      incorrect   genuine_error        a real error that happens to
Nullable Col, Multi Rows,                                          match the gold's result
Clause Abusing, Other FP
Incorrect GT (FP)                 incorrect   genuine_error        matches a gold that is wrong too
FLEX is incorrect (FP)            correct     (none)               the pass was right
================================  ==========  ===================  =================================

``flex-judge`` (``fn_gpt-4o-2024-08-06.jsonl``, ``fp_gpt-4o-2024-08-06.jsonl``: the pairs of
the agreement set with FLEX's own judge's ``judge_result``, ``judge_text`` and
``judge_model``) gives no human labels but **judgments** (jury/inputs/judgments.py) of the
recorded judge ``FLEX <judge_model>``: FLEX's two variants are two judges, ``FLEX
gpt-4o-2024-08-06`` (shown both execution results) and ``FLEX gpt-4o-2024-08-06-no-result``
(shown none, FLEX's judge of the passed pairs), the second ``pooled_as`` the first, since FLEX
reports one kappa over both; named by model as ``flex-agreement`` names them and by SQL, so
`jury calibrate --judgments` sets each, and the pool, against the experts.

All kinds also give the pairs as run records (``sql`` = ``pred_sql``, ``recorded`` = the
outcome ``ex`` and ``pred_exec`` as preview) and gold items (the gold file's item with
FLEX's ``gt_sql``, whose result ``gt_exec`` was recorded, its schema text as
``schema_text``); a ``gt_sql`` other than the gold file's is counted and listed. Models are
named per set (``flex-ex-pass``/``flex-ex-fail``, ``flex-cat-pass``/``flex-cat-fail``); a
question answered twice within one set (FLEX pooled two systems' answers) gets its second
answer under ``<model>-2``, so (model, question) stays unique.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from jury.errors import InputError
from jury.inputs.io import _first_error, _jsonl, read_text
from jury.inputs.judgments import JudgeRecord
from jury.inputs.label_import import GoldIndex, ImportReport, LabelSet, normalise_sql, read_csv, shown
from jury.inputs.labels import CONSENSUS, AdjudicationLabel
from jury.inputs.records import GoldItem, QuestionId, RecordedOutcome, RunRecord
from jury.vocab import Verdict

AGREEMENT_MODELS = {1: "flex-ex-pass", 0: "flex-ex-fail"}
CATEGORY_MODELS = {1: "flex-cat-pass", 0: "flex-cat-fail"}
EXPERTS = ("A", "B", "C")
MAJORITY = "majority"
NO_RESULT = "No execution result"  # FLEX's preview of a query that gave no result
_FIELDS = ("schema", "question", "pred_sql", "pred_exec", "gt_sql", "gt_exec")

CORRECT, INCORRECT = "correct", "incorrect"
FAIL_CATEGORIES: dict[str, tuple[str, Verdict | None]] = {
    "Incorrect GT (FN)": (CORRECT, Verdict.GOLD_DEFECT),
    "Structure": (CORRECT, Verdict.FORMAT_EQUIVALENCE),
    "Value Repr.": (CORRECT, Verdict.FORMAT_EQUIVALENCE),
    "Multiple Ans FN": (CORRECT, Verdict.AMBIGUOUS),
    "Other FN": (CORRECT, None),
    "FLEX is incorrect (FN)": (INCORRECT, Verdict.GENUINE_ERROR),
}
PASS_CATEGORIES: dict[str, tuple[str, Verdict | None]] = {
    **{name: (INCORRECT, Verdict.GENUINE_ERROR) for name in ("Schema Link", "Filtering Cond", "Nullable Col", "Multi Rows")},
    "Clause Abusing": (INCORRECT, Verdict.GENUINE_ERROR),
    "Incorrect GT (FP)": (INCORRECT, Verdict.GENUINE_ERROR),
    "Other FP": (INCORRECT, Verdict.GENUINE_ERROR),
    "FLEX is incorrect (FP)": (CORRECT, None),
}


@dataclass
class Pair:
    where: str
    obj: dict[str, Any]
    ex: int
    path: Path
    line: int
    model: str = ""
    item: GoldItem | None = None


def _read_pairs(path: Path) -> list[Pair]:
    pairs = []
    for lineno, obj in _jsonl(path, read_text(path)):
        where = f"{path}:{lineno}"
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a FLEX pair object, got {type(obj).__name__}")
        if not isinstance(obj.get("index"), int) or isinstance(obj.get("index"), bool):
            raise InputError(f"{where}: missing or malformed 'index' (the BIRD question id): {obj.get('index')!r}")
        for name in _FIELDS:
            if not isinstance(obj.get(name), str):
                raise InputError(f"{where}: missing or malformed {name!r} (expected text)")
        if obj.get("ex") not in (0, 1) or isinstance(obj.get("ex"), bool):
            raise InputError(f"{where}: 'ex' is {obj.get('ex')!r}; expected 0 or 1")
        pairs.append(Pair(where, obj, int(obj["ex"]), path, lineno))
    if not pairs:
        raise InputError(f"{path}: no pairs")
    return pairs


def _sort_files(files: Sequence[Path], marker: str, kind: str) -> tuple[list[Pair], list[Pair], Path]:
    """(passed pairs, failed pairs, the experts' CSV), told apart by content."""
    roles: dict[str, tuple[Path, Any]] = {}
    for path in files:
        first = read_text(path).lstrip().split("\n", 1)[0]
        if marker in first:
            role, value = "csv", None
        elif first.startswith("{"):
            value = _read_pairs(path)
            exs = {p.ex for p in value}
            if len(exs) > 1:
                raise InputError(f"{path}: mixes passed (ex=1) and failed (ex=0) pairs; FLEX keeps them in two files")
            role = "pass" if exs == {1} else "fail"
        else:
            raise InputError(f"{path}:1: not a {kind} file (neither FLEX pairs as JSONL nor a CSV with {marker!r})")
        if role in roles:
            raise InputError(f"{path}: a second {_ROLE_NAMES[role]} (the first is {roles[role][0]})")
        roles[role] = (path, value)
    for role in ("pass", "fail", "csv"):
        if role not in roles:
            raise InputError(f"{kind}: no {_ROLE_NAMES[role]} among the files given")
    return roles["pass"][1], roles["fail"][1], roles["csv"][0]


_ROLE_NAMES = {"pass": "file of passed pairs (ex=1)", "fail": "file of failed pairs (ex=0)", "csv": "experts' CSV"}


def _place(report: ImportReport, index: GoldIndex, pairs: list[Pair], base: str, source: str, golds: dict) -> None:
    """Match each pair to its gold item; add its run record and (once per question) its gold item."""
    seen: Counter[QuestionId] = Counter()
    for pair in pairs:
        obj, where = pair.obj, pair.where
        first_line = obj["schema"].lstrip().split("\n", 1)[0]
        db_id = first_line.removeprefix("Database:").strip() if first_line.startswith("Database:") else None
        item = index.match(report, where, obj["index"], obj["question"], db_id)
        if item is None:
            continue
        seen[item.question_id] += 1
        k = seen[item.question_id]
        pair.model, pair.item = (base if k == 1 else f"{base}-{k}"), item
        if k > 1:
            report.counts["questions answered twice in one set"] += 1
        try:
            report.runs.append(
                RunRecord(
                    model=pair.model,
                    question_id=item.question_id,
                    db_id=item.db_id,
                    sql=obj["pred_sql"],
                    recorded=RecordedOutcome(match=pair.ex == 1, preview=obj["pred_exec"]),
                    meta={"source": source, "file": pair.path.name, "line": pair.line},
                )
            )
            gold = GoldItem.model_validate(
                {
                    **item.model_dump(exclude_none=True, exclude={"result", "recorded", "schema_text"}),
                    "sql": obj["gt_sql"],
                    "recorded": {"preview": obj["gt_exec"]},
                    "schema_text": obj["schema"],
                }
            )
        except ValidationError as exc:
            raise InputError(f"{where}: {_first_error(exc)}") from None
        first = golds.get(item.question_id)
        if first is None:
            golds[item.question_id] = (where, gold)
            report.gold_items.append(gold)
            if normalise_sql(gold.sql) != normalise_sql(item.sql):
                report.counts["gt_sql differs from the gold file"] += 1
                report.differences.append(
                    f"{where}: question {item.question_id!r}: FLEX's gt_sql {shown(gold.sql)} differs from the gold "
                    f"file's {shown(item.sql)}; kept FLEX's (its result is the one recorded)"
                )
        else:
            _compare_gold(report, golds, where, first, gold)
        report.counts["pairs"] += 1


def _compare_gold(report: ImportReport, golds: dict, where: str, first: tuple[str, GoldItem], gold: GoldItem) -> None:
    """A question recorded by two pairs: the same gold SQL and schema, and the same result
    rows (in any order: FLEX ran unordered queries twice); a result is kept over an error."""
    qid, (first_where, kept) = gold.question_id, first
    if (kept.sql, kept.schema_text) != (gold.sql, gold.schema_text):
        report.differences.append(f"{where}: question {qid!r}: another gt_sql or schema than at {first_where}; kept the first")
        return
    assert kept.recorded is not None and gold.recorded is not None
    old, new = kept.recorded.preview, gold.recorded.preview
    if old == new:
        return
    if sorted(old.split("\n")) == sorted(new.split("\n")):
        report.counts["gold result recorded twice, rows in another order"] += 1
        return
    if old.strip() == NO_RESULT:
        report.gold_items[report.gold_items.index(kept)] = gold
        golds[qid] = (where, gold)
        report.differences.append(f"{first_where}: question {qid!r}: gold result not recorded; kept the one at {where}")
    else:
        report.differences.append(f"{where}: question {qid!r}: another gold result than at {first_where}; kept the first")


def _number(row: dict[str, str], column: str, where: str, allowed: tuple[float, ...]) -> float:
    cell = row[column].strip()
    try:
        value = float(cell)
    except ValueError:
        value = float("nan")
    if value not in allowed:
        raise InputError(f"{where}: {column} is {cell!r}; expected one of {', '.join(f'{a:g}' for a in allowed)}")
    return value


def _aligned_rows(csv_path: Path, columns: Sequence[str], passed: list[Pair], failed: list[Pair]) -> list:
    rows = read_csv(csv_path, columns)
    for pairs in (passed, failed):
        if len(rows) != len(pairs):
            raise InputError(f"{csv_path}: {len(rows)} rows but {len(pairs)} pairs in {pairs[0].path}; row i judges line i")
    return rows


def import_flex_agreement(files: Sequence[Path], gold: dict[QuestionId, GoldItem]) -> ImportReport:
    report = ImportReport(LabelSet.FLEX_AGREEMENT)
    passed, failed, csv_path = _sort_files(files, "FN_consensus", LabelSet.FLEX_AGREEMENT)
    columns = ["Index"] + [f"{side}_{who}" for side in ("FN", "FP") for who in ("consensus", *EXPERTS)]
    rows = _aligned_rows(csv_path, columns, passed, failed)
    index, golds = GoldIndex(gold), dict[QuestionId, tuple[str, GoldItem]]()
    _place(report, index, failed, AGREEMENT_MODELS[0], LabelSet.FLEX_AGREEMENT, golds)
    _place(report, index, passed, AGREEMENT_MODELS[1], LabelSet.FLEX_AGREEMENT, golds)
    for i, (line, row) in enumerate(rows):
        where = f"{csv_path}:{line}"
        if row["Index"].strip() != str(i):
            raise InputError(f"{where}: Index is {row['Index']!r}, expected {i} (row i judges line i of the pair files)")
        for side, pair in (("FN", failed[i]), ("FP", passed[i])):
            votes = {who: _number(row, f"{side}_{who}", where, (0, 1)) for who in EXPERTS}
            consensus = _number(row, f"{side}_consensus", where, (0, 0.5, 1))
            if pair.item is None:
                continue
            for who, value in votes.items():
                report.labels.append(_adj(pair, CORRECT if value == 1 else INCORRECT, who, LabelSet.FLEX_AGREEMENT))
            note = "consensus 0.5 (the experts stayed split): labelled incorrect" if consensus == 0.5 else None
            if note:
                report.counts["consensus 0.5 labelled incorrect"] += 1
            report.labels.append(
                _adj(pair, CORRECT if consensus == 1 else INCORRECT, CONSENSUS, LabelSet.FLEX_AGREEMENT, note=note)
            )
    return report


def _adj(pair: Pair, label: str, annotator: str, source: str, *, category=None, note=None) -> AdjudicationLabel:
    assert pair.item is not None
    return AdjudicationLabel(
        question_id=pair.item.question_id,
        model=pair.model,
        sql=pair.obj["pred_sql"],
        label=label,  # type: ignore[arg-type]
        category=category,
        annotator=annotator,
        source=source,
        note=note,
    )


def import_flex_categories(files: Sequence[Path], gold: dict[QuestionId, GoldItem]) -> ImportReport:
    report = ImportReport(LabelSet.FLEX_CATEGORIES)
    passed, failed, csv_path = _sort_files(files, "Incorrect GT (FN)", LabelSet.FLEX_CATEGORIES)
    rows = _aligned_rows(csv_path, [*PASS_CATEGORIES, *FAIL_CATEGORIES], passed, failed)
    index, golds = GoldIndex(gold), dict[QuestionId, tuple[str, GoldItem]]()
    _place(report, index, failed, CATEGORY_MODELS[0], LabelSet.FLEX_CATEGORIES, golds)
    _place(report, index, passed, CATEGORY_MODELS[1], LabelSet.FLEX_CATEGORIES, golds)
    for i, (line, row) in enumerate(rows):
        where = f"{csv_path}:{line}"
        for mapping, pair in ((FAIL_CATEGORIES, failed[i]), (PASS_CATEGORIES, passed[i])):
            votes = {name: int(_number(row, name, where, (0, 1, 2, 3))) for name in mapping}
            if pair.item is None:
                continue
            decided = _majority(votes, mapping)
            tally = ", ".join(f"{name} {n}" for name, n in votes.items() if n) or "none"
            if decided is None:
                report.unresolved.append(f"{pair.where}: question {pair.item.question_id!r}: no majority ({tally})")
                continue
            label, category = decided
            report.counts[f"{label} / {category or 'no category'}"] += 1
            report.labels.append(
                _adj(pair, label, MAJORITY, LabelSet.FLEX_CATEGORIES, category=category, note=f"experts' votes of 3: {tally}")
            )
    return report


def _majority(votes: dict[str, int], mapping: dict[str, tuple[str, Verdict | None]]) -> tuple[str, Verdict | None] | None:
    """The (label, category) of the categories at least 2 of 3 experts chose; the most-voted
    decides between differing ones; a tie between different labels (or no majority) is None."""
    chosen = {name: n for name, n in votes.items() if n >= 2}
    if not chosen:
        return None
    outcomes = {mapping[name] for name in chosen}
    if len(outcomes) == 1:
        return outcomes.pop()
    top = max(chosen.values())
    best = {mapping[name] for name, n in chosen.items() if n == top}
    if len(best) == 1:
        return best.pop()
    labels = {label for label, _ in best}
    return (labels.pop(), None) if len(labels) == 1 else None


NO_RESULT_SUFFIX = "-no-result"  # FLEX's judge_model when its judge saw no execution results


def import_flex_judge(files: Sequence[Path], gold: dict[QuestionId, GoldItem]) -> ImportReport:
    """FLEX's judge files (passed and/or failed pairs, each with ``judge_result``) as judgments."""
    report = ImportReport(LabelSet.FLEX_JUDGE)
    index, golds = GoldIndex(gold), dict[QuestionId, tuple[str, GoldItem]]()
    by_outcome: dict[int, list[Pair]] = {}
    for path in files:
        pairs = _read_pairs(path)
        exs = {p.ex for p in pairs}
        if len(exs) > 1:
            raise InputError(f"{path}: mixes passed (ex=1) and failed (ex=0) pairs; FLEX keeps them in two files")
        ex = exs.pop()
        if ex in by_outcome:
            raise InputError(
                f"{path}: a second file of {'passed' if ex else 'failed'} pairs (the first is {by_outcome[ex][0].path})"
            )
        for pair in pairs:
            _judge_fields(pair)
        by_outcome[ex] = pairs
    for ex in (0, 1):  # failed pairs first, as flex-agreement places them
        if ex in by_outcome:
            _place(report, index, by_outcome[ex], AGREEMENT_MODELS[ex], LabelSet.FLEX_JUDGE, golds)
    for _ex, pairs in sorted(by_outcome.items()):
        for pair in pairs:
            if pair.item is None:
                continue
            obj = pair.obj
            model_name = obj["judge_model"]
            base = model_name.removesuffix(NO_RESULT_SUFFIX)
            report.judgments.append(
                JudgeRecord(
                    question_id=pair.item.question_id,
                    model=pair.model,
                    sql=obj["pred_sql"],
                    judge=f"FLEX {model_name}",
                    pooled_as=f"FLEX {base}" if base != model_name else None,
                    label="correct" if obj["judge_result"] else "incorrect",
                    category=None,  # FLEX's judge says right or wrong, not why
                    reasoning=obj["judge_text"],
                    candidate_position=None,  # it saw the prediction and the ground truth, labelled as such
                    note=f"judge_model {model_name}" + (" (judged without execution results)" if base != model_name else ""),
                )
            )
            report.counts[f"judged {'correct' if obj['judge_result'] else 'incorrect'}"] += 1
    return report


def _judge_fields(pair: Pair) -> None:
    obj = pair.obj
    if not isinstance(obj.get("judge_result"), bool):
        raise InputError(
            f"{pair.where}: 'judge_result' is {obj.get('judge_result')!r}; expected true or false (a FLEX judge file)"
        )
    for name in ("judge_model", "judge_text"):
        if not isinstance(obj.get(name), str) or not obj[name].strip():
            raise InputError(f"{pair.where}: missing or malformed {name!r} (expected text; a FLEX judge file)")
