"""`jury labels import`: turn published human-label sets into jury's label files.

The kinds (jury.inputs.label_sets), each matched question by question to the gold file:

* ``flex-agreement`` and ``flex-categories``: FLEX's expert judgements of model answers
  (the FLEX section below, which also writes their run records and gold items, so the pairs
  are a complete jury input);
* ``wretblad``: Wretblad et al.'s annotations of BIRD questions (``financial_annotations.csv``,
  ``sampled_annotations.csv``), as gold labels. Their categories: 1 spelling/syntax errors
  in the question, 2 vague or ambiguous question, 3 incorrect gold SQL, 4 synonyms,
  5 string capitalisation, 6 question does not map to the database. An item is labelled
  defective when it has 3 (``sql_vs_question``), 2 (``ambiguous_question``) or 6
  (``sql_vs_data``: the question asks for something the data does not hold, so the gold
  SQL answers it by reading some other data as if it were that), the first of 3, 2, 6
  naming the defect type; 1, 4 and 5 are noise in the question's wording, not a wrong gold
  query (the empty cell: no issue). The numbers and the comment go in ``note``; the
  suggested fixed SQL, when given, in ``corrected_sql``. They annotated an earlier BIRD
  release: a question or gold SQL that differs from the gold file's is reported, and an
  item whose gold SQL in the gold file *is* their suggested fix is labelled not defective
  (fixed since), with a note saying so;
* ``arcwise``: Arcwise's cleaned BIRD mini-dev, compared item by item with the original
  mini-dev gold (``--original``; by default the gold file itself). Every item was reviewed,
  so each gets a gold label: a changed SQL (whitespace aside) -> a candidate defect
  (``corrected_sql``, the original item in ``LabelImportReport.changed``: this layer cannot
  execute, so jury.jobs.labels runs both queries and keeps the defect only when the result
  changes under the comparator; an equal result is a format-only change, not defective); a
  changed question or evidence with the SQL kept -> defective, ``ambiguous_question`` (the
  text admitted a reading other than the SQL's; Arcwise fixed the wording instead of the
  query); unchanged -> not defective. The correction note goes in ``note``.
* ``platinum``: a corrected gold file in BIRD's dev.json shape (BIRD-Platinum style: the same
  question ids, some SQL changed), compared with the original gold as ``arcwise`` is; the
  annotator is the file's stem, the source ``platinum:<file name>``.
* ``csv``: gold labels anyone wrote, one row each, columns ``question_id, defective, type,
  note, annotator`` (``defective``: true/false, yes/no or 1/0; ``type``: a defect type or
  empty, only on a defective row; ``note`` may be empty), matched by question id; the source
  is ``csv:<file name>``. A bad cell, an unknown type or one annotator's second row for a
  question is an InputError naming the file and line.

Items are matched by question id where the set has one, else by normalised question text
(casefolded, whitespace collapsed, trailing punctuation dropped) and db_id when known.
Nothing is dropped silently: the report lists unmatched items, ambiguous text matches,
items read but not labelled, and every difference from the gold file.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from jury.errors import InputError
from jury.inputs.io import MAX_INPUT_BYTES, first_error, jsonl_objects, load_gold, loads_document, read_text
from jury.inputs.judgments import JudgeRecord
from jury.inputs.label_sets import KINDS, LabelSet
from jury.inputs.labels import CONSENSUS, AdjudicationLabel, GoldLabel, Label
from jury.inputs.reader import MAX_EXCERPT_CHARS, csv_rows, excerpt, text_lines
from jury.inputs.records import GoldItem, QuestionId, RecordedOutcome, RunRecord, normalise_qid
from jury.vocab import DefectType, Verdict


@dataclass
class LabelImportReport:
    """What one import produced and everything it could not place."""

    kind: str
    labels: list[Label] = field(default_factory=list)
    judgments: list[JudgeRecord] = field(default_factory=list)  # a recorded judge's verdicts (flex-judge)
    runs: list[RunRecord] = field(default_factory=list)
    gold_items: list[GoldItem] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    unmatched: list[str] = field(default_factory=list)  # items with no gold item
    ambiguous: list[str] = field(default_factory=list)  # text matching two or more gold items
    unresolved: list[str] = field(default_factory=list)  # matched but not labelled (e.g. no majority)
    differences: list[str] = field(default_factory=list)  # the set and the gold file disagree
    # arcwise, platinum: the original gold item of each question whose SQL the set changed; its
    # label is a candidate (defective, ``corrected_sql``) until jury.jobs.labels has executed both
    # queries and compared their results
    changed: dict[QuestionId, GoldItem] = field(default_factory=dict)
    # of those, the questions whose question or evidence was reworded too (which of the two):
    # a format-only SQL change there leaves the rewording, an ``ambiguous_question`` defect
    reworded: dict[QuestionId, list[str]] = field(default_factory=dict)
    # (source, annotator) -> labels written out as they were read, not kept in ``labels`` (csv)
    annotated: Counter[tuple[str, str]] = field(default_factory=Counter)

    def by_annotator(self) -> Counter[tuple[str, str]]:
        """Labels per (source, annotator): those in ``labels`` and those streamed out."""
        return Counter((lab.source, lab.annotator) for lab in self.labels) + self.annotated


def normalise_question(text: str) -> str:
    """The question text as matched: casefolded, whitespace collapsed, trailing punctuation dropped.

    >>> normalise_question("  How many   Schools?  ")
    'how many schools'
    """
    return re.sub(r"\s+", " ", text.casefold()).strip().rstrip(".?!;:").strip()


def normalise_sql(sql: str) -> str:
    """SQL compared with whitespace collapsed and a trailing semicolon dropped."""
    return " ".join(sql.split()).rstrip(";").strip()


def shown(text: str, limit: int = MAX_EXCERPT_CHARS) -> str:
    """A cell quoted in an error line: spaces collapsed, then a short printable `excerpt`."""
    return excerpt(" ".join(text.split()), limit)


class GoldIndex:
    """The gold items by id and by normalised question text."""

    def __init__(self, gold: dict[QuestionId, GoldItem]):
        self.gold = gold
        self._by_text: dict[str, list[GoldItem]] = defaultdict(list)
        for item in gold.values():
            self._by_text[normalise_question(item.question)].append(item)

    def match(
        self,
        report: LabelImportReport,
        where: str,
        qid: QuestionId | None,
        question: str | None,
        db_id: str | None = None,
        *,
        text_fallback: bool = True,
    ) -> GoldItem | None:
        """The gold item of one set item, or None (recorded in the report as unmatched or ambiguous).

        By id first: the item with that id, when its db_id agrees and (with `text_fallback`)
        its question text too; else by normalised text (and db_id). Without `text_fallback`
        the id decides and a differing question text is recorded as a difference.
        """
        item = self.gold.get(qid) if qid is not None else None
        if item is not None and (db_id is None or item.db_id == db_id):
            same = question is None or normalise_question(question) == normalise_question(item.question)
            if same or not text_fallback:
                if not same:
                    report.counts["question text differs"] += 1
                    report.differences.append(
                        f"{where}: question {qid!r}: text {shown(question or '')} differs from the gold file's "
                        f"{shown(item.question)}"
                    )
                report.counts["matched by id"] += 1
                return item
        if question and text_fallback:
            cands = self._by_text.get(normalise_question(question), [])
            if db_id is not None:
                cands = [c for c in cands if c.db_id == db_id]
            if len(cands) == 1:
                found = cands[0]
                report.counts["matched by text"] += 1
                if qid is not None:
                    report.differences.append(
                        f"{where}: id {qid!r} does not fit; matched by text to question {found.question_id!r}"
                    )
                return found
            if cands:
                ids = ", ".join(repr(c.question_id) for c in cands)
                report.ambiguous.append(f"{where}: question text {shown(question)} matches gold items {ids}")
                return None
            report.unmatched.append(f"{where}: question {qid!r} {shown(question)}: no gold item with this id or text")
            return None
        report.unmatched.append(f"{where}: question {qid!r}: not in the gold file")
        return None


def read_csv(path: Path, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """The rows of a CSV file as (first line number, {column: cell}), as `iter_csv` reads them."""
    return list(iter_csv(path, required))


def iter_csv(path: Path, required: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """The rows of a CSV file as (first line number, {column: cell}), read one at a time through
    the bounded reader (`text_lines`: the file is never held whole); fully blank rows are skipped.

    Header names lose any byte-order mark (even one inside quotes) and surrounding spaces.
    A missing column, a row of another width, unparsable CSV or a file of no rows is an
    InputError naming the file and line.
    """
    with text_lines(path, MAX_INPUT_BYTES, what="a label file") as lines:
        records = csv_rows(path, lines)
        first = next(records, None)
        if first is None:
            raise InputError(f"{path}: file is empty")
        header = [name.replace("\ufeff", "").strip() for name in first[1]]
        missing = [name for name in required if name not in header]
        if missing:
            raise InputError(
                f"{path}:1: missing column {missing[0]!r} (the header has {excerpt(', '.join(header))}; expected {', '.join(required)})"
            )
        rows = 0
        for start, cells in records:
            if any(cell.strip() for cell in cells):
                if len(cells) != len(header):
                    raise InputError(f"{path}:{start}: {len(cells)} fields, the header has {len(header)}")
                rows += 1
                yield start, dict(zip(header, cells, strict=True))
    if not rows:
        raise InputError(f"{path}: no rows")


def parse_qid(value: str, where: str) -> QuestionId:
    try:
        qid = normalise_qid(value.strip())
    except ValueError as exc:
        raise InputError(f"{where}: question id {shown(value)}: {exc}") from None
    if not isinstance(qid, int):
        raise InputError(f"{where}: question id {shown(value)} is not an integer")
    return qid


# ---------------------------------------------------------------- Wretblad et al.

WRETBLAD_DEFECTS = ((3, DefectType.SQL_VS_QUESTION), (2, DefectType.AMBIGUOUS_QUESTION), (6, DefectType.SQL_VS_DATA))
WRETBLAD_CATEGORIES = range(1, 7)


@dataclass(frozen=True)
class _WretbladFile:
    """One of the two Wretblad files' layout: its columns, its ``source`` name and the column
    of the question id, the annotated SQL, the categories, the suggested fix (None: none), the
    db_id (None: none) and the question's text."""

    columns: tuple[str, ...]
    source: str
    qid: str
    sql: str
    categories: str
    fix: str | None
    db: str | None
    text: str


