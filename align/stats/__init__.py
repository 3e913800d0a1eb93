"""Statistics (samples -> verdicts): the empirical side of `align test`.

`bounds` (the exact one-sided test of P1 <= e^eps P2, the epsilon lower bound that inverts it, and
Clopper–Pearson bounds), `events` (candidate output events
built from samples of the reference interpreter), `lrtest` (the search over input pairs and events, sequential
and parallel). docs/testing.md describes the method. Importing this package loads nothing heavy.
"""
