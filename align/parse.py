"""Stage 1 (text -> nodes): parse a `.dp` file with lark and build the frozen nodes of `nodes.py`.

Syntax errors never escape as lark exceptions: `parse_source` turns them into located diagnostics,
naming common mistakes (Python-style blocks, `=` in a condition, `range(...)`, `elif`, an unprimed
shift) from example programs, as lark's `match_examples` does (see `_SIGNATURES` for why we match on the
parser state and token alone).

This is also where hostile input stops (align/limits.py): `files.read_source` reads only regular text files
of the repository and at most MAX_SOURCE_BYTES of them; the nesting depth of the tree is measured, without
recursion, before the recursive transformer runs; number literals are checked for length and range before
any exact arithmetic (`exact_number`); and arithmetic on literals alone is evaluated with the same bounds
(`_Build._fold`), so that no later stage meets a constant it cannot afford.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
import sys
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

import lark
from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from . import cache
from . import nodes as n
from .adjacency import AdjacencyKind
from .diagnostics import Diagnostic, SpecError, diag
from .files import read_bytes as read_bytes  # the front end's readers, imported here by tests and benches
from .files import read_source as read_source
from .limits import (
    MAX_CONSTANT_BITS,
    MAX_DECIMAL_EXPONENT,
    MAX_INTEGER_LITERAL,
    MAX_LITERAL_DIGITS,
    MAX_NESTING_DEPTH,
    MAX_POWER_EXPONENT,
    MAX_SAMPLING_SITES,
)
from .operators import INTEGER_OPERATIONS, RING_OPERATIONS
from .span import Source, Span

_GRAMMAR = os.path.join(os.path.dirname(__file__), "grammar.lark")
_PARSER_OPTIONS: dict[str, Any] = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": True,
                                   "start": ["start", "expr"]}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """The LALR parser of grammar.lark. Building its tables takes about 0.2 s, most of `align check`'s time on
    one spec; the built parser is kept in the user's cache directory (`_cache_path`) and loaded from there
    (about 15 ms) by later processes."""
    with open(_GRAMMAR, encoding="utf-8") as f:
        grammar = f.read()
    path = _cache_path(grammar)
    if path is not None:
        # missing, truncated or from another lark: build it again
        with contextlib.suppress(Exception), open(path, "rb") as f:
            return Lark.load(f)
    parser = Lark(grammar, **_PARSER_OPTIONS)
    if path is not None:
        cache.write(path, parser.save)
    return parser


def _cache_path(grammar: str) -> str | None:
    """Where the built parser of this grammar, lark version and Python version is kept (`cache.directory`)."""
    return cache.path("parser", (grammar, repr(sorted(_PARSER_OPTIONS.items())), lark.__version__, sys.version),
                      "lark")




class _Build(Transformer):
    """Lark tree -> nodes. Each method receives the rule's children and its position (`meta`)."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path
        self._constants: dict[int, Fraction] = {}
        """id(node) -> exact value, for the constant nodes built so far (the nodes stay alive in the tree)."""
        self._integers: set[int] = set()
        """id(node) of the constants of type int: integer literals, and + - * on them (the resolver's rule)."""
        self._approximate: dict[int, float] = {}
        """id(node) -> approximate value of the constants that are not rational (`exp(2)`, `sqrt(2) * 3`)."""

    # -- helpers -------------------------------------------------------------------------------------
    def _span(self, meta) -> Span:
        return Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok(self, token: Token) -> Span:
        # The lexer sets the position of every token it makes; lark types it Optional for tokens made by hand.
        line, column, end_line, end_column = token.line, token.column, token.end_line, token.end_column
        assert line is not None and column is not None and end_line is not None and end_column is not None
        return Span(self.path, line, column, end_line, end_column)

    @staticmethod
    def _present(children):
        return [c for c in children if c is not None]

    # -- file -----------------------------------------------------------------------------------------
    def start(self, children):
        return children

    @v_args(meta=True)
    def mechanism(self, meta, children):
        name, *rest = self._present(children)
        params = tuple(c for c in rest if isinstance(c, n.Param))
        adjacency: list[n.Adjacency] = []
        requires: list[n.Expr] = []
        privacy: list[n.Expr] = []
        examples: list[n.Example] = []
        body: tuple = ()
        for c in rest:
            if isinstance(c, tuple) and c and c[0] == "adjacent":
                adjacency.extend(c[1])
            elif isinstance(c, tuple) and c and c[0] == "requires":
                requires.extend(c[1])
            elif isinstance(c, tuple) and c and c[0] == "privacy":
                privacy.append(c[1])
            elif isinstance(c, tuple) and c and c[0] == "example":
                examples.extend(c[1])
            elif isinstance(c, list):
                body = tuple(c)
        return n.Mechanism(str(name), self._tok(name), params, tuple(adjacency), tuple(requires),
                           tuple(privacy), body, self._span(meta), tuple(examples))

    @v_args(meta=True)
    def param(self, meta, children):
        name, type_, lo, hi = children
        domain = n.Domain(lo, hi, Span(self.path, lo.span.line, lo.span.column, hi.span.end_line,
                                       hi.span.end_column)) if lo is not None else None
        return n.Param(str(name), type_, self._span(meta), domain)

    @v_args(meta=True)
    def type(self, meta, children):
        base, suffix = (children + [None])[:2]
        return n.TypeExpr(str(base), suffix is not None, self._span(meta))

    def adjacent_clause(self, children):
        return ("adjacent", children)

    def requires_clause(self, children):
        return ("requires", children)

    def privacy_clause(self, children):
        return ("privacy", children[0])

    def example_clause(self, children):
        return ("example", children)

    @v_args(meta=True)
    def example_value(self, meta, children):
        name, value = children
        return n.Example(str(name), self._tok(name), value, self._span(meta))

    @v_args(meta=True)
    def example_length(self, meta, children):
        func, name, value = children
        return n.Example(str(name), self._tok(name), value, self._span(meta), length=True, func=str(func))

    def _bounded_list(self, kind: AdjacencyKind, meta, children) -> n.Adjacency:
        var, i, primed, j, bound = children  # |q[i] - q'[j]| <= c, sum |...| <= c, count q[i] != q'[j] <= c
        return n.Adjacency(kind, str(var), self._tok(var), bound, self._span(meta), primed_var=str(primed)[:-1],
                           index_vars=(str(i), str(j)))

    @v_args(meta=True)
    def adj_pointwise(self, meta, children):
        return self._bounded_list(AdjacencyKind.POINTWISE, meta, children)

    @v_args(meta=True)
    def adj_l1(self, meta, children):
        return self._bounded_list(AdjacencyKind.L1, meta, children)

    @v_args(meta=True)
    def adj_count(self, meta, children):
        return self._bounded_list(AdjacencyKind.COUNT, meta, children)

    @v_args(meta=True)
    def adj_scalar(self, meta, children):
        var, primed, bound = children
        return n.Adjacency(AdjacencyKind.SCALAR, str(var), self._tok(var), bound, self._span(meta),
                           primed_var=str(primed)[:-1])

    @v_args(meta=True)
    def adj_monotone(self, meta, children):
        (var,) = children
        return n.Adjacency(AdjacencyKind.MONOTONE, str(var), self._tok(var), None, self._span(meta),
                           primed_var=str(var))

    def _one_sided(self, kind: AdjacencyKind, meta, children) -> n.Adjacency:
        primed, j, var, i = children  # q'[j] >= q[i]
        return n.Adjacency(kind, str(var), self._tok(var), None, self._span(meta), primed_var=str(primed)[:-1],
                           index_vars=(str(i), str(j)))

    @v_args(meta=True)
    def adj_increasing(self, meta, children):
        return self._one_sided(AdjacencyKind.INCREASING, meta, children)

    @v_args(meta=True)
    def adj_decreasing(self, meta, children):
        return self._one_sided(AdjacencyKind.DECREASING, meta, children)

    @v_args(meta=True)
    def adj_records(self, meta, children):
        func, primed, func2, var, change, number = children  # len(q') = len(q) ± 1
        span = self._span(meta)
        if str(func) != "len" or str(func2) != "len":
            wrong = func if str(func) != "len" else func2
            raise _SyntaxProblem(diag("adjacency-mismatch", self._tok(wrong), message=f"compares `{wrong}(...)`; a "
                                      "clause on the number of records compares lengths: `len(q') = len(q) ± 1`"))
        if str(number) != "1":
            raise _SyntaxProblem(diag("adjacency-mismatch", self._tok(number),
                                      message=f"changes the length by {number}; neighbours differ by one record: "
                                              "`len(q') = len(q) ± 1`"))
        kind = {"+": AdjacencyKind.ADD, "-": AdjacencyKind.REMOVE}.get(str(change), AdjacencyKind.ADD_REMOVE)
        return n.Adjacency(kind, str(var), self._tok(var), None, span, primed_var=str(primed)[:-1])

    # -- statements -------------------------------------------------------------------------------------
    def block(self, children):
        return [c for c in children if c is not None and not isinstance(c, Token)]

    @v_args(meta=True)
    def assign(self, meta, children):
        target, value = children
        return n.Assign(str(target), self._tok(target), None, value, self._span(meta))

    @v_args(meta=True)
    def index_assign(self, meta, children):
        target, index, value = children
        return n.Assign(str(target), self._tok(target), index, value, self._span(meta))

    @v_args(meta=True)
    def sample(self, meta, children):
        var, dist, *args = children
        return n.Sample(str(var), self._tok(var), str(dist), self._tok(dist), tuple(self._present(args)),
                        self._span(meta))

    @v_args(meta=True)
    def if_stmt(self, meta, children):
        condition, then, orelse = (children + [None])[:3]
        if orelse is None:
            orelse = ()
        elif isinstance(orelse, n.If):
            orelse = (orelse,)
        return n.If(condition, tuple(then), tuple(orelse), self._span(meta))

    @v_args(meta=True)
    def for_stmt(self, meta, children):
        var, lo, hi, body = children
        return n.For(str(var), self._tok(var), lo, hi, tuple(body), self._span(meta))

    @v_args(meta=True)
    def while_stmt(self, meta, children):
        condition, body = children
        return n.While(condition, tuple(body), self._span(meta))

    @v_args(meta=True)
    def break_stmt(self, meta, children):
        return n.Break(self._span(meta))

    @v_args(meta=True)
    def output_stmt(self, meta, children):
        return n.Output(children[0], self._span(meta))

    # -- alignment ----------------------------------------------------------------------------------------
    @v_args(meta=True)
    def alignment(self, meta, children):
        name, *items = children
        items = tuple(i for i in items if i is not None and not isinstance(i, Token))
        return n.Alignment(str(name), self._tok(name), items, self._span(meta))

    @v_args(meta=True)
    def release(self, meta, children):
        name, body = children
        return n.Release(str(name), self._tok(name), tuple(body), self._span(meta))

    @v_args(meta=True)
    def auto_alignment(self, meta, children):
        (name,) = children
        return n.Alignment(str(name), self._tok(name), (), self._span(meta), auto=True)

    @v_args(meta=True)
    def let_item(self, meta, children):
        name, value = children
        return n.Let(str(name), value, self._span(meta), self._tok(name))

    @v_args(meta=True)
    def shift_item(self, meta, children):
        lhs, rhs = children
        return n.Shift(str(lhs)[:-1], None, rhs, self._span(meta), self._tok(lhs))

    @v_args(meta=True)
    def family_shift_item(self, meta, children):
        var, index, prime, rhs = children
        lhs_span = self._tok(var).to(self._tok(prime))
        return n.Shift(str(var), str(index), rhs, self._span(meta), lhs_span, rhs_index=str(index))

    @v_args(meta=True)
    def invariant_item(self, meta, children):
        return n.Invariant(children[0], self._span(meta))

    # -- expressions ------------------------------------------------------------------------------------------
    @v_args(meta=True)
    def number(self, meta, children):
        (token,) = children
        text = str(token)
        span = self._span(meta)
        try:
            value = exact_number(text)
        except NumberError as error:
            raise _SyntaxProblem(diag(error.code, span, **error.fields)) from None
        is_integer = re.fullmatch(r"[0-9]+", text) is not None
        if is_integer and value > MAX_INTEGER_LITERAL:  # the interpreter's ints are 64-bit, as numpy's
            raise _SyntaxProblem(diag("number-out-of-range", span, text=_short(text), reason=_INTEGER_RANGE))
        return self._fold(n.Number(value, is_integer, span), value, is_integer)

    # -- constants: arithmetic on literals alone, evaluated exactly within the limits ---------------------
    def _value(self, node) -> Fraction | None:
        """The exact value of a constant node built earlier (literals and arithmetic on them), or None."""
        return self._constants.get(id(node))

    def _magnitude(self, node) -> float | None:
        """The value, exact or approximate, of a constant node as a double (finite: constants obey the range)."""
        exact = self._constants.get(id(node))
        return float(exact) if exact is not None else self._approximate.get(id(node))

    def _fold_approximate(self, node, compute):
        """Remember the approximate value of a constant that is not rational, `compute()`, after checking its
        magnitude: sympy evaluates such constants numerically (`exp(exp(1e300))` overflows mpmath) and the
        interpreter in doubles. A result that is not real (`sqrt(-1)`, `ln(0)`) is left to later stages."""
        try:
            x = compute()
        except OverflowError:
            x = math.inf
        except (ValueError, ZeroDivisionError):
            return node
        if isinstance(x, complex) or math.isnan(x):
            return node
        if not abs(x) < _FLOAT_HI or 0 < abs(x) < _FLOAT_LO:
            raise _SyntaxProblem(diag("constant-out-of-range", node.span, reason=_MAGNITUDE_RANGE))
        self._approximate[id(node)] = x
        return node

    def _fold(self, node, value: Fraction | None, integer: bool = False):
        """Remember `node`'s exact value, after checking it against the limits of constants.

        The value is never stored in the node: later stages compute with the node as written. It is
        computed here only to refuse, at its source location, a constant that sympy, z3 or the
        interpreters would choke on (`1e300 * 1e300`, `2 ^ 64 ^ 64`, a sum of a thousand fractions, an
        int past the interpreter's 64 bits).
        """
        if value is not None:
            reason = constant_problem(value)
            if reason is None and integer and not -MAX_INTEGER_LITERAL - 1 <= value <= MAX_INTEGER_LITERAL:
                reason = "an integer constant lies between -2^63 and 2^63 - 1"
            if reason is not None:
                raise _SyntaxProblem(diag("constant-out-of-range", node.span, reason=reason))
            self._constants[id(node)] = value
            if integer:
                self._integers.add(id(node))
        return node

    @staticmethod
    def _arith(op: str, a: Fraction, b: Fraction) -> Fraction | None:
        """a op b exactly (op one of + - * / // %), or None for a division by zero, or `//` and `%` on a
        non-integer, which are left to the later stages as written (the resolver refuses real operands of
        `//` and `%`). Both operands obey the limits, so this costs microseconds."""
        if op in RING_OPERATIONS:
            return RING_OPERATIONS[op](a, b)
        if op in INTEGER_OPERATIONS:
            whole = a.denominator == 1 and b.denominator == 1 and b != 0
            return Fraction(INTEGER_OPERATIONS[op](a.numerator, b.numerator)) if whole else None
        return a / b if b != 0 else None

    def _power(self, node: n.Binary, a: Fraction, k: Fraction) -> Fraction | None:
        """a ^ k exactly for an integer k (|k| <= MAX_POWER_EXPONENT); None when it is not a rational
        constant (a fractional exponent, 0 to a negative power)."""
        if k.denominator != 1 or (a == 0 and k < 0):
            return None
        bits = max(a.numerator.bit_length(), a.denominator.bit_length())
        if bits * abs(k.numerator) > MAX_CONSTANT_BITS + bits:  # refuse before computing a huge power
            raise _SyntaxProblem(diag("constant-out-of-range", node.span,
                                      reason=f"its exact value needs more than {MAX_CONSTANT_BITS} bits"))
        return a ** k.numerator

    @v_args(meta=True)
    def true(self, meta, children):
        return n.BoolLit(True, self._span(meta))

    @v_args(meta=True)
    def false(self, meta, children):
        return n.BoolLit(False, self._span(meta))

    @v_args(meta=True)
    def name(self, meta, children):
        return n.Name(str(children[0]), False, self._span(meta))

    @v_args(meta=True)
    def primed_name(self, meta, children):
        return n.Name(str(children[0])[:-1], True, self._span(meta))

    @v_args(meta=True)
    def conditional(self, meta, children):
        condition, then, orelse = children
        return n.Conditional(condition, then, orelse, self._span(meta))

    @v_args(meta=True)
    def or_op(self, meta, children):
        return n.BoolOp("or", children[0], children[1], self._span(meta))

    @v_args(meta=True)
    def and_op(self, meta, children):
        return n.BoolOp("and", children[0], children[1], self._span(meta))

    @v_args(meta=True)
    def not_op(self, meta, children):
        return n.Unary("not", children[0], self._span(meta))

    @v_args(meta=True)
    def compare_chain(self, meta, children):
        operands = tuple(children[0::2])
        ops = tuple(str(op) for op in children[1::2])
        return n.Compare(ops, operands, self._span(meta))

    @v_args(meta=True)
    def member(self, meta, children):
        return n.Member(children[0], children[1], False, self._span(meta))

    @v_args(meta=True)
    def not_member(self, meta, children):
        return n.Member(children[0], children[1], True, self._span(meta))

    @v_args(meta=True)
    def range(self, meta, children):
        return n.Range(children[0], children[1], self._span(meta))

    @v_args(meta=True)
    def tag_test(self, meta, children):
        value, tag = children
        return n.TagTest(value, str(tag), self._tok(tag), self._span(meta))

    @v_args(meta=True)
    def binary(self, meta, children):
        left, op, right = children
        node = n.Binary(str(op), left, right, self._span(meta))
        a, b = self._value(left), self._value(right)
        if a is None or b is None:
            x, y = self._magnitude(left), self._magnitude(right)
            if x is None or y is None:
                return node
            if node.op not in _FLOAT_OPERATIONS:  # `//` or `%` of a constant that is not rational: a type error
                return node
            return self._fold_approximate(node, lambda: _FLOAT_OPERATIONS[node.op](x, y))
        integer = (node.op in RING_OPERATIONS or node.op in INTEGER_OPERATIONS) and id(left) in self._integers \
            and id(right) in self._integers
        return self._fold(node, self._arith(node.op, a, b), integer)

    @v_args(meta=True)
    def power(self, meta, children):
        base, exponent = children
        node = n.Binary("^", base, exponent, self._span(meta))
        k, magnitude = self._value(exponent), self._magnitude(exponent)
        if magnitude is not None and abs(magnitude) > MAX_POWER_EXPONENT:
            raise _SyntaxProblem(diag("power-out-of-range", exponent.span,
                                      value=_short(k if k is not None else f"about {magnitude:.6g}"),
                                      limit=MAX_POWER_EXPONENT))
        a = self._value(base)
        if a is not None and k is not None:
            exact = self._power(node, a, k)
            if exact is not None:
                return self._fold(node, exact)
        x = self._magnitude(base)
        if x is None or magnitude is None:
            return node
        return self._fold_approximate(node, lambda: x**magnitude)

    @v_args(meta=True)
    def negate(self, meta, children):
        operand = children[0]
        if isinstance(operand, n.Number):
            # Fold `-3` into a literal so that spans and printed formulas stay simple.
            return self._fold(n.Number(-operand.value, operand.is_integer, self._span(meta)), -operand.value,
                              operand.is_integer)
        value, node = self._value(operand), n.Unary("-", operand, self._span(meta))
        if value is None:
            x = self._magnitude(operand)
            return node if x is None else self._fold_approximate(node, lambda: -x)
        return self._fold(node, -value, id(operand) in self._integers)

    @v_args(meta=True)
    def index(self, meta, children):
        return n.Index(children[0], children[1], self._span(meta))

    @v_args(meta=True)
    def tuple(self, meta, children):
        return n.TupleLit(tuple(self._present(children)), self._span(meta))

    @v_args(meta=True)
    def list(self, meta, children):
        return n.ListLit(tuple(self._present(children)), self._span(meta))

    def positional_args(self, children):
        return ("positional", tuple(children))

    def comprehension_args(self, children):
        domain, condition, body = children
        return ("comprehension", domain, condition, body)

    @v_args(meta=True)
    def call(self, meta, children):
        func, args = children
        span, func_span = self._span(meta), self._tok(func)
        if args is None:
            return n.Call(str(func), (), span, func_span)
        if args[0] == "positional":
            node = n.Call(str(func), args[1], span, func_span)
            values = [self._magnitude(a) for a in node.args]
            if node.func in _FLOAT_FUNCTIONS and len(values) == 1 and values[0] is not None:
                return self._fold_approximate(node, lambda: _FLOAT_FUNCTIONS[node.func](values[0]))
            return node
        _, domain, condition, body = args
        if not isinstance(domain, n.Member) or not isinstance(domain.element, n.Name) or domain.element.primed:
            raise _SyntaxProblem(diag("unexpected-token", domain.span if hasattr(domain, "span") else span,
                                      found="this expression", expected="`var in a .. b` or `var in S` before `:`"))
        var = domain.element
        if domain.negated:
            universe, excluded = None, domain.collection
        else:
            universe, excluded = domain.collection, None
        return n.Comprehension(str(func), var.id, var.span, universe, excluded, condition, body, span, func_span)


