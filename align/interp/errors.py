"""Interpreter (errors): runtime problems become located diagnostics, never tracebacks.

A runtime error is a `SpecError` with one diagnostic from the registry (`align/diagnostics.py`, section
"running specs") whose span is the node that failed; `RunError` also remembers which sample (lane) failed so
that the runner can say "in sample 1234 of the run (seed 7)".
"""

from __future__ import annotations

from .. import nodes as n
from ..diagnostics import Diagnostic, Note, SpecError, diag
from ..span import Span
from ..unparse import unparse


class RunError(SpecError):
    """A runtime error of one execution (scalar evaluator) or of some lane of a chunk (vector evaluator)."""

    def __init__(self, diagnostic: Diagnostic, lane: int | None = None):
        super().__init__([diagnostic])
        self.diagnostic = diagnostic
        self.lane = lane
        """The lane of the chunk that failed (vector evaluator), or None."""

    def at_sample(self, sample: int, seed: object, side: str = "") -> RunError:
        """The same error with a note naming the sample of the run."""
        where = f"in sample {sample} of the run (seed {seed})" + (f", {side}" if side else "")
        d = self.diagnostic
        located = Diagnostic(d.code, d.span, d.args, d.notes + (Note(None, where),), d.severity)
        return RunError(located, self.lane)


def fail(code: str, span: Span | None, lane: int | None = None, **args: object) -> RunError:
    """Build (not raise) a runtime error; callers write `raise fail(...)`."""
    return RunError(diag(code, span, **args), lane)


def clamp_domain(e: n.Call, lo: str, hi: str) -> str:
    """The detail of `math-domain` for `clamp(x, lo, hi)` with lo > hi, given the ends' values as printed: each
    end with its expression, unless it is the literal printed."""
    ends = [value if unparse(a) == value else f"{unparse(a)} = {value}" for a, value in zip(e.args[1:], (lo, hi))]
    return f"clamp needs lo <= hi, but lo is {ends[0]} and hi is {ends[1]}"
