"""The resolved program: what resolution returns and every later stage reads, and the walks over it.

A `ResolvedMechanism` is frozen, hashable and picklable. Its expressions are the typed IR: the node classes
of `nodes.py` with `type` set, every name replaced by a reference (`ParamRef`, `NoiseRef`, ...), tags coded
by their position in `ResolvedMechanism.tags`, comprehension domains explicit and shifts split (`desugar.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import nodes as n
from ..adjacency import Ops
from ..builtins import BUILTIN_ARITY, RESERVED
from ..distributions import Distribution
from ..span import Span
from ..types import TagType, Type
from ..unparse import unparse_domain

# ------------------------------------------------------------------------------------ resolved program


@dataclass(frozen=True)
class ResolvedParam:
    name: str
    type: Type
    adjacency: tuple[n.Adjacency, ...]
    """The distance clauses on this parameter; empty for a public parameter (equal on D and D')."""
    span: Span
    domain: n.Domain | None = None
    """`in lo .. hi`: the integers the value (each entry of a list) may take, on D and on D'; the ends read public
    parameters only. None: every value of the type. Every back end assumes it where it states the inputs
    (`domain_facts`): the checker's `requires` (a public parameter) and adjacency (a private one), the
    interpreter's argument checks, the inputs `align test` generates."""

    @property
    def domain_text(self) -> str | None:
        """`0 .. 2`, as reports show the domain; None without one."""
        return unparse_domain(self.domain, source=False) if self.domain is not None else None

    @property
    def declared_type(self) -> str:
        """`int in 0 .. 2`: the type with its domain, as reports show the parameter."""
        return str(self.type) + (f" in {self.domain_text}" if self.domain is not None else "")

    def domain_facts(self, ops: Ops[Any, Any], entries: Iterable[Any], lo: Any, hi: Any) -> list[Any]:
        """lo <= v <= hi - 1 for each of `entries` (the value of a scalar, entries of a list), in the caller's back
        end, which evaluated the ends (the domain is of integers, so `< hi` is `<= hi - 1`)."""
        return [fact for v in entries for fact in (ops.ge(v, lo), ops.le(v, hi - 1))]

    @property
    def public(self) -> bool:
        return not self.adjacency

    @property
    def length_public(self) -> bool:
        """Whether len(x) is equal on D and D' (every parameter but a list with an add/remove-one-record clause)."""
        return not any(a.rule.changes_length for a in self.adjacency)


@dataclass(frozen=True)
class NoiseSite:
    """A sampling site `x ~ D(args)`: one noise variable, or a family x[i] when inside a loop."""

    name: str
    distribution: Distribution
    args: tuple[n.Expr, ...]
    type: Type
    loop: n.For | None
    """The enclosing loop of a family; None for a scalar noise variable."""
    guards: tuple[n.Expr, ...]
    """Branch conditions under which the site is reached (negated for else branches), outermost first."""
    stmt: n.Sample

    @property
    def family(self) -> bool:
        return self.loop is not None

    @property
    def span(self) -> Span:
        return self.stmt.span

    @property
    def display(self) -> str:
        return f"{self.name}[{self.loop.var}]" if self.loop is not None else self.name


@dataclass(frozen=True)
class ResolvedShift:
    """The aligned value of one noise variable: `var' = var + shift` (for a family, per index `index_var`)."""

    var: str
    index_var: str | None
    shift: n.Expr
    """ψ: the shift alone (`e` from `var' = var + e`; the literal 0 for `var' = var`)."""
    node: n.Shift


@dataclass(frozen=True)
class ResolvedAlignment:
    name: str
    lets: tuple[n.Let, ...]
    """Let bindings with their comprehension domains made explicit, in order."""
    shifts: tuple[ResolvedShift, ...]
    invariants: tuple[n.Invariant, ...]
    node: n.Alignment

    def shift_of(self, var: str) -> ResolvedShift | None:
        return next((s for s in self.shifts if s.var == var), None)


@dataclass(frozen=True)
class ResolvedMechanism:
    """A mechanism with its names bound, types known and alignment attached: the input of every later stage."""

    name: str
    params: tuple[ResolvedParam, ...]
    requires: tuple[n.Expr, ...]
    claim: n.Expr
    """The claimed budget ε (may read discrete parts of `out`)."""
    body: tuple[n.Stmt, ...]
    """The statements, in the IR (`node.body` is the parser's tree, kept for its spans only)."""
    noise: tuple[NoiseSite, ...]
    variables: dict[str, Type] = field(hash=False)
    """Program variables and their types."""
    constants: frozenset[str]
    """Program variables computed from parameters only, before any sampling (alignments may read them)."""
    output_type: Type
    """The type of each element of `out`."""
    alignment: ResolvedAlignment | None
    tags: tuple[str, ...]
    """Every tag the mechanism, its claim, its alignment and its release block mention, sorted: a tag's code is its
    position."""
    node: n.Mechanism
    release: ResolvedMechanism | None = None
    """The `release` block, as a program of its own (its `body` the block's statements, its `output_type` what it
    publishes, no noise, no alignment), run on the mechanism's `out` and public parameters; None when the mechanism
    publishes `out` itself. Everything the checker proves is about `body` and `out` (the proof reaches the release
    by post-processing, Dwork & Roth Proposition 2.1); what `align run` and `align test` sample is the release's
    output."""
    release_node: n.Release | None = None
    """In the program of a release block: the parser's block (for its spans)."""

    @property
    def published_type(self) -> Type:
        """The type of each element of what the mechanism publishes: the release block's output, else `out`'s."""
        return self.release.output_type if self.release is not None else self.output_type

    def without_release(self) -> ResolvedMechanism:
        """The mechanism whose output is `out` (what alignments, their replays and the checker read)."""
        return dataclasses.replace(self, release=None) if self.release is not None else self

    def param(self, name: str) -> ResolvedParam | None:
        return next((p for p in self.params if p.name == name), None)

    def site(self, name: str) -> NoiseSite | None:
        return next((s for s in self.noise if s.name == name), None)

    def reads_noise(self, e: n.Expr) -> bool:
        """Whether e mentions a noise variable (a scalar one or a member of a family)."""
        noise = {s.name for s in self.noise}
        return any(isinstance(x, (n.NoiseRef, n.MemberRef)) and x.id in noise for x in walk(e))

    def noise_site(self, name: str) -> NoiseSite:
        """The site of `name`, which must be a noise variable (the variable of a draw, a shift or an obligation)."""
        site = self.site(name)
        assert site is not None, f"`{name}` is not a noise variable of {self.name}"
        return site

    @property
    def one_sided(self) -> bool:
        """Whether the neighbouring relation is one-sided (a `q'[i] >= q[i]` or `q'[i] <= q[i]` clause): the claim
        then bounds P[M(D) in E] by P[M(D') in E] only, not the reverse (align/adjacency.py)."""
        return any(a.rule.one_sided for p in self.params for a in p.adjacency)

    @property
    def output_tags(self) -> frozenset[str]:
        return self.output_type.tags if isinstance(self.output_type, TagType) else frozenset()

    @property
    def mapped_sites(self) -> tuple[NoiseSite, ...]:
        """Noise with finitely many values that the alignment maps (`b' = g(b)`, a shift included, but not `b' = b`,
        Lemma 1's shift of 0): aligned at the exact cost of the map (rules.ValueMaps), not at a Lipschitz one."""
        if self.alignment is None:
            return ()

        def moved(shift: ResolvedShift | None) -> bool:
            return shift is not None and not (isinstance(shift.shift, n.Number) and shift.shift.value == 0)

        return tuple(s for s in self.noise if s.distribution.finite and moved(self.alignment.shift_of(s.name)))

    @property
    def mixture_sites(self) -> tuple[NoiseSite, ...]:
        """Laplace sites whose scale is drawn from other noise: R²DP scale mixtures.

        Empty when the mechanism has an alignment block: the user then asks for a Lemma 1 proof, which
        treats such a site like any other (and its cost coefficient depends on noise). Whether the scale
        also reads the data is not decided here: obligation C0 (one density in both runs) refutes it, in
        the mixture rule as in Lemma 1.
        """
        if self.alignment is not None:
            return ()
        noise_names = {s.name for s in self.noise}
        noisy = dependent_variables(self.body, noise_names)
        return tuple(s for s in self.noise if s.distribution.name == "Lap"
                     and any(names_in(a) & noisy for a in s.args))


@dataclass(frozen=True)
class ResolvedSpec:
    path: str
    mechanisms: tuple[ResolvedMechanism, ...]


# ------------------------------------------------------------------------------------------ traversal


def children(e: n.Expr) -> Iterator[n.Expr]:
    """The direct sub-expressions of e."""
    for f in dataclasses.fields(e):
        if f.name == "type":
            continue
        value = getattr(e, f.name)
        if isinstance(value, tuple):
            yield from (v for v in value if is_expr(v))
        elif is_expr(value):
            yield value


_EXPR_CLASSES = tuple(n.Expr.__args__)


def is_expr(value: object) -> bool:
    return isinstance(value, _EXPR_CLASSES)


def walk(e: n.Expr) -> Iterator[n.Expr]:
    """Every sub-expression of e, e first."""
    yield e
    for child in children(e):
        yield from walk(child)


def rewrite(e: n.Expr, f: Callable[[n.Expr], n.Expr | None]) -> n.Expr:
    """e with every sub-expression x for which f(x) is not None replaced by f(x) (outermost first: a
    replacement is not rewritten further); unchanged nodes keep their identity."""
    replaced = f(e)
    if replaced is not None:
        return replaced
    changes: dict[str, Any] = {}  # dataclasses.replace keywords: each value has its own field's type
    for fld in dataclasses.fields(e):
        if fld.name == "type":
            continue
        value = getattr(e, fld.name)
        if isinstance(value, tuple) and value and all(is_expr(v) for v in value):
            items = tuple(rewrite(v, f) for v in value)
            if any(new is not old for new, old in zip(items, value)):
                changes[fld.name] = items
        elif is_expr(value):
            item = rewrite(value, f)
            if item is not value:
                changes[fld.name] = item
    return dataclasses.replace(e, **changes) if changes else e


def read_name(e: n.Expr) -> str | None:
    """The name that e reads when it is an unprimed name (a parser `Name` or a reference), else None."""
    if isinstance(e, n.Name | n.Ref):
        return None if e.primed else e.text
    return e.id if isinstance(e, n.MemberRef) else None


def names_in(e: n.Expr) -> set[str]:
    """The unprimed names e reads (a family member `x[i]` reads x)."""
    return {name for x in walk(e) if (name := read_name(x)) is not None}


def free_names(e: n.Expr) -> set[str]:
    """Unprimed names read by e, without the index variables that its comprehensions bind."""
    if isinstance(e, n.Comprehension):
        inner = set()
        for part in (e.condition, e.body):
            if part is not None:
                inner |= free_names(part)
        outer = set()
        for part in (e.domain, e.excluded):
            if part is not None:
                outer |= free_names(part)
        return outer | (inner - {e.var})
    name = read_name(e)
    names: set[str] = {name} if name is not None else set()
    for child in children(e):
        names |= free_names(child)
    return names


def walk_statements(body: Iterable[n.Stmt]) -> Iterator[n.Stmt]:
    for s in body:
        yield s
        if isinstance(s, n.If):
            yield from walk_statements(s.then)
            yield from walk_statements(s.orelse)
        elif isinstance(s, (n.For, n.While)):
            yield from walk_statements(s.body)


def names_used(mech: ResolvedMechanism) -> set[str]:
    """Every name the mechanism and its alignment use or bind: parameters, variables, constants, noise, loop and
    comprehension variables, the alignment's lets and shift indices, the reserved names, and the builtins'. A name a
    rewrite introduces must be none of them (a fresh `released` that is also a noise variable or a loop index would
    be one symbol for two values in the encoder)."""
    found = {p.name for p in mech.params} | set(mech.variables) | set(mech.constants) | {s.name for s in mech.noise}
    found |= set(RESERVED) | set(BUILTIN_ARITY)
    exprs: list[n.Expr] = list(mech.requires) + [mech.claim]
    for st in walk_statements(mech.body):
        if isinstance(st, n.Assign):
            found.add(st.target)
        elif isinstance(st, n.Sample):
            found.add(st.var)
        elif isinstance(st, n.For):
            found.add(st.var)
            exprs += [st.lo, st.hi]
        exprs += statement_exprs(st)
    if mech.alignment is not None:
        found |= {let.name for let in mech.alignment.lets}
        found |= {s.index_var for s in mech.alignment.shifts if s.index_var is not None}
        exprs += [let.value for let in mech.alignment.lets] + [s.shift for s in mech.alignment.shifts]
        exprs += [i.condition for i in mech.alignment.invariants]
    for e in exprs:
        for x in walk(e):
            if isinstance(x, n.Comprehension):
                found.add(x.var)
            name = read_name(x)
            if name is not None:
                found.add(name)
    return found


def statement_exprs(s: n.Stmt) -> list[n.Expr]:
    """The expressions a statement evaluates itself (not those of the statements nested in it; a loop's bounds
    are not included)."""
    if isinstance(s, n.Assign):
        return [s.value] + ([s.index] if s.index is not None else [])
    if isinstance(s, n.Sample):
        return list(s.args)
    if isinstance(s, (n.If, n.While)):
        return [s.condition]
    if isinstance(s, n.Output):
        return [s.value]
    return []


def dependent_variables(body: tuple[n.Stmt, ...], sources: set[str]) -> set[str]:
    """Names whose value depends on `sources` (data flow only; a fixpoint over assignments)."""
    tainted = set(sources)
    assigns = [s for s in walk_statements(body) if isinstance(s, n.Assign)]
    changed = True
    while changed:
        changed = False
        for a in assigns:
            if a.target not in tainted and (names_in(a.value) & tainted or
                                            (a.index is not None and names_in(a.index) & tainted)):
                tainted.add(a.target)
                changed = True
    return tainted
