"""Gold audit: every juror of the audit panel judges every gold query on its own.

A juror sees the question, the evidence (panel option), the gold SQL and the columns of
the tables it touches, optionally a preview of the gold result; never any model output.

Repeats (--repeats R): the panel is asked R times. An audit ballot shows the gold query alone
(no answer order to draw), so repeat r's ballot differs from repeat 0's only by r in its
request hash: each repeat is its own stored vote, and repeat 0 is exactly the ballot of a
panel asked once. Repeat r + 1 is asked once repeat r's ballots are answered. A record's
``votes``, ``flagged``, ``decided`` and ``defect_types`` are repeat 0's; the other repeats'
votes are in its ``repeat_votes`` (each with its ``repeat``), read by ``jury report``
(test-retest agreement on the flag votes, flags that change, the gold-clean column's spread).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from jury.compare.outcomes import gold_result_key, schema_of
from jury.inputs.records import GoldItem
from jury.judging.agreement import AUDIT, agreement_summary
from jury.judging.ballots import SCHEMA_HEADINGS, AuditDefectTypes, Template, audit_messages, fence
from jury.judging.panels import Panel
from jury.judging.plan import Ballot, BallotGroups, BallotResult
from jury.judging.rules import AuditSummary, JurorFlags, audit_counts, audit_flag
from jury.judging.runner import run_repeats
from jury.judging.schema_view import schema_view
from jury.stats.agreement import fleiss_kappa_from_ratings
from jury.vocab import AuditVote

if TYPE_CHECKING:
    from jury.compare.gold_checks import CheckFinding
    from jury.execution.engine_urls import Databases
    from jury.execution.store import Store
    from jury.inputs.records import ExecResult, QuestionId
    from jury.judging.runner import RunOptions, RunStats


@dataclass
class AuditPlan(BallotGroups):
    panel: Panel
    template: Template
    items: list[GoldItem]
    groups: list[list[Ballot]] = field(default_factory=list)
    repeats: int = 1  # --repeats: groups come R at a time, one per repeat of the same gold query


def checks_block(findings: Iterable[CheckFinding]) -> str:
    """The ballot text stating the deterministic gold checks as facts (panel show_checks):
    findings are (name, evidence) objects, e.g. jury.compare.gold_checks.CheckFinding."""
    lines = [f"- {f.name}: {f.evidence}" for f in findings] or ["- none of the checks flagged this query"]
    return (
        "\nDeterministic checks of the gold query (jury executed it repeatedly, without a model; these are "
        "measured facts, weigh them with the question):\n<gold_checks>\n" + fence("\n".join(lines)) + "\n</gold_checks>\n"
    )


def plan_audit(
    items: list[GoldItem],
    panel: Panel,
    databases: Databases,
    gold_results: dict[QuestionId, ExecResult] | None = None,
    checks: dict[QuestionId, list[CheckFinding]] | None = None,
    repeats: int = 1,
) -> AuditPlan:
    """databases: db_id -> (path, sha256); gold_results: question_id -> ExecResult (previews);
    checks: question_id -> the findings of its gold checks, shown to jurors when the panel's
    show_checks is on (an item without an entry, e.g. a recorded result, gets no block);
    repeats: R groups per gold query (repeat 0 first), the same messages, each ballot its repeat."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    template = panel.template or Template.load(panel.prompt_path)  # as validated at load
    plan = AuditPlan(panel, template, items, repeats=repeats)
    types = AuditDefectTypes()  # a database or linked view offers every defect type, wrong_table too
    for item in items:
        schema_text = schema_of(item, databases, item.sql) if panel.schema == "touched" else schema_view(item, databases, panel)
        preview = gold_results.get(item.question_id) if (panel.show_preview and gold_results) else None
        found = checks.get(item.question_id) if (panel.show_checks and checks is not None) else None
        block = checks_block(found) if found is not None else ""
        if panel.schema == "touched":  # the ballot as it always was (audit-v1.md has neither slot)
            messages = audit_messages(template, item, schema_text, panel.show_evidence, preview, block)
        else:
            messages = audit_messages(
                template, item, schema_text, panel.show_evidence, preview, block, SCHEMA_HEADINGS[panel.schema], types.ids
            )
        meta = {"db_id": item.db_id, "gold_key": gold_result_key(item, databases)}
        for repeat in range(repeats):
            plan.groups.append(
                [
                    Ballot(
                        "audit",
                        item.question_id,
                        None,
                        juror,
                        "audit",
                        messages,
                        template.sha256,
                        dict(meta),
                        taxonomy=None if panel.schema == "touched" else types,
                        repeat=repeat,
                    )
                    for juror in panel.jurors
                ]
            )
    return plan


