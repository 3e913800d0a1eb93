"""Float sensitivity (resolved program → the comparisons and rankings that exact and floating-point arithmetic
may decide differently): where the checker's meaning of a program and the interpreter's part.

The checker proves a mechanism in exact arithmetic: reals are reals, `0.1` is 1/10. The interpreter, and any
implementation of the mechanism in Python floats or C doubles, computes in IEEE-754 double precision, where
`0.1 + 0.2 == 0.3` is false and `(q * 3) / 3 == q` fails for q = 0.1. Both run the same program; they take the
same branch at a comparison when

1. both sides are computed *without rounding*: inputs (given as doubles), noise values (drawn as doubles),
   literals that are doubles (`0.5`, not `0.1`), integers (exact in the interpreter, which stops rather than
   overflow), and what -x, abs, min, max, clamp, floor, ceil, round, `?:`, indexing, tuples and tags make of
   those; or
2. the difference of its two sides is a + c·η for a noise variable η with a density and a number c != 0 (a
   family counted as one variable: the coefficients of its members summed), with nothing else of η in it.
   Then exact and floating-point evaluation disagree only when η falls within rounding of the boundary: a band
   of a few units in the last place, whose probability is of the order of the rounding error relative to the
   noise's scale. The proof, like the paper, takes the noise to be real-valued and does not count it (as it
   does not count the floating-point sampling of the noise itself); design.md excludes ties, events of
   probability 0, on the same footing (docs/language.md, "Exact and floating-point arithmetic").

Every other comparison in the mechanism's body is *float-sensitive*: on some input the two may decide it
differently, and a proof that rests on its exact outcome says nothing about the program the interpreter runs.
A rounding to an integer (`floor`, `ceil`, `round`) decides where its argument lies between integers, as a
comparison of the argument with an integer does: it is float-sensitive unless rule 1 or 2 holds of that
comparison (`floor(q + eta)` is decided by eta; `ceil(q * 0.1 * 10)` is float-sensitive: for q = 3 it is 3
exactly and 4 in doubles). Its result is an integer either way, so the integers stay exact.
A ranking (`argmax`, `argmin`, `top_k`, `top_k_with_gaps`, and the comprehension forms) is float-sensitive
unless its values are exact, or each is decided by a member of a noise family that belongs to it alone
(`noisy[i] = q[i] + eta` in the loop that draws `eta`): a tie then has probability 0, and a near-tie that
rounding decides is as unlikely as in rule 2.

The analysis is an abstract interpretation of the body (`_Analysis`, a typed visitor): each expression gets a
`Value` that says whether it is exact and how noise enters it (`Form`: a sum of c·η, the rest free of noise).
It is flow-insensitive over variables — a variable's value is the join of everything assigned to it, to a
fixpoint — so what it says holds on every path and for every input length. `float_sensitive` lists the
findings; `qualify` makes the verdicts of the obligations that follow the program's branches unknown while an
unaccepted one remains (accepted ones: a note). A comment `# align: accept-float-sensitive` accepts a finding
(`nodes.Acceptance`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from . import nodes as n
from .builtins import implemented
from .diagnostics import Diagnostic, Severity
from .results import Note
from .span import Span
from .status import Status
from .types import BOOL, INT, ListType, TagType, TupleType, Type
from .unparse import unparse
from .visitor import IRVisitor, StmtVisitor

if TYPE_CHECKING:
    from .resolve import ResolvedMechanism
    from .results import Verdict

DIRECTIVE = n.Acceptance.DIRECTIVE

# ------------------------------------------------------------------------------------------ abstract values

NOISE, CURRENT, OWN, AT = "noise", "current", "own", "at:"
Atom = tuple[str, str]
"""A noise variable (its site's name) and its kind. NOISE: a scalar noise variable, or any members of a family,
counted as one variable (two reads may be one member). CURRENT: the member of a family drawn in the iteration
being evaluated, read as the family's name in its loop; it lives only within one expression (stored in a
variable, it is a NOISE atom). AT + i: the own member of entry i of a list, read as `x[i]` in the innermost loop,
over i (a member no other index has; stored at that loop's index it stays the entry's own). OWN: in a list entry
written at its loop's index (`noisy[i] = q[i] + eta`), the member drawn in the iteration that wrote that entry, or
the own member of the entry it copies at the same index, which no other entry holds."""


@dataclass(frozen=True)
class Form:
    """The noise part of a value: Σ c·atom (the rest is free of noise). A coefficient None is one the analysis
    does not know, which may be 0 (a noise value times a parameter)."""

    terms: tuple[tuple[Atom, Fraction | None], ...] = ()
    """Sorted by atom; no coefficient is 0."""

    @staticmethod
    def of(terms: Mapping[Atom, Fraction | None]) -> Form:
        return Form(tuple(sorted((a, c) for a, c in terms.items() if c != 0)))

    def plus(self, other: Form, sign: int = 1) -> Form:
        total: dict[Atom, Fraction | None] = dict(self.terms)
        for atom, c in other.terms:
            mine = total.get(atom, Fraction(0))
            total[atom] = None if mine is None or c is None else mine + sign * c
        return Form.of(total)

    def scaled(self, factor: Fraction | None) -> Form:
        if factor == 0:
            return ZERO
        return Form.of({a: None if c is None or factor is None else c * factor for a, c in self.terms})

    def merged(self) -> Form:
        """Each family as one atom (a current or own member counted as a member like any other)."""
        return ZERO.plus(Form(tuple(((site, NOISE), c) for (site, _), c in self.terms)))

    def at_index(self, var: str) -> Form:
        """An entry read as `x[var]` in the innermost loop, over var: its own member is the member of index var
        (an `AT + var` atom), which only a store at that loop's index keeps as the entry's own."""
        return ZERO.plus(Form(tuple(((site, AT + var if kind == OWN else kind), c) for (site, kind), c in self.terms)))

    def owned(self, families: frozenset[str], var: str | None = None) -> Form:
        """The form stored in the entry that the iteration of the loop drawing `families` writes at its own
        index: the current member of such a family becomes the entry's own, unless the value also holds the
        family otherwise (a member read from a variable or another entry, which may be this one); anything
        else is stored as NOISE."""
        def own(site: str, kind: str) -> bool:
            return (kind == CURRENT and site in families) or (var is not None and kind == AT + var)

        held = {site for (site, kind), _ in self.terms if not own(site, kind)}
        return ZERO.plus(Form(tuple(((site, OWN if own(site, kind) and site not in held else NOISE), c)
                                    for (site, kind), c in self.terms)))


ZERO = Form()
_MOST_FORMS = 16
"""A value that may have more noise parts than this is taken as unknown (`Num.forms` None): the analysis ends."""


@dataclass(frozen=True)
class Num:
    """A number (or a boolean, an index, a set of indices)."""

    exact: bool
    """Computed without rounding: the interpreter's double is the exact value."""
    forms: frozenset[Form] | None
    """Its possible noise parts (one per way it may be computed); None when noise enters it other than as a sum
    of c·η (a product of two noisy values, exp of one, a sum over a loop)."""