_FINANCIAL = _WretbladFile(
    ("Question ID", "Original question", "Original gold SQL", "Suggested fixed gold_sql", "Comment", "Error Category"),
    "wretblad-financial",
    *("Question ID", "Original gold SQL", "Error Category", "Suggested fixed gold_sql", None, "Original question"),
)
_SAMPLED = _WretbladFile(
    ("question_id", "db_id", "question", "SQL", "Comment", "Annotation"),
    "wretblad-sampled",
    *("question_id", "SQL", "Annotation", None, "db_id", "question"),
)


def import_wretblad(files: Sequence[Path], gold: dict[QuestionId, GoldItem]) -> LabelImportReport:
    report = LabelImportReport(LabelSet.WRETBLAD)
    index = GoldIndex(gold)
    first: dict[tuple[str, QuestionId], tuple[str, GoldLabel | None]] = {}  # (annotator, question) -> (where, label kept)
    for path in files:
        header = read_text(path).split("\n", 1)[0].replace("\ufeff", "")
        if "Error Category" in header:
            layout = _FINANCIAL
        elif "Annotation" in header:
            layout = _SAMPLED
        else:
            raise InputError(f"{path}:1: not a Wretblad annotation file (expected an 'Error Category' or an 'Annotation' column)")
        source = layout.source
        for line, row in read_csv(path, layout.columns):
            where = f"{path}:{line}"
            cats = _wretblad_categories(row[layout.categories], where)
            qid = parse_qid(row[layout.qid], where)
            item = index.match(report, where, qid, row[layout.text], row[layout.db] if layout.db else None, text_fallback=False)
            if item is None:
                continue
            label = _wretblad_label(report, where, item, row, cats, layout)
            if _repeated_wretblad(report, first, where, label):
                continue
            first[(label.annotator, label.question_id)] = (where, label)
            report.labels.append(label)
            report.counts[f"{source} items"] += 1
            report.counts[f"{source} defective"] += label.gold_defective
    return report


