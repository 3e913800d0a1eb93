"""Report (proof): a verdict as the proof a course would write, in the structure of its proof rule.

`build` turns one `MechanismVerdict` into a `Document`: the mechanism listing with line numbers, the
parameters, `requires` and the neighbouring relation, the rule's statement, the noise sites with their cost
coefficient cᵢ, shift ψᵢ and cost term per branch (`costs.py`), the cost sum simplified by sympy against ε, the
acyclic order, the loop invariant of an inductive proof, each obligation with why it holds (or why not), the
scope, and the conclusion. For a refuted obligation: its counterexample as two runs side by side with the
first divergence marked (`trace.py`), the cost against the claim, the noise outside its support; with
`--confirm`, the likelihood-ratio test's result and its privacy-loss plot. Every statement is the checker's
or the interpreter's; the report decides nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy

from ..interp.divergence import side_by_side
from ..interp.values import format_value
from ..obligations import ObligationId, summarize_site
from ..render.common import adjacency_text, counterexample_lines, refuted_subject, verdict_summary
from ..rules import POST_PROCESSING, rule_for
from ..span import visible
from ..status import Status
from ..symbolic import NotSymbolic, simplify, to_sympy
from ..unparse import unparse
from .costs import CostSum, analyse, expand_constants, without_bound
from .document import (
    Cell,
    Code,
    DisplayMath,
    Document,
    Figure,
    Formula,
    Heading,
    Inline,
    Items,
    Listing,
    Paragraph,
    Row,
    Table,
    Text,
    Tone,
    cell,
    inlines,
    row,
)
from .search import plot_png

if TYPE_CHECKING:
    from ..counterexample import Counterexample
    from ..resolve import ResolvedMechanism
    from ..results import Confirmation, MechanismVerdict, Verdict
    from ..span import Source

STATUS_TONES = {Status.PROVED: Tone.GOOD, Status.BOUNDED: Tone.WARN, Status.UNKNOWN: Tone.WARN,
                Status.REFUTED: Tone.BAD}

def build(result: MechanismVerdict, source: Source | None, path: str) -> Document:
    mech = result.mechanism
    doc = Document(f"Proof report: {mech.name}")
    numbered = iter(range(1, 100))

    def section(title: str, anchor: str) -> Heading:
        return Heading(2, f"{next(numbered)} {title}", anchor)

    claim = _formula(mech.claim)
    doc.add(Heading(1, f"Is {mech.name} ε-differentially private?"),
            Paragraph(inlines("Specification ", Code(visible(path)), ", mechanism ", Code(mech.name), ", claim ε = ",
                              claim)),
            Paragraph(inlines(Text(f"Verdict: {result.status}", _tone(result.status), strong=True), " — ",
                              _summary(result)), _tone(result.status)))
    verdicts = {v.obligation.id: v for v in result.verdicts}
    cex = result.counterexample
    # the refutation the counterexample section is about: the one whose counterexample it shows
    refuted = next((v for v in result.verdicts if v.status == Status.REFUTED and cex is not None
                    and v.counterexample is cex), None) or \
        next((v for v in result.verdicts if v.status == Status.REFUTED), None)
    steps = side_by_side(mech, cex) if cex is not None else None
    marked: set[int] = set()
    marks: list[str] = []
    if refuted is not None:
        marked.add(refuted.obligation.span.line)
        marks.append("the refuted obligation's line")
        if refuted.obligation.id == ObligationId.C4B and _shifts_reading_noise(mech):
            marked |= _shifts_reading_noise(mech)  # where the cycle runs
            marks.append("the shifts that read noise (the cycle runs through them)")
    if steps is not None and steps.divergence is not None:
        marked |= {steps.steps[steps.divergence].line, steps.steps[steps.divergence].line_d_prime}
        marks.append("the first line where the two runs part")

    doc.add(section("The mechanism", "mechanism"))
    if source is not None:
        doc.add(_listing(result, source, frozenset(marked), marks))
    doc.add(section("Parameters and neighbouring inputs", "parameters"), _parameters(result))
    if mech.requires:
        doc.add(Paragraph(inlines("Requires: ", *_joined([_formula(r) for r in mech.requires]), ". ",
                                  _REQUIRES[result.status])))

    rule = rule_for(mech)
    doc.add(section("The proof rule", "rule"), Paragraph(inlines(Text(rule.name, strong=True), ". ",
                                                                        rule.statement)))
    if mech.release is not None:
        doc.add(Paragraph(inlines("The mechanism publishes what its ", Code("release"), " block computes from ",
                                  Code("out"), ". The obligations below are about ", Code("out"), "; ",
                                  _RELEASE_STEP[result.status], " ", Text(POST_PROCESSING.name, strong=True), ". ",
                                  POST_PROCESSING.statement)))
    if ObligationId.MIX in verdicts:
        doc.add(section("The mixture rule", "mixture"), *_mixture(verdicts[ObligationId.MIX], claim))
    else:
        costs = analyse(mech)
        doc.add(section("Noise sites and the alignment", "sites"))
        if result.synthesis is not None and result.synthesis.alignment is not None:
            doc.add(*_synthesised(result))
        doc.add(*_sites(result, costs))
        doc.add(section("The cost sum", "cost"), *_cost_sum(mech, costs, verdicts.get(ObligationId.C4C)))
        if ObligationId.C4B in verdicts:
            doc.add(section("Acyclicity (C4b)", "acyclic"), *_acyclic(verdicts[ObligationId.C4B]))
        if any(v.invariant for v in result.verdicts):
            doc.add(section("The loop invariant", "invariant"), *_invariant(result))
    doc.add(section("The obligations", "obligations"), _obligations(result))
    if cex is not None and refuted is not None:
        doc.add(section("The counterexample", "counterexample"), *_counterexample(result, refuted, cex, steps))
    if result.confirmation is not None:
        doc.add(section("Empirical check", "confirm"), *_confirmation(result.confirmation, mech.name))
    doc.add(Heading(2, "Conclusion", "conclusion"), Paragraph(inlines(_conclusion(result)), _tone(result.status)))
    return doc


_RELEASE_STEP = {
    Status.PROVED: "they prove it private, and the published value follows by",
    Status.BOUNDED: "they are checked only within their scope, which the published value inherits by",
    Status.UNKNOWN: "they are not all decided, so nothing is carried to the published value by",
    Status.REFUTED: "one is refuted, so this proof does not reach the published value, which would follow by",
}
"""How the verdict on `out` reaches what a release block publishes."""

_REQUIRES = {
    Status.PROVED: "The proof holds for every value of the public parameters that satisfies this.",
    Status.BOUNDED: "The obligations are checked for the values of the public parameters that satisfy this, within "
                    "the scope of each (below).",
    Status.UNKNOWN: "The obligations are checked for every value of the public parameters that satisfies this.",
    Status.REFUTED: "The obligations are checked for every value of the public parameters that satisfies this; a "
                    "counterexample satisfies it.",
}
"""What the `requires` clause means for the verdict: a proof holds for every value it admits; otherwise it is
the condition under which the obligations were checked."""


def _names(verdicts) -> str:
    names = [v.obligation.name for v in verdicts]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _conclusion(result: MechanismVerdict) -> str:
    """The last paragraph, from the verdicts: each sentence holds for the status it is written for."""
    mech = result.mechanism
    lemma1 = mech.alignment is not None or not any(v.obligation.id == ObligationId.MIX for v in result.verdicts)
    what = refuted_subject(mech)
    open_ = [v for v in result.verdicts if v.status == result.status]
    if result.status == Status.PROVED:
        text = (f"Every obligation holds {result.scope}, so by the rule above the mechanism is ε-differentially "
                f"private with ε = {unparse(mech.claim)}.")
    elif result.status == Status.BOUNDED:
        text = (f"No obligation is refuted, but {_names(open_)} {'is' if len(open_) == 1 else 'are'} proved only "
                f"{result.scope or open_[0].scope}: this is not a proof of ε-differential privacy for inputs beyond "
                "that (`align verify --accept-bounded` accepts it).")
    elif result.status == Status.UNKNOWN:
        text = (f"No obligation is refuted, but {_names(open_)} could not be decided (see the obligations): the claim "
                "is neither proved nor refuted.")
    else:
        see = " and the counterexample" if result.counterexample is not None else ""
        text = (f"{what[0].upper()}{what[1:]} does not prove the claim: {_names(open_)} "
                f"{'fails' if len(open_) == 1 else 'fail'} (see the obligations{see}). The mechanism may still be "
                "private, " + ("with another alignment: " if lemma1 else "by another argument: ")
                + "a refuted obligation is not a privacy violation until a test confirms one (align test, or align "
                "report --confirm).")
    conf = result.confirmation
    if conf is not None and conf.violation:
        text += (" Here the test confirms a violation: the mechanism itself is not ε-differentially private for the "
                 "claimed ε.")
    elif conf is not None and conf.violation is False:
        text += " Here the test found no violation, which proves nothing either way."
    return text


def _synthesised(result: MechanismVerdict) -> list:
    """The synthesised alignment, and what the verdicts below are about."""
    found = result.synthesis
    assert found is not None and found.alignment is not None
    counts = (f"{found.candidates} candidates, {found.examples} examples, {found.iterations} checker calls; "
              "docs/synthesis.md")
    about = "the proof below is about it" if result.status == Status.PROVED else "the verdicts below are about it"
    if found.role == "suggested":
        head = inlines("The verdicts below are about the written alignment. ", Code("align verify --synthesise"),
                       f" also found this one ({counts}): {found.text}")
    elif found.role == "replaces":
        head = inlines("The written alignment is not proved: ", Code("align verify --synthesise"),
                       f" found this one ({counts}), and {about}. Paste it into the spec to keep it.")
    else:
        head = inlines("No alignment was written: ", Code("align verify"), f" synthesised this one ({counts}), "
                       f"and {about}. Paste it into the spec to keep it.")
    return [Paragraph(head), Listing(tuple(enumerate(found.alignment.splitlines(), 1)),
                                     caption="the synthesised alignment")]


def _invariant(result: MechanismVerdict) -> list:
    """The loop invariant, and the obligations it proves for every length: only those whose verdict is that."""
    proved = [v for v in result.verdicts if v.invariant and v.status == Status.PROVED
              and v.scope == "for every input length"]
    invariant = (proved or [v for v in result.verdicts if v.invariant])[0].invariant
    legend = inlines(" (a primed name such as ", Code("cost'"), " is the value in the run on D'; ",
                     Code("aligned_cost"), " is the cost Σ cᵢ·|ψᵢ| of the alignment so far; ", Code("claim"),
                     " is ε).")
    if proved:
        head = inlines(f"The checker proved {_names(proved)} for every input length by induction over the main loop: "
                       "the invariant below holds of both runs and the aligned cost at the loop head before the "
                       "first iteration, and each iteration preserves it", *legend)
    else:
        head = inlines("The induction over the main loop found the invariant below (it holds at the loop head before "
                       "the first iteration, and each iteration preserves it), but it proves no obligation here: "
                       + "; ".join(f"{v.obligation.name} is {v.status}" for v in result.verdicts if v.invariant)
                       + ".", *legend)
    items = []
    for conjunct in invariant:
        parts: list[Inline | str] = [Code(conjunct.text)]
        for k, (name, formula) in enumerate(conjunct.where):
            parts += [", where " if k == 0 else " and ", Formula(sympy.Eq(sympy.Symbol(name), formula,
                                                                         evaluate=False))]
        items.append(inlines(*parts))
    return [Paragraph(head), Items(tuple(items))]


def _shifts_reading_noise(mech: ResolvedMechanism) -> set[int]:
    """The lines of the shifts that read noise: an alignment cycle (C4b) runs through them."""
    if mech.alignment is None:
        return set()
    return {s.node.span.line for s in mech.alignment.shifts if mech.reads_noise(s.shift)}


def _tone(status: Status) -> Tone:
    return STATUS_TONES[status]


def _summary(result: MechanismVerdict) -> str:
    return verdict_summary(str(result.status), result.scope, result.mechanism, vacuous=result.vacuous)


def _formula(e) -> Inline:
    """A program expression as a formula when sympy can take it, else as code."""
    try:
        return Formula(to_sympy(e, closed_forms=True))
    except NotSymbolic:
        return Code(unparse(e))


def _joined(parts: list[Inline]) -> list[Inline]:
    out: list[Inline] = []
    for i, p in enumerate(parts):
        if i:
            out.append(Text(", "))
        out.append(p)
    return out


def _listing(result: MechanismVerdict, source: Source, marked: frozenset[int], marks: list[str]) -> Listing:
    mech = result.mechanism
    first = mech.node.span.line
    last = mech.node.span.end_line
    if mech.alignment is not None:
        last = max(last, mech.alignment.node.span.end_line)
    shown = tuple((i, visible(source.line(i), tab="    ")) for i in range(first, last + 1))  # a comment may hold ESC
    caption = f"Marked: {', '.join(marks[:-1]) + ' and ' + marks[-1] if len(marks) > 1 else marks[0]}." if marks else ""
    return Listing(shown, marked, caption)


def _parameters(result: MechanismVerdict) -> Table:
    mech = result.mechanism
    rows = []
    for p in mech.params:
        private = not p.public
        rows.append(row(cell(Code(p.name)), cell(Code(p.declared_type)),
                        cell("private" if private else "public", tone=Tone.WARN if private else Tone.PLAIN),
                        cell(Code(adjacency_text(mech, p.name)) if private else Text("equal on D and D'"))))
    return Table("parameters", ("parameter", "type", "role", "on neighbouring inputs D ~ D'"), tuple(rows))


def _sites(result: MechanismVerdict, costs: CostSum) -> list:
    mech = result.mechanism
    blocks: list = []
    if not mech.noise:
        return [Paragraph(inlines("The mechanism draws no noise."))]
    rows: list[Row] = []
    for sc in costs.sites:
        summary = summarize_site(mech, sc.site)
        c: Inline = Formula(sc.coefficient) if sc.coefficient is not None else Text(summary.cost_text, Tone.BAD)
        head = (cell(Code(sc.site.display)), cell(str(sc.site.span.line)), cell(Code(summary.distribution_text)),
                Cell((c,)))
        if not sc.cases:
            rows.append(Row((*head, cell("—"), cell("0 (not shifted)"), cell(Formula(sympy.Integer(0))),
                             cell(Formula(sympy.Integer(0))))))
            continue
        for i, case in enumerate(sc.cases):
            shown = head if i == 0 else (cell(""), cell(""), cell(""), cell(""))
            psi: Inline = Formula(case.shift) if case.shift is not None else Code(case.shift_text)
            term: Inline = Formula(case.term) if case.term is not None else Text("—")
            bound: Inline = Formula(case.bound) if case.bound is not None else Text("no closed form here", Tone.MUTED)
            rows.append(Row((*shown, cell(Code(case.condition) if case.condition else Text("always")), cell(psi),
                             cell(term), cell(bound))))
    blocks.append(Table("sites", ("site", "line", "distribution", "cᵢ", "branch", "shift ψᵢ", "cost cᵢ·|ψᵢ|",
                                  "largest on D ~ D'"), tuple(rows),
                        "Each noise site, its cost coefficient cᵢ (the distribution's: ln fᵢ(x)/fᵢ(y) ≤ cᵢ·|x − y|), "
                        "the alignment's shift ψᵢ on each branch, and the largest cost term over neighbouring "
                        "inputs."))
    if mech.alignment is not None and mech.alignment.lets:
        blocks.append(Paragraph(inlines("Where the alignment's names are: ", *_joined(
            [Code(f"{let.name} = {unparse(let.value)}") for let in mech.alignment.lets]), ".")))
    return blocks


def _cost_sum(mech: ResolvedMechanism, costs: CostSum, c4c: Verdict | None) -> list:
    blocks: list = []
    cost = sympy.Symbol("cost", real=True)
    if costs.total is None:
        blocks.append(Paragraph(inlines("Some cost term has no closed form in this analysis: "
                                        + "; ".join(without_bound(costs)) + ".")))
    else:
        chain: list[sympy.Basic] = [cost, costs.total]
        relations = ["<="]
        if costs.expanded is not None:
            chain.append(costs.expanded)
            relations.append("=")
        if costs.claim is not None and costs.within is not None:
            chain.append(costs.claim)
            relations.append(costs.within)
        blocks.append(DisplayMath(tuple(chain), tuple(relations)))
        if costs.counts:
            blocks.append(Items(tuple(
                inlines(Formula(c.symbol), ": the number of iterations of the loop ", Code(c.loop), f" (line {c.line})",
                        *((" where ", Code(c.condition)) if c.condition else ())) for c in costs.counts)))
        if costs.equal_at:
            (n_symbol, value), = costs.equal_at.items()
            expanded = expand_constants(mech, value)
            parts: list[Inline] = [Formula(sympy.Eq(n_symbol, value))]
            if expanded is not None and expanded != value:
                parts += [Text(" = "), Formula(expanded)]
            blocks.append(Paragraph(inlines("The bound equals ε at ", *parts, ". Whether every run keeps ",
                                            Formula(n_symbol), " that small (the loop's own bookkeeping) is what "
                                            "the checker decides in C4c:")))
        elif costs.within is not None and c4c is not None and c4c.status == Status.PROVED:
            blocks.append(Paragraph(inlines("The bound is at most the claim: the cost is at most ε for every pair "
                                            "of neighbouring inputs and every noise value.")))
        elif costs.within is not None:
            blocks.append(Paragraph(inlines("The sum of these bounds is at most the claim, but C4c is not proved: "
                                            "the checker decides it on the exact cost, path by path (below).")))
        else:
            blocks.append(Paragraph(inlines("These per-term bounds are sound, but sympy does not show their sum to "
                                            "be at most the claim (it may not be: the terms need not all be largest "
                                            "at once); C4c below is decided on the exact cost, path by path.")))
    if c4c is not None:
        blocks.append(Paragraph(inlines("C4c: ", Text(str(c4c.status), _tone(c4c.status), strong=True), " ",
                                        c4c.scope or c4c.reason)))
    return blocks


def _acyclic(c4b: Verdict) -> list:
    blocks: list = [Paragraph(inlines("Each shifted noise value may read only values that come before it in some "
                                      "order (Free Gap, Definition 6), so that φ is one-to-one. C4b: ",
                                      Text(str(c4b.status), _tone(c4b.status), strong=True), " ",
                                      c4b.scope or c4b.reason))]
    blocks += [Paragraph(inlines(note)) for note in c4b.notes]
    return blocks


def _obligations(result: MechanismVerdict) -> Table:
    rows = []
    for v in result.verdicts:
        # the scope (proved, bounded) or the reason (refuted, unknown), then the verdict's own notes: each speaks
        # of this status (results.Note), and a proof for every length says there how it covers every length
        why = v.scope if v.status in (Status.PROVED, Status.BOUNDED) else v.reason
        detail = "; ".join(part for part in (why, *v.notes) if part)
        rows.append(Row((cell(Code(v.obligation.name)), cell(v.obligation.title),
                         cell(str(v.status), tone=_tone(v.status)), cell(detail),
                         cell(str(v.obligation.span.line))),
                        marked=v.status == Status.REFUTED))
    return Table("obligations", ("obligation", "what it requires", "status", "why", "line"), tuple(rows))


_SIMPLIFY_OPS = 60
"""The mixture rule's ε is simplified for display only up to this size (sympy's simplify takes seconds on the
truncated-Gaussian and ensemble closed forms, and does not make them readable)."""


def _mixture(mix: Verdict, claim: Inline) -> list:
    verdict = Paragraph(inlines("MIX: ", Text(str(mix.status), _tone(mix.status), strong=True), " — ",
                                mix.scope or mix.reason, ". The claim ", claim, " must be at least the rule's ε."))
    if mix.value is None:
        return [verdict]
    value = mix.value
    if value.free_symbols and sympy.count_ops(value) <= _SIMPLIFY_OPS:  # a short formula: in its simplest form
        value = simplify(sympy.expand_log(value, force=True))
    chain: tuple[sympy.Basic, ...] = (sympy.Symbol("epsilon_rule", real=True), value)
    relations: tuple[str, ...] = ("=",)
    if not value.free_symbols and not value.is_Number:
        chain, relations = (*chain, sympy.Float(sympy.N(value, 6), 6)), ("=", "~")
    return [DisplayMath(chain, relations), verdict]


def _counterexample(result: MechanismVerdict, refuted: Verdict, cex: Counterexample, steps) -> list:
    mech = result.mechanism
    blocks: list = [Paragraph(inlines(Code(refuted.obligation.name), " fails: ", refuted.reason or "", "."),
                              Tone.BAD)]
    data = cex.to_json()
    rows = []
    for p in mech.params:
        on_d = data.get("args", {}).get(p.name)
        on_d2 = data.get("neighbour", {}).get(p.name, on_d)
        rows.append(row(cell(Code(p.name)), cell(Code(format_value(on_d, digits=None))),
                        cell(Code(format_value(on_d2, digits=None))),
                        marked=on_d != on_d2))
    blocks.append(Table("inputs", ("parameter", "on D", "on D'"), tuple(rows), "The neighbouring inputs."))
    if steps is None:
        blocks.append(Items(tuple(inlines(Code(line)) for line in counterexample_lines(cex))))
        return blocks
    if steps.replay is None:
        blocks.append(Paragraph(inlines(steps.problem), Tone.BAD))
        return blocks
    draws = steps.draws
    if draws:
        noise_rows = []
        for d in draws:
            bad = not (d.in_support and d.whole)
            noise_rows.append(row(cell(Code(d.draw.display)), cell(format_value(d.draw.value)),
                                  cell(format_value(d.shift)),
                                  cell(format_value(d.aligned), tone=Tone.BAD if bad else Tone.PLAIN),
                                  cell(format_value(d.cost)), marked=bad))
        alignment = steps.replay.alignment
        total_bad = alignment is not None and not steps.replay.cost_ok
        if alignment is not None:
            noise_rows.append(row(cell(Text("total", strong=True)), cell(""), cell(""), cell(""),
                                  cell(f"{format_value(alignment.cost)} vs claim {format_value(alignment.claim)}",
                                       tone=Tone.BAD if total_bad else Tone.GOOD), marked=total_bad))
        blocks.append(Table("noise", ("noise", "H on D", "shift ψ", "φ(H) on D'", "cost c·|ψ|"), tuple(noise_rows),
                            "The noise of the run on D, the alignment's shift and the aligned noise of the run on "
                            "D' (a value outside its support is marked, and so is a total cost above the claim)."))
    trace_rows = []
    for i, s in enumerate(steps.steps):
        indent = "  " * s.depth
        line = str(s.line) if s.line == s.line_d_prime else f"{s.line} / {s.line_d_prime}"
        trace_rows.append(Row((cell(str(i + 1)), cell(line), cell(Code(indent + s.on_d)),
                               cell(Code(indent + s.on_d_prime), tone=Tone.BAD if s.diverges else Tone.PLAIN)),
                              marked=s.diverges))
    caption = "The two runs step by step: on D with H, and on D' with φ(H). " + _parting(steps)
    blocks.append(Table("trace", ("step", "line", "run on D", "run on D' with φ(H)"), tuple(trace_rows), caption))
    if steps.replay.failures:
        blocks.append(Paragraph(inlines("The interpreter's replay breaks: ",
                                        ", ".join(str(f) for f in steps.replay.failures), ".")))
    return blocks


def _parting(steps) -> str:
    """Where the two runs part, or, when they do not, what the replay found broken instead."""
    if steps.divergence is not None:
        return f"They part at step {steps.divergence + 1} (marked)."
    replay = steps.replay
    broken = []
    if replay.alignment is not None and not replay.cost_ok:
        broken.append("the cost above is more than the claim")
    if replay.alignment is not None and any(not (d.in_support and d.whole) for d in replay.alignment.draws):
        broken.append("aligned noise above is outside its support")
    if broken:
        return "They never part: " + " and ".join(broken) + "."
    return ("They never part in the interpreter's floating-point replay: the refutation is the checker's, in exact "
            "arithmetic (its reason is above).")


def _confirmation(conf: Confirmation, result_name: str) -> list:
    tone = Tone.BAD if conf.violation else Tone.WARN
    blocks: list = [Paragraph(inlines(conf.text), tone)]
    search = conf.search
    if search is not None and search.witness is not None:
        w = search.witness
        blocks.append(Table("confirm", ("input pair", "event", "ε lower bound", "adjusted p", "samples"), (
            row(cell(Code(w.pair.name)), cell(Code(w.event.text)),
                cell("∞" if w.epsilon_bound == float("inf") else f"{w.epsilon_lower_bound:.4g}"),
                cell(f"{w.adjusted_p:.3g}"), cell(str(search.samples))),)))
        png = plot_png(result_name, search)
        if png is not None:
            blocks.append(Figure(png, "Privacy loss: left, the smallest adjusted p-value against the tested ε "
                                      "(the claim is rejected where the curve is below α); right, the strongest "
                                      "ε lower bound per input pair.", "privacy-loss plot"))
        else:
            blocks.append(Paragraph(inlines("(The privacy-loss plot needs matplotlib: pip install 'align[plot]'.)"),
                                    Tone.MUTED))
    return blocks
