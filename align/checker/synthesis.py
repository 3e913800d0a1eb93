"""Alignment synthesis: a proof by Lemma 1 without a hand-written alignment (issue 15).

For each noise site a *template* is built from the program (`templates`): pieces by the output's tag (or a discrete
payload level) at the site's index, by membership in a ranking's released set, by whether the loop goes on, by a
later loop's tag, and by the direction of a monotone neighbour; each piece an integer combination of the constant
1, the private inputs' differences, the difference of what the noise is added to and a ranking's best unreleased
value. The coefficients are unknown.

The search (`synthesise`) is counterexample-guided inductive synthesis with z3 as the learner (`learner.py`):
candidates of least weight consistent with the examples, examples found by z3 on the unrolled program at a few
input shapes, and every candidate that survives them proved by the checker (`verify_mechanism`), whose
refutations add their shapes. What comes out is an alignment that the checker proved, as `.dp` text; nothing
else is ever reported as proved. When no candidate is proved, the answer is "no alignment found in the template
space" (or, when the examples rule out every instance, "no instance of the template is an alignment"): unknown,
never "not private".
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .. import nodes as n
from ..diagnostics import SpecError
from ..parse import parse_alignments, parse_source
from ..resolve import NoiseSite, ResolvedMechanism, resolve, rewrite, statement_exprs, walk, walk_statements
from ..smt.solver import fresh_context
from ..span import Source
from ..status import Status
from ..types import INT, ListType
from ..unparse import unparse
from .learner import Hole, Learner
from .ranking import RANKINGS
from .verdicts import Verdict
from .verify import Options, overall_scope, overall_status, verify_mechanism

CONSTANTS = (0, 1, 2, -1, -2)
"""The constant term's coefficients, in the order tried."""
DIFFERENCES = (0, 1, -1)
"""Each input difference's coefficients."""


@dataclass(frozen=True)
class SiteTemplate:
    """The shift template of one noise site: one piece per condition (the output's tag at the site's index, or
    membership in the released set), each a linear combination of `terms` (the constant "1" first)."""

    site: str
    index: str | None
    conditions: tuple[str, ...]
    """The pieces' conditions, tested in order, the last piece taken when none holds (so the last condition is
    only its name); empty: one piece."""
    terms: tuple[str, ...]
    lets: tuple[str, ...] = ()
    """`let` lines the terms read (the maxima over the unreleased members), written before the shifts."""
    lipschitz: bool = True
    """Whether the site's distribution has a cost coefficient (C3); if not, its only shift is 0."""
    split: str | None = None
    """A condition on the inputs that doubles the pieces: those for when it holds, then those for when it does
    not (the direction of a `monotone` neighbour)."""

    @property
    def lhs(self) -> str:
        return f"{self.site}[{self.index}]" if self.index else self.site

    def domains(self) -> list[tuple[int, ...]]:
        """The values each term's coefficient may take, in the order tried (the constant's, then each
        difference's); only 0 for a distribution that is not Lipschitz (C3: it may not be shifted)."""
        if not self.lipschitz:
            return [(0,)] * len(self.terms)
        return [CONSTANTS if t == "1" else DIFFERENCES for t in self.terms]

    @property
    def piece_count(self) -> int:
        return max(1, len(self.conditions)) * (2 if self.split else 1)

    def line(self, coefficients: Sequence[Sequence[int | str]]) -> str:
        """The `x' = x + e` line with these coefficients, one sequence per piece (numbers, or the names of
        holes), pieces that are all equal written once."""
        pieces = []
        for cs in coefficients:
            parts = [_term(c, t) for c, t in zip(cs, self.terms) if c != 0]
            pieces.append(" + ".join(parts).replace("+ -", "- ") if parts else "0")
        if self.split:
            half = len(pieces) // 2
            holds, fails = self._chain(pieces[:half]), self._chain(pieces[half:])
            shift = holds if holds == fails else f"({self.split} ? {holds} : {fails})"
        else:
            shift = self._chain(pieces)
        return f"{self.lhs}' = {self.lhs} + {shift}".replace("+ -", "- ")

    def _chain(self, pieces: Sequence[str]) -> str:
        """`c1 ? e1 : c2 ? e2 : e3`, parenthesised; a piece equal to the last goes, since the conditions exclude
        each other."""
        e = pieces[-1]
        for condition, piece in reversed(list(zip(self.conditions[:-1], pieces[:-1]))):
            if piece != pieces[-1]:
                e = f"{condition} ? {piece} : {e}"
        return f"({e})" if len(set(pieces)) > 1 else pieces[0]


