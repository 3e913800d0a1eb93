"""Nodes back to source text, with the fewest parentheses that keep the meaning (for reports and proofs)."""

from __future__ import annotations

from fractions import Fraction

from . import nodes as n

# Binding strength of each construct; larger binds tighter (mirrors grammar.lark).
_TERNARY, _OR, _AND, _NOT, _COMPARE, _SUM, _PRODUCT, _UNARY, _POWER, _POSTFIX = range(10)


def format_number(value: Fraction, is_integer: bool = False) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    as_float = float(value)
    if Fraction(repr(as_float)) == value:
        return repr(as_float)
    return f"{value.numerator}/{value.denominator}"


def unparse(e: n.Expr) -> str:
    return _unparse(e)[0]


def _wrap(e: n.Expr, strength: int) -> str:
    text, level = _unparse(e)
    return f"({text})" if level < strength else text


def _unparse(e: n.Expr) -> tuple[str, int]:
    if isinstance(e, n.Number):
        text = format_number(e.value, e.is_integer)
        return (text, _UNARY) if e.value < 0 else (text, _POSTFIX)
    if isinstance(e, n.BoolLit):
        return ("true" if e.value else "false"), _POSTFIX
    if isinstance(e, n.Name):
        return e.text, _POSTFIX
    if isinstance(e, n.Call):
        return f"{e.func}({', '.join(unparse(a) for a in e.args)})", _POSTFIX
    if isinstance(e, n.Comprehension):
        # Written as the parser reads it: `v in D if filters: body`, or `v not in S: body` with no universe.
        filters = [_wrap(e.condition, _AND + 1)] if e.condition is not None else []
        if e.excluded is not None:
            excluded = f"{e.var} not in {_wrap(e.excluded, _SUM)}"
            if e.domain is None:
                head = excluded
            else:
                head = f"{e.var} in {unparse(e.domain)}"
                filters.insert(0, excluded)
        else:
            head = f"{e.var} in {unparse(e.domain)}" if e.domain is not None else e.var
        cond = f" if {' and '.join(filters)}" if filters else ""
        return f"{e.func}({head}{cond}: {unparse(e.body)})", _POSTFIX
    if isinstance(e, n.Range):
        return f"{_wrap(e.lo, _SUM)} .. {_wrap(e.hi, _SUM)}", _COMPARE
    if isinstance(e, n.Binary):
        if e.op == "^":
            return f"{_wrap(e.left, _POSTFIX)}^{_wrap(e.right, _UNARY)}", _POWER
        level = _SUM if e.op in "+-" else _PRODUCT
        right_level = level + 1  # left-associative: a - (b - c) keeps its parentheses
        return f"{_wrap(e.left, level)} {e.op} {_wrap(e.right, right_level)}", level
    if isinstance(e, n.Unary):
        if e.op == "not":
            return f"not {_wrap(e.operand, _NOT)}", _NOT
        return f"-{_wrap(e.operand, _UNARY)}", _UNARY
    if isinstance(e, n.Compare):
        parts = [_wrap(e.operands[0], _SUM)]
        for op, operand in zip(e.ops, e.operands[1:]):
            parts += [op, _wrap(operand, _SUM)]
        return " ".join(parts), _COMPARE
    if isinstance(e, n.BoolOp):
        level = _OR if e.op == "or" else _AND
        return f"{_wrap(e.left, level)} {e.op} {_wrap(e.right, level + 1)}", level
    if isinstance(e, n.Member):
        op = "not in" if e.negated else "in"
        collection = unparse(e.collection) if isinstance(e.collection, n.Range) else _wrap(e.collection, _SUM)
        return f"{_wrap(e.element, _SUM)} {op} {collection}", _COMPARE
    if isinstance(e, n.TagTest):
        return f"{_wrap(e.value, _SUM)} is {e.tag}", _COMPARE
    if isinstance(e, n.Conditional):
        return (f"{_wrap(e.condition, _OR)} ? {_wrap(e.then, _TERNARY)} : {_wrap(e.orelse, _TERNARY)}",
                _TERNARY)
    if isinstance(e, n.Index):
        return f"{_wrap(e.base, _POSTFIX)}[{unparse(e.index)}]", _POSTFIX
    if isinstance(e, n.TupleLit):
        inner = ", ".join(unparse(i) for i in e.items)
        return f"({inner}{',' if len(e.items) == 1 else ''})", _POSTFIX
    if isinstance(e, n.ListLit):
        return "[" + ", ".join(unparse(i) for i in e.items) + "]", _POSTFIX
    raise TypeError(f"unparse: unexpected node {type(e).__name__} (this is probably a bug in align)")
