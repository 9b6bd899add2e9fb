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
The distribution and version of a third-party entry are recorded where outputs record the
choice (:meth:`Plugin.describe`).

Every call of a third-party plugin goes through one guard (:func:`_guarded`), which runs the
call in a daemon worker thread and waits at most the group's time bound (:meth:`Registry.timeout`:
``JURY_PLUGIN_TIMEOUT`` seconds when set, else :data:`DEFAULT_TIMEOUTS`). What the plugin
returns is checked against its group's declared type (the registry's ``result`` check, by
``type(...) is``, never by truthiness); whatever it raises, ``SystemExit``, ``GeneratorExit``
and a JuryError of its own included, is a PluginError whose one line jury writes itself (the
plugin, the exception's class name and a short printable excerpt of its message, when the
message can be read). Only ``KeyboardInterrupt`` passes: it stops jury as Ctrl-C does. A call
that does not answer in time is a PluginError, its thread is left running (a thread cannot be
killed; a daemon thread does not keep the process alive) and every later call of that plugin
is refused at once, so hung threads cannot pile up.
"""

from __future__ import annotations

import functools
import math
import os
import re
import threading
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from jury.errors import ConfigError, InputError, PluginError, did_you_mean

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

T = TypeVar("T")

#: The distribution jury itself is installed as: its entry points are shipped ones.
JURY_DISTRIBUTION = "jury-sql"  # pyproject's name (the import name is jury)
#: Every extension point: what it extends -> its entry-point group.
GROUPS = {"comparator": "jury.comparators", "importer": "jury.importers"}
#: How long one call of a plugin of each group may take, in seconds (a comparator compares one
#: pair's results; an importer reads a whole file). ``JURY_PLUGIN_TIMEOUT`` overrides them all.
DEFAULT_TIMEOUTS = {"comparator": 10.0, "importer": 300.0}
#: The environment variable of the time bound of every plugin call (seconds, > 0).
TIMEOUT_ENV = "JURY_PLUGIN_TIMEOUT"
#: How much of a plugin's exception message a PluginError quotes (characters).
EXCERPT_CHARS = 200

#: A group's check of what a plugin returned: (the value jury goes on with, None) when it is
#: of the declared type, else (None, what it is instead: "str, not a bool").
ResultCheck = Callable[[Any], tuple[Any, str | None]]


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
        return f"{_excerpt(self.distribution or '?', 80)} {_excerpt(self.version or '?', 40)}: {_excerpt(self.value, 120)}"

    def describe(self) -> dict[str, str | None]:
        """The plugin as provenance records it: name, distribution, version and entry point."""
        return {"name": self.name, "distribution": self.distribution, "version": self.version, "entry_point": self.value}


class Registry(Mapping[str, T], Generic[T]):
    """The ``kind`` names: jury's own (``builtin``, defined in code) and every entry point of
    ``group`` in the installed metadata. A read-only mapping name -> object; an entry point is
    imported when its name is first looked up, and checked by ``check`` (a problem as text,
    or None). The metadata is read once (:meth:`refresh` reads it again)."""

    def __init__(
        self,
        kind: str,
        group: str,
        builtin: Mapping[str, T],
        check: Callable[[object], str | None] | None = None,
        result: ResultCheck | None = None,
        timeout_s: float | None = None,
    ) -> None:
        self.kind, self.group = kind, group
        self._builtin = dict(builtin)
        self._check = check
        #: The group's declared result type, checked on every call of a third-party plugin.
        self.result = result
        #: The time bound of one call (seconds) when JURY_PLUGIN_TIMEOUT is not set.
        self.timeout_s = timeout_s if timeout_s is not None else DEFAULT_TIMEOUTS.get(kind, 10.0)
        self._lock = threading.Lock()
        self._points: dict[str, tuple[Plugin, EntryPoint]] | None = None  # name -> (plugin, its EntryPoint)
        self._loaded: dict[str, T] = {}

    def refresh(self) -> None:
        """Forget what was read, so the next look-up reads the installed metadata again."""
        with self._lock:
            self._points, self._loaded = None, {}

    def timeout(self) -> float:
        """The time bound of one plugin call, in seconds: ``JURY_PLUGIN_TIMEOUT`` when set, else
        :attr:`timeout_s`. A value that is no number of seconds > 0 is a ConfigError."""
        text = os.environ.get(TIMEOUT_ENV, "").strip()
        if not text:
            return self.timeout_s
        try:
            seconds = float(text)
        except ValueError:
            seconds = math.nan
        if not (math.isfinite(seconds) and seconds > 0):
            raise ConfigError(f"{TIMEOUT_ENV} must be a number of seconds > 0 (got {_excerpt(text, 40)!r})")
        return seconds

    def _entry_points(self) -> dict[str, tuple[Plugin, EntryPoint]]:
        with self._lock:
            if self._points is None:
                self._points = self._scan()
            return self._points

    def _scan(self) -> dict[str, tuple[Plugin, EntryPoint]]:

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
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a plugin's import may fail any way (SystemExit too): one line naming it
            raise PluginError(f"{self.kind} plugin {name!r} ({plugin.where()}) failed to load: {_describe(exc)}") from None
        problem = self._check(obj) if self._check else None
        if problem:
            raise PluginError(f"{self.kind} plugin {name!r} ({plugin.where()}) {problem}")
        if callable(obj) and not plugin.shipped:
            obj = _guarded(self, plugin, obj)
        loaded: T = obj  # an entry point's object (Any): the check above vouched for it
        self._loaded[name] = loaded
        return loaded

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


def _guarded(registry: Registry[Any], plugin: Plugin, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` called the one way jury calls a third-party plugin: in a daemon worker thread,
    waited for at most ``registry.timeout()`` seconds, its result checked by ``registry.result``.
    Anything else than a result of the declared type is a PluginError whose one line jury
    writes (naming the plugin); a KeyboardInterrupt the plugin raises stops jury as Ctrl-C does.
    After a call that did not answer in time every later call is refused at once (the hung
    thread cannot be stopped; refusing keeps more from piling up)."""
    where = f"{registry.kind} plugin {plugin.name!r} ({plugin.where()})"
    hung: list[float] = []  # the bound a call overran, once one did

    def call(*args: Any, **kwargs: Any) -> Any:
        if hung:
            raise PluginError(
                f"{where} did not answer within {hung[0]:g} s earlier in this run; jury calls it no more "
                f"(set {TIMEOUT_ENV} to give it longer)"
            )
        seconds = registry.timeout()
        answer: list[tuple[str, Any]] = []  # ("value", v), ("wrong", text), ("interrupt", None)

        def run() -> None:  # everything that touches the plugin's objects runs here, bounded
            try:
                value = fn(*args, **kwargs)
            except KeyboardInterrupt:
                answer.append(("interrupt", None))
                return
            except BaseException as exc:  # SystemExit, GeneratorExit, a JuryError of its own: its error
                answer.append(("wrong", f"failed: {_describe(exc)}"))
                return
            try:
                value, problem = registry.result(value) if registry.result else (value, None)
            except BaseException as exc:  # the result's own code (a type's name, a numpy value) raised
                answer.append(("wrong", f"returned a result jury could not check: {_describe(exc)}"))
                return
            answer.append(("wrong", f"returned {problem}") if problem is not None else ("value", value))

        worker = threading.Thread(target=run, name=f"jury-plugin-{plugin.name}", daemon=True)
        worker.start()
        worker.join(seconds)  # Ctrl-C interrupts the wait: the KeyboardInterrupt stops jury
        if not answer:  # still running (a thread cannot be killed: it is left, a daemon)
            hung.append(seconds)
            raise PluginError(f"{where} did not answer within {seconds:g} s ({TIMEOUT_ENV} sets the bound)")
        kind, value = answer[0]
        if kind == "interrupt":
            raise KeyboardInterrupt
        if kind == "wrong":
            raise PluginError(f"{where} {value}")
        return value

    try:  # the plugin's name and docstring on the wrapper, when its attributes can be read
        return functools.wraps(fn)(call)
    except Exception:
        return call


