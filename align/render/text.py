"""Renderers (text): the full, human report of every command, with source carets for diagnostics."""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..diagnostics import Code, Diagnostic
from ..results import vacuous
from ..span import Source, shown_path
from ..unparse import unparse, unparse_example
from .base import Renderer
from .common import (
    PLAIN,
    Style,
    adjacency_text,
    counterexample_lines,
    proof_rule,
    render_diagnostic,
    requires_text,
    verdict_summary,
)

if TYPE_CHECKING:
    from ..exact.search import ExactResult
    from ..interp.alignment import AlignmentReport
    from ..interp.runner import Summary
    from ..resolve import ResolvedMechanism
    from ..results import CheckedMechanism, ExactReport, FileResult, Replay, SampleRun, TestReport


def mechanism_text(checked: CheckedMechanism, style: Style = PLAIN) -> str:
    """`align check`: what a proof must establish for one mechanism."""
    mech = checked.mechanism
    node = mech.node
    out = [f"{style.bold('mechanism ' + mech.name)}  {style.dim(str(node.name_span))}"]
    width = max((len(p.name) + len(p.declared_type) for p in mech.params), default=0) + 2
    out.append("  parameters")
    for p in mech.params:
        out.append(f"    {(p.name + ': ' + p.declared_type).ljust(width)}  {adjacency_text(mech, p.name)}")
    if mech.requires:
        out.append("  requires     " + ", ".join(unparse(r) for r in mech.requires))
    out.append("  privacy      " + unparse(mech.claim))
    if node.examples:
        out.append("  example      " + ", ".join(unparse_example(x) for x in node.examples) +
                   "  (align run and align test use these unless --arg or --length says otherwise)")
    out.append("  proof rule   " + proof_rule(mech))
    out.append("  output       " + str(mech.output_type))
    if mech.release is not None:
        out.append("  published    " + str(mech.published_type) + "  (computed from out by the release block)")
    out.append("  sampling sites")
    if not mech.noise:
        out.append("    (none)")
    summaries = [c.summary for c in checked.sites]
    name_w = max((len(s.site.display) for s in summaries), default=0)
    dist_w = max((len(s.distribution_text) for s in summaries), default=0)
    for s, reads in zip(summaries, (c.reads for c in checked.sites)):
        out.append(f"    {s.site.display.ljust(name_w)} ~ {s.distribution_text.ljust(dist_w)}  "
                   f"{style.dim('line ' + str(s.site.span.line))}")
        cost = f"c = {s.cost_text}" if s.site.distribution.lipschitz else s.cost_text
        out.append(f"    {' ' * name_w}   cost coefficient {cost}")
        marked = reads.text() if reads.public else style.error(reads.text())
        out.append(f"    {' ' * name_w}   parameters: {marked}")
        out.append(f"    {' ' * name_w}   alignment: {s.shift_text}")
    if mech.alignment is not None:
        if mech.alignment.lets or mech.alignment.invariants:
            out.append("  alignment")
            for let in mech.alignment.lets:
                out.append(f"    let {let.name} = {unparse(let.value)}")
            for inv in mech.alignment.invariants:
                out.append(f"    invariant {unparse(inv.condition)}")
    elif checked.rule.aligned:
        out.append("  alignment    none written: `align verify` synthesises one (docs/synthesis.md); the checker "
                   "alone reads it as shifting no noise")
    out.append("  obligations for `align verify` (nothing is proved by `align check`)")
    for ob in checked.obligations:
        out.append(f"    {style.accent(ob.id.ljust(4))} {ob.title}  {style.dim(str(ob.span))}")
        for detail in ob.details:
            out.append(f"         {detail}")
    return "\n".join(out)


_STATUS_STYLE = {"proved": "32", "bounded": "33", "refuted": "1;31", "unknown": "33"}


def _status(style: Style, status: str) -> str:
    return style._wrap(_STATUS_STYLE.get(str(status), "0"), str(status).ljust(7))


