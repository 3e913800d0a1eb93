"""Expressions as sympy formulas: simplified cost coefficients and shifts for reports (and, later, the checker).

Only arithmetic over named quantities is translated; anything else raises `NotSymbolic`, and callers fall
back to the source text. Names become real sympy symbols (q' becomes the symbol `q'`, q[i] the symbol `q[i]`).
"""

from __future__ import annotations

import re
from functools import cache

import sympy

from . import nodes as n
from .distributions import Field, normal_cdf, normal_pdf
from .monomials import notation
from .operators import INTEGER_OPERATIONS, RING_OPERATIONS
from .unparse import unparse
from .visitor import ExprVisitor


class NotSymbolic(Exception):
    """The expression has a construct with no sympy counterpart here."""


FIELD = Field(sympy.Integer(1), sympy.log)
"""sympy as a cost rule's number domain (`distributions.Field`)."""


@cache
def symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, real=True)


_FUNCTIONS = {"sqrt": sympy.sqrt, "exp": sympy.exp, "ln": sympy.log, "abs": sympy.Abs, "floor": sympy.floor,
              "ceil": sympy.ceiling}
"""The builtins of one argument that sympy has as functions (not `round`: sympy rounds numbers only)."""
_RELATIONS = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge, "==": sympy.Eq, "!=": sympy.Ne}


def to_sympy(e: n.Expr, bindings: dict[str, sympy.Expr] | None = None, closed_forms: bool = False) -> sympy.Expr:
    """Translate e; names in `bindings` are replaced by their formulas (used to expand eps0 = theta*eps).

    With `closed_forms` (the R²DP rule), normal_cdf and normal_pdf become their erf/exp forms and a single
    comparison becomes a sympy relation; elsewhere they are not symbolic (reports show their text).
    """
    return e.accept(_ToSympy(closed_forms), bindings or {})


Bindings = dict[str, sympy.Expr]


class _ToSympy(ExprVisitor[sympy.Expr, Bindings]):
    """Over the IR, and over the parser's tree too (a `Name` is a symbol like a reference): the corpus states
    expected values as bare expressions."""

    def __init__(self, closed_forms: bool):
        self.closed_forms = closed_forms

    def not_symbolic(self, e: n.Expr, bindings: Bindings) -> sympy.Expr:
        raise NotSymbolic(unparse(e))

    visit_bool_lit = visit_comprehension = visit_range = visit_bool_op = visit_member = not_symbolic
    visit_tag_test = visit_conditional = visit_tuple_lit = visit_list_lit = visit_tag_call = not_symbolic

    def visit_number(self, e: n.Number, bindings: Bindings) -> sympy.Expr:
        return sympy.Rational(e.value.numerator, e.value.denominator)

    def named(self, e: n.Ref | n.Name, bindings: Bindings) -> sympy.Expr:
        """A name is its binding's formula, or a real symbol (`q'` is the symbol `q'`)."""
        if not e.primed and e.text in bindings:
            return bindings[e.text]
        return symbol(e.text)

    visit_param_ref = visit_var_ref = visit_noise_ref = visit_let_ref = visit_local_ref = named
    visit_out_ref = visit_aligned_cost_ref = visit_name = named

    def visit_tag_lit(self, e: n.TagLit, bindings: Bindings) -> sympy.Expr:
        return symbol(e.tag)

    def visit_member_ref(self, e: n.MemberRef, bindings: Bindings) -> sympy.Expr:
        return symbol(f"{e.id}[{unparse(e.index)}]")

    def visit_index(self, e: n.Index, bindings: Bindings) -> sympy.Expr:
        if isinstance(e.base, n.Ref | n.Name):
            return symbol(f"{e.base.text}[{unparse(e.index)}]")
        return self.not_symbolic(e, bindings)

    def visit_binary(self, e: n.Binary, bindings: Bindings) -> sympy.Expr:
        left, right = e.left.accept(self, bindings), e.right.accept(self, bindings)
        if e.op in RING_OPERATIONS:
            return RING_OPERATIONS[e.op](left, right)
        if e.op in INTEGER_OPERATIONS:  # floor(left / right) and Mod, with Python's signs
            return INTEGER_OPERATIONS[e.op](left, right)
        if e.op == "/":
            return left / right
        return left ** right

    def visit_unary(self, e: n.Unary, bindings: Bindings) -> sympy.Expr:
        if e.op == "-":
            return -e.operand.accept(self, bindings)
        return self.not_symbolic(e, bindings)

    def visit_call(self, e: n.Call, bindings: Bindings) -> sympy.Expr:
        args = [a.accept(self, bindings) for a in e.args] if e.func in _FUNCTIONS or e.func in ("min", "max", "clamp") \
            or (self.closed_forms and e.func in ("normal_cdf", "normal_pdf")) else None
        if args is None:
            return self.not_symbolic(e, bindings)
        if e.func in ("min", "max"):
            if len(args) < 2:
                return self.not_symbolic(e, bindings)
            return sympy.Min(*args) if e.func == "min" else sympy.Max(*args)
        if e.func == "clamp":  # in its domain lo <= hi, which C0 asks of a noise parameter
            x, lo, hi = args
            return sympy.Min(sympy.Max(x, lo), hi)
        if e.func == "normal_cdf":
            return normal_cdf(args[0])
        if e.func == "normal_pdf":
            return normal_pdf(args[0])
        return _FUNCTIONS[e.func](args[0])

    def visit_compare(self, e: n.Compare, bindings: Bindings) -> sympy.Expr:
        if not self.closed_forms or len(e.ops) != 1:
            return self.not_symbolic(e, bindings)
        a, b = (x.accept(self, bindings) for x in e.operands)
        return _RELATIONS[e.ops[0]](a, b)