def _repeated_wretblad(
    report: LabelImportReport, first: dict[tuple[str, QuestionId], tuple[str, GoldLabel | None]], where: str, label: GoldLabel
) -> bool:
    """Whether `label`'s question was annotated before by the same annotators, in any file of
    this import (financial_annotations.csv and sampled_annotations.csv are one team's work).
    The same verdict is labelled once (listed as a difference); different verdicts leave the
    question unlabelled (listed as unresolved): one annotator's two contradicting labels would
    count as two sources' agreement or disagreement in calibrate."""
    key = (label.annotator, label.question_id)
    if key not in first:
        return False
    seen_at, kept = first[key]
    if kept is None:  # already in conflict
        report.unresolved.append(f"{where}: question {label.question_id!r} annotated again (first at {seen_at}); left unlabelled")
    elif (kept.gold_defective, kept.defect_type) == (label.gold_defective, label.defect_type):
        report.differences.append(
            f"{where}: question {label.question_id!r} repeated (first at {seen_at}) with the same verdict; labelled once"
        )
    else:
        report.labels.remove(kept)
        report.counts[f"{kept.source} items"] -= 1
        if kept.gold_defective:
            report.counts[f"{kept.source} defective"] -= 1
        first[key] = (seen_at, None)
        report.unresolved.append(
            f"{where}: question {label.question_id!r} annotated twice with different categories "
            f"(first at {seen_at}); left unlabelled"
        )
    return True