def verdicts_text(mech: ResolvedMechanism, verdicts: list, status: str, scope: str = "",
                  style: Style = PLAIN) -> str:
    out = [f"{style.bold('mechanism ' + mech.name)}  {style.dim(str(mech.node.name_span))}",
           f"  proof rule   {proof_rule(mech)}",
           f"  parameters   symbolic, for all {requires_text(mech)}",
           f"  claim        ε = {unparse(mech.claim)}"]
    shared = _shared_notes(verdicts)
    for v in verdicts:
        ob = v.obligation
        label = ob.name
        detail = v.scope if str(v.status) in ("proved", "bounded") else v.reason
        out.append(f"  {style.accent(label.ljust(10))} {_status(style, v.status)} {detail}  "
                   f"{style.dim(f'{v.seconds:.2f}s  {ob.span}')}")
        out.append(f"  {' ' * 10} {style.dim(ob.title)}")
        for note in v.notes:
            if note not in shared:
                out.append(f"  {' ' * 10} note: {note}")
        if str(v.status) == "refuted" and v.counterexample is not None:
            out += ["  " + " " * 10 + " " + line for line in counterexample_lines(v.counterexample)]
    for note, names in shared.items():
        out.append(f"  note         on {', '.join(names)}: {note}")
    total = sum(v.seconds for v in verdicts)
    summary = verdict_summary(status, scope, mech, vacuous=vacuous(verdicts))
    out.append(f"  verdict      {_status(style, status).strip()} — {summary}  "
               f"{style.dim(f'{total:.2f}s')}")
    return "\n".join(out)


def _shared_notes(verdicts: list) -> dict[str, list[str]]:
    """The notes that three obligations or more carry (a float-sensitive comparison a comment accepts, which
    every obligation that follows the branches mentions), each with the obligations': printed once, after them."""
    names: dict[str, list[str]] = {}
    for v in verdicts:
        for note in v.notes:
            names.setdefault(note, []).append(v.obligation.name)
    return {note: carriers for note, carriers in names.items() if len(carriers) >= 3}


# ------------------------------------------------------------------------------------------------ align test


def _bound_text(x: float) -> str:
    return "-inf" if x == -math.inf else f"{x:.4g}"


def _strongest_text(f: Any) -> str:
    return "= inf" if f.epsilon_bound == math.inf else f">= {_bound_text(f.epsilon_lower_bound)}"


def _method(result: Any) -> str:
    """How the bound was obtained: the test that decided, inverted, at its Bonferroni-adjusted level."""
    return f"the exact test inverted at level alpha/{result.tests}, simultaneous"