@dataclass(frozen=True)
class Seq:
    """A list: what any of its entries may be."""

    elem: Value


@dataclass(frozen=True)
class Tup:
    items: tuple[Value, ...]


@dataclass(frozen=True)
class Tagged:
    payloads: tuple[tuple[str, tuple[Value, ...]], ...]


Value = Num | Seq | Tup | Tagged

DISCRETE = Num(True, frozenset({ZERO}))
"""An integer, a boolean, an index set: exact, free of noise (integer noise is exact too, as a value)."""
ROUNDED = Num(False, frozenset({ZERO}))
UNKNOWN = Num(False, None)


def _forms(forms: Iterable[Form]) -> frozenset[Form] | None:
    result = frozenset(forms)
    return result if len(result) <= _MOST_FORMS else None


def join(a: Value, b: Value) -> Value:
    """What a value assigned in two places may be."""
    if isinstance(a, Num) and isinstance(b, Num):
        forms = None if a.forms is None or b.forms is None else _forms(a.forms | b.forms)
        return Num(a.exact and b.exact, forms)
    if isinstance(a, Seq) and isinstance(b, Seq):
        return Seq(join(a.elem, b.elem))
    if isinstance(a, Tup) and isinstance(b, Tup) and len(a.items) == len(b.items):
        return Tup(tuple(join(x, y) for x, y in zip(a.items, b.items)))
    if isinstance(a, Tagged) and isinstance(b, Tagged):
        payloads = dict(a.payloads)
        for tag, items in b.payloads:
            mine = payloads.get(tag)
            if mine is None:
                payloads[tag] = items
            elif len(mine) == len(items):
                payloads[tag] = tuple(join(x, y) for x, y in zip(mine, items))
            else:
                return UNKNOWN
        return Tagged(tuple(sorted(payloads.items(), key=lambda p: p[0])))
    return UNKNOWN


