"""Stage 3 (resolved program -> obligations): what a proof by Lemma 1 of the Free Gap paper must establish.

Lemma 1 (Free Gap, Section 4; proof in Section 10) gives ε-DP when (1) M terminates with probability 1,
(2) the number of samples is determined by the output, (3) each noise density satisfies
ln f(x)/f(y) <= c·|x - y|, (4) for every D ~ D' and ω a local alignment preserves the output, is acyclic, costs
Σ c_i·|η_i - η'_i| <= ε and keeps the noise in its support, and (5) there are countably many local alignments.
This module states those conditions for one mechanism, each with a source location (design.md §1). It
decides nothing: verdicts belong to the checker.

Lemma 1 also assumes, without saying so, that each noise variable η_i has one density f_i, the same in the
run on (D, H) and in the aligned run on (D', φ(H)): its proof compares f_i(η_i) with f_i(η_i'), and a scale,
rate, probability or bound that reads the data (or a shifted noise variable) gives η_i another density on
D'. Condition C0 states that hypothesis: every parameter of every sampling site is equal in both runs along
the path, and well formed there (scale > 0, p in [0, 1], a < b, no division by zero), for every parameter
value that `requires` allows. Without it, randomized response whose coin reads the private bit, or noise
scaled by |q|, would be "proved" (specs/incorrect/ has one mechanism per case).

Mechanisms that draw a Laplace scale from other noise (R²DP, seed 002) get C0 and the mixture rule instead
of Lemma 1: the claim must be at least ε = ln(E[u] / M'_u(-Δq)) (Theorem 4.1, Corollary 4.2).
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cache as cache_function
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from . import cache
from . import monomials as m
from . import nodes as n
from .resolve import NoiseSite, ResolvedMechanism, children, free_names, read_name, walk, walk_statements
from .span import Span
from .types import ListType
from .unparse import clause_text, unparse

if TYPE_CHECKING:
    import sympy

    from .distributions import Distribution

# ------------------------------------------------------------------------------------- the obligation table


class ObligationId(str, Enum):
    """The conditions a proof discharges: Lemma 1's (Free Gap, Section 4), its implicit C0, the R²DP rule's MIX,
    and ADJ, which every rule needs: its assumptions admit two distinct neighbours. The members are their names as
    strings (`ObligationId.C4A == "C4a"`)."""

    ADJ = "ADJ"
    C0 = "C0"
    C1 = "C1"
    C2 = "C2"
    C3 = "C3"
    C4A = "C4a"
    C4B = "C4b"
    C4C = "C4c"
    C4D = "C4d"
    C5 = "C5"
    MIX = "MIX"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


@dataclass(frozen=True)
class ObligationKind:
    """One row of the table: what the condition says and how each back end treats it."""

    id: ObligationId
    title: str
    """The condition, as every report prints it."""
    label: str
    """Its short name in the sampled alignment check's report."""
    one_run: bool
    """One execution can break it (a run on (D, H) and the aligned run on (D', φ(H))): the replay of a
    counterexample (`interp.replay`) and the sampled alignment check (`interp.alignment`) test it."""
    induction: str
    """How a proof for every input length covers it (docs/checker.md, "Scope")."""
    replayed: bool
    """The checker's counterexample is one (D, D', H), which the interpreter's replay reruns to confirm it
    (C2's is two runs on D, C4b's an order of all noise: neither is one execution)."""
    witness: bool = False
    """Proved by one model (an existence claim: some input shape has one), not by a validity query at every input
    shape; none where it was searched makes every other obligation's proof vacuous (ADJ)."""
    quiet: bool = False
    """Reported only when it does not hold: a hypothesis of every proof, whose success would be one more line in
    every report, and whose failure is the verdict's headline (ADJ: "vacuous")."""
    of_alignment: bool = False
    """A condition on the alignment φ (Lemma 1's C4): what the encoding assumed of the alignment's terms (an
    uninterpreted exp or ln) is noted on its verdict."""
    by_invariant: bool = False
    """Proved for every length by a loop invariant relating the two runs: the invariant's conjuncts are noted on
    its verdict and printed by the reports."""