def _term(c: int | str, t: str) -> str:
    if t == "1":
        return str(c)
    if isinstance(c, str):
        return f"{c} * ({t})"
    return t if c == 1 else f"-({t})" if c == -1 else f"{c} * ({t})"


def templates(mech: ResolvedMechanism) -> list[SiteTemplate]:
    """The template of every noise site of the mechanism (in the order of its sampling statements)."""
    direction = _direction(mech)
    found = []
    for site in mech.noise:
        t = dataclasses.replace(_template(mech, site), lipschitz=site.distribution.lipschitz)
        if direction is not None:
            name, let = direction
            t = dataclasses.replace(t, split=name, lets=(let, *t.lets))
        found.append(t)
    return found


def _direction(mech: ResolvedMechanism) -> tuple[str, str] | None:
    """For a `monotone q` neighbour (every entry moves the same way), a let that says it moves down, `let down =
    all(l in 0 .. len(q): q[l] >= q'[l])`, and its name: an alignment may shift less one way than the other. (A
    let, not the comprehension in each shift: the induction reads a let once per run.)"""
    for p in mech.params:
        if any(a.kind == n.AdjacencyKind.MONOTONE for a in p.adjacency):
            name = next(x for x in ("down", "_down", "__down") if x not in _names(mech))
            return name, f"let {name} = all(l in 0 .. len({p.name}): {p.name}[l] >= {p.name}'[l])"
    return None


def _template(mech: ResolvedMechanism, site: NoiseSite) -> SiteTemplate:
    added = _differences_added_to(mech, site)
    if site.loop is None:
        scalars = [p.name for p in mech.params if not p.public and not isinstance(p.type, ListType)]
        terms = dict.fromkeys(("1", *(f"{x} - {x}'" for x in scalars), *added))
        return SiteTemplate(site.name, None, (), tuple(terms))
    i = site.loop.var
    tags: list[str] = []
    lists: list[str] = []
    for st in walk_statements(site.loop.body):
        tag = _output_tag(st)
        if tag is not None and tag not in tags:
            tags.append(tag)
        for e in statement_exprs(st):
            for x in walk(e):
                if isinstance(x, n.Index) and isinstance(x.base, n.ParamRef) and isinstance(x.index, n.LocalRef) \
                        and x.index.id == i:
                    p = mech.param(x.base.id)
                    if p is not None and not p.public and p.name not in lists:
                        lists.append(p.name)
    terms = dict.fromkeys(("1", *(f"{q}[{i}] - {q}'[{i}]" for q in lists), *added))
    ranked = _ranked(mech, site)
    if ranked is not None:
        released, lets, compared = ranked
        return SiteTemplate(site.name, i, (f"{i} in {released}", "otherwise"), (*terms, *compared), lets)
    going_on = _goes_on(mech, site)
    if going_on is not None:
        return SiteTemplate(site.name, i, (going_on, "otherwise"), tuple(terms))
    if not tags:
        later = _tags_read_later(mech, site)
        if later:
            return SiteTemplate(site.name, i, (*(f"{i} < len(out) and out[{i}] is {t}" for t in later), "otherwise"),
                                tuple(terms))
    classes = _output_classes(site.loop, i)
    return SiteTemplate(site.name, i, tuple(classes) if len(classes) > 1 else (), tuple(terms))