def exact(v: Value) -> bool:
    if isinstance(v, Num):
        return v.exact
    if isinstance(v, Seq):
        return exact(v.elem)
    if isinstance(v, Tup):
        return all(exact(x) for x in v.items)
    return all(exact(x) for _, items in v.payloads for x in items)


def _map_forms(v: Value, f: Callable[[Form], Form]) -> Value:
    """v with every noise part transformed (through lists, tuples and tags)."""
    if isinstance(v, Num):
        return v if v.forms is None else Num(v.exact, _forms(f(x) for x in v.forms))
    if isinstance(v, Seq):
        return Seq(_map_forms(v.elem, f))
    if isinstance(v, Tup):
        return Tup(tuple(_map_forms(x, f) for x in v.items))
    return Tagged(tuple((tag, tuple(_map_forms(x, f) for x in items)) for tag, items in v.payloads))


def _assignments(body: Sequence[n.Stmt], target: str) -> int:
    """How many assignments to `target` a block holds, in its branches and loops too."""
    count = 0
    for st in body:
        if isinstance(st, n.Assign) and st.target == target:
            count += 1
        elif isinstance(st, n.If):
            count += _assignments(st.then, target) + _assignments(st.orelse, target)
        elif isinstance(st, (n.For, n.While)):
            count += _assignments(st.body, target)
    return count


def _read(v: Value) -> Value:
    """An entry read at some index, or a value stored in a variable: every atom a NOISE atom (two reads may be
    one entry; a variable may hold an earlier iteration's member)."""
    return _map_forms(v, Form.merged)


def bottom(t: Type) -> Value:
    """The value of a variable before any assignment reaches it (the identity of `join`)."""
    if isinstance(t, ListType):
        return Seq(bottom(t.elem))
    if isinstance(t, TupleType):
        return Tup(tuple(bottom(x) for x in t.items))
    if isinstance(t, TagType):
        return Tagged(tuple((tag, tuple(bottom(x) for x in payload)) for tag, payload in t.payloads))
    return Num(True, frozenset())


def is_double(value: Fraction) -> bool:
    """Whether a literal's exact value is a double (`0.5`, `3`; not `0.1`); Fraction -> float rounds correctly."""
    return Fraction(float(value)) == value


# ------------------------------------------------------------------------------------------------ findings


@dataclass(frozen=True)
class FloatSensitive:
    """A comparison or ranking of the mechanism's body that exact and floating-point arithmetic may decide
    differently."""

    span: Span
    what: str
    """`the comparison \\`...\\`` or `the ranking \\`...\\``, in the spec's syntax."""
    reason: str
    acceptance: n.Acceptance | None
    """The comment that accepts it, if any."""

    def diagnostic(self) -> Diagnostic:
        return Diagnostic("float-sensitive", self.span, {"what": self.what, "reason": self.reason},
                          severity=Severity.WARNING)


_NO_NOISE = "its sides are computed with rounding, and no noise with a density decides it"
_CANCELLED = "its sides are computed with rounding, and the noise in them cancels"
_UNKNOWN_COEFFICIENT = ("its sides are computed with rounding, and the noise in them has a coefficient that may "
                        "be 0")
_NONLINEAR = "its sides are computed with rounding, and noise enters them other than as a + c·η"
_COMPOUND = "it compares tuples or tags with parts computed with rounding"
_ROUNDING_REASONS = {
    _NO_NOISE: "its argument is computed with rounding, and no noise with a density decides it",
    _UNKNOWN_COEFFICIENT: ("its argument is computed with rounding, and the noise in it has a coefficient that may "
                           "be 0"),
    _NONLINEAR: "its argument is computed with rounding, and noise enters it other than as a + c·η",
}
"""What makes a rounding to an integer (floor, ceil, round) float-sensitive: a comparison of its argument with an
integer that is (`undecided`'s reasons, said of the argument)."""
_RANKED = ("the ranked values are computed with rounding, and they are not each decided by noise of its own with "
           "a density")


# ------------------------------------------------------------------------------------------------ analysis


