"""Report (test): `align test`'s search for a violation as a document (a notebook shows it with the API's
`TestReport`): the verdict, the witness (input pair, event, counts, p-value, ε lower bound), the strongest
findings per input pair, and the privacy-loss plot (matplotlib, when installed)."""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING

from .document import Code, Document, Figure, Heading, Paragraph, Table, Text, Tone, cell, inlines, row

if TYPE_CHECKING:
    from ..results import TestReport
    from ..stats.lrtest import Finding, Result

TOP = 10
"""Findings shown (the strongest first)."""


def build(report: TestReport) -> Document:
    result = report.result
    doc = Document(f"align test: {report.mechanism.name}")
    doc.add(Heading(1, f"Searching {report.mechanism.name} for a privacy violation"))
    computed = report.computed
    if result.violation:
        verdict = Paragraph(inlines(Text("Violation found", Tone.BAD, strong=True), " — some event E has "
                                    "P[M(D) ∈ E] > e^ε·P[M(D') ∈ E] for the claimed ε at the stated confidence: "
                                    "the mechanism is not ε-differentially private."), Tone.BAD)
    elif computed is not None and computed.violation and computed.strongest is not None:
        s = computed.strongest
        bound = "∞" if s.epsilon == math.inf else f"{s.epsilon:.4g}"
        verdict = Paragraph(inlines(Text("Violation computed", Tone.BAD, strong=True), " — the sampling found "
                                    "none, but the probabilities computed from the program's paths give ",
                                    Code(s.event.text()), f" a loss of at least {bound} on the pair ",
                                    Code(s.pair.name), _at(s.pair.length),
                                    f" (P[M(D) ∈ E] ≥ {s.p.lower:.4g}, P[M(D') ∈ E] ≤ {s.p_prime.upper:.4g}), "
                                    "above the claimed ε: the mechanism is not "
                                    "ε-differentially private."), Tone.BAD)
    else:
        verdict = Paragraph(inlines(Text("No violation found", Tone.GOOD, strong=True), " — no tested event "
                                    "rejects the claim. This is evidence, not a proof: `align verify` proves."),
                            Tone.GOOD)
    doc.add(verdict, Paragraph(inlines(
        f"{result.samples:,} samples in {report.seconds:.1f} s; {len(result.pairs)} input pairs, {result.tests} "
        f"tests (Bonferroni), level α = {result.alpha:g}, seed {result.seed}; claimed ε = "
        f"{result.claimed_epsilon:.4g}" + (f"; lengths searched: {', '.join(map(str, report.lengths))}"
                                           if report.lengths else "") + ".")))
    if result.findings:
        doc.add(Heading(2, "Strongest findings"), _findings(result))
    witness = result.witness
    if witness is not None:
        doc.add(Paragraph(inlines("The witness pair ", Code(witness.pair.name), _at(witness.pair.length), ": D has ",
                                  Code(_values(witness.pair.d)), ", D' has ", Code(_values(witness.pair.d_prime)),
                                  "; the other parameters: ", Code(_values(report.args)) if report.args else "none",
                                  ".")))
    png = plot_png(report.mechanism.name, result)
    if png is not None:
        doc.add(Figure(png, "Left: the smallest adjusted p-value against the tested ε (the claim is rejected where "
                            "the curve is below α). Right: the strongest ε lower bound per input pair.",
                       "privacy-loss plot"))
    return doc


def _at(length: int | None) -> str:
    """` at length 24` for a pair of the patterns (the search escalates the length), nothing for a given pair."""
    return "" if length is None else f" at length {length}"


def _values(values) -> str:
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import format_values

    return format_values(values)


def _bound(f: Finding) -> str:
    if f.epsilon_bound == math.inf:
        return "∞ (impossible on D')"
    return "−∞" if f.epsilon_lower_bound == -math.inf else f"{f.epsilon_lower_bound:.4g}"


def _findings(result: Result) -> Table:
    ranked = sorted(result.findings, key=lambda f: (-f.epsilon_bound, f.adjusted_p))[:TOP]
    witness = result.witness
    rows = []
    for f in ranked:
        rows.append(row(cell(Code(f.pair.name)), cell(Code(f.event.text)), cell(f"{f.c1} / {f.n1}"),
                        cell(f"{f.c2} / {f.n2}"), cell(f"{f.adjusted_p:.3g}"),
                        cell(_bound(f), tone=Tone.BAD if f.rejects else Tone.PLAIN),
                        marked=f is witness and f.rejects))
    return Table("findings", ("input pair", "event E", "in E on D", "in E on D'", "adjusted p", "ε lower bound"),
                 tuple(rows), f"The {len(rows)} strongest of {len(result.findings)} findings; a bound at or above "
                              "its claim rejects it (marked: the witness).")


def plot_png(name: str, result: Result) -> bytes | None:
    """The privacy-loss plot (`stats.plot`) as PNG bytes; None without matplotlib or findings."""
    # lazy: loads numpy only when this runs (start-up; tests/test_layers.py)
    from ..stats.plot import available, write_plot

    if not available() or not result.findings:
        return None
    png = io.BytesIO()
    write_plot(png, name, result)
    return png.getvalue()
