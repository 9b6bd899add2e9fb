"""`jury.toml`: project defaults so `jury adjudicate run.jsonl` needs no flags.

Relative paths in the file are relative to the file's folder. Command-line flags
override the file; the file overrides built-in defaults.
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from pydantic import TypeAdapter, ValidationError

from jury.errors import ConfigError, InputError
from jury.inputs.reader import MAX_CONFIG_BYTES, decoded, excerpt, read_bounded
from jury.options import rule
from jury.options.project import ProjectFile
from jury.options.values import SETTINGS

CONFIG_NAME = "jury.toml"
KNOWN_KEYS = set(ProjectFile.model_fields)


@functools.cache
def _adapter(key: str) -> TypeAdapter[Any]:
    return TypeAdapter(SETTINGS[key])


def check_setting(key: str, value: Any) -> Any:
    """``value`` if it is a valid ``key`` (jury.options.values: the type its option and jury.toml
    key have); else a one-line error naming the flag."""
    try:
        return _adapter(key).validate_python(value)
    except ValidationError as exc:
        raise InputError(f"--{key.replace('_', '-')} {rule(exc.errors()[0])}, got {excerpt(value)}") from None


@dataclass
class Config:
    path: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    def get(self, key: str, flag: Any = None, default: Any = None) -> Any:
        """The flag if given, else the file's value, else the default. A setting's flag is checked
        by the type the file's value has (jury.options.values: finite, whole, in range)."""
        if flag is not None:
            return check_setting(key, flag) if key in SETTINGS else flag
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
    try:
        checked = ProjectFile.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = str(error["loc"][0])
        raise ConfigError(f"{path}: {key} {rule(error)}, got {excerpt(values[key])}") from None
    return Config(path=path, values={key: getattr(checked, key) for key in values})
