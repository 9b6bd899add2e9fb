"""Importers of published predictions: BIRD's predict_dev.json and one-SQL-per-line files,
and those of installed plugins (the ``jury.importers`` entry points: :data:`IMPORTERS`).

BIRD's both index questions by position in the gold file (dev.json); the result is run
records for one model, with a count of missing and odd entries. An importer plugin is a
function ``fn(path, gold_items, model) -> ImportReport`` of the file, the gold items in the
gold file's order and the model name; :func:`read_predictions` keeps the questions asked for
and checks what it returned.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

from jury.errors import InputError
from jury.inputs.io import loads_document, read_text
from jury.inputs.records import GoldItem, QuestionId, RunRecord
from jury.inputs.run_files import RunFile
from jury.plugins import GROUPS, Registry, not_callable, type_name
from jury.vocab import Unanswered

BIRD_SEPARATOR = "\t----- bird -----\t"


@dataclass
class ImportReport:
    """What an importer read: the run records, how many entries the file had, the questions
    left without an answer (``unanswered``: how many of them by cause, jury.vocab.Unanswered)
    and the entries that were not plain answers (one line each)."""

    records: list[RunRecord]
    entries: int = 0
    missing: list[QuestionId] = field(default_factory=list)
    odd: list[str] = field(default_factory=list)
    unanswered: dict[str, int] = field(default_factory=dict)
    # (entry, the entry of its question's first row, whether their answers differ): a gold file
    # that repeats a question (BIRD mini-dev's rows 487 and 488 repeat 137 and 138) gets it
    # scored once, on its first entry, where BIRD's scripts score every row
    repeats: list[tuple[int, int, bool]] = field(default_factory=list)


POSITIONS_HINT = (
    "the predictions index another gold file by position (BIRD's full dev.json, 1,534 questions): "
    "give it with --positions-from (the library's positions_from=)"
)


@dataclass(frozen=True)
class Selection:
    """Which questions of the gold an import keeps, and the family its records get: those of
    the db_ids ``only_db`` and of the question ids ``keep``, each when given (a run scored
    against one gold whose positions are another's keeps that gold's questions); ``family``,
    when given, over the family registry's."""

    only_db: AbstractSet[str] | None = None
    keep: AbstractSet[QuestionId] | None = None
    family: str | None = None

    def holds(self, item: GoldItem) -> bool:
        """Whether the import keeps the question ``item``."""
        return (not self.only_db or item.db_id in self.only_db) and (self.keep is None or item.question_id in self.keep)


def model_name(path: str | Path) -> str:
    """The model a prediction file is read as: its file name without the suffix
    (``codes-15b.json`` is ``codes-15b``)."""
    return Path(path).stem


def _answers(p: Path, questions: int) -> dict[int, _Answer]:
    """A prediction file's answers by position: (SQL, db_id, what was odd about the entry), from
    BIRD's JSON object or one SQL per line (a file longer than the gold is refused)."""
    text = read_text(p)
    if text.lstrip().startswith("["):
        raise InputError(f"{p}: a JSON list; expected BIRD's object of position -> prediction, or one SQL per line")
    if text.lstrip().startswith("{"):
        return _bird_json_answers(p, text, questions)
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    if len(lines) > questions:
        raise InputError(
            f"{p}:{questions + 1}: {len(lines)} lines but the gold file has only {questions} questions; " + POSITIONS_HINT
        )
    return {i: (line.rstrip("\r"), None, None) for i, line in enumerate(lines)}


