"""Expressions as sympy formulas: simplified cost coefficients and shifts for reports (and, later, the checker).

Only arithmetic over named quantities is translated; anything else raises `NotSymbolic`, and callers fall
back to the source text. Names become real sympy symbols (q' becomes the symbol `q'`, q[i] the symbol `q[i]`).
"""

from __future__ import annotations

from functools import cache

import sympy

from . import nodes as n
from .unparse import unparse


class NotSymbolic(Exception):
    """The expression has a construct with no sympy counterpart here."""


@cache
def symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, real=True)


_FUNCTIONS = {"sqrt": sympy.sqrt, "exp": sympy.exp, "ln": sympy.log, "abs": sympy.Abs}


def to_sympy(e: n.Expr, bindings: dict[str, sympy.Expr] | None = None) -> sympy.Expr:
    """Translate e; names in `bindings` are replaced by their formulas (used to expand eps0 = theta*eps)."""
    bindings = bindings or {}
    if isinstance(e, n.Number):
        return sympy.Rational(e.value.numerator, e.value.denominator)
    if isinstance(e, n.Name):
        if not e.primed and e.id in bindings:
            return bindings[e.id]
        return symbol(e.text)
    if isinstance(e, n.Index) and isinstance(e.base, n.Name):
        return symbol(f"{e.base.text}[{unparse(e.index)}]")
    if isinstance(e, n.Binary):
        left, right = to_sympy(e.left, bindings), to_sympy(e.right, bindings)
        if e.op in n.RING_OPERATIONS:
            return n.RING_OPERATIONS[e.op](left, right)
        if e.op == "/":
            return left / right
        return left ** right
    if isinstance(e, n.Unary) and e.op == "-":
        return -to_sympy(e.operand, bindings)
    if isinstance(e, n.Call) and e.func in _FUNCTIONS and len(e.args) == 1:
        return _FUNCTIONS[e.func](to_sympy(e.args[0], bindings))
    if isinstance(e, n.Call) and e.func in ("min", "max") and len(e.args) >= 2:
        args = [to_sympy(a, bindings) for a in e.args]
        return sympy.Min(*args) if e.func == "min" else sympy.Max(*args)
    raise NotSymbolic(unparse(e))


def show(expr: sympy.Expr) -> str:
    """A sympy formula in the spec language's own notation (`ln`, `^`)."""
    text = sympy.sstr(expr, order="none")
    for sympy_name, ours in (("**", "^"), ("log(", "ln("), ("Abs(", "abs("), ("Max(", "max("), ("Min(", "min(")):
        text = text.replace(sympy_name, ours)
    return text


def simplify(expr: sympy.Expr) -> sympy.Expr:
    """sympy.simplify, after cancelling ln(exp(x)) = x (every symbol here is real, so this is exact)."""
    expr = expr.replace(lambda e: isinstance(e, sympy.log) and isinstance(e.args[0], sympy.exp),
                        lambda e: e.args[0].args[0])
    return sympy.simplify(expr)


def to_z3(expr: sympy.Expr, lookup, function):
    """A sympy formula as a z3 term; `lookup(name)` gives each symbol's term, `function(name)` an
    uninterpreted function for exp and ln (sound for proofs; see checker/encode.py)."""
    import z3

    from .checker import terms as zt

    def real(x):
        return z3.ToReal(x) if z3.is_int(x) else x

    def go(e):
        if e.is_Symbol:
            return lookup(e.name)
        if e.is_Integer:
            return zt.IntVal(int(e))
        if e.is_Rational:
            return zt.RealVal(f"{e.p}/{e.q}")
        if e.is_Add:
            return zt.Sum([real(go(a)) for a in e.args])
        if e.is_Mul:
            result = real(go(e.args[0]))
            for a in e.args[1:]:
                result = result * real(go(a))
            return result
        if e.is_Pow:
            base, exponent = e.args
            if exponent.is_Integer:
                k = int(exponent)
                b = real(go(base))
                result = zt.RealVal(1)
                for _ in range(abs(k)):
                    result = result * b
                return result if k >= 0 else 1 / result
            return real(go(base)) ** real(go(exponent))
        if isinstance(e, sympy.Abs):
            x = real(go(e.args[0]))
            return z3.If(x >= 0, x, -x)
        if isinstance(e, (sympy.Max, sympy.Min)):
            args = [real(go(a)) for a in e.args]
            result = args[0]
            for a in args[1:]:
                result = z3.If(a > result, a, result) if isinstance(e, sympy.Max) else z3.If(a < result, a, result)
            return result
        if isinstance(e, sympy.exp):
            return function("exp")(real(go(e.args[0])))
        if isinstance(e, sympy.log):
            return function("ln")(real(go(e.args[0])))
        raise NotSymbolic(str(e))

    return go(expr)
