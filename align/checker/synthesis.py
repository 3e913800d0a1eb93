"""Alignment synthesis: a proof by Lemma 1 without a hand-written alignment (issue 15, first part).

For each noise site a *template* is built from the program: a family drawn in a loop whose iteration outputs
one of several tags gets one piece per tag (`out[i] is TOP ? e_TOP : e_BOT`), any other site one piece; each
piece is a linear combination, with small integer coefficients, of the constant 1 and the differences of the
private inputs the site's iteration reads (`q[i] - q'[i]` for a list read at the loop index, `x - x'` for a
private scalar). The candidates are the template's instances, simplest first (fewest and smallest
coefficients).

The loop is counterexample-guided inductive synthesis with an enumerative learner:

1. *Examples*: input pairs (D, D') — StatDP's patterns at the adjacency bound, at the spec's example length —
   on which each candidate is sampled by the interpreter's alignment check (`interp/alignment.py`): a sample
   whose aligned run changes the output, costs more than the claim or leaves a support rules it out (C4a, C4c,
   C4d). Most candidates end here, in milliseconds.
2. *Verification*: the first candidate consistent with every example goes to the checker (`verify_mechanism`:
   the proofs for every length, then the bounded check). Proved: done. Refuted: its counterexample's input pair
   joins the examples, and the search goes on. Proved only for bounded lengths: kept as the best so far, and the
   search goes on for a proof for every length (at most `Budget.verifications` calls in all).

What comes out is an alignment that the checker proved, as `.dp` text; nothing else is ever reported as
proved. When no candidate is proved, the answer is "no alignment found in the template space": unknown, not
"not private" (the template space may simply not hold the mechanism's alignment).
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from .. import nodes as n
from ..parse import parse_alignments, parse_source
from ..resolve import NoiseSite, ResolvedMechanism, resolve, rewrite, statement_exprs, walk, walk_statements
from ..span import Source
from ..status import Status
from ..types import INT, ListType
from ..unparse import unparse
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

    @property
    def lhs(self) -> str:
        return f"{self.site}[{self.index}]" if self.index else self.site

    def pieces(self) -> list[tuple[int, str]]:
        """(weight, expression) of every piece, simplest first: weight = nonzero coefficients + their sizes."""
        choices = [CONSTANTS if t == "1" else DIFFERENCES for t in self.terms]
        found = []
        for cs in itertools.product(*choices):
            parts = [_term(c, t) for c, t in zip(cs, self.terms) if c]
            text = " + ".join(parts).replace("+ -", "- ") if parts else "0"
            found.append((sum(abs(c) + 1 for c in cs if c), text))
        return sorted(found, key=lambda x: x[0])

    def shifts(self) -> list[tuple[int, str]]:
        """(weight, `x' = x + e` line) of every instance, simplest first."""
        pieces = self.pieces()
        lines = []
        for combo in itertools.product(pieces, repeat=max(1, len(self.conditions))):
            e = combo[-1][1]
            for condition, (_, piece) in reversed(list(zip(self.conditions[:-1], combo[:-1]))):
                e = f"{condition} ? {piece} : {e}"
            shift = f"({e})" if self.conditions and len({piece for _, piece in combo}) > 1 else combo[0][1]
            lines.append((sum(w for w, _ in combo), f"{self.lhs}' = {self.lhs} + {shift}".replace("+ -", "- ")))
        return sorted(lines, key=lambda x: x[0])


def _term(c: int, t: str) -> str:
    if t == "1":
        return str(c)
    return t if c == 1 else f"-({t})" if c == -1 else f"{c} * ({t})"


def templates(mech: ResolvedMechanism) -> list[SiteTemplate]:
    """The template of every noise site of the mechanism (in the order of its sampling statements)."""
    return [_template(mech, site) for site in mech.noise]


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
        return SiteTemplate(site.name, i, (f"{i} in {released}", "otherwise"), (*terms, compared), lets)
    going_on = _goes_on(mech, site)
    if going_on is not None:
        return SiteTemplate(site.name, i, (going_on, "otherwise"), tuple(terms))
    conditions = tuple(f"out[{i}] is {tag}" for tag in tags) if len(tags) > 1 else ()
    return SiteTemplate(site.name, i, conditions, tuple(terms))


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


def _ranked(mech: ResolvedMechanism, site: NoiseSite) -> tuple[str, tuple[str, ...], str] | None:
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
    extremum = "min" if ranking == "argmin" else "max"  # what the selection compares each released member with
    lets = (f"let m = {extremum}(l not in {released}: {unparse(at_l)})",
            f"let m' = {extremum}(l not in {released}: {unparse(_on_neighbour(mech, at_l))})")
    return released, lets, "m' - m"


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
    candidates: int = 2_000
    """Instances of the template tried at most (each on the examples)."""
    verifications: int = 12
    """Calls of the checker at most."""
    samples: int = 200
    """Samples of the interpreter's alignment check per example pair."""


