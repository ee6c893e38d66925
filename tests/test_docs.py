"""The documentation stays true, without a JVM.

- Every relative link in README.md and docs/ names a file of the repository, and every `#anchor`
  into a Markdown page names one of its headings.
- Every reference page the code cites (`docs/reference/compat-rules.md §4`, `docs/design.md`) is a
  file of the repository, with the sections it names; nothing points at the old `../shared/`.
- Every `schemaguard` command shown in a shell block (and every `jobs/*.py` run) parses with the
  command line's own parser, so a wrong option fails here; a block whose output shows the parser
  refusing an option must be refused.
- Every file an example uses is in the repository, is built by `schemaguard demo` (the demo lake
  in `.demo/lake`, and `sales.orders` in the catalog, as `make run` builds them), or is made
  earlier in the same example.
- The finding codes the audit page lists are the code table's, with their severities.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
CODE = sorted([*(ROOT / "src").rglob("*.py"), *(ROOT / "jobs").glob("*.py"), *(ROOT / "bench").glob("*.py"),
               *(p for p in (ROOT / "tests").rglob("*.py") if p.name != Path(__file__).name),
               ROOT / "pyproject.toml", ROOT / "Makefile", *(ROOT / "conf").glob("*")])
# What `schemaguard demo .demo/lake --catalog-table sales.orders` (as `make run` runs it) builds: the
# tables of the lake (the Parquet one and `plan/` are built below without Spark) and the catalog table.
DEMO = ".demo/lake"
SPARK_BUILT_TABLES = ("orders_delta", "orders_iceberg")
CATALOG_TABLES = {"sales.orders"}
# The parameters of the command line that name a file, a folder or a table to read.
READ_PARAMS = {"path", "writer", "reader", "sources", "versions", "allowed_file", "old", "new", "ddl_file",
               "table", "query_log", "event_log", "sql", "conf", "plan_file", "locations", "schema"}
# What a file is called, as against a catalog table `db.table`.
FILES = {".json", ".jsonl", ".avsc", ".sql", ".toml", ".parquet", ".csv", ".txt", ".py"}
REFUSED = ("No such option", "No such command", "Missing option", "Missing parameter", "Missing argument")


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text without markup, lower-cased, punctuation dropped,
    spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def prose(text: str) -> str:
    """The page without its fenced blocks (a link in a code block is not a link)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", prose(page.read_text(encoding="utf-8")), flags=re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def sections(page: Path) -> set[str]:
    """The numbered sections of a reference page: `## 2. ...`, `### 2.5 ...`."""
    text = page.read_text(encoding="utf-8")
    return set(re.findall(r"^#{1,6} +(\d+(?:\.\d+)*)\.? ", prose(text), flags=re.M))


# (a) links


def links() -> Iterator[tuple[Path, str]]:
    for page in PAGES:
        for target in re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", prose(page.read_text(encoding="utf-8"))):
            if not re.match(r"[a-z]+:", target):
                yield page, target


def test_the_pages_link_to_something() -> None:
    assert len(PAGES) >= 12 and (ROOT / "docs" / "reference" / "compat-rules.md") in PAGES
    assert sum(1 for _ in links()) > 60


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_every_relative_link_resolves_in_the_repository(page: Path) -> None:
    broken = []
    for source, target in links():
        if source != page:
            continue
        where, _, anchor = target.partition("#")
        file = (page.parent / where).resolve() if where else page
        if ROOT not in (file, *file.parents) or not file.exists():
            broken.append(f"{target}: no such file in the repository")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading {anchor!r} in {rel(file)}")
    assert not broken, broken


def test_the_slug_is_githubs() -> None:
    assert slug("`schemaguard merge A B [C ...] --profile spark-merge|delta-merge`") == (
        "schemaguard-merge-a-b-c----profile-spark-mergedelta-merge")
    assert slug("3.3 Which delta-spark goes with which pyspark") == (
        "33-which-delta-spark-goes-with-which-pyspark")
    assert slug("The engines' truth tables") == "the-engines-truth-tables"


# (b) citations in the code


def cited_text(file: Path) -> str:
    """A file's text with the reference constants of the rule tables spelled out, as they reach the
    rule sources (`f"{CR} §4"`)."""
    from schemaguard import base
    from schemaguard.checks import finding

    assert (finding._CR, finding._PS) == (base.CR, base.PS)
    text = file.read_text(encoding="utf-8")
    for name, value in (("CR", base.CR), ("PS", base.PS), ("_CR", base.CR), ("_PS", base.PS)):
        text = text.replace("{" + name + "}", value)
    return text


CITATION = re.compile(r"(?<![\w/.-])(docs/[\w/.-]+\.md|README\.md)")
SECTION = re.compile(r"§ ?(\d+(?:\.\d+)*)(?:-(\d+(?:\.\d+)*))?")


@dataclass(frozen=True, slots=True)
class Citation:
    file: Path
    line: int
    page: str
    sections: tuple[str, ...]
    phrase: str | None