def result_text(path: str, mechanism: str, result: Any, seconds: float) -> str:
    if getattr(result, "claim_reads_output", False):
        lines = [(f"mechanism {mechanism}  ({shown_path(path)}); the claim reads the output: each event is tested "
                  f"against the claim's largest value over the event")]
    else:
        lines = [f"mechanism {mechanism}  ({shown_path(path)}); claimed eps = {result.claimed_epsilon:.6g}"]
    w = result.witness
    confidence = f"{1 - result.alpha:.0%}"
    if result.violation:
        lines.append(f"privacy violation confirmed: p = {w.adjusted_p:.3g} <= alpha = {result.alpha:g} "
                     f"(exact test, Bonferroni over {result.tests} tests)")
        lines.append(f"  D:      {arguments_text(dict(w.pair.d))}")
        lines.append(f"  D':     {arguments_text(dict(w.pair.d_prime))}")
        lines.append(f"  event:  {w.event.text}")
        if getattr(result, "claim_reads_output", False):
            lines.append(f"  claim:  eps = {w.eps:.6g} (its largest value over the event)")
        lines.append(f"  M(D):   {w.c1} of {w.n1} samples in the event")
        mismatch = "  (support mismatch: never seen under D')" if w.support_mismatch else ""
        lines.append(f"  M(D'):  {w.c2} of {w.n2} samples in the event{mismatch}")
        if w.epsilon_bound == math.inf:
            lines.append(f"  eps = inf: P[M(D') in E] = 0 is proved ({w.impossible}), and "
                         f"P[M(D) in E] >= {result.p1_lower_bound(w):.3g} with {confidence} confidence "
                         f"(the samples alone give eps >= {_bound_text(w.epsilon_lower_bound)})")
        else:
            lines.append(f"  eps >= {_bound_text(w.epsilon_lower_bound)} with {confidence} confidence "
                         f"({_method(result)})" + (
                             "; finite only because of the sample size" if w.support_mismatch else ""))
        s = result.strongest
        stronger = s is not None and (s.epsilon_bound, s.epsilon_lower_bound) > \
            (w.epsilon_bound, w.epsilon_lower_bound + 1e-12)
        if stronger:
            proved = " (P[M(D') in E] = 0 proved)" if s.epsilon_bound == math.inf else ""
            claim = f"; claim eps = {s.eps:.6g}" if getattr(result, "claim_reads_output", False) else ""
            lines.append(f"  strongest bound: eps {_strongest_text(s)} on {s.event.text} ({s.c1} of {s.n1} vs "
                         f"{s.c2} of {s.n2}{proved}{claim}; D: {arguments_text(dict(s.pair.d))}; "
                         f"D': {arguments_text(dict(s.pair.d_prime))})")
    else:
        smallest = f"{w.adjusted_p:.3g}" if w is not None else "1"
        lines.append(f"no violation found: smallest adjusted p = {smallest} > alpha = {result.alpha:g} "
                     f"(this is not a proof)")
        s = result.strongest
        if s is not None:
            # the same test: no claim rejected means every bound is below the claim it was tested against
            below = "each below its event's claim" if getattr(result, "claim_reads_output", False) else \
                f"< claimed eps = {result.claimed_epsilon:.6g}"
            lines.append(f"  largest eps lower bound: {_bound_text(s.epsilon_lower_bound)} ({below}; "
                         f"{confidence} confidence, {_method(result)})")
    lines += skipped_lines(getattr(result, "skipped", ()))
    confirmations = getattr(result, "confirmations", 0)
    confirmed = f" and {confirmations} confirmation test(s)" if confirmations else ""
    lines.append(f"samples: {result.samples} in {result.rounds} round(s){confirmed}, {len(result.pairs)} input "
                 f"pair(s), seed {result.seed}, {seconds:.2f} s")
    return "\n".join(lines)



def skipped_lines(skipped: Sequence[Any], indent: str = "") -> list[str]:
    """One line per input pair the program stopped on (left out of the search), with its error."""
    return [f"{indent}skipped input pair {s.pair.name} (D: {arguments_text(dict(s.pair.d))}; D': "
            f"{arguments_text(dict(s.pair.d_prime))}): the program stops: {s.diagnostic.message}" for s in skipped]


def lengths_text(lengths: Sequence[int], length: int | None, sampled: Sequence[int], computed: Sequence[int]) -> str:
    """Which length decided (when a generated pair did) and the lengths searched, each sampled or computed."""
    def how(n: int) -> str:
        if not (sampled and computed):  # one way only: nothing to tell apart
            return ""
        return " (" + " and ".join(w for w, where in (("sampled", sampled), ("computed", computed)) if n in where) + ")"

    if length is not None:
        return f"found at length {length} (lengths searched: {', '.join(map(str, lengths))})"
    return "lengths searched: " + ", ".join(f"{n}{how(n)}" for n in lengths)


def computed_text(report: ExactReport) -> str:
    """`align test --exact`: the strongest event with its brackets, or the largest bound below the claim."""
    r = report.result
    lines = [f"mechanism {report.mechanism.name}  ({shown_path(report.path)}); claimed eps = {r.claimed_epsilon:.6g}"]
    lines += computed_lines(r)
    lines.append(f"paths: {r.paths} on {len(r.pairs)} input pair(s), {len(r.findings)} events, "
                 f"{report.seconds:.2f} s")
    if r.lengths:
        lines.append(lengths_text(r.lengths, r.length, (), r.lengths))
    return "\n".join(lines)


