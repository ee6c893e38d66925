"""The change plan: operations, the mode they need, ordered steps with their checks, and the
usage and consumer evidence those checks read (query logs, Spark event logs, consumer SQL).

Stage `planning`, the plan (sources -> lake -> formats -> history -> rules -> checks -> proofs -> plan ->
report).
May import: errors, acyclic, names, paths, model, base, formats, lake, rules, checks, proofs.
Must not: run a statement it generates (`migrate.py` applies steps), or format output (`report/`).
"""
