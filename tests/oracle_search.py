"""`make oracle`: a randomized search against the real engines, several thousand pairs.

The same cases and checks as the oracle tests (spark-read, spark-merge over 3 to 5 files in any
order, delta-merge, delta-write and delta-merge-into with and without type widening), drawn afresh
each run instead of the fixed sample `make test` runs. Every disagreement is written to
`tests/oracle_cases/` as a case that `tests/test_oracle_cases.py` replays in `make test` from then
on; the run prints what it found and exits 1 when it found anything.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from schemaguard.formats.notation import dumps, loads
from schemaguard.model import Schema

CASES = Path(__file__).resolve().parent / "oracle_cases"
# of the pairs asked for
SHARE = {"spark-read": 0.35, "spark-merge": 0.25, "delta-merge": 0.15, "delta-write": 0.10,
         "delta-merge-into": 0.15}


def encode(oracle: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """A case as JSON: schemas in the project's notation, the rest as it is."""
    def one(x: Any) -> Any:
        if isinstance(x, Schema):
            return json.loads(dumps(x))
        if isinstance(x, list | tuple):
            return [one(y) for y in x]
        return x

    return {"oracle": oracle, "args": [one(a) for a in args]}


def decode(doc: dict[str, Any]) -> tuple[str, list[Any]]:
    def one(x: Any) -> Any:
        if isinstance(x, dict):
            return loads(json.dumps(x))
        if isinstance(x, list):
            return [one(y) for y in x]
        return x

    return doc["oracle"], [one(a) for a in doc["args"]]


def checks() -> dict[str, tuple[Callable[..., object], st.SearchStrategy[Any]]]:
    """Each oracle's check and the strategy of its cases, from the oracle tests themselves."""
    from tests.oracles import delta_cases
    from tests.test_oracle_delta_merge import check_delta
    from tests.test_oracle_delta_merge_into import EVOLUTIONS, check_merge_into
    from tests.test_oracle_delta_write import check_write
    from tests.test_oracle_spark_merge import check_merge, merge_cases
    from tests.test_oracle_spark_read import check_read, read_cases

    return {
        "spark-read": (check_read, read_cases()),
        "spark-merge": (check_merge, merge_cases()),
        "delta-merge": (lambda spark, t, d, w: check_delta(spark, t, d, w),
                        st.tuples(delta_cases(), st.booleans()).map(lambda x: (*x[0], x[1]))),
        "delta-write": (lambda spark, t, d, w: check_write(spark, t, d, w),
                        st.tuples(delta_cases(), st.booleans()).map(lambda x: (*x[0], x[1]))),
        "delta-merge-into": (check_merge_into, st.tuples(delta_cases(), st.booleans(),
                                                         st.sampled_from(EVOLUTIONS)).map(
                                                             lambda x: (*x[0], x[1], x[2]))),
    }


def record(oracle: str, args: tuple[Any, ...], error: Exception) -> Path:
    doc = encode(oracle, args)
    text = json.dumps(doc, indent=1, sort_keys=True)
    path = CASES / f"{oracle}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.json"
    CASES.mkdir(exist_ok=True)
    from tests.oracles import conditions

    first_line = (str(error).splitlines() or [""])[0][:300]
    said = "|".join(conditions(error)) or f"{type(error).__name__}: {first_line}"
    path.write_text(json.dumps({**doc, "found": said}, indent=1) + "\n")
    return path


def search(spark: Any, oracle: str, pairs: int) -> list[Path]:
    check, cases = checks()[oracle]
    found: list[Path] = []
    done = 0
    started = time.monotonic()

    @settings(max_examples=pairs, derandomize=False, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=cases)
    def run(case: tuple[Any, ...]) -> None:
        nonlocal done
        try:
            check(spark, *case)
        except Exception as e:  # a disagreement, or an engine error no rule predicts: keep it
            found.append(record(oracle, case, e))
        done += 1
        if done % 25 == 0:
            print(f"\r{oracle}: {done}/{pairs} ({done / (time.monotonic() - started):.1f}/s), "
                  f"{len(found)} disagreements", end="", file=sys.stderr, flush=True)

    run()
    print(f"\r{oracle}: {done} pairs, {len(found)} disagreements{' ' * 20}", file=sys.stderr)
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="make oracle", description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2400, help="pairs in all (default 2400)")
    parser.add_argument("--only", choices=list(SHARE), help="search one oracle")
    args = parser.parse_args(argv)
    from tests.truth_tables import session

    spark = session()
    shares = {args.only: 1.0} if args.only else SHARE
    found = [p for oracle, share in shares.items() for p in search(spark, oracle, round(args.pairs * share))]
    for path in found:
        print(f"disagreement: {path.relative_to(CASES.parent.parent)}")
    print(f"{len(found)} disagreements")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
