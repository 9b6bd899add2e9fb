"""The shape of `jury report --format json`: pydantic models and their JSON Schema.

``jury.results.report.build.build_report`` returns a ``ReportDocument``; ``ReportDocument.model_dump(mode="json")``
is exactly what ``--format json`` writes (the fields are declared in output order), and
``ReportDocument.model_validate_json(text)`` reads one back. ``verdicts/schema/report-v1.schema.json``
is generated from ``ReportDocument`` by ``write_report_schema`` (a test checks it is current).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from jury.inputs.records import QuestionId
from jury.inputs.writer import write_output
from jury.results.columns import Proportion
from jury.results.corrected import Corrected, PeopleAnchored
from jury.verdicts.documents import OmitUnused, Provenance, dumps_pretty

REPORT_FORMAT_VERSION = 1
REPORT_SCHEMA_FILENAME = f"report-v{REPORT_FORMAT_VERSION}.schema.json"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PassReview(_Model):
    """--review-passes: a model's sampled strict matches the jury judged, and the false passes."""

    sampled: int = Field(ge=0, description="Strict matches sent to the jury.")
    decided: int = Field(ge=0, description="Those with a verdict (not no_majority or undecided).")
    false_passes: int = Field(ge=0, description="Decided reviews the majority judged a genuine error.")
    matches: int = Field(ge=0, description="The model's strict matches the sample was drawn from.")
    false_pass_rate: Proportion = Field(description="false_passes / decided, Wilson 95%.")


class TwoSided(_Model):
    """The adjudicated column with false passes estimated from the review sample and taken off
    (the estimator is in jury.results.columns.two_sided and the README)."""

    value: float
    low: float
    high: float
    n: int = Field(ge=0)
    estimated_false_passes: float = Field(ge=0)


class Correlation(_Model):
    """A correlation across models. r is null when fewer than 3 models have both values or
    one side is constant; Spearman's CI is a seeded percentile bootstrap of the resamples
    where rho is defined (null when fewer than 90% are), Pearson's the Fisher-z interval
    (n >= 4)."""

    method: Literal["spearman", "pearson"]
    r: float | None
    p_value: float | None
    n: int = Field(ge=0, description="Models with both values.")
    ci_low: float | None
    ci_high: float | None
    resamples: int | None = Field(None, ge=0, description="Spearman: bootstrap resamples drawn; Pearson: null.")
    degenerate_resamples: int | None = Field(
        None, ge=0, description="Spearman: resamples left out of the CI because rho is undefined on them (a constant side)."
    )


class StrengthCorrelation(Correlation):
    """Spearman of the gold-defect share against one column's accuracy."""

    strength: Literal["adjudicated", "strict", "gold_clean"] = Field(description="The column correlated with.")


class Normalize(_Model):
    casefold: bool
    float_sig_digits: int | None


class ReportSettings(_Model):
    comparator: str = Field(description="Comparator deciding a strict match.")
    near_miss_threshold: float
    timeout_s: float
    row_cap: int
    normalize: Normalize
    strength: Literal["adjudicated", "strict", "gold_clean"] = Field(
        description="Column the gold-defect share is correlated with."
    )
    control: str | None = Field(description="The negative-control model, if any.")
    missing: Literal["exclude", "fail"] | None = Field(
        None,
        description="What a gold question without a usable answer (absent, not a string, empty) counted as: left out "
        "of its model's denominators (exclude) or a wrong answer (fail, BIRD's rule); null in older reports.",
    )
    gold_errors: Literal["exclude", "fail"] | None = Field(
        None,
        description="What a question whose gold query fails counted as: left out of every denominator (exclude) or "
        "a wrong answer for every model (fail, BIRD's rule); null in older reports (which left them out).",
    )


class VerdictFileRef(_Model):
    """A locked verdict file the report read."""

    kind: Literal["audit", "adjudication"]
    path: str | None = Field(description="Adjudication files: as given; audits: null.")
    content_sha256: str | None = Field(description="The file's lock.")
    panel: str | None = Field(None, description="The name of the panel that wrote it.")


