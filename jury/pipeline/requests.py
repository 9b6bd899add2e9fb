"""What a juror job is asked to do, decided once before any work: ``AdjudicationRequest``
(``jury.adjudicate``, a re-run adjudication file) and ``AuditRequest`` (``jury.audit_gold``, a
re-run audit file).

A request holds every choice the job makes, resolved (the panel loaded, its swap and taxonomy
applied, the shard parsed, the signing key loaded), and building one refuses every combination
of options that needs no data (an audit panel for an adjudication, swap with early stop, ...):
the jobs of jury.pipeline.jobs only run steps with it, and jury.verdicts.assemble only writes
what they give it. The API functions build them from their arguments and jury.toml;
jury.pipeline.reaudit builds them from a stale verdict file's recorded settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from jury.errors import InputError
from jury.inputs.run_files import RunFile


def warn_unknown_params(panel) -> None:
    """One stderr line per juror whose params litellm does not know for its provider (a typo
    such as `temprature` would otherwise be sent unchecked). Before any call, and in --plan."""
    import sys

    from jury.judging.client import unknown_params

    for juror in panel.jurors:
        unknown = unknown_params(juror)
        if unknown:
            print(
                f"Warning: panel {panel.name!r}, juror {juror.name!r} ({juror.model}): params "
                f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not known to litellm for this "
                "provider (a typo?); sent as given",
                file=sys.stderr,
                flush=True,
            )


class JurorRequest(BaseModel):
    """What every juror job settles before any work. Building one warns (stderr) of the juror
    params litellm does not know, and refuses an existing ``output`` that is not a locked
    verdict file (unless ``plan_only``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    config: Any = Field(description="Where the verdicts folder is: a jury.inputs.config.Config (its verdicts_dir).")
    panel: Any = Field(description="The jury.judging.panels.Panel asked, loaded (the job's own copy).")
    gold_path: Path = Field(description="The gold file.")
    db_root: Path | None = Field(None, description="The folder of <db_id>/<db_id>.sqlite.")
    max_cost: float | None = Field(None, description="USD: stop (CostCapReached) before the run's spend passes it.")
    output: Path | None = Field(None, description="The verdict file to write (None: a new one in the verdicts folder).")
    plan_only: bool = Field(False, description="Make no call: only the plan (--plan).")
    supersedes: str | None = Field(None, description="The content hash of the file a re-run replaces.")
    shard: Any = Field(None, description="A jury.judging.shards.Shard: ask only its ballots, write no verdict file.")
    batch: bool = Field(False, description="Send OpenAI and Anthropic jurors' ballots through their batch APIs.")
    # what only the API's caller needs after the job: the result's write guard and the signature
    store_path: Path | None = Field(None, description="The store's path (what a result may not overwrite).")
    inputs: list[Path] = Field(default_factory=list, description="The files read (what a result may not overwrite).")
    signer: Any = Field(None, description="A jury.verdicts.signing.Signer that signs the locked file.")
    new_schema: Path | None = Field(None, description="The schema/ folder writing the verdict file will create.")

    def _refuse_foreign_output(self) -> None:
        if not self.plan_only:
            from jury.verdicts.assemble import refuse_foreign_output

            refuse_foreign_output(self.output)


class AdjudicationRequest(JurorRequest):
    """An adjudication: which runs, which panel, how its jurors are asked, what is recorded.

    Building one refuses an audit panel, swap or a shard with early stop, batch with early stop,
    a ``review_passes`` outside [0, 1]; ``swap`` None becomes the panel's, ``taxonomy`` (a name
    or a path; None: the panel's) is loaded."""

    run_paths: list[RunFile] = Field(
        description="Run JSONL files or published prediction files (jury.inputs.run_files: with the model NAME given)."
    )
    registry: Any = Field(description="The family registry (jury.judging.families) that keeps jurors disjoint.")
    settings: Any = Field(description="The evaluation's jury.compare.outcomes.Settings.")
    seed: int = Field(0, description="The seed of the answer-order shuffle (and of the sampled passes).")
    early_stop: bool = Field(False, description="Stop asking once a majority is settled.")
    swap: bool | None = Field(None, description="Each juror judges both answer orders (None: the panel's).")
    review_passes: float = Field(0.0, description="The seeded share of each model's strict matches also sent.")
    taxonomy: Any = Field(None, description="The error taxonomy: a name, a path or a loaded Taxonomy (None: the panel's).")
    models: list[str] | None = Field(None, description="Only these models (None: every model of the runs).")
    positions_from: Path | None = Field(None, description="The gold file prediction files index by position.")
    dbs: list[str] = Field(default_factory=list, description="Only the questions of these db_ids (none: every question).")
    repeats: int = Field(1, description="Ask the panel this many times, each repeat its own seeded order (--repeats).")

    @model_validator(mode="after")
    def _decide(self) -> AdjudicationRequest:
        panel = self.panel
        if panel.ballot_style == "audit":
            raise InputError(f"panel {panel.name!r} ({panel.path}) is an audit panel; adjudication needs a blind or labelled one")
        warn_unknown_params(panel)
        self.swap = panel.swap if self.swap is None else self.swap
        if self.swap and self.early_stop:
            raise InputError("swap and early_stop cannot be combined: a swapped vote needs both orders of every juror")
        if self.shard is not None and self.early_stop:
            raise InputError("shard and early_stop cannot be combined: a settled majority needs every juror's vote in one store")
        if self.early_stop and (self.batch or any(j.batch for j in panel.jurors)):
            raise InputError("batch and early_stop cannot be combined: a batch sends every juror's ballot at once")
        if self.repeats < 1:
            raise InputError(f"repeats must be at least 1, got {self.repeats}")
        if not 0.0 <= self.review_passes <= 1.0:
            raise InputError(f"review_passes must be a fraction in [0, 1], got {self.review_passes}")
        if self.taxonomy is None or isinstance(self.taxonomy, str | Path):  # not loaded yet
            name = self.taxonomy or panel.taxonomy
            if name is None:
                self.taxonomy = None
            else:
                from jury.judging.taxonomies import load_taxonomy

                self.taxonomy = load_taxonomy(name)
        self._refuse_foreign_output()
        return self


class AuditRequest(JurorRequest):
    """A gold audit: which gold items, which audit panel, which deterministic checks first.

    Building one refuses a panel whose ballot style is not ``audit`` and a panel that shows the
    checks to its jurors when ``checks`` is off."""

    db_urls: Any = Field(None, description="Where each db_id's database is on an engine (jury.execution.engines).")
    dbs: list[str] | None = Field(None, description="Only these db_ids.")
    question_ids: list[str] | None = Field(None, description="Only these questions.")
    split: str | None = Field(None, description="The split of the items without one.")
    checks: bool = Field(True, description="Run the deterministic gold checks first (no model) and record them.")
    check_passes: tuple[int, ...] | None = Field(None, description="The checks' passes (None: Spider 2.0-AIFunc's).")
    against: tuple | None = Field(None, description="(gold file, engine URL, SQLite root) of the cross-engine check.")
    repeats: int = Field(1, description="Ask the panel this many times, each repeat its own stored vote (--repeats).")

    @model_validator(mode="after")
    def _decide(self) -> AuditRequest:
        panel = self.panel
        if panel.ballot_style != "audit":
            raise InputError(
                f"panel {panel.name!r} ({panel.path}) is a {panel.ballot_style} adjudication panel; "
                'the gold audit needs ballot_style = "audit"'
            )
        warn_unknown_params(panel)
        if self.repeats < 1:
            raise InputError(f"repeats must be at least 1, got {self.repeats}")
        self._refuse_foreign_output()
        if panel.show_checks and not self.checks:
            raise InputError(
                f"panel {panel.name!r} ({panel.path}) sets show_checks: the jurors need the checks (checks cannot be off)"
            )
        return self


class ReauditRequest(BaseModel):
    """A re-audit: which locked files are compared with the files they bind, and how the stale
    ones are re-run (each re-run's own request is built from its file: jury.pipeline.reaudit)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    files: list[Path] = Field(description="The locked verdict files (given, else the current ones in the verdicts folder).")
    check: bool = Field(False, description="Call nothing: only say which files are stale.")
    max_cost: float | None = Field(None, description="USD: stop (CostCapReached) before a re-run's spend passes it.")
    batch: bool = Field(False, description="Send OpenAI and Anthropic jurors' ballots through their batch APIs.")
    store_path: Path = Field(description="The store the re-runs read their unchanged votes from.")
    signer: Any = Field(None, description="A jury.verdicts.signing.Signer that signs each new file.")
