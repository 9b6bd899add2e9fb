"""Every call of a plugin goes through one guard (jury.plugins._guarded): its result is checked
against its group's declared type (a comparator: True or False; an importer: an ImportReport of
run records), whatever it raises is a PluginError whose one line jury writes, and each call is
bounded in time (JURY_PLUGIN_TIMEOUT). Each bad plugin below is one line and exit 1, no
traceback; a KeyboardInterrupt it raises stops jury as Ctrl-C does (exit 130).

The comparator is installed as ``same_count`` (tests/support/plugins.py) and chosen on the shop
database of tests/test_plugins.py; question 1 is the first pair compared, so a failure names
model 'm', question 1.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from jury.compare.comparators import get_comparator
from jury.errors import PluginError
from jury.inputs.importers import IMPORTERS
from tests import test_plugins
from tests.support.clirun import run_jury_inprocess
from tests.test_plugins import ARGS, CSV

shop, install = test_plugins.shop, test_plugins.install  # the shop database and the plugin installer (fixtures)

WHERE = "comparator plugin 'same_count' (jury-same-count 0.1.0: jury_same_count:same_count)"
PAIR = "model 'm', question 1: "
SLEEPS = 3  # seconds a hanging plugin sleeps: well over the 0.5 s bound the tests set


def _comparator(body: str, prelude: str = "") -> str:
    """A plugin module whose same_count runs ``body`` (after module-level ``prelude``)."""
    return (
        textwrap.dedent(prelude)
        + "\ndef same_count(gold_rows, pred_rows, **_):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
    )


BAD_BOOL = """
class Shifty:
    def __bool__(self):
        raise RuntimeError("no truth")
"""
BAD_STR = """
class Mute(Exception):
    def __str__(self):
        raise ValueError("no words")
"""
BAD_REPR = """
class Mute(Exception):
    def __str__(self):
        raise ValueError("no words")

    def __repr__(self):
        raise ValueError("no words either")
"""
BAD_EQ = """
class Touchy:
    def __eq__(self, other):
        raise RuntimeError("do not compare me")

    __hash__ = None
"""
OWN_JURY_ERROR = """
from jury.errors import JuryError

class Quiet(JuryError):
    exit_code = 0