KINDS: Mapping[ObligationId, ObligationKind] = {k.id: k for k in (
    ObligationKind(ObligationId.ADJ, "distinct neighbours exist: some D ≠ D' satisfies `requires`, the adjacency "
                   "clauses and the types", label="distinct neighbours", one_run=False,
                   induction="a model at some length: one pair of distinct neighbours is enough for every scope that "
                             "covers its length", replayed=False, witness=True, quiet=True),
    ObligationKind(ObligationId.C0, "each noise variable has one fixed density: its parameters are equal in both "
                   "runs and well formed", label="same distribution parameters on D and D'", one_run=True,
                   induction="the parameters' equality and well-formedness in the abstract iteration", replayed=True),
    ObligationKind(ObligationId.C1, "termination with probability 1", label="terminates", one_run=False,
                   induction="by construction: bounded `for` loops, no `while`", replayed=False),
    ObligationKind(ObligationId.C2, "the number of samples is determined by the output",
                   label="same noise drawn on D and D'", one_run=True,
                   induction="the loop's guards are output-determined in every iteration, and the same in both "
                             "runs when their outputs agree", replayed=False),
    ObligationKind(ObligationId.C3, "each noise density is Lipschitz: ln f(x)/f(y) <= c·|x - y|",
                   label="non-Lipschitz noise not shifted", one_run=True,
                   induction="a non-Lipschitz site's shift is 0 in every iteration", replayed=True),
    ObligationKind(ObligationId.C4A, "the alignment is defined on the output and preserves it: M(D, H) = ω implies "
                   "M(D', φ(H)) = ω", label="outputs preserved", one_run=True,
                   induction="a loop invariant relating the two runs", replayed=True, of_alignment=True,
                   by_invariant=True),
    ObligationKind(ObligationId.C4B, "the alignment is acyclic", label="acyclic", one_run=False,
                   induction="by construction when no shift reads noise", replayed=False, of_alignment=True),
    ObligationKind(ObligationId.C4C, "the alignment cost Σ c_i·|ψ_i| is at most the claimed ε",
                   label="cost within the claim", one_run=True,
                   induction="a loop invariant bounding the cost so far", replayed=True, of_alignment=True,
                   by_invariant=True),
    ObligationKind(ObligationId.C4D, "aligned noise stays in its support", label="aligned noise in its support",
                   one_run=True, induction="the support conditions of the abstract iteration", replayed=True,
                   of_alignment=True),
    ObligationKind(ObligationId.C5, "countably many local alignments: φ reads only discrete parts of the output",
                   label="reads discrete outputs", one_run=False,
                   induction="by construction: resolution rejects reads of continuous outputs", replayed=False),
    ObligationKind(ObligationId.MIX, "the claim is at least the R²DP mixture rule's ε = ln(E[u] / M'_u(-Δq))",
                   label="mixture rule", one_run=False, induction="no lengths: the rule is a closed form",
                   replayed=False),
)}
"""Every obligation, in report order."""
ORDER: tuple[ObligationId, ...] = tuple(KINDS)
ONE_RUN: tuple[ObligationId, ...] = tuple(k.id for k in KINDS.values() if k.one_run)
"""The obligations that one execution can break: what replays and the sampled check test."""

NUMERIC_RTOL = 1e-9
"""The one tolerance of every floating-point check of an obligation (the replay of a counterexample, `align
run --aligned`, the sampled alignment check): relative slack for the rounding of the interpreter's float
arithmetic. The checker's z3 queries are exact."""


def cost_within_claim(cost: Any, claim: Any) -> Any:
    """C4c on floats: cost <= claim up to rounding, elementwise on numpy arrays."""
    return cost <= claim + NUMERIC_RTOL * (1 + abs(claim))


def close(a: Any, b: Any, scale: float = 0.0) -> Any:
    """Two floats equal up to rounding (C4a on real outputs, C0 on parameters), elementwise on numpy arrays;
    `scale` is the magnitude of the inputs the values were computed from."""
    return (a == b) | (abs(a - b) <= NUMERIC_RTOL * (1 + abs(a) + abs(b) + scale))


ObligationKey = tuple[ObligationId, str | None]
"""An obligation of one mechanism: its id and, for the per-site ones (C0, C3), the noise variable."""


