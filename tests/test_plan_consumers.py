"""Consumers that match an enum exhaustively (planning/consumers.py): CASE without ELSE, IN filters,
joins to a lookup table, Delta CHECK constraints, in a query log and in a folder of .sql files
that the tests write."""

from __future__ import annotations

import json
from pathlib import Path

from schemaguard.formats.notation import schema_from_notation
from schemaguard.planning.consumers import ConsumerScan, constraint_hits, enum_consumers, sql_files
from schemaguard.planning.usage.logs import read_log
from schemaguard.planning.usage.records import LoggedQuery

SHIPMENTS = schema_from_notation({"fields": [
    {"name": "id", "type": "int64"}, {"name": "weight", "type": "double"},
    {"name": "status", "type": {"enum": ["new", "paid"]}},
    {"name": "addr", "type": {"struct": [{"name": "kind", "type": {"enum": ["home", "work"]}},
                                         {"name": "city", "type": "string"}]}}]})

LOG = [  # (user, query, the hit expected on `status`, or None)
    ("analyst", "SELECT CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END AS n FROM shipments",
     "case-without-else"),
    ("analyst", "SELECT CASE status WHEN 'new' THEN 1 ELSE 0 END FROM shipments", None),  # an ELSE
    ("finance", "SELECT CASE WHEN s.status = 'paid' THEN weight END FROM db.shipments s",
     "case-without-else"),
    ("finance", "SELECT CASE WHEN weight > 3 THEN status END FROM shipments", None),  # not a test of it
    ("ops", "SELECT id FROM shipments WHERE status IN ('new', 'paid')", "in-list"),
    ("ops", "SELECT id FROM shipments WHERE status NOT IN ('gone')", None),  # lets a new value through
    ("ops", "SELECT status IN ('new') AS is_new FROM shipments", None),  # a flag, not a filter
    ("ops", "SELECT status, count(*) FROM shipments GROUP BY status HAVING status IN ('new')", "in-list"),
    ("ops", "SELECT id FROM shipments WHERE status IN (SELECT code FROM ref.open_codes)", "in-list"),
    ("bi", "SELECT s.id, l.label FROM shipments s JOIN ref.codes l ON s.status = l.code", "inner-join"),
    ("bi", "SELECT s.id, l.label FROM shipments s LEFT JOIN ref.codes l ON s.status = l.code", None),
    ("bi", "SELECT l.label FROM ref.codes l LEFT JOIN shipments s ON s.status = l.code", "inner-join"),
    ("bi", "SELECT s.id FROM shipments s LEFT SEMI JOIN ref.codes l ON s.status = l.code", "inner-join"),
    ("bi", "SELECT s.id FROM shipments s, ref.codes l WHERE l.code = s.status", "inner-join"),
    ("bi", "SELECT a.id FROM shipments a JOIN shipments b ON a.status = b.status", None),  # itself
    ("bi", "WITH c AS (SELECT CASE status WHEN 'new' THEN 1 END AS n FROM shipments) SELECT n FROM c",
     "case-without-else"),
    ("bi", "SELECT CASE kind WHEN 'a' THEN 1 END FROM other", None),  # another table
    ("bi", "SELECT CASE addr.kind WHEN 'home' THEN 1 END FROM shipments", None),  # another column
]
UNREADABLE = [("bi", "SELEC broken FROM shipments"), ("bi", "SELECT status FROM shipments, db.shipments")]


def write_log(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"user": u, "query": q}) + "\n" for u, q in rows))
    return path


def test_exhaustive_matches_in_a_query_log(tmp_path: Path) -> None:
    log = write_log(tmp_path / "q.jsonl", [(u, q) for u, q, _ in LOG] + UNREADABLE)
    scan = enum_consumers(read_log(log), "db.shipments", "status", SHIPMENTS)
    assert isinstance(scan, ConsumerScan)
    assert sorted((int(h.where.rsplit(":", 1)[1]), h.kind, h.consumer) for h in scan.hits) == [
        (n, kind, user) for n, (user, _, kind) in enumerate(LOG, start=1) if kind]
    assert scan.unparsed == tuple(f"{log}:{n}" for n in range(len(LOG) + 1, len(LOG) + 3))
    joins = {h.where.rsplit(":", 1)[1]: h.detail for h in scan.hits if h.kind == "inner-join"}
    assert joins["10"] == "an inner join matches the column with ref.codes: unmatched rows are dropped"
    assert joins["13"].startswith("a semi join") and joins["14"].startswith("a WHERE filter")
    cases = [h.detail for h in scan.hits if h.kind == "case-without-else"]
    assert "a CASE on the column with 2 WHEN branch(es), no ELSE" in cases
    for literal in ("'new'", "paid", "gone", "home"):  # no value of the query in any hit
        assert not any(literal in f"{h.detail} {h.consumer}" for h in scan.hits)


