"""Avro-java's `SchemaCompatibility` (avro-*.jar in pyspark's jars) as an oracle, through the
SparkSession's py4j gateway. The verdict is read through the Java API (`getType()`,
`getResult().getIncompatibilities()`, each incompatibility's `getType()`, `getLocation()` and
`getMessage()`), never from printed text. A document Java's parser refuses raises `JavaRefused`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from py4j.protocol import Py4JJavaError

# Avro's SchemaIncompatibilityType names (org.apache.avro.SchemaCompatibility).
READER_FIELD_MISSING_DEFAULT_VALUE = "READER_FIELD_MISSING_DEFAULT_VALUE"
TYPE_MISMATCH = "TYPE_MISMATCH"
MISSING_ENUM_SYMBOLS = "MISSING_ENUM_SYMBOLS"
FIXED_SIZE_MISMATCH = "FIXED_SIZE_MISMATCH"
NAME_MISMATCH = "NAME_MISMATCH"
MISSING_UNION_BRANCH = "MISSING_UNION_BRANCH"
# Not an Avro type: `checkReaderWriterCompatibility` threw (AvroRuntimeException), as
# `lookupWriterField` does for a reader field whose name and an alias both name writer fields.
THREW = "THREW"


@dataclass(frozen=True, slots=True)
class JavaVerdict:
    compatible: bool
    incompatibilities: tuple[tuple[str, str], ...]  # (SchemaIncompatibilityType name, location)
    error: str | None = None  # the exception class when Java threw
    messages: tuple[str, ...] = ()  # each incompatibility's getMessage(), in the same order

    @property
    def types(self) -> frozenset[str]:
        return frozenset(t for t, _ in self.incompatibilities)

    @property
    def triples(self) -> list[tuple[str, str, str]]:
        """(type, location, message) of each incompatibility, in Java's order (none when it threw)."""
        if self.error is not None:
            return []
        return [(t, loc, m) for (t, loc), m in zip(self.incompatibilities, self.messages, strict=True)]


class JavaRefused(AssertionError):
    """Java's parser refused a document (for generated documents: a bug in the generator)."""


def java_parse(spark: Any, avsc: Any) -> Any:
    """An `org.apache.avro.Schema` parsed by Java's own parser (defaults validated, as by default)
    from an .avsc document as loaded JSON (a top-level primitive is a JSON string: `"int"`)."""
    text = json.dumps(avsc)
    try:
        return spark.sparkContext._jvm.org.apache.avro.Schema.Parser().parse(text)
    except Py4JJavaError as e:
        raise JavaRefused(f"Java's parser refuses {text}: {e.java_exception.toString()}") from None


def java_check(spark: Any, writer_avsc: Any, reader_avsc: Any) -> JavaVerdict:
    """`SchemaCompatibility.checkReaderWriterCompatibility(reader, writer)` on two .avsc schemas."""
    jvm = spark.sparkContext._jvm
    writer, reader = java_parse(spark, writer_avsc), java_parse(spark, reader_avsc)
    try:
        pair = jvm.org.apache.avro.SchemaCompatibility.checkReaderWriterCompatibility(reader, writer)
    except Py4JJavaError as e:  # Java's "no" by throwing is AvroRuntimeException, nothing else
        thrown = e.java_exception.getClass().getName()
        if thrown != "org.apache.avro.AvroRuntimeException":
            raise
        return JavaVerdict(False, ((THREW, "/"),), thrown)
    if pair.getType().name() == "COMPATIBLE":
        return JavaVerdict(True, ())
    found = [(inc.getType().name(), str(inc.getLocation()), str(inc.getMessage()))
             for inc in pair.getResult().getIncompatibilities()]
    return JavaVerdict(False, tuple((t, loc) for t, loc, _ in found), None, tuple(m for _, _, m in found))