class Composition(_Model):
    """Counts of a model's jury-reached misses by verdict (no_majority also counts undecided)."""

    gold_defect: int = Field(ge=0)
    format_equivalence: int = Field(ge=0)
    genuine_error: int = Field(ge=0)
    ambiguous: int = Field(ge=0)
    no_majority: int = Field(ge=0)


class CompositionShares(_Model):
    """Composition counts / jury_reached (null when nothing reached the jury)."""

    gold_defect: float | None
    format_equivalence: float | None
    genuine_error: float | None
    ambiguous: float | None
    no_majority: float | None


class ModelRank(_Model):
    """One model's rank in one column: the report's point rank, the 95% percentile interval of
    its bootstrap ranks and the probability of each rank (jury.results.ranks)."""

    model: str
    rank: int | None = Field(description="The report's rank (1 = best, ties share the best rank).")
    low: int | None = Field(description="2.5th percentile of the bootstrap ranks (inverted CDF: a rank some resample gave).")
    high: int | None = Field(description="97.5th percentile of the bootstrap ranks.")
    probabilities: list[float] = Field(description="Index r-1: the share of resamples ranking the model r-th.")
    undefined_resamples: int = Field(ge=0, description="Resamples holding none of the model's questions (left out).")


class _JuryColumn(_Model):
    """A column's expected value under a latent-class fit and its questions + jury interval."""

    expected: float | None = Field(description="The latent-class model's expected value on these questions; null when n = 0.")
    low: float | None = Field(description="Questions + jury: 2.5th percentile of the bootstrap.")
    high: float | None = Field(description="97.5th percentile.")
    degenerate_resamples: int = Field(ge=0, description="Resamples holding none of the model's questions (left out).")


class AdjudicatedJury(_JuryColumn):
    """The adjudicated column with the jury's uncertainty (jury.results.report.latent): the
    latent-class model's expected value and the questions + jury interval."""

    expected: float | None = Field(
        description="(strict matches + the sum of P(credited) over the model's jury records) / n, P(credited) from the "
        "latent-class posterior (the published verdict where its file's fit was refused); null when n = 0."
    )
    low: float | None = Field(description="Questions + jury: 2.5th percentile of the bootstrap (null when refused).")
    expected_credit_changes: float = Field(
        ge=0,
        description="Expected number of its jury records whose credit is not the published rule's: sum |credited - P(credited)|.",
    )
    records_fitted: int = Field(ge=0, description="Its jury records whose verdict file was fitted.")
    records_published: int = Field(
        ge=0, description="Its jury records whose file's fit was refused: their published verdicts are taken as certain."
    )
    rank: ModelRank | None = Field(
        None,
        description="Its adjudicated rank under the same questions + jury resamples (rank: the report's adjudicated "
        "rank; low, high and probabilities from the resamples); null in older reports.",
    )


class GoldCleanJury(_JuryColumn):
    """The gold-clean column with the jury's uncertainty (jury.results.report.audit_fit): the
    latent-class model's expected value and the questions + jury interval."""

    expected: float | None = Field(
        description="Its matches weighted by P(valid) over its included questions weighted the same, P(valid) from the "
        "audits' latent-class posteriors (the published flag where a file's fit was refused); null when n = 0."
    )
    expected_flag_changes: float = Field(
        ge=0,
        description="Expected number of its included questions whose flag is not the published one: sum |flagged - P(defective)|.",
    )
    questions_fitted: int = Field(ge=0, description="Its included questions an audit file whose fit was not refused audits.")
    questions_published: int = Field(
        ge=0,
        description="Its included audited questions whose files' fits were all refused: their published flags are taken as certain.",
    )
    rank: ModelRank = Field(
        description="Its gold-clean rank under the same resamples (rank: the report's gold-clean rank; low, high and "
        "probabilities from the resamples)."
    )


