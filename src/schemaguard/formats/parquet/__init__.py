"""One Parquet footer -> one `FileFooter`, read from the footer's own bytes: `lake/` reads every
listed file through `read_footer`, and `checks/`, `proofs/` and the reports read the records. The
tail is decoded by `formats/thrift.py` and no library's reading of the footer stands between the
bytes and what is reported, so every logical type, converted type, name, field id, statistic and
encryption marker is the one written; field ids are those of apache/parquet-format
`src/main/thrift/parquet.thrift` (docs/reference/parquet-and-spark.md §1). The modules go one way:
`footer` (the records) <- `stats` <- `elements` (one schema element, a leaf's types) <- `schema`
(the schema part, parsed once per distinct schema) <- `reader` (the bytes of a file). They import
`model`, `errors` and `formats.thrift`, `formats.spark`, `formats.notation`, never a later stage,
pyarrow (but for typing), pyspark or an engine. This is the package's API; importers take these
names from here.
"""

from schemaguard.formats.parquet.elements import annotation
from schemaguard.formats.parquet.footer import (
    FileFooter,
    FooterSchema,
    LeafStats,
    Packed,
    ParquetColumn,
    UnreadableFile,
    decode_stats,
    encode_stats,
    forget_footer_schemas,
    pack,
)
from schemaguard.formats.parquet.reader import MAGIC, SPARK_SCHEMA_KEY, read_footer
from schemaguard.formats.parquet.schema import footer_schema_from

__all__ = [
    "MAGIC",
    "SPARK_SCHEMA_KEY",
    "FileFooter",
    "FooterSchema",
    "LeafStats",
    "Packed",
    "ParquetColumn",
    "UnreadableFile",
    "annotation",
    "decode_stats",
    "encode_stats",
    "footer_schema_from",
    "forget_footer_schemas",
    "pack",
    "read_footer",
]
