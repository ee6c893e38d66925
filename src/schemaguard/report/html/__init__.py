"""The HTML writers of the report stage: `page` (the audit as one self-contained page, its notebook
fragment, the style sheet `style.css` inlined, the designed notebook views of results), `timeline`
(a table's schema versions in time, as SVG) and `grid` (every column by version), all escaping through
`escape`. Like the rest of report/ they render what the stages before them decided and may import
those stages (checks, proofs, formats, model) and report/common; they read nothing from a lake, run no
check and load no script or external resource."""