def _wretblad_categories(cell: str, where: str) -> list[int]:
    cats = []
    for part in cell.split(","):
        if not part.strip():
            continue
        try:
            cat = int(part.strip())
        except ValueError:
            cat = 0
        if cat not in WRETBLAD_CATEGORIES:
            raise InputError(f"{where}: error category {shown(cell)}: expected numbers 1 to 6 separated by commas")
        cats.append(cat)
    return cats


def _wretblad_label(
    report: LabelImportReport, where: str, item: GoldItem, row: dict[str, str], cats: list[int], layout: _WretbladFile
) -> GoldLabel:
    defect = next((dt for num, dt in WRETBLAD_DEFECTS if num in cats), None)
    fixed_sql = (row[layout.fix].strip() if layout.fix else "") or None
    notes = [f"Wretblad categories {', '.join(map(str, cats))}" if cats else "Wretblad: no issue"]
    if row["Comment"].strip():
        notes.append(row["Comment"].strip())
    annotated = normalise_sql(row[layout.sql])
    if annotated != normalise_sql(item.sql):
        report.counts["gold SQL differs"] += 1
        report.differences.append(f"{where}: question {item.question_id!r}: annotated gold SQL differs from the gold file's")
        if defect is not None and fixed_sql and normalise_sql(fixed_sql) == normalise_sql(item.sql):
            report.counts["defect fixed in the gold file"] += 1
            notes.append("the gold file's SQL is the suggested fix: not defective in this gold file")
            defect = None
        else:
            notes.append("annotated an earlier gold SQL than the gold file's")
    return GoldLabel(
        question_id=item.question_id,
        gold_defective=defect is not None,
        defect_type=defect,
        corrected_sql=fixed_sql,
        annotator="wretblad",
        source=layout.source,
        note="; ".join(notes),
    )


# ---------------------------------------------------------------- Arcwise mini-dev corrections


def import_arcwise(files: Sequence[Path], gold: dict[QuestionId, GoldItem], original: Path | None) -> LabelImportReport:
    report = LabelImportReport(LabelSet.ARCWISE)
    if len(files) != 1:
        raise InputError(f"arcwise: expected one file (arcwise_mini_dev_cleaned.json), got {len(files)}")
    path = files[0]
    cleaned = loads_document(read_text(path), str(path))
    if not isinstance(cleaned, list):
        raise InputError(f"{path}: expected a JSON list of corrected mini-dev items")
    orig = gold if original is None else load_gold(original)
    index = GoldIndex(gold)
    seen: set[QuestionId] = set()
    for i, obj in enumerate(cleaned):
        where = f"{path}: item {i}"
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected an object, got {type(obj).__name__}")
        for key in ("question_id", "SQL", "question"):
            if not isinstance(obj.get(key), str | int) or isinstance(obj.get(key), bool):
                raise InputError(f"{where}: missing or malformed {key!r}")
        qid = parse_qid(str(obj["question_id"]), where)
        if qid in seen:
            report.differences.append(f"{where}: question {qid!r} repeated; labelled once")
            continue
        seen.add(qid)
        before = orig.get(qid)
        if before is None:
            report.unmatched.append(f"{where}: question {qid!r}: not in the original mini-dev {original or ''}".rstrip())
            continue
        differs = f"{where}: question {qid!r}: the original mini-dev SQL differs from the gold file's"
        if not _in_gold(report, index, where, qid, before, original is not None, differs):
            continue
        label = _arcwise_label(report, obj, before)
        if label.corrected_sql is not None:
            report.changed[label.question_id] = before
        report.labels.append(label)
    return report


def _in_gold(
    report: LabelImportReport, index: GoldIndex, where: str, qid: QuestionId, before: GoldItem, compare: bool, differs: str
) -> bool:
    """Whether question ``qid`` (the original item ``before``) matches a question of the gold file;
    with ``compare``, an original SQL other than the gold file's is counted and noted (``differs``)."""
    item = index.match(report, where, qid, before.question, before.db_id, text_fallback=False)
    if item is None:
        return False
    if compare and normalise_sql(before.sql) != normalise_sql(item.sql):
        report.counts["original SQL differs from the gold file"] += 1
        report.differences.append(differs)
    return True


