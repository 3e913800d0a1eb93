"""Renderers (concise): one line per result, in the `path:line:col: ...` form that editors and CI logs read."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..diagnostics import Code, Diagnostic
from ..span import Source, shown_path
from .base import Renderer
from .common import Style, diagnostic_line

if TYPE_CHECKING:
    from ..interp.alignment import AlignmentReport
    from ..resolve import ResolvedMechanism
    from ..results import CheckedMechanism, ExactReport, FileResult, Replay, SampleRun, TestReport


def mechanism_concise(checked: CheckedMechanism) -> str:
    mech = checked.mechanism
    ids = " ".join(o.name for o in checked.obligations)
    return (f"{mech.node.name_span}: mechanism {mech.name}: {len(mech.noise)} sampling site(s); "
            f"obligations {ids}")


def verdicts_concise(mech: ResolvedMechanism, verdicts: list, status: str, scope: str = "") -> str:
    parts = [f"{v.obligation.name}={v.status}" for v in verdicts]
    shown = f"{status} ({scope})" if scope else str(status)
    return f"{mech.node.name_span}: mechanism {mech.name}: {shown}: " + " ".join(parts)




def _where(path: str, mech: ResolvedMechanism) -> str:
    return f"{mech.node.name_span}: mechanism {mech.name}" if mech.node.name_span.path == path else \
        f"{shown_path(path)}: mechanism {mech.name}"


def _lengths(lengths: Sequence[int], length: int | None) -> str:
    """`; at length 24 (lengths 6, 12, 24)` for the length that decided, or the lengths searched (nothing when no
    list was generated)."""
    searched = ", ".join(map(str, lengths))
    if not lengths:  # no list generated: nothing has a length
        return ""
    return f"; at length {length} (lengths {searched})" if length is not None else f"; lengths {searched}"


def _skipped(skipped: Sequence[Any]) -> str:
    """`; 1 input pair(s) skipped (<the first error>)`, or nothing."""
    return f"; {len(skipped)} input pair(s) skipped ({skipped[0].diagnostic.message})" if skipped else ""


class ConciseRenderer(Renderer):
    name = "concise"
    description = "one line per result and per diagnostic (path:line:col: ...)"

    def _diagnostics(self, diagnostics: Sequence[Diagnostic]) -> None:
        style = Style.for_stream(self.stderr)
        for d in diagnostics:
            self.stderr.write(diagnostic_line(d, style) + "\n")

    def checked_file(self, file: FileResult) -> None:
        self._diagnostics(file.diagnostics)
        for checked in file.checked:
            self.stdout.write(mechanism_concise(checked) + "\n")

    def verified_file(self, file: FileResult) -> None:
        self._diagnostics(file.diagnostics)
        for m in file.verified:
            confirmation = f" ({m.confirmation.text})" if m.confirmation is not None else ""
            if m.synthesis is not None:
                confirmation = f" (synthesis: {m.synthesis.text})" + confirmation
            if m.acceptance:
                confirmation += f" ({m.acceptance})"
            self.stdout.write(verdicts_concise(m.mechanism, list(m.verdicts), m.status, m.scope) + confirmation
                              + "\n")

    def errors(self, path: str | None, source: Source | None, diagnostics: Sequence[Diagnostic]) -> None:
        self._diagnostics(diagnostics)

    def samples(self, run: SampleRun) -> None:
        summary = run.summary()
        top = sorted(summary.counts.items(), key=lambda kv: -kv[1])[:3]
        shown = "; ".join(f"{summary.keys.text(k)}: {c / max(1, summary.samples):.2%}" for k, c in top)
        self.stdout.write(f"{_where(run.path, run.mechanism)}: {run.samples} samples, seed {run.seed}"
                          + (f"; most frequent outputs: {shown}" if shown else "") + "\n")

    def replay(self, replay: Replay) -> None:
        # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
        from ..interp.values import format_value

        verdict = "" if replay.alignment is None else \
            "; the alignment holds for this H" if not replay.failures else \
            "; the alignment fails for this H: " + ", ".join(replay.failures)
        run = replay.run
        shown = f"out = {format_value(run.out)}" if run.body_out is None else \
            f"out = {format_value(run.body_out)}, published = {format_value(run.out)}"
        self.stdout.write(f"{_where(replay.path, replay.mechanism)}: {shown}{verdict}\n")

    def alignment_check(self, path: str, mech: ResolvedMechanism, report: AlignmentReport,
                        counterexample_out: str | None) -> None:
        if report.ok:
            verdict = "no failure found (a sampled check proves nothing)"
        else:
            failing = ", ".join(f"{k}: {c}" for k, c in report.failures.items() if c)
            verdict = f"{report.failed_samples} samples fail ({failing})"
        self.stdout.write(f"{_where(path, mech)}: alignment check on {report.samples} samples: {verdict}\n")

    def tested(self, report: TestReport) -> None:
        r, w = report.result, report.result.witness
        if r.violation and w is not None:
            verdict = f"privacy violation confirmed (adjusted p = {w.adjusted_p:.3g} <= alpha = {r.alpha:g})"
        else:
            smallest = f"{w.adjusted_p:.3g}" if w is not None else "1"
            verdict = f"no violation found (smallest adjusted p = {smallest} > alpha = {r.alpha:g})"
        c = report.computed
        if c is not None:
            bound = "none" if c.strongest is None else \
                ("inf" if c.strongest.epsilon == math.inf else f"{c.strongest.epsilon:.4g}")
            verdict += f"; computed: {'privacy violation' if c.violation else 'no violation'} (eps >= {bound})"
        verdict += _lengths(report.lengths, report.length) + _skipped(report.skipped)
        self.stdout.write(f"{_where(report.path, report.mechanism)}: {verdict}; {r.samples} samples\n")

    def computed(self, report: ExactReport) -> None:
        r, s = report.result, report.result.strongest
        bound = "none" if s is None else ("inf" if s.epsilon == math.inf else f"{s.epsilon:.4g}")
        verdict = "privacy violation" if r.violation else "no violation"
        self.stdout.write(f"{_where(report.path, report.mechanism)}: {verdict} (computed eps >= {bound}, claimed "
                          f"{r.claimed_epsilon:g}){_lengths(r.lengths, r.length)}{_skipped(r.skipped)}; "
                          f"{r.paths} paths\n")

    def explained(self, code: Code) -> None:
        self.stdout.write(f"{code.name}: {code.explain()}\n")
