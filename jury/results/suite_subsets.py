"""PLSQLBench's tables: test-suite metrics per subset (a test set and its split) and the overall
mean over a split's subsets.

A test-suite record may name its ``subset`` (the benchmark's test set, e.g. ``Spider2-ST``)
and ``split`` (e.g. ``dev`` or ``test``); (subset, split) is one column of PLSQLBench's
tables, e.g. Spider2-ST test. Each subset gets the metrics of jury.results.suites over its
own records (single-turn: MeanTestPass@1 and SuitePass@1; episodes: EpisodePass@1,
TurnSuitePass@1 and MeanTestPass@1), with their intervals.

The overall figure of a split is PLSQLBench's: the unweighted (macro) mean over the split's
subsets of each subset's value, each metric over the subsets that report it (MeanTestPass@1
over every subset; SuitePass@1 over the single-turn ones; EpisodePass@1 and TurnSuitePass@1
over the episode ones). The leaderboard's "Test Overall" (2026-06: "Macro average across the
held-out test datasets ... Metric-specific averages use the test datasets where that metric is
reported", Spider2-ST and Spider2-MT test) and "Overall Test Mean" (2026-08: the mean over
MBPP+, Spider2-ST and Spider2-MT test) are this mean; so is "Development Overall". With two
or more splits, ``all splits`` is the same mean over every subset (the 2026-06 "Overall").
A split's overall is given when it holds two or more subsets. The mean of subset means has
no interval here (each subset's own interval is shown); a model lacking a subset the runs
hold is averaged over the subsets it has, and a note names what it lacks.

>>> from jury.inputs.records import RunRecord
>>> def rec(qid, subset, passed):
...     tests = [{"name": f"t{i}", "passed": p} for i, p in enumerate(passed)]
...     return RunRecord.model_validate({"model": "m", "question_id": qid, "subset": subset, "split": "test", "tests": tests})
>>> [s] = subset_scores([rec(1, "A", [True, False]), rec(2, "B", [True, True]), rec(3, "B", [False])])
>>> s.overall["test"]["MeanTestPass@1"].value  # (1/2 + (1 + 0)/2) / 2
0.5
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from jury.errors import InputError
from jury.inputs.records import RunRecord
from jury.results.suites import Metric, SuiteRow, TestKey, model_metrics

SubsetKey = tuple[str, str | None]
"""(subset, split): one column of PLSQLBench's tables."""

ALL_SPLITS = "all splits"
RESERVED = ("overall", "pooled")  # the subset column's own rows
METRICS = ("MeanTestPass@1", "SuitePass@1", "EpisodePass@1", "TurnSuitePass@1")


def subset_label(key: SubsetKey) -> str:
    return key[0] if key[1] is None else f"{key[0]} {key[1]}"


@dataclass(frozen=True)
class Macro:
    """An unweighted mean over subsets of their values of one metric."""

    value: float | None
    subsets: tuple[SubsetKey, ...]  # the subsets averaged


@dataclass
class SubsetScores:
    """One model's metrics per subset (``subsets``) and the overall means (``overall``: group ->
    metric -> Macro, a group being a split or ALL_SPLITS)."""

    model: str
    subsets: dict[SubsetKey, SuiteRow] = field(default_factory=dict)
    overall: dict[str, dict[str, Macro]] = field(default_factory=dict)
    lacking: dict[str, list[SubsetKey]] = field(default_factory=dict)  # group -> subsets of the runs the model lacks


def metric_values(row: SuiteRow) -> dict[str, Metric]:
    """The metrics a subset reports, by PLSQLBench's name."""
    if row.single is not None:
        return {"MeanTestPass@1": row.single.mean_test_pass, "SuitePass@1": row.single.suite_pass}
    if row.episodes is not None:
        e = row.episodes
        return {"MeanTestPass@1": e.mean_test_pass, "EpisodePass@1": e.episode_pass, "TurnSuitePass@1": e.turn_suite_pass}
    return {}


def _where(r: RunRecord) -> str:
    turn = f" (episode {r.episode!r} turn {r.turn})" if r.episode is not None else ""
    return f"model {r.model!r} question {r.question_id!r}{turn}"


def subset_keys(records: list[RunRecord], source: str = "the run files") -> list[SubsetKey]:
    """The subsets of the records in order of first appearance ([] when none names one). Every
    record names a subset once one does; a subset holds single-turn tasks or episodes, not both;
    an episode lies in one subset."""
    named = [r for r in records if r.subset is not None]
    if not named:
        return []
    if len(named) != len(records):
        other = next(r for r in records if r.subset is None)
        raise InputError(f"{source}: {_where(other)} names no `subset` while others do: give every test-suite record its subset")
    keys: dict[SubsetKey, str] = {}
    episodes: dict[tuple[str, str | int], SubsetKey] = {}
    for r in records:
        key = (str(r.subset), r.split)
        if key[0] in RESERVED:
            raise InputError(f"{source}: {_where(r)}: subset {key[0]!r} is a name jury's tables use; name the subset otherwise")
        kind = "episodes" if r.episode is not None else "single-turn"
        if keys.setdefault(key, kind) != kind:
            raise InputError(
                f"{source}: subset {subset_label(key)!r} mixes single-turn tasks and episodes ({_where(r)}): "
                "PLSQLBench's subsets hold one or the other"
            )
        if r.episode is not None:
            seen = episodes.setdefault((r.model, r.episode), key)
            if seen != key:
                raise InputError(
                    f"{source}: model {r.model!r} episode {r.episode!r} lies in subsets {subset_label(seen)!r} and "
                    f"{subset_label(key)!r}: an episode belongs to one subset"
                )
    return list(keys)


