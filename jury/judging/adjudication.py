"""Adjudication: send each model's jury-eligible failures to family-disjoint jurors.

Flow: an Evaluation (executions and outcomes) -> ballots per (question, model) for the
first k jurors of the panel outside the model's families -> votes (resumable, logged)
-> a majority verdict per failure -> adjudicated accuracy per model.

Repeats (--repeats R): the panel is asked R times. Repeat r's ballots draw their own answer
order from (seed, r) and carry r in their request hash, so each repeat is its own stored vote
(repeat 0 is exactly the ballot of a panel asked once); repeat r + 1 is asked once repeat r's
ballots are answered. A record's ``votes`` and its published verdict are repeat 0's; the
other repeats' votes are in its ``repeat_votes`` (each with its ``repeat``), read by
``jury report`` (test-retest agreement, verdicts that change, the column's spread).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from jury.compare.outcomes import Evaluation, PairResult, schema_of
from jury.errors import InputError
from jury.execution.schema import SchemaReader
from jury.inputs.records import GoldItem, QuestionId, RunRecord
from jury.judging.ballots import Template, adjudication_messages, blind_category, draw_order, preview
from jury.judging.families import FamilyRegistry
from jury.judging.juror import JurorSpec
from jury.judging.panels import Panel, select_jurors
from jury.judging.plan import Ballot, BallotGroups, BallotResult
from jury.judging.rules import adjudication_verdict, is_credited
from jury.judging.runner import RunOptions, RunStats, run_repeats
from jury.vocab import JURY_ELIGIBLE, BlindAnswer, Outcome, Verdict

if TYPE_CHECKING:
    from jury.execution.store import Store
    from jury.judging.taxonomies import Taxonomy


@dataclass
class AdjudicationPlan(BallotGroups):
    panel: Panel
    template: Template
    seed: int
    groups: list[list[Ballot]] = field(default_factory=list)
    families: dict[str, list[str]] = field(default_factory=dict)  # model -> families
    swap: bool = False  # each juror judges both orders: its ballots come in adjacent pairs
    review_passes: float = 0.0  # the share of each model's strict matches also sent to the jury
    reviewed: dict[str, tuple[int, int]] = field(default_factory=dict)  # model -> (matches sampled, matches)
    taxonomy: Taxonomy | None = None  # --taxonomy
    repeats: int = 1  # --repeats: groups come R at a time, one per repeat of the same item

    def items(self) -> int:
        """The failures (and sampled passes) judged: the groups of one repeat."""
        return len(self.groups) // self.repeats


def plan_adjudication(
    ev: Evaluation,
    gold: Mapping[QuestionId, GoldItem],
    records: list[RunRecord],
    panel: Panel,
    registry: FamilyRegistry,
    *,
    models: list[str] | None = None,
    seed: int = 0,
    swap: bool = False,
    review_passes: float = 0.0,
    taxonomy: Taxonomy | None = None,
    repeats: int = 1,
) -> AdjudicationPlan:
    """Ballots for every jury-eligible failure, and with `review_passes` for a seeded sample of
    each model's strict matches too (the same blind ballot); with `swap` every juror gets each
    ballot in both answer orders; with `repeats` R, R groups per item (repeat 0 first), each
    repeat's orders drawn from (seed, repeat)."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    template = panel.template or Template.load(panel.prompt_path)  # as validated at load
    plan = AdjudicationPlan(panel, template, seed, swap=swap, review_passes=review_passes, taxonomy=taxonomy, repeats=repeats)
    taxonomy_block = taxonomy.block() if taxonomy is not None else ""
    sql_of = {(r.model, r.question_id): r.sql for r in records}
    wanted = set(models) if models else None
    _check_models(ev, wanted)
    schema_cache: dict[tuple[QuestionId, str], str] = {}
    previews: dict[str, str] = {}  # result key -> its preview on a ballot, rendered once in this plan
    sampled = sample_passes(ev, review_passes, seed, wanted)
    plan.reviewed = {m: (len(qs), n) for m, (qs, n) in sampled.items()}
    with SchemaReader() as reader:  # each SQL text parsed and each database opened once in this plan
        for pair in ev.pairs:
            if wanted and pair.model not in wanted:
                continue
            if pair.model not in plan.families:
                plan.families[pair.model] = registry.families_of(pair.model, pair.families)
            review = pair.outcome == Outcome.MATCH and pair.question_id in sampled.get(pair.model, ((), 0))[0]
            if pair.outcome != JURY_ELIGIBLE and not review:
                continue
            item: GoldItem = gold[pair.question_id]
            pred_sql = sql_of[(pair.model, pair.question_id)]
            # a jury-eligible failure executed both its SQL and the gold's
            assert pred_sql is not None and pair.gold_key is not None and pair.pred_key is not None
            jurors = select_jurors(panel, plan.families[pair.model])
            key = (pair.question_id, pred_sql)
            if key not in schema_cache:
                schema_cache[key] = schema_of(item, ev.databases, item.sql, pred_sql, reader=reader)
            shown = (_preview(ev, pair.gold_key, previews), _preview(ev, pair.pred_key, previews))
            ask = _Ask(item, pred_sql, schema_cache[key], pair.gold_key, pair.pred_key, shown, review)
            # the prompt in each order, rendered once for this pair: its jurors' (and repeats')
            # ballots share its text, each with its own message dicts (issue 46)
            built: dict[str, list[dict[str, Any]]] = {}
            for repeat in range(repeats):
                plan.groups.append(_group(plan, ev, pair, ask, jurors, taxonomy_block, repeat, built))
    return plan


