"""``jury.error_sample``: Spider 2.0-AIFunc's stratified error-analysis sample from a score.

Questions are grouped by which named model groups solve them (jury.compare.error_strata) and a
seeded sample is drawn per stratum, for people to label with an error taxonomy; the file is
JSONL, one sampled question a line (jury.results.error_sample), written by jury.inputs.writer.

>>> import jury
>>> result = jury.score(["strong.jsonl", "weak.jsonl"], gold="dev.json")  # doctest: +SKIP
>>> sample = jury.error_sample(result, group={"strong": ["gpt-5"], "weak": ["small"]}, per_stratum=10, seed=0)  # doctest: +SKIP
>>> sample.write("to_label.jsonl")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from jury.inputs.records import QuestionId
from jury.pipeline.project import PathLike

if TYPE_CHECKING:
    from jury.jobs.score import Score


class ErrorSample(BaseModel):
    """What ``jury.error_sample`` returns: the groups, every stratum's size and the question ids
    drawn from it (``drawn``), and the JSONL text to label (``jsonl``, what ``write`` writes)."""

    groups: dict[str, list[str]]
    per_stratum: int
    seed: int
    sizes: dict[str, int] = Field(description="stratum -> the questions in it")
    drawn: dict[str, list[QuestionId]] = Field(description="stratum -> the question ids drawn, in draw order")
    jsonl: str = Field(exclude=True, repr=False)
    guard: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)  # the score's inputs, store and db_root

    def summary(self) -> str:
        """One line: how many questions from how many strata, and each stratum's draw."""
        n = sum(len(v) for v in self.drawn.values())
        parts = "; ".join(f"{s}: {len(self.drawn[s])} of {self.sizes[s]}" for s in self.drawn)
        return f"error sample: {n} questions from {len(self.drawn)} strata (seed {self.seed}): {parts}"

    def write(self, path: PathLike) -> Path:
        """Write the JSONL to ``path`` (never one of the score's inputs, its store or a database)."""
        from jury.inputs.writer import write_output
        from jury.pipeline.outputs import guard_outputs

        path = Path(path)
        guard_outputs([path], self.guard.get("inputs", []), store=self.guard.get("store"), db_root=self.guard.get("db_root"))
        write_output(path, self.jsonl)
        return path


def error_sample(
    score: Score,
    *,
    group: Mapping[str, Sequence[str]] | Sequence[str],
    per_stratum: int = 10,
    seed: int = 0,
) -> ErrorSample:
    """Draw the stratified error-analysis sample of ``score`` (a ``jury.score`` result).

    ``group``: group name -> its models, or the command line's ``--group`` values
    (``["strong=a,b", "weak=c"]``);
    ``per_stratum``: questions drawn from each stratum (all of a smaller one); ``seed``: the
    draw's seed (the same seed, runs and groups give the same sample)."""
    from jury.compare.error_strata import draw_sample, parse_groups, strata
    from jury.results.error_sample import sample_lines

    specs = [f"{k}={','.join(v)}" for k, v in group.items()] if isinstance(group, Mapping) else list(group)
    parsed = parse_groups(specs, score.models)
    pairs = score.evaluation.pairs
    stratum_of = strata(pairs, parsed)
    drawn = draw_sample(stratum_of, per_stratum, seed)
    sizes = {s: sum(1 for v in stratum_of.values() if v == s) for s in drawn}
    return ErrorSample(
        groups=parsed,
        per_stratum=per_stratum,
        seed=seed,
        sizes=sizes,
        drawn=drawn,
        jsonl=sample_lines(drawn, sizes, score.gold, score.records, pairs, parsed, seed),
        guard={"inputs": score.inputs, "store": score.store_path, "db_root": score.db_root},
    )
