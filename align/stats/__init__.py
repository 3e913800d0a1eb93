"""Statistics (samples -> verdicts): the empirical side of `align test`.

`bounds` (exact binomial bounds and the one-sided test of P1 <= e^eps P2), `events` (candidate output events
built from samples of the reference interpreter), `lrtest` (the search over input pairs and events, sequential
and parallel). docs/testing.md describes the method. Importing this package loads nothing heavy.
"""
