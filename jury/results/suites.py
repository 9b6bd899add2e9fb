"""Test-suite metrics of PLSQLBench, from run records that carry recorded `tests`.

Single-turn tasks (records without `episode`): TestPass_i = p_i / n_i and SuitePass_i = 1 if
p_i = n_i; MeanTestPass@1 and SuitePass@1 average them over tasks (each task weighs equally).

Episodes (records sharing `episode`, ordered by `turn`): a turn is solved when all its tests
pass; EpisodePass = 1 when every turn is solved, TurnSuitePass = solved turns / turns,
EpisodeTestPass = sum p / sum n over the turns. EpisodePass@1, TurnSuitePass@1 and
MeanTestPass@1 (of EpisodeTestPass) average them over episodes (each episode weighs equally).

A test that errored never passed (a record with `passed: true` and an `error` is refused at
load), so an errored turn passes zero tests. A record with `reference_error: true` (the
reference solution or harness failed) is excluded before any metric and listed; an episode
with such a turn is excluded whole (its other turns alone would misstate it).

Adjudicated: a failing test judged format-equivalent by the jury (see
jury/jobs/suites.py) counts as passed; everything else is as strict.

>>> from jury.inputs.records import RunRecord
>>> def rec(qid, turn, passed):
...     tests = [{"name": f"t{i}", "passed": p} for i, p in enumerate(passed)]
...     return RunRecord.model_validate({"model": "m", "question_id": qid, "episode": "e", "turn": turn, "tests": tests})
>>> rows = suite_metrics([rec(1, 1, [True, True]), rec(2, 2, [True, True]), rec(3, 3, [True, False])])
>>> e = rows[0].episodes
>>> (e.episode_pass.value, round(e.turn_suite_pass.value, 4), round(e.mean_test_pass.value, 4))
(0.0, 0.6667, 0.8333)
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.errors import InputError
from jury.inputs.records import QuestionId, RunRecord
from jury.stats.core import ProportionEstimate, mean_interval, wilson


class SourceSplit(TypedDict):
    """One model's error counts by where the category came from: the taxonomy's rules, the jurors."""

    rules: dict[str, int]
    jurors: dict[str, int]


class SuiteErrorCounts(TypedDict):
    """:func:`jury.results.report.taxonomy.suite_error_counts`: the taxonomy, its categories, where
    the counts came from, per model the failing tests with an error by category, and (with the
    jurors') each model's split by source. Declared here so that ``jury.jobs.suites`` reads the
    shape without loading the report model."""

    taxonomy: str
    categories: list[str]
    source: str
    models: dict[str, dict[str, int]]
    by_source: NotRequired[dict[str, SourceSplit]]


TestKey = tuple[Any, ...]
"""One recorded test: (model, question_id, test name), or for a turn of an episode (model,
question_id, episode, turn, test name), since a turn may reuse its task's question_id."""


def suite_test_key(model: str, question_id: QuestionId, episode: str | int | None, turn: int | None, name: str) -> TestKey:
    """The key of one recorded test (see TestKey)."""
    return (model, question_id, name) if episode is None else (model, question_id, episode, turn, name)


Interval = Literal["wilson", "bootstrap"]


@dataclass(frozen=True)
class Metric:
    """A mean over units (tasks or episodes) with a 95% interval named by ``interval``:
    ``"wilson"`` for a share of units (SuitePass, EpisodePass: a binomial proportion), and
    ``"bootstrap"`` for a mean of per-unit fractions (MeanTestPass, TurnSuitePass): the
    percentile bootstrap over units (2,000 resamples, seed 0, :func:`jury.stats.core.mean_interval`),
    no interval with fewer than 2 units."""

    value: float | None
    low: float | None
    high: float | None
    units: int
    interval: Interval

    @classmethod
    def share(cls, values: list[float]) -> Metric:
        """The share of units that succeed (each value 0 or 1), with its Wilson interval."""
        ci: ProportionEstimate = wilson(round(sum(values)), len(values))
        return cls(ci.value, ci.low, ci.high, len(values), "wilson")

    @classmethod
    def mean(cls, values: list[float]) -> Metric:
        """The mean of per-unit fractions, with a percentile bootstrap interval over the units."""
        if not values:
            return cls(None, None, None, 0, "bootstrap")
        ci = mean_interval(values)
        return cls(sum(values) / len(values), ci.low, ci.high, len(values), "bootstrap")

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "low": self.low, "high": self.high, "units": self.units}


@dataclass(frozen=True)
class SingleTurn:
    mean_test_pass: Metric
    suite_pass: Metric