def _preview(ev: Evaluation, result_key: str, previews: dict[str, str]) -> str:
    """A result's preview on a ballot, rendered once per plan (``previews`` caches it)."""
    if result_key not in previews:
        previews[result_key] = preview(ev.results[result_key])
    return previews[result_key]


def _check_models(ev: Evaluation, wanted: set[str] | None) -> None:
    """An InputError when a model asked for (--models) is not in the run files."""
    if not wanted:
        return
    unknown = sorted(wanted - set(ev.models()))
    if unknown:
        raise InputError(f"model {unknown[0]!r} is not in the run files (models: {', '.join(ev.models())})")


@dataclass
class _Ask:
    """What one failure (or reviewed pass) shows its jurors, the same for each juror and repeat."""

    item: GoldItem
    pred_sql: str
    schema: str
    gold_key: str  # the gold's result
    pred_key: str  # the candidate's result
    shown: tuple[str, str]  # the gold's and the candidate's result previews
    review: bool  # a sampled strict match (review_passes), not a failure


def _group(
    plan: AdjudicationPlan,
    ev: Evaluation,
    pair: PairResult,
    ask: _Ask,
    jurors: list[JurorSpec],
    taxonomy_block: str,
    repeat: int,
    built: dict[str, list[dict[str, Any]]],
) -> list[Ballot]:
    """One repeat's ballots of one item: each juror's, in its drawn order (and the other with swap).
    ``built``: the item's prompt per order, rendered by its first ballot in that order."""
    group: list[Ballot] = []
    for juror in jurors:
        drawn = draw_order(plan.seed, pair.question_id, pair.model, juror.name, repeat)
        for order in (drawn, OTHER_ORDER[drawn]) if plan.swap else (drawn,):
            ballot = _ballot(plan, ev, pair, ask, juror, order, taxonomy_block, built)
            ballot.taxonomy = plan.taxonomy
            ballot.repeat = repeat
            group.append(ballot)
    return group


def _ballot(
    plan: AdjudicationPlan,
    ev: Evaluation,
    pair: PairResult,
    ask: _Ask,
    juror: JurorSpec,
    order: str,
    taxonomy_block: str,
    built: dict[str, list[dict[str, Any]]],
) -> Ballot:
    """One juror's ballot on one item with the answers in one order: the item's prompt in that order
    (rendered once, in ``built``), in message dicts of its own."""
    item, panel = ask.item, plan.panel
    if order not in built:
        built[order] = adjudication_messages(
            plan.template,
            panel.ballot_style,
            item,
            ask.schema,
            item.sql,
            ev.results[ask.gold_key],
            ask.pred_sql,
            ev.results[ask.pred_key],
            order,
            panel.show_evidence,
            taxonomy_block,
            ask.shown,
        )
    messages = [dict(m) for m in built[order]]
    meta: dict[str, object] = {
        "order": order,
        "db_id": item.db_id,
        "answer_key": ask.pred_key,
        "gold_key": ask.gold_key,
        "sql": ask.pred_sql,  # a recorded judge finds its judgment by model, else by this SQL
    }
    if ask.review:
        meta["review_pass"] = True
    return Ballot("adjudication", pair.question_id, pair.model, juror, panel.ballot_style, messages, plan.template.sha256, meta)


OTHER_ORDER = {"gold_first": "candidate_first", "candidate_first": "gold_first"}


def sample_passes(ev: Evaluation, fraction: float, seed: int, wanted: set[str] | None) -> dict[str, tuple[set[QuestionId], int]]:
    """model -> (the question ids of its strict matches sent to the jury, its strict matches):
    ceil(fraction x matches) of them, the lowest by sha256(seed, model, question), so a sample
    is reproducible and grows (never reshuffles) when the fraction grows."""
    if fraction <= 0:
        return {}
    matches: dict[str, list[QuestionId]] = {}
    for p in ev.pairs:
        if p.outcome == Outcome.MATCH and (not wanted or p.model in wanted):
            matches.setdefault(p.model, []).append(p.question_id)
    out: dict[str, tuple[set[QuestionId], int]] = {}
    for model, qids in matches.items():
        ranked = sorted(qids, key=lambda q: hashlib.sha256(f"{seed}|review-pass|{model}|{q}".encode()).hexdigest())
        out[model] = (set(ranked[: math.ceil(fraction * len(qids) - 1e-9)]), len(qids))
    return out


