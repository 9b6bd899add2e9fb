"""Format-equivalence ballots of test-suite runs (PLSQLBench's brittle-comparison case).

A failing test whose expected and actual outputs are both recorded, that raised no error
and whose outputs differ as text (jury.results.suites.format_candidates gives the same
rule) goes to the jury: the first k jurors of the panel outside the model's families, blind
(the two outputs are "Output 1" and "Output 2", in an order drawn from the seed; neither
is called expected or actual, and no model is named). Each answers equivalent, different
or ambiguous; a strict majority of "equivalent" (format_equivalence) credits the test in
the adjudicated suite metrics.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

from jury.inputs.records import RunRecord
from jury.judging.ballots import SUITE_CATEGORIES, SYSTEM_PROMPT, Template, check_template, draw_order, fence
from jury.judging.families import FamilyRegistry
from jury.judging.panels import PROMPTS_DIR, Panel, select_jurors
from jury.judging.rules import adjudication_verdict, is_credited
from jury.judging.runner import Ballot, BallotGroups, BallotResult, run_ballots

SUITE_STYLE = "suite"
SUITE_PROMPT = "adjudicate-suite-v1.md"
OUTPUT_CHARS = 4000
NO_TASK = "(no task description recorded)"


@dataclass
class SuitePlan(BallotGroups):
    panel: Panel  # the panel as asked: its jurors, with the suite ballot style and template
    template: Template
    seed: int
    groups: list[list[Ballot]] = field(default_factory=list)
    families: dict[str, list[str]] = field(default_factory=dict)


def suite_panel(panel: Panel) -> Panel:
    """The panel's jurors on the test-suite ballot (prompts/adjudicate-suite-v1.md)."""
    template = Template.load(PROMPTS_DIR / SUITE_PROMPT)
    check_template(template, SUITE_STYLE)
    return dataclasses.replace(panel, ballot_style=SUITE_STYLE, template=template, prompt_path=template.path)


def _task(record: RunRecord) -> str:
    text = (record.meta or {}).get("question")
    return text if isinstance(text, str) and text.strip() else NO_TASK


def _output(text: str) -> str:
    return fence(text if len(text) <= OUTPUT_CHARS else text[: OUTPUT_CHARS - 1] + "…")


def suite_messages(template: Template, record: RunRecord, index: int, order: str) -> list[dict]:
    """The ballot of one failing test: the expected output first when order is gold_first."""
    assert record.tests is not None
    test = record.tests[index]
    assert test.expected is not None and test.actual is not None
    first, second = (test.expected, test.actual) if order == "gold_first" else (test.actual, test.expected)
    text = template.render(
        question=fence(_task(record)), test=fence(test.name), output_1=_output(first), output_2=_output(second)
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan_suite(candidates: list[tuple[RunRecord, int]], panel: Panel, registry: FamilyRegistry, *, seed: int = 0) -> SuitePlan:
    """One group of ballots per candidate test, each juror's order drawn from the seed."""
    panel = suite_panel(panel)
    assert panel.template is not None
    plan = SuitePlan(panel, panel.template, seed)
    for record, index in candidates:
        assert record.tests is not None
        test = record.tests[index]
        if record.model not in plan.families:
            plan.families[record.model] = registry.families_of(record.model, record.families())
        group = []
        for juror in select_jurors(panel, plan.families[record.model]):
            where = (
                f"{record.question_id}|{test.name}"
                if record.episode is None
                else f"{record.question_id}|{record.episode}|{record.turn}|{test.name}"
            )
            order = draw_order(seed, where, record.model, juror.name)
            meta = {
                "order": order,
                "db_id": record.db_id or "",
                "test": test.name,
                "episode": record.episode,
                "turn": record.turn,
                "gold_key": _sha(test.expected or ""),
                "answer_key": _sha(test.actual or ""),
            }
            messages = suite_messages(plan.template, record, index, order)
            group.append(
                Ballot("adjudication", record.question_id, record.model, juror, SUITE_STYLE, messages, plan.template.sha256, meta)
            )
        plan.groups.append(group)
    return plan


def suite_vote_category(res: BallotResult) -> str | None:
    if res.status != "voted" or res.reply is None:
        return None
    return str(SUITE_CATEGORIES[res.reply["verdict"]])


def _vote(r: BallotResult) -> dict:
    return r.vote(suite_vote_category(r), order=r.ballot.meta["order"])


def build_suite_records(plan: SuitePlan, results: list[list[BallotResult]]) -> list[dict]:
    out = []
    for group in results:
        first = group[0].ballot
        assert first.model is not None
        votes = [_vote(r) for r in group]
        verdict = adjudication_verdict([v["category"] for v in votes if not v["skipped"]], len(votes))
        turn = {"episode": first.meta["episode"], "turn": first.meta["turn"]} if first.meta.get("episode") is not None else {}
        out.append(
            {
                **turn,
                "question_id": first.question_id,
                "test": first.meta["test"],
                "db_id": first.meta["db_id"],
                "model": first.model,
                "families": plan.families[first.model],
                "jurors": [v["juror"] for v in votes],
                "votes": votes,
                "verdict": verdict,
                "credited": is_credited(verdict),
                "gold_also_wrong": False,
                "answer_key": first.meta["answer_key"],
                "gold_key": first.meta["gold_key"],
            }
        )
    return out


def run_suite(plan: SuitePlan, store, **kwargs):
    results, stats = run_ballots(plan.groups, store, suite_vote_category, **kwargs)
    return build_suite_records(plan, results), stats