def show(expr: sympy.Expr) -> str:
    """A sympy formula in the spec language's own notation (`ln`, `^`)."""
    return notation(sympy.sstr(expr, order="none"))


def cancel_ln_exp(expr: sympy.Expr) -> sympy.Expr:
    """ln(exp(x)) = x: every symbol here is real, so this is exact where x is defined (sympy itself cancels only
    where it can tell x is real: not 2/b, which it allows to be infinite)."""
    return expr.replace(lambda e: isinstance(e, sympy.log) and isinstance(e.args[0], sympy.exp),
                        lambda e: e.args[0].args[0])


def simplify(expr: sympy.Expr) -> sympy.Expr:
    """sympy.simplify, after cancelling ln(exp(x)) = x."""
    return sympy.simplify(cancel_ln_exp(expr))


def from_z3(term) -> sympy.Expr:
    """A z3 term of the encoding as a sympy formula (to print it as math, or in the spec's notation): numbers,
    names, arithmetic, `ToReal` (dropped: the spec's ints are reals in a formula), if-then-else (as Piecewise),
    comparisons and the connectives; `exp` and `ln` (uninterpreted in z3) as the functions. Raises `NotSymbolic`
    for anything else (arrays, other uninterpreted functions)."""
    # lazy: loads z3 only when this runs (start-up; tests/test_layers.py)
    import z3

    def go(t):
        if z3.is_int_value(t):
            return sympy.Integer(t.as_long())
        if z3.is_rational_value(t):
            return sympy.Rational(t.numerator_as_long(), t.denominator_as_long())
        if z3.is_true(t):
            return sympy.true
        if z3.is_false(t):
            return sympy.false
        if not z3.is_app(t):
            raise NotSymbolic(str(t))
        kind = t.decl().kind()
        args = t.children()
        if kind == z3.Z3_OP_UNINTERPRETED:
            name = t.decl().name()
            if not args:
                return symbol(name)
            if len(args) == 1 and name in ("exp", "ln"):
                return (sympy.exp if name == "exp" else sympy.log)(go(args[0]))
            raise NotSymbolic(str(t))
        if kind in (z3.Z3_OP_TO_REAL, z3.Z3_OP_TO_INT) and len(args) == 1:
            inner = go(args[0])
            return inner if kind == z3.Z3_OP_TO_REAL else sympy.floor(inner)
        parts = [go(a) for a in args]
        if kind == z3.Z3_OP_ADD:
            return sympy.Add(*parts)
        if kind == z3.Z3_OP_SUB:
            return parts[0] - sympy.Add(*parts[1:])
        if kind == z3.Z3_OP_UMINUS:
            return -parts[0]
        if kind == z3.Z3_OP_MUL:
            return sympy.Mul(*parts)
        if kind == z3.Z3_OP_DIV:
            return parts[0] / parts[1]
        if kind == z3.Z3_OP_POWER:
            return parts[0] ** parts[1]
        if kind == z3.Z3_OP_ITE:
            return sympy.Piecewise((parts[1], parts[0]), (parts[2], True))
        relations = {z3.Z3_OP_LE: sympy.Le, z3.Z3_OP_LT: sympy.Lt, z3.Z3_OP_GE: sympy.Ge, z3.Z3_OP_GT: sympy.Gt,
                     z3.Z3_OP_EQ: sympy.Eq, z3.Z3_OP_DISTINCT: sympy.Ne}
        if kind in relations and len(parts) == 2:
            return relations[kind](*parts)
        connectives = {z3.Z3_OP_AND: sympy.And, z3.Z3_OP_OR: sympy.Or, z3.Z3_OP_NOT: sympy.Not}
        if kind in connectives:
            return connectives[kind](*parts)
        raise NotSymbolic(str(t))

    return go(term)


