"""Each setting's type and rule, declared once (issue 45).

A setting a job takes as an option and ``jury.toml`` gives as a default is one of these types
wherever it is read: the options models' fields (jury.options.groups, …), ``jury.toml``'s keys
(jury.options.project.ProjectFile) and a value a caller hands jury.pipeline.project.Project.get
(jury.inputs.config.Config.get) are validated by the same type, so a rule (finite, whole, in
range, one of a vocabulary) cannot differ between a flag, a library call and the file.

Numbers are strict: a whole number is an int (not a bool, not 2.0), a number an int or a float
(not a bool, not a string). None is "not given": the file's value, else the built-in default.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from jury.vocab import ExecutorName, GoldErrorRule, MissingRule

Workers = Annotated[int | None, Field(ge=1, strict=True)]
Timeout = Annotated[float | None, Field(gt=0, strict=True, allow_inf_nan=False)]
NearMiss = Annotated[float | None, Field(ge=0, le=1, strict=True, allow_inf_nan=False)]
RowCap = Annotated[int | None, Field(ge=1, strict=True)]
FloatDigits = Annotated[int | None, Field(ge=1, strict=True)]
MaxCost = Annotated[float | None, Field(ge=0, strict=True, allow_inf_nan=False)]
Quorum = Annotated[int | None, Field(ge=1, strict=True)]
Seed = Annotated[int | None, Field(strict=True)]
Executor = ExecutorName | None
Missing = MissingRule | None
GoldErrors = GoldErrorRule | None

# the settings a caller may hand Config.get / Project.get, each by its type
SETTINGS: dict[str, Any] = {
    "workers": Workers,
    "timeout": Timeout,
    "near_miss": NearMiss,
    "row_cap": RowCap,
    "float_digits": FloatDigits,
    "max_cost": MaxCost,
    "quorum": Quorum,
    "seed": Seed,
}