_RANKINGS = frozenset({"argmax", "argmin", "top_k", "top_k_with_gaps"})
_COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})


class _Analysis(IRVisitor[Value, None], StmtVisitor[None, None]):
    """One pass over the body; `float_sensitive` repeats it until the variables' values settle, then once more
    with `findings` set."""

    def __init__(self, mech: ResolvedMechanism):
        self.mech = mech
        self.env: dict[str, Value] = {}
        self.changed = False
        self.findings: dict[Span, FloatSensitive] | None = None
        self.loops: list[n.For] = []
        self.own_index: str | None = None
        """Within an argmax/argmin comprehension's body: its index, at which a list's entries keep their own
        members (each value ranked is another position)."""
        self.continuous = {s.name for s in mech.noise if s.distribution.continuous}
        self.families: dict[int, frozenset[str]] = {}
        for s in mech.noise:
            if s.loop is not None:
                self.families[id(s.loop)] = self.families.get(id(s.loop), frozenset()) | {s.name}

    # -- findings ---------------------------------------------------------------------------------
    def report(self, e: n.Expr, kind: str, reason: str) -> None:
        if self.findings is not None and e.span not in self.findings:
            self.findings[e.span] = FloatSensitive(e.span, f"the {kind} `{unparse(e)}`", reason,
                                                   self.mech.node.acceptance(e.span))

    def decides(self, form: Form) -> bool:
        """Whether a continuous noise variable enters the form with a number coefficient other than 0."""
        return any(c is not None and site in self.continuous for (site, _), c in form.merged().terms)

    def undecided(self, a: Value, b: Value) -> str | None:
        """Why comparing a with b may go another way in floating point; None when it cannot (rule 1 or 2)."""
        if exact(a) and exact(b):
            return None
        if not (isinstance(a, Num) and isinstance(b, Num)):
            return _COMPOUND
        if a.forms is None or b.forms is None:
            return _NONLINEAR
        for fa in a.forms:
            for fb in b.forms:
                difference = fa.plus(fb, -1)
                if not self.decides(difference):
                    if any(c is None for _, c in difference.merged().terms):
                        return _UNKNOWN_COEFFICIENT
                    return _CANCELLED if self.decides(fa) or self.decides(fb) else _NO_NOISE
        return None

    def owned_entries(self, elem: Value) -> bool:
        """Whether every entry that a list may hold is decided by its own member of a continuous family that no
        entry holds otherwise: ties between entries then fix that member to a point (probability 0)."""
        if not isinstance(elem, Num) or elem.forms is None:
            return False
        shared = {site for f in elem.forms for (site, kind), _ in f.terms if kind != OWN}
        return all(any(kind == OWN and c is not None and site in self.continuous and site not in shared
                       for (site, kind), c in f.terms) for f in elem.forms)

    def check_ranking(self, e: n.Expr, values: n.Expr) -> Value:
        """A ranking of the list `values`: exact, or each entry its own noise; the list's value."""
        if isinstance(values, n.ListLit):
            items = [self.value(x) for x in values.items]
            if not all(exact(x) for x in items) and \
                    any(self.undecided(a, b) for k, a in enumerate(items) for b in items[k + 1:]):
                self.report(e, "ranking", _RANKED)
            return Seq(self.join_all(items, values.type))
        v = self.value(values)
        if isinstance(v, Seq) and not exact(v.elem) and not self.owned_entries(v.elem):
            self.report(e, "ranking", _RANKED)
        return v

    def join_all(self, values: Sequence[Value], t: Type | None) -> Value:
        """What any of the values may be (the entries of a list of type t; no values: the list is empty)."""
        if not values:
            return bottom(t.elem) if isinstance(t, ListType) else UNKNOWN
        result = values[0]
        for v in values[1:]:
            result = join(result, v)
        return result

    # -- expressions ------------------------------------------------------------------------------
    def value(self, e: n.Expr) -> Value:
        v = e.accept(self, None)
        if getattr(e, "type", None) in (INT, BOOL) and isinstance(v, Num) and not v.exact:
            return Num(True, v.forms)  # the interpreter's integers are exact (it stops rather than overflow)
        return v

    def visit_number(self, e: n.Number, ctx: None = None) -> Value:
        return DISCRETE if e.is_integer or is_double(e.value) else ROUNDED

    def visit_bool_lit(self, e: n.BoolLit, ctx: None = None) -> Value:
        return DISCRETE

    def visit_call(self, e: n.Call, ctx: None = None) -> Value:
        return _BUILTINS[e.func](self, e)

    def visit_range(self, e: n.Range, ctx: None = None) -> Value:
        self.value(e.lo)
        self.value(e.hi)
        return DISCRETE

    def visit_comprehension(self, e: n.Comprehension, ctx: None = None) -> Value:
        for part in (e.domain, e.excluded, e.condition):
            if part is not None:
                self.value(part)
        if e.func in ("argmax", "argmin"):
            saved, self.own_index = self.own_index, e.var
            try:
                body = self.value(e.body)
            finally:
                self.own_index = saved
            if not exact(body) and not self.owned_entries(body):
                self.report(e, "ranking", _RANKED)
            return DISCRETE
        body = _read(self.value(e.body))
        if e.func in ("max", "min"):
            return body
        if e.func == "sum":
            if isinstance(body, Num) and body.forms is not None and body.forms <= {ZERO}:
                return Num(e.type == INT, body.forms)
            return Num(e.type == INT, None)
        return DISCRETE  # count, all, any

    def visit_binary(self, e: n.Binary, ctx: None = None) -> Value:
        a, b = self.value(e.left), self.value(e.right)
        if not (isinstance(a, Num) and isinstance(b, Num)):
            return UNKNOWN
        integer = e.type == INT
        if a.forms is None or b.forms is None:
            return Num(integer, None)
        if e.op in ("+", "-"):
            sign = 1 if e.op == "+" else -1
            return Num(integer, _forms(x.plus(y, sign) for x in a.forms for y in b.forms))
        if e.op == "*":
            for factor, other in ((e.left, b), (e.right, a)):
                c = n.literal_number(factor)
                if c is not None:
                    return Num(integer, _scaled(other, c))
            if a.forms == {ZERO}:
                return Num(integer, _scaled(b, None))
            if b.forms == {ZERO}:
                return Num(integer, _scaled(a, None))
            return Num(integer, None)
        if e.op == "/":
            c = n.literal_number(e.right)
            if c is not None and c != 0:
                return Num(False, _scaled(a, 1 / c))
            if b.forms == {ZERO}:
                return Num(False, _scaled(a, None))
            return Num(False, None)
        # ^, //, %: noise-free in, noise-free out; anything else is not a sum of c·η
        noise_free = a.forms == {ZERO} and b.forms == {ZERO}
        return Num(integer, frozenset({ZERO}) if noise_free else None)

    def visit_unary(self, e: n.Unary, ctx: None = None) -> Value:
        v = self.value(e.operand)
        if e.op == "not" or not isinstance(v, Num):
            return DISCRETE if e.op == "not" else UNKNOWN
        return Num(v.exact, _scaled(v, Fraction(-1)))

    def visit_compare(self, e: n.Compare, ctx: None = None) -> Value:
        values = [self.value(x) for x in e.operands]
        for op, a, b in zip(e.ops, values, values[1:]):
            why = self.undecided(a, b) if op in _COMPARISONS else None
            if why is not None:
                self.report(e, "comparison", why)
                break
        return DISCRETE

    def visit_bool_op(self, e: n.BoolOp, ctx: None = None) -> Value:
        self.value(e.left)
        self.value(e.right)
        return DISCRETE

    def visit_member(self, e: n.Member, ctx: None = None) -> Value:
        self.value(e.element)
        self.value(e.collection)
        return DISCRETE

    def visit_tag_test(self, e: n.TagTest, ctx: None = None) -> Value:
        self.value(e.value)
        return DISCRETE

    def visit_conditional(self, e: n.Conditional, ctx: None = None) -> Value:
        self.value(e.condition)
        return join(self.value(e.then), self.value(e.orelse))

    def visit_index(self, e: n.Index, ctx: None = None) -> Value:
        base = self.value(e.base)
        self.value(e.index)
        if isinstance(base, Seq):
            own = self.own_index is not None and isinstance(e.index, n.LocalRef) and e.index.id == self.own_index
            if own:
                return base.elem
            index = e.index
            if isinstance(index, n.LocalRef) and self.loops and self.loops[-1].var == index.id:
                # x[i] in the innermost loop, over i: entry i's own member, the one of index i (the fill-then-walk
                # loops, `noisy[i] = q[i] + etas[i]`)
                return _map_forms(base.elem, lambda f: f.at_index(index.id))
            return _read(base.elem)
        if isinstance(base, Tup):
            k = n.literal_number(e.index)
            if k is not None and 0 <= k < len(base.items) and k.denominator == 1:
                return base.items[int(k)]
        return UNKNOWN

    def visit_tuple_lit(self, e: n.TupleLit, ctx: None = None) -> Value:
        return Tup(tuple(self.value(x) for x in e.items))

    def visit_list_lit(self, e: n.ListLit, ctx: None = None) -> Value:
        return Seq(self.join_all([self.value(x) for x in e.items], e.type))

    def visit_param_ref(self, e: n.ParamRef, ctx: None = None) -> Value:
        return _input(e.type)

    def visit_var_ref(self, e: n.VarRef, ctx: None = None) -> Value:
        found = self.env.get(e.id)
        return found if found is not None else bottom(self.mech.variables.get(e.id, INT))

    def visit_noise_ref(self, e: n.NoiseRef, ctx: None = None) -> Value:
        kind = CURRENT if self.mech.noise_site(e.id).family else NOISE
        return Num(True, frozenset({Form((((e.id, kind), Fraction(1)),))}))

    def visit_local_ref(self, e: n.LocalRef, ctx: None = None) -> Value:
        return DISCRETE

    def not_in_a_body(self, e: n.Expr, ctx: None = None) -> Value:
        return UNKNOWN  # alignment, invariant and claim names: the analysis reads the mechanism's body only

    visit_member_ref = visit_let_ref = visit_out_ref = visit_aligned_cost_ref = not_in_a_body

    def visit_tag_lit(self, e: n.TagLit, ctx: None = None) -> Value:
        return Tagged(((e.tag, ()),))

    def visit_tag_call(self, e: n.TagCall, ctx: None = None) -> Value:
        return Tagged(((e.tag, tuple(self.value(a) for a in e.args)),))

    # -- statements -------------------------------------------------------------------------------
    def block(self, body: Iterable[n.Stmt]) -> None:
        for s in body:
            s.accept(self, None)

    def assign(self, name: str, v: Value) -> None:
        """Join v into the variable's value (flow-insensitive: everything ever assigned to it)."""
        old = self.env.get(name)
        new = v if old is None else join(old, v)
        if new != old:
            self.env[name] = new
            self.changed = True

    def visit_assign(self, s: n.Assign, ctx: None = None) -> None:
        v = self.value(s.value)
        if s.index is None:
            self.assign(s.target, _read(v))
            return
        self.value(s.index)
        var = _offset_index(s.index)
        loop = next((x for x in reversed(self.loops) if x.var == var), None)
        if loop is None or _assignments(loop.body, s.target) > 1:
            # an index of no loop, or a list the loop writes in two places (`a[i] = eta`, then `a[i - 1] = eta`:
            # two entries may hold one member)
            self.assign(s.target, Seq(_read(v)))
            return
        # x[i] = ... (or x[i - 1] = ...) in the loop over i, its only write of x: entry i is written in iteration i
        # only, with that
        # iteration's members, or, in the innermost loop, the own members of the entries i of other lists
        families = self.families.get(id(loop), frozenset())
        index = loop.var if loop is self.loops[-1] else None
        self.assign(s.target, Seq(_map_forms(v, lambda f: f.owned(families, index))))

    def visit_sample(self, s: n.Sample, ctx: None = None) -> None:
        for a in s.args:
            self.value(a)

    def visit_if(self, s: n.If, ctx: None = None) -> None:
        self.value(s.condition)
        self.block(s.then)
        self.block(s.orelse)

    def visit_for(self, s: n.For, ctx: None = None) -> None:
        self.value(s.lo)
        self.value(s.hi)
        self.loops.append(s)
        try:
            self.block(s.body)
        finally:
            self.loops.pop()

    def visit_while(self, s: n.While, ctx: None = None) -> None:
        self.value(s.condition)
        self.block(s.body)

    def visit_break(self, s: n.Break, ctx: None = None) -> None:
        pass

    def visit_output(self, s: n.Output, ctx: None = None) -> None:
        self.value(s.value)


