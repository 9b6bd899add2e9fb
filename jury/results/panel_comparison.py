"""Two verdict files of the same inputs compared (`jury compare-panels`): the rows and the text.

Two audits of the same gold, or two adjudications of the same runs, by two panels. Each
record gets one label per file, the records are matched by their key (audits: split and
question; adjudications: model and question, and the test of a test-suite run), and
:func:`jury.stats.panels.compare_panels` does every number: the flags shared / only A / only
B, agreement and Cohen's kappa (bootstrap and Fleiss–Cohen–Everitt intervals) on the flag and
on the labels, per stratum, and the records where the labels differ.

The labels:

- an audit record: ``valid`` (decided, not flagged), ``undecided`` (abstentions left no
  majority: not a flag) or, flagged, its defect types joined by ``+`` (``defective`` when
  the votes named none); a flag is any label but ``valid`` and ``undecided``;
- an adjudication record: its verdict; a flag is a credited verdict (gold_defect,
  format_equivalence).

Per defect type (audits) or per verdict (adjudications), the comparison is one type against
the rest: "shared" are the records both files flagged with that type (or gave that verdict).
A record only one file has is left out of every number and counted in ``missing``. Pure: the
caller gives the two loaded files and, optionally, each record's difficulty.
"""

from __future__ import annotations

import html
import io
import os
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, cast

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.inputs.records import QuestionId
from jury.results.render import UNWRAPPED_WIDTH, safe, to_csv, to_json, to_markdown, to_rich_table
from jury.vocab import CREDITED_VERDICTS, VERDICTS

if TYPE_CHECKING:  # numpy loads with the numbers, not when jury.jobs.compare_panels imports the shapes below
    from jury.stats.panels import PairAgreement, PanelComparison
    from jury.verdicts.documents import AuditRecord, VerdictFile, Vote

VALID, UNDECIDED, DEFECTIVE = "valid", "undecided", "defective"
UNKNOWN = "unknown"


def record_key(record: Any, kind: str) -> tuple[Hashable, ...]:
    """The key that matches a record of one file with the same record of the other (``record``:
    an AuditRecord when ``kind`` is "audit", else an AdjudicationRecord)."""
    if kind == "audit":
        return (record.split, record.question_id)
    if record.test is None:
        return (record.model, record.question_id)
    return (record.model, record.question_id, record.episode, record.turn, record.test)


def audit_label(record: AuditRecord) -> str:
    """An audit record's label (the module doc)."""
    if not record.decided:
        return UNDECIDED
    if not record.flagged:
        return VALID
    return "+".join(record.defect_types) or DEFECTIVE


def _types(record: AuditRecord) -> frozenset[str]:
    """The defect types an audit record's flag names (``defective`` for a flag naming none)."""
    if not (record.decided and record.flagged):
        return frozenset()
    return frozenset(record.defect_types or [DEFECTIVE])


def vote_text(vote: Vote, kind: str) -> str:
    """One vote as the disagreements list shows it: "juror: defective (sql_vs_data)"."""
    if vote.skipped:
        said = "not asked (early stop)"
    elif vote.abstained:
        said = "inconsistent across orders" if vote.inconsistent else "abstained"
    else:
        said = vote.category or vote.raw_verdict or "—"
        if kind == "audit" and vote.defect_type and said == DEFECTIVE:
            said += f" ({vote.defect_type})"
    return f"{vote.juror}: {said}"


class PanelAgreement(TypedDict):
    """Agreement of the two panels on the flag or on the labels: over n records both hold, agree
    the same; Cohen's kappa with its bootstrap interval, SE and Wald interval; Krippendorff's
    alpha with its interval; the labels and the confusion table (rows A, columns B)."""

    n: int
    agree: int
    agreement: float | None
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    kappa_resamples: int
    kappa_se: float | None
    kappa_wald_low: float | None
    kappa_wald_high: float | None
    alpha: float | None
    alpha_low: float | None
    alpha_high: float | None
    labels: list[str]
    confusion: list[list[int]]


class PanelBreakdown(TypedDict):
    """One row of the comparison: a stratum value's records, the flags shared, only in A, only in
    B and in neither, the shares of each panel's flags the other shares, and the agreement on the
    flag and (None for a type against the rest) on the labels."""

    stratum: str
    value: str
    n: int
    missing: int
    shared: int
    only_a: int
    only_b: int
    unflagged: int
    flags_a: int
    flags_b: int
    shared_of_a: float | None
    shared_of_b: float | None
    flags: PanelAgreement
    labels: PanelAgreement | None