# ---------------------------------------------------------------------------------------------- limits


class NumberError(ValueError):
    """A number's text breaks a limit of align/limits.py; `code` and `args` fill the diagnostic."""

    def __init__(self, code: str, **fields: object):
        self.code = code
        self.fields = fields
        """The values for the code's message template."""
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The diagnostic's message, for callers that report it inside another one (`--arg` values)."""
        return diag(self.code, None, **self.fields).message


_FLOAT_HI = 10.0 ** (MAX_DECIMAL_EXPONENT + 1)
_FLOAT_LO = 10.0**-MAX_DECIMAL_EXPONENT
_MAGNITUDE_RANGE = (f"its magnitude is outside 1e-{MAX_DECIMAL_EXPONENT} .. 1e{MAX_DECIMAL_EXPONENT + 1}, "
                    "the range of numbers")
_FLOAT_OPERATIONS = {"+": float.__add__, "-": float.__sub__, "*": float.__mul__, "/": float.__truediv__}
_FLOAT_FUNCTIONS: dict[str, Callable[[float], float]] = {"exp": math.exp, "ln": math.log, "sqrt": math.sqrt, "abs": abs}
"""Builtins of one argument whose value on a constant is a constant (approximated, to check its range)."""
_EXPONENT_RANGE = (f"written d.ddd...e±N, a nonzero number has N between -{MAX_DECIMAL_EXPONENT} and "
                   f"{MAX_DECIMAL_EXPONENT}")