@dataclass(frozen=True)
class Obligation:
    """One condition to discharge; `details` say what exactly it requires of this mechanism."""

    id: ObligationId
    span: Span
    describe: Callable[[], tuple[str, ...]] = field(compare=False, repr=False)
    """Computes `details` when a report shows them (C3 and C4c simplify cost coefficients with sympy, which
    `align check --output-format concise` and the checker's own use of the obligations never need)."""
    site: str | None = None
    """For C0 and C3: the noise variable the obligation is about."""

    @cached_property
    def details(self) -> tuple[str, ...]:
        """What exactly the obligation requires of this mechanism, one line each."""
        return self.describe()

    @property
    def kind(self) -> ObligationKind:
        return KINDS[self.id]

    @property
    def key(self) -> ObligationKey:
        return self.id, self.site

    @property
    def name(self) -> str:
        """How reports name it: `C4a`, or `C3(eta)` for a per-site obligation."""
        return f"{self.id}({self.site})" if self.site else str(self.id)

    @property
    def title(self) -> str:
        return KINDS[self.id].title


@dataclass(frozen=True)
class SiteSummary:
    """A sampling site as the report shows it."""

    site: NoiseSite
    distribution_text: str
    cost_text: str
    """The cost coefficient c (simplified, then expanded in terms of parameters), or why there is none."""
    shift_text: str
    """`eta' = eta + ...` from the alignment, or `not shifted`."""


def constant_assignments(mech: ResolvedMechanism) -> Iterator[n.Assign]:
    """The top-level assignments of the parameter-derived constants (eps0 = theta * eps ...), in order."""
    for s in mech.body:
        if isinstance(s, n.Assign) and s.index is None and s.target in mech.constants:
            yield s


def constant_bindings(mech: ResolvedMechanism) -> dict[str, sympy.Expr]:
    """Formulas of the parameter-derived constants (eps0 = theta*eps ...), in terms of parameters."""
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    from .symbolic import NotSymbolic, to_sympy

    bindings: dict[str, sympy.Expr] = {}
    for s in constant_assignments(mech):
        with contextlib.suppress(NotSymbolic):
            bindings[s.target] = to_sympy(s.value, bindings)
    return bindings


def site_definitions(mech: ResolvedMechanism, site: NoiseSite) -> dict[str, sympy.Expr]:
    """Formulas of the names a site's parameters read that are not parameters or constants but have one value
    wherever the site draws: each assigned once in the whole program, unindexed, at the top level of a block that
    holds the sample (so the assignment runs before every draw), from parameters, constants and such names only.
    `scale = 1 - exp(-eps1 / 2)` in a loop before `xi ~ Geo(scale)` is the same number at every draw, and its
    cost coefficient -ln(1 - scale) is then eps1/2 in exact arithmetic, as for `Geo(1 - exp(-eps1 / 2))`."""
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    import sympy

    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    from .symbolic import NotSymbolic, to_sympy

    assigned: dict[str, int] = {}
    for s in walk_statements(mech.body):
        if isinstance(s, n.Assign):
            assigned[s.target] = assigned.get(s.target, 0) + 1
    params = {p.name for p in mech.params}
    bindings: dict[str, sympy.Expr] = {}

    def path(block: tuple[n.Stmt, ...]) -> list[tuple[tuple[n.Stmt, ...], int]] | None:
        """The blocks from `block` down to the one holding the sample, each with the position of the statement
        that holds it (or is it); None when the sample is not in `block`."""
        for k, s in enumerate(block):
            if s is site.stmt:
                return [(block, k)]
            inner = [s.then, s.orelse] if isinstance(s, n.If) else [s.body] if isinstance(s, (n.For, n.While)) else []
            for b in inner:
                below = path(tuple(b))
                if below is not None:
                    return [(block, k), *below]
        return None

    for block, k in path(tuple(mech.body)) or []:
        for s in block[:k]:  # the top-level statements of a block on the path, before the one holding the sample
            if isinstance(s, n.Assign) and s.index is None and assigned.get(s.target) == 1 and \
                    s.target not in params and free_names(s.value) <= params | mech.constants | set(bindings):
                with contextlib.suppress(NotSymbolic):
                    formula = to_sympy(s.value, bindings)
                    # a constant stays a name unless exp or ln may cancel through it (`scale = 1 - exp(-eps0)`)
                    if s.target not in mech.constants or formula.has(sympy.exp, sympy.log):
                        bindings[s.target] = formula
    return bindings


def cost_coefficient(site: NoiseSite, bindings: dict[str, sympy.Expr] | None = None) -> sympy.Expr | None:
    """c_i of the site's distribution (design.md §1 table), simplified; None when not Lipschitz or not symbolic."""
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    import sympy

    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    from .symbolic import FIELD, NotSymbolic, cancel_ln_exp, simplify, to_sympy

    if site.distribution.cost is None:
        return None
    try:
        args = tuple(to_sympy(a, bindings) for a in site.args)
    except NotSymbolic:
        return None
    coefficient = cancel_ln_exp(site.distribution.cost(args, FIELD))
    # sympy's automatic evaluation already leaves a short coefficient (eps0, eps1/2, -ln(1 - p)) in its simplest
    # form; `simplify` costs tens of milliseconds a call, and its first call imports sympy.physics (0.3 s)
    return coefficient if sympy.count_ops(coefficient) <= _SHORT else simplify(coefficient)