def vote_category(res: BallotResult) -> str | None:
    """The four-way category of one juror's vote (None: abstained, skipped, not asked)."""
    if res.status != "voted" or res.reply is None:
        return None
    verdict: str = res.reply["verdict"]
    if res.ballot.style == "labelled":
        return verdict
    return blind_category(verdict, res.ballot.meta["order"])[0]


def _vote(r: BallotResult) -> dict[str, Any]:
    category = vote_category(r)
    return {**r.vote(category, order=r.ballot.meta["order"]), **_error_category(r, category)}


def _error_category(r: BallotResult, category: str | None) -> dict[str, Any]:
    """--taxonomy only: {"error_category": the juror's pick} (None unless it voted genuine error)."""
    if r.ballot.taxonomy is None:
        return {}
    pick = r.reply.get("error_category") if r.reply and category == Verdict.GENUINE_ERROR else None
    return {"error_category": pick}


def _swapped_vote(first: BallotResult, second: BallotResult) -> dict[str, Any]:
    """One juror's vote from its ballots in both orders: it counts only when both give the
    same category; two different categories abstain as inconsistent."""
    vote = _vote(first)
    half = _vote(second)
    vote["swapped"] = {
        k: half[k] for k in ("order", "raw_verdict", "category", "reasoning", "abstained", "reason", "request_sha256")
    }
    vote["inconsistent"] = False
    one, two = vote["category"], half["category"]
    if one is None or two is None:
        vote["category"], vote["abstained"] = None, True
        vote["reason"] = vote["reason"] or half["reason"] or "no vote in the other order"
    elif one != two:
        vote["category"], vote["abstained"], vote["inconsistent"] = None, True, True
        vote["reason"] = f"inconsistent: {one} with the answers in one order, {two} in the other"
    return vote


def verdict_record(first: Ballot, families: list[str], votes: list[dict[str, Any]]) -> dict[str, Any]:
    """The fields every adjudication-kind record shares (adjudication, test-suite format and
    error-classification ballots): the judged answer, its jurors' votes and the verdict their
    counted votes give (the adjudication rule); ``first``: the group's first ballot."""
    assert first.model is not None  # an adjudication ballot names the model under test
    verdict = adjudication_verdict([v["category"] for v in votes if not v["skipped"]], len(votes))
    return {
        "question_id": first.question_id,
        "db_id": first.meta["db_id"],
        "model": first.model,
        "families": families,
        "jurors": [v["juror"] for v in votes],
        "votes": votes,
        "verdict": verdict,
        "credited": is_credited(verdict),
        "gold_also_wrong": False,
        "answer_key": first.meta["answer_key"],
        "gold_key": first.meta["gold_key"],
    }


def _group_record(plan: AdjudicationPlan, group: list[BallotResult]) -> dict[str, Any]:
    """The record one group's votes give (one repeat of one failure or reviewed pass)."""
    first = group[0].ballot
    if plan.swap:
        votes = [_swapped_vote(group[i], group[i + 1]) for i in range(0, len(group), 2)]
    else:
        votes = [_vote(r) for r in group]
    record = verdict_record(first, plan.families[str(first.model)], votes)
    neither = sum(v["raw_verdict"] == BlindAnswer.NEITHER and v["category"] is not None for v in votes)
    record["gold_also_wrong"] = record["verdict"] == Verdict.GENUINE_ERROR and neither >= len(votes) // 2 + 1
    if first.meta.get("review_pass"):
        record["review_pass"] = True
    if plan.taxonomy is not None:
        from jury.judging.taxonomies import record_category

        for v in votes:  # a swapped vote counts only when both orders agree: so does its category
            if v.get("swapped") is not None and v["category"] != Verdict.GENUINE_ERROR:
                v["error_category"] = None
        record["error_category"] = record_category(record["verdict"], votes)
    return record


def build_records(plan: AdjudicationPlan, results: list[list[BallotResult]]) -> list[dict[str, Any]]:
    """One record per adjudicated failure or reviewed pass (the verdict file's `records`). With
    repeats, the record is repeat 0's (its votes and verdict) and ``repeat_votes`` holds the
    other repeats' votes, repeat by repeat, each vote with its ``repeat``."""
    out: list[dict[str, Any]] = []
    r_count = plan.repeats
    for i in range(0, len(results), r_count):
        record = _group_record(plan, results[i])
        if r_count > 1:
            record["repeat_votes"] = [v for group in results[i + 1 : i + r_count] for v in _group_record(plan, group)["votes"]]
        out.append(record)
    return out


def run_adjudication(plan: AdjudicationPlan, store: Store, **kwargs: Unpack[RunOptions]) -> tuple[list[dict[str, Any]], RunStats]:
    """The verdict records of the plan's groups (asked, or reused from the store) and the run's
    stats; each group's prompts are dropped as soon as it is done (Ballot.release). With
    repeats, repeat r + 1's ballots are asked once every ballot of repeat r is answered (one
    pass per repeat, the cost cap counting the spend of the passes before)."""

    def release(results: list[BallotResult]) -> None:
        for r in results:
            r.ballot.release()

    results, stats = run_repeats(plan.groups, plan.repeats, store, vote_category, on_group=release, **kwargs)
    return build_records(plan, results), stats
