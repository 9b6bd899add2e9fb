"""`jury labels import`: turn published human-label sets into jury's label files.

Four kinds (``KINDS``), each matched question by question to the gold file:

* ``flex-agreement`` and ``flex-categories``: FLEX's expert judgements of model answers
  (see :mod:`jury.inputs.label_import_flex`, which also writes their run records and gold
  items, so the pairs are a complete jury input);
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
  so each gets a gold label: a changed SQL (whitespace aside) -> defective; a changed
  question or evidence with the SQL kept -> defective, ``ambiguous_question`` (the text
  admitted a reading other than the SQL's; Arcwise fixed the wording instead of the
  query); unchanged -> not defective. The correction note goes in ``note``.

Items are matched by question id where the set has one, else by normalised question text
(casefolded, whitespace collapsed, trailing punctuation dropped) and db_id when known.
Nothing is dropped silently: the report lists unmatched items, ambiguous text matches,
items read but not labelled, and every difference from the gold file.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from jury.errors import InputError
from jury.inputs.io import load_gold, loads_document, read_text
from jury.inputs.judgments import JudgeRecord
from jury.inputs.labels import GoldLabel, Label
from jury.inputs.records import GoldItem, QuestionId, RunRecord, _normalise_qid
from jury.vocab import DefectType


class LabelSet(StrEnum):
    """The published label sets `jury labels import` reads."""

    FLEX_AGREEMENT = "flex-agreement"
    FLEX_CATEGORIES = "flex-categories"
    FLEX_JUDGE = "flex-judge"  # FLEX's own LLM judge: judgments (jury/inputs/judgments.py), not human labels
    WRETBLAD = "wretblad"
    ARCWISE = "arcwise"


KINDS: tuple[str, ...] = tuple(LabelSet)


@dataclass
class ImportReport:
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

    def by_annotator(self) -> Counter[tuple[str, str]]:
        return Counter((lab.source, lab.annotator) for lab in self.labels)


def normalise_question(text: str) -> str:
    """The question text as matched: casefolded, whitespace collapsed, trailing punctuation dropped.

    >>> normalise_question("  How many   Schools?  ")
    'how many schools'
    """
    return re.sub(r"\s+", " ", text.casefold()).strip().rstrip(".?!;:").strip()


def normalise_sql(sql: str) -> str:
    """SQL compared with whitespace collapsed and a trailing semicolon dropped."""
    return " ".join(sql.split()).rstrip(";").strip()


def shown(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


class GoldIndex:
    """The gold items by id and by normalised question text."""

    def __init__(self, gold: dict[QuestionId, GoldItem]):
        self.gold = gold
        self._by_text: dict[str, list[GoldItem]] = defaultdict(list)
        for item in gold.values():
            self._by_text[normalise_question(item.question)].append(item)

    def match(
        self,
        report: ImportReport,
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
    """The rows of a CSV file as (first line number, {column: cell}); fully blank rows are skipped.

    Header names lose any byte-order mark (even one inside quotes) and surrounding spaces.
    A missing column, a row of another width or unparsable CSV is an InputError naming the
    file and line.
    """
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [name.replace("\ufeff", "").strip() for name in next(reader)]
        missing = [name for name in required if name not in header]
        if missing:
            raise InputError(f"{path}:1: missing column {missing[0]!r} (the header has: {', '.join(header)})")
        rows: list[tuple[int, dict[str, str]]] = []
        start = reader.line_num + 1
        for cells in reader:
            if any(cell.strip() for cell in cells):
                if len(cells) != len(header):
                    raise InputError(f"{path}:{start}: {len(cells)} fields, the header has {len(header)}")
                rows.append((start, dict(zip(header, cells, strict=True))))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: malformed CSV: {exc}") from None
    if not rows:
        raise InputError(f"{path}: no rows")
    return rows


def parse_qid(value: str, where: str) -> QuestionId:
    try:
        qid = _normalise_qid(value.strip())
    except ValueError as exc:
        raise InputError(f"{where}: question id {shown(value)}: {exc}") from None
    if not isinstance(qid, int):
        raise InputError(f"{where}: question id {shown(value)} is not an integer")
    return qid


# ---------------------------------------------------------------- Wretblad et al.

WRETBLAD_DEFECTS = ((3, DefectType.SQL_VS_QUESTION), (2, DefectType.AMBIGUOUS_QUESTION), (6, DefectType.SQL_VS_DATA))
WRETBLAD_CATEGORIES = range(1, 7)
_FINANCIAL = ("Question ID", "Original question", "Original gold SQL", "Suggested fixed gold_sql", "Comment", "Error Category")
_SAMPLED = ("question_id", "db_id", "question", "SQL", "Comment", "Annotation")


def import_wretblad(files: Sequence[Path], gold: dict[QuestionId, GoldItem]) -> ImportReport:
    report = ImportReport(LabelSet.WRETBLAD)
    index = GoldIndex(gold)
    first: dict[tuple[str, QuestionId], tuple[str, GoldLabel | None]] = {}  # (annotator, question) -> (where, label kept)
    for path in files:
        header = read_text(path).split("\n", 1)[0].replace("\ufeff", "")
        if "Error Category" in header:
            columns, source = _FINANCIAL, "wretblad-financial"
            qcol, sqlcol, catcol, fixcol = "Question ID", "Original gold SQL", "Error Category", "Suggested fixed gold_sql"
            dbcol, textcol = None, "Original question"
        elif "Annotation" in header:
            columns, source = _SAMPLED, "wretblad-sampled"
            qcol, sqlcol, catcol, fixcol, dbcol, textcol = "question_id", "SQL", "Annotation", None, "db_id", "question"
        else:
            raise InputError(f"{path}:1: not a Wretblad annotation file (expected an 'Error Category' or an 'Annotation' column)")
        for line, row in read_csv(path, columns):
            where = f"{path}:{line}"
            cats = _wretblad_categories(row[catcol], where)
            qid = parse_qid(row[qcol], where)
            item = index.match(report, where, qid, row[textcol], row[dbcol] if dbcol else None, text_fallback=False)
            if item is None:
                continue
            label = _wretblad_label(report, where, item, row, cats, sqlcol, fixcol, source)
            if _repeated_wretblad(report, first, where, label):
                continue
            first[(label.annotator, label.question_id)] = (where, label)
            report.labels.append(label)
            report.counts[f"{source} items"] += 1
            report.counts[f"{source} defective"] += label.gold_defective
    return report


def _repeated_wretblad(report: ImportReport, first: dict, where: str, label: GoldLabel) -> bool:
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


def _wretblad_label(report, where, item, row, cats, sqlcol, fixcol, source) -> GoldLabel:
    defect = next((dt for num, dt in WRETBLAD_DEFECTS if num in cats), None)
    fixed_sql = (row[fixcol].strip() if fixcol else "") or None
    notes = [f"Wretblad categories {', '.join(map(str, cats))}" if cats else "Wretblad: no issue"]
    if row["Comment"].strip():
        notes.append(row["Comment"].strip())
    annotated = normalise_sql(row[sqlcol])
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
        source=source,
        note="; ".join(notes),
    )


# ---------------------------------------------------------------- Arcwise mini-dev corrections


def import_arcwise(files: Sequence[Path], gold: dict[QuestionId, GoldItem], original: Path | None) -> ImportReport:
    report = ImportReport(LabelSet.ARCWISE)
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
        item = index.match(report, where, qid, before.question, before.db_id, text_fallback=False)
        if item is None:
            continue
        if original is not None and normalise_sql(before.sql) != normalise_sql(item.sql):
            report.counts["original SQL differs from the gold file"] += 1
            report.differences.append(f"{where}: question {qid!r}: the original mini-dev SQL differs from the gold file's")
        report.labels.append(_arcwise_label(report, obj, before))
    return report


def _arcwise_label(report: ImportReport, obj: dict, before: GoldItem) -> GoldLabel:
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
        annotator="arcwise",
        source="arcwise-mini-dev",
        note=note or None,
    )


# ---------------------------------------------------------------- dispatch and output


def import_labels(
    kind: str, files: Sequence[str | Path], gold: dict[QuestionId, GoldItem], *, original: str | Path | None = None
) -> ImportReport:
    """Import one published label set of `kind` (one of KINDS) against the gold items."""
    from jury.inputs import label_import_flex as flex

    paths = [Path(f) for f in files]
    if kind not in KINDS:
        raise InputError(f"unknown label set {kind!r}; choose one of: {', '.join(KINDS)}")
    if original is not None and kind != LabelSet.ARCWISE:
        raise InputError("original is only for the arcwise kind")
    if kind == LabelSet.FLEX_AGREEMENT:
        return flex.import_flex_agreement(paths, gold)
    if kind == LabelSet.FLEX_CATEGORIES:
        return flex.import_flex_categories(paths, gold)
    if kind == LabelSet.FLEX_JUDGE:
        return flex.import_flex_judge(paths, gold)
    if kind == LabelSet.WRETBLAD:
        return import_wretblad(paths, gold)
    return import_arcwise(paths, gold, None if original is None else Path(original))


def dump_gold_items(items: Sequence[GoldItem]) -> str:
    """Gold items as JSONL (load_gold reads it back)."""
    return "".join(item.model_dump_json(exclude_none=True) + "\n" for item in items)