def _arcwise_label(
    report: LabelImportReport,
    obj: dict[str, Any],
    before: GoldItem,
    *,
    annotator: str = "arcwise",
    source: str = "arcwise-mini-dev",
) -> GoldLabel:
    sql_changed = normalise_sql(str(obj["SQL"])) != normalise_sql(before.sql)
    text_changed = [
        name
        for name, old in (("question", before.question), ("evidence", before.evidence))
        if " ".join(str(obj.get(name, old)).split()) != " ".join(old.split())
    ]
    note = str(obj.get("correction") or "").strip()
    if sql_changed:
        report.counts["SQL changed"] += 1
        defect = None
        if text_changed:
            report.reworded[before.question_id] = text_changed
    elif text_changed:
        report.counts["question/evidence changed, SQL kept"] += 1
        defect = DefectType.AMBIGUOUS_QUESTION
        note = f"{' and '.join(text_changed)} reworded, SQL kept" + (f": {note}" if note else "")
    else:
        report.counts["unchanged"] += 1
        defect = None
    if sql_changed or text_changed:
        report.counts["changed"] += 1
    return GoldLabel(
        question_id=before.question_id,
        gold_defective=sql_changed or bool(text_changed),
        defect_type=defect,
        corrected_sql=str(obj["SQL"]) if sql_changed else None,
        annotator=annotator,
        source=source,
        note=note or None,
    )


# ---------------------------------------------------------------- a corrected gold file (BIRD-Platinum style)


def import_platinum(files: Sequence[Path], gold: dict[QuestionId, GoldItem], original: Path | None) -> LabelImportReport:
    """A corrected gold file in BIRD's dev.json shape (the same question ids, some SQL changed),
    compared item by item with the original gold (``original``; by default the gold file). Every
    item of the file gets a gold label, as for arcwise: a changed SQL (whitespace aside) is a
    candidate defect (``corrected_sql``; jury.jobs.labels decides it by executing both), a changed
    question or evidence with the SQL kept -> defective, ``ambiguous_question``; unchanged -> not
    defective. Annotator: the file's stem; source ``platinum:<file name>``."""
    report = LabelImportReport(LabelSet.PLATINUM)
    if len(files) != 1:
        raise InputError(f"platinum: expected one corrected gold file, got {len(files)}")
    path = files[0]
    corrected = load_gold(path)
    orig = gold if original is None else load_gold(original)
    index = GoldIndex(gold)
    for qid, fixed in corrected.items():
        where = f"{path}: question {qid!r}"
        before = orig.get(qid)
        if before is None:
            report.unmatched.append(f"{where}: not in the original gold {original or ''}".rstrip())
            continue
        if fixed.db_id != before.db_id:
            raise InputError(f"{where}: db_id {fixed.db_id!r}, the original gold's is {before.db_id!r}")
        differs = f"{where}: the original SQL differs from the gold file's"
        if not _in_gold(report, index, where, qid, before, original is not None, differs):
            continue
        obj = {"SQL": fixed.sql, "question": fixed.question, "evidence": fixed.evidence}
        label = _arcwise_label(report, obj, before, annotator=path.stem, source=f"platinum:{path.name}")
        if label.corrected_sql is not None:
            report.changed[label.question_id] = before
        report.labels.append(label)
    return report


