"""Adjudication: send each model's jury-eligible failures to family-disjoint jurors.

Flow: an Evaluation (executions and outcomes) -> ballots per (question, model) for the
first k jurors of the panel outside the model's families -> votes (resumable, logged)
-> a majority verdict per failure -> adjudicated accuracy per model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jury.compare.outcomes import Evaluation, schema_of
from jury.inputs.records import GoldItem, RunRecord
from jury.judging.ballots import Template, adjudication_messages, blind_category, draw_order
from jury.judging.families import FamilyRegistry
from jury.judging.panels import Panel, select_jurors
from jury.judging.rules import adjudication_verdict, is_credited
from jury.judging.runner import Ballot, BallotResult, run_ballots
from jury.vocab import JURY_ELIGIBLE, BlindAnswer, Verdict


@dataclass
class AdjudicationPlan:
    panel: Panel
    template: Template
    seed: int
    groups: list[list[Ballot]] = field(default_factory=list)
    families: dict[str, list[str]] = field(default_factory=dict)  # model -> families

    def ballots(self) -> list[Ballot]:
        return [b for g in self.groups for b in g]


def plan_adjudication(
    ev: Evaluation,
    gold: dict,
    records: list[RunRecord],
    panel: Panel,
    registry: FamilyRegistry,
    *,
    models: list[str] | None = None,
    seed: int = 0,
) -> AdjudicationPlan:
    template = panel.template or Template.load(panel.prompt_path)  # as validated at load
    plan = AdjudicationPlan(panel, template, seed)
    sql_of = {(r.model, r.question_id): r.sql for r in records}
    wanted = set(models) if models else None
    if wanted:
        unknown = sorted(wanted - set(ev.models()))
        if unknown:
            from jury.errors import InputError

            raise InputError(f"--model {unknown[0]!r} is not in the run files (models: {', '.join(ev.models())})")
    schema_cache: dict[tuple, str] = {}
    for pair in ev.pairs:
        if wanted and pair.model not in wanted:
            continue
        if pair.model not in plan.families:
            plan.families[pair.model] = registry.families_of(pair.model, pair.families)
        if pair.outcome != JURY_ELIGIBLE:
            continue
        item: GoldItem = gold[pair.question_id]
        pred_sql = sql_of[(pair.model, pair.question_id)]
        # a jury-eligible failure executed both its SQL and the gold's
        assert pred_sql is not None and pair.gold_key is not None and pair.pred_key is not None
        jurors = select_jurors(panel, plan.families[pair.model])
        key = (pair.question_id, pred_sql)
        if key not in schema_cache:
            schema_cache[key] = schema_of(item, ev.databases, item.sql, pred_sql)
        group = []
        for juror in jurors:
            order = draw_order(seed, pair.question_id, pair.model, juror.name)
            messages = adjudication_messages(
                template,
                panel.ballot_style,
                item,
                schema_cache[key],
                item.sql,
                ev.results[pair.gold_key],
                pred_sql,
                ev.results[pair.pred_key],
                order,
                panel.show_evidence,
            )
            group.append(
                Ballot(
                    "adjudication",
                    pair.question_id,
                    pair.model,
                    juror,
                    panel.ballot_style,
                    messages,
                    template.sha256,
                    {"order": order, "db_id": item.db_id, "answer_key": pair.pred_key, "gold_key": pair.gold_key},
                )
            )
        plan.groups.append(group)
    return plan


def vote_category(res: BallotResult) -> str | None:
    """The four-way category of one juror's vote (None: abstained, skipped, not asked)."""
    if res.status != "voted" or res.reply is None:
        return None
    verdict = res.reply["verdict"]
    if res.ballot.style == "labelled":
        return verdict
    return blind_category(verdict, res.ballot.meta["order"])[0]


def build_records(plan: AdjudicationPlan, results: list[list[BallotResult]]) -> list[dict]:
    """One record per adjudicated failure (the verdict file's `records`)."""
    out = []
    for group in results:
        first = group[0].ballot
        assert first.model is not None  # an adjudication ballot names the model under test
        k = len(group)
        cats = [vote_category(r) for r in group if r.status != "skipped"]
        verdict = adjudication_verdict(cats, k)
        votes = []
        neither = 0
        for r in group:
            b = r.ballot
            raw = r.reply["verdict"] if r.reply else None
            neither += raw == BlindAnswer.NEITHER
            votes.append(
                {
                    "juror": b.juror.name,
                    "family": b.juror.family,
                    "model": b.juror.model,
                    "order": b.meta["order"],
                    "raw_verdict": raw,
                    "category": vote_category(r),
                    "reasoning": r.reply.get("reasoning") if r.reply else None,
                    "abstained": r.status in ("abstained", "not_asked"),
                    "reason": r.error,
                    "skipped": r.status == "skipped",
                    "request_sha256": b.request_sha256,
                }
            )
        out.append(
            {
                "question_id": first.question_id,
                "db_id": first.meta["db_id"],
                "model": first.model,
                "families": plan.families[first.model],
                "jurors": [r.ballot.juror.name for r in group],
                "votes": votes,
                "verdict": verdict,
                "credited": is_credited(verdict),
                "gold_also_wrong": verdict == Verdict.GENUINE_ERROR and neither >= k // 2 + 1,
                "answer_key": first.meta["answer_key"],
                "gold_key": first.meta["gold_key"],
            }
        )
    return out


def run_adjudication(plan: AdjudicationPlan, store, **kwargs):
    results, stats = run_ballots(plan.groups, store, vote_category, **kwargs)
    return build_records(plan, results), stats