def overall_groups(keys: list[SubsetKey]) -> dict[str, list[SubsetKey]]:
    """Group -> its subsets: each split holding two or more subsets, and ALL_SPLITS (every
    subset) when the subsets name two or more splits."""
    splits: dict[str, list[SubsetKey]] = {}
    for k in keys:
        if k[1] is not None:
            splits.setdefault(k[1], []).append(k)
    groups = {s: ks for s, ks in splits.items() if len(ks) >= 2}
    if len(splits) >= 2:
        groups[ALL_SPLITS] = list(keys)
    return groups


def subset_scores(
    records: Iterable[RunRecord], credited: set[TestKey] | frozenset[TestKey] = frozenset(), source: str = "the run files"
) -> list[SubsetScores] | None:
    """Per model (in order of first appearance) its metrics per subset and the overall means;
    None when no record names a subset."""
    records = [r for r in records if r.tests is not None]
    keys = subset_keys(records, source)
    if not keys:
        return None
    groups = overall_groups(keys)
    by_model: dict[str, dict[SubsetKey, list[RunRecord]]] = {}
    for r in records:
        by_model.setdefault(r.model, {}).setdefault((str(r.subset), r.split), []).append(r)
    out = []
    for model, parts in by_model.items():
        scores = SubsetScores(model)
        scores.subsets = {k: model_metrics(model, parts[k], credited) for k in keys if k in parts}
        for group, members in groups.items():
            scores.lacking[group] = [k for k in members if k not in scores.subsets]
            values = {k: metric_values(scores.subsets[k]) for k in members if k in scores.subsets}
            means: dict[str, Macro] = {}
            for name in METRICS:
                found: list[tuple[SubsetKey, float]] = [
                    (k, v) for k, m in values.items() if name in m and (v := m[name].value) is not None
                ]
                if found:
                    means[name] = Macro(sum(v for _, v in found) / len(found), tuple(k for k, _ in found))
            scores.overall[group] = means
        out.append(scores)
    return out


def _part(m: Metric | Macro | None, prefix: str) -> dict[str, Any]:
    if m is None:
        return {f"{prefix}_{k}": None for k in ("value", "low", "high", "units")}
    if isinstance(m, Macro):
        return {f"{prefix}_value": m.value, f"{prefix}_low": None, f"{prefix}_high": None, f"{prefix}_units": len(m.subsets)}
    return {f"{prefix}_{k}": v for k, v in m.as_dict().items()}


def subset_rows(strict: list[SubsetScores], adjudicated: list[SubsetScores] | None = None) -> list[dict[str, Any]]:
    """Flat rows for tables, CSV and JSON: per model, one per (subset, metric), then one per
    (overall group, metric) with ``subset`` "overall", ``split`` the group, ``interval``
    "none" and ``units`` the number of subsets averaged (``averaged``: their labels)."""
    adj = {s.model: s for s in adjudicated or []}
    rows = []
    for s in strict:
        other = adj.get(s.model)
        for key, row in s.subsets.items():
            mine = metric_values(row)
            theirs = metric_values(other.subsets[key]) if other is not None and key in other.subsets else {}
            for name, m in mine.items():
                out: dict[str, Any] = {"model": s.model, "subset": key[0], "split": key[1]}
                out.update(tasks="single-turn" if row.single is not None else "episodes", metric=name, interval=m.interval)
                out.update(_part(m, "strict"))
                if adjudicated is not None:
                    out.update(_part(theirs.get(name), "adjudicated"))
                rows.append(out)
        for group, means in s.overall.items():
            for name, macro in means.items():
                out = {"model": s.model, "subset": "overall", "split": group, "tasks": "mean of subsets", "metric": name}
                out["interval"] = "none"
                out.update(_part(macro, "strict"))
                if adjudicated is not None:
                    out.update(_part(other.overall.get(group, {}).get(name) if other is not None else None, "adjudicated"))
                out["averaged"] = ", ".join(subset_label(k) for k in macro.subsets)
                rows.append(out)
    return rows


def subset_notes(strict: list[SubsetScores]) -> list[str]:
    """One line per model whose overall mean of a group lacks subsets the runs hold."""
    return [
        f"{s.model}: overall {group} averages {len(s.overall.get(group, {}).get('MeanTestPass@1', Macro(None, ())).subsets)} "
        f"subset(s); it lacks {', '.join(subset_label(k) for k in missing)}"
        for s in strict
        for group, missing in s.lacking.items()
        if missing
    ]
