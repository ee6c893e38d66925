"""The change plan: operations, the mode they need, ordered steps with their checks, and the
usage and consumer evidence those checks read (query logs, Spark event logs, consumer SQL)."""