@dataclass
class Synthesis:
    """The outcome: the proved alignment's text (None when none was found), the checker's verdicts on it."""

    status: Status
    alignment: str | None
    verdicts: list[Verdict] = field(default_factory=list)
    candidates: int = 0
    """Template instances tried on the examples."""
    iterations: int = 0
    """Checker calls (the CEGIS iterations)."""
    examples: int = 0
    seconds: float = 0.0
    space: int = 0
    """Size of the template space."""
    notes: list[str] = field(default_factory=list)
    mechanism: ResolvedMechanism | None = None
    """The mechanism with the synthesised alignment (what the verdicts are about)."""


def synthesise(mech: ResolvedMechanism, source: Source, public: dict, pairs: Sequence, options: Options | None = None,
               budget: Budget = Budget()) -> Synthesis:
    """Search the template space of `mech` (its own alignment, if any, is ignored) for an alignment the
    checker proves. `source` is the spec file the mechanism was read from, parsed once: each candidate is its
    mechanisms with this one's alignment block replaced by the candidate's (parsed on its own, so the verdicts'
    locations are the file's, and `<synthesised alignment>`'s for the block). `public` are example values of the
    public parameters and `pairs` the example input pairs (each with `.d` and `.d_prime`, as `stats.lrtest.Pair`)."""
    from ..interp.alignment import check_alignment
    from ..interp.errors import RunError
    from ..interp.runner import prepare_arguments, prepare_neighbour

    started = time.perf_counter()
    base = _parse(source)  # the mechanism's own alignment block is replaced by each candidate's
    if base is None:
        return Synthesis(Status.UNKNOWN, None, notes=["the spec does not parse"])
    site_templates = templates(mech)
    options_per_site = [t.shifts() for t in site_templates]
    lets = [let for t in site_templates for let in t.lets]
    space = 1
    for o in options_per_site:
        space *= len(o)
    result = Synthesis(Status.UNKNOWN, None, space=space)
    examples: list[tuple[dict, dict]] = []
    prepared: list[tuple[dict, dict]] = []

    def add_example(d: dict, d_prime: dict) -> None:
        """An input pair the mechanism accepts (`requires`, the adjacency), prepared once for every candidate."""
        if (d, d_prime) in examples:
            return
        try:
            a = prepare_arguments(mech, {**public, **d})
            prepared.append((a, prepare_neighbour(mech, a, dict(d_prime))))
        except RunError:
            return
        examples.append((d, d_prime))

    for p in pairs:
        add_example(p.d, p.d_prime)
    bounded: tuple[str, list[Verdict], ResolvedMechanism] | None = None

    for lines in _simplest_first(options_per_site, budget.candidates):
        result.candidates += 1
        text = _alignment_text(mech.name, lets if any("m' - m" in line for line in lines) else (), lines)
        candidate = _with_alignment(base, text, mech.name)
        if candidate is None:
            continue
        consistent = True
        for a, b in prepared:
            try:
                report = check_alignment(candidate, a, b, budget.samples, seed=result.candidates)
            except RunError:  # the candidate fails at run time (it reads out[i] past the output's end ...)
                consistent = False
                break
            if not report.ok:
                consistent = False
                break
        if not consistent:
            continue
        result.iterations += 1
        verdicts = verify_mechanism(candidate, options or Options())
        status = overall_status(verdicts)
        if status == Status.PROVED:
            result.status, result.alignment, result.verdicts, result.mechanism = Status.PROVED, text, verdicts, \
                candidate
            break
        if status == Status.BOUNDED and bounded is None:
            bounded = (text, verdicts, candidate)
        for v in verdicts:
            ce = v.counterexample
            if v.status == Status.REFUTED and ce is not None:
                pair = _pair_of(candidate, ce)
                if pair is not None:
                    add_example(*pair)
                break
        if result.iterations >= budget.verifications:
            result.notes.append(f"stopped after {budget.verifications} checker calls")
            break
    if result.status != Status.PROVED and bounded is not None:
        result.status, result.alignment, result.verdicts, result.mechanism = Status.BOUNDED, *bounded
        result.notes.append(f"proved {overall_scope(bounded[1])} only")
    result.examples = len(examples)
    result.seconds = time.perf_counter() - started
    return result