class PanelFile(TypedDict):
    """What the comparison says of one of the two verdict files."""

    path: str
    content_sha256: str | None
    panel: str
    jurors: list[str]
    created_at: str
    records: int


class BoundFile(TypedDict):
    """An input both files bind (the gold file, a run file): its path from here and its sha256."""

    path: str
    sha256: str


class PanelDisagreement(TypedDict):
    """A record whose labels differ: model (adjudications) or split (audits), both labels, whether
    the flag differs too and both panels' votes."""

    question_id: QuestionId
    db_id: str
    model: NotRequired[str]
    split: NotRequired[str | None]
    difficulty: str
    a: str | None
    b: str | None
    flag_differs: bool
    votes_a: list[str]
    votes_b: list[str]


class PanelSettings(TypedDict):
    """The intervals' bootstrap: resamples, seed and nominal coverage."""

    resamples: int
    seed: int
    confidence: float


class PanelsCompared(BaseModel):
    """What :func:`compare_documents` finds: the fields of ``jury.jobs.compare_panels.ComparedPanels``,
    declared once here (the result adds how it renders)."""

    model_config = ConfigDict(defer_build=True)

    kind: str
    a: PanelFile
    b: PanelFile
    gold: BoundFile
    runs: list[BoundFile]
    positive: list[str]
    records_only_in: dict[str, int]
    breakdowns: list[PanelBreakdown]
    disagreements: list[PanelDisagreement]
    settings: PanelSettings


def _agreement(p: PairAgreement) -> PanelAgreement:
    wald = p.kappa_wald or (None, None)
    return {
        "n": p.n,
        "agree": p.n - len(p.disagreements),
        "agreement": p.agreement,
        "kappa": p.kappa.value,
        "kappa_low": p.kappa.low,
        "kappa_high": p.kappa.high,
        "kappa_resamples": p.kappa.resamples,
        "kappa_se": p.kappa_se,
        "kappa_wald_low": wald[0],
        "kappa_wald_high": wald[1],
        "alpha": p.alpha,
        "alpha_low": p.alpha_interval.low,
        "alpha_high": p.alpha_interval.high,
        "labels": [str(x) for x in p.labels],
        "confusion": p.confusion.tolist(),
    }


def _breakdown(stratum: str, value: Hashable, c: PanelComparison, *, labels: bool = True) -> PanelBreakdown:
    return {
        "stratum": stratum,
        "value": str(value),
        "n": c.n,
        "missing": c.missing,
        "shared": c.both,
        "only_a": c.only_a,
        "only_b": c.only_b,
        "unflagged": c.neither,
        "flags_a": c.flags_a,
        "flags_b": c.flags_b,
        "shared_of_a": c.shared_of_a,
        "shared_of_b": c.shared_of_b,
        "flags": _agreement(c.flags),
        "labels": _agreement(c.labels) if labels else None,
    }


def _bound(path: str | os.PathLike[str], bound: str) -> str:
    """A bound input's path as seen from here (bound paths are relative to the verdict file's folder)."""
    p = Path(bound)
    return os.path.normpath(p if p.is_absolute() else Path(path).parent / p)


def file_info(path: str | os.PathLike[str], doc: VerdictFile) -> PanelFile:
    """What the output says about one of the two files."""
    return {
        "path": str(path),
        "content_sha256": doc.content_sha256,
        "panel": doc.panel.name,
        "jurors": [str(j.get("name")) for j in doc.panel.jurors],
        "created_at": doc.created_at,
        "records": len(doc.records),
    }


