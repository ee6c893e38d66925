"""Planted faults: each a one-line change a real bug could make, in every stage (formats, lake,
rules, checks, proofs, plan, migrate, report). `make mutants` applies them one at a time to a
copy of the project, runs the tests that guard that code (no JVM: the rule tables' own tests and
the oracle-backed ones that run without one), and prints `caught N/M` last; a fault is caught
only when a test fails (pytest exits 1) within the time limit, and it fails unless every fault
is caught.

    python -m tests.mutants            # all of them
    python -m tests.mutants 3 7        # some, by number
    python -m tests.mutants --sample 10  # ten, drawn by a seed that changes daily (`make test`)

The sample's seed is printed; `SCHEMAGUARD_MUTANT_SEED=S` draws the same sample again.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The engines' stored truth tables guard every leaf-type row of spark-read, spark-merge, delta-merge.
TRUTH = ("tests/test_truth_tables.py",)
RULES = ("tests/test_profiles.py", "tests/test_cli_rules.py", "tests/test_oracle_avro.py", *TRUTH)
CHANGES = ("tests/test_changes.py", "tests/test_plan.py")
FOOTERS = ("tests/test_parquet_footer.py", "tests/test_footer_files.py")
AVRO = ("tests/test_profiles.py", "tests/test_cli_rules.py", "tests/test_formats_avro.py",
        "tests/test_notation.py")
MERGES = ("tests/test_profiles.py", "tests/test_cli_rules.py", "tests/test_gate.py", *TRUTH)
LAKE = ("tests/test_discover.py",)
PROOFS = ("tests/test_proofs.py",)
CHECKS = ("tests/test_audit.py",)
MIGRATE = ("tests/test_migrate_records.py",)
REPORT = ("tests/test_render.py",)
USAGE = ("tests/test_plan_usage.py", "tests/test_plan.py")
EVIDENCE = ("tests/test_plan_evidence.py", "tests/test_plan.py", "tests/test_plan_usage.py",
            "tests/test_plan_consumers.py")
NAMES = ("tests/test_model.py", "tests/test_plan_sql.py", "tests/test_plan_ddl.py")


@dataclass(frozen=True, slots=True)
class Mutant:
    what: str
    file: str
    old: str  # must occur exactly once in the file
    new: str
    tests: tuple[str, ...]


MUTANTS = (
    Mutant("Avro int -> float promotion row dropped", "src/schemaguard/rules/avro.py",
           '_PROMOTIONS = {("long", "int"), ("float", "int"), ',
           '_PROMOTIONS = {("long", "int"), ', AVRO),
    Mutant("Avro float -> double promotion flipped", "src/schemaguard/rules/avro.py",
           '("double", "float"), ("bytes", "string")', '("float", "double"), ("bytes", "string")', AVRO),
    Mutant("Avro names compared with their namespaces", "src/schemaguard/rules/avro.py",
           "if r.short_name == w.short_name or w.name in r.aliases:",
           "if r.name == w.name or w.name in r.aliases:", AVRO),
    Mutant("Avro writer union checked on its first branch only", "src/schemaguard/rules/avro.py",
           "return [x for i, branch in enumerate(w.branches) for x in",
           "return [x for i, branch in enumerate(w.branches[:1]) for x in", AVRO),
    Mutant("positional swap of same-typed columns called loud", "src/schemaguard/rules/read.py",
           "POSITION_NAME, quiet=True)]", "POSITION_NAME)]", RULES),
    Mutant("a Delta stream ignores an added column", "src/schemaguard/rules/read.py",
           "        if extra is None:\n", "        if True:\n", RULES),
    Mutant("Spark int -> decimal precision bound off by one", "src/schemaguard/rules/promotions.py",
           "and r.precision - r.scale >= (20 if w.bits == 64 else 10), raw=True),",
           "and r.precision - r.scale >= (20 if w.bits == 64 else 9), raw=True),", RULES),
    Mutant("Delta integer widening runs the wrong way", "src/schemaguard/rules/promotions.py",
           "lambda w, r, o: (_int_bits(w) or 99) < (_int_bits(r) or 0)),",
           "lambda w, r, o: (_int_bits(r) or 99) < (_int_bits(w) or 0)),", MERGES),
    Mutant("Delta widening lets long become double", "src/schemaguard/rules/promotions.py",
           "lambda w, r, o: not o.uniform and (_int_bits(w) or 99) <= 32 and r == FloatType(64)),",
           "lambda w, r, o: not o.uniform and (_int_bits(w) or 99) <= 64 and r == FloatType(64)),", MERGES),
    Mutant("Iceberg decimal promotion allows a scale change", "src/schemaguard/rules/promotions.py",
           "              lambda w, r, o: _same_scale_wider(w, r)),",
           "              lambda w, r, o: _decimal_widens(w, r)),", RULES),
    Mutant("decimal widening loses one digit of scale", "src/schemaguard/rules/promotions.py",
           "and r.scale >= w.scale and r.precision - r.scale >= w.precision - w.scale)",
           "and r.scale >= w.scale - 1 and r.precision - r.scale >= w.precision - w.scale)", RULES),
    Mutant("Spark reads UINT32 as double", "src/schemaguard/rules/promotions.py",
           "        return _stored_on_int32(w) and w != IntType(32, False)",
           "        return _stored_on_int32(w)", RULES),
    Mutant("an INT32 read as a narrower integer accepted", "src/schemaguard/rules/promotions.py",
           "    return bool(-(2 ** (r.bits - 1)) <= values[0] and values[1] <= 2 ** (r.bits - 1) - 1)",
           "    return True", RULES),
    Mutant("a scale-0 decimal on INT64 read as int", "src/schemaguard/rules/promotions.py",
           "and (r.bits == 64 or _stored_on_int32(w))", "and (r.bits >= 32 or _stored_on_int32(w))", RULES),
    Mutant("binary read as string called safe", "src/schemaguard/rules/promotions.py",
           "isinstance(w, BinaryType) and isinstance(r, StringType), raw=True, quiet=True),",
           "isinstance(w, BinaryType) and isinstance(r, StringType), raw=True),", RULES),
    Mutant("a UINT64 read as any wider decimal", "src/schemaguard/rules/promotions.py",
           "lambda w, r, o: _decimal_widens(w, r), raw=True),", "lambda w, r, o: _decimal_widens(w, r)),",
           RULES),
    Mutant("the row reader's too-narrow decimal called a refusal", "src/schemaguard/rules/promotions.py",
           "or _int_digits(w) is not None),\n              raw=True, quiet=True),",
           "or _int_digits(w) is not None),\n              raw=True, refused=True),", RULES),
    Mutant("an interval read with a coarser finest field called exact", "src/schemaguard/rules/promotions.py",
           "INTERVAL_FIELDS.index(r.end) < INTERVAL_FIELDS.index(w.end)",
           "INTERVAL_FIELDS.index(r.end) > INTERVAL_FIELDS.index(w.end)", RULES),
    Mutant("intervals of one kind refused by mergeSchema", "src/schemaguard/rules/merge.py",
           "            if lt.months == rt.months:\n", "            if lt.months != rt.months:\n", RULES),
    Mutant("MERGE INTO: a decimal rounded up past its integer digits called no overflow",
           "src/schemaguard/rules/promotions.py",
           "return digits > room or (w.scale > r.scale and digits == room)", "return digits > room", RULES),
    Mutant("MERGE INTO: a value written into a string column called unchanged",
           "src/schemaguard/rules/promotions.py", "lambda w, r, o: isinstance(r, StringType), quiet=True),",
           "lambda w, r, o: isinstance(r, StringType)),", RULES),
    Mutant("the row reader widens INT64 to double", "src/schemaguard/rules/promotions.py",
           'FloatType(64): ("INT32", "FLOAT", "DOUBLE"),',
           'FloatType(64): ("INT32", "INT64", "FLOAT", "DOUBLE"),', RULES),
    Mutant("Spark's TIME refused before merging", "src/schemaguard/formats/spark_view.py",
           'CONVERTED_UNSUPPORTED = (TimeType("us"),)', "CONVERTED_UNSUPPORTED = ()", MERGES),
    Mutant("Delta read accepts tightened nullability", "src/schemaguard/rules/read.py",
           '"be read as not null", f"{CR} §4 isReadCompatible"), tighten_ok=False,',
           '"be read as not null", f"{CR} §4 isReadCompatible"), tighten_ok=True,', RULES),
    Mutant("Spark read checks nullability", "src/schemaguard/rules/read.py",
           'f"{PS} §2.5"), tighten_ok=True,', 'f"{PS} §2.5"), tighten_ok=False,', RULES),
    Mutant("Delta reads an added NOT NULL column", "src/schemaguard/rules/read.py",
           'ADD COLUMNS ... NOT NULL"),\n    missing_ok=lambda f, o: f.nullable,',
           'ADD COLUMNS ... NOT NULL"),\n    missing_ok=lambda f, o: True,', RULES),
    Mutant("Iceberg's v3 initial-default read on v2", "src/schemaguard/rules/read.py",
           "missing_ok=lambda f, o: f.nullable or (o.iceberg_version >= 3 and f.has_default),",
           "missing_ok=lambda f, o: f.nullable or f.has_default,", RULES),
    Mutant("Avro reads a missing field without a default", "src/schemaguard/rules/avro.py",
           "            elif rf.default_json is None:\n", "            elif False:\n", AVRO),
    Mutant("case-insensitive matching made case-sensitive", "src/schemaguard/rules/identity.py",
           'out = [exact, ("name-ci", lambda w: w.name.lower(), lambda r: (r.name.lower(),))]',
           'out = [exact, ("name-ci", lambda w: w.name, lambda r: (r.name,))]', RULES + CHANGES),
    Mutant("id readers fall back to names for fields with ids", "src/schemaguard/rules/identity.py",
           'lambda r: (r.name,) if r.id is None else ())]',
           'lambda r: (r.name,))]', RULES + CHANGES),
    Mutant("Spark merge ANDs nullability", "src/schemaguard/rules/merge.py",
           "return new_field(reader.name, type_result, reader.nullable or writer.nullable, reader.id)",
           "return new_field(reader.name, type_result, reader.nullable and writer.nullable, reader.id)",
           MERGES),
    Mutant("Spark merge takes the smaller decimal precision", "src/schemaguard/rules/merge.py",
           "return DecimalType(max(lt.precision, rt.precision), lt.scale)",
           "return DecimalType(min(lt.precision, rt.precision), lt.scale)", MERGES),
    Mutant("Delta's byte/short/int mix excludes int", "src/schemaguard/rules/merge.py",
           "return isinstance(t, IntType) and t.signed and t.bits <= 32",
           "return isinstance(t, IntType) and t.signed and t.bits <= 16", MERGES),
    Mutant("Spark merge ignores spark.sql.caseSensitive", "src/schemaguard/rules/merge.py",
           "return name if self.o.case_sensitive else name.lower()", "return name.lower()", MERGES),
    Mutant("Spark reads UINT32 as int (converter)", "src/schemaguard/formats/spark_view.py",
           "return {8: IntType(16), 16: IntType(32), 32: IntType(64)}.get(t.bits, DecimalType(20, 0))",
           "return {8: IntType(16), 16: IntType(32), 32: IntType(32)}.get(t.bits, DecimalType(20, 0))",
           RULES + MERGES),
    Mutant("Spark timestamp unit swapped to millis", "src/schemaguard/formats/spark_view.py",
           'return TimestampType("us", t.utc)', 'return TimestampType("ms", t.utc)', RULES + MERGES),
    Mutant("INT96 loses its UTC flag", "src/schemaguard/formats/spark_view.py",
           '        return TimestampType("us", True)\n    return t',
           '        return TimestampType("us", False)\n    return t', RULES + MERGES),
    Mutant("legacy TIMESTAMP_MILLIS/MICROS units swapped", "src/schemaguard/formats/parquet/elements.py",
           '9: TimestampType("ms", True), 10: TimestampType("us", True),',
           '9: TimestampType("us", True), 10: TimestampType("ms", True),', FOOTERS),
    Mutant("unsigned INTEGER logical types read as signed", "src/schemaguard/formats/parquet/elements.py",
           "return IntType(body[1], bool(body.get(2)))", "return IntType(body[1], True)", FOOTERS),
    Mutant("signed -> unsigned counted as widening", "src/schemaguard/rules/changes.py",
           "fits = new.bits > old.bits and (new.signed or not old.signed)",
           "fits = new.bits > old.bits", CHANGES),
    Mutant("int64 -> double counted as exact", "src/schemaguard/rules/changes.py",
           "_MANTISSA_BITS = {16: 11, 32: 24, 64: 53}", "_MANTISSA_BITS = {16: 11, 32: 24, 64: 63}", CHANGES),
    Mutant("a rename under name identity shipped as one edit", "src/schemaguard/planning/treatments.py",
           '("quiet", "quiet"), "readers by name read nulls for a renamed column, both ways",\n'
           "        always_staged=True),",
           '("quiet", "quiet"), "readers by name read nulls for a renamed column, both ways",\n'
           "        always_staged=False),", CHANGES),
    Mutant("the deploy order's mode inverted", "src/schemaguard/planning/planner.py",
           'base = {"readers-first": "BACKWARD", "writers-first": "FORWARD", "unknown": "FULL"}[order]',
           'base = {"readers-first": "FORWARD", "writers-first": "BACKWARD", "unknown": "FULL"}[order]',
           CHANGES),
    # The stages past the rules (issue 36: every stage has planted faults)
    Mutant("a hidden-looking partition folder (`_bucket=3`) skipped", "src/schemaguard/lake/discover.py",
           'if name.startswith("_") and "=" not in name:', 'if name.startswith("_"):', LAKE),
    Mutant("a file whose new column still holds one null called backfilled",
           "src/schemaguard/proofs/stats.py",
           "    if new_nulls == 0:\n", "    if new_nulls is not None and new_nulls <= 1:\n", PROOFS),
    Mutant("`fits` checks the minimum only", "src/schemaguard/proofs/stats.py",
           "if low < lowest or high > highest:", "if low < lowest:", PROOFS),
    Mutant("a footer's null count trusted for a file of nulls only, any row count",
           "src/schemaguard/proofs/stats.py",
           "if stats.null_count is not None and stats.null_count == f.rows:",
           "if stats.null_count is not None and stats.null_count > 0:", PROOFS),
    Mutant("the fail level fails only what is worse than it", "src/schemaguard/checks/finding.py",
           "return SEVERITIES.index(finding.severity) >= SEVERITIES.index(fail_level)",
           "return SEVERITIES.index(finding.severity) > SEVERITIES.index(fail_level)", CHECKS),
    Mutant("a resumed step records the rerun's version as the one before it", "src/schemaguard/migrate.py",
           'resumed = earlier is not None and earlier.status == STARTED and r["status"] != STARTED',
           "resumed = False", MIGRATE),
    Mutant("a rollback killed before it finished clears the steps", "src/schemaguard/migrate.py",
           'if r["step"] == ROLLBACK and r["status"] == APPLIED:', 'if r["step"] == ROLLBACK:', MIGRATE),
    Mutant("SARIF writes an info finding as a warning", "src/schemaguard/report/sarif.py",
           '"info": "note"}', '"info": "warning"}', REPORT),
    Mutant("a logged query without a time left out of the window", "src/schemaguard/planning/usage/tally.py",
           "return when is None or not ((since and when < since) or (until and when > until))",
           "return when is not None and not ((since and when < since) or (until and when > until))", USAGE),
    Mutant("a column's last read is its first", "src/schemaguard/planning/usage/tally.py",
           "if q.timestamp and (self.last is None or q.timestamp > self.last):",
           "if q.timestamp and self.last is None:", USAGE),
    Mutant("a table named without its database is another table", "src/schemaguard/planning/usage/records.py",
           "return bool(named) and (named[-len(parts):] == parts or parts[-len(named):] == named)",
           "return bool(named) and named == parts", USAGE),
    Mutant("queries that could not be resolved count as no read", "src/schemaguard/planning/evidence.py",
           "    if usage.unresolved:\n", "    if False:\n", EVIDENCE),
    Mutant("a read of the column spelt in another case is no read", "src/schemaguard/planning/evidence.py",
           "seen = {c.lower(): u for c, u in usage.columns.items()}.get(top.lower())",
           "seen = usage.columns.get(top)", EVIDENCE),
    Mutant("consumer SQL that could not be parsed counts as none found",
           "src/schemaguard/planning/evidence.py",
           "    if unparsed:\n", "    if False:\n", EVIDENCE),
    Mutant("a file without the defaulted column reads no default", "src/schemaguard/planning/evidence.py",
           "lacking = [f for f in table.scan.footers if find(f.footer) is None]",
           "lacking = [f for f in table.scan.footers if find(f.footer) is None and f.rows == 0]", EVIDENCE),
    Mutant("a backtick inside an identifier left single", "src/schemaguard/formats/spark_ddl.py",
           'return "`" + name.replace("`", "``") + "`"', 'return "`" + name + "`"', NAMES),
    Mutant("a waiver lapses on its last day", "src/schemaguard/checks/finding.py",
           "return today <= self.expires", "return today < self.expires", CHECKS),
    Mutant("a footer's MILLIS timestamps read as micros", "src/schemaguard/formats/parquet/elements.py",
           '{1: ("MILLIS", "ms"), 2: ("MICROS", "us"),', '{1: ("MILLIS", "us"), 2: ("MICROS", "us"),',
           FOOTERS),
    Mutant("unit drift needs a step past its threshold twice over", "src/schemaguard/proofs/run.py",
           "if step is None or step.ratio < THRESHOLD:", "if step is None or step.ratio < 2 * THRESHOLD:",
           PROOFS),
    Mutant("a hidden `.name.parquet` file listed as data", "src/schemaguard/lake/discover.py",
           'if name.startswith("."):', 'if name.startswith(".") and not name.endswith(".parquet"):', LAKE),
    Mutant("a step's record keeps no entry checks", "src/schemaguard/migrate.py",
           'for c in json.loads(r.get("checks_json") or "[]"))', 'for c in json.loads("[]"))', MIGRATE),
    Mutant("JUnit leaves a waived finding's skip uncounted", "src/schemaguard/report/junit.py",
           "            skipped += 1\n", "", REPORT),
    Mutant("a path segment with a dot written bare", "src/schemaguard/paths.py",
           "_PLAIN.fullmatch(name) else", "_PLAIN.fullmatch(name.replace('.', '')) else", NAMES),
    Mutant("a link back to a directory the listing is inside followed", "src/schemaguard/lake/discover.py",
           "None if _leads_back(st, inside) else", "None if False else", LAKE),
    Mutant("a column held two ways across versions taken as one way", "src/schemaguard/checks/versions.py",
           "Counter(key for key, _ in distinct).items() if n > 1}",
           "Counter(key for key, _ in distinct).items() if n > 2}", CHECKS),
)


def _copy(into: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for part in ("src", "tests", "docs"):  # docs/: the plan's, rules' and API's tests read their pages
        shutil.copytree(ROOT / part, into / part, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):  # pytest's settings, and the README beside docs/
        shutil.copy(ROOT / name, into / name)


def _environment(copy: Path) -> dict[str, str]:
    """As `make test-fast` runs: no JVM (a fake `java` first on PATH), the copy's source first."""
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    no_jvm = str(ROOT / "tests" / "no-jvm")
    env.update(PYTHONPATH=str(copy / "src"), SPARK_CONF_DIR=no_jvm, PATH=f"{no_jvm}:{env.get('PATH', '')}")
    return env


