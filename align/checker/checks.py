"""Checker (checks): the z3 check of each obligation at one input shape, keyed by `ObligationId`.

At one input shape (list lengths, structural values) the mechanism runs symbolically on (D, H) and on
(D', φ(H)) (`aligned_runs`); a `Query` holds both runs, the alignment and the assumptions every query makes, and
`Z3_CHECKS[id]` turns it into the validity query of that obligation (design.md §1). Obligations proved by one
model (ADJ) have a `Witness` instead (`WITNESS_CHECKS`). The tables are checked complete at import: every
obligation has a check, holds by construction, or has a rule of its own (MIX).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import sympy
import z3

from ..obligations import (
    KINDS,
    MAX_MAPPED_VALUES,
    Obligation,
    ObligationId,
    constant_bindings,
    cost_coefficient,
    map_cost_leaves,
    site_definitions,
)
from ..resolve import ResolvedMechanism
from ..rules import RULES
from ..smt import terms as zt
from ..smt.densities import density_conditions
from ..smt.densities import describe as describe_densities
from ..smt.encode import (
    AlignmentEval,
    Draw,
    Encoding,
    EncodingError,
    ListV,
    Run,
    _abs,
    _real,
)
from ..smt.formulas import to_z3
from ..smt.solver import Answer, Limits, Validity, check_valid
from ..smt.supports import masses, noise_support, support_conditions
from ..smt.supports import member as _member
from ..status import Status
from ..symbolic import NotSymbolic, to_sympy
from . import acyclic
from .models import first_difference, first_false, show
from .verdicts import PendingVerdict

UNBOUNDED = "unbounded_cost"
"""The uninterpreted function whose value stands for an infinite cost (noise with no cost coefficient shifted, a
value mapped onto one of probability 0): z3 may give it any value, so no bound on the cost follows."""


def inputs_differ(enc: Encoding) -> z3.BoolRef:
    """D != D': some private parameter (some entry of a private list) differs."""
    parts = []
    for name, there in enc.neighbour.items():
        here = enc.params[name]
        if isinstance(here, ListV):
            assert isinstance(there, ListV), "a list parameter on D is a list on D'"
            if len(here.items) != len(there.items):
                return zt.BoolVal(True)
            parts += [a != b for a, b in zip(here.items, there.items)]
        else:
            parts.append(here != there)
    return zt.Or(parts) if parts else zt.BoolVal(False)


@dataclass
class Query:
    """What the z3 check of one obligation at one input shape (lengths, structural values) reads: the two runs,
    the alignment, and the assumptions every query makes (`requires`, adjacency, the noise's supports)."""

    mech: ResolvedMechanism
    enc: Encoding
    run1: Run
    run2: Run
    align: AlignmentEval
    base: list[z3.BoolRef]
    limits: Limits

    def assumptions(self) -> list[z3.BoolRef]:
        """`requires()` includes the side conditions, so it is read when the query is made: encoding an
        obligation can add facts of exp and ln."""
        return [self.enc.requires(), *self.base]


Describe = Callable[[z3.ModelRef], Any]
"""Says why a model refutes the obligation (a text, or a text and the C0 parameters)."""


Check = Callable[[Query, Obligation, PendingVerdict], "tuple[Answer, Describe] | None"]
"""The z3 check of one obligation at one input shape; None when there is nothing to check there."""