MAX_MAPPED_VALUES = 4
"""The most values a distribution mapped by an alignment may have: the exact cost of a map is one formula per
target value and set of values mapped onto it (n·2^(n−1) of them)."""


def map_cost_leaves(site: NoiseSite, bindings: dict[str, sympy.Expr] | None = None
                    ) -> dict[tuple[frozenset[int], int], sympy.Expr] | None:
    """The exact cost of a value map g of the site's noise (rules.ValueMaps), as formulas of the parameters: for
    each target value (by its position k among the distribution's `masses`) and set S of the positions that g maps
    onto it, ln(Σ_{j ∈ S} P[v_j]) − ln P[v_k] (the cost at any b in S), simplified (ln(exp(x)) = x); None when
    the parameters are not formulas of the parameters or a mass is 0 (an infinite cost). The dict is shared
    (`_leaves`): read it, do not change it."""
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    from .symbolic import NotSymbolic, to_sympy

    assert site.distribution.finite, "only noise with finitely many values is mapped"
    try:
        args = tuple(to_sympy(a, bindings) for a in site.args)
    except NotSymbolic:
        return None
    return _leaves(site.distribution, site.distribution.full_params(args))


@cache_function
def _leaves(dist: Distribution, args: tuple[sympy.Expr, ...]) -> dict[tuple[frozenset[int], int], sympy.Expr] | None:
    """`map_cost_leaves` at the parameters' formulas, once per distribution and formulas: the checker asks at every
    draw of a site, with the same answer."""
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    import sympy

    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    from .symbolic import cancel_ln_exp

    assert dist.masses is not None, "only noise with finitely many values is mapped"
    atoms = dist.masses(args)
    # A value of probability exactly 0 (a weight of Categorical left out) is no target: `checks.map_cost` costs a
    # map onto it as unbounded, and C4d refutes it. As a member of S it adds 0: the leaf of S without it is used.
    null = {j for j, (_, p) in enumerate(atoms) if sympy.sympify(p).is_zero}
    formulas: dict[tuple[frozenset[int], int], sympy.Expr] = {}
    leaves = {}
    for k in range(len(atoms)):
        if k in null:
            continue
        for size in range(1, len(atoms) + 1):
            for chosen in itertools.combinations(range(len(atoms)), size):
                key = (frozenset(chosen) - null, k)
                if not key[0]:
                    continue
                if key not in formulas:
                    ratio = sympy.cancel(sympy.together(sum(atoms[j][1] for j in key[0]) / atoms[k][1]))
                    if ratio.has(sympy.zoo, sympy.nan, sympy.oo):
                        return None
                    formulas[key] = cancel_ln_exp(sympy.log(sympy.simplify(ratio)))
                leaves[frozenset(chosen), k] = formulas[key]
    return leaves


_SHORT = 4
"""Operations up to which a cost coefficient is shown as the distribution's rule gives it (for all 170
coefficients of the corpus, the diagnostics' specs and the tutorial, `simplify` returns these unchanged)."""


def coefficient_texts(mech: ResolvedMechanism, site: NoiseSite) -> tuple[str | None, str | None]:
    """The site's cost coefficient as text: as the distribution's rule gives it over the written arguments
    (`eps1/2`), and in terms of the parameters (`eps*(1 - theta)/(2*k)`); None where it is not symbolic.

    Importing sympy alone takes longer than the rest of `align check`. A coefficient that is a product of powers
    of the parameters (most are) is computed and printed without it (`monomials.py`, the same text); the others
    are computed by sympy and kept in the cache directory (`cache.py`), keyed by the distribution, the arguments
    and the definitions of the constants as written, in a file whose name hashes sympy's release and the modules
    that compute them."""
    if site.distribution.cost is None:
        return None, None
    quick = _monomial_texts(mech, site)
    if quick is not None:
        return quick
    key = "\0".join((site.distribution.name, *(unparse(a) for a in site.args), *_constant_definitions(mech)))
    memo = _coefficient_memo()
    found = memo.get(key)
    if found is not None:
        return found
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    from .symbolic import show

    local = cost_coefficient(site)
    expanded = cost_coefficient(site, constant_bindings(mech))
    texts = (None if local is None else show(local), None if expanded is None else show(expanded))
    memo[key] = texts
    path = _coefficient_memo_path()
    if path is not None:
        body = json.dumps({k: list(v) for k, v in memo.items()}, sort_keys=True).encode()
        cache.write(path, lambda f: f.write(body))
    return texts