def _scaled(v: Num, factor: Fraction | None) -> frozenset[Form] | None:
    return None if v.forms is None else _forms(f.scaled(factor) for f in v.forms)


def _input(t: Type | None) -> Value:
    """A parameter's value: the doubles (or integers, booleans) it is given, exact."""
    if isinstance(t, ListType):
        return Seq(_input(t.elem))
    return DISCRETE


# -- builtins (one entry per builtin of the language; `implemented` checks the table at import)


def _b_len(a: _Analysis, e: n.Call) -> Value:
    a.value(e.args[0])
    return DISCRETE


def _b_abs(a: _Analysis, e: n.Call) -> Value:
    v = a.value(e.args[0])
    if not isinstance(v, Num) or v.forms is None:
        return UNKNOWN
    return Num(v.exact, _forms(v.forms | {f.scaled(Fraction(-1)) for f in v.forms}))


def _b_min_max(a: _Analysis, e: n.Call) -> Value:
    """The value is one of the arguments (or entries): exact if they are, and with one of their noise parts."""
    values = [a.value(x) for x in e.args]
    if len(values) == 1:
        only = values[0]
        return _read(only.elem) if isinstance(only, Seq) else UNKNOWN
    return a.join_all(values, None) if values else UNKNOWN


def _b_ranking(a: _Analysis, e: n.Call) -> Value:
    values = a.check_ranking(e, e.args[0])
    for x in e.args[1:]:
        a.value(x)
    if e.func != "top_k_with_gaps":
        return Seq(DISCRETE) if e.func == "top_k" else DISCRETE
    # the gap is the difference of two entries (at different positions): computed with rounding
    gap = ROUNDED if isinstance(values, Seq) and isinstance(values.elem, Num) and values.elem.forms is not None \
        and values.elem.forms <= {ZERO} else UNKNOWN
    return Seq(Tup((DISCRETE, gap)))


