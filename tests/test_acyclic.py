"""The cyclic collector paused while a stage builds acyclic objects, and as the caller had it
afterwards: on or off, after an error too, and after a whole scan and gate called from Python
(a notebook's setting is the notebook's)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

import schemaguard as sg
from schemaguard.acyclic import acyclic, freezing_stages


@pytest.fixture
def collector() -> Iterator[None]:
    """The test process's collector as it was, whatever a test does to it."""
    was, threshold = gc.isenabled(), gc.get_threshold()
    yield
    gc.set_threshold(*threshold)
    (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
def test_paused_inside_and_as_it_was_after_even_on_an_error(collector: None, enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    with acyclic():
        assert not gc.isenabled()
    assert gc.isenabled() is enabled

    @acyclic()
    def failing() -> None:
        assert not gc.isenabled()
        raise ValueError("a stage's error")

    with pytest.raises(ValueError, match="a stage's error"):
        failing()
    assert gc.isenabled() is enabled
    with acyclic(), acyclic():  # stages nest: the inner one leaves it paused for the outer
        pass
    assert gc.isenabled() is enabled


def test_a_scan_and_a_gate_leave_the_callers_collector_as_it_was(collector: None, lake: Path) -> None:
    gc.enable()
    gc.set_threshold(700, 10, 10)
    scanned = sg.scan(str(lake / "orders"))
    assert scanned.to_dict()["counts"]["versions"] == 4
    sg.gate(str(lake / "orders"))
    assert (gc.isenabled(), gc.get_threshold()) == (True, (700, 10, 10))


def test_inside_freezing_stages_what_a_stage_leaves_is_frozen_and_only_there(collector: None) -> None:
    """Only where a command that owns its process asked (`scan`, `gate`): objects alive as a stage
    ends are out of the collector's sight, and refcounting still frees them; before and after,
    nothing is frozen."""
    import weakref

    class Kept:
        pass

    gc.unfreeze()
    try:
        with acyclic():
            kept = Kept()
        assert gc.get_freeze_count() == 0  # a caller's process: nothing frozen
        with freezing_stages():
            with acyclic():
                kept = Kept()
            assert gc.get_freeze_count() > 0
        gone = weakref.ref(kept)
        del kept
        assert gone() is None
        gc.unfreeze()
        with acyclic():
            Kept()
        assert gc.get_freeze_count() == 0  # as it was after
    finally:
        gc.unfreeze()


def test_the_command_lines_scan_freezes_only_while_it_runs(collector: None, lake: Path) -> None:
    """`schemaguard scan` run in this process (as the fast tests run it) leaves no freezing behind."""
    from schemaguard import acyclic as module
    from tests.helpers import run_here

    run_here("scan", str(lake / "orders"), "--format", "json")
    assert module._freezing is False
    gc.unfreeze()
