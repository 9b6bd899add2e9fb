"""The ballots of a run and what they would cost: a ballot's request and its hash (the key its
vote is stored under), its result as a verdict file's vote, and --plan's estimates (tokens and
cost per model and juror, no calls). jury.judging.runner asks them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from jury.inputs.io import canonical_v1
from jury.judging.ballots import Offered, reply_schema
from jury.judging.juror import JurorSpec, batch_provider

COMPLETION_TOKENS_ESTIMATE = 400  # reasoning + verdict; used only for plans and the cost cap


@dataclass
class Ballot:
    kind: str  # "adjudication" | "audit"
    question_id: Any
    model: str | None  # model under test (None for audits)
    juror: JurorSpec
    style: str  # blind | labelled | audit
    messages: list[dict[str, Any]]
    template_sha256: str
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. {"order": "gold_first"}
    # --taxonomy: a jury.judging.taxonomies.Taxonomy (the reply's error_category); an audit ballot of a
    # database or linked schema view: a jury.judging.ballots.AuditDefectTypes (the defect types it offers)
    taxonomy: Offered | None = None
    repeat: int = 0  # --repeats: which repeat of the panel this ballot is (0: the one a panel asked once asks)
    _released_sha256: str | None = field(default=None, repr=False, compare=False)

    def release(self) -> None:
        """Drop the prompt once the ballot is answered, keeping its request hash (the verdict
        file needs the hash, never the prompt again): the ballots of a big run do not all sit
        in memory with their prompts. A released ballot cannot be asked again."""
        if self._released_sha256 is None:
            self._released_sha256 = self.request_sha256
        self.messages = []

    @property
    def request_sha256(self) -> str:
        if self._released_sha256 is not None:
            return self._released_sha256
        return hashlib.sha256(
            canonical_v1(  # never change: stored votes are keyed by this hash
                {
                    "juror_model": self.juror.model,
                    "api_base": self.juror.api_base,
                    "params": self.juror.generation_params(),
                    "structured_output": self.juror.structured_output,
                    "messages": self.messages,
                    "reply_schema": reply_schema(self.style, self.taxonomy),
                    "template_sha256": self.template_sha256,
                    # a recorded judge's file (only then: live jurors' hashes stay as they were)
                    **({"recorded_sha256": self.juror.recorded_sha256} if self.juror.recorded is not None else {}),
                    # --repeats: repeat r > 0 is its own request even when its messages are repeat 0's
                    # (only then: repeat 0's hash is the hash of a panel asked once)
                    **({"repeat": self.repeat} if self.repeat else {}),
                }
            )
        ).hexdigest()


@dataclass
class BallotResult:
    ballot: Ballot
    status: str  # voted | abstained | skipped | not_asked
    reply: dict[str, Any] | None = None
    error: str | None = None
    from_store: bool = False
    cost_usd: float = 0.0
    failed: bool = False  # no vote: the call failed on transport or configuration; a rerun asks again
    via: str | None = None  # "batch": the vote's reply came through a provider's batch API
    pending: str | None = None  # --batch: no vote yet, the ballot waits in this provider batch

    def vote(self, category: str | None, raw_verdict: str | None = None, order: str | None = None) -> dict[str, Any]:
        """This ballot as a verdict file's vote: who judged, what it answered (`raw_verdict`,
        default the reply's verdict) and the `category` it counts as."""
        b = self.ballot
        return {
            "juror": b.juror.name,
            "family": b.juror.family,
            "model": b.juror.model,
            "order": order,
            "raw_verdict": raw_verdict if raw_verdict is not None else (self.reply["verdict"] if self.reply else None),
            "category": category,
            "reasoning": self.reply.get("reasoning") if self.reply else None,
            "abstained": self.status in ("abstained", "not_asked"),
            "reason": self.error,
            "skipped": self.status == "skipped",
            "request_sha256": b.request_sha256,
            **({"via": self.via} if self.via else {}),  # only when used: files without batches stay as they were
            **({"repeat": b.repeat} if b.repeat else {}),  # --repeats: absent means repeat 0
        }


class BallotGroups:
    """A plan's ballots, grouped per question (and model): subclasses set `groups`."""

    groups: list[list[Ballot]]

    def ballots(self) -> list[Ballot]:
        return [b for g in self.groups for b in g]


def estimate(ballot: Ballot) -> tuple[int, float | None]:
    if ballot.juror.recorded is not None:  # answered from its file: nothing sent, nothing paid
        return 0, 0.0
    from jury.judging.providers.prices import estimate_call

    return estimate_call(ballot.juror, ballot.messages, COMPLETION_TOKENS_ESTIMATE)


def plan_rows(ballots: list[Ballot], batch: bool = False) -> list[dict[str, Any]]:
    """For --plan: ballots, estimated tokens and cost per (model under test, juror). No calls.
    With `batch` (and for jurors with batch = true) a batch-capable juror's ballots are priced at
    the batch rate: its row says via "batch", and batch_rate_estimated when litellm has no batch
    price for its model (then half the synchronous price, jury.judging.providers.prices.BATCH_DISCOUNT)."""
    agg: dict[tuple[str | None, str], dict[str, Any]] = {}
    for b in ballots:
        row = agg.setdefault(
            (b.model, b.juror.name),
            {
                **({"model": b.model} if b.model is not None else {}),
                "juror": b.juror.name,
                "juror_model": b.juror.model,
                "ballots": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "cost_usd": 0.0,
                "priced": True,
            },
        )
        if (batch or b.juror.batch) and batch_provider(b.juror) is not None:
            from jury.judging.providers.prices import estimate_batch_call

            tokens, cost, guessed = estimate_batch_call(b.juror, b.messages, COMPLETION_TOKENS_ESTIMATE)
            row["via"] = "batch"
            row["batch_rate_estimated"] = row.get("batch_rate_estimated", False) or guessed
        else:
            tokens, cost = estimate(b)
        row["ballots"] += 1
        row["prompt_tokens"] += tokens
        row["completion_tokens"] += COMPLETION_TOKENS_ESTIMATE
        if cost is None:
            row["priced"] = False
        else:
            row["cost_usd"] += cost
    return list(agg.values())
