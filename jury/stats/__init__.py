"""The statistics: pure functions over numbers (Python, numpy, scipy), no I/O and no other part
of jury. Import each name from the module that defines it; this package re-exports nothing.

- :mod:`jury.stats.core`: Wilson intervals, ranks and ordinals, the percentile bootstrap
  (``percentile_interval``, ``mean_interval``, ``seeded``), correlations, Cohen's kappa with a
  bootstrap interval, the position-bias test and the two-sided accuracy of reviewed questions;
- :mod:`jury.stats.agreement`: agreement between raters (Fleiss', Cohen's kappa,
  Krippendorff's alpha, plain agreement, confusion counts, precision and recall);
- :mod:`jury.stats.latent`: juror error rates from the votes alone (the Dawid–Skene
  latent-class model, fitted by EM, and Gibbs draws of the classes);
- :mod:`jury.stats.dependence`: do the jurors err independently? A pairwise check of a
  Dawid–Skene fit;
- :mod:`jury.stats.uncertainty`: intervals that carry the jury ("questions + jury"), and
  ranks under the same resampling;
- :mod:`jury.stats.repeats`: test–retest agreement of repeated panels, verdicts that change
  between repeats and a column's spread across them;
- :mod:`jury.stats.panels`: two panels, or two reviewers, compared;
- :mod:`jury.stats.sampling`: a stratified sample of records for people to review;
- :mod:`jury.stats.correction`: the panel's rates corrected by a human-labelled sample.

Their imports go down this order: ``uncertainty``, ``panels``, ``repeats``, ``correction``
and ``dependence``; then ``latent`` and ``sampling``; then ``core``; then ``agreement``
(an import-linter contract in pyproject.toml).
"""
