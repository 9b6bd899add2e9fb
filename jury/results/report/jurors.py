"""One entry per juror of each adjudication and audit file: what the site's juror pages show (issue 44, item 1).

Per juror, computed from the file's records (reviewed strict matches left out, as in the
latent-class fit) and never from a file's summary:

- its family and litellm model, the records it has a vote on and the votes that count (its
  effective category, :func:`jury.judging.agreement.effective_category`), by category;
- its latent-class accuracy and confusion matrix, copied from the report's fit of the file
  (:mod:`jury.results.report.latent`), or the reason the fit was refused;
- its agreement with every other juror of the file over the records both voted on: the share
  of equal categories and Cohen's kappa (:func:`jury.stats.agreement.pairwise_kappas`);
- its agreement with people on the records a review file settled (``--review``: the
  reviewers' category, :func:`jury.results.review_report.people_category`), null without one;
- its vote by the order the answers were shown (``gold_first`` / ``candidate_first``): how
  many of its counted votes credited the answer (gold_defect or format_equivalence) in each
  order, each share with its Wilson 95% interval, and Fisher's exact test of equal shares.
  With ``--swap`` a vote counts under the order of its first ballot (a vote that counts gave
  the same category in both orders, so there the split says little); the share of its
  single-answer ballots that picked the answer shown first is the report's ``agreement``.

An audit file's jurors get the same entry with the audit's classes (valid, defective), the fit of
the report's ``audit_uncertainty``, no agreement with people (a review settles adjudication
records here) and no position split (an audit ballot shows one query).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.judging.agreement import effective_category
from jury.stats.agreement import PairKappa, pairwise_kappas
from jury.stats.core import wilson
from jury.vocab import AUDIT_VOTES, CATEGORIES, CREDITED_VERDICTS

if TYPE_CHECKING:
    from jury.verdicts.documents import AdjudicationFile, AuditFile

ORDERS = ("gold_first", "candidate_first")


def _share(k: int, n: int) -> dict[str, Any]:
    w = wilson(k, n)
    return {"credited": k, "n": n, "share": w.value, "low": w.low, "high": w.high}


def _fisher(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    if not a["n"] or not b["n"]:
        return None
    from scipy import stats as _st

    table = [[a["credited"], a["n"] - a["credited"]], [b["credited"], b["n"] - b["credited"]]]
    return float(_st.fisher_exact(table).pvalue)


def _position(records: Sequence[Any], name: str, counted: Mapping[int, str]) -> dict[str, Any]:
    """The juror's counted votes by the order the answers were shown, and Fisher's test."""
    by_order = {o: [0, 0] for o in ORDERS}  # [credited, counted]
    for r_i, r in enumerate(records):
        cat = counted.get(r_i)
        vote = next((v for v in r.votes if v.juror == name), None)
        if cat is None or vote is None or vote.order not in by_order:
            continue
        by_order[vote.order][0] += cat in CREDITED_VERDICTS
        by_order[vote.order][1] += 1
    position = {o: _share(*by_order[o]) for o in ORDERS}
    return {**position, "p_value": _fisher(position["gold_first"], position["candidate_first"])}


def _one_file(
    kind: str,
    path: str,
    doc: AdjudicationFile | AuditFile,
    fit: Mapping[str, Any] | None,
    people: Mapping[tuple[Any, Any], str] | None,
) -> dict[str, Any]:
    records = [r for r in doc.records if not getattr(r, "review_pass", False)]
    classes = [str(c) for c in (CATEGORIES if kind == "adjudication" else AUDIT_VOTES)]
    names, info, ratings = _ratings(records)
    fitted = {j["juror"]: j for j in (fit or {}).get("jurors") or []}
    kappas = {(p.a, p.b): p for p in pairwise_kappas(ratings)}
    jurors = []
    for name in names:
        counted = {i: c for i, c in ratings[name].items() if c is not None}
        f = fitted.get(name)
        entry: dict[str, Any] = {
            "juror": name,
            "family": info[name]["family"],
            "model": info[name]["model"],
            "records": info[name]["records"],
            "voted": len(counted),
            "votes": {c: sum(v == c for v in counted.values()) for c in classes},
            "accuracy": None if f is None else f["accuracy"],
            "confusion": None if f is None else f["confusion"],
            "agreement": _agreement(name, counted, names, ratings, kappas),
            "people": None,
            "position": _position(records, name, counted) if kind == "adjudication" else None,
        }
        if people is not None:
            entry["people"] = _with_people(records, counted, people)
        jurors.append(entry)
    return {
        "kind": kind,
        "path": path,
        "content_sha256": doc.content_sha256,
        "records": len(records),
        "classes": classes,
        "refused": None if fit is None else fit.get("refused"),
        "people": people is not None,
        "jurors": jurors,
    }


def _ratings(records: Sequence[Any]) -> tuple[list[str], dict[str, dict[str, Any]], dict[str, dict[int, str | None]]]:
    """The jurors in the order they first vote, each one's family, model and records voted on,
    and its effective category per record index."""
    names: list[str] = []
    info: dict[str, dict[str, Any]] = {}
    ratings: dict[str, dict[int, str | None]] = {}
    for i, r in enumerate(records):
        for v in r.votes:
            if v.juror not in info:
                names.append(v.juror)
                info[v.juror] = {"family": v.family, "model": v.model, "records": 0}
                ratings[v.juror] = {}
            info[v.juror]["records"] += 1
            ratings[v.juror][i] = effective_category(v)
    return names, info, ratings


def _agreement(
    name: str,
    counted: Mapping[int, str],
    names: Sequence[str],
    ratings: Mapping[str, Mapping[int, str | None]],
    kappas: Mapping[tuple[str, str], PairKappa],
) -> list[dict[str, Any]]:
    """A juror's agreement with each other juror on the records both counted a vote on."""
    agreement = []
    for other in names:
        if other == name:
            continue
        theirs = ratings[other]
        common = [i for i in counted if theirs.get(i) is not None]
        agreed = sum(counted[i] == theirs[i] for i in common)
        pair = kappas.get((name, other)) or kappas[(other, name)]
        agreement.append(
            {
                "juror": other,
                "common": len(common),
                "agreed": agreed,
                "share": agreed / len(common) if common else None,
                "kappa": pair.value,
            }
        )
    return agreement