EXAMPLE_LENGTHS = (8,)
"""Lengths of the example pairs besides the spec's example length: long enough that a shift paid at every index
costs more than the claim (at length 4, ε/4 per index still fits in ε)."""


def example_pairs(mech: ResolvedMechanism, public: dict) -> list:
    """The examples: StatDP's pattern pairs (`stats.lrtest.input_pairs`) at the spec's example length and at
    EXAMPLE_LENGTHS, those that satisfy `requires` and the adjacency."""
    from ..diagnostics import SpecError
    from ..interp.values import example_length
    from ..stats.lrtest import input_pairs, valid_pairs

    pairs = []
    for length in dict.fromkeys((example_length(mech.node), *EXAMPLE_LENGTHS)):
        try:
            pairs += valid_pairs(mech, public, input_pairs(mech, public, length))
        except SpecError:
            continue
    return pairs


def _simplest_first(options: list[list[tuple[int, str]]], limit: int) -> Iterator[tuple[str, ...]]:
    """Tuples of one line per site in increasing total weight (best-first over the sites' sorted options, ties in
    a fixed order), at most `limit`."""
    if any(not o for o in options):
        return
    start = (0,) * len(options)
    heap = [(sum(o[0][0] for o in options), start)]
    seen = {start}
    produced = 0
    while heap and produced < limit:
        weight, at = heapq.heappop(heap)
        yield tuple(options[k][j][1] for k, j in enumerate(at))
        produced += 1
        for k in range(len(options)):
            if at[k] + 1 < len(options[k]):
                nxt = at[:k] + (at[k] + 1,) + at[k + 1:]
                if nxt not in seen:
                    seen.add(nxt)
                    heapq.heappush(heap, (weight - options[k][at[k]][0] + options[k][at[k] + 1][0], nxt))


def _alignment_text(name: str, lets: Sequence[str], lines: Sequence[str]) -> str:
    return f"alignment {name} {{\n" + "".join(f"  {line}\n" for line in (*lets, *lines)) + "}\n"


def _parse(source: Source) -> n.SpecFile | None:
    from ..diagnostics import SpecError

    try:
        return parse_source(source)
    except SpecError:
        return None


def _with_alignment(base: n.SpecFile, text: str, name: str) -> ResolvedMechanism | None:
    """The mechanism `name` of `base` with the alignment block `text` (parsed on its own, as the file
    `<synthesised alignment>`: the spec is parsed once, each candidate's few lines each time)."""
    from ..diagnostics import SpecError

    try:
        block = parse_alignments(Source(SYNTHESISED, text))
        spec = dataclasses.replace(base, alignments=tuple(a for a in base.alignments if a.name != name) + block)
        program = resolve(spec)
    except SpecError:
        return None
    return next((m for m in program.mechanisms if m.name == name), None)


SYNTHESISED = "<synthesised alignment>"
"""The path of a candidate's alignment block in its verdicts' locations."""


def _pair_of(mech: ResolvedMechanism, ce) -> tuple[dict, dict] | None:
    """The (D, D') of a counterexample: its private parameters' values on D and D' (exact rationals as floats,
    integers kept)."""
    private = {p.name for p in mech.params if not p.public}

    def plain(v):
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, Fraction):
            return int(v) if v.denominator == 1 else float(v)
        return v

    d = {k: plain(v) for k, v in ce.args.items() if k in private}
    d_prime = {k: plain(v) for k, v in ce.neighbour.items()}
    return (d, d_prime) if d and d_prime else None