@dataclass(frozen=True)
class Episodes:
    episode_pass: Metric
    turn_suite_pass: Metric
    mean_test_pass: Metric


@dataclass
class SuiteRow:
    """One model's suite metrics (strict, or adjudicated when credited tests were given)."""

    model: str
    single: SingleTurn | None = None
    episodes: Episodes | None = None
    excluded: list[dict[str, Any]] = field(default_factory=list)  # reference failures: question_id, episode, turn


def passed_count(record: RunRecord, credited: set[TestKey] | frozenset[TestKey] = frozenset()) -> tuple[int, int]:
    """(p, n) of one turn: tests passed (or credited by the jury) out of its tests."""
    assert record.tests is not None
    p = sum(
        t.passed or suite_test_key(record.model, record.question_id, record.episode, record.turn, t.name) in credited
        for t in record.tests
    )
    return p, len(record.tests)


def suite_records(records: Iterable[RunRecord], source: str = "the run files") -> list[RunRecord]:
    """The records with `tests`; a run with none of them (or mixing in SQL records) is an InputError."""
    records = list(records)
    suites = [r for r in records if r.tests is not None]
    if not suites:
        raise InputError(f"{source}: no test-suite records (records with `tests`); score SQL runs with `jury score`")
    if len(suites) != len(records):
        other = next(r for r in records if r.tests is None)
        raise InputError(
            f"{source}: model {other.model!r} question {other.question_id!r} has no `tests`: a test-suite run holds only "
            "test-suite records (score SQL records with `jury score`)"
        )
    _refuse_partial_episodes(suites, source)
    return suites


def _refuse_partial_episodes(records: list[RunRecord], source: str) -> None:
    """A model that records some turns of an episode records every numbered turn any model records
    for it: a missing turn would drop out of its EpisodePass and TurnSuitePass (an episode with an
    unanswered turn scored as solved). A model without the episode at all is left out, as a
    single-turn task it has no record of."""
    turns: dict[object, dict[int, str]] = {}  # episode -> turn -> the first model that records it
    for r in records:
        if r.episode is not None and r.turn is not None:
            turns.setdefault(r.episode, {}).setdefault(r.turn, r.model)
    have = {(r.model, r.episode, r.turn) for r in records if r.episode is not None}
    for model, episode in dict.fromkeys((r.model, r.episode) for r in records if r.episode is not None):
        gap = next(((t, m) for t, m in sorted(turns.get(episode, {}).items()) if (model, episode, t) not in have), None)
        if gap is not None:
            raise InputError(
                f"{source}: model {model!r} episode {episode!r} has no record of turn {gap[0]} (model {gap[1]!r} "
                "records it): give every turn of an episode a record (an unanswered turn as a failing test)"
            )


def _episodes(records: list[RunRecord]) -> dict[object, list[RunRecord]]:
    out: dict[object, list[RunRecord]] = {}
    for r in records:
        out.setdefault(r.episode, []).append(r)
    for ep, turns in out.items():
        numbers = [t.turn for t in turns if t.turn is not None]
        dup = next((n for n in numbers if numbers.count(n) > 1), None)
        if dup is not None:
            raise InputError(f"model {turns[0].model!r} episode {ep!r}: turn {dup} is given twice")
        turns.sort(key=lambda t: (t.turn is None, t.turn or 0))
    return out


def _excluded(r: RunRecord) -> dict[str, Any]:
    return {"question_id": r.question_id, "episode": r.episode, "turn": r.turn}


def model_metrics(model: str, records: list[RunRecord], credited: set[TestKey] | frozenset[TestKey] = frozenset()) -> SuiteRow:
    """One model's metrics over its suite records (see the module docstring)."""
    row = SuiteRow(model)
    singles = [r for r in records if r.episode is None]
    row.excluded += [_excluded(r) for r in singles if r.reference_error]
    kept = [passed_count(r, credited) for r in singles if not r.reference_error]
    if singles:
        row.single = SingleTurn(Metric.mean([p / n for p, n in kept]), Metric.share([float(p == n) for p, n in kept]))
    episodes = _episodes([r for r in records if r.episode is not None])
    ep_pass, turn_pass, test_pass = [], [], []
    for turns in episodes.values():
        if any(t.reference_error for t in turns):
            row.excluded += [_excluded(t) for t in turns if t.reference_error]
            continue
        counts = [passed_count(t, credited) for t in turns]
        solved = sum(p == n for p, n in counts)
        ep_pass.append(float(solved == len(counts)))
        turn_pass.append(solved / len(counts))
        test_pass.append(sum(p for p, _ in counts) / sum(n for _, n in counts))
    if episodes:
        row.episodes = Episodes(Metric.share(ep_pass), Metric.mean(turn_pass), Metric.mean(test_pass))
    return row


