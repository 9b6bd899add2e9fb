"""Recorded jurors: a panel seat whose votes come from a judgment file, not from a model call.

A juror with ``recorded = "judge.jsonl"`` (a judgment file, jury/inputs/judgments.py; a
relative path is read beside the panel file) and optionally ``judge = "NAME"`` (which judge
of that file; needed when it holds several) sits on a blind or labelled adjudication panel
beside live jurors. Its ballot is answered from the judgment of the same (question, model)
(else of the same question and candidate SQL), mapped onto the ballot as a juror's reply
would be, and stored as a vote like any other (no call, no cost). A ballot the file has no
judgment for is an abstention, stored, with the reason.

The mapping of a judgment onto a blind ballot (through the ballot's drawn order) or a
labelled one:

=====================================  ==================================
judgment                               vote
=====================================  ==================================
category gold_defect                   the candidate's answer alone
category genuine_error                 the gold's answer alone
category format_equivalence            both
category ambiguous                     ambiguous
correct, no category                   both (format_equivalence)
incorrect, no category                 the gold's answer alone (genuine_error)
=====================================  ==================================

The file's content hash is part of the juror's identity and of every request hash, so a
changed file makes its votes stale and they are asked again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import ConfigError, InputError
from jury.inputs.io import MAX_INPUT_BYTES
from jury.inputs.judgments import JudgeRecord, load_judgments
from jury.inputs.reader import read_bounded
from jury.inputs.records import QuestionId
from jury.judging.juror import CallResult, JurorSpec
from jury.vocab import BlindAnswer, Verdict

if TYPE_CHECKING:
    from jury.judging.plan import Ballot

RECORDED_STYLES = ("blind", "labelled")


def bind_recorded_juror(spec: JurorSpec, panel_path: Path, style: str) -> JurorSpec:
    """The juror with its judgment file resolved, read, checked and hashed (ConfigError otherwise)."""
    if spec.recorded is None:
        if spec.judge is not None:
            raise ConfigError(f'{panel_path}: juror {spec.name!r}: judge = {spec.judge!r} needs recorded = "FILE"')
        return spec
    if style not in RECORDED_STYLES:
        raise ConfigError(
            f"{panel_path}: juror {spec.name!r}: a recorded judge sits on blind or labelled adjudication panels, "
            f"not on a {style} panel"
        )
    path = Path(spec.recorded)
    if not path.is_absolute():
        path = panel_path.parent / path
    if not path.is_file():
        raise ConfigError(f"{panel_path}: juror {spec.name!r}: recorded = {spec.recorded!r}: {path} is not a file")
    try:
        records = load_judgments([path])
    except InputError as exc:
        raise ConfigError(f"{panel_path}: juror {spec.name!r}: {exc}") from None
    judges = list(dict.fromkeys(r.judge for r in records))
    judge = spec.judge if spec.judge is not None else (judges[0] if len(judges) == 1 else None)
    if judge is None:
        raise ConfigError(
            f"{panel_path}: juror {spec.name!r}: {path} holds {len(judges)} judges ({', '.join(map(repr, judges))}); "
            'say which with judge = "NAME"'
        )
    if judge not in judges:
        raise ConfigError(
            f"{panel_path}: juror {spec.name!r}: judge {judge!r} judged nothing in {path}; judges: {', '.join(judges)}"
        )
    digest = hashlib.sha256(read_bounded(path, MAX_INPUT_BYTES)).hexdigest()
    return spec.model_copy(update={"recorded": str(path.resolve()), "judge": judge, "recorded_sha256": digest})


@cache
def _index(path: str, sha256: str, judge: str) -> dict[tuple[QuestionId, str, str | None], JudgeRecord]:
    """(question_id, "model", model) and (question_id, "sql", normalised SQL) -> the judgment."""
    got = read_bounded(path, MAX_INPUT_BYTES)
    if hashlib.sha256(got).hexdigest() != sha256:
        raise InputError(f"{path}: changed since the panel was loaded (the recorded judge's votes are bound to its content)")
    out: dict[tuple[QuestionId, str, str | None], JudgeRecord] = {}
    for rec in load_judgments([path]):
        if rec.judge != judge:
            continue
        if rec.model is not None:
            out[(rec.question_id, "model", rec.model)] = rec
        if rec.sql is not None:
            out.setdefault((rec.question_id, "sql", " ".join(rec.sql.split())), rec)
    return out


def judgment_for(ballot: Ballot) -> JudgeRecord | None:
    spec = ballot.juror
    assert spec.recorded is not None and spec.recorded_sha256 is not None and spec.judge is not None
    index = _index(spec.recorded, spec.recorded_sha256, spec.judge)
    found = index.get((ballot.question_id, "model", ballot.model))
    if found is None and ballot.meta.get("sql") is not None:
        found = index.get((ballot.question_id, "sql", " ".join(str(ballot.meta["sql"]).split())))
    return found


def recorded_verdict(judgment: JudgeRecord, style: str, order: str) -> str:
    """The reply a juror of `style` gives on a ballot of `order` for this judgment (see the table)."""
    category = judgment.category or (Verdict.FORMAT_EQUIVALENCE if judgment.credited else Verdict.GENUINE_ERROR)
    if style == "labelled":
        return str(category)
    gold, candidate = (
        (BlindAnswer.ANSWER_1, BlindAnswer.ANSWER_2) if order == "gold_first" else (BlindAnswer.ANSWER_2, BlindAnswer.ANSWER_1)
    )
    return str(
        {
            Verdict.GOLD_DEFECT: candidate,
            Verdict.GENUINE_ERROR: gold,
            Verdict.FORMAT_EQUIVALENCE: BlindAnswer.BOTH,
            Verdict.AMBIGUOUS: BlindAnswer.AMBIGUOUS,
        }[Verdict(category)]
    )


def recorded_call(ballot: Ballot, parse: Callable[[str], dict[str, Any]]) -> CallResult:
    """The ballot answered from the judgment file, through the ballot's own reply parser, as a
    CallResult the runner stores like a call's (no attempt, no tokens, no cost). No judgment,
    or one the parser refuses (e.g. a taxonomy needs an error category the file lacks), is a
    stored abstention (status bad_output: final, asked again only when the file changes)."""
    judgment = judgment_for(ballot)
    if judgment is None:
        why = f"the recorded judge {ballot.juror.judge!r} has no judgment of this answer"
        return _abstain(why)
    text = json.dumps(
        {"reasoning": judgment.reasoning or "", "verdict": recorded_verdict(judgment, ballot.style, ballot.meta["order"])},
        ensure_ascii=False,
    )
    try:
        parsed = parse(text)
    except ValueError as exc:
        return _abstain(f"the recorded judgment does not fit this ballot: {exc}", text)
    return CallResult(ok=True, parsed=parsed, text=text, log=[{"attempt": 1, "status": "ok", "recorded": True}])


def _abstain(why: str, text: str | None = None) -> CallResult:
    return CallResult(
        ok=False, error=why, text=text, log=[{"attempt": 1, "status": "bad_output", "error": why, "recorded": True}]
    )
