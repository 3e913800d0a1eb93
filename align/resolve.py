"""Stage 2 (nodes -> resolved program): bind names, check types, collect noise sites, attach alignments.

`resolve` is a pure function of a parsed `SpecFile`. It reports every problem it finds (not just the
first) and either returns a `ResolvedSpec` or raises `SpecError`. Nothing here proves anything: the
conditions of Lemma 1 that the language decides by itself — bounded loops (C1) and alignments that read
only the discrete part of the output (C5) — are enforced as errors; the rest is left to the checker.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise
from typing import Any

from . import nodes as n
from .diagnostics import Diagnostic, Note, SpecError, diag, did_you_mean
from .distributions import DISTRIBUTIONS, Distribution
from .span import Span
from .types import (
    BOOL,
    INDEX_SET,
    INT,
    RANGE,
    REAL,
    UNKNOWN,
    IndexSetType,
    ListType,
    OutputType,
    RangeType,
    TagType,
    TupleType,
    Type,
    is_discrete,
    is_numeric,
    join,
)

TAG_PATTERN = re.compile(r"[A-Z][A-Z0-9_]+")
"""Unbound names of two or more capitals/digits (TOP, BOT, TOP1) are tags; a one-letter `T` is a name."""

RESERVED = frozenset({"out", "aligned_cost"})

# Builtin functions and how many arguments each takes (comprehension forms are handled separately).
BUILTIN_ARITY: dict[str, tuple[int, int | None]] = {
    "len": (1, 1), "abs": (1, 1), "min": (1, None), "max": (1, None), "argmax": (1, 1), "argmin": (1, 1),
    "sqrt": (1, 1), "exp": (1, 1), "ln": (1, 1), "normal_cdf": (1, 1), "normal_pdf": (1, 1),
    "top_k_with_gaps": (2, 2), "top_k": (2, 2), "indices": (1, 1), "count": (2, 2),
}
COMPREHENSIONS = frozenset({"max", "min", "argmax", "argmin", "sum", "count", "all", "any"})


# ------------------------------------------------------------------------------------ resolved program


@dataclass(frozen=True)
class ResolvedParam:
    name: str
    type: Type
    adjacency: tuple[n.Adjacency, ...]
    """The distance clauses on this parameter; empty for a public parameter (equal on D and D')."""
    span: Span

    @property
    def public(self) -> bool:
        return not self.adjacency


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
    noise: tuple[NoiseSite, ...]
    variables: dict[str, Type] = field(hash=False)
    """Program variables and their types."""
    constants: frozenset[str]
    """Program variables computed from parameters only, before any sampling (alignments may read them)."""
    output_type: Type
    """The type of each element of `out`."""
    alignment: ResolvedAlignment | None
    node: n.Mechanism

    def param(self, name: str) -> ResolvedParam | None:
        return next((p for p in self.params if p.name == name), None)

    def site(self, name: str) -> NoiseSite | None:
        return next((s for s in self.noise if s.name == name), None)

    def noise_site(self, name: str) -> NoiseSite:
        """The site of `name`, which must be a noise variable (the variable of a draw, a shift or an obligation)."""
        site = self.site(name)
        assert site is not None, f"`{name}` is not a noise variable of {self.name}"
        return site

    @property
    def output_tags(self) -> frozenset[str]:
        return self.output_type.tags if isinstance(self.output_type, TagType) else frozenset()

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
        noisy = _dependent_variables(self.node.body, noise_names)
        return tuple(s for s in self.noise if s.distribution.name == "Lap"
                     and any(_names_in(a) & noisy for a in s.args))


@dataclass(frozen=True)
class ResolvedSpec:
    path: str
    mechanisms: tuple[ResolvedMechanism, ...]


# ------------------------------------------------------------------------------------------ traversal


def _children(e: n.Expr) -> Iterator[n.Expr]:
    for f in dataclasses.fields(e):
        value = getattr(e, f.name)
        if isinstance(value, tuple):
            yield from (v for v in value if _is_expr(v))
        elif _is_expr(value):
            yield value


def _is_expr(value: object) -> bool:
    return isinstance(value, (n.Number, n.BoolLit, n.Name, n.Call, n.Range, n.Comprehension, n.Binary, n.Unary,
                              n.Compare, n.BoolOp, n.Member, n.TagTest, n.Conditional, n.Index, n.TupleLit,
                              n.ListLit))


def walk(e: n.Expr) -> Iterator[n.Expr]:
    """Every sub-expression of e, e first."""
    yield e
    for child in _children(e):
        yield from walk(child)


def _names_in(e: n.Expr) -> set[str]:
    return {x.id for x in walk(e) if isinstance(x, n.Name) and not x.primed}


def _free_names(e: n.Expr) -> set[str]:
    """Unprimed names read by e, without the index variables that its comprehensions bind."""
    if isinstance(e, n.Comprehension):
        inner = set()
        for part in (e.condition, e.body):
            if part is not None:
                inner |= _free_names(part)
        outer = set()
        for part in (e.domain, e.excluded):
            if part is not None:
                outer |= _free_names(part)
        return outer | (inner - {e.var})
    if isinstance(e, n.Name):
        return set() if e.primed else {e.id}
    names: set[str] = set()
    for child in _children(e):
        names |= _free_names(child)
    return names


def walk_statements(body: Iterable[n.Stmt]) -> Iterator[n.Stmt]:
    for s in body:
        yield s
        if isinstance(s, n.If):
            yield from walk_statements(s.then)
            yield from walk_statements(s.orelse)
        elif isinstance(s, (n.For, n.While)):
            yield from walk_statements(s.body)


def _dependent_variables(body: tuple[n.Stmt, ...], sources: set[str]) -> set[str]:
    """Names whose value depends on `sources` (data flow only; a fixpoint over assignments)."""
    tainted = set(sources)
    assigns = [s for s in walk_statements(body) if isinstance(s, n.Assign)]
    changed = True
    while changed:
        changed = False
        for a in assigns:
            if a.target not in tainted and (_names_in(a.value) & tainted or
                                            (a.index is not None and _names_in(a.index) & tainted)):
                tainted.add(a.target)
                changed = True
    return tainted


# ------------------------------------------------------------------------------------------ resolution


class _Env:
    """What names mean in one context."""

    def __init__(self, context: str):
        self.context = context
        """`program`, `alignment`, `invariant`, `claim` or `requires`."""
        self.scopes: list[dict[str, Type]] = [{}]

    def lookup(self, name: str) -> Type | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def bind(self, name: str, t: Type) -> None:
        self.scopes[-1][name] = t

    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        self.scopes.pop()


class _OutElem(Type):
    """The type of `out[i]` while it is being checked for Lemma 1 condition 5."""

    def __init__(self, elem: Type):
        self.elem = elem

    def __str__(self) -> str:
        return str(self.elem)


class _MechanismResolver:
    def __init__(self, mech: n.Mechanism, mechanisms: set[str], report: list[Diagnostic]):
        self.mech = mech
        self.mechanisms = mechanisms
        self.report = report
        self.params: dict[str, ResolvedParam] = {}
        self.variables: dict[str, Type] = {}
        self.var_spans: dict[str, Span] = {}
        self.noise: dict[str, NoiseSite] = {}
        self.constants: set[str] = set()
        self.loops: list[n.For] = []
        self.guards: list[n.Expr] = []
        self.output_type: Type = UNKNOWN
        self.first_output: Span | None = None
        self.sampled_yet = False
        self.in_while = 0
        self.in_len = 0
        """Depth of `len(...)` calls: the length of a private list is public."""
        self.public_context = "this clause"
        """Depth of rejected `while` loops, so that a `break` inside one is not reported twice."""
        # Set while checking alignments: the index variable of the family shift being checked, etc.
        self.env = _Env("program")

    # -- reporting ------------------------------------------------------------------------------------
    def error(self, code: str, span: Span | None, *notes: Note, **args: object) -> None:
        self.report.append(diag(code, span, *notes, **args))

    def reader(self) -> str:
        return "the privacy claim" if self.env.context == "claim" else "the alignment"

    def mismatch(self, span: Span, context: str, expected: str, found: Type) -> None:
        if found is not UNKNOWN:
            self.error("type-mismatch", span, context=context, expected=expected, found=str(found))

    # -- parameters and clauses -------------------------------------------------------------------------
    def resolve_header(self) -> None:
        seen: dict[str, Span] = {}
        for p in self.mech.params:
            if p.name in seen:
                self.error("duplicate-definition", p.span, Note(seen[p.name], "first defined here"),
                           what="parameter", name=p.name)
                continue
            if p.name in RESERVED:
                self.error("invalid-assignment", p.span, what="the reserved name", name=p.name)
            seen[p.name] = p.span
        types = {p.name: _declared_type(p.type) for p in self.mech.params}
        by_param: dict[str, list[n.Adjacency]] = {name: [] for name in types}
        kinds_seen: dict[tuple[str, str], Span] = {}
        for adj in self.mech.adjacency:
            if adj.var not in types:
                self.error("undefined-name", adj.var_span, name=adj.var,
                           hint=" (an adjacency clause names a parameter)" + did_you_mean(adj.var, types))
                continue
            if adj.primed_var != adj.var:
                self.error("adjacency-mismatch", adj.span,
                           message=f"compares `{adj.var}` with `{adj.primed_var}'`; write `{adj.var}'`")
                continue
            if adj.index_vars[0] != adj.index_vars[1]:
                self.error("adjacency-mismatch", adj.span,
                           message=f"indexes `{adj.var}` by `{adj.index_vars[0]}` but `{adj.var}'` by "
                                   f"`{adj.index_vars[1]}`; use one index")
                continue
            t = types[adj.var]
            wants_list = adj.kind in ("pointwise", "l1", "monotone")
            if wants_list and not (isinstance(t, ListType) and is_numeric(t.elem)):
                self.mismatch(adj.var_span, f"`{adj.kind}` adjacency", "a numeric list (real[] or int[])", t)
                continue
            if not wants_list and not is_numeric(t):
                self.mismatch(adj.var_span, "scalar adjacency", "real or int", t)
                continue
            if (adj.var, adj.kind) in kinds_seen:
                self.error("duplicate-clause", adj.span, Note(kinds_seen[(adj.var, adj.kind)], "first clause here"),
                           clause=f"{adj.kind} adjacency", name=adj.var)
                continue
            kinds_seen[(adj.var, adj.kind)] = adj.span
            by_param[adj.var].append(adj)
        for p in self.mech.params:
            if p.name not in self.params:
                self.params[p.name] = ResolvedParam(p.name, types[p.name], tuple(by_param[p.name]), p.span)
        # Bounds, requires and the claim read public parameters (and, for the claim, discrete output parts).
        # Header clauses only see parameters: the loop/param state must be complete before they are read.
        for adj in self.mech.adjacency:
            if adj.bound is not None:
                self.env = _Env("requires")
                self.public_context = "an adjacency bound"
                self.expect_numeric(adj.bound, "adjacency bound")
        for r in self.mech.requires:
            self.env = _Env("requires")
            self.public_context = "a `requires` clause"
            self.expect(r, BOOL, "`requires` clause")
        if not self.mech.privacy:
            self.error("missing-privacy-claim", self.mech.name_span, name=self.mech.name)
        for extra in self.mech.privacy[1:]:
            self.error("duplicate-clause", extra.span, clause="privacy", name=self.mech.name)

    def private_constants(self) -> set[str]:
        """Constants whose value depends on a private parameter (other than through its length)."""
        private = {p.name for p in self.params.values() if not p.public}
        tainted: set[str] = set()
        for s in self.mech.body:
            if isinstance(s, n.Assign) and s.target in self.constants and \
                    (_reads_outside_len(s.value, private) or _free_names(s.value) & tainted):
                tainted.add(s.target)
        return tainted

    def resolve_claim(self) -> None:
        if self.mech.privacy:
            self.env = _Env("claim")
            self.public_context = "the privacy claim"
            self.expect_numeric(self.mech.privacy[0], "privacy claim")

    # -- statements ----------------------------------------------------------------------------------------
    def resolve_body(self) -> None:
        self.env = _Env("program")
        self.block(self.mech.body)

    def block(self, body: tuple[n.Stmt, ...]) -> None:
        for s in body:
            self.statement(s)

    def statement(self, s: n.Stmt) -> None:
        if isinstance(s, n.Assign):
            self.assign(s)
        elif isinstance(s, n.Sample):
            self.sample(s)
        elif isinstance(s, n.If):
            self.expect(s.condition, BOOL, "`if` condition")
            self.guards.append(s.condition)
            self.block(s.then)
            self.guards.pop()
            self.guards.append(n.Unary("not", s.condition, s.condition.span))
            self.block(s.orelse)
            self.guards.pop()
        elif isinstance(s, n.For):
            self.expect(s.lo, INT, "loop start")
            self.expect(s.hi, INT, "loop end")
            if self.defined(s.var):
                self.error("shadowed-name", s.var_span, name=s.var, what=self.kind_of(s.var))
            self.loops.append(s)
            self.env.push()
            self.env.bind(s.var, INT)
            self.block(s.body)
            self.env.pop()
            self.loops.pop()
        elif isinstance(s, n.While):
            self.error("unbounded-loop", s.span)
            self.expect(s.condition, BOOL, "`while` condition")
            self.in_while += 1
            self.block(s.body)
            self.in_while -= 1
        elif isinstance(s, n.Break):
            if not self.loops and not self.in_while:
                self.error("break-outside-loop", s.span)
        elif isinstance(s, n.Output):
            t = self.value(s.value)
            if self.first_output is None:
                self.output_type, self.first_output = t, s.span
            else:
                joined = join(self.output_type, t)
                if joined is None:
                    self.error("output-shape", s.value.span, Note(self.first_output, "first output here"),
                               found=str(t), expected=str(self.output_type))
                else:
                    self.output_type = joined

    def defined(self, name: str) -> bool:
        """Whether a new binding of `name` would shadow a name visible in the current context."""
        if name in self.params or name in self.noise or self.env.lookup(name) is not None:
            return True
        if self.env.context == "program":
            return name in self.variables
        return name in self.constants or name in RESERVED

    def kind_of(self, name: str) -> str:
        """What `name` already is, in words, for shadowing messages."""
        bare = name.rstrip("'")
        if name != bare and bare in self.params:
            return "neighbour value of parameter"
        if name in self.params:
            return "parameter"
        if name in self.noise:
            return "noise variable"
        if name in RESERVED:
            return "reserved name"
        if self.env.lookup(name) is not None:
            return "enclosing binding"
        if name in self.constants:
            return "constant"
        return "program variable"

    def read_only_kind(self, name: str) -> str | None:
        if name in self.params:
            return "parameter"
        if name in self.noise:
            return "noise variable"
        if self.env.lookup(name) is not None:
            return "loop variable"
        if name in RESERVED:
            return "the reserved name"
        return None

    def assign(self, s: n.Assign) -> None:
        kind = self.read_only_kind(s.target)
        value_type = self.value(s.value)
        if s.index is not None:
            self.expect(s.index, INT, "list index")
        if kind is not None:
            self.error("invalid-assignment", s.target_span, what=kind, name=s.target)
            return
        new_type = ListType(value_type) if s.index is not None else value_type
        old = self.variables.get(s.target)
        if old is None:
            self.variables[s.target] = new_type
            self.var_spans[s.target] = s.target_span
            if s.index is None and not self.loops and not self.guards and not self.in_while and \
                    all(x in self.params or x in self.constants for x in _free_names(s.value)):
                self.constants.add(s.target)
            return
        self.constants.discard(s.target)
        if s.index is not None and not isinstance(old, ListType):
            self.mismatch(s.target_span, f"indexed assignment to `{s.target}`", "a list", old)
            return
        joined = join(old, new_type)
        if joined is None:
            what = "list element" if s.index is not None else f"assignment to `{s.target}`"
            expected = str(old.elem) if s.index is not None and isinstance(old, ListType) else str(old)
            self.mismatch(s.value.span, what, expected, value_type if s.index is not None else new_type)
        else:
            self.variables[s.target] = joined

    def sample(self, s: n.Sample) -> None:
        self.sampled_yet = True
        dist = DISTRIBUTIONS.get(s.dist)
        for a in s.args:
            self.expect_numeric(a, f"parameter of {s.dist}")
        if dist is None:
            self.error("unknown-distribution", s.dist_span, name=s.dist, hint=did_you_mean(s.dist, DISTRIBUTIONS))
            self.variables.setdefault(s.var, UNKNOWN)  # no follow-on `undefined-name` for the variable
            return
        if not dist.required <= len(s.args) <= len(dist.params):
            self.error("distribution-arity", s.dist_span, name=s.dist, expected=dist.arity_text(),
                       found=_count(len(s.args), "parameter"))
        if s.var in self.noise:
            self.error("duplicate-definition", s.var_span, Note(self.noise[s.var].stmt.var_span, "first sampled here"),
                       what="noise variable", name=s.var)
            return
        kind = self.read_only_kind(s.var)
        if kind is not None or s.var in self.variables:
            first = self.var_spans.get(s.var) or (self.params[s.var].span if s.var in self.params else None)
            notes = (Note(first, "first defined here"),) if first else ()
            self.error("duplicate-definition", s.var_span, *notes, what="name", name=s.var)
            return
        if len(self.loops) > 1:
            self.error("nested-family", s.var_span, name=s.var)
        loop = self.loops[-1] if self.loops else None
        t = INT if dist.integer else REAL
        self.noise[s.var] = NoiseSite(s.var, dist, s.args, t, loop, tuple(self.guards), s)

    # -- expressions -----------------------------------------------------------------------------------------
    def expect(self, e: n.Expr, want: Type, context: str) -> Type:
        t = self.value(e)
        if t is UNKNOWN:
            return t
        if want == REAL and is_numeric(t):
            return t
        if t != want:
            self.mismatch(e.span, context, str(want), t)
        return t

    def expect_numeric(self, e: n.Expr, context: str) -> Type:
        t = self.value(e)
        if not is_numeric(t):
            self.mismatch(e.span, context, "a number", t)
            return UNKNOWN
        return t

    def value(self, e: n.Expr) -> Type:
        """The type of e used as a value: an output element must be wholly discrete here (condition 5)."""
        t = self.expr(e)
        if isinstance(t, _OutElem):
            if not is_discrete(t.elem):
                self.error("continuous-output-read", e.span, who=self.reader(), what=f"`{_text(e)}` (of type {t.elem})")
                return UNKNOWN
            return t.elem
        return t

    def expr(self, e: n.Expr) -> Type:
        method = getattr(self, "_" + type(e).__name__)
        return method(e)

    def _Number(self, e: n.Number) -> Type:
        return INT if e.is_integer else REAL

    def _BoolLit(self, e: n.BoolLit) -> Type:
        return BOOL

    def _Name(self, e: n.Name) -> Type:
        ctx = self.env.context
        name = e.id
        if e.primed:
            return self.primed_name(e)
        local = self.env.lookup(name)
        if local is not None:
            return local
        if name in self.params:
            param = self.params[name]
            if ctx in ("requires", "claim") and not param.public and not self.in_len:
                self.error("private-in-public", e.span, name=name, context=self.public_context)
                return UNKNOWN
            return param.type
        if name == "out" and ctx in ("alignment", "invariant", "claim"):
            return OutputType(self.output_type)
        if name == "aligned_cost" and ctx == "invariant":
            return REAL
        if ctx != "requires" and name in self.noise:
            site = self.noise[name]
            if ctx == "program":
                if site.family and site.loop not in self.loops:
                    self.error("family-index", e.span,
                               message=f"noise family `{name}` is read as `{name}` only inside its loop")
                    return UNKNOWN
                return site.type
            if site.family:
                self.error("family-index", e.span,
                           message=f"`{name}` is a noise family; read one member as `{name}[e]`")
                return UNKNOWN
            if ctx == "claim":
                self.error("claim-reads-state", e.span, name=name)
                return UNKNOWN
            return site.type
        if name in self.variables and ctx != "requires":
            if ctx == "claim" and name in self.constants and name in self.private_constants():
                self.error("private-in-public", e.span, name=name, context=self.public_context)
                return UNKNOWN
            if ctx in ("program", "invariant") or name in self.constants:
                return self.variables[name]
            self.error("claim-reads-state" if ctx == "claim" else "alignment-reads-state", e.span, name=name)
            return UNKNOWN
        if TAG_PATTERN.fullmatch(name):
            return TagType(((name, ()),))
        candidates = list(self.params) + list(self.env.scopes[-1])
        if ctx == "program":
            candidates += list(self.variables) + list(self.noise)
        hint = did_you_mean(name, candidates)
        if name == "out" and ctx in ("program", "requires"):
            hint = " (a mechanism cannot read its own output; `out` exists in alignments and claims)"
        self.error("undefined-name", e.span, name=name, hint=hint)
        return UNKNOWN

    def primed_name(self, e: n.Name) -> Type:
        ctx = self.env.context
        local = self.env.lookup(e.text)
        if local is not None:
            return local
        if ctx in ("alignment", "invariant"):
            param = self.params.get(e.id)
            if param is not None:
                if param.public:
                    self.error("public-parameter-primed", e.span, name=e.id)
                    return UNKNOWN
                return param.type
            if ctx == "invariant" and e.id in self.variables:
                return self.variables[e.id]
        elif e.id in self.params:
            self.error("undefined-name", e.span, name=e.text,
                       hint=" (neighbour values exist only inside an alignment block)")
            return UNKNOWN
        self.error("undefined-name", e.span, name=e.text, hint="")
        return UNKNOWN

    def _Call(self, e: n.Call) -> Type:
        name = e.func
        if name in self.mechanisms:
            code = "recursive-call" if name == self.mech.name else "mechanism-call"
            self.error(code, e.func_span, name=name)
            return UNKNOWN
        if name in BUILTIN_ARITY:
            lo, hi = BUILTIN_ARITY[name]
            if not (lo <= len(e.args) and (hi is None or len(e.args) <= hi)):
                expected = _count(lo, "argument") if lo == hi else f"at least {_count(lo, 'argument')}"
                self.error("call-arity", e.func_span, name=name, expected=expected,
                           found=_count(len(e.args), "argument"))
                for a in e.args:
                    self.value(a)
                return UNKNOWN
            return getattr(self, "_builtin_" + name)(e)
        if TAG_PATTERN.fullmatch(name) and not self.defined(name):
            payload = tuple(self.value(a) for a in e.args)
            return TagType(((name, payload),))
        hint = did_you_mean(name, list(BUILTIN_ARITY) + list(COMPREHENSIONS))
        if name in DISTRIBUTIONS:
            hint = f"; to draw noise, write `x ~ {name}(...)` as a statement"
        self.error("unknown-function", e.func_span, name=name, hint=hint)
        for a in e.args:
            self.value(a)
        return UNKNOWN

    def _list_arg(self, e: n.Call, position: int = 0) -> Type:
        t = self.value(e.args[position])
        if isinstance(t, ListType):
            return t.elem
        self.mismatch(e.args[position].span, f"argument of `{e.func}`", "a list", t)
        return UNKNOWN

    def _builtin_len(self, e: n.Call) -> Type:
        self.in_len += 1
        t = self.expr(e.args[0])
        self.in_len -= 1
        if isinstance(t, _OutElem):
            t = self.value(e.args[0])
        if not isinstance(t, (ListType, OutputType)) and t is not UNKNOWN:
            self.mismatch(e.args[0].span, "argument of `len`", "a list", t)
        return INT

    def _builtin_abs(self, e: n.Call) -> Type:
        return self.expect_numeric(e.args[0], "argument of `abs`")

    def _min_max(self, e: n.Call) -> Type:
        if len(e.args) == 1:
            elem = self._list_arg(e)
            if not is_numeric(elem):
                self.mismatch(e.args[0].span, f"argument of `{e.func}`", "a numeric list", ListType(elem))
                return UNKNOWN
            return elem
        result: Type = INT
        for a in e.args:
            result = join(result, self.expect_numeric(a, f"argument of `{e.func}`")) or UNKNOWN
        return result

    _builtin_min = _min_max
    _builtin_max = _min_max

    def _arg_extreme(self, e: n.Call) -> Type:
        elem = self._list_arg(e)
        if not is_numeric(elem):
            self.mismatch(e.args[0].span, f"argument of `{e.func}`", "a numeric list", ListType(elem))
        return INT

    _builtin_argmax = _arg_extreme
    _builtin_argmin = _arg_extreme

    def _real_function(self, e: n.Call) -> Type:
        self.expect_numeric(e.args[0], f"argument of `{e.func}`")
        return REAL

    _builtin_sqrt = _builtin_exp = _builtin_ln = _builtin_normal_cdf = _builtin_normal_pdf = _real_function

    def _builtin_top_k_with_gaps(self, e: n.Call) -> Type:
        self._arg_extreme(e)
        self.expect(e.args[1], INT, f"second argument of `{e.func}`")
        return ListType(TupleType((INT, REAL)))

    def _builtin_top_k(self, e: n.Call) -> Type:
        self._arg_extreme(e)
        self.expect(e.args[1], INT, f"second argument of `{e.func}`")
        return ListType(INT)

    def _builtin_indices(self, e: n.Call) -> Type:
        t = self.expr(e.args[0])
        elem = t.elem if isinstance(t, (ListType, OutputType)) else None
        if not (isinstance(elem, TupleType) and elem.items and elem.items[0] == INT):
            self.mismatch(e.args[0].span, "argument of `indices`", "a sequence of (index, ...) tuples",
                          t if not isinstance(t, _OutElem) else t.elem)
        return INDEX_SET

    def _builtin_count(self, e: n.Call) -> Type:
        t = self.expr(e.args[0])
        tag = e.args[1]
        if not isinstance(t, (ListType, OutputType)):
            self.mismatch(e.args[0].span, "first argument of `count`", "a sequence of tagged values", t)
            return INT
        if not (isinstance(tag, n.Name) and TAG_PATTERN.fullmatch(tag.id) and not tag.primed):
            self.mismatch(tag.span, "second argument of `count`", "a tag", self.value(tag))
            return INT
        self.check_tag(t.elem, tag.id, tag.span)
        return INT

    def check_tag(self, t: Type, tag: str, span: Span) -> None:
        if isinstance(t, TagType):
            if tag not in t.tags:
                self.error("unknown-tag", span, name=tag, mechanism=self.mech.name)
        elif t is not UNKNOWN:
            self.mismatch(span, f"tag test `is {tag}`", "a tagged value", t)

    def _Comprehension(self, e: n.Comprehension) -> Type:
        if e.func not in COMPREHENSIONS:
            self.error("unknown-function", e.func_span, name=e.func,
                       hint=" (comprehensions are " + ", ".join(sorted(COMPREHENSIONS)) + ")")
            return UNKNOWN
        if e.domain is not None:
            self.domain(e.domain)
        elif self.env.context not in ("alignment", "invariant"):
            # Only alignment expressions get their universe inferred (`explicit_domains`).
            self.error("comprehension-domain", e.var_span, var=e.var)
        if e.excluded is not None:
            self.domain(e.excluded)
        if self.defined(e.var):
            self.error("shadowed-name", e.var_span, name=e.var, what=self.kind_of(e.var))
        self.env.push()
        self.env.bind(e.var, INT)
        if e.condition is not None:
            self.expect(e.condition, BOOL, "comprehension filter")
        if e.func in ("all", "any", "count"):
            self.expect(e.body, BOOL, f"body of `{e.func}`")
            result: Type = INT if e.func == "count" else BOOL
        else:
            body = self.expect_numeric(e.body, f"body of `{e.func}`")
            result = INT if e.func in ("argmax", "argmin") else body
        self.env.pop()
        return result

    def domain(self, d: n.Expr) -> None:
        t = self.value(d)
        if not isinstance(t, (RangeType, IndexSetType)) and not (isinstance(t, ListType) and t.elem == INT) \
                and t is not UNKNOWN:
            self.mismatch(d.span, "comprehension domain", "a range `a .. b` or an index set", t)

    def _Range(self, e: n.Range) -> Type:
        self.expect(e.lo, INT, "range start")
        self.expect(e.hi, INT, "range end")
        return RANGE

    def _Binary(self, e: n.Binary) -> Type:
        left = self.expect_numeric(e.left, f"left operand of `{e.op}`")
        right = self.expect_numeric(e.right, f"right operand of `{e.op}`")
        if e.op in ("/", "^"):
            return REAL
        if left is UNKNOWN or right is UNKNOWN:
            return REAL if UNKNOWN not in (left, right) else UNKNOWN
        return join(left, right) or UNKNOWN

    def _Unary(self, e: n.Unary) -> Type:
        if e.op == "not":
            self.expect(e.operand, BOOL, "operand of `not`")
            return BOOL
        return self.expect_numeric(e.operand, "operand of `-`")

    def _Compare(self, e: n.Compare) -> Type:
        types = [self.value(x) for x in e.operands]
        for op, (a, b), (x, y) in zip(e.ops, pairwise(types), pairwise(e.operands)):
            if op in ("==", "!="):
                if join(a, b) is None:
                    self.mismatch(y.span, f"comparison with `{op}`", str(a), b)
            else:
                if not is_numeric(a):
                    self.mismatch(x.span, f"comparison `{op}`", "a number", a)
                if not is_numeric(b):
                    self.mismatch(y.span, f"comparison `{op}`", "a number", b)
        return BOOL

    def _BoolOp(self, e: n.BoolOp) -> Type:
        self.expect(e.left, BOOL, f"operand of `{e.op}`")
        self.expect(e.right, BOOL, f"operand of `{e.op}`")
        return BOOL

    def _Member(self, e: n.Member) -> Type:
        self.expect(e.element, INT, "element of a membership test")
        self.domain(e.collection)
        return BOOL

    def _TagTest(self, e: n.TagTest) -> Type:
        t = self.expr(e.value)
        if isinstance(t, _OutElem):
            t = t.elem
        if not TAG_PATTERN.fullmatch(e.tag):
            self.error("unknown-tag", e.tag_span, name=e.tag, mechanism=self.mech.name)
        else:
            self.check_tag(t, e.tag, e.tag_span)
        return BOOL

    def _Conditional(self, e: n.Conditional) -> Type:
        self.expect(e.condition, BOOL, "condition of `?:`")
        a, b = self.value(e.then), self.value(e.orelse)
        joined = join(a, b)
        if joined is None:
            self.mismatch(e.orelse.span, "second branch of `?:`", str(a), b)
            return UNKNOWN
        return joined

    def _Index(self, e: n.Index) -> Type:
        base = e.base
        if isinstance(base, n.Name) and not base.primed and self.env.context in ("alignment", "invariant") \
                and base.id in self.noise and self.env.lookup(base.id) is None:
            site = self.noise[base.id]
            if not site.family:
                self.error("family-index", e.span,
                           message=f"`{base.id}` is a scalar noise variable; it has no index")
                return UNKNOWN
            self.expect(e.index, INT, "noise index")
            return site.type
        t = self.expr(base)
        if isinstance(t, OutputType):
            self.expect(e.index, INT, "output index")
            return _OutElem(t.elem)
        if isinstance(t, _OutElem):
            inner = t.elem
            if isinstance(inner, TupleType):
                component = self.tuple_component(e, inner)
                if component is UNKNOWN:
                    return UNKNOWN
                if not is_discrete(component):
                    self.error("continuous-output-read", e.span, who=self.reader(),
                               what=f"`{_text(e)}` (of type {component})")
                    return UNKNOWN
                return component
            return self._not_indexable(e, inner)
        if isinstance(t, ListType):
            self.expect(e.index, INT, "list index")
            return t.elem
        if isinstance(t, TupleType):
            return self.tuple_component(e, t)
        return self._not_indexable(e, t)

    def _not_indexable(self, e: n.Index, t: Type) -> Type:
        self.mismatch(e.base.span, "indexing", "a list or tuple", t)
        return UNKNOWN

    def tuple_component(self, e: n.Index, t: TupleType) -> Type:
        idx = e.index
        if not (isinstance(idx, n.Number) and idx.is_integer and 0 <= idx.value < len(t.items)):
            self.error("tuple-index", idx.span, last=len(t.items) - 1)
            return UNKNOWN
        return t.items[int(idx.value)]

    def _TupleLit(self, e: n.TupleLit) -> Type:
        return TupleType(tuple(self.value(i) for i in e.items))

    def _ListLit(self, e: n.ListLit) -> Type:
        result: Type = UNKNOWN
        for item in e.items:
            t = self.value(item)
            joined = join(result, t)
            if joined is None:
                self.mismatch(item.span, "list element", str(result), t)
            else:
                result = joined
        return ListType(result)

    # -- alignment -------------------------------------------------------------------------------------------
    def resolve_alignment(self, a: n.Alignment) -> ResolvedAlignment:
        self.env = _Env("alignment")
        lets: list[n.Let] = []
        shifts: list[ResolvedShift] = []
        invariants: list[n.Invariant] = []
        let_types: dict[str, Type] = {}
        let_spans: dict[str, Span] = {}
        shift_spans: dict[str, Span] = {}
        for item in a.items:
            if isinstance(item, n.Let):
                self.env = _Env("alignment")
                for earlier in lets:
                    self.env.bind(earlier.name, let_types[earlier.name])
                t = self.value(item.value)
                bare = item.name.rstrip("'")
                if item.name in let_spans:
                    self.error("duplicate-definition", item.name_span, Note(let_spans[item.name], "first defined here"),
                               what="let binding", name=item.name)
                elif bare in self.params or bare in self.noise or bare in RESERVED or item.name in self.variables:
                    self.error("shadowed-name", item.name_span, name=item.name,
                               what=self.kind_of(bare if bare != item.name and bare in self.params else item.name))
                let_spans[item.name] = item.name_span
                lets.append(dataclasses.replace(item, value=self.explicit_domains(item.value)))
                let_types[item.name] = t
            elif isinstance(item, n.Shift):
                self.env = _Env("alignment")
                for earlier in lets:
                    self.env.bind(earlier.name, let_types[earlier.name])
                shift = self.resolve_shift(item)
                if shift is None:
                    continue
                if shift.var in shift_spans:
                    self.error("duplicate-shift", item.lhs_span, Note(shift_spans[shift.var], "first shift here"),
                               name=shift.var)
                    continue
                shift_spans[shift.var] = item.lhs_span
                shifts.append(shift)
            else:
                self.env = _Env("invariant")
                for earlier in lets:
                    self.env.bind(earlier.name, let_types[earlier.name])
                self.expect(item.condition, BOOL, "invariant")
                invariants.append(dataclasses.replace(item, condition=self.explicit_domains(item.condition)))
        return ResolvedAlignment(a.name, tuple(lets), tuple(shifts), tuple(invariants), a)

    def resolve_shift(self, item: n.Shift) -> ResolvedShift | None:
        site = self.noise.get(item.var)
        if site is None:
            self.error("unknown-noise", item.lhs_span, name=item.var, mechanism=self.mech.name,
                       hint=did_you_mean(item.var, self.noise))
            return None
        if site.family and item.index_var is None:
            self.error("family-index", item.lhs_span,
                       message=f"`{item.var}` is a noise family; shift it as `{item.var}[i]' = {item.var}[i] + ...`")
            return None
        if not site.family and item.index_var is not None:
            self.error("family-index", item.lhs_span,
                       message=f"`{item.var}` is a scalar noise variable; shift it as `{item.var}' = {item.var} + ...`")
            return None
        if item.index_var is not None:
            if self.defined(item.index_var):
                self.error("shadowed-name", item.lhs_span, name=item.index_var, what=self.kind_of(item.index_var))
            self.env.push()
            self.env.bind(item.index_var, INT)
        psi = _split_shift(item)
        if psi is None:
            self.error("not-a-shift", item.rhs.span,
                       name=item.var + (f"[{item.index_var}]" if item.index_var else ""))
            return None
        self.expect_numeric(psi, "shift")
        if item.index_var is not None:
            self.env.pop()
        return ResolvedShift(item.var, item.index_var, self.explicit_domains(psi), item)

    def explicit_domains(self, e: n.Expr) -> n.Expr:
        """Rewrite `max(l not in I: ...)` so that its universe is explicit (`0 .. len(x)` or a family's loop range)."""
        if isinstance(e, n.Comprehension) and e.domain is None:
            universe = self.infer_universe(e)
            if universe is not None:
                e = dataclasses.replace(e, domain=universe)
        if not _is_expr(e):
            return e
        changes: dict[str, Any] = {}  # dataclasses.replace keywords: each value has its own field's type
        for f in dataclasses.fields(e):
            value = getattr(e, f.name)
            if isinstance(value, tuple) and value and all(_is_expr(v) for v in value):
                changes[f.name] = tuple(self.explicit_domains(v) for v in value)
            elif _is_expr(value):
                changes[f.name] = self.explicit_domains(value)
        return dataclasses.replace(e, **changes) if changes else e

    def infer_universe(self, e: n.Comprehension) -> n.Expr | None:
        for sub in walk(e.body):
            if isinstance(sub, n.Index) and isinstance(sub.index, n.Name) and sub.index.id == e.var \
                    and isinstance(sub.base, n.Name):
                base = sub.base
                site = self.noise.get(base.id)
                if site is not None and site.loop is not None and not base.primed:
                    return n.Range(site.loop.lo, site.loop.hi, e.span)
                param = self.params.get(base.id)
                if param is not None and isinstance(param.type, ListType):
                    zero = n.Number(Fraction(0), True, e.span)
                    return n.Range(zero, n.Call("len", (n.Name(base.id, False, base.span),), e.span, base.span), e.span)
        self.error("comprehension-domain", e.var_span, var=e.var)
        return None


def _split_shift(item: n.Shift) -> n.Expr | None:
    """ψ from `x' = x + ψ`: the right-hand side must add something to x (or x[i]).

    `x' = x + e`, `x' = e + x`, `x' = x - e` and `x' = x` are shifts (ψ = e, e, -e, 0), and so is any sum in
    which x occurs as a term with sign + (`x' = a + x - b` has ψ = a - b). ψ may mention x again
    (`x' = x + (b - x)`): that is a legal shift whose self-dependence the acyclicity obligation (C4b) rejects.
    `x' = 2 * x` and `x' = 1 - x` are not shifts at all.
    """

    def is_self(e: n.Expr) -> bool:
        if item.index_var is None:
            return isinstance(e, n.Name) and e.id == item.var and not e.primed
        return (isinstance(e, n.Index) and isinstance(e.base, n.Name) and e.base.id == item.var
                and not e.base.primed and isinstance(e.index, n.Name) and e.index.id == item.index_var)

    rhs = item.rhs
    if is_self(rhs):
        return n.Number(Fraction(0), True, rhs.span)
    if isinstance(rhs, n.Binary) and rhs.op in ("+", "-") and is_self(rhs.left):
        return rhs.right if rhs.op == "+" else n.Unary("-", rhs.right, rhs.right.span)
    if isinstance(rhs, n.Binary) and rhs.op == "+" and is_self(rhs.right):
        return rhs.left

    terms: list[tuple[str, n.Expr]] = []

    def flatten(e: n.Expr, sign: str) -> None:
        if isinstance(e, n.Binary) and e.op in ("+", "-"):
            flatten(e.left, sign)
            flatten(e.right, sign if e.op == "+" else ("-" if sign == "+" else "+"))
        else:
            terms.append((sign, e))

    flatten(rhs, "+")
    self_at = next((k for k, (sign, term) in enumerate(terms) if sign == "+" and is_self(term)), None)
    if self_at is None:
        return None
    rest = terms[:self_at] + terms[self_at + 1:]
    sign, first = rest[0]
    psi: n.Expr = first if sign == "+" else n.Unary("-", first, first.span)
    for sign, term in rest[1:]:
        psi = n.Binary(sign, psi, term, psi.span.to(term.span))
    return psi


def _reads_outside_len(e: n.Expr, names: set[str]) -> bool:
    """Whether e reads one of `names` other than as the argument of `len`."""
    if isinstance(e, n.Call) and e.func == "len":
        return False
    if isinstance(e, n.Name):
        return not e.primed and e.id in names
    return any(_reads_outside_len(child, names) for child in _children(e))


def _declared_type(t: n.TypeExpr) -> Type:
    base = {"real": REAL, "int": INT, "bool": BOOL}[t.base]
    return ListType(base) if t.is_list else base


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}{'s' if k != 1 else ''}"


