"""The error-analysis sample as a file for taxonomy labelling (JSONL, one line per sampled
question): its stratum, the question, the gold SQL, every grouped model's answer and outcome,
and an empty ``taxonomy`` field for the person labelling it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult
    from jury.inputs.records import GoldItem, QuestionId, RunRecord


def sample_lines(
    sample: Mapping[str, Sequence[QuestionId]],
    stratum_sizes: Mapping[str, int],
    gold: Mapping[QuestionId, GoldItem],
    records: Sequence[RunRecord],
    pairs: Sequence[PairResult],
    groups: dict[str, list[str]],
    seed: int,
) -> str:
    """The JSONL text of ``sample`` (jury.compare.error_strata.draw_sample)."""
    group_of = {m: name for name, ms in groups.items() for m in ms}
    sql = {(r.model, r.question_id): r.sql for r in records}
    outcome = {(p.model, p.question_id): p for p in pairs}
    lines = []
    for stratum, ids in sample.items():
        for q in ids:
            g = gold[q]
            answers = []
            for m in group_of:
                p = outcome[(m, q)]
                answers.append({"model": m, "group": group_of[m], "outcome": p.outcome, "sql": sql.get((m, q)), "error": p.error})
            lines.append(
                json.dumps(
                    {
                        "stratum": stratum,
                        "stratum_size": stratum_sizes[stratum],
                        "seed": seed,
                        "question_id": q,
                        "db_id": g.db_id,
                        "question": g.question,
                        "evidence": g.evidence,
                        "gold_sql": g.sql,
                        "answers": answers,
                        "taxonomy": None,
                    },
                    ensure_ascii=False,
                )
            )
    return "".join(line + "\n" for line in lines)