def computed_lines(r: ExactResult, indent: str = "", skipped: Sequence[Any] | None = None) -> list[str]:
    """The verdict of a computed search, its strongest event and the brackets behind its bound, the pairs the
    program stopped on (`skipped`, by default the computation's) and the length where it left the class."""
    s = r.strongest
    if s is None:
        return [f"{indent}no violation: no event has positive probability on both sides of a pair"]
    bound = "inf" if s.epsilon == math.inf else f"{s.epsilon:.4g}"
    if r.violation:
        lines = [f"{indent}privacy violation: eps >= {bound} >= claimed {r.claimed_epsilon:.6g} (computed, not "
                 "sampled: no confidence level)"]
    else:
        lines = [f"{indent}no violation: the largest eps lower bound is {bound} < claimed {r.claimed_epsilon:.6g} "
                 f"over the events and input pairs computed (this is not a proof)"]
    d, d2 = s.inputs
    lines.append(f"{indent}  D:      {arguments_text(dict(d))}  ({s.pair.name})")
    lines.append(f"{indent}  D':     {arguments_text(dict(d2))}")
    lines.append(f"{indent}  event:  {s.event.text()}")
    lines.append(f"{indent}  M(D):   P in [{s.p.lower:.6g}, {s.p.upper:.6g}]")
    zero = "  (no path of D' gives this output)" if s.p_prime.upper == 0 else ""
    lines.append(f"{indent}  M(D'):  P in [{s.p_prime.lower:.6g}, {s.p_prime.upper:.6g}]{zero}")
    lines.append(f"{indent}  eps >= ln({s.p.lower:.6g} / {s.p_prime.upper:.6g}) = {bound}" if s.p_prime.upper > 0
                 else f"{indent}  eps = inf: the event is impossible on D'")
    lines += skipped_lines(r.skipped if skipped is None else skipped, indent)
    if r.outside:
        lines.append(f"{indent}not computed from the paths {r.outside}")
    return lines


def tested_text(report: TestReport) -> str:
    """`align test`: the sampling's report, then what the paths computed when the sampling found nothing."""
    text = result_text(report.path, report.mechanism.name, report.result, report.seconds)
    if report.computed is not None:
        c = report.computed
        text += (f"\nthe sampling found no violation; computed from the program's paths ({c.paths} paths, "
                 f"{len(c.findings)} events; align test --exact):\n" +
                 "\n".join(computed_lines(c, "  ", report.skipped[len(report.result.skipped):])))
    elif report.not_computed is not None:
        text += f"\nnot computed from the paths: {report.not_computed}"
    if not report.lengths:  # no list generated: nothing has a length
        return text
    return text + "\n" + lengths_text(report.lengths, report.length, report.result.lengths, report.computed_lengths)


# --------------------------------------------------------------------------------------------------- align run


def arguments_text(values: dict) -> str:
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import format_values

    return format_values(values)


def _trace_lines(trace: Sequence[Any]) -> list[str]:
    return [f"  line {e.line:<4} {'  ' * e.depth}{e.text}" for e in trace]


