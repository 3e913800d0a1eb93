"""sympy formulas as z3 terms: the cost coefficients the obligations state in sympy (symbolic.py) become terms of
the encoding (encode.py) here."""

from __future__ import annotations

import sympy
import z3

from ..symbolic import NotSymbolic
from . import terms as zt


def to_z3(expr: sympy.Expr, lookup, function):
    """A sympy formula as a z3 term; `lookup(name)` gives each symbol's term, `function(name)` an
    uninterpreted function for exp and ln (sound for proofs; see smt/encode.py)."""
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
        if isinstance(e, (sympy.floor, sympy.ceiling)):  # z3's to_int is the floor
            x = real(go(e.args[0]))
            return z3.ToInt(x) if isinstance(e, sympy.floor) else -z3.ToInt(-x)
        if isinstance(e, sympy.exp):
            return function("exp")(real(go(e.args[0])))
        if isinstance(e, sympy.log):
            return function("ln")(real(go(e.args[0])))
        raise NotSymbolic(str(e))

    return go(expr)
