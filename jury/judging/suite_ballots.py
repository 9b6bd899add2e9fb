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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from jury.inputs.records import RunRecord, SuiteTest
from jury.judging.adjudication import verdict_record
from jury.judging.ballots import SUITE_CATEGORIES, SYSTEM_PROMPT, Template, check_template, draw_order, fence
from jury.judging.families import FamilyRegistry
from jury.judging.juror import JurorSpec
from jury.judging.panels import PROMPTS_DIR, Panel, select_jurors
from jury.judging.plan import Ballot, BallotGroups, BallotResult
from jury.judging.runner import run_ballots

if TYPE_CHECKING:
    from jury.execution.store import Store
    from jury.judging.runner import RunOptions, RunStats

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

    def add_groups(
        self,
        candidates: list[tuple[RunRecord, int]],
        registry: FamilyRegistry,
        answer: Callable[[SuiteTest], str | None],
        ballot: Callable[[RunRecord, int, str, dict[str, Any], JurorSpec], Ballot],
    ) -> None:
        """One group per candidate test: ``ballot(record, index, where, meta, juror)`` for each of
        the panel's first k jurors outside the model's families (see ballot_meta for where and
        meta; ``answer``: what the ballot judges of the test, its actual output or its error)."""
        for record, index in candidates:
            assert record.tests is not None
            if record.model not in self.families:
                self.families[record.model] = registry.families_of(record.model, record.families())
            where, meta = ballot_meta(record, index, answer(record.tests[index]))
            jurors = select_jurors(self.panel, self.families[record.model])
            self.groups.append([ballot(record, index, where, dict(meta), juror) for juror in jurors])


def ballot_meta(record: RunRecord, index: int, answer: str | None) -> tuple[str, dict[str, Any]]:
    """Where a ballot on the record's test ``index`` is (question|test, or question|episode|turn|test,
    as the seeded draws use it) and its meta: the test, its episode and turn, and the keys of the
    expected output (gold_key) and of ``answer`` (the actual output or the error)."""
    assert record.tests is not None
    test = record.tests[index]
    where = (
        f"{record.question_id}|{test.name}"
        if record.episode is None
        else f"{record.question_id}|{record.episode}|{record.turn}|{test.name}"
    )
    meta = {
        "db_id": record.db_id or "",
        "test": test.name,
        "episode": record.episode,
        "turn": record.turn,
        "gold_key": _sha(test.expected or ""),
        "answer_key": _sha(answer or ""),
    }
    return where, meta


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


def suite_messages(template: Template, record: RunRecord, index: int, order: str) -> list[dict[str, Any]]:
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

    def ballot(record: RunRecord, index: int, where: str, meta: dict[str, Any], juror: JurorSpec) -> Ballot:
        order = draw_order(seed, where, record.model, juror.name)
        messages = suite_messages(plan.template, record, index, order)
        return Ballot(
            "adjudication",
            record.question_id,
            record.model,
            juror,
            SUITE_STYLE,
            messages,
            plan.template.sha256,
            {"order": order, **meta},
        )

    plan.add_groups(candidates, registry, lambda test: test.actual, ballot)
    return plan


def suite_vote_category(res: BallotResult) -> str | None:
    if res.status != "voted" or res.reply is None:
        return None
    return str(SUITE_CATEGORIES[res.reply["verdict"]])


def _vote(r: BallotResult) -> dict[str, Any]:
    return r.vote(suite_vote_category(r), order=r.ballot.meta["order"])


def suite_record(first: Ballot, families: list[str], votes: list[dict[str, Any]]) -> dict[str, Any]:
    """The verdict record of one judged test (format or error-classification ballots): the
    shared adjudication record, with the test's name and, in an episode, its episode and turn."""
    turn = {"episode": first.meta["episode"], "turn": first.meta["turn"]} if first.meta.get("episode") is not None else {}
    return {**turn, "test": first.meta["test"], **verdict_record(first, families, votes)}


def build_suite_records(plan: SuitePlan, results: list[list[BallotResult]]) -> list[dict[str, Any]]:
    return [suite_record(g[0].ballot, plan.families[str(g[0].ballot.model)], [_vote(r) for r in g]) for g in results]


def run_suite(plan: SuitePlan, store: Store, **kwargs: Unpack[RunOptions]) -> tuple[list[dict[str, Any]], RunStats]:
    results, stats = run_ballots(plan.groups, store, suite_vote_category, **kwargs)
    return build_suite_records(plan, results), stats
