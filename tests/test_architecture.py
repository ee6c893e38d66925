"""The package's shape, read from its source with `ast`: one stage per folder, dependencies
pointing one way (sources -> lake -> formats -> history -> rules -> checks -> proofs -> plan ->
report, docs/design.md; the plan stage is the folder `planning/`, so that `schemaguard.plan` is
only the function),
no import circle (lazy imports inside functions and TYPE_CHECKING imports count too), every
module importable on its own in dependency order, and every module opening with a docstring:
each stage's (and base module's) names what it may import, exactly as `ALLOWED` here does."""

from __future__ import annotations

import ast
import importlib
import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "schemaguard"

# What each stage may import from the package (besides itself). Top-level modules not named here
# (cli with cli_input and cli_output, api, results, auditing, migrate, config, sources, spark, demo,
# the package itself) are entry points: they may import any stage, and no stage imports them, except
# `report.catalog` reading `config`'s catalog section.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "meta": set(),  # the package's version
    "names": set(),  # the command line's names (profiles, modes, identity rules): under everything
    "paths": set(),  # how a column path is spelt and read back: under the model
    "jsontext": set(),  # a document as JSON text: under the reports and the command line
    "acyclic": set(),  # the cyclic garbage collector paused while a stage builds acyclic objects
    "model": {"names", "paths"},
    "base": {"names", "paths", "model"},
    "formats": {"errors", "names", "paths", "model", "base"},
    "lake": {"errors", "acyclic", "names", "paths", "model", "base", "formats"},
    "rules": {"errors", "names", "paths", "model", "base", "formats"},
    "checks": {"errors", "acyclic", "names", "paths", "model", "base", "formats", "lake", "rules"},
    "proofs": {"errors", "acyclic", "names", "paths", "model", "base", "formats", "lake", "rules", "checks"},
    "planning": {"errors", "acyclic", "names", "paths", "model", "base", "formats", "lake", "rules", "checks",
                 "proofs"},
    "report": {"errors", "acyclic", "meta", "names", "paths", "model", "base", "formats", "checks", "proofs",
               "planning", "config", "jsontext"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every schemaguard module a file imports, wherever the import statement is."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "schemaguard"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "schemaguard":
            for alias in node.names:  # `from schemaguard.report import json` imports a module
                sub = f"{node.module}.{alias.name}"
                found.add(sub if (PACKAGE.parent / Path(*sub.split("."))).with_suffix(".py").exists()
                          or (PACKAGE.parent / Path(*sub.split("."))).is_dir() else node.module)
    return found


MODULES = {module_name(p): imported(p) for p in sorted(PACKAGE.rglob("*.py"))}


def stage(module: str) -> str:
    """`schemaguard.checks.gate` -> `checks`; the package itself -> `schemaguard`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "schemaguard"


def graph() -> dict[str, set[str]]:
    """Each module's dependencies, a package import counting as its `__init__`."""
    return {m: {d for d in deps if d in MODULES and d != m} for m, deps in MODULES.items()}


def test_no_import_circle() -> None:
    try:
        list(TopologicalSorter(graph()).static_order())
    except CycleError as e:
        pytest.fail(f"import circle: {' -> '.join(e.args[1])}")


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_stage_imports_only_the_stages_before_it(layer: str) -> None:
    wrong = sorted(f"{m} imports {d}" for m, deps in MODULES.items() if stage(m) == layer
                   for d in deps if stage(d) not in ALLOWED[layer] | {layer})
    assert not wrong


def test_report_imports_nothing_from_rules_or_lake() -> None:
    report = {m: deps for m, deps in MODULES.items() if stage(m) == "report"}
    assert report  # the stage exists
    assert not {d for deps in report.values() for d in deps if stage(d) in ("rules", "lake")}


def _opening(module: str) -> str:
    """The docstring a stage (its `__init__`) or a base module opens with."""
    path = PACKAGE / module / "__init__.py"
    path = path if path.exists() else PACKAGE / f"{module}.py"
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_stage_says_what_it_may_import_as_the_rules_here_allow(layer: str) -> None:
    """Its docstring's `May import:` line names exactly the stages `ALLOWED` gives it ("nothing of
    the package" for none), so the module a newcomer opens and this test never disagree."""
    said = re.findall(r"^May import:([^.(]*)", _opening(layer), re.MULTILINE)  # to its full stop
    assert len(said) == 1, f"{layer}: no `May import:` line in its docstring"
    listed = said[0].strip()
    names = set() if listed.startswith("nothing") else {n.strip() for n in listed.split(",")}
    assert names == ALLOWED[layer]


def test_no_module_is_over_600_lines() -> None:
    """A module a newcomer can read through: past 600 lines, split it by concern."""
    long = {module_name(p): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}


def test_every_module_opens_with_a_docstring() -> None:
    bare = [str(p.relative_to(PACKAGE)) for p in sorted(PACKAGE.rglob("*.py"))
            if not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))]
    assert not bare


def test_every_module_imports_on_its_own_in_dependency_order() -> None:
    for module in TopologicalSorter(graph()).static_order():
        importlib.import_module(module)


def test_every_check_states_its_complexity() -> None:
    """Each detector's docstring says how its work grows (`O(versions x nodes)`): none may grow
    with the product of its inputs' sizes unseen (docs/benchmarks.md, the hostile shapes)."""
    from schemaguard.checks import CHECKS

    unstated = [c.__name__ for c in CHECKS if "O(" not in (c.__doc__ or "")]
    assert unstated == []