class ModelRow(OmitUnused):
    """One model (run order). Ranks: 1 = best, ties share the best rank."""

    _OPTIONAL = ("gold_clean_jury", "adjudicated_jury", "adjudicated_people")  # only with audits / adjudications / a review

    model: str
    families: list[str]
    questions: int = Field(
        ge=0, description="Run records (with --missing fail, also a missing answer per gold question without one)."
    )
    gold_questions: int | None = Field(None, ge=0, description="The gold file's questions; null in older reports.")
    answered: int | None = Field(
        None, ge=0, description="Gold questions the model's run answers with SQL (its coverage: answered / gold_questions)."
    )
    left_out: dict[str, int] | None = Field(
        None,
        description="Gold questions without a usable answer left out of the denominators (--missing exclude), by cause: "
        "absent, not_string, empty; null in older reports.",
    )
    counted_wrong: dict[str, int] | None = Field(
        None,
        description="Gold questions without a usable answer counted as wrong `missing` answers (--missing fail), by "
        "cause: absent, not_string, empty; null in older reports.",
    )
    routed: int = Field(ge=0, description="Questions routed to the gold's database (gold errors left out).")
    routing_accuracy: float | None
    strict: Proportion = Field(description="The chosen comparator's execution match over routed questions.")
    strict_rank: int | None
    gold_clean: Proportion | None = Field(description="Strict without the audit's flagged questions; null without --audit.")
    gold_clean_rank: int | None
    adjudicated: Proportion | None = Field(
        description="Strict matches plus the jury's credited verdicts; null without --verdicts."
    )
    adjudicated_rank: int | None
    rank_shift: str = Field(description='Strict -> adjudicated, e.g. "33rd → 17th"; "—" without verdicts.')
    rank_delta: int | None = Field(description="Strict rank - adjudicated rank (positive = moved up).")
    composition: Composition
    composition_pct: CompositionShares
    jury_reached: int = Field(ge=0)
    near_miss: int = Field(ge=0)
    not_executed: int = Field(ge=0, description="error + timeout + missing.")
    execution_errors: Proportion | None = Field(
        None,
        description="Spider 2.0-AIFunc's execution-error rate: routed answers that fail or time out, over routed "
        "questions (jury.results.aifunc_columns); null in older reports.",
    )
    gold_defect_share: float | None = Field(description="gold_defect / jury_reached.")
    adjudication_cost_usd: float | None = Field(
        description="summary.cost_by_model of the adjudication files, summed; null when a juror litellm could not "
        "price judged the model (unknown, never $0)."
    )
    adjudication_unpriced_models: list[str] = Field(description="Those unpriced juror models.")
    challenging_share: float | None = Field(
        description='Share of routed questions with a known difficulty that are "challenging".'
    )
    mean_difficulty: float | None = Field(description="simple = 1, moderate = 2, challenging = 3; unknown skipped.")
    pass_review: PassReview | None = Field(None, description="--review-passes only: the review of its strict matches.")
    two_sided_adjudicated: TwoSided | None = Field(None, description="--review-passes only: adjudicated minus false passes.")
    gold_clean_jury: GoldCleanJury | None = Field(
        None,
        description="With audit files only (absent otherwise): the expected gold-clean value and its questions + jury "
        "interval (see audit_uncertainty).",
    )
    adjudicated_jury: AdjudicatedJury | None = Field(
        None,
        description="With adjudication files only (absent otherwise): the expected adjudicated value and its questions + "
        "jury interval (see adjudication_uncertainty).",
    )
    adjudicated_people: PeopleAnchored | None = Field(
        None,
        description="With a review sample of adjudication records only (absent otherwise): the adjudicated accuracy "
        "with the panel's credit corrected by the reviewers, its interval over questions and the sample (the headline "
        "interval when present).",
    )


class Correlations(_Model):
    gold_defect_share_vs_strength: StrengthCorrelation = Field(description="Spearman, across models with both values.")
    routing_vs_challenging_share: Correlation = Field(description="Pearson.")
    routing_vs_mean_difficulty: Correlation = Field(description="Pearson.")


class FamilyShare(_Model):
    """Format-equivalent share of a family's jury-reached misses (a model counts in each of its families)."""

    jury_reached: int = Field(ge=0)
    format_equivalence: int = Field(ge=0)
    share: float | None


class Control(_Model):
    """The negative control: its strict -> adjudicated lift and its gap to the row above it."""

    model: str
    strict: float | None
    adjudicated: float | None
    lift: float | None = Field(description="adjudicated - strict.")
    next_model: str | None = Field(description="Ranked just above it by adjudicated accuracy; null if it is the top row.")
    next_adjudicated: float | None
    gap_to_next: float | None = Field(description="next_adjudicated - adjudicated.")