# ---------------------------------------------------------------- FLEX
# FLEX's expert judgements of model answers (HeegyuKim/FLEX), as jury labels, runs and gold.
#
# Both sets hold (prediction, question) pairs of BIRD dev as JSONL (``index`` = the BIRD
# question id, ``schema``, ``question``, ``pred_sql``, ``pred_exec``, ``gt_sql``, ``gt_exec``,
# ``ex``: 1 when execution match passed). A pair file is recognised by its content — every
# pair passed (``ex`` = 1) or every pair failed — never by its name: in the agreement set
# ``fn.jsonl`` holds the *passed* pairs and ``fp.jsonl`` the failed ones.
#
# ``flex-agreement`` (``fn.jsonl``, ``fp.jsonl``, ``experts_agreement_200.csv``): row *i* of
# the CSV judges line *i* of the failed pairs (columns ``FN_*``) and line *i* of the passed
# pairs (``FP_*``); 1 = the prediction is correct. Each pair gets a label from each expert
# (annotator ``A``, ``B``, ``C``) and the consensus (annotator ``consensus``); a consensus of
# 0.5 (the experts stayed split) is labelled incorrect, with a note saying so.
#
# ``flex-categories`` (``categorized_fn100.jsonl`` = failed pairs FLEX judged correct,
# ``categorized_fp100.jsonl`` = passed pairs FLEX judged wrong, ``experts_categorization.csv``:
# row *i*, how many of 3 experts chose each category for line *i* of each file). A pair is
# labelled (annotator ``majority``) from the categories at least 2 experts chose; when those
# map differently, the most-voted wins; a tie between different labels, or no category with
# 2 votes, leaves the pair unlabelled and listed (``unresolved``). The mapping:
#
# ================================  ==========  ===================  =================================
# FLEX category                     label       category             why
# ================================  ==========  ===================  =================================
# Incorrect GT (FN)                 correct     gold_defect          the gold is wrong, the answer right
# Structure, Value Repr.            correct     format_equivalence   same answer, other shape or form
# Multiple Ans FN                   correct     ambiguous            one of several valid answers
#                                                                    (jury does not credit ambiguous)
# Other FN                          correct     (none)               right for another reason
# FLEX is incorrect (FN)            incorrect   genuine_error        FLEX wrongly credited a failure
# Schema Link, Filtering Cond,      incorrect   genuine_error        a real error that happens to
# Nullable Col, Multi Rows,                                          match the gold's result
# Clause Abusing, Other FP
# Incorrect GT (FP)                 incorrect   genuine_error        matches a gold that is wrong too
# FLEX is incorrect (FP)            correct     (none)               the pass was right
# ================================  ==========  ===================  =================================
#
# ``flex-judge`` (``fn_gpt-4o-2024-08-06.jsonl``, ``fp_gpt-4o-2024-08-06.jsonl``: the pairs of
# the agreement set with FLEX's own judge's ``judge_result``, ``judge_text`` and
# ``judge_model``) gives no human labels but **judgments** (jury/inputs/judgments.py) of the
# recorded judge ``FLEX <judge_model>``: FLEX's two variants are two judges, ``FLEX
# gpt-4o-2024-08-06`` (shown both execution results) and ``FLEX gpt-4o-2024-08-06-no-result``
# (shown none, FLEX's judge of the passed pairs), the second ``pooled_as`` the first, since FLEX
# reports one kappa over both; named by model as ``flex-agreement`` names them and by SQL, so
# `jury calibrate --judgments` sets each, and the pool, against the experts.
#
# All kinds also give the pairs as run records (``sql`` = ``pred_sql``, ``recorded`` = the
# outcome ``ex`` and ``pred_exec`` as preview) and gold items (the gold file's item with
# FLEX's ``gt_sql``, whose result ``gt_exec`` was recorded, its schema text as
# ``schema_text``); a ``gt_sql`` other than the gold file's is counted and listed. Models are
# named per set (``flex-ex-pass``/``flex-ex-fail``, ``flex-cat-pass``/``flex-cat-fail``); a
# question answered twice within one set (FLEX pooled two systems' answers) gets its second
# answer under ``<model>-2``, so (model, question) stays unique.

AGREEMENT_MODELS = {1: "flex-ex-pass", 0: "flex-ex-fail"}
CATEGORY_MODELS = {1: "flex-cat-pass", 0: "flex-cat-fail"}
EXPERTS = ("A", "B", "C")
MAJORITY = "majority"
NO_RESULT = "No execution result"  # FLEX's preview of a query that gave no result
_FIELDS = ("schema", "question", "pred_sql", "pred_exec", "gt_sql", "gt_exec")

