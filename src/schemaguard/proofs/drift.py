"""Unit drift: a column whose magnitude steps by about two orders of magnitude at one point of the
table's order (cents written as dollars, milliseconds as seconds) while its type stays the same.

Each group (a partition directory in date order, else each file in commit order) has a
magnitude: the largest absolute value, from the footer's bounds when every file of the group has
exact ones, else from the data (Spark). The step is the single change point that best splits
the ordered groups' log magnitudes in two; a ratio of `THRESHOLD` or more between the two sides
refutes, naming the first group after the step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import NamedTuple

THRESHOLD = 50.0  # a unit change is 60x, 100x, 1000x; ordinary growth stays far below


class Step(NamedTuple):
    at: int  # index of the first group after the step
    ratio: float  # how many times larger one side is than the other (geometric means), >= 1


def largest_step(magnitudes: Sequence[Decimal]) -> Step | None:
    """The one change point in log10(magnitude) that explains the most (least squared error on
    each side, from prefix sums: linear in groups), and the ratio of the two sides' geometric
    means. Groups whose magnitude is 0 carry no scale and are left out. None with fewer than two
    groups that have one."""
    points = [(i, math.log10(m)) for i, m in enumerate(magnitudes) if m > 0]
    if len(points) < 2:
        return None
    logs = [v for _, v in points]
    total, total_sq, n = sum(logs), sum(v * v for v in logs), len(logs)
    best: tuple[float, int, float] | None = None
    s = sq = 0.0
    for k in range(1, n):
        s, sq = s + logs[k - 1], sq + logs[k - 1] ** 2
        left, right = s / k, (total - s) / (n - k)
        error = (sq - k * left * left) + (total_sq - sq - (n - k) * right * right)
        if best is None or error < best[0] - 1e-12:
            best = (error, k, abs(left - right))
    assert best is not None
    _, k, gap = best
    return Step(points[k][0], 10 ** gap)