def _b_function(a: _Analysis, e: n.Call) -> Value:
    """sqrt, exp, ln, normal_cdf, normal_pdf: rounded; free of noise only when the argument is."""
    v = a.value(e.args[0])
    return ROUNDED if isinstance(v, Num) and v.forms is not None and v.forms <= {ZERO} else UNKNOWN


def _b_to_integer(a: _Analysis, e: n.Call) -> Value:
    """floor, ceil, round decide where their argument lies between integers, as a comparison with an integer
    would: the exact and the rounded argument have the same integer when the argument is exact, or when noise
    with a density decides it (it then differs only within rounding of an integer, or of a half-integer for
    round). Otherwise the call is float-sensitive. Either way the result is an int, exact in the interpreter;
    noise enters it other than as a + c·η."""
    v = a.value(e.args[0])
    why = a.undecided(v, DISCRETE)
    if why is not None:
        a.report(e, "rounding", _ROUNDING_REASONS.get(why, why))
    noise_free = isinstance(v, Num) and v.forms is not None and v.forms <= {ZERO}
    return DISCRETE if noise_free else Num(True, None)


def _b_discrete(a: _Analysis, e: n.Call) -> Value:
    for x in e.args:
        a.value(x)
    return Seq(DISCRETE) if e.func == "indices" else DISCRETE