AnswerLabel = Literal["correct", "incorrect"]
"""An adjudication label's ``label``."""
CORRECT: Literal["correct"] = "correct"
INCORRECT: Literal["incorrect"] = "incorrect"
FAIL_CATEGORIES: dict[str, tuple[AnswerLabel, Verdict | None]] = {
    "Incorrect GT (FN)": (CORRECT, Verdict.GOLD_DEFECT),
    "Structure": (CORRECT, Verdict.FORMAT_EQUIVALENCE),
    "Value Repr.": (CORRECT, Verdict.FORMAT_EQUIVALENCE),
    "Multiple Ans FN": (CORRECT, Verdict.AMBIGUOUS),
    "Other FN": (CORRECT, None),
    "FLEX is incorrect (FN)": (INCORRECT, Verdict.GENUINE_ERROR),
}
PASS_CATEGORIES: dict[str, tuple[AnswerLabel, Verdict | None]] = {
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
    for lineno, obj in jsonl_objects(path, read_text(path)):
        where = f"{path}:{lineno}"
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a FLEX pair object, got {type(obj).__name__}")
        if not isinstance(obj.get("index"), int) or isinstance(obj.get("index"), bool):
            raise InputError(f"{where}: missing or malformed 'index' (the BIRD question id): {excerpt(obj.get('index'))}")
        for name in _FIELDS:
            if not isinstance(obj.get(name), str):
                raise InputError(f"{where}: missing or malformed {name!r} (expected text)")
        if obj.get("ex") not in (0, 1) or isinstance(obj.get("ex"), bool):
            raise InputError(f"{where}: 'ex' is {excerpt(obj.get('ex'))}; expected 0 or 1")
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


def _place(
    report: LabelImportReport,
    index: GoldIndex,
    pairs: list[Pair],
    base: str,
    source: str,
    golds: dict[QuestionId, tuple[str, GoldItem]],
) -> None:
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
            raise InputError(f"{where}: {first_error(exc)}") from None
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


def _compare_gold(
    report: LabelImportReport,
    golds: dict[QuestionId, tuple[str, GoldItem]],
    where: str,
    first: tuple[str, GoldItem],
    gold: GoldItem,
) -> None:
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
        raise InputError(f"{where}: {column} is {excerpt(cell)}; expected one of {', '.join(f'{a:g}' for a in allowed)}")
    return value


def _aligned_rows(
    csv_path: Path, columns: Sequence[str], passed: list[Pair], failed: list[Pair]
) -> list[tuple[int, dict[str, str]]]:
    rows = read_csv(csv_path, columns)
    for pairs in (passed, failed):
        if len(rows) != len(pairs):
            raise InputError(f"{csv_path}: {len(rows)} rows but {len(pairs)} pairs in {pairs[0].path}; row i judges line i")
    return rows


def import_flex_agreement(files: Sequence[Path], gold: dict[QuestionId, GoldItem]) -> LabelImportReport:
    report = LabelImportReport(LabelSet.FLEX_AGREEMENT)
    passed, failed, csv_path = _sort_files(files, "FN_consensus", LabelSet.FLEX_AGREEMENT)
    columns = ["Index"] + [f"{side}_{who}" for side in ("FN", "FP") for who in ("consensus", *EXPERTS)]
    rows = _aligned_rows(csv_path, columns, passed, failed)
    index, golds = GoldIndex(gold), dict[QuestionId, tuple[str, GoldItem]]()
    _place(report, index, failed, AGREEMENT_MODELS[0], LabelSet.FLEX_AGREEMENT, golds)
    _place(report, index, passed, AGREEMENT_MODELS[1], LabelSet.FLEX_AGREEMENT, golds)
    for i, (line, row) in enumerate(rows):
        where = f"{csv_path}:{line}"
        if row["Index"].strip() != str(i):
            raise InputError(f"{where}: Index is {excerpt(row['Index'])}, expected {i} (row i judges line i of the pair files)")
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


def _adj(
    pair: Pair, label: AnswerLabel, annotator: str, source: str, *, category: Verdict | None = None, note: str | None = None
) -> AdjudicationLabel:
    assert pair.item is not None
    return AdjudicationLabel(
        question_id=pair.item.question_id,
        model=pair.model,
        sql=pair.obj["pred_sql"],
        label=label,
        category=category,
        annotator=annotator,
        source=source,
        note=note,
    )


def import_flex_categories(files: Sequence[Path], gold: dict[QuestionId, GoldItem]) -> LabelImportReport:
    report = LabelImportReport(LabelSet.FLEX_CATEGORIES)
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


def _majority(
    votes: dict[str, int], mapping: dict[str, tuple[AnswerLabel, Verdict | None]]
) -> tuple[AnswerLabel, Verdict | None] | None:
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


def import_flex_judge(files: Sequence[Path], gold: dict[QuestionId, GoldItem]) -> LabelImportReport:
    """FLEX's judge files (passed and/or failed pairs, each with ``judge_result``) as judgments."""
    report = LabelImportReport(LabelSet.FLEX_JUDGE)
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
            f"{pair.where}: 'judge_result' is {excerpt(obj.get('judge_result'))}; expected true or false (a FLEX judge file)"
        )
    for name in ("judge_model", "judge_text"):
        if not isinstance(obj.get(name), str) or not obj[name].strip():
            raise InputError(f"{pair.where}: missing or malformed {name!r} (expected text; a FLEX judge file)")


# ---------------------------------------------------------------- a generic CSV of gold labels

CSV_COLUMNS = ("question_id", "defective", "type", "note", "annotator")
_YES, _NO = ("true", "yes", "1"), ("false", "no", "0")


def import_csv(files: Sequence[Path], gold: dict[QuestionId, GoldItem]) -> LabelImportReport:
    report = LabelImportReport(LabelSet.CSV)
    report.labels.extend(iter_csv_labels(files, gold, report))
    return report