def _monomial_texts(mech: ResolvedMechanism, site: NoiseSite) -> tuple[str, str] | None:
    """`coefficient_texts` where both coefficients are products of powers (`monomials.py`); None elsewhere."""
    cost = site.distribution.cost
    if cost is None:
        return None
    bindings: m.Bindings = {}
    for s in constant_assignments(mech):
        try:
            bindings[s.target] = m.of(s.value, bindings)
        except m.Outside:
            bindings[s.target] = None
    try:
        local = cost(tuple(m.of(a) for a in site.args), m.FIELD).settled()
        expanded = cost(tuple(m.of(a, bindings) for a in site.args), m.FIELD).settled()
        return local.text(), expanded.text()
    except m.Outside:
        return None


def _constant_definitions(mech: ResolvedMechanism) -> list[str]:
    return [f"{s.target} = {unparse(s.value)}" for s in constant_assignments(mech)]


@cache_function
def _coefficient_memo_path() -> str | None:
    spec = importlib.util.find_spec("sympy")
    if spec is None or spec.origin is None:
        return None
    sources = [os.path.join(os.path.dirname(spec.origin), "release.py")]
    here = os.path.dirname(__file__)
    sources += [os.path.join(here, name) for name in ("distributions.py", "symbolic.py", "obligations.py",
                                                      "monomials.py")]
    try:
        parts = []
        for source in sources:
            with open(source, encoding="utf-8") as f:
                parts.append(f.read())
    except OSError:
        return None
    return cache.path("coefficients", tuple(parts), "json")


@cache_function
def _coefficient_memo() -> dict[str, tuple[str | None, str | None]]:
    """The memo of `coefficient_texts`, read once per process (empty when missing or damaged)."""
    path = _coefficient_memo_path()
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    memo: dict[str, tuple[str | None, str | None]] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, list) and len(value) == 2 and all(v is None or isinstance(v, str) for v in value):
                memo[key] = (value[0], value[1])
    return memo


def summarize_site(mech: ResolvedMechanism, site: NoiseSite) -> SiteSummary:
    dist = f"{site.distribution.name}({', '.join(unparse(a) for a in site.args)})"
    if site.distribution.cost is None:
        cost = f"none: not Lipschitz ({site.distribution.cost_note})"
    else:
        local, expanded = coefficient_texts(mech, site)
        if local is None:
            cost = f"{site.distribution.name} coefficient of {', '.join(unparse(a) for a in site.args)}"
        else:
            cost = local
            if expanded is not None and expanded != local:
                cost += f" = {expanded}"
        if site.distribution.whole_shifts:
            cost += f" ({site.distribution.cost_note})"
    shift = mech.alignment.shift_of(site.name) if mech.alignment else None
    if shift is None:
        shift_text = "not shifted"
    else:
        lhs = f"{site.name}[{shift.index_var}]" if shift.index_var else site.name
        shift_text = f"{lhs}' = {lhs} + {_parenthesized(shift.shift)}"
    return SiteSummary(site, dist, cost, shift_text)


@dataclass(frozen=True)
class ParameterReads:
    """What the parameters of one sampling site read, for C0 (and for `align check` to mark)."""

    private: tuple[str, ...]
    """Private parameters (read other than through `len`), and constants computed from them."""
    noise: tuple[str, ...]
    """Noise variables (their shifted value is read in the aligned run)."""
    variables: tuple[str, ...]
    """Program variables that are not parameter-only constants (they may hold data, noise or outputs)."""

    @property
    def public(self) -> bool:
        """Only public parameters, their constants and literals: equal in both runs by construction."""
        return not (self.private or self.noise or self.variables)

    def text(self) -> str:
        if self.public:
            return "public: they read only public parameters and constants (equal in both runs by construction)"
        parts = []
        if self.private:
            parts.append("private data " + ", ".join(self.private))
        if self.noise:
            parts.append("noise " + ", ".join(self.noise))
        if self.variables:
            parts.append("program variables " + ", ".join(self.variables))
        return "not public: they read " + "; ".join(parts) + " (C0 checks them in both runs)"