def to_z3(expr: sympy.Expr, symbols: dict[str, object], ctx=None):
    """A sympy formula of numbers, the symbols named in `symbols` (z3 constants, by name), sums, products and
    integer powers back as a z3 term (real, in `ctx`); raises `NotSymbolic` for anything else. `from_z3`'s inverse
    on that fragment."""
    # lazy: loads z3 only when this runs (start-up; tests/test_layers.py)
    import z3

    def go(e):
        if e.is_Integer or e.is_Rational:
            p, q = sympy.fraction(e)
            return z3.RealVal(f"{int(p)}/{int(q)}", ctx)
        if e.is_Symbol:
            if e.name not in symbols:
                raise NotSymbolic(e.name)
            t = symbols[e.name]
            return z3.ToReal(t) if z3.is_int(t) else t
        if e.is_Add:
            return z3.Sum([go(a) for a in e.args])
        if e.is_Mul:
            return z3.Product([go(a) for a in e.args])
        if e.is_Pow and e.exp.is_Integer:
            base, k = go(e.base), int(e.exp)
            power = z3.Product([base] * abs(k)) if k else z3.RealVal(1, ctx)
            return power if k >= 0 else 1 / power
        raise NotSymbolic(str(e))

    return go(expr)


def z3_text(term) -> str:
    """A z3 term in the spec language's notation, simplified by sympy (`eps/c`, not z3's
    `1/2*eps*(1/ToReal(c))`); a term with no sympy counterpart here is printed by z3 without its `ToReal`s."""
    try:
        return show(sympy.simplify(from_z3(term)))
    except NotSymbolic:
        text, previous = " ".join(str(term).split()), None
        while text != previous:
            previous, text = text, re.sub(r"ToReal\(([^()]*)\)", r"\1", text)
        return text


_NEGATED = {"<=": ">", "<": ">=", ">=": "<", ">": "<=", "==": "!=", "!=": "=="}


def formula_text(term) -> str:
    """A z3 formula (connectives over comparisons) in the spec language's notation: `and`, `or`, `not`, each
    comparison's sides by `z3_text` (a negated comparison is written as the opposite one)."""
    # lazy: loads z3 only when this runs (start-up; tests/test_layers.py)
    import z3

    relations = {z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">", z3.Z3_OP_EQ: "=="}

    def go(t, outer: str) -> str:
        kind = t.decl().kind() if z3.is_app(t) else None
        if kind in (z3.Z3_OP_AND, z3.Z3_OP_OR):
            op = "and" if kind == z3.Z3_OP_AND else "or"
            text = f" {op} ".join(go(a, op) for a in t.children())
            return f"({text})" if outer not in ("", op) else text
        if kind == z3.Z3_OP_NOT:
            inner = t.children()[0]
            if z3.is_app(inner) and inner.decl().kind() in relations and not z3.is_bool(inner.children()[0]):
                a, b = inner.children()
                return f"{z3_text(a)} {_NEGATED[relations[inner.decl().kind()]]} {z3_text(b)}"
            return f"not {go(inner, 'not')}"
        if kind in relations and not z3.is_bool(t.children()[0]):
            a, b = t.children()
            return f"{z3_text(a)} {relations[kind]} {z3_text(b)}"
        return z3_text(t)

    return go(term, "")


class TermText:
    """`template` with z3 terms in its `{}`s, printed by `z3_text` only when the text is shown (sympy's simplify
    takes milliseconds, and most such texts describe a condition that holds)."""

    def __init__(self, template: str, *terms):
        self.template = template
        self.terms = terms

    def __str__(self) -> str:
        return self.template.format(*(z3_text(t) for t in self.terms))