def _b_payload(a: _Analysis, e: n.Call) -> Value:
    v, tag, default = a.value(e.args[0]), e.args[1], a.value(e.args[2])
    name = tag.tag if isinstance(tag, n.TagLit) else None
    if not isinstance(v, Tagged) or name is None:
        return UNKNOWN
    items = dict(v.payloads).get(name)
    if items is None:
        return default
    return join(items[0] if len(items) == 1 else Tup(items), default)


_BUILTINS: Mapping[str, Callable[[_Analysis, n.Call], Value]] = implemented("float sensitivity", {
    "len": _b_len, "abs": _b_abs, "min": _b_min_max, "max": _b_min_max,
    "argmax": _b_ranking, "argmin": _b_ranking, "top_k": _b_ranking, "top_k_with_gaps": _b_ranking,
    "sqrt": _b_function, "exp": _b_function, "ln": _b_function, "normal_cdf": _b_function, "normal_pdf": _b_function,
    "floor": _b_to_integer, "ceil": _b_to_integer, "round": _b_to_integer, "clamp": _b_min_max,
    "indices": _b_discrete, "count": _b_discrete, "payload": _b_payload,
})

_MOST_PASSES = 64
"""Passes over the body before the analysis gives up on a fixpoint and takes every variable as unknown."""