def _tags_read_later(mech: ResolvedMechanism, site: NoiseSite) -> list[str]:
    """For a family drawn in a loop that outputs nothing and fills `x[i]` with its noise, read at its own index by
    a later loop that outputs tags (loops in sequence, fusion.py's shape: AboveThreshold with presampled noise):
    the tags that later loop outputs. The pieces are then `i < len(out) and out[i] is TAG` and a last one for the
    members past the output's end (drawn, but never compared: a `break` ended the later loop first)."""
    loop = site.loop
    assert loop is not None
    filled = {st.target for st in loop.body if isinstance(st, n.Assign) and st.index is not None
              and mech.reads_noise(st.value)}
    position = next((k for k, st in enumerate(mech.body) if st is loop), None)
    if not filled or position is None:
        return []
    for later in mech.body[position + 1:]:
        if not isinstance(later, n.For):
            continue
        reads = any(isinstance(x, n.Index) and isinstance(x.base, n.VarRef) and x.base.id in filled
                    and isinstance(x.index, n.LocalRef) and x.index.id == later.var
                    for st in walk_statements(later.body) for e in statement_exprs(st) for x in walk(e))
        if reads:
            tags = [tag for st in walk_statements(later.body) if (tag := _output_tag(st)) is not None]
            return list(dict.fromkeys(tags))
    return []


def _output_classes(loop: n.For, i: str) -> list[str]:
    """A condition per kind of output the loop's body makes, in the order they are output: `out[i] is TAG`, or,
    for a tag output by several statements that a discrete payload field tells apart (an integer literal,
    distinct and nonzero in each), `payload(out[i], TAG, (0, 0))[p] == v` (Adaptive SVT with Gap releasing the
    level of the branch that won)."""
    outputs = [st for st in walk_statements(loop.body) if _output_tag(st) is not None]
    by_tag: dict[str, list[n.Output]] = {}
    for st in outputs:
        assert isinstance(st, n.Output)
        by_tag.setdefault(_output_tag(st) or "", []).append(st)
    classes: list[str] = []
    for st in outputs:
        assert isinstance(st, n.Output)
        tag = _output_tag(st) or ""
        same = by_tag[tag]
        level = _level(same) if len(same) > 1 else None
        if level is None:
            condition = f"out[{i}] is {tag}"
        else:
            position, arity = level
            args = st.value.args if isinstance(st.value, n.TagCall) else ()
            value = unparse(args[position])
            default = "(" + ", ".join("0" for _ in range(arity)) + ")"
            condition = f"payload(out[{i}], {tag}, {default})[{position}] == {value}"
        if condition not in classes:
            classes.append(condition)
    return classes


def _level(outputs: Sequence[n.Output]) -> tuple[int, int] | None:
    """(position, arity) of a payload field that is an integer literal in each of `outputs`, distinct and nonzero
    (0 is `payload`'s default for the other tags); None when there is none."""
    calls = [o.value for o in outputs if isinstance(o.value, n.TagCall)]
    if len(calls) != len(outputs) or len({len(c.args) for c in calls}) != 1 or len(calls[0].args) < 2:
        return None
    for position in range(len(calls[0].args)):
        values = [c.args[position] for c in calls]
        if all(isinstance(v, n.Number) and v.is_integer and v.value != 0 for v in values) and \
                len({v.value for v in values if isinstance(v, n.Number)}) == len(values):
            return position, len(calls[0].args)
    return None


def _output_tag(st: n.Stmt) -> str | None:
    """The tag `output TAG` or `output TAG(...)` outputs; None for any other statement."""
    return st.value.tag if isinstance(st, n.Output) and isinstance(st.value, (n.TagLit, n.TagCall)) else None


def _goes_on(mech: ResolvedMechanism, site: NoiseSite) -> str | None:
    """For a family drawn in a branch that outputs one tag (so the tag at its index is known), the condition
    that the loop goes on after this iteration: the negated `break` condition, with each counter of a tag's
    outputs read as `count(l in 0 .. i + 1: out[l] is TAG)` (Sparse refreshes its threshold at every TOP but
    the last: `rho[i]' = rho[i] + (not (count(...) >= c) ? 1 : 0)`). None when there is no such branch, no
    `break`, or the condition reads other program state."""
    loop = site.loop
    assert loop is not None
    branch = next((b for st in walk_statements(loop.body) if isinstance(st, n.If)
                   for b in (st.then, st.orelse) if site.stmt in b), None)
    if branch is None or not any(isinstance(st, n.Output) for st in branch):
        return None
    breaks = [st.condition for st in loop.body
              if isinstance(st, n.If) and len(st.then) == 1 and isinstance(st.then[0], n.Break) and not st.orelse]
    if len(breaks) != 1:
        return None
    counters = _tag_counters(mech, loop)
    reads = {x.id for x in walk(breaks[0]) if isinstance(x, n.VarRef)}
    if not reads <= set(counters):
        return None
    text = unparse(breaks[0])
    for name, tag in counters.items():
        text = re.sub(rf"\b{re.escape(name)}\b(?!\s*\()", f"count(l in 0 .. {loop.var} + 1: out[l] is {tag})", text)
    return f"not ({text})"