def suite_metrics(records: Iterable[RunRecord], credited: set[TestKey] | frozenset[TestKey] = frozenset()) -> list[SuiteRow]:
    """Per model (in order of first appearance), its suite metrics."""
    by_model: dict[str, list[RunRecord]] = {}
    for r in records:
        if r.tests is not None:
            by_model.setdefault(r.model, []).append(r)
    return [model_metrics(m, rs, credited) for m, rs in by_model.items()]


def format_candidates(records: Iterable[RunRecord]) -> list[tuple[RunRecord, int]]:
    """Failing tests that may differ from the expected output only in presentation: (record,
    index of the test). A candidate failed without an error, records both `expected` and
    `actual`, and they differ as text; reference failures are never candidates."""
    out = []
    for r in records:
        if r.tests is None or r.reference_error:
            continue
        for i, t in enumerate(r.tests):
            if not t.passed and t.error is None and t.expected is not None and t.actual is not None and t.expected != t.actual:
                out.append((r, i))
    return out


METRIC_NAMES = {
    "single": ("MeanTestPass@1", "SuitePass@1"),
    "episodes": ("EpisodePass@1", "TurnSuitePass@1", "MeanTestPass@1"),
}


def table_rows(strict: list[SuiteRow], adjudicated: list[SuiteRow] | None = None) -> list[dict[str, Any]]:
    """Flat rows for tables and CSV: one per (model, metric), strict and (if given) adjudicated."""
    adj = {r.model: r for r in adjudicated or []}
    rows = []
    for s in strict:
        for kind, names in METRIC_NAMES.items():
            part = getattr(s, kind)
            if part is None:
                continue
            other = getattr(adj[s.model], kind) if s.model in adj else None
            metrics = (part.mean_test_pass, part.suite_pass) if kind == "single" else tuple(vars(part).values())
            others = (
                ((other.mean_test_pass, other.suite_pass) if kind == "single" else tuple(vars(other).values()))
                if other is not None
                else (None,) * len(metrics)
            )
            for name, m, a in zip(names, metrics, others):
                row: dict[str, Any] = {
                    "model": s.model,
                    "tasks": "single-turn" if kind == "single" else "episodes",
                    "metric": name,
                }
                row["interval"] = m.interval
                row.update({f"strict_{k}": v for k, v in m.as_dict().items()})
                if adjudicated is not None:
                    row.update({f"adjudicated_{k}": (v if a is not None else None) for k, v in (a or m).as_dict().items()})
                rows.append(row)
    return rows


def _shown(m: dict[str, Any], prefix: str) -> str:
    v = m[f"{prefix}_value"]
    if v is None:
        return "—"
    if m[f"{prefix}_low"] is None:
        return f"{v:.3f} (no CI: {m[f'{prefix}_units']} unit)"
    return f"{v:.3f} [{m[f'{prefix}_low']:.3f}, {m[f'{prefix}_high']:.3f}]"


def render_suites(
    strict: list[SuiteRow],
    adjudicated: list[SuiteRow] | None,
    fmt: str,
    *,
    extra: dict[str, Any] | None = None,
    subsets: list[dict[str, Any]] | None = None,
    subset_notes: list[str] | None = None,
) -> str:
    """The suite report in `fmt` (table, md, csv, json): per model and metric, strict and (with
    verdicts) adjudicated with 95% intervals (`interval`: wilson for shares of units, bootstrap
    for means of per-unit fractions), then the excluded reference failures. ``subsets``
    (jury.results.suite_subsets.subset_rows): the metrics per subset and the overall means,
    a second table (JSON ``subsets``; in CSV the rows above with ``subset`` "pooled")."""
    from jury.results.render import to_json

    rows = table_rows(strict, adjudicated)
    excluded = [{"model": s.model, **e} for s in strict for e in s.excluded]
    if fmt == "json":
        more = {"subsets": subsets, "subset_notes": subset_notes or []} if subsets is not None else {}
        return to_json({"metrics": rows, "reference_failures": excluded, **more, **(extra or {})})
    if fmt == "csv":
        return _suites_csv(rows, subsets)
    display, columns, headers = _display(rows, adjudicated is not None)
    caption = _caption(excluded, extra)
    by_subset = _subset_table(subsets, subset_notes, columns, headers) if subsets is not None else None
    if fmt == "md":
        return _suites_md(display, columns, headers, caption, by_subset)
    return _suites_text(display, columns, headers, caption, by_subset)