def _with_people(records: Sequence[Any], counted: Mapping[int, str], people: Mapping[tuple[Any, Any], str]) -> dict[str, Any]:
    """A juror's agreement with the people's labels (a review's) on the records both gave one."""
    labels = {i: people.get((getattr(r, "model", None), r.question_id)) for i, r in enumerate(records)}
    both = [i for i in counted if labels.get(i) is not None]
    agreed = sum(counted[i] == labels[i] for i in both)
    kappa = pairwise_kappas({"juror": dict(counted), "people": {i: labels[i] for i in both}})[0].value
    return {
        "reviewed": len(both),
        "agreed": agreed,
        "share": agreed / len(both) if both else None,
        "kappa": kappa,
    }


def juror_sections(
    adj_docs: Sequence[tuple[str | Path, AdjudicationFile]],
    uncertainty: Mapping[str, Any] | None,
    people: Sequence[Mapping[tuple[Any, Any], str] | None] | None = None,
    audit_docs: Sequence[tuple[str | Path | None, AuditFile]] = (),
    audit_fit: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]] | None:
    """The report's ``jurors``: one entry per adjudication file, then one per audit file (None
    without either). ``uncertainty``: the report's ``adjudication_uncertainty`` (its files in
    adj_docs' order); ``people``: per adjudication file, (model, question id) -> the category
    people settled (None: no review); ``audit_fit``: the report's ``audit_uncertainty`` (its
    files in audit_docs' order)."""
    if not adj_docs and not audit_docs:
        return None
    fits = list((uncertainty or {}).get("files") or [])
    labels = list(people) if people is not None else []
    out = []
    for i, (path, doc) in enumerate(adj_docs):
        fit = fits[i] if i < len(fits) else None
        out.append(_one_file("adjudication", str(path), doc, fit, labels[i] if i < len(labels) else None))
    audit_fits = list((audit_fit or {}).get("files") or [])
    for i, (a_path, a_doc) in enumerate(audit_docs):
        fit = audit_fits[i] if i < len(audit_fits) else None
        out.append(_one_file("audit", str(a_path) if a_path is not None else f"audit {i + 1}", a_doc, fit, None))
    return out