def test_a_nested_enum_is_matched_on_its_path(tmp_path: Path) -> None:
    log = write_log(tmp_path / "q.jsonl", [
        ("a", "SELECT CASE addr.kind WHEN 'home' THEN 1 END FROM shipments"),
        ("b", "SELECT CASE s.addr.city WHEN 'x' THEN 1 END FROM shipments s"),  # a sibling field
        ("c", "SELECT id FROM shipments s WHERE s.addr.kind IN ('home')"),
    ])
    hits = enum_consumers(read_log(log), "shipments", "addr.kind", SHIPMENTS).hits
    assert sorted((h.consumer, h.kind) for h in hits) == [("a", "case-without-else"), ("c", "in-list")]


DOTTED = schema_from_notation({"fields": [  # a column named `a.b` beside a struct `a` with a field `b`
    {"name": "a.b", "type": {"enum": ["x", "y"]}},
    {"name": "a", "type": {"struct": [{"name": "b", "type": {"enum": ["x", "y"]}}]}}]})


def test_a_column_whose_name_holds_a_dot_is_not_a_struct_field(tmp_path: Path) -> None:
    log = write_log(tmp_path / "q.jsonl", [
        ("column", "SELECT CASE `a.b` WHEN 'x' THEN 1 END FROM shipments"),
        ("field", "SELECT CASE a.b WHEN 'x' THEN 1 END FROM shipments"),
    ])
    constraints = {"on_column": "`a.b` IN ('x', 'y')", "on_field": "a.b IN ('x', 'y')"}
    for path, meant in (("`a.b`", "column"), ("a.b", "field")):  # as model.py writes each path
        assert [h.consumer for h in enum_consumers(read_log(log), "shipments", path, DOTTED).hits] == [meant]
        assert [h.consumer for h in constraint_hits(constraints, path)] == [f"constraint on_{meant}"]


def test_a_query_repeated_in_a_log_is_one_hit_per_consumer(tmp_path: Path) -> None:
    query = "SELECT id FROM shipments WHERE status IN ('new')"
    rows = [("a", query)] * 3 + [("b", query), ("b", "SELEC x FROM shipments")] * 2
    log = write_log(tmp_path / "q.jsonl", rows)
    scan = enum_consumers(read_log(log), "shipments", "status", SHIPMENTS)
    assert sorted((h.consumer, h.where) for h in scan.hits) == [("a", f"{log}:1"), ("b", f"{log}:4")]
    assert scan.unparsed == (f"{log}:5",)


def test_a_folder_of_sql_files(tmp_path: Path) -> None:
    reports = tmp_path / "sql" / "reports"
    reports.mkdir(parents=True)
    daily = reports / "daily.sql"
    daily.write_text("-- daily; the first statement\nSELECT 1;\n\n"
                     "SELECT CASE status\n  WHEN 'new' THEN 'N'\nEND\nFROM shipments;\n"
                     "/* a comment; with a semicolon */\n"
                     "SELECT ';' AS semicolon FROM shipments WHERE id > 0;\n"
                     "SELECT id FROM shipments s\n  JOIN ref.codes c ON s.status = c.code\n")
    (tmp_path / "sql" / "broken.sql").write_text("SELECT 1;\nSELEC status FROM shipments;\n")
    (tmp_path / "sql" / "notes.txt").write_text("SELECT CASE status WHEN 'x' THEN 1 END FROM shipments")
    statements = list(sql_files(tmp_path / "sql"))
    assert [(Path(q.source).name, q.line) for q in statements] == [
        ("broken.sql", 1), ("broken.sql", 2), ("daily.sql", 2), ("daily.sql", 4), ("daily.sql", 9),
        ("daily.sql", 10)]
    assert all(isinstance(q, LoggedQuery) and q.user is None for q in statements)
    scan = enum_consumers(statements, "shipments", "status", SHIPMENTS)
    assert sorted((h.kind, h.consumer, h.where) for h in scan.hits) == [
        ("case-without-else", str(daily), f"{daily}:4"), ("inner-join", str(daily), f"{daily}:10")]
    assert scan.unparsed == (f"{tmp_path / 'sql' / 'broken.sql'}:2",)


def test_check_constraints_that_list_the_values() -> None:
    hits = constraint_hits({
        "valid": "status IN ('new', 'paid')", "positive": "id > 0",
        "either": "status = 'new' OR status = 'paid'", "one": "'new' = status",
        "excluded": "status NOT IN ('gone')", "other": "weight IN (1, 2)",
        "nested": "addr.kind IN ('home', 'work')", "garbled": "status IN (('new'",
    }, "status")
    assert [h.consumer for h in hits] == ["constraint valid", "constraint either", "constraint one",
                                          "constraint garbled"]
    assert {h.kind for h in hits} == {"check-constraint"} and hits[0].where == "delta.constraints.valid"
    assert not any("'new'" in h.detail or "paid" in h.detail for h in hits)
    assert [h.consumer for h in constraint_hits({"nested": "addr.kind IN ('home')", "s": "status = 'a'"},
                                                "addr.kind")] == ["constraint nested"]
