"""The data of the site's juror pages (``jurors/<juror>.html``): one per juror of each
adjudication file, every number read from the report's ``jurors`` (jury.results.report.jurors),
``adjudication_uncertainty`` and ``agreement`` by its JSON Pointer (:class:`Numbers` cells).
"""

from __future__ import annotations

from typing import Any

from jury.results.site.answers import slugs
from jury.results.site.front import Numbers, pointer


def _first_answer(num: Numbers, report: dict[str, Any], f: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The juror's share of single-answer ballots that picked the answer shown first (the
    report's agreement section for the same file), or None (labelled ballots, no such file)."""
    for k, a in enumerate(report.get("agreement") or []):
        if a["kind"] != "adjudication" or a["path"] != f["path"] or a["content_sha256"] != f["content_sha256"]:
            continue
        bias = a.get("position_bias") or {}
        if name not in (bias.get("jurors") or {}):
            return {"note": a.get("position_bias_note")}
        at = ("agreement", k, "position_bias", "jurors", name)
        return {
            "k": num(pointer(*at, "k")),
            "n": num(pointer(*at, "n")),
            "share": num(pointer(*at, "share"), "pct"),
            "low": num(pointer(*at, "low"), "pct"),
            "high": num(pointer(*at, "high"), "pct"),
            "p_value": bias["jurors"][name]["p_value"],
            "note": None,
        }
    return None


def _prior(num: Numbers, report: dict[str, Any], f: dict[str, Any], at: int, r: int) -> dict[str, Any] | None:
    """The fit's estimated share of the file's records in class r: the file's entry in
    ``adjudication_uncertainty`` or ``audit_uncertainty`` (their files in the same order as the
    jurors' files of that kind; ``at`` its index among them)."""
    section = "adjudication_uncertainty" if f["kind"] == "adjudication" else "audit_uncertainty"
    files = (report.get(section) or {}).get("files") or []
    if at >= len(files) or not files[at].get("priors"):
        return None
    return num(pointer(section, "files", at, "priors", r), "pct")


def _kind_index(files: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Per file of the report's ``jurors``: (its index among the files of its kind, how many of that kind)."""
    kinds = [f["kind"] for f in files]
    return [(kinds[:i].count(k), kinds.count(k)) for i, k in enumerate(kinds)]


def juror_slugs(report: dict[str, Any]) -> dict[tuple[int, str], str]:
    """(file index, juror) -> its page's slug: the juror's name (made safe, jury.results.site.answers.slugs),
    ``audit-`` before it for an audit file's juror, and the file's number among the files of its kind
    after it when the report has more than one of that kind."""
    files = report.get("jurors") or []
    keys = [(i, j["juror"]) for i, f in enumerate(files) for j in f["jurors"]]
    where = _kind_index(files)
    names = {}
    for i, name in keys:
        at, of = where[i]
        stem = name if files[i]["kind"] == "adjudication" else f"audit-{name}"
        names[(i, name)] = stem if of == 1 else f"{stem}.{at + 1}"
    made = slugs(names.values())
    return {k: made[names[k]] for k in keys}


def juror_pages(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each juror page's data, in the report's order (an empty list without adjudication files)."""
    num = Numbers(report)
    slug = juror_slugs(report)
    files = report.get("jurors") or []
    return [_juror_page(num, report, files, fi, ji, slug) for fi, f in enumerate(files) for ji in range(len(f["jurors"]))]


_Cell = dict[str, Any]  # a Numbers cell
_At = tuple[str, int, str, int]  # ("jurors", file index, "jurors", juror index): a juror's place in the report


def _juror_page(
    num: Numbers, report: dict[str, Any], files: list[dict[str, Any]], fi: int, ji: int, slug: dict[tuple[int, str], str]
) -> dict[str, Any]:
    """The page of file ``fi``'s juror ``ji``: its cells, each pointing into the report's ``jurors``."""
    f = files[fi]
    j = f["jurors"][ji]
    at: _At = ("jurors", fi, "jurors", ji)
    others = {o["juror"]: slug[(fi, o["juror"])] for o in f["jurors"]}
    position = _position_cells(num, at) if j["position"] is not None else None
    return {
        "slug": slug[(fi, j["juror"])],
        "file": f,
        "file_number": fi + 1,
        "files": len(files),
        "juror": j,
        "records": num(pointer(*at, "records")),
        "voted": num(pointer(*at, "voted")),
        "votes": [(c, num(pointer(*at, "votes", c))) for c in j["votes"]],
        "accuracy": num(pointer(*at, "accuracy"), "pct") if j["accuracy"] is not None else None,
        "confusion": _confusion_cells(num, report, files, fi, at, j) if j["confusion"] is not None else None,
        "agreement": _agreement_cells(num, at, j, others),
        "people": _people_cells(num, at) if j["people"] is not None else None,
        "position": position,
        "p_value": None if j["position"] is None else j["position"]["p_value"],
        "first_answer": _first_answer(num, report, f, j["juror"]) if f["kind"] == "adjudication" else None,
    }


def _position_cells(num: Numbers, at: _At) -> dict[str, dict[str, _Cell]]:
    """The juror's counted votes credited by the order the answers were shown, with their intervals."""
    return {
        order: {
            "credited": num(pointer(*at, "position", order, "credited")),
            "n": num(pointer(*at, "position", order, "n")),
            "share": num(pointer(*at, "position", order, "share"), "pct"),
            "low": num(pointer(*at, "position", order, "low"), "pct"),
            "high": num(pointer(*at, "position", order, "high"), "pct"),
        }
        for order in ("gold_first", "candidate_first")
    }


def _confusion_cells(
    num: Numbers, report: dict[str, Any], files: list[dict[str, Any]], fi: int, at: _At, j: dict[str, Any]
) -> list[tuple[str, dict[str, Any] | None, list[_Cell]]]:
    """The fit's confusion matrix of the juror: per true class, its name, its prior and its row."""
    f = files[fi]
    return [
        (
            f["classes"][r],
            _prior(num, report, f, _kind_index(files)[fi][0], r),
            [num(pointer(*at, "confusion", r, c), "float3") for c in range(len(row))],
        )
        for r, row in enumerate(j["confusion"])
    ]


def _agreement_cells(num: Numbers, at: _At, j: dict[str, Any], others: dict[str, str]) -> list[dict[str, Any]]:
    """The juror's agreement with each other juror of the file, with the other's page."""
    return [
        {
            "juror": o["juror"],
            "page": f"{others[o['juror']]}.html",
            "common": num(pointer(*at, "agreement", k, "common")),
            "agreed": num(pointer(*at, "agreement", k, "agreed")),
            "share": num(pointer(*at, "agreement", k, "share"), "pct"),
            "kappa": num(pointer(*at, "agreement", k, "kappa"), "float3"),
        }
        for k, o in enumerate(j["agreement"])
    ]


def _people_cells(num: Numbers, at: _At) -> dict[str, _Cell]:
    """The juror's agreement with the people's labels (--review)."""
    return {
        key: num(pointer(*at, "people", key), fmt)
        for key, fmt in (("reviewed", "int"), ("agreed", "int"), ("share", "pct"), ("kappa", "float3"))
    }


def juror_index(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The front page's list: per adjudication or audit file, its jurors with their pages."""
    out: list[dict[str, Any]] = []
    for p in pages:
        if not out or out[-1]["number"] != p["file_number"]:
            f = p["file"]
            out.append({"number": p["file_number"], "kind": f["kind"], "path": f["path"], "refused": f["refused"], "jurors": []})
        out[-1]["jurors"].append(p)
    return out
