"""`jury report` runs with the cyclic garbage collector paused (issue 46: its full passes over the
report's live objects were ~2 s of CPU), and the collector comes back as it was."""

from __future__ import annotations

import gc

import pytest

from jury.cli import report as cli_report
from jury.cli.common import cycle_collector_paused


@pytest.fixture
def collector_restored():
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


@pytest.mark.parametrize("before", [True, False])
def test_paused_inside_and_restored_after(collector_restored, before):
    (gc.enable if before else gc.disable)()
    with cycle_collector_paused():
        assert not gc.isenabled()
        kept = [[]]
        kept[0].append(kept)  # a cycle made while paused
    assert gc.isenabled() is before
    assert gc.get_freeze_count() == 0  # moved to the oldest generation, not left frozen
    assert gc.is_tracked(kept)


def test_restored_after_an_error(collector_restored):
    gc.enable()
    with pytest.raises(RuntimeError), cycle_collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_report_command_runs_paused(collector_restored, monkeypatch):
    gc.enable()
    seen = []
    monkeypatch.setattr(cli_report, "_run", lambda runs, o: seen.append((runs, o, gc.isenabled())))
    cli_report.run(None, "options")
    assert seen == [(None, "options", False)]
    assert gc.isenabled()