def _tag_counters(mech: ResolvedMechanism, loop: n.For) -> dict[str, str]:
    """The variables that count a tag's outputs: set to 0 before the loop, and in it only `v = v + 1`, in the
    block that outputs that tag (and nowhere else)."""
    found: dict[str, str] = {}
    zeroed = {st.target for st in mech.body if isinstance(st, n.Assign) and st.index is None
              and isinstance(st.value, n.Number) and st.value.value == 0}
    blocks = [loop.body] + [b for st in walk_statements(loop.body) if isinstance(st, n.If)
                            for b in (st.then, st.orelse)]
    updates: dict[str, int] = {}
    for st in walk_statements(loop.body):
        if isinstance(st, n.Assign):
            updates[st.target] = updates.get(st.target, 0) + 1
    for block in blocks:
        tags = [tag for st in block if (tag := _output_tag(st)) is not None]
        for st in block:
            if isinstance(st, n.Assign) and st.index is None and st.target in zeroed and updates[st.target] == 1 \
                    and len(tags) == 1 and isinstance(st.value, n.Binary) and st.value.op == "+" \
                    and isinstance(st.value.left, n.VarRef) and st.value.left.id == st.target \
                    and isinstance(st.value.right, n.Number) and st.value.right.value == 1:
                found[st.target] = tags[0]
    return found


def _on_neighbour(mech: ResolvedMechanism, e: n.Expr) -> n.Expr:
    """e on D': every private parameter primed."""
    private = {p.name for p in mech.params if not p.public}

    def prime(x: n.Expr) -> n.Expr | None:
        return dataclasses.replace(x, primed=True) if isinstance(x, n.ParamRef) and x.id in private else None

    return rewrite(e, prime)


def _ranked(mech: ResolvedMechanism, site: NoiseSite) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """For a family whose map loop fills `x[i] = e(i, eta)` that a ranking then reads (`output argmax(x)`, `r =
    top_k_with_gaps(x, k)` and an output loop): the released set (`[out[0]]`, `indices(out)`), the lets of the
    best unreleased member's value on D and D' (m, m'), and the difference the selection compares, `m' - m` (Free
    Gap's Equation (3) is `i in I ? q[i] - q'[i] + m' - m : 0`)."""
    assert site.loop is not None
    i = site.loop.var
    filled = [st for st in site.loop.body if isinstance(st, n.Assign) and st.index is not None
              and isinstance(st.index, n.LocalRef) and st.index.id == i
              and any(isinstance(x, n.NoiseRef) and x.id == site.name for x in walk(st.value))]
    if len(filled) != 1:
        return None
    target, value = filled[0].target, filled[0].value
    ranking = None
    direct = False
    for st in walk_statements(mech.body):
        for e in statement_exprs(st):
            for x in walk(e):
                if isinstance(x, n.Call) and x.func in RANKINGS and x.args and isinstance(x.args[0], n.VarRef) \
                        and x.args[0].id == target:
                    ranking = x.func
                    direct = isinstance(st, n.Output) and st.value is x
    if ranking is None:
        return None
    released = "[out[0]]" if direct and ranking in ("argmax", "argmin") else "indices(out)"

    def member(x: n.Expr) -> n.Expr | None:
        if isinstance(x, n.LocalRef) and x.id == i:
            return dataclasses.replace(x, id="l")
        if isinstance(x, n.NoiseRef) and x.id == site.name:
            index = n.LocalRef("l", x.span, type=INT)
            return n.MemberRef(x.id, index, x.span, x.span, type=x.type)
        return None

    at_l = rewrite(value, member)
    if any(isinstance(x, n.VarRef) and x.id not in mech.constants for x in walk(at_l)):
        return released, (), ()  # the value reads program state, which an alignment may not read
    extremum = "min" if ranking == "argmin" else "max"  # what the selection compares each released member with
    lets = (f"let m = {extremum}(l not in {released}: {unparse(at_l)})",
            f"let m' = {extremum}(l not in {released}: {unparse(_on_neighbour(mech, at_l))})")
    return released, lets, ("m' - m",)