class OracleRow(_Model):
    model: str
    strict: Proportion
    strict_rank: int | None
    gold_clean: Proportion | None
    gold_clean_rank: int | None
    adjudicated: Proportion | None
    adjudicated_rank: int | None


class Oracle(_Model):
    """The three columns on the questions every model routed correctly (one denominator)."""

    questions: int = Field(ge=0, description="Routed correctly by every model, gold not failing.")
    models: list[OracleRow]


class GoldError(_Model):
    question_id: QuestionId
    error: str


class JurorPairKappa(_Model):
    """Cohen's kappa between two jurors over the n records both rated (null when undefined)."""

    a: str
    b: str
    kappa: float | None
    n: int = Field(ge=0)


class PositionBias(_Model):
    """Of n decisive single-answer ballots (answer_1 or answer_2), k picked the answer shown first:
    share with its Wilson 95% interval and the two-sided binomial test against 0.5 (null when n = 0)."""

    k: int = Field(ge=0)
    n: int = Field(ge=0)
    share: float | None
    low: float | None
    high: float | None
    p_value: float | None


class PositionBiasSet(_Model):
    panel: PositionBias = Field(description="Every juror's ballots together.")
    jurors: dict[str, PositionBias] = Field(description="Juror -> its position bias, in panel order.")


class Agreement(_Model):
    """Inter-juror agreement and position bias of one verdict file, computed from its records
    (jury.judging.agreement), never read from its summary."""

    kind: Literal["audit", "adjudication"]
    path: str | None = Field(description="As in verdict_files.")
    content_sha256: str | None = Field(description="The file's lock.")
    style: Literal["blind", "labelled", "audit"] = Field(description="The panel's ballot style.")
    units: int = Field(ge=0, description="Records (the units rated).")
    alpha_units: int = Field(ge=0, description="Records with at least two effective ratings (the ones alpha pairs).")
    krippendorff_alpha: float | None = Field(
        description="Nominal Krippendorff's alpha; abstained, skipped and inconsistent votes are missing ratings. "
        "Null when nothing can be paired or only one category occurs."
    )
    pairwise_kappa: list[JurorPairKappa]
    inconsistent: dict[str, int] = Field(description="Juror -> votes that abstained because the two orders disagreed (--swap).")
    position_bias: PositionBiasSet | None = Field(description="Blind ballots only; null for labelled ballots and audits.")
    position_bias_note: str | None = Field(description="Why position_bias is null.")


class ErrorCategories(_Model):
    """--taxonomy adjudication files: per model, its genuine-error verdicts by error category
    (jury.results.report.taxonomy.category_counts)."""

    taxonomy: str = Field(description="The taxonomy's name (settings.taxonomy of the adjudication files).")
    categories: list[str] = Field(description="Its category ids, in its order.")
    models: dict[str, dict[str, int]] = Field(
        description='Model -> category id (and "no majority": a genuine error without a majority pick) -> failures.'
    )


class RankStability(_Model):
    """A seeded bootstrap over questions: how far each model's rank moves when the questions do
    (jury.results.ranks; resample b draws numpy.random.default_rng([seed, b]).integers(0, Q, Q))."""

    method: str
    resamples: int = Field(ge=1)
    seed: int
    confidence: float
    questions: int = Field(ge=0, description="Questions resampled (gold errors left out), Q.")
    columns: dict[str, list[ModelRank]] = Field(description="Column -> one entry per model, in run order.")


class JurorFit(_Model):
    """One juror's error rates in a latent-class fit."""

    juror: str
    votes: int = Field(ge=0, description="Its votes the fit used (abstained, skipped and inconsistent left out).")
    accuracy: float = Field(
        description="sum_c priors[c] * confusion[c][c]: P(its vote is right) on a record drawn from the priors."
    )
    confusion: list[list[float]] = Field(description="confusion[c][l] = P(it votes classes[l] | the true class is classes[c]).")