def citations(file: Path) -> list[Citation]:
    text = cited_text(file)
    found = []
    matches = list(CITATION.finditer(text))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        after = text[m.end():min(end, m.end() + 80)]
        # the sections that follow the page's name before the sentence or the citation ends
        tail = re.split(r"[;)]|\. |\n\s*\n|\"\"\"", after, maxsplit=1)[0]
        numbers = tuple(n for pair in SECTION.findall(tail) for n in pair if n)
        phrase = re.match(r",? ?[\"']([^\"'\n]+)[\"']", after)
        found.append(Citation(file, text.count("\n", 0, m.start()) + 1, m.group(1), numbers,
                              phrase.group(1) if phrase else None))
    return found


def test_the_code_cites_pages_of_the_repository() -> None:
    every = [c for file in CODE for c in citations(file)]
    assert len(every) > 100  # the rule tables cite a section each
    bad = []
    for c in every:
        page = ROOT / c.page
        where = f"{rel(c.file)}:{c.line}: {c.page}"
        if not page.is_file():
            bad.append(f"{where}: no such page")
            continue
        missing = [s for s in c.sections if s not in sections(page)]
        if missing:
            bad.append(f"{where}: no section {', '.join('§' + s for s in missing)}")
        words = " ".join(page.read_text(encoding="utf-8").lower().split())
        if c.phrase and c.page != "README.md" and c.phrase.lower() not in words:
            bad.append(f"{where}: {c.phrase!r} is not on the page")
    assert not bad, bad


def test_no_citation_leaves_the_repository() -> None:
    outside = re.compile(r"shared/|(?<![\w/.-])(?:reference/)?"
                         r"(compat-rules|parquet-and-spark|gx-delta-catalog)\.md|(?<![\w/.-])DESIGN(\.md)?\b|spark-traps")
    bad = []
    for file in CODE:
        for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            for m in outside.finditer(line):
                if not line[:m.start()].endswith(("docs/reference/", "docs/")):
                    bad.append(f"{rel(file)}:{n}: {line.strip()}")
    assert not bad, bad


def test_the_rule_sources_name_the_pages() -> None:
    from schemaguard import base

    assert (ROOT / base.CR).is_file() and (ROOT / base.PS).is_file()


# (c) and (d): the commands of the examples


@dataclass(frozen=True, slots=True)
class Example:
    page: Path
    line: int
    shell: str  # the command line as shown, continuation lines joined
    output: str  # what the block shows after it, up to the next command
    made: frozenset[str]  # files the block's earlier commands wrote (`> plan.json`)


def blocks(page: Path) -> Iterator[tuple[int, list[str]]]:
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)$", lines[i])
        if fence:
            j = i + 1
            while j < len(lines) and lines[j] != "```":
                j += 1
            if fence.group(1) in ("", "sh", "bash", "shell", "console"):
                yield i + 2, lines[i + 1:j]
            i = j
        i += 1


def examples(page: Path) -> Iterator[Example]:
    for first, body in blocks(page):
        prompted = any(line.startswith("$ ") for line in body)
        commands: list[tuple[int, str, list[str]]] = []  # (line, command, output lines)
        k = 0
        while k < len(body):
            line = body[k]
            if prompted and line.startswith("$ "):
                line = line[2:]
            elif prompted or not re.match(r"(\.venv/bin/)?(schemaguard|spark-submit|python) ", line):
                if commands:
                    commands[-1][2].append(line)
                k += 1
                continue
            start = k
            while line.endswith("\\") and k + 1 < len(body):
                k += 1
                line = line[:-1] + " " + body[k].strip()
            commands.append((first + start, line, []))
            k += 1
        made: set[str] = set()
        for at, command, output in commands:
            yield Example(page, at, command, "\n".join(output), frozenset(made))
            tokens = shlex.split(command, comments=True)
            made.update(tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t == ">")


def argv_of(shell: str) -> list[str] | None:
    """The `schemaguard` arguments a shown command line runs, or None when it runs no schemaguard
    (`cat`, `export`, `make`)."""
    tokens = shlex.split(shell, comments=True)
    for stop in (">", "|", "&&", "2>&1"):
        if stop in tokens:
            tokens = tokens[:tokens.index(stop)]
    for i, token in enumerate(tokens):
        if token.endswith("schemaguard") and (i == 0 or tokens[i - 1] != "-m"):
            return tokens[i + 1:]
        if re.fullmatch(r"jobs/\w+\.py", token):
            job, args = Path(token).stem, tokens[i + 1:]
            if job == "lake_audit":
                return ["audit", *args]
            if job == "merge_gate":
                return ["gate", *args]
            if job == "scan_table":
                return ["scan", "--engine", "spark", *args]
            assert job == "migration_check", token
            if "--plan" in args and "--apply" not in args:  # the job's own gate: --plan P --step K only
                assert len(args) == 4 and {"--plan", "--step"} <= set(args[::2]), shell
                return ["migrate", "step", *args]
            if "--plan" in args:
                return ["migrate", "step", *args]
            return ["audit", "--proofs-exit", *args]
    return None