def _atomic(text: str) -> bool:
    """Whether text needs no parentheses as an operand: a name, or a call whose parentheses close at its end."""
    if " " not in text:
        return True
    head = text.split("(", 1)[0]
    if not head or " " in head or not text.endswith(")"):
        return False
    depth = 0
    for k, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch == ")":
            return k == len(text) - 1
    return False


def _differences_added_to(mech: ResolvedMechanism, site: NoiseSite) -> list[str]:
    """`e - e'` for each expression e that the site's noise is added to (`output e + eta`, `e + eta >= T`) and
    that reads private parameters, with the variables it reads replaced by their definitions (assigned once, with
    no noise; the alignment may not read program variables) and e' its value on D': the shift that keeps e + eta
    as it was (`len(q) - len(q')` for a noisy count, the difference of two folds for a clipped sum)."""
    definitions: dict[str, n.Expr] = {}
    assigned: dict[str, int] = {}
    for st in walk_statements(mech.body):
        if isinstance(st, n.Assign):
            assigned[st.target] = assigned.get(st.target, 0) + 1
            if st.index is None and not mech.reads_noise(st.value):
                definitions[st.target] = st.value
    scope = site.loop.body if site.loop is not None else mech.body
    private = {p.name for p in mech.params if not p.public}
    found: list[str] = []

    def inline(x: n.Expr) -> n.Expr | None:
        if isinstance(x, n.VarRef) and not x.primed and assigned.get(x.id) == 1 and x.id in definitions:
            return rewrite(definitions[x.id], inline)
        return None

    for st in walk_statements(scope):
        for e in statement_exprs(st):
            for x in walk(e):
                if not (isinstance(x, n.Binary) and x.op == "+"):
                    continue
                for noise, other in ((x.left, x.right), (x.right, x.left)):
                    if isinstance(noise, n.NoiseRef) and noise.id == site.name:
                        value = rewrite(other, inline)
                        if any(isinstance(v, n.VarRef) for v in walk(value)) or \
                                not any(isinstance(v, n.ParamRef) and v.id in private for v in walk(value)):
                            continue
                        here, there = unparse(value), unparse(_on_neighbour(mech, value))
                        text = f"{here} - {there}" if _atomic(here) else f"({here}) - ({there})"
                        if text not in found:
                            found.append(text)
    return found


@dataclass(frozen=True)
class Budget:
    candidates: int = 300
    """Candidates the learner proposes at most."""
    verifications: int = 12
    """Calls of the checker at most."""


@dataclass
class Synthesis:
    """The outcome: the proved alignment's text (None when none was found), the checker's verdicts on it."""

    status: Status
    alignment: str | None
    verdicts: list[Verdict] = field(default_factory=list)
    candidates: int = 0
    """Candidates the learner proposed."""
    iterations: int = 0
    """Checker calls."""
    examples: int = 0
    """Examples the candidates were learned from (each an input pair and noise vector from z3)."""
    seconds: float = 0.0
    space: int = 0
    """Size of the template space."""
    exhausted: bool = False
    """No instance of the template satisfies the examples (each example is an input pair and noise on which the
    instance breaks an obligation): the space holds no alignment."""
    notes: list[str] = field(default_factory=list)
    mechanism: ResolvedMechanism | None = None
    """The mechanism with the synthesised alignment (what the verdicts are about)."""


