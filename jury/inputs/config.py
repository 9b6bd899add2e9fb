"""`jury.toml`: project defaults so `jury adjudicate run.jsonl` needs no flags.

Relative paths in the file are relative to the file's folder. Command-line flags
override the file; the file overrides built-in defaults.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from jury.errors import ConfigError, InputError
from jury.inputs.reader import MAX_CONFIG_BYTES, decoded, excerpt, read_bounded
from jury.vocab import ExecutorName, GoldErrorRule, MissingRule

CONFIG_NAME = "jury.toml"
PATH_KEYS = {"gold", "db_root", "panel", "audit_panel", "store", "verdicts_dir", "audit", "positions_from"}
VALUE_TYPES: dict[str, tuple[type, ...]] = {
    "comparator": (str,),
    "workers": (int,),
    "timeout": (int, float),
    "near_miss": (int, float),
    "row_cap": (int,),
    "seed": (int,),
    "max_cost": (int, float),
    "split": (str,),
    "quorum": (int,),
    "executor": (str,),
    "missing": (str,),  # fail or exclude: unanswered gold questions (jury.vocab.MissingRule)
    "gold_errors": (str,),  # fail or exclude: questions whose gold query fails (jury.vocab.GoldErrorRule)
    "databases": (dict,),  # [databases]: db_id (or "*") -> engine URL (jury.execution.engines)
    "engines": (dict,),  # [engines]: allow_privileged_login, allow_functions (jury.execution.engine_urls)
}
KNOWN_KEYS = PATH_KEYS | set(VALUE_TYPES)

# Every numeric setting, from a flag or from jury.toml: (whole number?, lowest, highest, inclusive low?).
NUMBER_RULES: dict[str, tuple[bool, float | None, float | None, bool]] = {
    "timeout": (False, 0, None, False),
    "near_miss": (False, 0, 1, True),
    "max_cost": (False, 0, None, True),
    "row_cap": (True, 1, None, True),
    "workers": (True, 1, None, True),
    "quorum": (True, 1, None, True),
    "seed": (True, None, None, True),
    "float_digits": (True, 1, None, True),
}


def number_problem(key: str, value: Any) -> str | None:
    """Why ``value`` is not a valid ``key`` (finite, of the right kind, in range), or None."""
    whole, low, high, low_inclusive = NUMBER_RULES[key]
    kind = "a whole number" if whole else "a finite number"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and not isinstance(value, int)):
        return f"must be {kind}"
    if not math.isfinite(value):
        return f"must be {kind}"
    if low is not None and (value < low or (value == low and not low_inclusive)):
        return f"must be {'at least' if low_inclusive else 'greater than'} {low:g}"
    if high is not None and value > high:
        return f"must be at most {high:g}"
    return None


def check_number(key: str, value: Any, source: Path | None = None) -> Any:
    """``value`` if it is a valid ``key``; else a one-line error naming the flag (no source)
    or the file and key."""
    problem = number_problem(key, value)
    if problem is None:
        return value
    if source is None:
        raise InputError(f"--{key.replace('_', '-')} {problem}, got {excerpt(value)}")
    raise ConfigError(f"{source}: {key} {problem}, got {excerpt(value)}")


@dataclass
class Config:
    path: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    def get(self, key: str, flag: Any = None, default: Any = None) -> Any:
        """The flag if given, else the file's value, else the default. A numeric flag is
        checked like the file's value (finite and in range)."""
        if flag is not None:
            return check_number(key, flag) if key in NUMBER_RULES else flag
        return self.values.get(key, default)

    @overload
    def path_of(self, key: str, flag: str | Path | None, default: str) -> Path: ...

    @overload
    def path_of(self, key: str, flag: str | Path | None = None, default: str | None = None) -> Path | None: ...

    def path_of(self, key: str, flag: str | Path | None = None, default: str | None = None) -> Path | None:
        if flag is not None:
            return Path(flag)
        if key in self.values:
            in_file: Path = self.root / self.values[key]
            return in_file
        return self.root / default if default is not None else None

    def store_path(self, flag: str | Path | None = None) -> Path:
        return self.path_of("store", flag, ".jury/store.db")


def load_config(cwd: Path | None = None) -> Config:
    path = (cwd or Path.cwd()) / CONFIG_NAME
    if not os.path.lexists(path):
        return Config()
    text = decoded(path, read_bounded(path, MAX_CONFIG_BYTES, what="a jury.toml", error=ConfigError), ConfigError)
    try:
        values = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    unknown = sorted(set(values) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(KNOWN_KEYS))}")
    for key, value in values.items():
        want = (str,) if key in PATH_KEYS else VALUE_TYPES[key]
        if isinstance(value, bool) or not isinstance(value, want):
            kind = "number" if float in want else "whole number" if int in want else "table" if dict in want else "string"
            raise ConfigError(f"{path}: {key} must be a {kind}, got {excerpt(value)}")
    for key, value in values.items():
        if key in NUMBER_RULES:
            check_number(key, value, path)
    if "executor" in values and values["executor"] not in tuple(ExecutorName):
        raise ConfigError(f"{path}: executor must be one of {', '.join(ExecutorName)}, got {excerpt(values['executor'])}")
    if "missing" in values and values["missing"] not in tuple(MissingRule):
        raise ConfigError(f"{path}: missing must be one of {', '.join(MissingRule)}, got {excerpt(values['missing'])}")
    if "gold_errors" in values and values["gold_errors"] not in tuple(GoldErrorRule):
        raise ConfigError(f"{path}: gold_errors must be one of {', '.join(GoldErrorRule)}, got {excerpt(values['gold_errors'])}")
    return Config(path=path, values=values)