def _check_c0(q: Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    densities = density_conditions(q.enc, q.run1.draws, q.run2.draws, o.site)
    if not densities:
        return None
    answer = check_valid(q.assumptions(), zt.And([c.formula for c in densities]), q.limits)
    return answer, lambda model: describe_densities(model, densities, show)


def _check_c2(q: Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    answer, describe = _samples_determined(q.mech, q.enc, q.limits)
    if answer.status != Validity.PROVED or not (q.run1.draws or q.run2.draws):
        return answer, describe
    return _same_draws_across_runs(q)


def _same_draws_across_runs(q: Query) -> tuple[Answer, Describe]:
    """C2 across the two runs: Lemma 1 pairs each sample of the run on (D, H) with the same sample of the run on
    (D', φ(H)), so when the outputs agree the two runs draw the same samples. The cost (C4c) and the support
    (C4d) are sums and conditions over the first run's draws: a sample drawn only by the aligned run (under a
    branch that reads private data, or by a loop over a list one record longer) would be shifted with no
    term counting it (specs/incorrect/shifted_draw_only_on_neighbour.dp)."""
    conditions = same_draw_conditions(q.enc, q.run1, q.run2)
    premise = [*q.assumptions(), q.run1.output.equal(q.run2.output, q.enc)]
    answer = check_valid(premise, zt.And([c for c, _ in conditions]), q.limits, satisfiable_if=q.assumptions())
    return answer, lambda model: first_false(model, conditions)


def same_draw_conditions(enc: Encoding, run1: Run, run2: Run) -> list[tuple[z3.BoolRef, str]]:
    """For each sample either run may draw: it is drawn in both or in neither (and why that matters)."""
    def drawn(run: Run) -> dict[tuple[str, int | None], tuple[z3.BoolRef, Draw]]:
        found: dict[tuple[str, int | None], tuple[z3.BoolRef, Draw]] = {}
        for d in run.draws:
            guard, first = found.get((d.site, d.index), (zt.BoolVal(False), d))
            found[d.site, d.index] = zt.Or(guard, d.guard), first
        return found

    on_d, on_d2 = drawn(run1), drawn(run2)
    why = "the two inputs have different lengths, and " if enc.neighbour_lengths else ""
    false = zt.BoolVal(False)
    conditions = []
    for key in dict.fromkeys([*on_d, *on_d2]):
        g1, d = on_d.get(key, (false, None))
        g2, d2 = on_d2.get(key, (false, None))
        draw = d or d2
        assert draw is not None, "each key comes from a draw of one of the runs"
        conditions.append((g1 == g2, f"{_member(draw)} (line {draw.stmt.span.line}) is drawn in one run and not in "
                                     f"the other with the same output: {why}Lemma 1 needs the same samples on "
                                     "(D, H) and (D', φ(H)) when the outputs agree"))
    return conditions


def _check_c3(q: Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    conditions = [(z3.Implies(d.guard, q.align.shift(d.site, d.index) == 0),
                   f"{_member(d)} ({d.stmt.dist}, not Lipschitz) has a nonzero shift")
                  for d in q.run1.draws if d.site == o.site and not q.mech.noise_site(d.site).distribution.alignable]
    if not conditions:
        return None
    answer = check_valid(q.assumptions(), zt.And([c for c, _ in conditions]), q.limits)
    return answer, lambda model: first_false(model, conditions)


def _check_c4a(q: Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    defined = q.align.defined()
    preserved = q.run1.output.equal(q.run2.output, q.enc)
    answer = check_valid(q.assumptions(), zt.And([preserved, *(c for c, _ in defined)]), q.limits)
    return answer, lambda model: (first_false(model, defined, None) or
                                  first_difference(model, q.run1.output, q.run2.output))


def _check_c4b(q: Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    answer, describe, note = acyclic.check(q.mech, q.enc, q.run1, q.align, q.assumptions(), q.limits)
    v.notes = [x for x in v.notes if not x.text.startswith("an order")]
    if note:
        v.note(note, Status.PROVED, Status.BOUNDED)
    return answer, describe


def _check_c4c(q: Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    cost, _ = aligned_cost(q.enc, q.run1, q.align)
    claim = q.align.claim()
    # The bounded check's first pass at long shapes (`Encoding.relational`, verify._first_pass, which keeps only
    # proofs) asks Σ c_i·|ψ_i| <= claim divided by a positive common factor of every c_i: the same truth value,
    # and often a linear query (numeric sparse at length 5: from over 300 s to 0.3 s)
    # and first by nlsat on the whole query where it is nonlinear (`Limits.nlsat_tactic`)
    scaled = scaled_cost(q.enc, q.run1, q.align, q.limits) if q.enc.relational else None
    limits = replace(q.limits, nlsat_tactic=q.enc.relational)
    if scaled is None:
        answer = check_valid(q.assumptions(), cost <= claim, limits)
    else:
        with zt.fresh_solving():  # only its proof is kept, and it is not one of the queries the models come from
            answer = check_valid([*q.assumptions(), *scaled[2]], scaled[0] <= scaled[1], limits)
    functions = _uninterpreted_in(q.enc, [cost, claim])
    if functions == UNBOUNDED:
        return answer, lambda model: (f"the aligned cost exceeds the claim: a term of it is infinite (z3's model gives "
                                      f"{show(model, cost)} against {show(model, claim)}; the replay evaluates it)")
    if functions:
        return answer, lambda model: (f"the aligned cost exceeds the claim: in z3's model, where {functions} "
                                      f"uninterpreted, {show(model, cost)} against {show(model, claim)} (the "
                                      "replay evaluates them)")
    return answer, lambda model: f"aligned cost {show(model, cost)} exceeds the claim {show(model, claim)}"


def _uninterpreted_in(enc: Encoding, terms: list[z3.ExprRef]) -> str:
    """The functions z3 leaves uninterpreted (`Encoding.uninterpreted`) that the terms apply, as a text ("ln is",
    "exp and ln are"); "" for none: a model's value of such an application is not the function's."""
    names: set[str] = set()
    seen: set[int] = set()
    todo = list(terms)
    while todo:
        t = todo.pop()
        if t.get_id() in seen or not z3.is_app(t):
            continue
        seen.add(t.get_id())
        if t.decl().name() in enc.uninterpreted:
            names.add(t.decl().name())
        todo.extend(t.children())
    if names == {UNBOUNDED}:
        return UNBOUNDED
    ordered = sorted(names - {UNBOUNDED})
    if not ordered:
        return ""
    return f"{ordered[0]} is" if len(ordered) == 1 else f"{', '.join(ordered[:-1])} and {ordered[-1]} are"


def common_factor(mech: ResolvedMechanism) -> tuple[Any, dict[str, Any], Any] | None:
    """m, each site's c_i / m and the claim / m (sympy, in the parameters), where m is the product of the powers of
    parameters common to every cost coefficient (eps/c for 4 eps/(9c) and 2 eps/(9c)); None when there is none, or
    when a coefficient or the claim is not a formula of the parameters. Dividing C4c's two sides by m > 0 keeps its
    truth value and takes the products of parameters with noise out of the query (eps·|ψ| is nonlinear for z3)."""
    constants = constant_bindings(mech)
    coefficients = {}
    if mech.mapped_sites:  # their exact costs are not c_i·|ψ_i|
        return None
    for site in mech.noise:
        if site.distribution.cost is None or mech.alignment is None or mech.alignment.shift_of(site.name) is None:
            continue
        c = cost_coefficient(site, {**constants, **site_definitions(mech, site)})
        if c is None:
            return None
        coefficients[site.name] = c
    try:
        claim = to_sympy(mech.claim, constants)
    except NotSymbolic:
        return None
    params = {p.name for p in mech.params}
    if not coefficients or not all(x.name in params for c in coefficients.values() for x in c.free_symbols):
        return None
    exponents: dict[Any, Any] | None = None
    for c in coefficients.values():
        powers = {base: e for base, e in sympy.factor(c).as_powers_dict().items()
                  if isinstance(base, sympy.Symbol) and e.is_Integer}
        exponents = powers if exponents is None else \
            {b: min(e, powers[b]) if e > 0 else max(e, powers[b]) for b, e in exponents.items()
             if b in powers and (e > 0) == (powers[b] > 0)}
    if not exponents:
        return None
    m = sympy.Mul(*(b ** e for b, e in exponents.items()))
    return m, {name: sympy.cancel(c / m) for name, c in coefficients.items()}, sympy.cancel(claim / m)


def scaled_cost(enc: Encoding, run: Run, align: AlignmentEval,
                limits: Limits) -> tuple[Any, Any, list[z3.BoolRef]] | None:
    """The aligned cost and the claim divided by `common_factor`'s m, when `requires` makes m positive, and the
    definitions they read: the cost is Σ over sites of (c_i / m)·S_site with S_site = Σ over its draws of |ψ|, a
    name of its own where c_i / m is not a number (one product of parameters per site, not one per draw)."""
    factor = common_factor(enc.mech)
    if factor is None:
        return None
    m, coefficients, claim = factor

    def term(formula: Any) -> z3.ArithRef:
        return _real(to_z3(formula, lambda name: _real(enc.params[name]), enc.function))

    try:
        positive, claim_term = term(m) > 0, term(claim)
        terms = {site: term(c) for site, c in coefficients.items()}
    except NotSymbolic:  # a function z3 has no term for: the query as written
        return None
    if check_valid([enc.requires()], positive, limits).status != Validity.PROVED:
        return None
    per_site: dict[str, list[z3.ArithRef]] = {}
    for d, psi in _costed_shifts(enc, run, align):  # every site shifted with a cost is in `coefficients`
        per_site.setdefault(d.site, []).append(z3.If(d.guard, _abs(_real(psi)), 0))
    parts, definitions = [], []
    for site, shifts in per_site.items():
        total = zt.Sum(shifts)
        if coefficients[site].free_symbols:
            named = enc.fresh(f"shifts_{site}")
            definitions.append(named == total)
            total = named
        parts.append(terms[site] * total)
    return (zt.Sum(parts) if parts else zt.RealVal(0)), claim_term, definitions


def _check_c4d(q: Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    conditions = support_conditions(q.run1, q.align)
    answer = check_valid(q.assumptions(), zt.And([c for c, _ in conditions]), q.limits)
    return answer, lambda model: first_false(model, conditions)


Z3_CHECKS: dict[ObligationId, Check] = {
    ObligationId.C0: _check_c0, ObligationId.C2: _check_c2, ObligationId.C3: _check_c3,
    ObligationId.C4A: _check_c4a, ObligationId.C4B: _check_c4b, ObligationId.C4C: _check_c4c,
    ObligationId.C4D: _check_c4d,
}
"""The z3 check of each obligation that depends on the input shape. The others hold by construction (C1, C5:
resolution rejects what would break them) or have a rule of their own (MIX: `mixture.verify`)."""


Witness = Callable[[Encoding], "list[z3.BoolRef]"]
"""The constraints whose model, at one input shape, proves an obligation proved by one model
(`ObligationKind.witness`)."""


def _distinct_neighbours(enc: Encoding) -> list[z3.BoolRef]:
    """ADJ at one input shape: D ~ D' (the adjacency clauses) with D != D' (some private parameter, an entry of a
    private list, or a list's length differs), under `requires`. The types are the symbols' sorts (an int parameter
    is a z3 Int: two ints never differ by 1/2), the lengths the shape's."""
    return [enc.adjacency(), inputs_differ(enc), enc.requires()]


WITNESS_CHECKS: dict[ObligationId, Witness] = {ObligationId.ADJ: _distinct_neighbours}
"""The z3 check of each obligation that one model proves: `_search` looks for one over the input shapes."""


BY_CONSTRUCTION = frozenset({ObligationId.C1, ObligationId.C5})


assert set(Z3_CHECKS) | set(WITNESS_CHECKS) | BY_CONSTRUCTION | {ObligationId.MIX} == set(ObligationId), \
    "an obligation has no check"
assert set(WITNESS_CHECKS) == {k.id for k in KINDS.values() if k.witness}, "a witness obligation has no model search"
assert all(rule.bounded <= set(Z3_CHECKS) | set(WITNESS_CHECKS) for rule in RULES), \
    "a rule's bounded obligation has no z3 check"


def aligned_runs(enc: Encoding) -> tuple[Run, AlignmentEval, Run]:
    """The run on (D, H), the alignment over its output, and the run on (D', φ(H))."""
    run1 = Run(enc, enc.params).execute()
    align = AlignmentEval(enc, run1)
    run2 = Run(enc, {**enc.params, **enc.neighbour}, shift=align.shift, twin=run1).execute()
    return run1, align, run2


def aligned_cost(enc: Encoding, run: Run, align: AlignmentEval) -> tuple[z3.ArithRef, list[tuple[Draw, z3.ArithRef]]]:
    """Σ over the samples drawn in `run` of each one's cost: c_i·|ψ_i| (Definition 7, c_i from the design table),
    or for a value map of noise with finitely many values the exact `map_cost`."""
    terms = []
    for d, psi in _costed_shifts(enc, run, align):
        site = enc.mech.noise_site(d.site)
        cost = map_cost(enc, site, d, psi) if site.distribution.finite else cost_term(enc, site, d) * _abs(_real(psi))
        terms.append((d, z3.If(d.guard, cost, 0)))
    return (zt.Sum([t for _, t in terms]) if terms else zt.RealVal(0)), terms


def _costed_shifts(enc: Encoding, run: Run, align: AlignmentEval) -> list[tuple[Draw, z3.ArithRef]]:
    """The samples drawn in `run` that the alignment moves (ψ not the number 0) and whose distribution has a cost
    (a coefficient, or exact masses; without either, C3 decides whether it is shifted at all), each with its ψ."""
    shifted = []
    for d in run.draws:
        psi = align.shift(d.site, d.index)
        if z3.is_int_value(z3.simplify(psi)) and z3.simplify(psi).as_long() == 0:
            continue
        if enc.mech.noise_site(d.site).distribution.alignable:
            shifted.append((d, psi))
    return shifted


def map_cost(enc: Encoding, site, d: Draw, psi: z3.ArithRef) -> z3.ArithRef:
    """The exact cost of the value map g(b) = b + ψ of one draw b of noise with finitely many values v_1 .. v_n
    (rules.ValueMaps): ln P[g⁻¹(g(b))] − ln P[g(b)], where g⁻¹(g(b)) is every v_j that g maps where it maps b,
    g(v_j) being ψ's formula with v_j for b and everything else held (the output is not among what it may read:
    resolution's `map-reads-output`). One case per target v_k and set S of values mapped onto it, each cost a
    formula of the parameters (`obligations.map_cost_leaves`, with ln(exp(x)) = x), else ln of the z3 ratio;
    outside every case (g(b) outside the support, or of probability 0) the cost is unbounded."""
    atoms = masses(site.distribution, d.args)
    if len(atoms) > MAX_MAPPED_VALUES:
        raise EncodingError(f"{site.display} has {len(atoms)} values; a value map is costed for at most "
                            f"{MAX_MAPPED_VALUES}")
    values = [v for v, _ in atoms]
    probabilities = [p for _, p in atoms]
    aligned = _real(d.value) + _real(psi)
    images = [z3.substitute(aligned, (d.value, _value_of_sort(v, d.value))) for v in values]
    leaves = map_cost_leaves(site, {**constant_bindings(enc.mech), **site_definitions(enc.mech, site)})
    cost: z3.ArithRef = enc.function(UNBOUNDED)(zt.RealVal(0))
    for (chosen, k), leaf in sorted((leaves or _ratio_leaves(len(atoms))).items(),
                                    key=lambda item: (item[0][1], sorted(item[0][0])), reverse=True):
        case = zt.And([aligned == values[k], probabilities[k] > 0,
                       *[(images[j] == values[k]) if j in chosen else (images[j] != values[k])
                         for j in range(len(atoms))]])
        value = None
        if leaf is not None:
            with contextlib.suppress(NotSymbolic):
                value = _real(to_z3(leaf, lambda name: _param(enc, name), enc.function))
        if value is None:
            value = enc.function("ln")(zt.Sum([probabilities[j] for j in chosen]) / probabilities[k])
        cost = z3.If(case, value, cost)
    return cost


def _param(enc: Encoding, name: str) -> z3.ArithRef:
    if name not in enc.params:
        raise NotSymbolic(name)
    return _real(enc.params[name])


def _ratio_leaves(count: int) -> dict[tuple[frozenset[int], int], None]:
    return {(frozenset(chosen), k): None for k in range(count) for size in range(1, count + 1)
            for chosen in itertools.combinations(range(count), size)}


def _value_of_sort(v: z3.ArithRef, like: z3.ArithRef) -> z3.ArithRef:
    """A value of the support (a z3 real) in the sort of the noise symbol it replaces."""
    if not like.is_int():
        return v
    return zt.IntVal(v.as_fraction().numerator) if z3.is_rational_value(v) and v.as_fraction().denominator == 1 \
        else z3.ToInt(v)


def cost_term(enc: Encoding, site, d: Draw) -> z3.ArithRef:
    if site.distribution.cost is None:
        # Not Lipschitz: no finite coefficient. C3 fails separately; the cost has no bound.
        return enc.function(UNBOUNDED)(zt.RealVal(0))
    # the names its parameters read that have one value at every draw are written out (`site_definitions`)
    coefficient = cost_coefficient(site, site_definitions(enc.mech, site))
    if coefficient is None:
        raise EncodingError(f"the cost coefficient of {site.display} is not symbolic")

    def lookup(name: str):
        if name in d.env:
            return _real(d.env[name])
        if name in enc.params:
            return _real(enc.params[name])
        raise NotSymbolic(name)

    try:
        return _real(to_z3(coefficient, lookup, enc.function))
    except NotSymbolic as error:
        raise EncodingError(f"cannot encode the cost coefficient of {site.display}: {error}") from None


def _samples_determined(mech: ResolvedMechanism, enc: Encoding, limits: Limits):
    """C2 by self-composition: two runs on the same D whose outputs agree draw the same samples."""
    run_a = Run(enc, enc.params, noise_prefix="A.").execute()
    run_b = Run(enc, enc.params, noise_prefix="B.").execute()
    pairs = list(zip(run_a.draws, run_b.draws))
    same = zt.And([a.guard == b.guard for a, b in pairs]) if pairs else zt.BoolVal(True)
    base = [enc.requires(), *noise_support(enc)]
    # Two runs that draw the same noise have the same output: the assumptions have a model when base has one.
    answer = check_valid(base + [run_a.output.equal(run_b.output, enc)], same, limits, satisfiable_if=base)

    def describe(model):
        for a, b in pairs:
            if not z3.is_true(model.eval(a.guard == b.guard, model_completion=True)):
                return (f"two runs on the same input with the same output differ on whether {_member(a)} is drawn "
                        f"(line {a.stmt.span.line})")
        return "the samples drawn are not determined by the output"

    return answer, describe


# ----------------------------------------------------------------------------------------- counterexamples