def import_bird_predictions(
    path: str | Path,
    gold_items: list[GoldItem],
    model: str,
    selection: Selection = Selection(),
) -> ImportReport:
    """Read BIRD's predict_dev.json or a one-SQL-per-line text file into run records.

    Questions are indexed by position in ``gold_items`` (a gold file in its order). The SQL is
    kept exactly as the model wrote it (trailing junk included: it is the model's answer). A
    question without a usable answer is one of three causes (jury.vocab.Unanswered), as in run
    JSONL: an absent position (no key; past the last line) gets no record, like a question a run
    has no line for; a non-string JSON entry (``0``) a record with ``sql`` None, like ``"sql":
    null``; an empty line or entry a record with its blank SQL. ``--missing`` decides what they
    count as, the same for every file kind (jury.compare.coverage.apply_missing_rule).
    ``selection``: the questions kept and the family given (:class:`Selection`).
    """
    p = Path(path)
    if not model.strip():
        raise InputError("model must name the model (got an empty name)")
    answers = _answers(p, len(gold_items))
    report = ImportReport(records=[], entries=len(answers))
    first_at: dict[QuestionId, int] = {}
    for i, item in enumerate(gold_items):
        if not selection.holds(item):
            continue
        if item.question_id in first_at:  # a repeated gold item: its first position's answer counts
            first = first_at[item.question_id]
            report.odd.append(f"{i}: repeats question {item.question_id!r} (entry {first}); skipped")
            report.repeats.append((i, first, answers.get(i, (None,))[0] != answers.get(first, (None,))[0]))
            continue
        first_at[item.question_id] = i
        if i not in answers:
            report.missing.append(item.question_id)
            report.unanswered[Unanswered.ABSENT] = report.unanswered.get(Unanswered.ABSENT, 0) + 1
            continue
        sql, db_id, odd = answers[i]
        if odd:
            report.odd.append(f"{i}: {odd}")
        cause = Unanswered.NOT_STRING if sql is None else Unanswered.EMPTY if not sql.strip() else None
        if cause is not None:
            report.missing.append(item.question_id)
            report.unanswered[cause] = report.unanswered.get(cause, 0) + 1
        report.records.append(RunRecord(model=model, question_id=item.question_id, db_id=db_id, sql=sql, family=selection.family))
    return report


_Answer = tuple[str | None, str | None, str | None]
"""A BIRD prediction entry read: (sql, db_id, what is odd about it), None where absent."""


def _bird_json_answers(p: Path, text: str, n_gold: int) -> dict[int, _Answer]:
    data = loads_document(text, str(p))
    if not isinstance(data, dict):
        raise InputError(f"{p}: expected an object of index -> prediction")
    answers: dict[int, _Answer] = {}
    for key, value in data.items():
        try:
            index = int(key)
        except ValueError:
            raise InputError(f"{p}: key {key!r} is not a question position") from None
        if not 0 <= index < n_gold:
            raise InputError(f"{p}: key {key!r} is outside the gold file's {n_gold} questions; {POSITIONS_HINT}")
        if index in answers:
            raise InputError(f"{p}: key {key!r} repeats question position {index}")
        if not isinstance(value, str):
            answers[index] = (None, None, f"non-string entry {json.dumps(value)[:40]}")
            continue
        if BIRD_SEPARATOR in value:
            sql, _, db_id = value.rpartition(BIRD_SEPARATOR)
            answers[index] = (sql, db_id.strip() or None, None)
        else:
            answers[index] = (value, None, "no database separator")
    return answers


def prediction_runs(
    files: Sequence[RunFile], gold: dict[QuestionId, GoldItem], positions: list[GoldItem], notes: list[str] | None = None
) -> list[RunRecord]:
    """Published prediction files read as runs: each file is one model (its NAME of NAME=PATH,
    else model_name), its entries indexed by position in ``positions`` (a gold file in its
    order), kept for the questions of ``gold``; two files of one model name are an error.
    ``notes``: gets one line per file whose entries repeat a question (repeats_note)."""
    records: list[RunRecord] = []
    seen: dict[str, RunFile] = {}
    for f in files:
        p, model = f.path, f.model if f.model is not None else model_name(f.path)
        if model in seen:
            if f.model is not None:
                raise InputError(f"{f}: model {model!r} is also {seen[model]}; give each file its own NAME")
            raise InputError(
                f"{p}: model {model!r} (the file's name) is also {seen[model]}; name the models apart with NAME=PATH "
                f"(e.g. other={p})"
            )
        seen[model] = f
        report = import_bird_predictions(p, positions, model, Selection(keep=gold.keys()))
        if not report.records:
            raise InputError(f"{p}: none of its {report.entries} predictions is a question of the gold file; {POSITIONS_HINT}")
        records += report.records
        if report.repeats and notes is not None:
            notes.append(repeats_note(str(f), report.repeats, [g.question_id for g in positions]))
    return records


