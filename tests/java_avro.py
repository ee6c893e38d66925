"""Avro-java's `SchemaCompatibility` (avro-*.jar in pyspark's jars) as an oracle, through the
SparkSession's py4j gateway. The verdict is read through the Java API (`getType()`,
`getResult().getIncompatibilities()`, each incompatibility's `getType()` and `getLocation()`),
never from printed text."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]

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

    @property
    def types(self) -> frozenset[str]:
        return frozenset(t for t, _ in self.incompatibilities)


def java_parse(spark: Any, avsc: Any) -> Any:
    """An `org.apache.avro.Schema` parsed by Java's own parser (defaults validated, as by default)."""
    text = avsc if isinstance(avsc, str) else json.dumps(avsc)
    return spark.sparkContext._jvm.org.apache.avro.Schema.Parser().parse(text)


def java_check(spark: Any, writer_avsc: Any, reader_avsc: Any) -> JavaVerdict:
    """`SchemaCompatibility.checkReaderWriterCompatibility(reader, writer)` on two .avsc schemas."""
    jvm = spark.sparkContext._jvm
    writer, reader = java_parse(spark, writer_avsc), java_parse(spark, reader_avsc)
    try:
        pair = jvm.org.apache.avro.SchemaCompatibility.checkReaderWriterCompatibility(reader, writer)
    except Py4JJavaError as e:
        return JavaVerdict(False, ((THREW, "/"),), e.java_exception.getClass().getName())
    if pair.getType().name() == "COMPATIBLE":
        return JavaVerdict(True, ())
    found = tuple((inc.getType().name(), str(inc.getLocation()))
                  for inc in pair.getResult().getIncompatibilities())
    return JavaVerdict(False, found)


def reader_path(reader_avsc: Any, location: str) -> str:
    """A Java location (`/fields/1/type/items/…`, the reader's schema walked) as the path our
    problems use (`b[]…`). A number is the index of a writer union's branch: against a reader union
    it ends the walk (Java reports the union as a whole, `MISSING_UNION_BRANCH`, and keeps no reason
    from inside it); against a reader that is not a union the walk goes on in the same reader type."""
    node, path = reader_avsc, ""
    tokens = [t for t in location.split("/") if t]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.isdigit():
            if isinstance(node, list):
                return path
            i += 1
            continue
        if isinstance(node, list):  # a reader union (null plus one type) entered by name
            node = next(b for b in node if b != "null")
            continue
        if token == "fields":
            field = node["fields"][int(tokens[i + 1])]
            path = f"{path}.{field['name']}" if path else field["name"]
            i += 2
            if i < len(tokens) and tokens[i] == "type":
                node = field["type"]
                i += 1
            else:
                return path
        elif token == "items":
            node, path, i = node["items"], path + "[]", i + 1
        elif token == "values":
            node, path, i = node["values"], path + "{value}", i + 1
        else:  # `symbols`, `size`, `name`: an attribute of the type at `path`
            return path
    return path
