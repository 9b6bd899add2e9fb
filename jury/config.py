"""`jury.toml`: project defaults so `jury adjudicate run.jsonl` needs no flags.

Relative paths in the file are relative to the file's folder. Command-line flags
override the file; the file overrides built-in defaults.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jury.errors import ConfigError

CONFIG_NAME = "jury.toml"
PATH_KEYS = {"gold", "db_root", "panel", "audit_panel", "store", "verdicts_dir", "audit"}
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
}
KNOWN_KEYS = PATH_KEYS | set(VALUE_TYPES)


@dataclass
class Config:
    path: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    def get(self, key: str, flag: Any = None, default: Any = None) -> Any:
        """The flag if given, else the file's value, else the default."""
        if flag is not None:
            return flag
        return self.values.get(key, default)

    def path_of(self, key: str, flag: str | Path | None = None, default: str | None = None):
        if flag is not None:
            return Path(flag)
        if key in self.values:
            return self.root / self.values[key]
        return self.root / default if default is not None else None

    def store_path(self, flag: str | Path | None = None) -> Path:
        return self.path_of("store", flag, ".jury/store.db")


def load_config(cwd: Path | None = None) -> Config:
    path = (cwd or Path.cwd()) / CONFIG_NAME
    if not path.is_file():
        return Config()
    try:
        values = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    unknown = sorted(set(values) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(KNOWN_KEYS))}"
        )
    for key, value in values.items():
        want = (str,) if key in PATH_KEYS else VALUE_TYPES[key]
        if isinstance(value, bool) or not isinstance(value, want):
            kind = "number" if float in want else "whole number" if int in want else "string"
            raise ConfigError(f"{path}: {key} must be a {kind}, got {value!r}")
    for key in ("row_cap", "workers", "quorum"):
        if values.get(key, 1) < 1:
            raise ConfigError(f"{path}: {key} must be at least 1, got {values[key]}")
    if values.get("max_cost", 0) < 0:
        raise ConfigError(f"{path}: max_cost must not be negative, got {values['max_cost']}")
    return Config(path=path, values=values)