def repeats_note(name: str, repeats: Sequence[tuple[int, int, bool]], ids: Sequence[QuestionId]) -> str:
    """The one line on a prediction file's entries whose gold row repeats an earlier row's
    question: which entries, which questions, and whether their answers differ."""
    shown = ", ".join(f"{i} (question {ids[i]!r}, first at {first})" for i, first, _ in repeats[:10])
    more = f" and {len(repeats) - 10} more" if len(repeats) > 10 else ""
    differ = sum(d for _, _, d in repeats)
    return (
        f"{name}: entr{'y' if len(repeats) == 1 else 'ies'} {shown}{more} repeat{'s' if len(repeats) == 1 else ''} "
        f"a question of the gold file; each question is scored once, on its first entry"
        + (f" ({differ} of the repeats answer{'s' if differ == 1 else ''} differently there)" if differ else "")
        + "; BIRD's scripts score every row"
    )


#: The importer jury ships, by name (``jury import bird-predictions``).
BIRD_PREDICTIONS = "bird-predictions"


def report_result(value: object) -> tuple[ImportReport | None, str | None]:
    """An importer plugin's result checked (jury.plugins.ResultCheck): an ImportReport whose
    records are a list of RunRecords, ``entries`` an int, ``missing`` and ``odd`` lists (``odd``
    of strings) and ``unanswered`` a dict; by exact types, so no code of the plugin runs."""
    wanted = "not an ImportReport of RunRecords (jury.inputs.importers)"
    if type(value) is not ImportReport:
        return None, f"{type_name(value)}, {wanted}"
    fields = {
        "records": type(value.records) is list and all(type(r) is RunRecord for r in value.records),
        "entries": type(value.entries) is int,
        "missing": type(value.missing) is list,
        "odd": type(value.odd) is list and all(type(o) is str for o in value.odd),
        "unanswered": type(value.unanswered) is dict,
    }
    wrong = [name for name, ok in fields.items() if not ok]
    if wrong:
        return None, f"an ImportReport whose {', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} of the wrong type, {wanted}"
    return value, None


IMPORTERS: Registry[Callable[..., ImportReport]] = Registry(
    "importer", GROUPS["importer"], {BIRD_PREDICTIONS: import_bird_predictions}, check=not_callable, result=report_result
)
"""Every importer by name: jury's bird-predictions and those of installed plugins (jury.plugins)."""


def read_predictions(
    importer: str,
    path: str | Path,
    gold_items: list[GoldItem],
    model: str,
    selection: Selection = Selection(),
) -> ImportReport:
    """``path`` read by the importer named ``importer`` (:func:`import_bird_predictions`'s
    arguments). A plugin is given the file, the gold items and the model; of what it returns,
    the questions of ``gold_items`` that ``selection`` holds are kept, with its family when it
    names one, and an answer to a question the gold does not hold is an odd entry.
    A plugin returning anything but an ImportReport of run records is a PluginError (jury.plugins
    checks every plugin call: its result, its exceptions and its time)."""
    fn = IMPORTERS.get_named(importer)
    if not model.strip():
        raise InputError("model must name the model (got an empty name)")
    if IMPORTERS.plugin(importer).shipped:
        return fn(path, gold_items, model, selection)
    report = fn(Path(path), list(gold_items), model)  # its result checked by report_result (jury.plugins)
    items = {g.question_id: g for g in gold_items}
    kept: list[RunRecord] = []
    seen: set[QuestionId] = set()
    for r in report.records:
        item = items.get(r.question_id)
        if item is None or r.question_id in seen:
            why = "is not a question of the gold file" if item is None else "is answered twice; the first answer counts"
            report.odd.append(f"question {r.question_id!r} {why}")
            continue
        seen.add(r.question_id)
        if selection.holds(item):
            family = {"family": selection.family} if selection.family is not None else {}
            kept.append(r.model_copy(update={"model": model, **family}))
    report.records = kept
    return report