def _text(e: n.Expr) -> str:
    from .unparse import unparse

    return unparse(e)


# ------------------------------------------------------------------------------------------ entry point


def resolve(spec: n.SpecFile) -> ResolvedSpec:
    """Resolve every mechanism of a file and bind each alignment block to its mechanism."""
    report: list[Diagnostic] = []
    names: dict[str, Span] = {}
    for m in spec.mechanisms:
        if m.name in names:
            report.append(diag("duplicate-definition", m.name_span, Note(names[m.name], "first defined here"),
                               what="mechanism", name=m.name))
        else:
            names[m.name] = m.name_span
    alignments: dict[str, n.Alignment] = {}
    for a in spec.alignments:
        if a.name not in names:
            report.append(diag("unknown-mechanism", a.name_span, name=a.name, hint=did_you_mean(a.name, names)))
        elif a.name in alignments:
            report.append(diag("duplicate-definition", a.name_span,
                               Note(alignments[a.name].name_span, "first defined here"),
                               what="alignment for", name=a.name))
        else:
            alignments[a.name] = a
    resolved = []
    seen: set[str] = set()
    for m in spec.mechanisms:
        if m.name in seen:
            continue
        seen.add(m.name)
        r = _MechanismResolver(m, set(names), report)
        r.resolve_header()
        r.resolve_body()
        r.resolve_claim()
        alignment = r.resolve_alignment(alignments[m.name]) if m.name in alignments else None
        claim = m.privacy[0] if m.privacy else n.Number(Fraction(0), True, m.name_span)
        resolved.append(ResolvedMechanism(
            name=m.name, params=tuple(r.params.values()), requires=m.requires, claim=claim,
            noise=tuple(r.noise.values()), variables=dict(r.variables), constants=frozenset(r.constants),
            output_type=r.output_type, alignment=alignment, node=m))
    errors = [d for d in report if d.severity.value == "error"]
    if errors:
        raise SpecError(sorted(report, key=_order))
    return ResolvedSpec(spec.source.path, tuple(resolved))


def _order(d: Diagnostic) -> tuple:
    s = d.span
    return (s.line, s.column) if s is not None else (0, 0)
