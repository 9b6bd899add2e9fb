"""A project: the folder a job runs in, its ``jury.toml`` and the defaults that follow from it.

Every job of the public API (``jury.score``, ``jury.adjudicate``, …) resolves the paths it was
not given here, the same way the command line does: an argument, else ``jury.toml``'s value
(relative to the file's folder), else the built-in default (the store ``.jury/store.db``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import InputError
from jury.inputs.config import Config, load_config

if TYPE_CHECKING:
    from jury.compare.comparators import NormalizeOptions
    from jury.compare.outcomes import Settings
    from jury.execution.engine_urls import DatabaseURLs
    from jury.execution.store import Store
    from jury.judging.panels import Panel

PathLike = str | Path


@dataclass
class Project:
    """Defaults for one folder: ``Project.load()`` reads ``jury.toml`` in the working directory
    (or ``folder``); without the file every default is the built-in one."""

    config: Config = field(default_factory=Config)

    @classmethod
    def load(cls, folder: PathLike | None = None) -> Project:
        """The project of ``folder`` (default: the working directory): its jury.toml, if any.

        Args:
            folder: where to look for jury.toml (the folder itself, not its parents).
        """
        return cls(load_config(Path(folder) if folder is not None else None))

    def get(self, key: str, given: Any = None, default: Any = None) -> Any:
        """The argument if given, else jury.toml's value, else ``default`` (numbers checked)."""
        return self.config.get(key, given, default)

    def path(self, key: str, given: PathLike | None = None, default: str | None = None) -> Path | None:
        """A path argument, else jury.toml's (relative to its folder), else ``default``."""
        return self.config.path_of(key, given, default)

    def gold(self, given: PathLike | None = None) -> Path:
        """The gold file: ``given``, else jury.toml's ``gold``; an InputError when neither names one.

        Args:
            given: the gold file a caller names (relative paths resolve as given).
        """
        path = self.path("gold", given)
        if path is None:
            raise InputError("no gold file: give the gold file (--gold) or set gold in jury.toml")
        return path

    def db_root(self, given: PathLike | None = None) -> Path | None:
        """The folder of SQLite databases: ``given``, else jury.toml's ``db_root`` (None: neither).

        Args:
            given: the folder a caller names.
        """
        return self.path("db_root", given)

    def store_path(self, given: PathLike | None = None) -> Path:
        """The store's path: ``given``, else jury.toml's ``store``, else the project's ``.jury/store.db``.

        Args:
            given: the store a caller names.
        """
        return self.config.store_path(given)

    def open_store(self, given: PathLike | None = None) -> Store:
        """The store at ``store_path(given)``, opened (created and migrated when new).

        Args:
            given: the store a caller names.
        """
        from jury.execution.store import Store

        return Store(self.store_path(given))

    def panel(self, given: str | Path | Panel | None, key: str = "panel", default: str = "default.toml") -> Panel:
        """The panel a job asks: ``given`` loaded (a copy: a job may set its quorum), as a path or
        a name in panels/; else jury.toml's ``key`` (a path relative to the file's folder, or a
        name); else the shipped ``default`` (jury.judging.panels.resolve_panel_path decides).

        Args:
            given: the panel a caller names or hands over.
            key: the jury.toml key of its default (``panel``, ``audit_panel``).
            default: the shipped panel file when neither names one.
        """
        from jury.judging.panels import Panel, load_panel, resolve_panel_path

        if isinstance(given, Panel):
            return replace(given)
        if given is not None:
            return load_panel(resolve_panel_path(str(given), default))
        return load_panel(resolve_panel_path(self.config.values.get(key), default, self.config.root))

    def verdicts_dir(self) -> Path:
        """Where verdict files live: jury.toml's ``verdicts_dir``, else ``verdicts``."""
        folder = self.path("verdicts_dir", None, "verdicts")
        assert folder is not None
        return folder

    def db_urls(self, db_url: str | None = None, allow_privileged_login: bool = False) -> DatabaseURLs:
        """Where each db_id's database is on an engine: ``db_url``, else jury.toml's [databases];
        with jury.toml's [engines] settings, and ``allow_privileged_login`` (the flag) on top."""
        from jury.execution.engine_urls import DatabaseURLs

        values = self.config.values
        return DatabaseURLs.from_config(
            values.get("databases"),
            str(self.config.path or "jury.toml"),
            db_url,
            engines=values.get("engines"),
            allow_privileged_login=allow_privileged_login,
        )

    def engine_url(self, url: str | None, label: str, allow_privileged_login: bool = False) -> str | None:
        """One more engine URL given by an option (``label``: its name in errors), with the same
        jury.toml [engines] settings and ``allow_privileged_login`` as :meth:`db_urls`' (None: None)."""
        if url is None:
            return None
        from jury.execution.engine_urls import DatabaseURLs, check_url

        values = self.config.values
        return DatabaseURLs.from_config(
            None,
            str(self.config.path or "jury.toml"),
            check_url(url, label),
            engines=values.get("engines"),
            allow_privileged_login=allow_privileged_login,
        ).template

    def settings(
        self,
        *,
        comparator: str | None = None,
        near_miss: float | None = None,
        timeout: float | None = None,
        row_cap: int | None = None,
        workers: int | None = None,
        options: NormalizeOptions | None = None,
        executor: str | None = None,
        ray_address: str | None = None,
        db_url: str | None = None,
        missing: str | None = None,
        gold_errors: str | None = None,
        allow_privileged_login: bool = False,
        timeout_retries: int = 0,
        same_window: bool = False,
    ) -> Settings:
        """Evaluation settings: arguments, else jury.toml, else the defaults (ray_address, else RAY_ADDRESS)."""
        from jury.compare.outcomes import Settings

        given = {  # workers first: a bad argument is named in the order the settings were always checked
            "workers": self.get("workers", workers),
            "comparator": self.get("comparator", comparator),
            "near_miss": self.get("near_miss", near_miss),
            "timeout_s": self.get("timeout", timeout),
            "row_cap": self.get("row_cap", row_cap),
            "executor": self.get("executor", executor),
            "missing": self.get("missing", missing),
            "gold_errors": self.get("gold_errors", gold_errors),
            "options": options,
        }
        return Settings(
            ray_address=ray_address,
            db_urls=self.db_urls(db_url, allow_privileged_login),
            timeout_retries=timeout_retries,
            same_window=same_window,
            **{k: v for k, v in given.items() if v is not None},  # neither given nor in jury.toml: Settings' default
        )


def as_paths(paths: PathLike | Sequence[PathLike] | None) -> list[Path]:
    """One path or several as a list of Paths (None: none)."""
    if paths is None:
        return []
    if isinstance(paths, str | Path):
        return [Path(paths)]
    return [Path(p) for p in paths]