def parameter_reads(mech: ResolvedMechanism, site: NoiseSite) -> ParameterReads:
    """Classify the names that the site's parameters read (len(x) reads only the length of x, public unless x has
    an add/remove-one-record clause)."""
    private_params = {p.name for p in mech.params if not p.public}
    hidden = _hidden_lengths(mech)
    private_constants = _private_constants(mech, private_params)
    found_private: set[str] = set()
    found_noise: set[str] = set()
    found_vars: set[str] = set()

    def visit(e: n.Expr) -> None:
        if _public_length(e, hidden):
            return
        if (isinstance(e, n.ParamRef) and e.id in private_params) or \
                (isinstance(e, n.VarRef) and e.id in private_constants):
            found_private.add(e.id)
        elif isinstance(e, n.NoiseRef):
            found_noise.add(e.id)
        elif isinstance(e, n.VarRef) and e.id not in mech.constants:
            found_vars.add(e.id)
        for child in children(e):
            visit(child)

    for a in site.args:
        visit(a)
    return ParameterReads(tuple(sorted(found_private)), tuple(sorted(found_noise)), tuple(sorted(found_vars)))


def _hidden_lengths(mech: ResolvedMechanism) -> set[str]:
    """The lists whose length differs between D and D' (an add/remove-one-record clause)."""
    return {p.name for p in mech.params if not p.length_public}


def _public_length(e: n.Expr, hidden: set[str]) -> bool:
    """Whether e is `len(x)` of a list whose length is public."""
    return isinstance(e, n.Call) and e.func == "len" and \
        not any(read_name(x) in hidden for x in walk(e))


def _private_constants(mech: ResolvedMechanism, private: set[str]) -> set[str]:
    tainted: set[str] = set()
    hidden = _hidden_lengths(mech)
    for s in constant_assignments(mech):
        reads: set[str] = set()

        def visit(e: n.Expr, reads: set[str] = reads) -> None:
            if _public_length(e, hidden):
                return
            name = read_name(e)
            if name is not None:
                reads.add(name)
            for child in children(e):
                visit(child)

        visit(s.value)
        if reads & (private | tainted):
            tainted.add(s.target)
    return tainted


def _out_reads(e: n.Expr) -> list[str]:
    """The places where e reads the output (they must be discrete: checked during resolution)."""
    reads = []
    for sub in walk(e):
        discrete_read = isinstance(sub, n.TagTest) or \
            (isinstance(sub, n.Call) and sub.func in ("indices", "count", "len", "payload")) or \
            (isinstance(sub, n.Index) and isinstance(sub.base, n.Index))
        if discrete_read and any(isinstance(x, n.OutRef) for x in walk(sub)):
            reads.append(unparse(sub))
    return reads


def _noise_read(e: n.Expr, noise: set[str]) -> list[str]:
    return sorted({x.id for x in walk(e) if isinstance(x, (n.NoiseRef, n.MemberRef)) and x.id in noise})


def neighbours_obligation(mech: ResolvedMechanism) -> Obligation:
    """ADJ, a hypothesis of every proof rule: some pair of distinct neighbours satisfies the assumptions. Every other
    obligation is a statement about the pairs D ~ D' that `requires`, the adjacency clauses and the types admit; a
    relation that admits D = D' alone (|q - q'| <= 0, a bound that `requires` pins to 0, q'[i] >= q[i] together with
    q'[i] <= q[i]) makes each of them hold while nothing is proved about privacy. Located at the adjacency clauses."""
    clauses = mech.node.adjacency
    if not clauses:
        return Obligation(ObligationId.ADJ, mech.node.name_span, _given(
            "no parameter is private (no `adjacent` clause): D = D' for every pair of neighbours"))
    first, last = clauses[0].span, clauses[-1].span
    span = Span(first.path, first.line, first.column, last.end_line, last.end_column)
    return Obligation(ObligationId.ADJ, span, _given(
        "the neighbouring relation: " + ", ".join(clause_text(a) for a in clauses) +
        "".join(f", {'the entries of ' if isinstance(p.type, ListType) else ''}{p.name} and {p.name}' in "
                f"{p.domain_text}" for p in mech.params if not p.public and p.domain is not None) +
        (f", with `requires` {', '.join(unparse(r) for r in mech.requires)}" if mech.requires else ""),
        "some pair with D ≠ D' (a private parameter, an entry of a private list or its length, differs) must satisfy "
        "it at an input length the proof covers: otherwise every other obligation holds of D = D' alone, and the "
        "proof says nothing about privacy"))


