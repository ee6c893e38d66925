"""A footer's Spark schema (the `org.apache.spark.sql.parquet.row.metadata` key) against the same
footer's Parquet schema: Spark takes its table schema from the first, so a disagreement means
Spark reads something else than the file holds."""

from __future__ import annotations

from collections import defaultdict

from schemaguard.base import errors
from schemaguard.checks.field_ids import alone
from schemaguard.checks.finding import Finding, FindingCode, finding
from schemaguard.checks.versions import named
from schemaguard.formats.notation import describe
from schemaguard.formats.parquet import SPARK_SCHEMA_KEY, FooterSchema
from schemaguard.formats.spark import SparkSchemaError, type_to_spark
from schemaguard.formats.spark_view import spark_view
from schemaguard.lake.history import SchemaVersion, leaf_layouts
from schemaguard.lake.table import TableRead
from schemaguard.model import DataType, is_nested, walk
from schemaguard.paths import ancestors
from schemaguard.rules.profiles import can_read


def spark_refusals(table: TableRead, _: object = None) -> list[Finding]:
    """Versions whose footer Spark refuses whole (a shape the model has no type for): every read
    of those files fails, merged or not. O(versions)."""
    return [finding(FindingCode.SPARK_CANNOT_READ_FOOTER,
                    f"Spark cannot read the {len(v.files)} file(s) of v{v.number}: {why}", [v], "",
                    [(f"v{v.number}", why)], subject=f"v{v.number}")
            for v in table.versions if (why := v.footer.spark_refusal)]


def spark_footer_disagreements(table: TableRead, _: object = None) -> list[Finding]:
    """Per path, the versions whose footer's Spark schema disagrees with its Parquet schema.
    O(versions x nodes x depth): each node once, its ancestors looked up in a set."""
    seen: dict[str, list[tuple[SchemaVersion, str]]] = defaultdict(list)
    for v in table.versions:
        for path, why in spark_vs_parquet(v.footer).items():
            seen[path].append((v, why))
    return [
        finding(FindingCode.SPARK_SCHEMA_DISAGREES_WITH_PARQUET,
                f"`{path}`: the Spark schema in the footer ({SPARK_SCHEMA_KEY.decode()}) disagrees with "
                f"the file's Parquet schema in {named(v for v, _ in hits)}: {hits[0][1]}. Spark takes "
                "its table schema and its mergeSchema input from that Spark schema, not from the Parquet "
                "one; Spark never writes such a footer, another writer copied or edited it",
                [v for v, _ in hits], path, [(f"v{v.number}", why) for v, why in hits])
        for path, hits in seen.items()
    ]


def spark_vs_parquet(footer: FooterSchema) -> dict[str, str]:
    """Per path, how the footer's Spark schema disagrees with its Parquet schema: a node on one side
    only, another type, another nullability. Types are compared as Spark reads the Parquet column
    (`spark_view`), so the layouts Spark itself writes for its types (INT96 or ms/us timestamps,
    FLBA or INT32/INT64 decimals, legacy lists and maps) agree. Below a node on one side only, or
    of another shape, nothing more is compared."""
    if footer.spark_schema is None:
        return {}
    parquet = {p: (t, n) for p, t, n in walk(footer.schema)}
    spark = {p: (t, n) for p, t, n in walk(footer.spark_schema)}
    layouts = leaf_layouts(footer)
    found: dict[str, str] = {}
    cut: set[str] = set()  # nodes below which nothing is compared (a node precedes its children)
    for path in dict.fromkeys([*parquet, *spark]):
        if cut and any(a in cut for a in ancestors(path)):
            continue
        p, s = parquet.get(path), spark.get(path)
        if p is None or s is None or _shape(p[0]) != _shape(s[0]):
            cut.add(path)
        why = _disagreement(p, s, layouts.get(path))
        if why:
            found[path] = why
    return found


def _shape(t: DataType) -> str:
    return type(t).__name__ if is_nested(t) else "primitive"


Node = tuple[DataType, bool]


def _disagreement(parquet: Node | None, spark: Node | None, layout: str | None) -> str:
    if parquet is None:
        shown = _spark_name(spark[0]) if spark else "?"
        return f"Spark's schema has it ({shown}), the Parquet schema does not"
    if spark is None:
        return f"the Parquet schema has it ({layout or describe(parquet[0])}), Spark's schema does not"
    parts = [_type_disagreement(parquet[0], spark[0], layout)]
    if parquet[1] != spark[1]:
        parts.append(f"Spark says {'nullable' if spark[1] else 'not null'}, the Parquet schema "
                     f"{'OPTIONAL' if parquet[1] else 'REQUIRED'}")
    return "; ".join(p for p in parts if p)


def _type_disagreement(parquet: DataType, spark: DataType, layout: str | None) -> str:
    if is_nested(parquet) or is_nested(spark):
        same = type(parquet) is type(spark)
        return "" if same else f"Spark says {_spark_name(spark)}, the Parquet schema has {describe(parquet)}"
    seen = spark_view(parquet)
    if seen == spark:
        return ""
    how = f"Spark reads it as {_spark_name(seen)}" if not isinstance(seen, str) else seen
    fails = errors(can_read(alone(parquet), alone(spark), "spark-read"))
    verdict = "its reader fails on the file" if fails else "its reader converts the values"
    return (f"Spark says {_spark_name(spark)}, the Parquet column is {layout or describe(parquet)} "
            f"({how}; {verdict})")


def _spark_name(t: DataType) -> str:
    """A type as Spark's schema JSON spells it (`timestamp`, `long`), so the Spark side of a
    disagreement reads in Spark's words; nested types in the notation."""
    try:
        name = type_to_spark(t)
    except SparkSchemaError:
        return describe(t)
    return name if isinstance(name, str) else describe(t)