_SubsetTable = tuple[list[dict[str, Any]], list[str], list[str], str]  # rows, columns, headers, caption


def _suites_csv(rows: list[dict[str, Any]], subsets: list[dict[str, Any]] | None) -> str:
    """The CSV: the rows, and with subsets the rows as subset "pooled" then the subsets' rows."""
    from jury.results.render import to_csv

    if subsets is not None:
        pooled = [{"subset": "pooled", "split": None, **r} for r in rows]
        columns = ["model", "subset", "split", *[c for c in (rows[0] if rows else {}) if c != "model"], "averaged"]
        return to_csv(pooled + subsets, columns)
    return to_csv(rows, list(rows[0]) if rows else ["model", "tasks", "metric"])


def _display(rows: list[dict[str, Any]], adjudicated: bool) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The main table's rows (each value with its interval), columns and headers."""
    display: list[dict[str, Any]] = [
        {
            **r,
            "strict": _shown(r, "strict"),
            "adjudicated": _shown(r, "adjudicated") if adjudicated else None,
        }
        for r in rows
    ]
    columns = ["model", "tasks", "metric", "interval", "strict_units", "strict"]
    headers = ["model", "tasks", "metric", "95% CI", "units", "strict [95% CI]"]
    if adjudicated:
        columns.append("adjudicated")
        headers.append("adjudicated [95% CI]")
    return display, columns, headers


def _caption(excluded: list[dict[str, Any]], extra: dict[str, Any] | None) -> str:
    """The main table's caption: the excluded reference failures, then ``extra``'s note."""
    caption = "reference failures (excluded): " + (
        ", ".join(
            f"{e['model']} {e['question_id']}"
            + (f" (episode {e['episode']} turn {e['turn']})" if e["episode"] is not None else "")
            for e in excluded
        )
        or "none"
    )
    if extra and extra.get("note"):
        caption += "\n" + extra["note"]
    return caption


def _subset_table(
    subsets: list[dict[str, Any]], subset_notes: list[str] | None, columns: list[str], headers: list[str]
) -> _SubsetTable:
    """The per-subset table: its rows, columns and headers (the main table's adjudicated column
    too when it has one) and its caption."""
    return (
        [
            {
                **r,
                "split": r["split"] or "—",
                "strict": _subset_shown(r, "strict"),
                "adjudicated": _subset_shown(r, "adjudicated"),
            }
            for r in subsets
        ],
        ["model", "subset", "split", "metric", "interval", "strict_units", "strict", *columns[6:]],
        ["model", "subset", "split", "metric", "95% CI", "units", "strict [95% CI]", *headers[6:]],
        "\n".join([SUBSET_CAPTION, *(subset_notes or [])]),
    )


def _suites_md(
    display: list[dict[str, Any]], columns: list[str], headers: list[str], caption: str, by_subset: _SubsetTable | None
) -> str:
    """The Markdown: the main table and its caption, then the per-subset table and its caption."""
    from jury.results.render import safe, to_markdown

    out = to_markdown(display, columns, headers) + "\n" + safe(caption, newlines=True) + "\n"
    if by_subset is not None:
        out += "\n" + to_markdown(*by_subset[:3]) + "\n" + safe(by_subset[3], newlines=True) + "\n"
    return out


def _suites_text(
    display: list[dict[str, Any]], columns: list[str], headers: list[str], caption: str, by_subset: _SubsetTable | None
) -> str:
    """The terminal tables (rich, no colour): the main table and its caption, then the per-subset ones."""

    from rich.console import Console

    from jury.results.render import safe, to_rich_table

    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None)
    console.print(to_rich_table(display, columns, headers, title="test-suite metrics (PLSQLBench)"))
    console.print(safe(caption, newlines=True), markup=False, highlight=False)
    if by_subset is not None:
        console.print(to_rich_table(*by_subset[:3], title="per subset (PLSQLBench's tables)"))
        console.print(safe(by_subset[3], newlines=True), markup=False, highlight=False)
    return buf.getvalue()


SUBSET_CAPTION = (
    "overall: the unweighted mean of the subsets' values over the split's subsets that report the metric "
    "(units: subsets averaged; no interval)"
)


def _subset_shown(m: dict[str, Any], prefix: str) -> str | None:
    if f"{prefix}_value" not in m:
        return None
    if m["subset"] == "overall" and m[f"{prefix}_value"] is not None:
        return f"{m[f'{prefix}_value']:.3f} (mean of {m[f'{prefix}_units']})"
    return _shown(m, prefix)