def lemma1_obligations(mech: ResolvedMechanism) -> tuple[Obligation, ...]:
    """Lemma 1's conditions (and C0) for this mechanism, in report order (`rules.Lemma1`), after ADJ."""
    node = mech.node
    align_span = mech.alignment.node.span if mech.alignment else node.name_span
    claim_span = mech.claim.span
    loops = [s for s in walk_statements(mech.body) if isinstance(s, n.For)]
    breaks = [s for s in walk_statements(mech.body) if isinstance(s, n.Break)]
    result: list[Obligation] = [neighbours_obligation(mech), *density_obligations(mech)]
    result.append(Obligation(ObligationId.C1, node.name_span, _given(
        f"{len(loops)} `for` loop(s) over bounded ranges and no `while`: termination holds by construction")))

    c2 = []
    for site in mech.noise:
        where = f"in each iteration of `for {site.loop.var}` (line {site.loop.span.line})" \
            if site.loop is not None else "once"
        if site.guards:
            conds = " and ".join(unparse(g) for g in site.guards)
            c2.append(f"{site.display} is drawn {where} when {conds}: that condition must be output-determined, "
                      "and the same on D and D' when the outputs agree")
        else:
            c2.append(f"{site.display} is drawn {where}, unconditionally")
    for b in breaks:
        c2.append(f"`break` at line {b.span.line}: whether the loop stops must be output-determined")
    result.append(Obligation(ObligationId.C2, node.name_span, _given(*c2 or ("no noise is drawn",))))
    result.extend(Obligation(ObligationId.C3, site.span, partial(_lipschitz_details, mech, site), site=site.name)
                  for site in mech.noise)

    outputs = [s for s in walk_statements(mech.body) if isinstance(s, n.Output)]
    result.append(Obligation(ObligationId.C4A, align_span, _given(*[
        f"line {o.span.line}: output {unparse(o.value)} equal on (D, H) and (D', φ(H)), reached by the same branches"
        for o in outputs] or ("the mechanism outputs nothing",))))

    noise_names = {s.name for s in mech.noise}
    shifts = mech.alignment.shifts if mech.alignment else ()
    lets = {let.name: let.value for let in mech.alignment.lets} if mech.alignment else {}
    c4b = []
    for s in shifts:
        noise_reads = set(_noise_read(s.shift, noise_names))
        for name in {x.text for x in walk(s.shift) if isinstance(x, n.LetRef)} & set(lets):
            noise_reads |= set(_noise_read(lets[name], noise_names))
        mapped = mech.site(s.var) in mech.mapped_sites
        noise_reads -= {s.var} if mapped else set()
        reads_text = ", ".join(sorted(noise_reads)) if noise_reads else "no noise"
        c4b.append(f"map of {s.var} reads {reads_text} besides {s.var} itself" if mapped else
                   f"shift of {s.var} reads {reads_text}")
    c4b.append("an order of the noise variables must exist in which each shift reads only earlier ones, and "
               "conditions on noise inside shifts must be output-determined")
    result.append(Obligation(ObligationId.C4B, align_span, _given(*c4b)))
    result.append(Obligation(ObligationId.C4C, claim_span, partial(_cost_details, mech)))

    c4d = []
    for site in mech.noise:
        shift = mech.alignment.shift_of(site.name) if mech.alignment else None
        if shift is None:
            continue
        lhs = f"{site.name}[{shift.index_var}]" if shift.index_var else site.name
        for bound, op in site.distribution.values.bounds(site.args, constant=str):
            bound_text = bound if isinstance(bound, str) else unparse(bound)
            c4d.append(f"{lhs} + {_parenthesized(shift.shift)} {op} {bound_text} ({site.distribution.name} has "
                       f"support {site.distribution.support})")
        if site.distribution.integer_shifts:
            why = "is integer-valued" if site.distribution.integer else "costs c per unit only for whole shifts"
            c4d.append(f"{_parenthesized(shift.shift)} is an integer ({site.distribution.name} {why})")
        if site.distribution.finite:
            c4d.append(f"{lhs}' has a positive probability under {site.distribution.name}"
                       f"({', '.join(unparse(a) for a in site.args)})")
    result.append(Obligation(ObligationId.C4D, align_span,
                             _given(*c4d or ("no shifted noise has a restricted support",))))

    reads: list[str] = []
    if mech.alignment:
        for item in (*(s.shift for s in shifts), *(let.value for let in mech.alignment.lets)):
            reads.extend(r for r in _out_reads(item) if r not in reads)
    result.append(Obligation(ObligationId.C5, align_span, _given(
        "the alignment reads the output only through: " + (", ".join(reads) if reads else "nothing"),
        "(resolution already rejects any read of a continuous part of `out`)")))
    return tuple(result)