def parse(argv: list[str]) -> dict[str, Any]:
    """Parse the arguments as `schemaguard` does, without running the command: its parameters."""
    from typer.core import TyperGroup
    from typer.main import get_command

    from schemaguard.cli import app

    group = get_command(app)
    assert isinstance(group, TyperGroup)
    context = group.make_context("schemaguard", list(argv))
    name, command, args = group.resolve_command(context, [*context._protected_args, *context.args])
    assert name is not None and command is not None
    return dict(command.make_context(name, args, parent=context).params)


ALL = [e for page in PAGES for e in examples(page) if argv_of(e.shell) is not None]


def test_the_pages_show_commands() -> None:
    shown = {rel(e.page) for e in ALL}
    assert len(ALL) > 50
    assert {"README.md", "docs/cli.md", "docs/plan-and-migrate.md", "docs/audit.md"} <= shown


@pytest.mark.parametrize("example", ALL, ids=lambda e: f"{rel(e.page)}:{e.line}")
def test_every_command_shown_parses(example: Example) -> None:
    argv = argv_of(example.shell)
    assert argv is not None
    refused = "schemaguard: error:" in example.output and any(r in example.output for r in REFUSED)
    if refused:
        with pytest.raises(Exception, match="|".join(REFUSED)):
            parse(argv)
    else:
        parse(argv)


def job_of(shell: str) -> tuple[str, list[str]] | None:
    """The job (`jobs/NAME.py`) a shown command line runs, and its arguments."""
    tokens = shlex.split(shell, comments=True)
    return next(((Path(t).stem, tokens[i + 1:]) for i, t in enumerate(tokens)
                 if re.fullmatch(r"jobs/\w+\.py", t)), None)


JOBS_SHOWN = [e for e in ALL if job_of(e.shell) is not None]


@pytest.mark.parametrize("example", JOBS_SHOWN, ids=lambda e: f"{rel(e.page)}:{e.line}")
def test_every_job_shown_parses_with_its_own_options(example: Example) -> None:
    """A job is a program of its own over the Python API (`jobs/`): the options a page shows it
    with are its options (the plan-driven forms of migration_check run the plan's command lines,
    which `test_every_command_shown_parses` checks)."""
    import importlib.util

    found = job_of(example.shell)
    assert found is not None
    name, args = found
    spec = importlib.util.spec_from_file_location(f"job_{name}", ROOT / "jobs" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    if name == "migration_check":
        if "--plan" not in args:
            job.audit_arguments().parse_args(args)
    else:
        job.arguments().parse_args(args)


@pytest.fixture(scope="module")
def demo(lake: Path) -> Path:
    """The demo lake as `schemaguard demo` builds it, less the tables it writes with Spark."""
    from schemaguard.demo import build_plan_inputs

    if not (lake / "plan").exists():
        build_plan_inputs(lake)
    return lake


def read_targets(argv: list[str]) -> list[tuple[str, str]]:
    params = parse(argv)
    found = []
    for name, value in params.items():
        if name not in READ_PARAMS or value is None:
            continue
        for one in value if isinstance(value, tuple | list) else (value,):
            found.append((name, str(one)))
    if argv[0] == "plan" and params.get("spark_catalog"):
        found = [(n, v) for n, v in found if n != "table"] + [("catalog", str(params["table"]))]
    return found


def exists(target: str, demo: Path) -> bool:
    if target.startswith(DEMO + "/"):
        inside = Path(target[len(DEMO) + 1:])
        return (demo / inside).exists() or (inside.parts[0] in SPARK_BUILT_TABLES and len(inside.parts) == 1)
    return (ROOT / target).exists()


def test_every_file_an_example_uses_is_there(demo: Path) -> None:
    bad = []
    for e in ALL:
        argv = argv_of(e.shell)
        assert argv is not None
        if "schemaguard: error:" in e.output and any(r in e.output for r in REFUSED):
            continue
        for name, target in read_targets(argv):
            if "://" in target or "$" in target:
                continue  # a store or a variable of the reader's own, not a file of ours
            if target in e.made or f"{target}: no such file or directory" in e.output:
                continue  # made earlier in the example, or missing on purpose
            if name == "catalog" or (re.fullmatch(r"\w+\.\w+", target) and Path(target).suffix not in FILES):
                if target not in CATALOG_TABLES:
                    bad.append(f"{rel(e.page)}:{e.line}: {target}: not a table the demo puts in the catalog")
                continue
            if not exists(target, demo):
                bad.append(f"{rel(e.page)}:{e.line}: {target}: neither shipped nor built by the demo")
    assert not bad, bad


# The audit page's table of finding codes


def test_the_audit_page_lists_every_finding_code_with_its_severity() -> None:
    from schemaguard.checks.finding import CODES

    text = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([A-Z_0-9]+)` \| ([a-z /]+) \|", text, flags=re.M))
    assert set(rows) == set(CODES)
    for code, row in rows.items():
        assert CODES[code].severity in row.split(" / "), code
