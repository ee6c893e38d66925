"""Results in a real notebook: a notebook that calls every command's function is executed by
nbclient on an ipykernel kernel, exported by nbconvert as JupyterLab lays it out, and opened in
Chromium. Each result shows its own view, and the notebook's own text (a markdown heading and
code, the code cells, the page) computes the same styles with our output as without it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from schemaguard.demo import build_demo_lake, build_plan_inputs
from schemaguard.report.html.page import NOTEBOOK_ROOT
from tests.helpers import chromium, need_chromium

CELLS = [
    "import schemaguard as sg\nlake = {lake!r}",
    "sg.scan(f'{{lake}}/orders')",
    "sg.compare(writer={first!r}, reader=f'{{lake}}/plan/orders_next.json', profile='spark-read')",
    "sg.gate(f'{{lake}}/orders')",
    "sg.check(f'{{lake}}/orders', not_null=['channel'], fits=['quantity:int32'], footer_only=True)",
    "sg.audit([f'{{lake}}/orders'], catalog=False, reports=False)",
    "sg.plan(f'{{lake}}/orders', f'{{lake}}/plan/orders_next.json', table=f'{{lake}}/orders',\n"
    "        renames={{'customer': 'customer_id'}}, query_logs=[f'{{lake}}/plan/queries.jsonl'],\n"
    "        query_table='sales.orders', identity='name')",
]
# Per code cell after the first: a heading its view shows.
VIEWS = ["schemaguard scan", "schemaguard compare", "schemaguard gate", "schemaguard check",
         "schemaguard audit", "schemaguard plan"]

# Computed styles of the notebook's own elements, written into the page for --dump-dom to read.
PROBE = """<script>
const pick = sel => document.querySelector(sel);
const probe = {"h1": pick(".jp-RenderedMarkdown h1"), "code": pick(".jp-RenderedMarkdown code"),
  "p": pick(".jp-RenderedMarkdown p"), "input": pick(".jp-InputArea-editor"), "body": document.body};
const out = Object.entries(probe).map(([name, node]) => { const s = getComputedStyle(node);
  return name + "=" + [s.color, s.fontSize, s.fontFamily, s.fontWeight, s.margin, s.padding, s.background,
                       s.lineHeight, s.display, s.boxSizing, s.border].join("|"); });
document.body.setAttribute("data-styles", out.join("##"));
</script>"""


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> object:
    from nbclient import NotebookClient

    lake = tmp_path_factory.mktemp("notebook") / "lake"
    build_demo_lake(lake)
    build_plan_inputs(lake)
    first = str(sorted((lake / "orders").glob("dt=2024-01-01/part-*.parquet"))[0])
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell(
        "# Orders before the rename\nWhat the lake holds, checked with `schemaguard` before the change.")]
    notebook.cells += [nbformat.v4.new_code_cell(c.format(lake=str(lake), first=first)) for c in CELLS]
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(lake)}}
                   ).execute()
    return notebook


def _html_outputs(notebook: object) -> list[str]:
    return ["".join(o.get("data", {}).get("text/html", ""))
            for cell in notebook.cells[2:] for o in cell.get("outputs", ())  # type: ignore[attr-defined]
            if o.get("output_type") == "execute_result"]


def test_every_result_shows_its_own_view_in_a_notebook(executed: object) -> None:
    errors = [o for cell in executed.cells for o in cell.get("outputs", ())  # type: ignore[attr-defined]
              if o.get("output_type") == "error"]
    assert not errors, errors
    shown = _html_outputs(executed)
    assert len(shown) == len(VIEWS)
    for html, heading in zip(shown, VIEWS, strict=True):
        assert heading in html
        assert html.startswith(f'<div class="{NOTEBOOK_ROOT}">'), html[:200]
        sheet = html.split("<style>", 1)[1].split("</style>", 1)[0]
        selectors = [s.strip() for rule in re.findall(r"([^{}]+)\{[^{}]*\}", sheet) for s in rule.split(",")]
        assert selectors and all(s.startswith(f".{NOTEBOOK_ROOT}") for s in selectors), selectors
    assert "versions (4)" in shown[0] and "<table" in shown[0]  # scan: its versions table
    assert "channel: (none) -&gt; string" in shown[0]  # each change as a person reads it, not JSON
    assert '{&quot;' not in "".join(shown)


def _page(notebook: Any, path: Path) -> Path:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    path.write_text(body.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    return path


@pytest.mark.chromium
def test_the_notebook_page_keeps_its_own_styles_with_our_output(executed: object, tmp_path: Path) -> None:
    """The exported page with our outputs, and the same page without them: the notebook's own
    elements compute the same styles. The screenshot is kept for docs/python.md."""
    need_chromium()
    bare = nbformat.from_dict(nbformat.from_dict(executed))
    for cell in bare.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    styles = []
    for name, notebook in (("with", executed), ("without", bare)):
        page = _page(notebook, tmp_path / f"{name}.html")
        dom = chromium("--window-size=1400,1800", "--virtual-time-budget=5000", "--dump-dom", page.as_uri(),
                       profile=tmp_path / f"profile-{name}").stdout
        found = re.search(r'data-styles="([^"]*)"', dom)
        assert found, dom[-2000:]
        styles.append(found.group(1).split("##"))
    assert styles[0] == styles[1]
    shot = tmp_path / "notebook.png"
    chromium("--window-size=1400,2400", "--virtual-time-budget=5000", f"--screenshot={shot}",
             (tmp_path / "with.html").as_uri(), profile=tmp_path / "profile-shot")
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 20_000  # a page drawn, not a blank one
