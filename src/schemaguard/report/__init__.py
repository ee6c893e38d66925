"""The last stage (sources -> lake -> formats -> history -> rules -> checks -> proofs -> plan ->
report): what was computed, formatted. Terminal, JSON, Markdown, HTML, JUnit, SARIF, the report
folder and the catalog's Delta tables.

May import: errors, acyclic, meta, names, paths, model, base, formats, checks, proofs, planning, config,
jsontext.
Must not: analyse (every question is answered before this stage, once), nor import `rules/` or
`lake/`.
"""