def _describe(exc: BaseException) -> str:
    """An exception as a PluginError quotes it: its class name and, when reading it raises
    nothing, a short printable excerpt of its message (``"ValueError: bad row"``)."""
    name = type_name(exc)
    try:
        text = _excerpt(str(exc))
    except BaseException as inner:  # its __str__ raises too: say so, never call its __repr__
        text = f"(its message could not be read: {type_name(inner)})"
    return f"{name}: {text}" if text else name


def type_name(value: object) -> str:
    """The name of ``value``'s type as the interpreter knows it (no metaclass property is asked):
    what a message about a plugin's result or exception may quote."""
    name = type.__dict__["__name__"].__get__(type(value), type)
    return _excerpt(name, 80) or "?"


def _excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` on one printable line: control and format characters (escapes, bidi overrides,
    NUL) made spaces, runs of space made one, cut to ``limit`` characters with an ellipsis."""
    if type(text) is not str:  # a str subclass may override what joining it calls
        text = str.__str__(text) if isinstance(text, str) else ""
    text = text[: 4 * limit]  # a message of a million characters is cleaned no further than shown
    clean = "".join(" " if unicodedata.category(ch)[0] in "CZ" else ch for ch in text)
    one = " ".join(clean.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


def _is_jury(ep: EntryPoint) -> bool:
    dist = ep.dist
    return dist is not None and _normal(dist.name) == JURY_DISTRIBUTION


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