START_LENGTH = 3
"""The learner verifies candidates at the shapes whose longest list has this length first; the checker's
refutations at longer inputs add their lengths."""
LONGEST = 8
"""The longest shapes the learner verifies at."""
ESCALATION = (5, LONGEST)
"""The lengths a candidate proved only for bounded lengths is verified at next: one that breaks there is no
fallback (the mechanism may be private for short inputs only: `noisy_answers_requires_long_input.dp`)."""


def synthesise(mech: ResolvedMechanism, source: Source, public: dict, options: Options | None = None,
               budget: Budget = Budget(), claim_factor: Fraction = Fraction(1)) -> Synthesis:
    """Search the template space of `mech` (its own alignment, if any, is ignored) for an alignment the checker
    proves: CEGIS with z3 as the learner (`learner.py`). `source` is the spec file the mechanism was read from,
    parsed once: each candidate is its mechanisms with this one's alignment block replaced by the candidate's
    (parsed on its own, so the verdicts' locations are the file's, and `<synthesised alignment>`'s for the
    block). `public` are example values of the public parameters: those of the integers that shape the program
    (k, c) choose the shapes the learner verifies at. `claim_factor`: prove the claim times this instead (is
    there an alignment for a smaller claim than the written one?)."""
    started = time.perf_counter()
    base = _parse(source)
    if base is None:
        return Synthesis(Status.UNKNOWN, None, notes=["the spec does not parse"])
    if claim_factor != 1:
        base = _with_claim(base, mech.name, claim_factor)
    site_templates = templates(mech)
    taken = _names(mech)
    prefix = next(p for p in ("_h", "_hole", "__h") if not any(t.startswith(p) for t in taken))
    holes: list[Hole] = []
    holed_lines = []
    shapes_of: list[list[list[int]]] = []
    for t in site_templates:
        per_piece = []
        for _ in range(t.piece_count):
            per_piece.append([len(holes) + k for k in range(len(t.terms))])
            holes += [Hole(f"{prefix}{len(holes) + k}", d) for k, d in enumerate(t.domains())]
        shapes_of.append(per_piece)
        holed_lines.append(t.line([[holes[k].name for k in ks] for ks in per_piece]))
    lets = list(dict.fromkeys(let for t in site_templates for let in t.lets))
    space = 1
    for h in holes:
        space *= len(h.values)
    result = Synthesis(Status.UNKNOWN, None, space=space)
    holed = _with_alignment(_with_holes(base, mech.name, [h.name for h in holes]),
                            _alignment_text(mech.name, lets, holed_lines), mech.name)
    if holed is None:
        result.notes.append("the template does not resolve")
        return result
    bounded: tuple[str, list[Verdict], ResolvedMechanism] | None = None
    with fresh_context():
        learner = Learner(holed, holes, public)
        learner.add_length(START_LENGTH)
        while learner.proposals < budget.candidates:
            values = learner.propose()
            if values is None:
                result.exhausted = learner.exhausted
                break
            if learner.refute(values):
                continue
            lines = [t.line([[values[holes[k].name] for k in ks] for ks in per_piece])
                     for t, per_piece in zip(site_templates, shapes_of)]
            text = _alignment_text(mech.name, _read(lets, lines), lines)
            candidate = _with_alignment(base, text, mech.name)
            if candidate is None:
                learner.block(values)
                continue
            result.iterations += 1
            verdicts = verify_mechanism(candidate, options or Options())
            status = overall_status(verdicts)
            if status == Status.PROVED:
                result.status, result.alignment, result.verdicts, result.mechanism = status, text, verdicts, candidate
                break
            # A refutation at a length the learner does not verify at yet adds that length; a proof for bounded
            # lengths only, the longer lengths up to LONGEST. An example found there rules the candidate out.
            refuted = _refutation_shape(verdicts)
            shapes = [refuted] if refuted is not None else \
                [(length, None) for length in ESCALATION] if status == Status.BOUNDED else []
            if not any(length <= LONGEST and learner.add_length(length, at) and learner.refute(values)
                       for length, at in shapes):
                if status == Status.BOUNDED and bounded is None:
                    bounded = (text, verdicts, candidate)
                learner.block(values)
            if result.iterations >= budget.verifications:
                result.notes.append(f"stopped after {budget.verifications} checker calls")
                break
        result.candidates, result.examples = learner.proposals, learner.examples
    if result.status != Status.PROVED and bounded is not None:
        result.status, result.alignment, result.verdicts, result.mechanism = Status.BOUNDED, *bounded
        result.notes.append(f"proved {overall_scope(bounded[1])} only")
    result.seconds = time.perf_counter() - started
    return result


