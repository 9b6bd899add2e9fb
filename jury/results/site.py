"""`jury report -f html -o DIR`: a static, self-contained site of a report.

Everything comes from files already read and checked by `jury report`: the ``Report`` that
``-f json`` writes (the front page's numbers are read from it, never recomputed, and it is
written beside the pages as report.json), the evaluation (outcomes and result previews), the
gold and run files, the locked verdict files and an optional review file. Pages:

- ``index.html``: headline findings (jury.results.headlines), the three columns with their
  Wilson intervals drawn, ranks, rank shifts and the composition of the misses in a
  sortable table, rank stability, correlations, family shares, the negative control, oracle
  routing, the charts as inline SVG (each captioned with the verdict files it came from) and
  a verification block (versions, hashes, signatures, the commands that rebuild the page);
- ``models/<model>.html``: every answer of one model, filterable by outcome and verdict;
- ``questions/<question>.html``: the question, evidence, gold SQL and preview, the audit's
  votes on the gold, and each model's SQL, preview, juror votes and reasoning, and the
  human review decisions.

Every count on the front page links to the model page filtered to exactly the answers it
counts. Templates autoescape everything; the pages carry a strict Content-Security-Policy
and load only the site's own CSS and JS (no inline script, style or event handler); the
charts are rewritten so that they style nothing through CSS. The folder gets a marker
(``.jury-site.json``, listing the files written); a later build writes over a folder only
when it holds that marker, and removes only the files an earlier build listed.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shlex
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from jury.errors import InputError
from jury.results.headlines import headlines
from jury.results.plots import FIGURES, provenance_lines
from jury.results.report import as_report_dict, rank_cell, render_report
from jury.stats import ordinal
from jury.version import __version__
from jury.vocab import COLUMNS, COMPOSITION, JURY_ELIGIBLE, NOT_EXECUTED, Column, Outcome, Verdict

MARKER = ".jury-site.json"
CSP = "default-src 'none'; img-src data: 'self'; style-src 'self'; script-src 'self'"
PREVIEW_ROWS = 10
PREVIEW_CHARS = 2000
CELL_CHARS = 120
CHART_TITLES = {
    "columns.png": "Accuracy by column with Wilson 95% intervals",
    "rank_slope.png": "Rank: strict → adjudicated",
    "miss_composition.png": "Composition of the jury-reached misses",
    "defect_share_vs_strength.png": "Gold-defect share against strength",
    "position_bias.png": "Position bias of the jurors",
    "error_categories.png": "Genuine errors by category",
}


@dataclass
class SiteSources:
    """What a site is built from (all already loaded and checked by `jury report`)."""

    report: Any  # Report or its JSON dict
    evaluation: Any  # jury.compare.outcomes.Evaluation
    gold: dict  # question id -> GoldItem
    records: list  # RunRecord
    audit: tuple | None = None  # (path, AuditFile), the review applied
    adjudications: list = field(default_factory=list)  # [(path, AdjudicationFile)], the review applied
    review: tuple | None = None  # (path, ReviewFile)
    inputs: list = field(default_factory=list)  # [(role, path)]: gold, runs, families, ...
    command: list[str] = field(default_factory=list)  # the `jury report` argv that rebuilds the site


@dataclass
class SiteSummary:
    path: Path
    files: int
    bytes: int


# ------------------------------------------------------------------ the output folder


def check_site_dir(out: Path, inputs=()) -> None:
    """Refuse a folder that is neither absent, empty nor a site jury wrote (its marker), and a
    folder holding one of the inputs."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"-o {out}: is a file; -f html writes a folder")
    where = out.resolve()
    for p in inputs:
        if p is None:
            continue
        rp = Path(p).resolve()
        if rp == where or where in rp.parents:
            raise InputError(f"-o {out}: holds the input {p}; the site never writes over an input (choose another folder)")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise InputError(f"-o {out}: is a non-empty folder that is not a jury site (no {MARKER}); choose an empty or new folder")