_INTEGER_RANGE = "an integer literal is at most 2^63 - 1 (write 1e30 for a large real)"
_NUMBER = re.compile(r"([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?)([0-9]+))?")
_TEN_HI = Fraction(10) ** (MAX_DECIMAL_EXPONENT + 1)
_TEN_LO = Fraction(1, 10**MAX_DECIMAL_EXPONENT)


def _short(value: object, width: int = 24) -> str:
    """`value` as text of at most about `width` characters, for messages (a 100-digit literal, a 4096-bit
    fraction)."""
    text = str(value)
    return text if len(text) <= width else text[: width // 2] + "..." + text[-(width // 2) + 3:]


def exact_number(text: str) -> Fraction:
    """The exact value of an unsigned decimal number (`12`, `0.5`, `1e-3`, `2.5E+10`) within the limits.

    Raises `NumberError` (`number-too-long`, `number-out-of-range`) *before* any arithmetic: `Fraction(text)`
    would compute 10^100000000 for `1e100000000`, and `int(text)` refuses more than 4300 digits. Text that
    is not such a number at all raises a plain ValueError.
    """
    match = _NUMBER.fullmatch(text)
    if match is None or not (match.group(1) or match.group(2)):
        raise ValueError(f"{_short(text)!r} is not a number")
    whole, fraction, sign, exponent = match.group(1), match.group(2) or "", match.group(3), match.group(4)
    digits = whole + fraction
    if len(digits) > MAX_LITERAL_DIGITS:
        raise NumberError("number-too-long", text=_short(text), digits=len(digits), limit=MAX_LITERAL_DIGITS)
    significant = digits.lstrip("0")
    if not significant:
        return Fraction(0)  # zero, whatever its exponent: nothing to compute
    exponent = (exponent or "0").lstrip("0") or "0"
    if len(exponent) > len(str(MAX_DECIMAL_EXPONENT + MAX_LITERAL_DIGITS)):
        raise NumberError("number-out-of-range", text=_short(text), reason=_EXPONENT_RANGE)
    e = -int(exponent) if sign == "-" else int(exponent)
    # The decimal exponent of the value written d.ddd x 10^scientific: the first significant digit's place.
    scientific = len(whole) - 1 - (len(digits) - len(significant)) + e
    if abs(scientific) > MAX_DECIMAL_EXPONENT:
        raise NumberError("number-out-of-range", text=_short(text), reason=_EXPONENT_RANGE)
    scale = e - len(fraction)
    mantissa = int(digits)
    return Fraction(mantissa * 10**scale) if scale >= 0 else Fraction(mantissa, 10**-scale)


def constant_problem(value: Fraction) -> str | None:
    """Why an exact constant breaks the limits of align/limits.py (for `constant-out-of-range`), or None."""
    if value != 0 and not _TEN_LO <= abs(value) < _TEN_HI:
        return _MAGNITUDE_RANGE
    if max(value.numerator.bit_length(), value.denominator.bit_length()) > MAX_CONSTANT_BITS:
        return f"its exact value needs more than {MAX_CONSTANT_BITS} bits"
    return None


_RATIONAL = re.compile(r"\s*([+-]?)\s*([0-9.eE+-]+?)\s*(?:/\s*([+-]?)\s*([0-9.eE+-]+))?\s*")


def exact_text(text: str) -> Fraction:
    """A number written as text ("3", "-0.25", "1e-3", "p/q"), exactly, within the limits of spec literals.

    Never `Fraction(text)`: it computes 10^100000000 for "1e100000000" before anyone can refuse it.
    """
    match = _RATIONAL.fullmatch(text)
    if match is None:
        raise ValueError(f"{text[:40]!r} is not a number")
    sign, numerator, denominator_sign, denominator = match.groups()
    try:
        value = exact_number(numerator)
        if denominator is not None:
            divisor = exact_number(denominator)
            if divisor == 0:
                raise ValueError(f"{text[:40]!r} divides by zero")
            value = value / divisor * (-1 if denominator_sign == "-" else 1)
    except NumberError as error:
        raise ValueError(error.message) from None
    return checked_number(-value if sign == "-" else value)


def checked_number(x: Any) -> Any:
    """`x` (an int, float or Fraction) if it obeys the limits of spec literals; else ValueError saying why."""
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{x} is not a finite number")
    if isinstance(x, (int, float, Fraction)) and not isinstance(x, bool):
        problem = constant_problem(Fraction(x))
        if problem is not None:
            text = str(x)
            raise ValueError(f"the number {text[:12] + '...' if len(text) > 24 else text} is out of range: "
                             + problem.removeprefix("its "))
    return x


def _json_number(text: str) -> Fraction:
    try:
        return exact_number(text.removeprefix("-"))
    except NumberError as error:
        raise ValueError(error.message) from None


def _json_constant(text: str) -> None:
    raise ValueError(f"{text} is not a finite number")


def read_json(text: str) -> Any:
    """JSON text to Python data, with every number checked against the limits of spec literals as text,
    before Python converts it: a 5000-digit integer or `1e400` is refused with the reason, never turned
    into an error about Python's int-string limit or into `inf`; `NaN` and `Infinity` are refused.

    Raises ValueError (also for JSON nested past the decoder's stack).
    """
    def as_float(number: str) -> float:
        _json_number(number)
        return float(number)

    def as_int(number: str) -> int:
        _json_number(number)
        return int(number)

    try:
        return json.loads(text, parse_float=as_float, parse_int=as_int, parse_constant=_json_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _tree_span(tree: Tree, path: str) -> Span:
    meta = tree.meta
    line, column = getattr(meta, "line", 1), getattr(meta, "column", 1)
    return Span(path, line, column, getattr(meta, "end_line", line), getattr(meta, "end_column", column + 1))


def _check_tree(tree: Tree, path: str) -> None:
    """Refuse a tree nested deeper than MAX_NESTING_DEPTH, or a mechanism with more than MAX_SAMPLING_SITES
    sampling statements, at the first offending subtree in source order.

    Iterative on purpose: this runs before anything recursive sees the tree. lark's LALR parser builds the
    tree with explicit stacks, so any depth parses; everything after it recurses.
    """
    stack: list[tuple[Tree, int]] = [(tree, 1)]
    sites, mechanism = 0, tree
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING_DEPTH:
            raise SpecError([diag("nesting-too-deep", _tree_span(node, path), limit=MAX_NESTING_DEPTH)])
        if node.data == "mechanism":
            sites, mechanism = 0, node
        elif node.data == "sample":
            sites += 1
            if sites > MAX_SAMPLING_SITES:
                name = mechanism.children[0]
                raise SpecError([diag("too-many-sampling-sites", _tree_span(node, path), name=str(name),
                                      limit=MAX_SAMPLING_SITES)])
        stack.extend((child, depth + 1) for child in reversed(node.children) if isinstance(child, Tree))


class _SyntaxProblem(Exception):
    """A shape error found while building nodes (the grammar is deliberately a little loose)."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


# Named common mistakes, recognised by the parser state in which they fail (lark `match_examples`).
_H = "mechanism m(x: real, q: real[]) privacy 1 "
_EXAMPLES: dict[str, list[str]] = {
    "assignment-in-condition": [
        _H + "{ if x = 1 { output x } }",
        _H + "{ if x + 1 = 1 { output x } }",
        _H + "{ if (x) = 1 { output x } }",
        _H + "{ if q[0] = 1 { output x } }",
        _H + "{ if 1 = x { output x } }",
        _H + "{ if len(q) = 1 { output x } }",
    ],
    "python-block": [
        _H + "{ if x > 1: output x }",
        _H + "{ if x > y: output x }",
        _H + "{ if x > f(y): output x }",
        _H + "{ if q[0] > x: output x }",
        _H + "{ if (x > 1): output x }",
        _H + "{ for i in 0 .. 3: output x }",
        _H + "{ for i in 0 .. n: output x }",
        _H + "{ for i in 0 .. len(q): output x }",
        _H + "{ if x > 1 { output x } else: output 0 }",
    ],
    "python-range": [
        _H + "{ for i in range(3) { output x } }",
        _H + "{ for i in range(len(q)) { output x } }",
    ],
    "missing-prime": [
        "alignment m { eta = eta + 1 }",
        "alignment m { let a = 1 eta = eta + 1 }",
    ],
    "missing-body": [
        _H + "output x",
        "mechanism m(x: real) output x",
        "mechanism m(x: real) privacy 1 eta ~ Lap(1)",
    ],
}


@lru_cache(maxsize=1)
def _SIGNATURES() -> dict[tuple[int, str], str]:
    """(LALR state, unexpected token type) of each named mistake, from the examples above.

    lark's own `match_examples` also compares the depth of the parser stack, so an example only matches
    mistakes nested exactly as deep; the state and the offending token are what identify a mistake.
    """
    signatures: dict[tuple[int, str], str] = {}
    for label, examples in _EXAMPLES.items():
        for example in examples:
            try:
                _parser().parse(example, start="start")
            except UnexpectedToken as error:
                signatures.setdefault((error.state.position, error.token.type), label)
            else:  # pragma: no cover - guards the example table itself
                raise AssertionError(f"example for {label} parses: {example}")
    return signatures


def _describe_expected(expected: set[str]) -> str:
    parser = _parser()
    names = []
    for name in sorted(expected):
        if name.startswith("$END"):
            names.append("end of file")
            continue
        try:
            pattern = parser.get_terminal(name).pattern
        except KeyError:
            names.append(name.lower())
            continue
        if pattern.type == "str":
            names.append(f"`{pattern.value}`")
        else:
            names.append({"NAME": "a name", "PRIMED_NAME": "a primed name", "NUMBER": "a number",
                          "COMPARE_OP": "a comparison", "ADD_OP": "`+` or `-`", "MUL_OP": "`*` or `/`",
                          "BASETYPE": "a type"}.get(name, name.lower()))
    names = sorted(set(names))
    if len(names) > 6:
        names = names[:6] + ["..."]
    return ", ".join(names) if names else "something else"


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "end of file"
    if token.type == "NAME":
        return f"name `{_short(token, 40)}`"
    if token.type == "NUMBER":
        return f"number `{_short(token, 40)}`"
    return f"`{_short(token, 40)}`"


def _previous_word(text: str, pos: int) -> str:
    before = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text[:pos].split("\n")[-1] if pos else "")
    if before:
        return before[-1]
    lines = [ln for ln in text[:pos].split("\n")[:-1] if ln.strip()]
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", lines[-1]) if lines else []
    return words[-1] if words else ""


def _syntax_diagnostic(error: UnexpectedInput, source: Source) -> Diagnostic:
    path = source.path
    if isinstance(error, UnexpectedCharacters):
        span = Span(path, error.line, error.column, error.line, error.column + 1)
        # `char` is source.text[error.pos_in_stream]; lark types pos_in_stream None on the base class.
        return diag("unexpected-character", span, char=repr(error.char))
    token = getattr(error, "token", None)
    if isinstance(error, UnexpectedEOF) or (token is not None and token.type == "$END"):
        last_line = max(1, source.line_count())
        col = len(source.line(last_line)) + 1
        span = Span(path, last_line, col, last_line, col + 1)
        expected = getattr(error, "expected", ()) or getattr(error, "accepts", set())
        return diag("unexpected-end", span, expected=_describe_expected(set(expected)))
    assert isinstance(error, UnexpectedToken)
    token = error.token
    span = Span(path, token.line, token.column, token.end_line or token.line,
                token.end_column or token.column + max(1, len(str(token))))
    if _previous_word(source.text, token.start_pos or 0) == "elif":
        return diag("elif", span)
    label = _SIGNATURES().get((error.state.position, token.type))
    if label == "missing-prime":
        return diag("missing-prime", span, name=_previous_word(source.text, token.start_pos or 0) or "eta")
    if label is not None:
        return diag(label, span)
    return diag("unexpected-token", span, found=_describe_token(token),
                expected=_describe_expected(set(error.accepts or error.expected)))


def parse_source(source: Source) -> n.SpecFile:
    """Parse one file. Raises `SpecError` with located diagnostics on any syntax problem or broken limit."""
    items = _items(source)
    mechanisms = tuple(dataclasses.replace(i, acceptances=_acceptances(source, i))
                       for i in items if isinstance(i, n.Mechanism))
    alignments = tuple(i for i in items if isinstance(i, n.Alignment))
    releases = tuple(i for i in items if isinstance(i, n.Release))
    if not mechanisms:
        raise SpecError([diag("no-mechanism", Span(source.path, 1, 1, 1, 2))])
    return n.SpecFile(source, mechanisms, alignments, releases)


_ACCEPTANCE = re.compile(r"#[ \t]*align:[ \t]*accept-float-sensitive(?![\w-])[ \t]*(?P<reason>.*)$")
"""`# align: accept-float-sensitive [reason]` (`n.Acceptance`); a comment runs from the first `#` of a line, since
the language has no strings."""


def _acceptances(source: Source, mech: n.Mechanism) -> tuple[n.Acceptance, ...]:
    """The acceptance comments on the mechanism's lines (comments are not part of the grammar's tree)."""
    found = []
    for number in range(mech.span.line, mech.span.end_line + 1):
        text = source.line(number)
        start = text.find("#")
        match = _ACCEPTANCE.match(text, start) if start >= 0 else None
        if match is not None:
            found.append(n.Acceptance(not text[:start].strip(), match.group("reason").strip(),
                                      Span(source.path, number, start + 1, number, len(text) + 1)))
    return tuple(found)


def parse_alignments(source: Source) -> tuple[n.Alignment, ...]:
    """The alignment blocks of a text that holds only those (a synthesised alignment, checker/synthesis.py)."""
    items = _items(source)
    if any(not isinstance(i, n.Alignment) for i in items):
        raise ValueError("a mechanism or release among the alignment blocks")
    return tuple(i for i in items if isinstance(i, n.Alignment))


def _items(source: Source) -> list[n.Mechanism | n.Alignment | n.Release]:
    try:
        tree = _parser().parse(source.text, start="start")
    except UnexpectedInput as error:
        raise SpecError([_syntax_diagnostic(error, source)]) from None
    _check_tree(tree, source.path)
    try:
        items = _Build(source.path).transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, _SyntaxProblem):
            raise SpecError([error.orig_exc.diagnostic]) from None
        raise
    return list(items)


def parse_expression(text: str, path: str = "<expression>", line: int = 1, column: int = 1) -> n.Expr:
    """Parse a lone expression (used for `# expect: mixture-rule <expr>` headers and `--arg` values).

    `line` and `column` place the text inside a larger file so that spans point at the right place.
    """
    source = Source(path, "\n" * (line - 1) + " " * (column - 1) + text)
    try:
        tree = _parser().parse(source.text, start="expr")
    except UnexpectedInput as error:
        raise SpecError([_syntax_diagnostic(error, source)]) from None
    if isinstance(tree, Tree):
        _check_tree(tree, path)
    try:
        return _Build(path).transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, _SyntaxProblem):
            raise SpecError([error.orig_exc.diagnostic]) from None
        raise
