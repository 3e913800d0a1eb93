"""Names and types: the checks of resolution, one mechanism at a time.

`MechanismChecker` walks the parser's tree of one mechanism and its alignment, reports every problem it
finds as a located diagnostic, and records what it learns for `bind.py`: the type of each expression and
what each name refers to. The conditions of Lemma 1 that the language decides by itself - bounded loops (C1)
and alignments that read only the discrete part of the output (C5) - are enforced here as errors.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from itertools import pairwise
from typing import Any

from .. import nodes as n
from ..diagnostics import Diagnostic, Note, diag, did_you_mean
from ..distributions import DISTRIBUTIONS
from ..limits import MAX_TEST_LENGTH
from ..operators import OPERATORS
from ..span import Span
from ..types import (
    BOOL,
    INT,
    RANGE,
    REAL,
    UNKNOWN,
    IndexSetType,
    ListType,
    OutElem,
    OutputType,
    RangeType,
    TagType,
    TupleType,
    Type,
    is_discrete,
    is_numeric,
    join,
)
from ..unparse import clause_text, unparse
from ..visitor import StmtVisitor, SyntaxVisitor
from .builtin_types import TYPING
from .constants import literal_value
from .desugar import explicit_domains, infer_universe
from .program import NoiseSite, ResolvedParam, children, free_names
from .scope import BUILTIN_ARITY, COMPREHENSIONS, RESERVED, TAG_PATTERN

# ------------------------------------------------------------------------------------------ resolution


class Env:
    """What names mean in one context."""

    def __init__(self, context: str):
        self.context = context
        """`program`, `release`, `alignment`, `invariant`, `claim` or `requires`."""
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


class MechanismChecker(SyntaxVisitor[Type, None], StmtVisitor[None, None]):
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
        self.comparing = 0
        """How many comparisons the expression being checked is inside (their operands may read continuous outputs)."""
        self.in_while = 0
        """Depth of rejected `while` loops, so that a `break` inside one is not reported twice."""
        self.in_len = 0
        """Depth of `len(...)` calls: the length of a private list is public."""
        self.public_context = "this clause"
        """What a private read is reported in (`requires`, an adjacency bound, the claim)."""
        # Set while checking alignments: the index variable of the family shift being checked, etc.
        self.env = Env("program")
        self.let_names: set[str] = set()
        # What `bind.py` needs, keyed by the id() of the parser's nodes (`seen` keeps those nodes alive):
        self.types: dict[int, Type] = {}
        """The type of each expression checked."""
        self.refs: dict[int, n.Expr] = {}
        """What each `Name` refers to: its reference node, with its type."""
        self.members: set[int] = set()
        """`Index` nodes that read a member of a noise family."""
        self.tags: set[str] = set()
        """Every tag mentioned."""
        self.seen: list[n.Expr] = []
        self.body: MechanismChecker | None = None
        """In the checker of a release block, the checker of the mechanism's body (`release_checker`)."""

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
            wants_list = adj.rule.on_list
            if wants_list and not (isinstance(t, ListType) and is_numeric(t.elem)):
                self.mismatch(adj.var_span, f"`{adj.kind.value}` adjacency", "a numeric list (real[] or int[])", t)
                continue
            if not wants_list and not is_numeric(t):
                self.mismatch(adj.var_span, "scalar adjacency", "real or int", t)
                continue
            if (adj.var, adj.kind) in kinds_seen:
                self.error("duplicate-clause", adj.span, Note(kinds_seen[(adj.var, adj.kind)], "first clause here"),
                           clause=f"{adj.kind.value} adjacency", name=adj.var)
                continue
            earlier = by_param[adj.var]
            if earlier and (adj.rule.changes_length or earlier[0].rule.changes_length):
                records, other = (adj, earlier[0]) if adj.rule.changes_length else (earlier[0], adj)
                self.error("adjacency-conflict", adj.span, Note(earlier[0].span, "first clause here"),
                           clause=clause_text(records), name=adj.var, other=clause_text(other))
                continue
            kinds_seen[(adj.var, adj.kind)] = adj.span
            by_param[adj.var].append(adj)
        for p in self.mech.params:
            if p.name not in self.params:
                self.params[p.name] = ResolvedParam(p.name, types[p.name], tuple(by_param[p.name]), p.span,
                                                    p.domain)
        # Bounds, requires and the claim read public parameters (and, for the claim, discrete output parts).
        # Header clauses only see parameters: the loop/param state must be complete before they are read.
        for adj in self.mech.adjacency:
            if adj.bound is not None:
                self.env = Env("requires")
                self.public_context = "an adjacency bound"
                self.expect_numeric(adj.bound, "adjacency bound")
        for r in self.mech.requires:
            self.env = Env("requires")
            self.public_context = "a `requires` clause"
            self.expect(r, BOOL, "`requires` clause")
        for p in self.mech.params:
            if p.domain is None:
                continue
            declared = types[p.name]
            if (declared.elem if isinstance(declared, ListType) else declared) != INT:
                self.mismatch(p.type.span, f"the domain of `{p.name}`", "int or int[] (a domain is a range of "
                              "integers; a real is bounded in the body, with `clamp`)", declared)
                continue
            for end in (p.domain.lo, p.domain.hi):
                self.env = Env("requires")
                self.public_context = f"the domain of `{p.name}`"
                self.expect(end, INT, f"the domain of `{p.name}`")
        if not self.mech.privacy:
            self.error("missing-privacy-claim", self.mech.name_span, name=self.mech.name)
        for extra in self.mech.privacy[1:]:
            self.error("duplicate-clause", extra.span, clause="privacy", name=self.mech.name)
        self.resolve_examples(types)

    def resolve_examples(self, types: dict[str, Type]) -> None:
        """The `example` clause: each public parameter at most once with a constant of its type, each private
        list's length at most once as a constant int >= 0 (`len(q) = 5`)."""
        seen: dict[tuple[str, bool], Span] = {}
        for ex in self.mech.examples:
            what = ex.label
            if ex.length and ex.func != "len":
                self.error("example-item", ex.span, item=what,
                           reason="an example gives a public parameter's value (`eps = 1`) or a private list's "
                                  "length (`len(q) = 5`)")
                continue
            if ex.name not in types:
                self.error("undefined-name", ex.name_span, name=ex.name,
                           hint=" (an example names a parameter)" + did_you_mean(ex.name, types))
                continue
            param = self.params[ex.name]
            if (ex.name, ex.length) in seen:
                self.error("duplicate-clause", ex.span, Note(seen[ex.name, ex.length], "first example here"),
                           clause=f"example of {what}", name=self.mech.name)
                continue
            seen[ex.name, ex.length] = ex.span
            if ex.length and (param.public or not isinstance(param.type, ListType)):
                self.error("example-item", ex.span, item=what,
                           reason=f"only a private list's length is an example; give `{ex.name}` its value "
                                  f"(`{ex.name} = ...`)" if param.public else f"`{ex.name}` is not a list")
                continue
            if not ex.length and not param.public:
                self.error("example-item", ex.span, item=what,
                           reason=f"`{ex.name}` is private: `align test` generates its values and `align run` "
                                  "takes them from --arg" + (f"; give its length, `len({ex.name}) = 5`"
                                                             if isinstance(param.type, ListType) else ""))
                continue
            reads = sorted(free_names(ex.value))
            if reads:
                self.error("example-item", ex.value.span, item=what,
                           reason=f"an example is a constant, and this one reads `{reads[0]}`")
                continue
            self.env = Env("requires")
            self.public_context = "an example"
            reported = len(self.report)
            if ex.length:
                self.expect(ex.value, INT, f"example of {what}")
            elif isinstance(param.type, ListType):
                if not isinstance(ex.value, n.ListLit):
                    self.mismatch(ex.value.span, f"example of {what}", str(param.type), self.value(ex.value))
                else:
                    for item in ex.value.items:
                        self.expect(item, param.type.elem, f"example of {what}")
            else:
                self.expect(ex.value, param.type, f"example of {what}")
            if len(self.report) == reported:  # well typed: its value, which the commands will use, must exist
                self.example_value(ex, what)

    def example_value(self, ex: n.Example, what: str) -> None:
        """An example's value: one that cannot be computed (`1/0`, `ln(0)`), and a length outside 0 ..
        MAX_TEST_LENGTH, is `example-item` here rather than an error of `align run`, `test` or `verify`."""
        try:
            value = literal_value(ex.value)
        except ValueError as error:
            self.error("example-item", ex.value.span, item=what, reason=str(error))
            return
        if ex.length and value < 0:
            self.error("example-item", ex.value.span, item=what, reason="a length is at least 0")
        elif ex.length and value > MAX_TEST_LENGTH:
            self.error("example-item", ex.value.span, item=what,
                       reason=f"a length is at most {MAX_TEST_LENGTH} (the longest list `align test` generates)")

    def private_constants(self) -> set[str]:
        """Constants whose value depends on a private parameter (other than through its length)."""
        private = {p.name for p in self.params.values() if not p.public}
        hidden = {p.name for p in self.params.values() if not p.length_public}
        tainted: set[str] = set()
        for s in self.mech.body:
            if isinstance(s, n.Assign) and s.target in self.constants and \
                    (_reads_outside_len(s.value, private, hidden) or free_names(s.value) & tainted):
                tainted.add(s.target)
        return tainted

    def resolve_claim(self) -> None:
        if self.mech.privacy:
            self.env = Env("claim")
            self.public_context = "the privacy claim"
            self.expect_numeric(self.mech.privacy[0], "privacy claim")

    def release_checker(self) -> MechanismChecker:
        """A checker for the mechanism's release block: the same parameters, report and tags as the body's, its own
        variables and no noise. Call after `resolve_body` (the block reads the body's output type)."""
        rc = MechanismChecker(self.mech, self.mechanisms, self.report)
        rc.params, rc.tags, rc.body = self.params, self.tags, self
        return rc

    def resolve_release(self, r: n.Release) -> None:
        self.env = Env("release")
        self.public_context = "the release block"
        self.block(r.body)

    # -- statements ----------------------------------------------------------------------------------------
    def resolve_body(self) -> None:
        self.env = Env("program")
        self.block(self.mech.body)

    def block(self, body: tuple[n.Stmt, ...]) -> None:
        for s in body:
            self.statement(s)

    def statement(self, s: n.Stmt) -> None:
        s.accept(self, None)

    def visit_if(self, s: n.If, ctx: None = None) -> None:
        self.expect(s.condition, BOOL, "`if` condition")
        self.guards.append(s.condition)
        self.block(s.then)
        self.guards.pop()
        negated = n.Unary("not", s.condition, s.condition.span)
        self.note(negated, BOOL)
        self.guards.append(negated)
        self.block(s.orelse)
        self.guards.pop()

    def visit_for(self, s: n.For, ctx: None = None) -> None:
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

    def visit_while(self, s: n.While, ctx: None = None) -> None:
        self.error("unbounded-loop", s.span)
        self.expect(s.condition, BOOL, "`while` condition")
        self.in_while += 1
        self.block(s.body)
        self.in_while -= 1

    def visit_break(self, s: n.Break, ctx: None = None) -> None:
        if not self.loops and not self.in_while:
            self.error("break-outside-loop", s.span)

    def visit_output(self, s: n.Output, ctx: None = None) -> None:
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
        if name in self.params or name in self.noise or self.env.lookup(name) is not None or name in RESERVED:
            return True
        if self.env.context in ("program", "release"):
            return name in self.variables
        return name in self.constants

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

    def visit_assign(self, s: n.Assign, ctx: None = None) -> None:
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
                    all(x in self.params or x in self.constants for x in free_names(s.value)):
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

    def visit_sample(self, s: n.Sample, ctx: None = None) -> None:
        if self.env.context == "release":
            self.error("release-samples", s.span, name=s.var, dist=s.dist)
            self.variables.setdefault(s.var, UNKNOWN)  # no follow-on `undefined-name` for the variable
            return
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
        if isinstance(t, OutElem):
            if not is_discrete(t.elem) and not self.comparing:
                self.error("continuous-output-read", e.span, who=self.reader(), what=f"`{_text(e)}` (of type {t.elem})")
                return UNKNOWN
            return t.elem
        return t

    def expr(self, e: n.Expr) -> Type:
        t = e.accept(self, None)
        self.note(e, t)
        return t

    def note(self, e: n.Expr, t: Type) -> None:
        self.types[id(e)] = t.elem if isinstance(t, OutElem) else t
        self.seen.append(e)

    def desugared(self, e: n.Expr) -> n.Expr:
        """e with its comprehension domains made explicit (`desugar.explicit_domains`)."""
        return explicit_domains(e, self.universe, self.same_type)

    def same_type(self, old: n.Expr, new: n.Expr) -> None:
        """`new` is `old` rebuilt by desugaring: it has old's type (if old has none, checking stopped short of
        it at an error, and the mechanism is never bound)."""
        t = self.types.get(id(old))
        if t is not None:
            self.note(new, t)

    def refer(self, e: n.Name, ref: n.Expr, t: Type) -> Type:
        """Record that the name e refers to `ref` (of type t), and return t."""
        typed: Any = dataclasses.replace(ref, type=t)  # type: ignore[arg-type]  # (mypy: replace on a union)
        self.refs[id(e)] = typed
        self.seen.append(e)
        return t

    def tag(self, e: n.Name) -> Type:
        self.tags.add(e.id)
        t = TagType(((e.id, ()),))
        return self.refer(e, n.TagLit(e.id, -1, e.span), t)

    def visit_number(self, e: n.Number, ctx: None = None) -> Type:
        return INT if e.is_integer else REAL

    def visit_bool_lit(self, e: n.BoolLit, ctx: None = None) -> Type:
        return BOOL

    def visit_name(self, e: n.Name, _: None = None) -> Type:
        ctx = self.env.context
        name = e.id
        if e.primed:
            return self.primed_name(e)
        local = self.env.lookup(name)
        if local is not None:
            return self.local(e, local)
        if name in self.params:
            param = self.params[name]
            if ctx in ("requires", "claim", "release") and not param.public and \
                    not (self.in_len and param.length_public):
                self.error("private-in-public", e.span, name=f"len({name})" if self.in_len else name,
                           context=self.public_context)
                return UNKNOWN
            return self.refer(e, n.ParamRef(name, False, e.span), param.type)
        if name == "out" and ctx in ("alignment", "invariant", "claim"):
            return self.refer(e, n.OutRef(e.span), OutputType(self.output_type))
        if name == "out" and ctx == "release" and self.body is not None:
            # the whole output, continuous parts included: the block is a function of it (post-processing)
            return self.refer(e, n.OutRef(e.span), ListType(self.body.output_type))
        if name == "aligned_cost" and ctx == "invariant":
            return self.refer(e, n.AlignedCostRef(e.span), REAL)
        if ctx != "requires" and name in self.noise:
            site = self.noise[name]
            if ctx == "program":
                if site.family and site.loop not in self.loops:
                    self.error("family-index", e.span,
                               message=f"noise family `{name}` is read as `{name}` only inside its loop")
                    return UNKNOWN
                return self.refer(e, n.NoiseRef(name, e.span), site.type)
            if site.family:
                self.error("family-index", e.span,
                           message=f"`{name}` is a noise family; read one member as `{name}[e]`")
                return UNKNOWN
            if ctx == "claim":
                self.error("claim-reads-state", e.span, name=name)
                return UNKNOWN
            return self.refer(e, n.NoiseRef(name, e.span), site.type)
        if name in self.variables and ctx != "requires":
            if ctx == "claim" and name in self.constants and name in self.private_constants():
                self.error("private-in-public", e.span, name=name, context=self.public_context)
                return UNKNOWN
            if ctx in ("program", "invariant", "release") or name in self.constants:
                return self.refer(e, n.VarRef(name, False, e.span), self.variables[name])
            self.error("claim-reads-state" if ctx == "claim" else "alignment-reads-state", e.span, name=name)
            return UNKNOWN
        if TAG_PATTERN.fullmatch(name):
            return self.tag(e)
        candidates = list(self.params) + list(self.env.scopes[-1])
        if ctx in ("program", "release"):
            candidates += list(self.variables) + list(self.noise)
        if ctx == "release" and self.body is not None and (name in self.body.variables or name in self.body.noise):
            self.error("release-reads-state", e.span, name=name)
            return UNKNOWN
        hint = did_you_mean(name, candidates)
        if name == "out" and ctx in ("program", "requires"):
            hint = " (a mechanism cannot read its own output; `out` exists in alignments and claims)"
        self.error("undefined-name", e.span, name=name, hint=hint)
        return UNKNOWN

    def local(self, e: n.Name, t: Type) -> Type:
        """A name bound by the enclosing construct: a let binding, or a loop, comprehension or shift index."""
        if self.env.context != "program" and e.text in self.let_names:
            return self.refer(e, n.LetRef(e.id, e.primed, e.span), t)
        return self.refer(e, n.LocalRef(e.id, e.span), t)

    def primed_name(self, e: n.Name) -> Type:
        ctx = self.env.context
        local = self.env.lookup(e.text)
        if local is not None:
            return self.local(e, local)
        if ctx in ("alignment", "invariant"):
            param = self.params.get(e.id)
            if param is not None:
                if param.public:
                    self.error("public-parameter-primed", e.span, name=e.id)
                    return UNKNOWN
                return self.refer(e, n.ParamRef(e.id, True, e.span), param.type)
            if ctx == "invariant" and e.id in self.variables:
                return self.refer(e, n.VarRef(e.id, True, e.span), self.variables[e.id])
        elif e.id in self.params:
            self.error("undefined-name", e.span, name=e.text,
                       hint=" (neighbour values exist only inside an alignment block)")
            return UNKNOWN
        self.error("undefined-name", e.span, name=e.text, hint="")
        return UNKNOWN

    def visit_call(self, e: n.Call, ctx: None = None) -> Type:
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
            return TYPING[name](self, e)
        if TAG_PATTERN.fullmatch(name) and not self.defined(name):
            payload = tuple(self.value(a) for a in e.args)
            self.tags.add(name)
            return TagType(((name, payload),))
        hint = did_you_mean(name, list(BUILTIN_ARITY) + list(COMPREHENSIONS))
        if name in DISTRIBUTIONS:
            hint = f"; to draw noise, write `x ~ {name}(...)` as a statement"
        self.error("unknown-function", e.func_span, name=name, hint=hint)
        for a in e.args:
            self.value(a)
        return UNKNOWN

    def check_tag(self, t: Type, tag: str, span: Span) -> None:
        if isinstance(t, TagType):
            if tag not in t.tags:
                self.error("unknown-tag", span, name=tag, mechanism=self.mech.name)
        elif t is not UNKNOWN:
            self.mismatch(span, f"tag test `is {tag}`", "a tagged value", t)

    def visit_comprehension(self, e: n.Comprehension, ctx: None = None) -> Type:
        if e.func not in COMPREHENSIONS:
            self.error("unknown-function", e.func_span, name=e.func,
                       hint=" (comprehensions are " + ", ".join(sorted(COMPREHENSIONS)) + ")")
            return UNKNOWN
        if e.domain is not None:
            self.domain(e.domain)
        elif self.env.context not in ("alignment", "invariant") or infer_universe(e, self.universe) is None:
            # Only alignment expressions get their universe inferred (`desugar.explicit_domains`).
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

    def visit_range(self, e: n.Range, ctx: None = None) -> Type:
        self.expect(e.lo, INT, "range start")
        self.expect(e.hi, INT, "range end")
        return RANGE

    def visit_binary(self, e: n.Binary, ctx: None = None) -> Type:
        if OPERATORS[e.op].integer:
            self.expect(e.left, INT, f"left operand of `{e.op}`")
            self.expect(e.right, INT, f"right operand of `{e.op}`")
            return INT
        left = self.expect_numeric(e.left, f"left operand of `{e.op}`")
        right = self.expect_numeric(e.right, f"right operand of `{e.op}`")
        if OPERATORS[e.op].real_result:
            return REAL
        if left is UNKNOWN or right is UNKNOWN:
            return REAL if UNKNOWN not in (left, right) else UNKNOWN
        return join(left, right) or UNKNOWN

    def visit_unary(self, e: n.Unary, ctx: None = None) -> Type:
        if e.op == "not":
            self.expect(e.operand, BOOL, "operand of `not`")
            return BOOL
        return self.expect_numeric(e.operand, "operand of `-`")

    def visit_compare(self, e: n.Compare, ctx: None = None) -> Type:
        # A comparison is a boolean: a continuous part of the output read within one is read only through it, a
        # discrete part (condition 5: `out[i] == 0` tells a released sentinel from a noisy value, two local
        # alignments). Whether the two runs agree on it is C4a's and C4b's to check.
        self.comparing += 1
        try:
            types = [self.value(x) for x in e.operands]
        finally:
            self.comparing -= 1
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

    def visit_bool_op(self, e: n.BoolOp, ctx: None = None) -> Type:
        self.expect(e.left, BOOL, f"operand of `{e.op}`")
        self.expect(e.right, BOOL, f"operand of `{e.op}`")
        return BOOL

    def visit_member(self, e: n.Member, ctx: None = None) -> Type:
        self.expect(e.element, INT, "element of a membership test")
        self.domain(e.collection)
        return BOOL

    def visit_tag_test(self, e: n.TagTest, ctx: None = None) -> Type:
        t = self.expr(e.value)
        if isinstance(t, OutElem):
            t = t.elem
        if not TAG_PATTERN.fullmatch(e.tag):
            self.error("unknown-tag", e.tag_span, name=e.tag, mechanism=self.mech.name)
        else:
            self.check_tag(t, e.tag, e.tag_span)
            self.tags.add(e.tag)
        return BOOL

    def visit_conditional(self, e: n.Conditional, ctx: None = None) -> Type:
        self.expect(e.condition, BOOL, "condition of `?:`")
        a, b = self.value(e.then), self.value(e.orelse)
        joined = join(a, b)
        if joined is None:
            self.mismatch(e.orelse.span, "second branch of `?:`", str(a), b)
            return UNKNOWN
        return joined

    def visit_index(self, e: n.Index, ctx: None = None) -> Type:
        base = e.base
        if isinstance(base, n.Name) and not base.primed and self.env.context in ("alignment", "invariant") \
                and base.id in self.noise and self.env.lookup(base.id) is None:
            site = self.noise[base.id]
            if not site.family:
                self.error("family-index", e.span,
                           message=f"`{base.id}` is a scalar noise variable; it has no index")
                return UNKNOWN
            self.expect(e.index, INT, "noise index")
            self.members.add(id(e))
            return site.type
        t = self.expr(base)
        if isinstance(t, OutputType):
            self.expect(e.index, INT, "output index")
            return OutElem(t.elem)
        if isinstance(t, OutElem):
            inner = t.elem
            if isinstance(inner, TupleType):
                component = self.tuple_component(e, inner)
                if component is UNKNOWN:
                    return UNKNOWN
                if not is_discrete(component) and not self.comparing:
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

    def visit_tuple_lit(self, e: n.TupleLit, ctx: None = None) -> Type:
        return TupleType(tuple(self.value(i) for i in e.items))

    def visit_list_lit(self, e: n.ListLit, ctx: None = None) -> Type:
        result: Type = UNKNOWN
        for item in e.items:
            t = self.value(item)
            joined = join(result, t)
            if joined is None:
                self.mismatch(item.span, "list element", str(result), t)
            else:
                result = joined
        return ListType(result)

    def universe(self, e: n.Comprehension, base: n.Name) -> n.Range | None:
        """The universe of e when its body indexes `base` with its variable: a family's loop range, or the
        indices `0 .. len(q)` of a list parameter q (typed here, as if written)."""
        site = self.noise.get(base.id)
        if site is not None and site.loop is not None and not base.primed:
            universe = n.Range(site.loop.lo, site.loop.hi, e.span)
            self.note(universe, RANGE)
            return universe
        param = self.params.get(base.id)
        if param is not None and isinstance(param.type, ListType):
            zero = n.Number(Fraction(0), True, e.span)
            length = n.Call("len", (n.Name(base.id, False, base.span),), e.span, base.span)
            universe = n.Range(zero, length, e.span)
            self.expr(universe)
            return universe
        return None



def _reads_outside_len(e: n.Expr, names: set[str], hidden: set[str]) -> bool:
    """Whether e reads one of `names` other than as the argument of `len` (whose length is public unless the
    list is in `hidden`, the lists with an add/remove-one-record clause)."""
    if isinstance(e, n.Call) and e.func == "len" and isinstance(e.args[0], n.Name) and not free_names(e) & hidden:
        return False
    if isinstance(e, n.Name):
        return not e.primed and e.id in names
    return any(_reads_outside_len(child, names, hidden) for child in children(e))


def _declared_type(t: n.TypeExpr) -> Type:
    base = {"real": REAL, "int": INT, "bool": BOOL}[t.base]
    return ListType(base) if t.is_list else base


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}{'s' if k != 1 else ''}"


def _text(e: n.Expr) -> str:
    return unparse(e)