def compare_documents(
    a: tuple[Any, Any],
    b: tuple[Any, Any],
    *,
    difficulty: Mapping[QuestionId, str | None] | None = None,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PanelsCompared:
    """The comparison of two loaded verdict files of one kind (``a``, ``b``: (path, VerdictFile)),
    as plain data: the files, the overall comparison, one row per stratum value, the records
    where the labels differ with both files' votes. ``difficulty``: question id -> difficulty,
    for records that do not carry their own (adjudications)."""
    from jury.stats.panels import compare_panels

    (path_a, doc_a), (path_b, doc_b) = a, b
    kind = doc_a.kind
    records, la, lb = _match_records(path_a, doc_a, path_b, doc_b)
    levels = [_level(ra, rb, difficulty) for ra, rb in records]
    strata = _strata(kind, records, levels)
    positive, per_kind, kind_stratum = _flag_types(kind, records, la, lb)
    options: dict[str, Any] = {"resamples": resamples, "seed": seed, "confidence": confidence}
    overall = compare_panels(la, lb, positive=positive, strata=strata, **options)
    rows = _rows(overall, la, lb, per_kind, kind_stratum, options)
    disagreements = _disagreements(overall, kind, records, levels, la, lb)
    only = {
        "a": sum(x is not None and y is None for x, y in zip(la, lb)),
        "b": sum(x is None and y is not None for x, y in zip(la, lb)),
    }
    return PanelsCompared.model_construct(  # the result model validates it
        kind=kind,
        a=file_info(path_a, doc_a),
        b=file_info(path_b, doc_b),
        gold={"path": _bound(path_a, doc_a.inputs.gold.path), "sha256": doc_a.inputs.gold.sha256},
        runs=[{"path": _bound(path_a, r.path), "sha256": r.sha256} for r in doc_a.inputs.runs],
        positive=positive,
        records_only_in=only,
        breakdowns=rows,
        disagreements=disagreements,
        settings={"resamples": resamples, "seed": seed, "confidence": confidence},
    )


def _match_records(
    path_a: Any, doc_a: Any, path_b: Any, doc_b: Any
) -> tuple[list[tuple[Any, Any]], list[str | None], list[str | None]]:
    """The two files' records matched by key (None where a file lacks it) and each one's label
    (None likewise); an InputError when the files share no record."""
    kind = doc_a.kind
    rec_a = {record_key(r, kind): r for r in doc_a.records}
    rec_b = {record_key(r, kind): r for r in doc_b.records}
    keys = list(dict.fromkeys([*rec_a, *rec_b]))
    label = audit_label if kind == "audit" else (lambda r: str(r.verdict))
    la = [label(rec_a[k]) if k in rec_a else None for k in keys]
    lb = [label(rec_b[k]) if k in rec_b else None for k in keys]
    records: list[tuple[Any, Any]] = [(rec_a.get(k), rec_b.get(k)) for k in keys]
    if not any(ra is not None and rb is not None for ra, rb in records):
        from jury.errors import InputError

        what = "split and question" if kind == "audit" else "model and question"
        raise InputError(f"{path_a} and {path_b} have no record in common (by {what}): nothing to compare")
    return records, la, lb


def _level(ra: Any, rb: Any, difficulty: Mapping[QuestionId, str | None] | None) -> str:
    """A matched record's difficulty: its own (either file's), else ``difficulty``'s, else unknown."""
    for r in (ra, rb):
        if r is not None and getattr(r, "difficulty", None):
            return str(r.difficulty)
    r = ra if ra is not None else rb
    return (difficulty or {}).get(r.question_id) or UNKNOWN


def _strata(kind: str, records: list[tuple[Any, Any]], levels: list[str]) -> dict[str, Sequence[Hashable]]:
    """The strata compared: difficulty (when any is known) and, for adjudications, model."""
    strata: dict[str, Sequence[Hashable]] = {}
    if any(x != UNKNOWN for x in levels):
        strata["difficulty"] = levels
    if kind == "adjudication":
        strata["model"] = [(rb if ra is None else ra).model for ra, rb in records]
    return strata


def _flag_types(
    kind: str, records: list[tuple[Any, Any]], la: list[str | None], lb: list[str | None]
) -> tuple[list[str], list[tuple[str, list[str | None]]], str]:
    """The labels that are a flag, each type (defect type or verdict) with the labels that name
    it, and the name of that breakdown."""
    if kind == "audit":
        positive = sorted({x for x in (*la, *lb) if x is not None and x not in (VALID, UNDECIDED)})
        types_of = {x: _types(r) for (ra, rb), xa, xb in zip(records, la, lb) for r, x in ((ra, xa), (rb, xb)) if r is not None}
        kinds = sorted(set().union(*types_of.values()))
        per_kind = [(t, [x for x, ts in types_of.items() if t in ts]) for t in kinds]
        return positive, per_kind, "defect type"
    seen = {x for x in (*la, *lb) if x is not None}
    per_kind = [(str(v), [str(v)]) for v in VERDICTS if str(v) in seen]
    return [str(v) for v in CREDITED_VERDICTS], per_kind, "verdict"


def _rows(
    overall: PanelComparison,
    la: list[str | None],
    lb: list[str | None],
    per_kind: list[tuple[str, list[str | None]]],
    kind_stratum: str,
    options: dict[str, Any],
) -> list[PanelBreakdown]:
    """The breakdown rows: all, one per type (against the rest), one per stratum value."""
    from jury.stats.panels import compare_panels

    rows = [_breakdown("all", "all", overall)]
    for t, members in per_kind:  # one type against the rest: the flag is "named this type"
        rows.append(_breakdown(kind_stratum, t, compare_panels(la, lb, positive=members, **options), labels=False))
    for name, groups in overall.strata.items():
        order = sorted(groups, key=str)
        rows += [_breakdown(name, value, groups[value]) for value in order]
    return rows


def _disagreements(
    overall: PanelComparison,
    kind: str,
    records: list[tuple[Any, Any]],
    levels: list[str],
    la: list[str | None],
    lb: list[str | None],
) -> list[PanelDisagreement]:
    """The records where the labels differ, with both files' votes."""
    flag_differs = set(overall.flags.disagreements.tolist())
    disagreements: list[PanelDisagreement] = []
    for i in overall.labels.disagreements.tolist():
        ra, rb = records[i]
        # model (adjudications) or split (audits) after db_id, as the output always had it
        disagreements.append(
            cast(
                PanelDisagreement,
                {
                    "question_id": ra.question_id,
                    "db_id": ra.db_id,
                    **({"model": ra.model} if kind == "adjudication" else {"split": ra.split}),
                    "difficulty": levels[i],
                    "a": la[i],
                    "b": lb[i],
                    "flag_differs": i in flag_differs,
                    "votes_a": [vote_text(v, kind) for v in ra.votes],
                    "votes_b": [vote_text(v, kind) for v in rb.votes],
                },
            )
        )
    return disagreements


# ------------------------------------------------------------------ rendering


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _kappa(g: dict[str, Any]) -> str:
    """ "0.868 [0.829, 0.904]" (the bootstrap interval; "—" where refused)."""
    if g["kappa"] is None:
        return "—"
    if g["kappa_low"] is None:
        return f"{g['kappa']:.3f} [—]"
    return f"{g['kappa']:.3f} [{g['kappa_low']:.3f}, {g['kappa_high']:.3f}]"


def _wald(g: dict[str, Any]) -> str:
    if g["kappa_se"] is None or g["kappa_wald_low"] is None:
        return "—"
    return f"SE {g['kappa_se']:.3f} [{g['kappa_wald_low']:.3f}, {g['kappa_wald_high']:.3f}]"


def headline(data: dict[str, Any]) -> list[str]:
    """The lines above the tables: the files, the flags shared, agreement and kappa."""
    a, b, row = data["a"], data["b"], data["breakdowns"][0]
    level = round(100 * data["settings"]["confidence"])
    what = "audits of the gold" if data["kind"] == "audit" else "adjudications of the runs"
    flag = "flags (a defect type)" if data["kind"] == "audit" else "credited verdicts (gold_defect, format_equivalence)"
    bound = data["gold"]["path"] if data["kind"] == "audit" else ", ".join(r["path"] for r in data["runs"])
    lines = [
        f"two {what} {bound}",
        *(
            f"{name}: {f['path']} (panel {f['panel']}: {', '.join(f['jurors']) or '—'}; {f['records']} records; lock {f['content_sha256']})"
            for name, f in (("A", a), ("B", b))
        ),
        f"{row['n']} records in both files"
        + "".join(f", {n} only in {w.upper()} (left out)" for w, n in data["records_only_in"].items() if n),
        f"{flag}: {row['shared']} shared, {row['only_a']} only A, {row['only_b']} only B, {row['unflagged']} neither; "
        f"{row['shared']} of A's {row['flags_a']} ({_pct(row['shared_of_a'])}), {row['shared']} of B's {row['flags_b']} "
        f"({_pct(row['shared_of_b'])})",
    ]
    for what, g in (("flag", row["flags"]), ("labels", row["labels"])):
        lines.append(
            f"agreement on the {what}: {g['agree']} of {g['n']} ({_pct(g['agreement'])}); Cohen's kappa {_kappa(g)} "
            + (f"({level} % bootstrap, {g['kappa_resamples']} resamples), " if g["kappa_resamples"] else "(no bootstrap), ")
            + f"{_wald(g)} ({level} % Fleiss–Cohen–Everitt Wald)"
        )
    return lines


COLUMNS = ["stratum", "value", "n", "shared", "only_a", "only_b", "unflagged", "shared_of_b", "flag_agreement", "flag_kappa", "label_agreement", "label_kappa"]  # fmt: skip
HEADS = ["by", "value", "records", "both flag", "only A", "only B", "unflagged", "shared of B's", "flag agreement", "flag kappa [CI]", "label agreement", "label kappa [CI]"]  # fmt: skip
CSV_COLUMNS = ["stratum", "value", "n", "missing", "shared", "only_a", "only_b", "unflagged", "flags_a", "flags_b", "shared_of_a", "shared_of_b"]  # fmt: skip
AGREEMENT_COLUMNS = ["agree", "agreement", "kappa", "kappa_low", "kappa_high", "kappa_se", "kappa_wald_low", "kappa_wald_high", "alpha"]  # fmt: skip
DIS_COLUMNS = ["question_id", "db_id", "model", "difficulty", "a", "b", "votes_a", "votes_b"]
DIS_HEADS = ["question", "db", "model", "difficulty", "panel A", "panel B", "A's votes", "B's votes"]


def _shown(row: dict[str, Any]) -> dict[str, Any]:
    g, lab = row["flags"], row["labels"]
    return {
        **{k: row[k] for k in ("stratum", "value", "n", "shared", "only_a", "only_b", "unflagged")},
        "shared_of_b": _pct(row["shared_of_b"]),
        "flag_agreement": f"{g['agree']}/{g['n']} {_pct(g['agreement'])}",
        "flag_kappa": _kappa(g),
        "label_agreement": "" if lab is None else f"{lab['agree']}/{lab['n']} {_pct(lab['agreement'])}",
        "label_kappa": "" if lab is None else _kappa(lab),
    }


def _csv_row(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: row[k] for k in CSV_COLUMNS}
    for part in ("flags", "labels"):
        g = row[part] or {}
        out.update({f"{part[:-1]}_{k}": g.get(k) for k in AGREEMENT_COLUMNS})
    return out


def _dis_rows(data: dict[str, Any], sep: str) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    rows = [{**d, "votes_a": sep.join(d["votes_a"]), "votes_b": sep.join(d["votes_b"])} for d in data["disagreements"]]
    cols, heads = list(DIS_COLUMNS), list(DIS_HEADS)
    if data["kind"] == "audit":
        del cols[2], heads[2]
    return rows, cols, heads


def _md_cell(value: Any) -> Any:
    """A Markdown cell or line: HTML escaped, newlines as <br>."""
    if not isinstance(value, str):
        return value
    return html.escape(value, quote=False).replace("\r", "").replace("\n", "<br>")


def render_comparison(data: dict[str, Any], fmt: str, width: int | None = None) -> str:
    """``table`` and ``md``: the headline, the breakdowns and the disagreements; ``csv``: one row
    per breakdown (overall, each type, each difficulty...), every count and coefficient;
    ``json``: everything."""
    if fmt == "json":
        return to_json(data)
    if fmt == "csv":
        cols = [*CSV_COLUMNS, *(f"{p}_{k}" for p in ("flag", "label") for k in AGREEMENT_COLUMNS)]
        return to_csv([_csv_row(r) for r in data["breakdowns"]], cols)
    lines = headline(data)
    rows = [_shown(r) for r in data["breakdowns"]]
    n = len(data["disagreements"])
    dis_title = f"{n} records where the labels differ, with both panels' votes"
    if fmt == "md":  # HTML escaped (the names are the inputs', and GitHub renders HTML); pipes by to_markdown
        dis, cols, heads = _dis_rows(data, "\n")
        dis = [{k: _md_cell(v) for k, v in d.items()} for d in dis]
        out = "## Two panels compared\n\n" + "".join(f"- {safe(_md_cell(x))}\n" for x in lines)
        out += "\n" + to_markdown([{k: _md_cell(v) for k, v in r.items()} for r in rows], COLUMNS, HEADS)
        out += f"\n### {dis_title}\n\n" + (to_markdown(dis, cols, heads) if dis else "none\n")
        return out
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or UNWRAPPED_WIDTH, soft_wrap=width is None, highlight=False)
    for line in lines:
        console.print(safe(line), markup=False)
    console.print(to_rich_table(rows, COLUMNS, HEADS, title="by stratum (one type against the rest: flag columns only)"))
    dis, cols, heads = _dis_rows(data, "; ")
    if dis:
        console.print(to_rich_table(dis, cols, heads, title=dis_title))
    else:
        console.print("no record where the labels differ", markup=False)
    return buffer.getvalue()


def site_section(data: dict[str, Any]) -> dict[str, Any]:
    """What the html site's "Two panels compared" section shows (jury report -f html
    --compare-panels A B): the headline lines, the breakdown rows and the disagreements, as text
    cells (the template escapes them)."""
    dis, cols, heads = _dis_rows(data, "\n")
    return {
        "lines": headline(data),
        "heads": HEADS,
        "rows": [[str(_shown(r)[c]) for c in COLUMNS] for r in data["breakdowns"]],
        "dis_title": f"{len(dis)} records where the labels differ, with both panels' votes",
        "dis_heads": heads,
        "dis_rows": [[("—" if d.get(c) is None else str(d.get(c))) for c in cols] for d in dis],
    }