def _previous_files(out: Path) -> list[str]:
    try:
        data = json.loads((out / MARKER).read_text(encoding="utf-8"))
        return [f for f in data.get("files", []) if isinstance(f, str)]
    except (OSError, ValueError, AttributeError):
        return []


# ------------------------------------------------------------------ small helpers


def slugs(names) -> dict:
    """name -> a file-name-safe, unique slug (a hash suffix when the name had to change)."""
    out: dict = {}
    taken: set[str] = set()
    for name in names:
        text = str(name)
        base = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).lstrip(".")[:60] or "_"
        slug = base
        if slug != text or slug.lower() in taken:
            slug = f"{base}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
        taken.add(slug.lower())
        out[name] = slug
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def preview(result) -> str:
    """At most PREVIEW_ROWS rows of a result, with its true row count (plain text; escaped when shown)."""
    if result is None:
        return "(no result: the query was not run)"
    if result.recorded_preview is not None:
        return _clip(result.recorded_preview, PREVIEW_CHARS) + "\n(result as recorded by another evaluation)"
    if not result.ok:
        return f"(the query failed: {result.status}: {result.error})"
    lines = [" | ".join(_clip(str(c), CELL_CHARS) for c in result.columns)]
    for row in result.rows[:PREVIEW_ROWS]:
        lines.append(
            " | ".join("NULL" if v is None else _clip(v.hex() if isinstance(v, bytes) else str(v), CELL_CHARS) for v in row)
        )
    shown = min(len(result.rows), PREVIEW_ROWS)
    total = result.row_count
    lines.append(
        f"({total:,} row{'s' if total != 1 else ''} in total" + (f"; the first {shown} shown)" if shown < total else ")")
    )
    return _clip("\n".join(lines), PREVIEW_CHARS)


def sha256_of(path: Path) -> str | None:
    from jury.inputs.io import sha256_file

    try:
        return sha256_file(path)
    except OSError:
        return None


_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"
_URL = re.compile(r"url\(#([^)]+)\)")


def clean_svg(text: str, prefix: str) -> str:
    """matplotlib's SVG made fit to inline under the page's CSP: style attributes and <style>
    become presentation attributes (no CSS), comments and metadata go, ids get ``prefix``."""
    ET.register_namespace("", _SVG)
    ET.register_namespace("xlink", _XLINK)
    root = ET.fromstring(text)
    for parent in root.iter():
        for child in list(parent):
            if child.tag in (f"{{{_SVG}}}style", f"{{{_SVG}}}metadata"):
                parent.remove(child)
    for el in root.iter():
        style = el.attrib.pop("style", None)
        if style:
            for decl in style.split(";"):
                if ":" in decl:
                    prop, value = (s.strip() for s in decl.split(":", 1))
                    if re.fullmatch(r"[a-z-]+", prop) and prop != "font":
                        el.attrib.setdefault(prop, value)
        if "id" in el.attrib:
            el.attrib["id"] = prefix + el.attrib["id"]
        for key, value in list(el.attrib.items()):
            if key in ("href", f"{{{_XLINK}}}href") and value.startswith("#"):
                el.attrib[key] = "#" + prefix + value[1:]
            elif "url(#" in value:
                el.attrib[key] = _URL.sub(lambda m: f"url(#{prefix}{m.group(1)})", value)
    root.attrib.update({"stroke-linejoin": "round", "stroke-linecap": "butt", "class": "chart", "role": "img"})
    return ET.tostring(root, encoding="unicode")


def figure_svg(fig, prefix: str) -> str:
    buf = io.StringIO()
    try:
        fig.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.1, facecolor="white", metadata={"Date": None})
    finally:
        fig.clear()
    return clean_svg(buf.getvalue(), prefix)


# ------------------------------------------------------------------ the data of the pages


def _fmt_pct(v) -> str:
    return "—" if v is None else f"{100 * v:.1f}%"


def _fmt_int(v) -> str:
    return "—" if v is None else f"{v:,}"


def _fmt_float3(v) -> str:
    return "—" if v is None else f"{v:.3f}"