class LatentVote(_Model):
    juror: str
    category: str | None = Field(description="Its effective category; null when abstained, skipped or inconsistent.")


class LatentDiffers(_Model):
    """A record whose latent-class (MAP) verdict is not the published one."""

    model: str
    question_id: QuestionId
    published: str = Field(description="The published verdict (majority rule), no_majority and undecided included.")
    latent: str = Field(description="The latent-class model's most probable class.")
    posterior: dict[str, float] = Field(description="Class -> its posterior probability.")
    votes: list[LatentVote]


class JurorPairAgreement(_Model):
    """One pair of jurors with common records: observed against model-implied agreement."""

    jurors: list[str] = Field(description="The two jurors.")
    common: int = Field(ge=1, description="Records both cast a counted vote on.")
    observed: float = Field(description="Share of the common records where their (first counted) votes are equal.")
    expected: float = Field(
        description="The agreement the fit implies: sum_c priors[c] * sum_v confusion_a[c][v] * confusion_b[c][v]."
    )
    excess: float = Field(description="observed - expected.")
    z: float | None = Field(
        description="The excess over sqrt(expected * (1 - expected) / common); null below min_common common records."
    )


class JurorDependence(_Model):
    """Do the jurors err independently? (jury.stats.dependence.dependence_check)"""

    resamples: int = Field(ge=1, description="Parametric-bootstrap resamples (refits of simulated votes).")
    seed: int
    min_common: int = Field(description="The fewest common records a pair needs to enter the statistic.")
    alpha: float = Field(description="Below this p-value the report says the jurors err together.")
    statistic: float | None = Field(description="The largest z over the pairs; null when no pair has min_common records.")
    p_value: float | None = Field(description="(1 + resampled statistics >= it) / (1 + resamples).")
    largest: list[str] | None = Field(description="The pair whose z is the statistic.")
    pairs: list[JurorPairAgreement]


class PeopleDependence(_Model):
    """Do the jurors err together on the records people labelled? (jury.stats.dependence.people_check)"""

    records: int = Field(ge=0, description="Records people labelled (--review) with two counted votes or more.")
    observed: int = Field(ge=0, description="Pairs of jurors that agreed on a wrong answer (people's class), summed.")
    expected: float = Field(
        description="The sum the fit implies under independence, given each record's class and majority-rule verdict."
    )
    p_value: float | None = Field(description="Exact one-sided P(sum >= observed) under independence; null without records.")
    alpha: float = Field(description="Below this p-value the report says the jurors err together.")


class LatentClassFile(_Model):
    """The Dawid-Skene fit of one adjudication file (jury.stats.latent.dawid_skene, smoothing 0.01)."""

    path: str
    content_sha256: str | None
    records: int = Field(ge=0, description="Its records (reviewed strict matches left out).")
    fitted: bool
    refused: str | None = Field(description="Why the fit was refused (its published verdicts are then kept as certain).")
    draws: Literal["joint", "plug-in"] | None = Field(
        description="How the bootstrap drew its verdicts: joint Gibbs draws of classes and parameters (a small file) or "
        "independent draws from the fitted posteriors; null when refused."
    )
    classes: list[str] = Field(description="The classes, in the order of priors and confusion rows and columns.")
    anchors: int = Field(
        0,
        ge=0,
        description="Records whose class people gave (--review): clamped in the fit and in every draw (0 when refused "
        "or in older reports).",
    )
    priors: list[float] | None
    iterations: int | None
    converged: bool | None
    jurors: list[JurorFit]
    expected_changes: float | None = Field(
        description="Expected number of records whose true class is not the published verdict (a record without one counts 1)."
    )
    expected_credit_changes: float | None = Field(None, description="Expected number whose credit is not the published rule's.")
    without_verdict: int | None = Field(None, ge=0, description="Records the published rule left without a verdict.")
    differs: list[LatentDiffers] = Field(default=[], description="Records whose latent-class verdict is not the published one.")
    dependence: JurorDependence | None = Field(
        None, description="The check that the jurors err independently given the class, the interval's assumption."
    )
    people_dependence: PeopleDependence | None = Field(
        None,
        description="The same assumption checked on the records people labelled (--review): it sees a mistake the "
        "whole panel shares, which the votes alone cannot; null without labelled records.",
    )


