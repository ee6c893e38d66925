"""parquet-java's own Thrift classes as an independent footer decoder, through the SparkSession's
py4j gateway: `org.apache.parquet.format.Util.readFileMetaData` (parquet-format-structures, in
pyspark's jars) keeps every `SchemaElement` field as written, converted types included. Read
through its API (getters, union members), never its printed text."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def java_metadata(spark: Any, path: Path) -> Any:
    """The file's FileMetaData as parquet-java's Thrift classes decode it."""
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    stream = spark._jvm.java.io.ByteArrayInputStream(bytearray(data[-8 - length:-8]))
    return spark._jvm.org.apache.parquet.format.Util.readFileMetaData(stream)


def _member(union: Any) -> tuple[str, Any]:
    field = union.getSetField()
    return field.getFieldName(), union.getFieldValue()


def java_logical_label(element: Any) -> str | None:
    """The same label `formats/parquet/elements.py` writes, built from parquet-java's LogicalType union."""
    if not element.isSetLogicalType():
        return None
    name, body = _member(element.getLogicalType())
    if name == "DECIMAL":
        return f"DECIMAL({body.getPrecision()},{body.getScale()})"
    if name in ("TIME", "TIMESTAMP"):
        unit = _member(body.getUnit())[0]
        return f"{name}({unit},{'utc' if body.isIsAdjustedToUTC() else 'local'})"
    if name == "INTEGER":
        return f"INT({body.getBitWidth()},{'signed' if body.isIsSigned() else 'unsigned'})"
    if name == "VARIANT":
        return f"VARIANT({body.getSpecification_version()})" if body.isSetSpecification_version() \
            else "VARIANT"
    if name in ("GEOMETRY", "GEOGRAPHY"):
        params = [f"crs={body.getCrs()}"] if body.isSetCrs() else []
        if name == "GEOGRAPHY" and body.isSetAlgorithm():
            params.append(f"algorithm={body.getAlgorithm().name()}")
        return f"{name}({', '.join(params)})" if params else name
    return str(name)


def java_leaves(meta: Any) -> list[dict[str, Any]]:
    """Every leaf of the schema list with its Parquet path, in the file's order."""
    elements = list(meta.getSchema())
    leaves: list[dict[str, Any]] = []
    position = 1

    def walk(count: int, parents: tuple[str, ...]) -> None:
        nonlocal position
        for _ in range(count):
            e = elements[position]
            position += 1
            path = (*parents, e.getName())
            if e.isSetNum_children() and e.getNum_children() > 0:
                walk(e.getNum_children(), path)
                continue
            leaves.append({
                "parquet_path": path,
                "physical_type": e.getType().name(),
                "type_length": e.getType_length() if e.getType().name() == "FIXED_LEN_BYTE_ARRAY" else None,
                "repetition": e.getRepetition_type().name(),
                "field_id": e.getField_id() if e.isSetField_id() else None,
                "converted_type": e.getConverted_type().name() if e.isSetConverted_type() else None,
                "logical_type": java_logical_label(e),
            })

    walk(elements[0].getNum_children(), ())
    return leaves