def _given(*details: str) -> Callable[[], tuple[str, ...]]:
    """Details computed already (cheap: no sympy). A `partial`, not a lambda: obligations, and the verdicts that
    hold them, pickle (process pools, Dask)."""
    return partial(tuple, details)


def _lipschitz_details(mech: ResolvedMechanism, site: NoiseSite) -> tuple[str, ...]:
    """C3's detail: the site's cost coefficient (sympy), or why its shift must be 0."""
    summary = summarize_site(mech, site)
    if site.distribution.lipschitz:
        return (f"{site.display} ~ {summary.distribution_text}: c = {summary.cost_text}",)
    return (f"{site.display} ~ {summary.distribution_text} is not Lipschitz: its shift must be provably 0"
            f" ({summary.shift_text})",)


def _cost_details(mech: ResolvedMechanism) -> tuple[str, ...]:
    """C4c's details: the cost sum with each site's coefficient (sympy)."""
    terms = []
    for site in mech.noise:
        shift = mech.alignment.shift_of(site.name) if mech.alignment else None
        if shift is None:
            continue
        if site in mech.mapped_sites:
            member = f"{site.name}[{shift.index_var}]" if shift.index_var else site.name
            term = f"(ln P[g⁻¹(g({member}))] − ln P[g({member})] with g({member}) = {unparse(shift.node.rhs)})"
            terms.append(f"Σ_{site.loop.var} {term}" if site.loop is not None else term)
            continue
        c_text = coefficient_texts(mech, site)[0] or f"c[{site.name}]"
        term = f"{_factor(c_text)}·|{unparse(shift.shift)}|"
        terms.append(f"Σ_{site.loop.var} {term}" if site.loop is not None else term)
    total = " + ".join(terms) if terms else "0"
    return f"{total} <= {unparse(mech.claim)}", "summed over the samples actually drawn on each path"


def density_obligations(mech: ResolvedMechanism) -> tuple[Obligation, ...]:
    """C0 for each sampling site: one density in both runs (same parameters, well formed)."""
    result = []
    for site in mech.noise:
        dist = f"{site.distribution.name}({', '.join(unparse(a) for a in site.args)})"
        reads = parameter_reads(mech, site)
        requirements = [f"{site.distribution.params[r.param]} {r.text}" for r in site.distribution.requirements
                        if r.param < len(site.args)]
        details = [f"{site.display} ~ {dist}: its parameters are {reads.text()}",
                   "well formed for every value `requires` allows: " + (", ".join(requirements) or "no condition") +
                   ", and every division, ln and sqrt in them defined"]
        result.append(Obligation(ObligationId.C0, site.span, _given(*details), site=site.name))
    return tuple(result)


def _parenthesized(e: n.Expr) -> str:
    text = unparse(e)
    return text if isinstance(e, (n.Number, n.Index, n.Call, n.MemberRef, n.TagLit, n.TagCall, n.Ref)) else f"({text})"


def _factor(text: str) -> str:
    return f"({text})" if any(op in text for op in "+-") else text


def mixture_obligation(mech: ResolvedMechanism) -> Obligation:
    """The R²DP rule's MIX (`rules.Mixture`): the claim is at least the rule's ε."""
    details = []
    for site in mech.mixture_sites:
        details.append(f"{site.display} ~ {site.distribution.name}({', '.join(unparse(a) for a in site.args)}) "
                       "has a scale drawn from other noise: Lemma 1's cost is unbounded, so the R²DP rule applies")
    mixing = [s for s in mech.noise if s not in mech.mixture_sites]
    if mixing:
        details.append("mixing noise: " + ", ".join(
            f"{s.display} ~ {s.distribution.name}({', '.join(unparse(a) for a in s.args)})" for s in mixing))
    details.append(f"claim: {unparse(mech.claim)} (Theorem 4.1 for one mixing variable, Corollary 4.2 for a linear "
                   "combination of independent ones)")
    return Obligation(ObligationId.MIX, mech.claim.span, _given(*details))
