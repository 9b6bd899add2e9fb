"""Extension points: what another package adds to jury by name, through entry points.

A package extends jury by declaring entry points in its ``pyproject.toml`` (the convention
of simonw/llm's plugins and inspect_ai's registry: the installed metadata is the registry,
nothing is imported until a name is used)::

    [project.entry-points."jury.comparators"]
    fuzzy = "jury_fuzzy:fuzzy"

After ``pip install jury-fuzzy``, ``jury score run.jsonl --comparator fuzzy`` and
``jury.score(..., comparator="fuzzy")`` use it. The groups (:data:`GROUPS`):

- ``jury.comparators``: a result comparator (jury.compare.comparators), called as
  ``fn(gold_rows, pred_rows, *, order_matters, options) -> bool``;
- ``jury.importers``: a reader of another tool's prediction files into run records
  (jury.inputs.importers), called as ``fn(path, gold_items, model) -> ImportReport``.

jury ships its own entries through the same path (its ``spider2`` comparator is an entry
point of the ``jury`` distribution, in pyproject.toml). A plugin that
fails to import, is not callable, or takes a name jury ships (or another plugin took) is a
:class:`~jury.errors.PluginError`: one line naming the plugin, its distribution and the cause.
An exception a plugin's function raises is a PluginError too. The distribution and version
of a third-party entry are recorded where outputs record the choice (:meth:`Plugin.describe`).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from jury.errors import InputError, JuryError, PluginError, did_you_mean

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

T = TypeVar("T")

#: The distribution jury itself is installed as: its entry points are shipped ones.
JURY_DISTRIBUTION = "jury"
#: Every extension point: what it extends -> its entry-point group.
GROUPS = {"comparator": "jury.comparators", "importer": "jury.importers"}


@dataclass(frozen=True)
class Plugin:
    """Where a registered name comes from: its entry point and the distribution declaring it
    (``distribution`` None for a name jury defines in code)."""

    name: str
    group: str
    value: str = ""  # the entry point's "module:attribute"
    distribution: str | None = None
    version: str | None = None

    @property
    def shipped(self) -> bool:
        """True for jury's own names (in code, or entry points of the jury distribution)."""
        return self.distribution is None or _normal(self.distribution) == JURY_DISTRIBUTION

    def where(self) -> str:
        """The plugin in a few words: ``'jury-fuzzy 0.1.0: jury_fuzzy:fuzzy'``."""
        return f"{self.distribution or '?'} {self.version or '?'}: {self.value}"

    def describe(self) -> dict[str, str | None]:
        """The plugin as provenance records it: name, distribution, version and entry point."""
        return {"name": self.name, "distribution": self.distribution, "version": self.version, "entry_point": self.value}


class Registry(Mapping[str, T], Generic[T]):
    """The ``kind`` names: jury's own (``builtin``, defined in code) and every entry point of
    ``group`` in the installed metadata. A read-only mapping name -> object; an entry point is
    imported when its name is first looked up, and checked by ``check`` (a problem as text,
    or None). The metadata is read once (:meth:`refresh` reads it again)."""

    def __init__(
        self, kind: str, group: str, builtin: Mapping[str, T], check: Callable[[object], str | None] | None = None
    ) -> None:
        self.kind, self.group = kind, group
        self._builtin = dict(builtin)
        self._check = check
        self._lock = threading.Lock()
        self._points: dict[str, tuple[Plugin, EntryPoint]] | None = None  # name -> (plugin, its EntryPoint)
        self._loaded: dict[str, T] = {}

    def refresh(self) -> None:
        """Forget what was read, so the next look-up reads the installed metadata again."""
        with self._lock:
            self._points, self._loaded = None, {}

    def _entry_points(self) -> dict[str, tuple[Plugin, EntryPoint]]:
        with self._lock:
            if self._points is None:
                self._points = self._scan()
            return self._points

    def _scan(self) -> dict[str, tuple[Plugin, EntryPoint]]:
        from importlib.metadata import entry_points

        found: dict[str, tuple[Plugin, EntryPoint]] = {}
        points = sorted(entry_points(group=self.group), key=lambda e: (not _is_jury(e), e.name, e.value))
        for ep in points:
            dist = ep.dist
            plugin = Plugin(ep.name, self.group, ep.value, dist.name if dist else None, dist.version if dist else None)
            if ep.name in self._builtin or ep.name in found:
                other = found[ep.name][0] if ep.name in found else Plugin(ep.name, self.group)
                raise PluginError(self._collision(plugin, other))
            found[ep.name] = (plugin, ep)
        return found

    def _collision(self, plugin: Plugin, other: Plugin) -> str:
        taken = f"jury's own {self.kind} {other.name!r}" if other.shipped else f"the {self.kind} of {other.where()}"
        return (
            f"{self.kind} plugin {plugin.name!r} ({plugin.where()}, entry point group {self.group}) takes the name of "
            f"{taken}; rename it in the entry points of {plugin.distribution or 'its package'} or uninstall one of the two"
        )

    def plugin(self, name: str) -> Plugin:
        """Where ``name`` comes from (KeyError when no such name is registered)."""
        if name in self._builtin:
            return Plugin(name, self.group)
        return self._entry_points()[name][0]

    def __getitem__(self, name: str) -> T:
        if not isinstance(name, str):
            raise KeyError(name)
        points = self._entry_points()  # every look-up sees a collision, whichever name it asks
        if name in self._builtin:
            return self._builtin[name]
        if name in self._loaded:
            return self._loaded[name]
        plugin, ep = points[name]
        try:
            obj = ep.load()
        except Exception as exc:  # a plugin's import may fail any way: one line naming it
            why = " ".join(str(exc).split())[:300]
            raise PluginError(
                f"{self.kind} plugin {name!r} ({plugin.where()}) failed to load: {type(exc).__name__}{': ' + why if why else ''}"
            ) from None
        problem = self._check(obj) if self._check else None
        if problem:
            raise PluginError(f"{self.kind} plugin {name!r} ({plugin.where()}) {problem}")
        if callable(obj) and not plugin.shipped:
            obj = _guarded(self.kind, plugin, obj)
        self._loaded[name] = obj
        return obj

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(set(self._builtin) | set(self._entry_points())))

    def __len__(self) -> int:
        return len(set(self._builtin) | set(self._entry_points()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._builtin or name in self._entry_points())

    def get_named(self, name: str) -> T:
        """The object registered as ``name``; InputError naming the choices when there is none."""
        if name in self:
            return self[name]
        choices = ", ".join(self)
        raise InputError(f"unknown {self.kind} {name!r}{did_you_mean(name, self) or ';'} choose one of: {choices}")


def not_callable(obj: object) -> str | None:
    """The problem of a plugin that should be a function: None when ``obj`` is callable."""
    return None if callable(obj) else f"is not callable (it is a {type(obj).__name__})"


def _guarded(kind: str, plugin: Plugin, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` whose exceptions are a PluginError naming the plugin (one line, no traceback of
    another package's code); a JuryError it raises on purpose passes as it is."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except JuryError:
            raise
        except Exception as exc:
            why = " ".join(str(exc).split())[:300]
            raise PluginError(
                f"{kind} plugin {plugin.name!r} ({plugin.where()}) failed: {type(exc).__name__}{': ' + why if why else ''}"
            ) from None

    return call


def _is_jury(ep: EntryPoint) -> bool:
    dist = ep.dist
    return dist is not None and _normal(dist.name) == JURY_DISTRIBUTION


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