class _JuryBootstrap(_Model):
    """The settings of a questions + jury bootstrap (jury.stats.uncertainty.jury_bootstrap) and its fits."""

    method: str
    resamples: int = Field(ge=1)
    seed: int
    confidence: float
    joint_below: int = Field(
        description="An adjudication file with fewer records (audit files with fewer records together) gets joint "
        "parameter draws (jury.stats.latent.sample_classes)."
    )
    min_records: int = Field(description="A fit needs at least this many records with two votes or more, and two jurors.")


class AdjudicationUncertainty(_JuryBootstrap):
    """The questions + jury bootstrap (jury.stats.uncertainty.jury_bootstrap) and the fits behind it."""

    dependence_method: str | None = Field(None, description="How each file's jurors' dependence check is computed.")
    files: list[LatentClassFile] = Field(description="One per adjudication file, in verdict_files' order.")


class AuditDiffers(_Model):
    """A gold query whose latent-class (MAP) flag is not the published one."""

    question_id: QuestionId
    published: str = Field(description="The published flag's class: defective when flagged, else valid.")
    decided: bool = Field(description="False when abstentions left the published rule without a majority either way.")
    latent: str = Field(description="The latent-class model's most probable class.")
    posterior: dict[str, float] = Field(description="Class -> its posterior probability.")
    votes: list[LatentVote]


class AuditClassFile(_Model):
    """The Dawid-Skene fit of one audit file (jury.stats.latent.dawid_skene, smoothing 0.01, two classes)."""

    path: str | None
    content_sha256: str | None
    records: int = Field(ge=0, description="Its records (gold queries).")
    fitted: bool
    refused: str | None = Field(description="Why the fit was refused (its published flags are then kept as certain).")
    classes: list[str] = Field(description="The classes, in the order of priors and confusion rows and columns.")
    priors: list[float] | None
    iterations: int | None
    converged: bool | None
    jurors: list[JurorFit]
    expected_changes: float | None = Field(
        description="Expected number of its gold queries whose true class is not the published flag's."
    )
    differs: list[AuditDiffers] = Field(default=[], description="Gold queries whose latent-class flag is not the published one.")
    dependence: JurorDependence | None = Field(
        None, description="The check that the jurors err independently given the class, the interval's assumption."
    )


class AuditUncertainty(_JuryBootstrap):
    """The gold-clean column's questions + jury bootstrap (jury.stats.uncertainty.jury_bootstrap) and the fits behind it."""

    dependence_method: str = Field(description="How each file's jurors' dependence check is computed.")
    draws: Literal["joint", "plug-in"] = Field(
        description="How the bootstrap drew the flags: joint Gibbs draws of classes and parameters or independent draws "
        "from the fitted posteriors."
    )
    files: list[AuditClassFile] = Field(description="One per audit file, in verdict_files' order.")


class JurorRetest(_Model):
    """One juror's agreement with itself across the repeats of a panel (jury.stats.repeats.juror_retest)."""

    juror: str
    items: int = Field(ge=0, description="Records it answered in at least two repeats.")
    agreement: float | None = Field(description="Over those records, the share of pairs of its answers that agree.")
    kappa: float | None = Field(description="R = 2: Cohen's kappa between the repeats; R > 2: Fleiss' kappa across them.")
    low: float | None = Field(description="R = 2: the kappa's bootstrap interval (null for R > 2 or when undefined).")
    high: float | None


class RepeatRecord(_Model):
    """A record whose verdict is not the same in every repeat."""

    model: str
    question_id: int | str


class RepeatColumn(_Model):
    """A model's adjudicated accuracy with each repeat's verdicts, and their spread."""

    model: str
    values: list[float | None] = Field(description="One per repeat, repeat 0 (the published column) first.")
    mean: float | None
    sd: float | None = Field(description="Sample standard deviation over the repeats (ddof 1).")
    low: float | None = Field(description="The smallest value.")
    high: float | None = Field(description="The largest value.")