def replay_lines(r: Replay) -> list[str]:
    """The trace of a replayed run and, when aligned, the alignment's table and the neighbour's trace."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import format_value, format_values

    lines = ["run on D: " + arguments_text(r.args)]
    lines += _trace_lines(r.run.trace)
    if r.run.body_out is not None:  # a release block published r.run.out from out
        lines.append(f"out = {format_value(r.run.body_out)}")
        lines.append(f"published = {format_value(r.run.out)}")
    else:
        lines.append(f"out = {format_value(r.run.out)}")
    if r.run.unused:
        lines.append("unused noise values: " + ", ".join(r.run.unused))
    if r.alignment is None or r.neighbour is None:
        return lines
    alignment = r.alignment
    lines.append("")
    lines.append("alignment φ(H), neighbour " + format_values(r.neighbour, "'"))
    for name, value in alignment.lets.items():
        lines.append(f"  let {name} = {format_value(value)}")
    rows = [("noise", "value", "shift ψ", "aligned", "c", "c·|ψ|")]
    for d in alignment.draws:
        coefficient = "-" if d.coefficient is None else format_value(d.coefficient)
        cost = format_value(d.cost) if d.coefficient is not None or d.shift == 0 else "not Lipschitz"
        rows.append((d.draw.display, format_value(d.draw.value), format_value(d.shift), format_value(d.aligned),
                     coefficient, cost))
    widths = [max(len(row[k]) for row in rows) for k in range(6)]
    for row in rows:
        lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    lines.append(f"  cost {format_value(alignment.cost)} {'<=' if r.cost_ok else '>'} claim "
                 f"{unparse(r.mechanism.claim)} = {format_value(alignment.claim)}: "
                 f"{'ok' if r.cost_ok else 'C4c fails'}")
    for d in alignment.draws:
        if d.coefficient is None and d.shift != 0:
            lines.append(f"  {d.draw.display} ~ {d.draw.site.distribution.name} is not Lipschitz but is shifted: "
                         "C3 fails")
    bad = [d for d in alignment.draws if not (d.in_support and d.whole)]
    for d in bad:
        dist = d.draw.site.distribution
        why = f"outside the support {dist.support} of {dist.name}" if not d.in_support else "not a whole shift"
        lines.append(f"  {d.draw.display}' = {format_value(d.aligned)}: {why}: C4d fails")
    if not bad:
        lines.append("  support: every aligned value is valid noise")
    lines.append("")
    lines.append("run on D' with φ(H): " + arguments_text({**r.args, **r.neighbour}))
    if r.aligned_run is not None:
        lines += _trace_lines(r.aligned_run.trace)
        lines.append(f"out' = {format_value(r.aligned_run.out)}")
        if r.output_match and r.aligned_run.unused:
            lines.append("outputs match, but the run on D' leaves noise unused: " + ", ".join(r.aligned_run.unused)
                         + ": C2 fails")
        lines.append(f"outputs match: {'yes' if r.output_match else 'no: C4a fails'}")
    elif r.aligned_error is not None:
        lines.append(f"  stops: error[{r.aligned_error.code}]: {r.aligned_error.message}")
        lines.append("outputs match: no: C4a fails")
    if r.different_density is not None:
        lines.append(f"{r.different_density}: C0 fails")
    lines.append("the alignment holds for this H" if not r.failures else
                 "the alignment fails for this H: " + ", ".join(r.failures))
    return lines


# ---------------------------------------------------------------------------------------------- the format


class TextRenderer(Renderer):
    name = "text"
    description = "the full report, with source carets for diagnostics (the default)"

    def _diagnostics(self, source: Source | None, diagnostics: Sequence[Diagnostic]) -> None:
        style = Style.for_stream(self.stderr)
        for d in diagnostics:
            self.stderr.write(render_diagnostic(d, source, style) + "\n\n")

    def checked_file(self, file: FileResult) -> None:
        self._diagnostics(file.source, file.diagnostics)
        style = Style.for_stream(self.stdout)
        for checked in file.checked:
            self.stdout.write(mechanism_text(checked, style) + "\n\n")

    def verified_file(self, file: FileResult) -> None:
        self._diagnostics(file.source, file.diagnostics)
        style = Style.for_stream(self.stdout)
        for m in file.verified:
            self.stdout.write(verdicts_text(m.mechanism, list(m.verdicts), m.status, m.scope, style) + "\n")
            if m.synthesis is not None:
                self.stdout.write(f"  synthesis    {m.synthesis.text}\n")
                for line in (m.synthesis.alignment or "").splitlines():
                    self.stdout.write(f"               {line}\n")
            if m.confirmation is not None:
                self.stdout.write(f"  empirical    {m.confirmation.text}\n")
            if m.acceptance:
                self.stdout.write(f"  gate         {m.acceptance}\n")
            self.stdout.write("\n")

    def errors(self, path: str | None, source: Source | None, diagnostics: Sequence[Diagnostic]) -> None:
        self._diagnostics(source, diagnostics)

    def samples(self, run: SampleRun) -> None:
        summary = run.summary()
        self.stdout.write(f"mechanism {run.mechanism.name}  ({shown_path(run.path)})\n")
        self.stdout.write("arguments: " + arguments_text(run.args) + "\n")
        self.stdout.write(f"seed {run.seed}\n")
        self.stdout.write(summary_text(summary) + "\n")

    def replay(self, replay: Replay) -> None:
        self.stdout.write("\n".join(replay_lines(replay)) + "\n")

    def alignment_check(self, path: str, mech: ResolvedMechanism, report: AlignmentReport,
                        counterexample_out: str | None) -> None:
        self.stdout.write(alignment_report_text(report) + "\n")
        if counterexample_out:
            self.stdout.write(f"first counterexample written to {shown_path(counterexample_out)}\n"
                              if report.counterexamples else "no counterexample to write\n")

    def tested(self, report: TestReport) -> None:
        self.stdout.write(tested_text(report) + "\n")

    def computed(self, report: ExactReport) -> None:
        self.stdout.write(computed_text(report) + "\n")

    def explained(self, code: Code) -> None:
        self.stdout.write(f"{code.name}: {code.explain()}\n")


def summary_text(summary: Summary, top: int = 20) -> str:
    """What `align run` prints about a sample: output lengths, the commonest discrete outputs, real quantiles."""
    # lazy: loads lark, numpy, scipy only when this runs (start-up; tests/test_layers.py)
    from ..interp.runner import QUANTILES

    lines = [f"{summary.samples} samples"]
    if not summary.samples:
        return lines[0]
    lines.append("output length: " + ", ".join(
        f"{k}: {c} ({c / summary.samples:.2%})" for k, c in sorted(summary.lengths.items())))
    best = heapq.nsmallest(top, summary.counts.items(), key=lambda kv: -kv[1])
    ranked = sorted(((c, summary.keys.text(k)) for k, c in best), key=lambda ct: (-ct[0], ct[1]))
    more = "" if not summary.untracked else " or more"
    lines.append(f"discrete outputs ({len(summary.counts)}{more} distinct; · marks a real component):")
    for c, text in ranked:
        lines.append(f"  {c:>10}  {c / summary.samples:8.4%}  {text}")
    rest = summary.samples - sum(c for c, _ in ranked) - summary.untracked
    if len(summary.counts) > top:
        lines.append(f"  {rest:>10}  {rest / summary.samples:8.4%}  ... {len(summary.counts) - top} more")
    if summary.untracked:
        untracked = summary.untracked
        lines.append(f"  {untracked:>10}  {untracked / summary.samples:8.4%}  ... outputs first seen after "
                     f"{summary.max_keys} distinct ones (not told apart)")
    q = summary.quantiles()
    if q:
        lines.append(f"real components (quantiles over the first {summary.real_kept} samples):")
        header = "  ".join(f"{p:>10.0%}" for p in QUANTILES)
        lines.append(f"  {'component':<16} {'count':>10} {'mean':>10}  {header}")
        for name, (count, qs, mean) in q.items():
            cells = "  ".join(f"{x:>10.4g}" for x in qs) if qs else ""
            label = "out[]." + name if name != "value" else "out[]"
            lines.append(f"  {label:<16} {count:>10} {mean:>10.4g}  {cells}")
    return "\n".join(lines)


def alignment_report_text(report: AlignmentReport) -> str:
    """What `align run --check-alignment` prints: failures per sampled obligation, the largest cost."""
    # lazy: loads lark, numpy, scipy only when this runs (start-up; tests/test_layers.py)
    from ..interp.alignment import KINDS as SAMPLED_KINDS
    from ..interp.values import format_value
    from ..obligations import KINDS

    lines = [f"alignment check of {report.mechanism}: {report.samples} samples (seed {report.seed})"]
    for kind in SAMPLED_KINDS:
        count = report.failures.get(kind, 0)
        result = "ok" if not count else f"{count} failing samples"
        lines.append(f"  {kind:<4} {KINDS[kind].label}: {result}")
    lines.append(f"  largest cost {format_value(report.max_cost)}; largest cost / claim "
                 f"{format_value(report.max_cost_over_claim)}")
    if report.ok:
        lines.append("no failure found (a sampled check proves nothing)")
    else:
        lines.append(f"{report.failed_samples} of {report.samples} samples fail; counterexamples:")
        for c in report.counterexamples:
            lines.append(f"  [{c.obligation}] {c.note}")
    return "\n".join(lines)