def float_sensitive(mech: ResolvedMechanism) -> tuple[FloatSensitive, ...]:
    """The float-sensitive comparisons and rankings of the mechanism's body, in source order."""
    analysis = _Analysis(mech)
    for _ in range(_MOST_PASSES):
        analysis.changed = False
        analysis.block(mech.body)
        if not analysis.changed:
            break
    else:
        analysis.env = {name: _unknown(t) for name, t in mech.variables.items()}
    analysis.findings = {}
    analysis.block(mech.body)
    # One comment accepts one comparison or ranking: the outermost that starts first on the line it marks. Another
    # one on that line — a test added inside the accepted comparison later — is checked afresh (the soundness
    # harness's float_dead_noise mutant of specs/peers/lyu_alg2.dp was accepted by its comment otherwise).
    found = sorted(analysis.findings.values(), key=lambda f: (f.span.line, f.span.column, -f.span.end_line,
                                                               -f.span.end_column))
    used: set[int] = set()
    kept = []
    for f in found:
        if f.acceptance is not None:
            if id(f.acceptance) in used:
                f = replace(f, acceptance=None)
            else:
                used.add(id(f.acceptance))
        kept.append(f)
    return tuple(sorted(kept, key=lambda f: (f.span.line, f.span.column)))


def _offset_index(index: n.Expr) -> str | None:
    """The loop index i of an entry index `i`, `i + c` or `i - c` with c a number (one entry per iteration)."""
    if isinstance(index, n.LocalRef):
        return index.id
    if isinstance(index, n.Binary) and index.op in "+-" and isinstance(index.left, n.LocalRef) and \
            isinstance(index.right, n.Number):
        return index.left.id
    return None


def _unknown(t: Type) -> Value:
    if isinstance(t, ListType):
        return Seq(_unknown(t.elem))
    return UNKNOWN


def diagnostics(mech: ResolvedMechanism) -> list[Diagnostic]:
    """A `float-sensitive` warning at each finding that no comment accepts, and an `unused-acceptance` warning at
    each comment that accepts nothing (`align check`, `align verify`)."""
    found = float_sensitive(mech)
    used = {id(f.acceptance) for f in found if f.acceptance is not None}
    unused = [Diagnostic("unused-acceptance", a.span, {}, severity=Severity.WARNING)
              for a in mech.node.acceptances if id(a) not in used]
    return sorted([*(f.diagnostic() for f in found if f.acceptance is None), *unused],
                  key=lambda d: (d.span.line, d.span.column) if d.span is not None else (0, 0))


# ------------------------------------------------------------------------------------------------ verdicts


def qualify(mech: ResolvedMechanism, verdicts: Sequence[Verdict]) -> tuple[Verdict, ...]:
    """The verdicts of a mechanism whose proof is in exact arithmetic, as they hold for the program the
    interpreter runs. Every obligation proved (or bounded) by a check that follows the program's branches — all
    but those that hold by construction — becomes unknown while a float-sensitive comparison or ranking that
    no comment accepts remains; an accepted one is reported in a note on each of them instead."""
    found = float_sensitive(mech)
    if not found:
        return tuple(verdicts)
    pending = [f for f in found if f.acceptance is None]
    result = []
    for v in verdicts:
        if v.status not in (Status.PROVED, Status.BOUNDED) or v.scope == "by construction":
            result.append(v)
        elif pending:
            first = pending[0]
            more = f" (and {len(pending) - 1} more float-sensitive place(s))" if len(pending) > 1 else ""
            reason = (f"{v.status.value} in exact arithmetic only ({v.scope}): {first.what} at line {first.span.line} "
                      f"is float-sensitive ({first.reason}){more}; a comment `# {DIRECTIVE}` on its line accepts it")
            result.append(replace(v, status=Status.UNKNOWN, scope="", reason=reason))
        else:
            result.append(replace(v, remarks=(*v.remarks, *(Note(_accepted(f)) for f in found))))
    return tuple(result)


def _accepted(f: FloatSensitive) -> str:
    assert f.acceptance is not None, "only an accepted finding has a note"
    comment = f"# {DIRECTIVE}" + (f" {f.acceptance.reason}" if f.acceptance.reason else "")
    return (f"{f.what} at line {f.span.line} is float-sensitive, accepted by the comment `{comment}` (line "
            f"{f.acceptance.line}): it is decided in exact arithmetic here, in doubles by the interpreter")