class RepeatFile(_Model):
    """One adjudication file asked R >= 2 times (jury adjudicate --repeats)."""

    path: str
    content_sha256: str | None
    repeats: int = Field(ge=2)
    records: int = Field(ge=0, description="Its records (reviewed strict matches left out).")
    jurors: list[JurorRetest]
    verdicts_changed: Proportion = Field(
        description="Records (with votes in every repeat) whose verdict, each repeat's votes alone under the "
        "adjudication rule, is not the same in every repeat; Wilson 95% interval."
    )
    changed: list[RepeatRecord] = Field(description="Those records.")
    column: list[RepeatColumn] = Field(description="Per model judged in the file: the adjudicated column over the repeats.")


class RepeatSpread(_Model):
    """One number per repeat, and their spread."""

    values: list[float | None] = Field(description="One per repeat, repeat 0 (the published one) first.")
    mean: float | None
    sd: float | None = Field(description="Sample standard deviation over the repeats (ddof 1).")
    low: float | None = Field(description="The smallest value.")
    high: float | None = Field(description="The largest value.")


class AuditRepeatColumn(RepeatSpread):
    """A model's gold-clean accuracy with each repeat's flags, and their spread."""

    model: str


class AuditRepeatFile(_Model):
    """One audit file asked R >= 2 times (jury audit-gold --repeats)."""

    path: str
    content_sha256: str | None
    repeats: int = Field(ge=2)
    records: int = Field(ge=0, description="Its records (gold queries).")
    jurors: list[JurorRetest] = Field(description="Each juror's test-retest agreement on its flag votes (defective / valid).")
    flags_changed: Proportion = Field(
        description="Gold queries (with votes in every repeat) whose flag, each repeat's votes alone under the file's "
        "quorum, is not the same in every repeat; Wilson 95% interval."
    )
    changed: list[int | str] = Field(description="Those gold queries' question ids.")
    flag_rate: RepeatSpread = Field(description="The share of the gold queries flagged in each repeat.")
    column: list[AuditRepeatColumn] = Field(
        description="Per model of the runs: the gold-clean column with each repeat's flags (other audit files' published "
        "flags), and its spread."
    )


class RepeatStability(OmitUnused):
    """Test-retest of repeated panels (jury.results.report.repeats)."""

    _OPTIONAL = ("audits",)  # written only when present: reports without them are as before

    method: str
    resamples: int = Field(ge=1, description="Bootstrap resamples of the R = 2 kappa intervals.")
    seed: int
    confidence: float
    files: list[RepeatFile] = Field(description="One per adjudication file with R >= 2, in verdict_files' order.")
    audits: list[AuditRepeatFile] | None = Field(
        None, description="One per audit file with R >= 2 (jury audit-gold --repeats; absent when there is none)."
    )


class JurorShare(_Model):
    """Of n counted votes of one juror shown in one order, how many credited the answer
    (gold_defect or format_equivalence), with the Wilson 95% interval (null when n = 0)."""

    credited: int = Field(ge=0)
    n: int = Field(ge=0)
    share: float | None
    low: float | None
    high: float | None


class JurorPosition(_Model):
    """A juror's votes by the order the answers were shown, and Fisher's exact test of equal shares."""

    gold_first: JurorShare
    candidate_first: JurorShare
    p_value: float | None = Field(description="Fisher's exact test, two-sided; null when an order has no counted vote.")


class JurorWithJuror(_Model):
    """One juror's agreement with another over the records both have a counted vote on."""

    juror: str
    common: int = Field(ge=0)
    agreed: int = Field(ge=0)
    share: float | None = Field(description="agreed / common; null when common = 0.")
    kappa: float | None = Field(description="Cohen's kappa; null when undefined.")


class JurorWithPeople(_Model):
    """One juror's agreement with the reviewers' settled category (--review) on the records it voted on."""

    reviewed: int = Field(ge=0)
    agreed: int = Field(ge=0)
    share: float | None
    kappa: float | None


