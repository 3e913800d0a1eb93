"""Interpreter (resolved program -> samples): the reference interpreter behind `align run`.

Two evaluators of one semantics — `scalar` (one execution with given noise: replays, traces, counterexamples)
and `vector` (a chunk of executions at once with numpy) — plus the noise samplers (`noise`), the chunked runner
and its summary (`runner`), the output representation (`outputs`) and the alignment check by sampling
(`alignment`). docs/interpreter.md describes them. Importing this package loads nothing heavy: import the
modules you need.
"""