"""

# (plugin body, module prelude, the line's end after the plugin's name)
BAD_COMPARATORS = {
    "the string False": ('return "False"', "", "returned str, not a bool (True or False)"),
    "a list": ("return [1, 2]", "", "returned list, not a bool (True or False)"),
    "None": ("return None", "", "returned NoneType, not a bool (True or False)"),
    "the int 1": ("return 1", "", "returned int, not a bool (True or False)"),
    "a result whose __bool__ raises": ("return Shifty()", BAD_BOOL, "returned Shifty, not a bool (True or False)"),
    "a result whose __eq__ raises": ("return Touchy()", BAD_EQ, "returned Touchy, not a bool (True or False)"),
    "SystemExit(0)": ("raise SystemExit(0)", "", "failed: SystemExit: 0"),
    "SystemExit()": ("raise SystemExit", "", "failed: SystemExit"),
    "GeneratorExit": ("raise GeneratorExit('closed')", "", "failed: GeneratorExit: closed"),
    "an exception whose __str__ raises": ("raise Mute()", BAD_STR, "failed: Mute: (its message could not be read: ValueError)"),
    "an exception whose __str__ and __repr__ raise": (
        "raise Mute()",
        BAD_REPR,
        "failed: Mute: (its message could not be read: ValueError)",
    ),
    "a JuryError of its own with exit code 0": ("raise Quiet('all fine')", OWN_JURY_ERROR, "failed: Quiet: all fine"),
    "a message with escapes and line breaks": (
        r"raise ValueError('red \x1b[31mline\nnext\x00 \u202eevil')",
        "",
        "failed: ValueError: red [31mline next evil",
    ),
    "a message of 10,000 characters": ("raise ValueError('x' * 10_000)", "", "failed: ValueError: " + "x" * 199 + "…"),
}


@pytest.mark.parametrize("case", list(BAD_COMPARATORS))
def test_a_bad_comparator_is_one_line_and_exit_1(case: str, shop: Path, install) -> None:
    body, prelude, tail = BAD_COMPARATORS[case]
    install(source=_comparator(body, prelude))
    done = run_jury_inprocess([*ARGS, "--comparator", "same_count", "-f", "json"], shop)
    assert (done.returncode, done.stdout) == (1, "")  # nothing is written
    assert done.stderr.strip().splitlines() == [f"Error: {PAIR}{WHERE} {tail}"]


def test_a_comparator_that_does_not_answer_in_time_is_the_pairs_error(
    shop: Path,
    install,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    install(source=_comparator(f"import time\ntime.sleep({SLEEPS})\nreturn True"))
    done = run_jury_inprocess([*ARGS, "--comparator", "same_count"], shop, env={"JURY_PLUGIN_TIMEOUT": "0.5"})
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"Error: {PAIR}{WHERE} did not answer within 0.5 s (JURY_PLUGIN_TIMEOUT sets the bound)"
    ]
    # in this process the hung plugin is refused at once from then on (its thread is still asleep)
    monkeypatch.setenv("JURY_PLUGIN_TIMEOUT", "0.5")
    fn = get_comparator("same_count")
    with pytest.raises(PluginError) as refused:
        fn([(1,)], [(1,)])
    assert str(refused.value) == (
        f"{WHERE} did not answer within 0.5 s earlier in this run; jury calls it no more (set JURY_PLUGIN_TIMEOUT to give it longer)"
    )


def test_a_bound_that_is_no_number_of_seconds_is_one_line(shop: Path, install) -> None:
    install()
    done = run_jury_inprocess([*ARGS, "--comparator", "same_count"], shop, env={"JURY_PLUGIN_TIMEOUT": "soon"})
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == ["Error: JURY_PLUGIN_TIMEOUT must be a number of seconds > 0 (got 'soon')"]


def test_a_numpy_bool_is_a_bool(shop: Path, install) -> None:
    """numpy's bool (what ``(a == b).all()`` gives) is accepted, as True or False: same_count
    scores 2 of 3 (tests/test_plugins.py's docstring)."""
    pytest.importorskip("numpy")
    install(source=_comparator("return numpy.bool_(len(gold_rows) == len(pred_rows))", "import numpy\n"))
    done = run_jury_inprocess([*ARGS, "--comparator", "same_count", "-f", "json"], shop)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["models"][0]["strict"]["k"] == 2
    assert get_comparator("same_count")([(1,)], [(2,)]) is True  # handed on as Python's True


def test_a_keyboard_interrupt_a_plugin_raises_stops_jury_as_ctrl_c_does(shop: Path, install) -> None:
    install(source=_comparator("raise KeyboardInterrupt"))
    done = run_jury_inprocess([*ARGS, "--comparator", "same_count"], shop)
    assert done.returncode == 130
    assert done.stderr.strip().splitlines() == ["Interrupted: everything finished so far is kept in the store."]


IMPORTER = """
import time

from jury.inputs.importers import ImportReport


def exits(path, gold_items, model):
    raise SystemExit(0)


def sleeps(path, gold_items, model):
    time.sleep(SLEEPS)
    return ImportReport(records=[])


def tuples(path, gold_items, model):
    return ImportReport(records=[("q", "sql")], entries="two")
""".replace("SLEEPS", str(SLEEPS))

BAD_IMPORTERS = {
    "exits": "failed: SystemExit: 0",
    "sleeps": "did not answer within 0.5 s (JURY_PLUGIN_TIMEOUT sets the bound)",
    "tuples": (
        "returned an ImportReport whose records, entries are of the wrong type, "
        "not an ImportReport of RunRecords (jury.inputs.importers)"
    ),
}


@pytest.mark.parametrize("name", list(BAD_IMPORTERS))
def test_a_bad_importer_is_one_line_and_exit_1(name: str, shop: Path, install) -> None:
    points = {"jury.importers": {name: f"jury_bad:{name}" for name in BAD_IMPORTERS}}
    install(distribution="jury-bad", module="jury_bad", source=IMPORTER, entry_points=points)
    (shop / "answers.csv").write_text(CSV)
    args = ["import", "with", name, "answers.csv", "--gold", "gold.json", "-o", "m.jsonl"]
    done = run_jury_inprocess(args, shop, env={"JURY_PLUGIN_TIMEOUT": "0.5"})
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"Error: importer plugin {name!r} (jury-bad 0.1.0: jury_bad:{name}) {BAD_IMPORTERS[name]}"
    ]
    assert not (shop / "m.jsonl").exists()
    assert name in IMPORTERS
