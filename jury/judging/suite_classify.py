"""Error-classification ballots of test-suite runs (`jury suites --classify`).

A failing test that raised an error goes to the jury only when the taxonomy's rules leave it
unclassified (no rule matches its error, or rules of two categories do; see
jury.judging.taxonomies.Taxonomy.classify): an error the rules classify never reaches a juror.
The first k jurors of the panel outside the model's families each see the task, the test's
name, its expected output and the error text, and the taxonomy's categories (listed in an
order drawn from the seed per test, model and juror). Each answers one category id, or
``none_fits`` when no category describes the error; a reply that is neither is an abstention,
as on every ballot.

A vote counts the test as a genuine error (``category``: genuine_error) and records the pick
(``error_category``: the id, absent for none_fits). The record's verdict follows the
adjudication rule over those votes (genuine_error once a strict majority of the k jurors
voted, else undecided), and its ``error_category`` is the category a strict majority of its
counted votes picked (jury.judging.taxonomies.record_category, as for `jury adjudicate
--taxonomy`), else none: a none_fits majority, a split or too many abstentions leave the test
without a category.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from jury.inputs.records import RunRecord
from jury.judging.ballots import SYSTEM_PROMPT, Template, check_template, fence
from jury.judging.families import FamilyRegistry
from jury.judging.juror import JurorSpec
from jury.judging.panels import PROMPTS_DIR, Panel
from jury.judging.plan import Ballot, BallotResult
from jury.judging.runner import run_ballots
from jury.judging.suite_ballots import SuitePlan, suite_record
from jury.judging.taxonomies import Taxonomy, record_category
from jury.vocab import CLASSIFY_STYLE, NONE_FITS, Verdict

if TYPE_CHECKING:
    from jury.execution.store import Store
    from jury.judging.runner import RunOptions, RunStats

CLASSIFY_PROMPT = "classify-error-v1.md"
TEXT_CHARS = 4000
NO_TASK = "(no task description recorded)"
NO_EXPECTED = "(no expected output recorded)"


@dataclass
class ClassifyPlan(SuitePlan):
    """A suite plan of classification ballots: the panel as asked has the classify ballot style
    and template; ``taxonomy`` lists the categories."""

    taxonomy: Taxonomy = field(kw_only=True)


def classify_candidates(records: Iterable[RunRecord], taxonomy: Taxonomy) -> list[tuple[RunRecord, int]]:
    """(record, index of the test) of every failing test with an error the taxonomy's rules
    leave unclassified; reference failures are never candidates."""
    out = []
    for r in records:
        if r.tests is None or r.reference_error:
            continue
        for i, t in enumerate(r.tests):
            if not t.passed and t.error is not None and taxonomy.classify(t.error) is None:
                out.append((r, i))
    return out


def classify_panel(panel: Panel) -> Panel:
    """The panel's jurors on the classification ballot (prompts/classify-error-v1.md)."""
    template = Template.load(PROMPTS_DIR / CLASSIFY_PROMPT)
    check_template(template, CLASSIFY_STYLE)
    return dataclasses.replace(panel, ballot_style=CLASSIFY_STYLE, template=template, prompt_path=template.path)


def _clip(text: str) -> str:
    return fence(text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…")


def category_order(taxonomy: Taxonomy, seed: int, where: str, model: str, juror: str) -> list[int]:
    """The order the ballot lists the categories in: a permutation drawn from a hash of the
    seed and the ballot's identity (so no category always comes first)."""
    digest = hashlib.sha256(f"{seed}|{where}|{model}|{juror}".encode()).digest()
    order = list(range(len(taxonomy.categories)))
    random.Random(digest).shuffle(order)
    return order


def categories_text(taxonomy: Taxonomy, order: list[int]) -> str:
    lines = [f'- "{i}" ({label}): {definition}' for i, label, definition in (taxonomy.categories[k] for k in order)]
    return "\n".join([*lines, f'- "{NONE_FITS}": none of the categories above describes the error'])


def classify_messages(
    template: Template, taxonomy: Taxonomy, record: RunRecord, index: int, order: list[int]
) -> list[dict[str, Any]]:
    """The ballot of one errored test: task, test name, expected output, error, categories."""
    assert record.tests is not None
    test = record.tests[index]
    assert test.error is not None
    task = (record.meta or {}).get("question")
    text = template.render(
        question=fence(task if isinstance(task, str) and task.strip() else NO_TASK),
        test=fence(test.name),
        expected=_clip(test.expected) if test.expected is not None else NO_EXPECTED,
        error=_clip(test.error),
        categories=categories_text(taxonomy, order),
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]


def plan_classify(
    candidates: list[tuple[RunRecord, int]], panel: Panel, registry: FamilyRegistry, taxonomy: Taxonomy, *, seed: int = 0
) -> ClassifyPlan:
    """One group of ballots per unclassified errored test: the panel's family-disjoint jurors."""
    panel = classify_panel(panel)
    assert panel.template is not None
    plan = ClassifyPlan(panel, panel.template, seed, taxonomy=taxonomy)

    def ballot(record: RunRecord, index: int, where: str, meta: dict[str, Any], juror: JurorSpec) -> Ballot:
        order = category_order(taxonomy, seed, where, record.model, juror.name)
        messages = classify_messages(plan.template, taxonomy, record, index, order)
        return Ballot(
            "adjudication",
            record.question_id,
            record.model,
            juror,
            CLASSIFY_STYLE,
            messages,
            plan.template.sha256,
            meta,
            taxonomy=taxonomy,
        )

    plan.add_groups(candidates, registry, lambda test: test.error, ballot)
    return plan


def classify_label(res: BallotResult) -> str | None:
    """What early stop counts: the juror's pick (a category id or none_fits), None without a vote."""
    if res.status != "voted" or res.reply is None:
        return None
    return str(res.reply["verdict"])


def _vote(r: BallotResult) -> dict[str, Any]:
    pick = classify_label(r)
    vote = r.vote(Verdict.GENUINE_ERROR.value if pick is not None else None)
    vote["raw_verdict"] = pick
    if pick is not None and pick != NONE_FITS:
        vote["error_category"] = pick
    return vote


def build_classify_records(plan: ClassifyPlan, results: list[list[BallotResult]]) -> list[dict[str, Any]]:
    out = []
    for group in results:
        record = suite_record(group[0].ballot, plan.families[str(group[0].ballot.model)], [_vote(r) for r in group])
        record["error_category"] = record_category(record["verdict"], record["votes"])
        out.append(record)
    return out


def run_classify(plan: ClassifyPlan, store: Store, **kwargs: Unpack[RunOptions]) -> tuple[list[dict[str, Any]], RunStats]:
    results, stats = run_ballots(plan.groups, store, classify_label, **kwargs)
    return build_classify_records(plan, results), stats