def _fmt_rank(v) -> str:
    return "—" if v is None else ordinal(v)


FORMATS = {"pct": _fmt_pct, "int": _fmt_int, "float3": _fmt_float3, "rank": _fmt_rank}


def pointer(*parts) -> str:
    """A JSON Pointer (RFC 6901) into the report: pointer("models", 0, "strict", "k")."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def resolve(data, path: str):
    """The value at a JSON Pointer."""
    for part in path.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


class Numbers:
    """Cells of the front page: the value at a JSON path of the report, formatted, carrying the
    path and the exact JSON value (data-json, data-value) so a test can compare them."""

    def __init__(self, report: dict):
        self.report = report

    def __call__(self, path: str, fmt: str = "int", href: str | None = None) -> dict:
        value = resolve(self.report, path)
        return {"path": path, "value": json.dumps(value), "text": FORMATS[fmt](value), "fmt": fmt, "href": href, "raw": value}


def _tags(pair, rec, flagged: set, reviewed: bool) -> list[str]:
    """Filter tags of one answer on its model page (what the front page's counts count)."""
    tags = ["all", pair.outcome]
    if pair.outcome == Outcome.GOLD_ERROR:
        return tags
    if not pair.routed:
        return [*tags, "misrouted"]
    tags.append("routed")
    clean = pair.question_id not in flagged
    if clean:
        tags.append("clean")
    if pair.outcome == Outcome.MATCH:
        tags += ["credited"] + (["clean_match"] if clean else [])
    if pair.outcome in NOT_EXECUTED:
        tags.append("not_executed")
    if rec is not None and pair.outcome == JURY_ELIGIBLE:
        tags.append("jury")
        verdict = Verdict.NO_MAJORITY if rec.verdict == Verdict.UNDECIDED else rec.verdict
        tags.append(str(verdict))
        if rec.credited:
            tags.append("credited")
    if flagged and not clean:
        tags.append("flagged")
    if reviewed:
        tags.append("reviewed")
    return tags


FILTERS = (
    ("all", "every answer"),
    ("routed", "routed to the right database"),
    ("match", "strict matches"),
    ("clean", "gold-clean denominator (routed, gold not flagged)"),
    ("clean_match", "gold-clean successes"),
    ("credited", "adjudicated successes (matches and credited failures)"),
    ("jury", "jury-reached misses"),
    *((str(c), f"verdict: {c.replace('_', ' ')}") for c in COMPOSITION),
    ("near_miss", "near misses"),
    ("not_executed", "not executed (error, timeout, missing)"),
    ("misrouted", "misrouted"),
    ("flagged", "gold flagged by the audit"),
    ("reviewed", "decided by a person"),
    ("gold_error", "gold query fails (out of every denominator)"),
)


def _vote_rows(votes) -> list[dict]:
    rows = []
    for v in votes:
        if v.skipped:
            said = "not asked (early stop)"
        elif v.abstained:
            said = "abstained" + (f": {v.reason}" if v.reason else "") + (" (the two orders disagreed)" if v.inconsistent else "")
        else:
            said = v.category or v.raw_verdict or "—"
            if v.defect_type:
                said += f" ({v.defect_type})"
        rows.append(
            {
                "juror": v.juror,
                "family": v.family,
                "model": v.model,
                "order": (v.order or "").replace("_", " "),
                "raw": v.raw_verdict or "",
                "said": said.replace("_", " "),
                "reasoning": v.reasoning or "",
            }
        )
    return rows


def _review_rows(recs) -> list[dict]:
    return [
        {
            "reviewer": r.reviewer,
            "decided_at": r.decided_at,
            "choice": r.choice,
            "category": (r.category or "").replace("_", " "),
            "defect_type": r.defect_type or "",
            "corrected_sql": r.corrected_sql or "",
            "note": r.note or "",
            "jury_verdict": r.jury_verdict.replace("_", " "),
        }
        for r in recs
    ]


def site_command(
    runs, gold, audit, verdicts, review, families, strength, control, settings, rank_resamples: int, seed: int, output
) -> list[str]:
    """The `jury report` argv that rebuilds a site (run from the same folder)."""
    argv = ["jury", "report", *map(str, runs), "--gold", str(gold)]
    for flag, value in (
        ("--audit", audit),
        *(("--verdicts", v) for v in verdicts),
        ("--review", review),
        ("--families", families),
    ):
        if value is not None:
            argv += [flag, str(value)]
    for flag, value in (("--strength", strength), ("--control", control)):
        if value is not None:
            argv += [flag, value]
    argv += ["--comparator", settings.comparator, "--near-miss", f"{settings.near_miss:g}"]
    argv += ["--rank-resamples", str(rank_resamples), "--seed", str(seed), "-f", "html", "-o", str(output)]
    return argv


# ------------------------------------------------------------------ building


def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("jury.results", "site_templates"),
        autoescape=True,  # every template, whatever its name
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = _fmt_pct
    env.filters["count"] = _fmt_int
    env.filters["float3"] = _fmt_float3
    env.filters["rank"] = _fmt_rank
    env.filters["label"] = lambda c: Column(c).label
    return env


def _bar(p: dict | None, lo: float, hi: float) -> dict | None:
    """A Wilson interval as x positions (0..100) on the table's common scale."""
    if not p or p.get("value") is None:
        return None
    span = (hi - lo) or 1.0

    def x(v):
        return round(100 * (v - lo) / span, 2)

    return {"x1": x(p["low"]), "x2": x(p["high"]), "cx": x(p["value"])}


def _scale(report: dict) -> tuple[float, float]:
    lows = [r[c]["low"] for r in report["models"] for c in COLUMNS if r.get(c) and r[c]["low"] is not None]
    highs = [r[c]["high"] for r in report["models"] for c in COLUMNS if r.get(c) and r[c]["high"] is not None]
    if not lows:
        return 0.0, 1.0
    lo, hi = min(lows), max(highs)
    pad = max(0.01, 0.03 * (hi - lo))
    return max(0.0, lo - pad), min(1.0, hi + pad)


def _front(report: dict, model_slug: dict, sources: SiteSources) -> dict:
    num = Numbers(report)
    lo, hi = _scale(report)
    present = [c for c in COLUMNS if any(r.get(c) for r in report["models"])]
    rows = []
    for i, r in enumerate(report["models"]):
        page = f"models/{model_slug[r['model']]}.html"
        row: dict[str, Any] = {"model": r["model"], "page": page, "families": r["families"], "columns": {}}
        row["routed"] = num(pointer("models", i, "routed"), "int", f"{page}#show=routed")
        row["questions"] = num(pointer("models", i, "questions"), "int", f"{page}#show=all")
        row["routing_accuracy"] = num(pointer("models", i, "routing_accuracy"), "pct")
        for c in present:
            if r.get(c) is None:
                row["columns"][c] = None
                continue
            k_tag = {"strict": "match", "gold_clean": "clean_match", "adjudicated": "credited"}[c]
            n_tag = "clean" if c == "gold_clean" else "routed"
            row["columns"][c] = {
                "value": num(pointer("models", i, c, "value"), "pct"),
                "low": num(pointer("models", i, c, "low"), "pct"),
                "high": num(pointer("models", i, c, "high"), "pct"),
                "k": num(pointer("models", i, c, "k"), "int", f"{page}#show={k_tag}"),
                "n": num(pointer("models", i, c, "n"), "int", f"{page}#show={n_tag}"),
                "rank": num(pointer("models", i, f"{c}_rank"), "rank"),
                "bar": _bar(r[c], lo, hi),
            }
        row["rank_shift"] = r["rank_shift"]
        row["rank_delta"] = num(pointer("models", i, "rank_delta"), "int") if r["rank_delta"] is not None else None
        row["jury_reached"] = num(pointer("models", i, "jury_reached"), "int", f"{page}#show=jury")
        row["composition"] = [
            (
                str(c),
                num(pointer("models", i, "composition", c), "int", f"{page}#show={c}"),
                num(pointer("models", i, "composition_pct", c), "pct"),
            )
            for c in COMPOSITION
        ]
        row["near_miss"] = num(pointer("models", i, "near_miss"), "int", f"{page}#show=near_miss")
        row["not_executed"] = num(pointer("models", i, "not_executed"), "int", f"{page}#show=not_executed")
        rows.append(row)
    stability = None
    rs = report.get("rank_stability")
    if rs:
        n_models = len(report["models"])
        stability = {
            "resamples": rs["resamples"],
            "seed": rs["seed"],
            "questions": rs["questions"],
            "columns": [c for c in COLUMNS if c in rs["columns"]],
            "rows": [
                {
                    "model": r["model"],
                    "page": f"models/{model_slug[r['model']]}.html",
                    "cells": {
                        c: {
                            "text": rank_cell(rs["columns"][c][i]),
                            "rank": num(pointer("rank_stability", "columns", c, i, "rank"), "rank"),
                            "low": num(pointer("rank_stability", "columns", c, i, "low"), "rank"),
                            "high": num(pointer("rank_stability", "columns", c, i, "high"), "rank"),
                            "strip": [
                                {"x": j * 100 / max(n_models, 1), "w": 100 / max(n_models, 1), "p": round(p, 4), "rank": j + 1}
                                for j, p in enumerate(rs["columns"][c][i]["probabilities"])
                            ],
                        }
                        for c in COLUMNS
                        if c in rs["columns"]
                    },
                }
                for i, r in enumerate(report["models"])
            ],
        }
    corr = [
        (name, key, num(pointer("correlations", key, "r"), "float3"), report["correlations"][key])
        for name, key in (
            (
                f"Spearman, gold-defect share vs {Column(report['correlations']['gold_defect_share_vs_strength']['strength']).label} accuracy",
                "gold_defect_share_vs_strength",
            ),
            ("Pearson, routing accuracy vs challenging share of the denominator", "routing_vs_challenging_share"),
            ("Pearson, routing accuracy vs mean difficulty of the denominator", "routing_vs_mean_difficulty"),
        )
    ]
    families = [
        (
            name,
            num(pointer("families", name, "format_equivalence"), "int"),
            num(pointer("families", name, "jury_reached"), "int"),
            num(pointer("families", name, "share"), "pct"),
        )
        for name in report["families"]
    ]
    oracle = report["oracle_routing"]
    oracle_rows = [
        {
            "model": r["model"],
            "page": f"models/{model_slug[r['model']]}.html",
            "cells": {
                c: None
                if r.get(c) is None
                else {
                    "value": num(pointer("oracle_routing", "models", i, c, "value"), "pct"),
                    "k": num(pointer("oracle_routing", "models", i, c, "k"), "int"),
                    "n": num(pointer("oracle_routing", "models", i, c, "n"), "int"),
                    "rank": num(pointer("oracle_routing", "models", i, f"{c}_rank"), "rank"),
                }
                for c in present
            },
        }
        for i, r in enumerate(oracle["models"])
    ]
    return {
        "rows": rows,
        "present": present,
        "scale": (lo, hi),
        "stability": stability,
        "correlations": corr,
        "families": families,
        "control": report["control"],
        "oracle": {"questions": num(pointer("oracle_routing", "questions"), "int"), "rows": oracle_rows},
        "findings": headlines(report),
        "gold_errors": report["gold_errors"],
    }


def _charts(report: dict) -> list[dict]:
    out = []
    for n, (filename, build, kinds) in enumerate(FIGURES):
        fig = build(report)
        if fig is None:
            continue
        out.append(
            {
                "id": filename.removesuffix(".png"),
                "title": CHART_TITLES.get(filename, filename),
                "svg": figure_svg(fig, f"c{n}-"),
                "sources": provenance_lines(report, kinds),
            }
        )
    return out


def _verification(report: dict, sources: SiteSources) -> dict:
    from jury.verdicts.signing import signature_label

    inputs = []
    for role, path in sources.inputs:
        if path is not None:
            inputs.append({"role": role, "path": str(path), "sha256": sha256_of(Path(path)) or "(unreadable)"})
    for db_id, (path, sha) in sorted(getattr(sources.evaluation, "databases", {}).items()):
        inputs.append({"role": f"database {db_id}", "path": str(path), "sha256": sha})
    verdicts = []
    files = ([("audit", sources.audit[0], sources.audit[1])] if sources.audit else []) + [
        ("adjudication", p, d) for p, d in sources.adjudications
    ]
    if sources.review:
        files.append(("review", sources.review[0], sources.review[1]))
    for kind, path, doc in files:
        ok, note = signature_label(path, None)
        verdicts.append(
            {
                "kind": kind,
                "path": str(path),
                "content_sha256": doc.content_sha256,
                "file_sha256": sha256_of(Path(path)) or "(unreadable)",
                "signature": note if ok else f"INVALID: {note}",
                "panel": getattr(getattr(doc, "panel", None), "name", None),
            }
        )
    verify_cmd = shlex.join(["jury", "verify", *(v["path"] for v in verdicts)]) if verdicts else None
    return {
        "jury_version": report["jury_version"],
        "provenance": report["provenance"],
        "inputs": inputs,
        "verdicts": verdicts,
        "verify": verify_cmd,
        "report": shlex.join(sources.command) if sources.command else None,
    }


def _questions(sources: SiteSources, model_slug: dict) -> tuple[list, dict]:
    """(question ids in order, per-question page data); also each model's answer rows."""
    ev = sources.evaluation
    flagged = {r.question_id for r in sources.audit[1].records if r.flagged} if sources.audit else set()
    audit_by_q = {r.question_id: r for r in sources.audit[1].records} if sources.audit else {}
    adj: dict[tuple, tuple] = {}
    passes: dict[tuple, tuple] = {}
    for path, doc in sources.adjudications:
        for r in doc.records:
            (passes if r.review_pass else adj)[(r.model, r.question_id)] = (str(path), r)
    sql_of = {(r.model, r.question_id): r.sql for r in sources.records}
    reviews: dict[tuple, list] = {}
    if sources.review:
        for r in sources.review[1].records:
            reviews.setdefault((r.kind, r.model, r.question_id), []).append(r)
    qids = list(dict.fromkeys(p.question_id for p in ev.pairs))
    q_slug = slugs(qids)
    results = getattr(ev, "results", {}) or {}
    per_q: dict = {q: {"answers": []} for q in qids}
    model_rows: dict[str, list] = {}
    for p in ev.pairs:
        found = adj.get((p.model, p.question_id)) or passes.get((p.model, p.question_id))
        rec = found[1] if found else None
        human = reviews.get(("adjudication", p.model, p.question_id), [])
        tags = _tags(p, rec if rec is not None and not rec.review_pass else None, flagged, bool(human))
        verdict = None
        if rec is not None:
            verdict = str(rec.verdict)
        anchor = f"a-{model_slug[p.model]}"
        model_rows.setdefault(p.model, []).append(
            {
                "qid": str(p.question_id),
                "href": f"../questions/{q_slug[p.question_id]}.html#{anchor}",
                "difficulty": getattr(sources.gold.get(p.question_id), "difficulty", None) or "",
                "outcome": p.outcome.replace("_", " "),
                "verdict": (verdict or "").replace("_", " "),
                "credited": "yes"
                if (p.outcome == Outcome.MATCH and p.routed) or (rec is not None and rec.credited and not rec.review_pass)
                else "",
                "flagged": "flagged" if p.question_id in flagged else "",
                "human": "yes" if human else "",
                "tags": " ".join(tags),
            }
        )
        pred = results.get(p.pred_key) if p.pred_key else None
        per_q[p.question_id]["answers"].append(
            {
                "model": p.model,
                "anchor": anchor,
                "model_page": f"../models/{model_slug[p.model]}.html",
                "outcome": p.outcome.replace("_", " "),
                "overlap": p.overlap,
                "routed": p.routed,
                "chosen_db": p.chosen_db_id,
                "sql": sql_of.get((p.model, p.question_id)) or "",
                "preview": "" if p.outcome in (Outcome.MATCH, Outcome.GOLD_ERROR) else preview(pred),
                "file": found[0] if found else None,
                "verdict": (verdict or "").replace("_", " "),
                "review_pass": bool(rec is not None and rec.review_pass),
                "credited": bool(rec is not None and rec.credited),
                "votes": _vote_rows(rec.votes) if rec is not None else [],
                "human": _review_rows(human),
            }
        )
    first_pair: dict = {}
    for p in ev.pairs:
        first_pair.setdefault(p.question_id, p)
    for q in qids:
        item = sources.gold.get(q)
        gold_pair = first_pair.get(q)
        gold_res = results.get(gold_pair.gold_key) if gold_pair is not None and gold_pair.gold_key else None
        a = audit_by_q.get(q)
        per_q[q].update(
            {
                "qid": str(q),
                "slug": q_slug[q],
                "db_id": getattr(item, "db_id", ""),
                "question": getattr(item, "question", ""),
                "evidence": getattr(item, "evidence", ""),
                "difficulty": getattr(item, "difficulty", None) or "",
                "gold_sql": getattr(item, "sql", ""),
                "gold_preview": preview(gold_res),
                "gold_error": ev.gold_errors.get(q),
                "audit": None
                if a is None
                else {
                    "path": str(sources.audit[0]) if sources.audit else "",
                    "flagged": a.flagged,
                    "decided": a.decided,
                    "defect_types": [d.replace("_", " ") for d in a.defect_types],
                    "votes": _vote_rows(a.votes),
                },
                "human": _review_rows(reviews.get(("gold", None, q), [])),
            }
        )
    return qids, {"pages": per_q, "models": model_rows}


def build_site(sources: SiteSources, out: str | Path) -> SiteSummary:
    """Write the site into ``out`` (see the module's docstring); refuses a folder that is not
    empty and not an earlier jury site."""
    out = Path(out)
    check_site_dir(out, [p for _role, p in sources.inputs])
    report = as_report_dict(sources.report)
    env = _environment()
    models = [r["model"] for r in report["models"]]
    model_slug = slugs(models)
    qids, data = _questions(sources, model_slug)
    written: dict[str, bytes] = {}

    def page(name: str, template: str, **ctx) -> None:
        root = "../" * name.count("/")
        html = env.get_template(template).render(root=root, csp=CSP, version=__version__, **ctx)
        written[name] = html.encode("utf-8")

    front = _front(report, model_slug, sources)
    page(
        "index.html",
        "index.html",
        title="jury report",
        report=report,
        front=front,
        charts=_charts(report),
        verification=_verification(report, sources),
        n_questions=len(qids),
    )
    for r in report["models"]:
        rows = data["models"].get(r["model"], [])
        counts = Counter(t for row in rows for t in row["tags"].split())
        page(
            f"models/{model_slug[r['model']]}.html",
            "model.html",
            title=f"{r['model']} — jury report",
            row=r,
            answers=rows,
            filters=[(key, label, counts.get(key, 0)) for key, label in FILTERS if counts.get(key) or key == "all"],
        )
    for q in qids:
        d = data["pages"][q]
        page(f"questions/{d['slug']}.html", "question.html", title=f"question {q} — jury report", q=d)
    written["report.json"] = render_report(report, "json").encode("utf-8")
    for asset in ("site.css", "site.js"):
        written[f"assets/{asset}"] = resources.files("jury.results").joinpath("site_templates", asset).read_bytes()

    previous = set(_previous_files(out)) if out.is_dir() else set()
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for name, body in written.items():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        total += len(body)
    for stale in sorted(previous - set(written)):
        target = out / stale
        if ".." not in Path(stale).parts and target.is_file():
            target.unlink()
    marker = json.dumps({"generator": f"jury {__version__}", "files": sorted(written)}, indent=1).encode()
    (out / MARKER).write_bytes(marker)
    return SiteSummary(out, len(written) + 1, total + len(marker))
