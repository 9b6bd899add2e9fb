"""``jury review``'s options: the review page (``jury.jobs.review.review_app``), what it exports and
locks (``export_review``, ``lock_review``), the sample people review (``review_sample``), and two
reviewers' agreement and corrected rate (``review_agreement``, ``review_corrected``). The files each
job writes (``-o``) and the review files it reads are its arguments, not options."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from jury.options import Flag, OneOrMany, Options, as_list
from jury.options.groups import StoreFile

Port = Annotated[int, Field(ge=0, le=65535, strict=True)]
Resamples = Annotated[int, Field(ge=0, strict=True)]
Confidence = Annotated[float, Field(ge=0.5, le=0.999, strict=True, allow_inf_nan=False)]
DrawSeed = Annotated[int, Field(strict=True)]  # a whole number: no jury.toml seed stands behind these, so no None


def stratum_sizes(value: Any) -> Any:
    """``--size``'s values: "STRATUM=N" strings (one, or a list), or a mapping stratum -> N."""
    if isinstance(value, Mapping):
        return [f"{k}={v}" for k, v in value.items()]
    return as_list(value)


def checked_sizes(value: list[str]) -> list[str]:
    for s in value:
        key, sep, n = s.rpartition("=")
        if not sep or not key or not n.isdigit():
            raise ValueError(f"must be STRATUM=N with N a whole number (not {s!r})")
    return value


def parsed_sizes(value: list[str]) -> dict[str, int] | None:
    """``--size``'s checked values as stratum -> N (None: none given)."""
    return {s.rpartition("=")[0]: int(s.rpartition("=")[2]) for s in value} if value else None


class Frame(Options):
    """The locked files whose items people review."""

    verdicts: Annotated[OneOrMany[Path], Flag(flags=("--verdicts",))] = []
    """Locked adjudication file(s) whose items are reviewed (repeatable)."""
    audit: Path | None = None
    """Locked audit file: its gold queries are reviewed. Default: jury.toml's audit."""


class Decisions(StoreFile, Frame):
    """The locked files reviewed and the store their decisions are kept in."""


class ReviewOptions(Decisions):
    """What ``jury.jobs.review.review_app`` can be asked: the items (the frame and the queues, or a
    sample), who reviews, where the page listens and where the databases are."""

    queue: Annotated[OneOrMany[str], Flag(flags=("--queue",))] = []
    """unsettled, split, flagged or sample:N (repeatable; default: unsettled, split and flagged)."""
    reviewer: str | None = None
    """Your name, recorded with every decision (default: your login)."""
    host: str | None = None
    """Address to bind (default 127.0.0.1). Anything but loopback must be given here explicitly, as one
    address of this machine (0.0.0.0 and :: are refused); the token is still required."""
    port: Port = 0
    """Port (default 0: any free port)."""
    db_root: Path | None = None
    """Folder of <db_id>/<db_id>.sqlite. Default: beside the bound databases."""
    sample: Path | None = None
    """Locked sample file (jury review sample): review its records blind, without the panel's votes or
    verdict (no --verdicts, --audit or --queue with it)."""


class ReviewExportOptions(Decisions):
    """What ``jury.jobs.review.export_review`` can be asked: the locked files, the store and whose
    decisions."""

    reviewer: str | None = None
    """Only this reviewer's decisions (default: everyone's)."""


class ReviewLockOptions(Decisions):
    """What ``jury.jobs.review.lock_review`` can be asked: the locked files (or a sample), the store,
    whose decisions and the signing key."""

    sign: Annotated[Path | None, Flag(flags=("--sign",), metavar="KEYFILE")] = None
    """Ed25519 private key (OpenSSH or PEM): after the review file is locked, write a detached SSH
    signature beside it (<file>.sig; check with jury verify --trusted-key)."""
    reviewer: str | None = None
    """Only this reviewer's decisions: one reviewer's own file (default: everyone's)."""
    sample: Path | None = None
    """Locked sample file: lock the decisions on its records (its frame files; no --verdicts or --audit)."""


class Bootstrap(Options):
    """The bootstrap of an interval: its resamples, seed and nominal coverage."""

    resamples: Resamples = 2000
    """Bootstrap resamples of the intervals."""
    seed: DrawSeed = 0
    """Seed of the bootstrap."""
    confidence: Confidence = 0.95
    """Nominal coverage of the intervals."""


class ReviewAgreementOptions(Bootstrap):
    """What ``jury.jobs.review_agreement.review_agreement`` can be asked: its bootstrap."""


class ReviewCorrectedOptions(Bootstrap):
    """What ``jury.jobs.review_corrected.review_corrected`` can be asked: the adjudication round of the
    reviewers' disagreements, which rate and its bootstrap."""

    settled: Annotated[Path | None, Flag(flags=("--settled",))] = None
    """The adjudication round of their disagreements (jury review settle)."""
    kind: str = "gold"
    """gold (the gold defect rate) or adjudication (the credited rate)."""


class ReviewSampleOptions(Frame):
    """What ``jury.jobs.review_sample.review_sample`` can be asked: the frame (the locked files whose
    records are drawn), the strata, the sizes and their allocation, and the seed of the draw."""

    by: Annotated[OneOrMany[str], Flag(flags=("--by",))] = ["verdict"]
    """Stratum key: verdict, flag, difficulty, db, model or agreement (repeatable)."""
    n: Annotated[int | None, Field(ge=1, strict=True), Flag(flags=("--n",))] = None
    """Total sample size, allocated over the strata by --method."""
    size: Annotated[
        list[str], BeforeValidator(stratum_sizes), AfterValidator(checked_sizes), Flag(flags=("--size",), metavar="STRATUM=N")
    ] = []
    """A stratum's sample size, its values joined by / in --by order (repeatable; the library also takes
    a mapping, stratum -> size)."""
    method: str = "proportional"
    """Allocation of --n: proportional or neyman (S_h of the panel's flag)."""
    minimum: Annotated[int, Field(ge=0, strict=True)] = 1
    """The least an allocation gives each stratum (capped by its size)."""
    seed: DrawSeed = 0
    """Seed of the draw."""


class ReviewSettleOptions(Options):
    """What ``jury review settle`` reads: the decisions of the adjudication round."""

    decisions: Annotated[Path, Flag(flags=("--decisions",))]
    """CSV with a header: question_id, model (adjudication items), label, settled_by (a name, or names
    joined by + when the reviewers settled it together), note (optional); one row per disagreement."""