def _names(mech: ResolvedMechanism) -> set[str]:
    """Every name the mechanism uses (parameters, variables, noise)."""
    found = {p.name for p in mech.params} | {s.name for s in mech.noise}
    for st in walk_statements(mech.body):
        if isinstance(st, n.Assign):
            found.add(st.target)
        for e in statement_exprs(st):
            found |= {x.id for x in walk(e) if isinstance(x, n.VarRef)}
    return found


def _with_holes(base: n.SpecFile, name: str, holes: Sequence[str]) -> n.SpecFile:
    """The spec with the holes as integer public parameters of mechanism `name`."""
    def holed(m: n.Mechanism) -> n.Mechanism:
        span = m.name_span
        params = tuple(n.Param(h, n.TypeExpr("int", False, span), span) for h in holes)
        return dataclasses.replace(m, params=m.params + params)

    return dataclasses.replace(base, mechanisms=tuple(holed(m) if m.name == name else m for m in base.mechanisms))


def _with_claim(base: n.SpecFile, name: str, factor: Fraction) -> n.SpecFile:
    """The spec with mechanism `name`'s claim multiplied by `factor`."""
    def scaled(m: n.Mechanism) -> n.Mechanism:
        if not m.privacy:
            return m
        claim = m.privacy[0]
        return dataclasses.replace(m, privacy=(n.Binary("*", n.Number(factor, False, claim.span), claim, claim.span),))

    return dataclasses.replace(base, mechanisms=tuple(scaled(m) if m.name == name else m for m in base.mechanisms))


def _refutation_shape(verdicts: Sequence[Verdict]) -> tuple[int, dict[str, Any]] | None:
    """The first refutation's input shape: the length of its counterexample's longest list, and its public
    arguments (among them the integers that shape the program: k, c)."""
    for v in verdicts:
        ce = v.counterexample
        if v.status == Status.REFUTED and ce is not None:
            lengths = [len(x) for x in (*ce.args.values(), *ce.neighbour.values()) if isinstance(x, (list, tuple))]
            public = {k: x for k, x in ce.args.items() if k not in ce.neighbour
                      and isinstance(x, (int, float, Fraction)) and not isinstance(x, bool)}
            integers = [x for x in public.values() if isinstance(x, int)]
            return max(lengths, default=max(integers, default=0)), public
    return None


def _read(lets: Sequence[str], lines: Sequence[str]) -> list[str]:
    """The lets (`let NAME = ...`) whose names the lines read."""
    text = "\n".join(lines)
    found = []
    for let in lets:
        name = let.split()[1]
        if re.search(rf"(?<![\w']){re.escape(name)}(?![\w'])", text):
            found.append(let)
    return found


def _alignment_text(name: str, lets: Sequence[str], lines: Sequence[str]) -> str:
    return f"alignment {name} {{\n" + "".join(f"  {line}\n" for line in (*lets, *lines)) + "}\n"


def _parse(source: Source) -> n.SpecFile | None:
    try:
        return parse_source(source)
    except SpecError:
        return None


def _with_alignment(base: n.SpecFile, text: str, name: str) -> ResolvedMechanism | None:
    """The mechanism `name` of `base` with the alignment block `text` (parsed on its own, as the file
    `<synthesised alignment>`: the spec is parsed once, each candidate's few lines each time)."""
    try:
        block = parse_alignments(Source(SYNTHESISED, text))
        spec = dataclasses.replace(base, alignments=tuple(a for a in base.alignments if a.name != name) + block)
        program = resolve(spec)
    except SpecError:
        return None
    return next((m for m in program.mechanisms if m.name == name), None)


SYNTHESISED = "<synthesised alignment>"
"""The path of a candidate's alignment block in its verdicts' locations."""