def iter_csv_labels(files: Sequence[Path], gold: dict[QuestionId, GoldItem], report: LabelImportReport) -> Iterator[GoldLabel]:
    """The gold labels of CSV ``files``, one row at a time (counted in ``report``, which also
    lists what could not be matched; ``report.labels`` is left to the caller), so an import of
    any size holds one row, the gold index and one key per (annotator, question) seen: the
    duplicate check's, an int per key (the annotator's number and the question id packed), about
    100 bytes a row (10^6 rows: ~100 MB) — the one thing that grows with the rows."""
    index = GoldIndex(gold)
    annotators: dict[str, int] = {}
    seen: set[int | tuple[str, QuestionId]] = set()
    for path in files:
        for line, row in iter_csv(path, CSV_COLUMNS):
            where = f"{path}:{line}"
            cell = row["defective"].strip().lower()
            if cell not in _YES + _NO:
                raise InputError(f"{where}: defective = {shown(row['defective'])}: give true or false (yes/no, 1/0)")
            defective = cell in _YES
            kind = row["type"].strip() or None
            if kind is not None and kind not in DefectType.__members__.values():
                raise InputError(f"{where}: type = {shown(kind)}: one of {', '.join(DefectType)} (or empty)")
            if kind is not None and not defective:
                raise InputError(f"{where}: type = {shown(kind)} on a row that is not defective")
            annotator = row["annotator"].strip()
            if not annotator:
                raise InputError(f"{where}: annotator is empty: name who labelled the question")
            qid = parse_qid(row["question_id"], where)
            key = _seen_key(annotators, annotator, qid)
            if key in seen:
                first = _first_row(files, annotator, qid)
                raise InputError(f"{where}: {annotator!r} labelled question {qid!r} already at {first}")
            seen.add(key)
            item = index.match(report, where, qid, None, text_fallback=False)
            if item is None:
                continue
            label = GoldLabel(
                question_id=item.question_id,
                gold_defective=defective,
                defect_type=DefectType(kind) if kind else None,
                annotator=annotator,
                source=f"csv:{path.name}",
                corrected_sql=None,
                note=row["note"].strip() or None,
            )
            report.counts["items"] += 1
            report.counts["defective"] += defective
            yield label


def _seen_key(annotators: dict[str, int], annotator: str, qid: QuestionId) -> int | tuple[str, QuestionId]:
    """One (annotator, question) as the duplicate check keeps it: an int (the annotator's number
    above 64 bits of the question id) for an id in 0..2^64-1, else the pair itself."""
    if isinstance(qid, int) and 0 <= qid < 1 << 64:
        return (annotators.setdefault(annotator, len(annotators)) << 64) | qid
    return (annotator, qid)


def _first_row(files: Sequence[Path], annotator: str, qid: QuestionId) -> str:
    """Where ``annotator`` first labelled ``qid`` (read again: only the error needs it)."""
    for path in files:
        for line, row in iter_csv(path, CSV_COLUMNS):
            if row["annotator"].strip() == annotator and parse_qid(row["question_id"], f"{path}:{line}") == qid:
                return f"{path}:{line}"
    return "an earlier row"


# ---------------------------------------------------------------- dispatch and output


def import_labels(
    kind: str, files: Sequence[str | Path], gold: dict[QuestionId, GoldItem], *, original: str | Path | None = None
) -> LabelImportReport:
    """Import one published label set of `kind` (one of KINDS) against the gold items."""
    paths = [Path(f) for f in files]
    if kind not in KINDS:
        raise InputError(f"unknown label set {kind!r}; choose one of: {', '.join(KINDS)}")
    if original is not None and kind not in (LabelSet.ARCWISE, LabelSet.PLATINUM):
        raise InputError("original is only for the arcwise and platinum kinds")
    if kind == LabelSet.FLEX_AGREEMENT:
        return import_flex_agreement(paths, gold)
    if kind == LabelSet.FLEX_CATEGORIES:
        return import_flex_categories(paths, gold)
    if kind == LabelSet.FLEX_JUDGE:
        return import_flex_judge(paths, gold)
    if kind == LabelSet.WRETBLAD:
        return import_wretblad(paths, gold)
    if kind == LabelSet.CSV:
        return import_csv(paths, gold)
    if kind == LabelSet.PLATINUM:
        return import_platinum(paths, gold, None if original is None else Path(original))
    return import_arcwise(paths, gold, None if original is None else Path(original))


def dump_gold_items(items: Sequence[GoldItem]) -> str:
    """Gold items as JSONL (load_gold reads it back)."""
    return "".join(item.model_dump_json(exclude_none=True) + "\n" for item in items)