# pytest's exit codes: 0 all passed, 1 some test failed; 2-5 (interrupted, internal error, usage
# error, no tests collected) say nothing about the fault, and a run past the limit neither.
TESTS_FAILED = 1
LIMIT_SECONDS = 600


def _pytest(copy: Path, tests: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m",
               "not spark and not slow and not chromium", "-o", "addopts=", *tests]
    try:
        return subprocess.run(command, cwd=copy, env=_environment(copy), capture_output=True, text=True,
                              timeout=LIMIT_SECONDS)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, -1, "", f"no verdict within {LIMIT_SECONDS} s")


def run(mutant: Mutant) -> bool:
    """Is the planted fault caught: some relevant test fails (pytest exits 1) within the limit?"""
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        copy = Path(tmp)
        _copy(copy)
        target = copy / mutant.file
        text = target.read_text(encoding="utf-8")
        if text.count(mutant.old) != 1:
            raise SystemExit(f"mutant {mutant.what!r}: its line is not in {mutant.file} exactly once; "
                             "update tests/mutants.py")
        target.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
        return _pytest(copy, mutant.tests).returncode == TESTS_FAILED


def baseline(chosen: list[Mutant]) -> None:
    """Unmutated, every test the chosen faults use must pass, or a 'caught' would mean nothing."""
    tests = tuple(sorted({t for m in chosen for t in m.tests}))
    with tempfile.TemporaryDirectory(prefix="mutant-base-") as tmp:
        _copy(Path(tmp))
        done = _pytest(Path(tmp), tests)
        if done.returncode != 0:
            raise SystemExit("the unmutated copy fails its tests:\n" + done.stdout[-3000:])
        check = subprocess.run([sys.executable, "-c", "import schemaguard; print(schemaguard.__file__)"],
                               env=_environment(Path(tmp)), capture_output=True, text=True)
        if not check.stdout.startswith(tmp):
            raise SystemExit(f"the copy's source is not the one imported: {check.stdout.strip()}")


def sample(size: int) -> list[Mutant]:
    """`size` faults drawn by a seed (today's day number unless SCHEMAGUARD_MUTANT_SEED gives
    one), printed so that a run can be repeated."""
    seed = int(os.environ.get("SCHEMAGUARD_MUTANT_SEED", date.today().toordinal()))
    print(f"mutants: a sample of {size} of {len(MUTANTS)}, seed {seed} (SCHEMAGUARD_MUTANT_SEED={seed} "
          "draws it again)", flush=True)
    return random.Random(seed).sample(list(MUTANTS), min(size, len(MUTANTS)))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--sample"]:
        chosen = sample(int(argv[1]))
    else:
        chosen = [MUTANTS[int(a) - 1] for a in argv] if argv else list(MUTANTS)
    baseline(chosen)
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        results = list(pool.map(run, chosen))
    for m, caught in zip(chosen, results, strict=True):
        print(f"{'caught  ' if caught else 'SURVIVED'} {MUTANTS.index(m) + 1:2}. {m.what} ({m.file})")
    total = sum(results)
    print(f"caught {total}/{len(chosen)}")
    return 0 if total == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
