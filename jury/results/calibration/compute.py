"""`jury calibrate`: how far execution match, each juror and the panel agree with careful
humans. Pure computations over human labels (jury/inputs/labels.py), an evaluation and
locked verdict files; no LLM call, no I/O.

The **reference** of a (question, candidate) is the ``consensus`` annotator's label when the
set publishes one, else the majority of its annotators (a tie has no reference: it is left
out and counted), or the one annotator asked for. A label names its candidate by model (the
run's ``model``) or, without one, by its SQL (compared whitespace-normalised); a pair of the
run matches a label by (question_id, model), else by (question_id, SQL).

*Credited* means judged a right answer: a human ``correct``; a comparator's match; a juror's or
the panel's verdict among the credited categories (gold defect, format equivalence). The panel
credits what strict matching passed and the jury never saw, exactly as the adjudicated column
does; a failure the jury did not reach (near miss, error, timeout, missing) is not credited.
Every figure carries n, the items it was computed on.

The output document is in ``calibration_model``; the reference labels and the figure builder
in ``calibration_reference``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import InputError
from jury.inputs.label_sets import LabelSet
from jury.inputs.labels import CONSENSUS, AdjudicationLabel, GoldLabel, Labels
from jury.results.calibration.model import SECTIONS, CalibrationDocument, Confusion, Figure, Section
from jury.results.calibration.reference import (
    CORRECT,
    INCORRECT,
    Item,
    ReferenceBuilder,
    candidate_key,
    choose,
    credit_label,
    normalised_sql,
    reference_description,
    reference_labels,
)
from jury.results.columns import verdict_index
from jury.stats.agreement import krippendorff_alpha, pairwise_kappas
from jury.stats.core import position_bias
from jury.version import __version__
from jury.vocab import CATEGORIES, CREDITED_VERDICTS, DECIDING_COMPARATORS, AuditVote, Comparator, Outcome, Verdict

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation


FLEX_AGREEMENT = str(LabelSet.FLEX_AGREEMENT)  # the source name of FLEX's 200 expert-labelled pairs
# Published on FLEX's agreement set (FLEX, NAACL 2025): Cohen's kappa with the experts' consensus.
ANCHORS: tuple[tuple[str, float], ...] = (("FLEX with GPT-4o (published)", 0.87), ("execution match (published)", 0.62))
ANCHOR_ITEMS = 200
RECORDED_COMPARATORS: tuple[Comparator, ...] = (Comparator.STRICT, Comparator.BIRD)

__all__ = ["calibrate", "CalibrationDocument", "Figure", "Confusion", "Section", "SECTIONS", "Item", "candidate_key", "choose"]
__all__ += ["reference_description", "CORRECT", "INCORRECT", "FLEX_AGREEMENT", "ANCHORS", "ANCHOR_ITEMS"]
__all__ += ["RECORDED_COMPARATORS"]


# ------------------------------------------------------------------ calibrate


def calibrate(
    labels: Labels,
    *,
    evaluation: Evaluation | None = None,
    records: Sequence[Any] = (),
    adjudications: Sequence[tuple[str | Path, Any]] = (),
    audits: Sequence[tuple[str | Path, Any]] = (),
    judgments: Sequence[Any] = (),
    annotator: str | None = None,
    seed: int = 0,
    resamples: int = 2000,
) -> CalibrationDocument:
    """Every agreement figure the inputs allow (see the module docstring).

    ``evaluation``: jury.compare.outcomes.evaluate's result for ``records`` (the run records;
    they name each pair's SQL and whether its outcome was recorded); ``adjudications`` and
    ``audits``: (path, locked document) pairs; ``judgments``: recorded judges' verdicts
    (jury.inputs.judgments.JudgeRecord), measured in a section of their own.
    """
    out = ReferenceBuilder(seed, resamples)
    notes: list[str] = []
    adj_labels = labels.adjudication
    ref, ties = reference_labels(adj_labels, candidate_key, lambda lab: lab.credited, annotator)
    ref_cat = _reference_categories(adj_labels, ref, annotator)
    people = [a for a in labels.annotators("adjudication") if a != CONSENSUS]
    _check_annotator(labels, annotator)
    _annotators(out, adj_labels, people)

    items = _items(ref, ref_cat, evaluation, records, adjudications)
    matched_keys = {it.key for it in items}
    unmatched = _unmatched(ref, matched_keys) if (evaluation or adjudications) else []
    strict = _comparators(out, items, notes) if evaluation is not None else []
    panel = _jury(out, items, adjudications, evaluation is not None, notes) if adjudications else []
    judged = _judges(out, ref, ref_cat, adj_labels, records, items, judgments, notes) if judgments else {}
    sources = labels.sources("adjudication")
    anchors_apply = FLEX_AGREEMENT in sources
    if anchors_apply:
        flex = {candidate_key(lab) for lab in adj_labels if lab.source == FLEX_AGREEMENT}
        _anchors(out, flex, strict, panel, judged)
    elif adj_labels:
        notes.append(_anchors_do_not_apply(sources))
    if audits:
        _audits(out, labels.gold, audits, annotator, notes)
    elif labels.gold:
        notes.append("Gold labels were given but no --audit file: nothing to compare them with.")
    return CalibrationDocument(
        jury_version=__version__,
        reference=reference_description(annotator),
        sources=sources,
        annotators=labels.annotators("adjudication"),
        labelled=len(ref),
        ties=ties,
        matched=len(matched_keys),
        unmatched=unmatched,
        anchors_apply=anchors_apply,
        figures=out.figures,
        confusions=out.confusions,
        notes=notes,
    )


def _reference_categories(labels: Sequence[AdjudicationLabel], ref: Mapping[Any, Any], annotator: str | None) -> dict[Any, Any]:
    """The reference category of each candidate: chosen as its reference label is, from the
    labels that agree with that label, so it never contradicts it (two annotators' `correct`
    without a category and a third's `incorrect`, genuine_error, give no reference category)."""

    def agreeing(lab: AdjudicationLabel) -> str | None:
        key = candidate_key(lab)
        return lab.category if key in ref and lab.credited == ref[key] else None

    return reference_labels(labels, candidate_key, agreeing, annotator)[0]


def _check_annotator(labels: Labels, annotator: str | None) -> None:
    """An InputError when ``annotator`` (--annotator) labelled nothing in the label files."""
    if annotator is not None and annotator not in labels.annotators("adjudication") + labels.annotators("gold"):
        known = ", ".join(labels.annotators("adjudication") + labels.annotators("gold")) or "none"
        raise InputError(f"annotator {annotator!r} labelled nothing in the label files; annotators: {known}")


def _unmatched(ref: Mapping[Any, Any], matched_keys: set[Any]) -> list[str]:
    """The labelled candidates no input answer matched, as text."""
    return [f"question {k[0]!r}, {k[1]} {k[2]!r}" for k in ref if k not in matched_keys]


def _anchors_do_not_apply(sources: Sequence[str]) -> str:
    """The note when the labels are not FLEX's agreement set, where the anchors were measured."""
    return (
        f"The published anchors (FLEX {ANCHORS[0][1]}, execution match {ANCHORS[1][1]}) were measured on FLEX's "
        f"agreement set ({FLEX_AGREEMENT}); these labels come from {', '.join(sources)}: the anchors do not apply."
    )


def _annotators(out: ReferenceBuilder, labels: Sequence[AdjudicationLabel], people: list[str]) -> None:
    """Pairwise Cohen's kappa between annotators and Krippendorff's alpha over all of them."""
    if len(people) < 2:
        return
    ratings: dict[str, dict[Any, Any]] = {p: {} for p in people}
    categories: dict[str, dict[Any, Any]] = {p: {} for p in people}
    for lab in labels:
        if lab.annotator in ratings:
            ratings[lab.annotator][candidate_key(lab)] = credit_label(lab.credited)
            if lab.category is not None:
                categories[lab.annotator][candidate_key(lab)] = lab.category
    for pk in pairwise_kappas(ratings):
        common = [u for u in ratings[pk.a] if u in ratings[pk.b]]
        out.kappa(
            "annotators",
            f"{pk.a} ~ {pk.b}",
            "each other",
            "kappa",
            [ratings[pk.a][u] for u in common],
            [ratings[pk.b][u] for u in common],
        )
    for what, table in (("alpha", ratings), ("category_alpha", categories)):
        units = list(dict.fromkeys(u for p in people for u in table[p]))
        rated = [[table[p].get(u) for p in people] for u in units]
        pairable = sum(sum(r is not None for r in unit) >= 2 for unit in rated)
        if pairable:
            value = krippendorff_alpha(rated)
            out.add("annotators", "all annotators", "each other", what, value, pairable)


def _items(
    ref: Mapping[Any, Any],
    ref_cat: Mapping[Any, Any],
    evaluation: Evaluation | None,
    records: Sequence[Any],
    adjudications: Sequence[tuple[str | Path, Any]],
) -> list[Item]:
    """The labelled pairs: from the evaluation's pairs, else from the verdict files' records."""
    sql_of = {(r.model, r.question_id): r.sql for r in records}
    recorded = {(r.model, r.question_id) for r in records if r.recorded is not None}
    pairs: list[tuple[Any, ...]]
    if evaluation is not None:
        pairs = [(p.model, p.question_id, p.outcome, p.comparator_matches, (p.pred_key, p.gold_key)) for p in evaluation.pairs]
    else:
        pairs = [(r.model, r.question_id, None, None, (None, None)) for _, doc in adjudications for r in doc.records]
    items = []
    for model, qid, outcome, matches, keys in pairs:
        if outcome == Outcome.GOLD_ERROR:
            continue
        by_model = (qid, "model", model)
        key = by_model if by_model in ref else (qid, "sql", normalised_sql(sql_of.get((model, qid))))
        if key in ref:
            items.append(
                Item(model, qid, key, bool(ref[key]), ref_cat.get(key), outcome, (model, qid) in recorded, matches, keys)
            )
    return items


def _comparators(out: ReferenceBuilder, items: list[Item], notes: list[str]) -> list[tuple[Item, bool]]:
    """Each deciding comparator's agreement with the reference; returns strict's decisions."""
    recorded = sum(it.recorded_match for it in items)
    if recorded:
        notes.append(
            f"{recorded} labelled pairs have a recorded execution-match outcome (no result to compare): they count "
            f"for {' and '.join(RECORDED_COMPARATORS)} only."
        )
    decided: dict[str, list[tuple[Item, bool]]] = {}
    for name in DECIDING_COMPARATORS:
        mine = decided.setdefault(name, [])
        for it in items:
            if it.recorded_match and name not in RECORDED_COMPARATORS:
                continue
            value = False if it.outcome == Outcome.MISROUTED else (it.matches or {}).get(name)
            if value is not None:
                mine.append((it, bool(value)))
        out.agreement("comparator", str(name), "reference", [it.credited for it, _ in mine], [c for _, c in mine])
    return decided[Comparator.STRICT]


def _jury(
    out: ReferenceBuilder, items: list[Item], adjudications: Sequence[tuple[str | Path, Any]], evaluated: bool, notes: list[str]
) -> list[tuple[Item, bool]]:
    """Each juror's and the panel's agreement with the reference; returns the panel's decisions."""
    index = verdict_index(adjudications)
    # --review-passes: a sampled strict match keeps its credit unless the jury finds it a false pass
    reviews = {(r.model, r.question_id): r for _, doc in adjudications for r in doc.records if r.review_pass}
    jurors: dict[str, list[tuple[Item, str]]] = {}
    panel: list[tuple[Item, bool]] = []
    unjudged = unseen = reviewed = 0
    for it in items:
        rec = index.get((it.model, it.question_id))
        if rec is None and it.outcome == Outcome.MATCH and (it.model, it.question_id) in reviews:
            rec = reviews[(it.model, it.question_id)]
            reviewed += 1
        if rec is None:
            if it.outcome == Outcome.MATCH:
                panel.append((it, True))
                unseen += 1
            elif it.outcome == Outcome.MISMATCH:
                unjudged += 1
            elif it.outcome is not None:
                panel.append((it, False))
            continue
        if any(
            judged is not None and now is not None and judged != now
            for judged, now in zip((rec.answer_key, rec.gold_key), it.keys)
        ):
            raise InputError(
                f"model {it.model!r} question {it.question_id!r}: the verdict judged another answer, gold query or "
                "database than the runs given now; pass the runs the verdict file was made for"
            )
        panel.append((it, not rec.false_pass if rec.review_pass else rec.credited))
        for v in rec.votes:
            if not (v.abstained or v.skipped) and v.category in CATEGORIES:
                jurors.setdefault(v.juror, []).append((it, v.category))
    if reviewed:
        notes.append(
            f"{reviewed} labelled strict matches were reviewed by the jury (--review-passes): the panel credits them "
            "unless its majority found a genuine error (a false pass)."
        )
    if unseen:
        notes.append(
            f"{unseen} labelled pairs passed strict matching and the jury never saw them: the panel counts them as credited."
        )
    if unjudged:
        notes.append(
            f"{unjudged} labelled jury-eligible failures have no verdict in the given files: left out of the panel's figures."
        )
    if not evaluated:
        notes.append("Without --runs the panel's figures cover only the pairs the verdict files judged (all strict failures).")
    verdict_of = {(r.model, r.question_id): r.verdict for r in [*index.values(), *reviews.values()]}
    for juror, votes in jurors.items():
        _subject(out, "juror", f"juror {juror}", [(it, cat in CREDITED_VERDICTS, cat) for it, cat in votes])
    _subject(out, "panel", "panel", [(it, credited, verdict_of.get((it.model, it.question_id))) for it, credited in panel])
    return panel


def _subject(out: ReferenceBuilder, section: Section, subject: str, said: list[tuple[Item, bool, str | None]]) -> None:
    out.agreement(section, subject, "reference", [it.credited for it, _, _ in said], [c for _, c, _ in said])
    cats = [(it.category, cat) for it, _, cat in said if it.category is not None and cat in CATEGORIES]
    if cats:
        out.categories(section, subject, cats)
    failed = [(it.credited, c) for it, c, _ in said if it.outcome != Outcome.MATCH]
    out.prf(section, subject, "reference, strict failures", [t for t, _ in failed], [c for _, c in failed], "credited")


def _anchors(
    out: ReferenceBuilder,
    flex: set[Any],
    strict: list[tuple[Item, bool]],
    panel: list[tuple[Item, bool]],
    judged: dict[str, list[tuple[tuple[Any, ...], bool, bool]]],
) -> None:
    """The published kappas beside jury's own on the same items (FLEX's agreement set), and
    beside each recorded judge's."""
    for subject, value in ANCHORS:
        out.add("anchor", subject, f"{FLEX_AGREEMENT} consensus", "kappa", value, ANCHOR_ITEMS)
    said_by = {f"{Comparator.STRICT} (jury, same items)": [(it.key, it.credited, c) for it, c in strict]}
    said_by["panel (jury, same items)"] = [(it.key, it.credited, c) for it, c in panel]
    for judge, said in judged.items():
        said_by[f"judge {judge} (recorded, same items)"] = said
    for subject, triples in said_by.items():
        mine = [(truth, c) for key, truth, c in triples if key in flex]
        if mine:
            out.kappa(
                "anchor",
                subject,
                f"{FLEX_AGREEMENT} reference",
                "kappa",
                [credit_label(t) for t, _ in mine],
                [credit_label(c) for _, c in mine],
            )


def _pooled(out: ReferenceBuilder, judgments: Sequence[Any], judged: dict[str, list[tuple[tuple[Any, ...], bool, bool]]]) -> None:
    """Judges a source reports pooled (their judgments' ``pooled_as``: FLEX's judge with and
    without execution results) get one more subject, ``judge NAME (pooled with B)``, over the
    union of their items, beside each judge's own figures; it joins ``judged`` (the anchors)."""
    pools: dict[str, list[str]] = {}
    for j in judgments:
        group = pools.setdefault(j.pooled_as or j.judge, [])
        if j.judge not in group:
            group.append(j.judge)
    for name, members in pools.items():
        if len(members) < 2:
            continue
        rows = [row for m in members for row in judged.get(m, [])]
        others = [m for m in members if m != name] if name in members else members
        subject = f"{name} (pooled with {', '.join(others)})" if name in members else f"{name} (pooled: {', '.join(others)})"
        out.agreement("judge", f"judge {subject}", "reference", [t for _, t, _ in rows], [c for _, _, c in rows])
        judged[subject] = rows


def _judges(
    out: ReferenceBuilder,
    ref: Mapping[Any, Any],
    ref_cat: Mapping[Any, Any],
    labels: Sequence[AdjudicationLabel],
    records: Sequence[Any],
    items: list[Item],
    judgments: Sequence[Any],
    notes: list[str],
) -> dict[str, list[tuple[tuple[Any, ...], bool, bool]]]:
    """Each recorded judge's agreement with the reference, in a section of its own (a judge is
    never an annotator): accuracy, kappa, confusion, categories, precision/recall of
    'credited' on strict failures (when the runs give each pair's outcome) and, where the
    judgments say where the candidate was shown, position bias. Returns, per judge, its
    (reference key, reference, credited) triples."""
    # a judgment naming its candidate by SQL finds the label of that SQL, or of the run's model that wrote it
    by_sql = {(r.question_id, normalised_sql(r.sql)): (r.question_id, "model", r.model) for r in records if r.sql is not None}
    by_sql |= {(lab.question_id, normalised_sql(lab.sql)): candidate_key(lab) for lab in labels if lab.sql is not None}
    item_of = {it.key: it for it in items}
    judged: dict[str, list[tuple[tuple[Any, ...], bool, bool]]] = {}
    unmatched: dict[str, int] = {}
    for judge in dict.fromkeys(j.judge for j in judgments):
        rows: list[tuple[Item | None, tuple[Any, ...], bool, str | None, Any]] = []
        for j in (j for j in judgments if j.judge == judge):
            key: tuple[Any, ...] | None = (j.question_id, "model", j.model) if j.model is not None else None
            if key not in ref:
                key = (j.question_id, "sql", normalised_sql(j.sql))
                key = key if key in ref else by_sql.get((j.question_id, normalised_sql(j.sql)))
            if key is None or key not in ref:
                unmatched[judge] = unmatched.get(judge, 0) + 1
                continue
            rows.append((item_of.get(key), key, j.credited, j.category, j.candidate_position))
        judged[judge] = [(key, bool(ref[key]), credited) for _, key, credited, _, _ in rows]
        subject = f"judge {judge}"
        out.agreement("judge", subject, "reference", [bool(ref[k]) for _, k, _, _, _ in rows], [c for _, _, c, _, _ in rows])
        cats = [(ref_cat[k], cat) for _, k, _, cat, _ in rows if ref_cat.get(k) is not None and cat in CATEGORIES]
        if cats:
            out.categories("judge", subject, cats)
        outcomes = [(it, k, c) for it, k, c, _, _ in rows if it is not None and it.outcome is not None]
        if outcomes:
            failed = [(bool(ref[k]), c) for it, k, c in outcomes if it.outcome != Outcome.MATCH]
            out.prf("judge", subject, "reference, strict failures", [t for t, _ in failed], [c for _, c in failed], "credited")
        # A single-answer pick: the candidate alone right (gold_defect) or the gold alone (genuine_error).
        picks = [
            (pos == 1) == (cat == Verdict.GOLD_DEFECT)
            for _, _, _, cat, pos in rows
            if pos is not None and cat in (Verdict.GOLD_DEFECT, Verdict.GENUINE_ERROR)
        ]
        if picks:
            bias = position_bias(sum(picks), len(picks))
            out.add(
                "judge", subject, "first-shown answer", "first_pick_share", bias["share"], bias["n"], bias["low"], bias["high"]
            )
            out.add("judge", subject, "first-shown answer", "first_pick_p", bias["p_value"], bias["n"])
    _pooled(out, judgments, judged)
    for judge, n in unmatched.items():
        notes.append(f"{n} judgments of {judge} name a candidate no labelled candidate matches: left out of its figures.")
    if not items:
        notes.append("Without --runs the recorded judges' precision and recall on strict failures are not computed.")
    return judged


def _audits(
    out: ReferenceBuilder,
    gold_labels: Sequence[GoldLabel],
    audits: Sequence[tuple[str | Path, Any]],
    annotator: str | None,
    notes: list[str],
) -> None:
    """Precision/recall/F1 of the panel's flags and each juror's 'defective' votes against each
    label source and against their union (defective if any source says so)."""
    by_source: dict[str, dict[Any, Any]] = {}
    for source in dict.fromkeys(lab.source for lab in gold_labels):
        mine = [lab for lab in gold_labels if lab.source == source]
        ref, ties = reference_labels(mine, lambda lab: lab.question_id, lambda lab: lab.gold_defective, annotator)
        by_source[source] = ref
        if ties:
            notes.append(f"Gold labels of {source}: {ties} questions left out (annotators split evenly).")
    union: dict[Any, Any] = {}
    for ref in by_source.values():
        for q, defective in ref.items():
            union[q] = union.get(q, False) or bool(defective)
    references = {**by_source, "union of sources": union} if len(by_source) > 1 else by_source
    for path, doc in audits:
        suffix = f" [{Path(path).name}]" if len(audits) > 1 else ""
        said: dict[str, dict[Any, Any]] = {f"panel{suffix}": {r.question_id: r.flagged for r in doc.records if r.decided}}
        for r in doc.records:
            for v in r.votes:
                if not (v.abstained or v.skipped) and v.category is not None:
                    said.setdefault(f"juror {v.juror}{suffix}", {})[r.question_id] = v.category == AuditVote.DEFECTIVE
        for subject, flags in said.items():
            section: Section = "audit"
            for name, ref in references.items():
                common = [q for q in flags if q in ref]
                out.prf(section, subject, name, [bool(ref[q]) for q in common], [flags[q] for q in common], "flagged")