class JurorEntry(_Model):
    """One juror of one adjudication or audit file (jury.results.report.jurors)."""

    juror: str
    family: str
    model: str = Field(description="Its litellm model string.")
    records: int = Field(ge=0, description="Records it has a vote on (reviewed strict matches left out).")
    voted: int = Field(ge=0, description="Those whose vote counts (not abstained, skipped or inconsistent).")
    votes: dict[str, int] = Field(description="Counted votes by category.")
    accuracy: float | None = Field(description="Latent-class accuracy (adjudication_uncertainty); null when the fit was refused.")
    confusion: list[list[float]] | None = Field(description="Latent-class confusion matrix: true class rows, its vote columns.")
    agreement: list[JurorWithJuror] = Field(description="With every other juror of the file.")
    people: JurorWithPeople | None = Field(
        description="With people (--review); null without a review file, and for an audit file's juror."
    )
    position: JurorPosition | None = Field(description="Null for an audit file's juror: its ballot shows one query.")


class JurorFile(_Model):
    """The jurors of one adjudication or audit file: what the site's juror pages show."""

    kind: Literal["adjudication", "audit"]
    path: str
    content_sha256: str | None
    records: int = Field(ge=0, description="Its records (reviewed strict matches left out).")
    classes: list[str] = Field(description="The order of the confusion matrices' rows and columns.")
    refused: str | None = Field(description="Why the latent-class fit was refused.")
    people: bool = Field(description="Whether a review file gave people's decisions.")
    jurors: list[JurorEntry]


class ReportDocument(OmitUnused):
    """`jury report --format json` (see docs/report.md)."""

    _OPTIONAL = (
        "error_categories",
        "rank_stability",
        "corrected",
        "adjudication_uncertainty",
        "audit_uncertainty",
        "repeat_stability",
        "jurors",
    )  # written only when present: reports without them are as before

    jury_version: str
    provenance: Provenance = Field(description="jury and litellm versions and jury's git revision (jury.version.provenance).")
    settings: ReportSettings
    verdict_files: list[VerdictFileRef]
    models: list[ModelRow]
    correlations: Correlations
    families: dict[str, FamilyShare] = Field(description="Family -> its format-equivalent share, sorted by family.")
    control: Control | None
    oracle_routing: Oracle
    gold_errors: list[GoldError] = Field(
        description="Gold queries that fail: left out of every denominator, or wrong for every model (settings.gold_errors)."
    )
    agreement: list[Agreement] = Field(
        default=[], description="Per verdict file (verdict_files' order): juror agreement and position bias."
    )
    error_categories: ErrorCategories | None = Field(
        None, description="Adjudication files made with --taxonomy only (absent otherwise): error categories per model."
    )
    rank_stability: RankStability | None = Field(
        None, description="Each model's rank interval and rank probabilities per column (a bootstrap over questions)."
    )
    corrected: Corrected | None = Field(
        None, description="--review-sample only (absent otherwise): the panel's rates corrected by two reviewers."
    )
    adjudication_uncertainty: AdjudicationUncertainty | None = Field(
        None,
        description="With adjudication files only (absent otherwise): the latent-class fit of each file and the questions + "
        "jury bootstrap behind each model's adjudicated_jury.",
    )
    audit_uncertainty: AuditUncertainty | None = Field(
        None,
        description="With audit files only (absent otherwise): the latent-class fit of each audit file and the questions + "
        "jury bootstrap behind each model's gold_clean_jury.",
    )
    repeat_stability: RepeatStability | None = Field(
        None,
        description="With adjudication or audit files asked more than once only (jury adjudicate --repeats, jury "
        "audit-gold --repeats; absent otherwise): each juror's test-retest agreement, the verdicts (flags) that change "
        "between repeats and the adjudicated (gold-clean) column's spread.",
    )
    jurors: list[JurorFile] | None = Field(
        None,
        description="With adjudication files only (absent otherwise): per file, each juror's votes, latent-class "
        "accuracy, agreement with the other jurors and with people, and its votes by the order the answers were shown.",
    )


def report_schema() -> dict[str, Any]:
    """The JSON Schema of `jury report --format json` (what verdicts/schema/ holds)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **ReportDocument.model_json_schema()}


def write_report_schema(directory: str | Path) -> Path:
    """(Re)write ``<directory>/report-v1.schema.json``."""
    target = Path(directory) / REPORT_SCHEMA_FILENAME
    write_output(target, dumps_pretty(report_schema()))
    return target