def vote_label(res: BallotResult) -> str | None:
    return res.reply["verdict"] if res.status == "voted" and res.reply else None


def _votes(group: list[BallotResult]) -> list[dict[str, Any]]:
    """The votes of one group (one repeat of one gold query); a vote of repeat r > 0 names it."""
    votes = []
    for r in group:
        j = r.ballot.juror
        votes.append(
            {
                "juror": j.name,
                "family": j.family,
                "model": j.model,
                "raw_verdict": vote_label(r),
                "category": vote_label(r),
                "defect_type": r.reply.get("defect_type") if r.reply else None,
                "reasoning": r.reply.get("reasoning") if r.reply else None,
                "abstained": r.status in ("abstained", "not_asked"),
                "reason": r.error,
                "skipped": False,
                "request_sha256": r.ballot.request_sha256,
                **({"via": r.via} if r.via else {}),  # --batch: only when used
                **({"repeat": r.ballot.repeat} if r.ballot.repeat else {}),  # --repeats: absent means repeat 0
            }
        )
    return votes


def build_records(plan: AuditPlan, results: list[list[BallotResult]]) -> list[dict[str, Any]]:
    """One record per gold query (the audit file's ``records``). With repeats, the record is
    repeat 0's (its votes, flag and defect types) and ``repeat_votes`` holds the other repeats'
    votes, repeat by repeat, each vote with its ``repeat``."""
    out = []
    r_count = plan.repeats
    for at, item in enumerate(plan.items):
        group = results[at * r_count]
        labels = [vote_label(r) for r in group]
        flagged, decided = audit_flag(labels, plan.panel.quorum)
        votes = _votes(group)
        types = sorted({v["defect_type"] for v in votes if v["category"] == AuditVote.DEFECTIVE and v["defect_type"]})
        out.append(
            {
                "question_id": item.question_id,
                "db_id": item.db_id,
                "difficulty": item.difficulty,
                "split": item.split,
                "jurors": [v["juror"] for v in votes],
                "votes": votes,
                "flagged": flagged,
                "decided": decided,
                "defect_types": types,
                "gold_key": group[0].ballot.meta.get("gold_key") if group else None,
            }
        )
        if r_count > 1:
            out[-1]["repeat_votes"] = [v for g in results[at * r_count + 1 : (at + 1) * r_count] for v in _votes(g)]
    return out


def summarize(records: list[dict[str, Any]]) -> AuditSummary:
    """Flag rates overall, by difficulty, by split and by juror; Fleiss' kappa; agreement (alpha,
    pairwise kappa: jury.judging.agreement); defect types."""
    jurors: dict[str, list[str | None]] = {}
    for r in records:
        for v in r["votes"]:
            jurors.setdefault(v["juror"], []).append(v["category"])
    per_juror = {
        name: JurorFlags(
            defective=sum(x == AuditVote.DEFECTIVE for x in cats),
            valid_votes=sum(x is not None for x in cats),
            abstentions=sum(x is None for x in cats),
            flag_rate=(sum(x == AuditVote.DEFECTIVE for x in cats) / sum(x is not None for x in cats))
            if any(x is not None for x in cats)
            else None,
        )
        for name, cats in jurors.items()
    }
    types = Counter(
        v["defect_type"] for r in records for v in r["votes"] if v["category"] == AuditVote.DEFECTIVE and v["defect_type"]
    )
    counts = audit_counts(records)  # the counts loading re-checks (jury/judging/rules.py)
    return AuditSummary(
        overall=counts["overall"],
        by_difficulty=counts["by_difficulty"],
        by_split=counts["by_split"],
        jurors=per_juror,
        fleiss_kappa=fleiss_kappa_from_ratings([[v["category"] for v in r["votes"]] for r in records]),  # older readers
        agreement=agreement_summary(records, AUDIT),  # alpha keeps the questions with abstentions
        undecided=counts["undecided"],
        defect_types=dict(sorted(types.items())),
        flagged_defect_types=dict(sorted(Counter(t for r in records if r["flagged"] for t in r["defect_types"]).items())),
    )


def run_audit(plan: AuditPlan, store: Store, **kwargs: Unpack[RunOptions]) -> tuple[list[dict[str, Any]], RunStats]:
    """The audit records of the plan's groups (asked, or reused from the store) and the run's
    stats; with repeats, one pass per repeat (jury.judging.runner.run_repeats)."""
    results, stats = run_repeats(plan.groups, plan.repeats, store, vote_label, **kwargs)
    return build_records(plan, results), stats
