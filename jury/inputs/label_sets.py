"""The published human-label sets `jury labels import` reads, by name (jury.inputs.label_import
reads them): a module of its own so that the command line names them without importing the
readers."""

from __future__ import annotations

from enum import StrEnum


class LabelSet(StrEnum):
    """The published label sets `jury labels import` reads."""

    FLEX_AGREEMENT = "flex-agreement"
    FLEX_CATEGORIES = "flex-categories"
    FLEX_JUDGE = "flex-judge"  # FLEX's own LLM judge: judgments (jury/inputs/judgments.py), not human labels
    WRETBLAD = "wretblad"
    ARCWISE = "arcwise"
    PLATINUM = "platinum"  # a corrected gold file in BIRD's dev.json shape (BIRD-Platinum style)
    CSV = "csv"  # a generic CSV of gold labels: question_id, defective, type, note, annotator


KINDS: tuple[str, ...] = tuple(LabelSet)
