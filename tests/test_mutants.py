"""The planted faults (tests/mutants.py) still plant: each one's text occurs exactly once in its
file, so moving or renaming code cannot turn a fault into a no-op that `make mutants` would only
find when its sample draws it."""

from __future__ import annotations

import pytest

from tests.mutants import MUTANTS, ROOT, Mutant


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.what)
def test_each_fault_names_text_that_occurs_once_in_its_file(mutant: Mutant) -> None:
    assert (ROOT / mutant.file).read_text(encoding="utf-8").count(mutant.old) == 1
