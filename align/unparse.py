"""Nodes back to source text, with the fewest parentheses that keep the meaning (for reports and proofs).

`unparse` prints one expression for reports (numbers shortened for reading). `unparse_spec` prints a whole
file — mechanisms and alignment blocks — so that tools which rewrite the syntax tree (bench/soundness.py
mutates specs with `dataclasses.replace`) can write the result back as a spec that parses to the same tree:
parse(unparse_spec(parse(text))) == parse(text) up to spans and comments (tests/test_unparse.py checks the
corpus). Its numbers keep their exact value and their literal type (`2.0` stays real, `2` int).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from . import nodes as n
from .visitor import ExprVisitor

# Binding strength of each construct; larger binds tighter (mirrors grammar.lark).
_TERNARY, _OR, _AND, _NOT, _COMPARE, _SUM, _PRODUCT, _UNARY, _POWER, _POSTFIX = range(10)


def format_number(value: Fraction, is_integer: bool = False) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    as_float = float(value)
    if Fraction(repr(as_float)) == value:
        return repr(as_float)
    return f"{value.numerator}/{value.denominator}"


NumberFormat = Callable[[Fraction, bool], str]


def exact_number(value: Fraction, is_integer: bool = False) -> str:
    """A literal that the parser reads back as exactly `value` with the same type.

    `format_number` shortens for reading (2.0 prints as `2`, an int literal); here a real that happens to be
    whole keeps its `.0`, and a value with a finite decimal expansion is written out in full. A value with no
    finite decimal expansion (1/3) cannot be one literal: it prints as the division `(1.0 / 3)`, the same real.
    """
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if magnitude.denominator == 1:
        return f"{sign}{magnitude.numerator}" + ("" if is_integer else ".0")
    denominator, twos, fives = magnitude.denominator, 0, 0
    while denominator % 2 == 0:
        denominator, twos = denominator // 2, twos + 1
    while denominator % 5 == 0:
        denominator, fives = denominator // 5, fives + 1
    if denominator != 1:
        return f"{sign}({magnitude.numerator}.0 / {magnitude.denominator})"
    digits = max(twos, fives)
    scaled = magnitude.numerator * 10 ** digits // magnitude.denominator
    whole, fraction = divmod(scaled, 10 ** digits)
    return f"{sign}{whole}.{fraction:0{digits}d}"


def unparse(e: n.Expr) -> str:
    return _unparse(e, format_number)[0]


def _wrap(e: n.Expr, strength: int, number: NumberFormat = format_number) -> str:
    text, level = _unparse(e, number)
    return f"({text})" if level < strength else text


def _unparse(e: n.Expr, number: NumberFormat = format_number) -> tuple[str, int]:
    """The text of `e` and its binding strength; `number` prints literals (`format_number` for reports,
    `exact_number` for files that are read back)."""
    return e.accept(_UNPARSER, number)


class _Unparser(ExprVisitor[tuple[str, int], NumberFormat]):
    """Each node's text and binding strength; the context is how numbers print."""

    def visit_number(self, e: n.Number, number: NumberFormat, /) -> tuple[str, int]:
        literal = number(e.value, e.is_integer)
        return (literal, _UNARY) if e.value < 0 else (literal, _POSTFIX)

    def visit_bool_lit(self, e: n.BoolLit, number: NumberFormat, /) -> tuple[str, int]:
        return ("true" if e.value else "false"), _POSTFIX

    def visit_name(self, e: n.Name, number: NumberFormat, /) -> tuple[str, int]:
        return e.text, _POSTFIX

    def visit_call(self, e: n.Call, number: NumberFormat, /) -> tuple[str, int]:
        return f"{e.func}({', '.join(_unparse(a, number)[0] for a in e.args)})", _POSTFIX

    # References print as the name they were written as.
    def _ref(self, e: n.Ref, number: NumberFormat, /) -> tuple[str, int]:
        return e.text, _POSTFIX

    visit_param_ref = visit_var_ref = visit_noise_ref = visit_let_ref = visit_local_ref = _ref
    visit_out_ref = visit_aligned_cost_ref = _ref

    def visit_tag_lit(self, e: n.TagLit, number: NumberFormat, /) -> tuple[str, int]:
        return e.tag, _POSTFIX

    def visit_member_ref(self, e: n.MemberRef, number: NumberFormat, /) -> tuple[str, int]:
        return f"{e.id}[{_unparse(e.index, number)[0]}]", _POSTFIX

    def visit_tag_call(self, e: n.TagCall, number: NumberFormat, /) -> tuple[str, int]:
        return f"{e.tag}({', '.join(_unparse(a, number)[0] for a in e.args)})", _POSTFIX

    def visit_comprehension(self, e: n.Comprehension, number: NumberFormat, /) -> tuple[str, int]:
        # Written as the parser reads it: `v in D if filters: body`, or `v not in S: body` with no universe.
        filters = [_wrap(e.condition, _AND + 1, number)] if e.condition is not None else []
        if e.excluded is not None:
            excluded = f"{e.var} not in {_wrap(e.excluded, _SUM, number)}"
            if e.domain is None:
                head = excluded
            else:
                head = f"{e.var} in {_unparse(e.domain, number)[0]}"
                filters.insert(0, excluded)
        else:
            head = f"{e.var} in {_unparse(e.domain, number)[0]}" if e.domain is not None else e.var
        cond = f" if {' and '.join(filters)}" if filters else ""
        return f"{e.func}({head}{cond}: {_unparse(e.body, number)[0]})", _POSTFIX

    def visit_range(self, e: n.Range, number: NumberFormat, /) -> tuple[str, int]:
        return f"{_wrap(e.lo, _SUM, number)} .. {_wrap(e.hi, _SUM, number)}", _COMPARE

    def visit_binary(self, e: n.Binary, number: NumberFormat, /) -> tuple[str, int]:
        if e.op == "^":
            return f"{_wrap(e.left, _POSTFIX, number)}^{_wrap(e.right, _UNARY, number)}", _POWER
        level = _SUM if e.op in "+-" else _PRODUCT
        right_level = level + 1  # left-associative: a - (b - c) keeps its parentheses
        return f"{_wrap(e.left, level, number)} {e.op} {_wrap(e.right, right_level, number)}", level

    def visit_unary(self, e: n.Unary, number: NumberFormat, /) -> tuple[str, int]:
        if e.op == "not":
            return f"not {_wrap(e.operand, _NOT, number)}", _NOT
        return f"-{_wrap(e.operand, _UNARY, number)}", _UNARY

    def visit_compare(self, e: n.Compare, number: NumberFormat, /) -> tuple[str, int]:
        parts = [_wrap(e.operands[0], _SUM, number)]
        for op, operand in zip(e.ops, e.operands[1:]):
            parts += [op, _wrap(operand, _SUM, number)]
        return " ".join(parts), _COMPARE

    def visit_bool_op(self, e: n.BoolOp, number: NumberFormat, /) -> tuple[str, int]:
        level = _OR if e.op == "or" else _AND
        return f"{_wrap(e.left, level, number)} {e.op} {_wrap(e.right, level + 1, number)}", level

    def visit_member(self, e: n.Member, number: NumberFormat, /) -> tuple[str, int]:
        op = "not in" if e.negated else "in"
        collection = _unparse(e.collection, number)[0] if isinstance(e.collection, n.Range) else \
            _wrap(e.collection, _SUM, number)
        return f"{_wrap(e.element, _SUM, number)} {op} {collection}", _COMPARE

    def visit_tag_test(self, e: n.TagTest, number: NumberFormat, /) -> tuple[str, int]:
        return f"{_wrap(e.value, _SUM, number)} is {e.tag}", _COMPARE

    def visit_conditional(self, e: n.Conditional, number: NumberFormat, /) -> tuple[str, int]:
        return (f"{_wrap(e.condition, _OR, number)} ? {_wrap(e.then, _TERNARY, number)} : "
                f"{_wrap(e.orelse, _TERNARY, number)}", _TERNARY)

    def visit_index(self, e: n.Index, number: NumberFormat, /) -> tuple[str, int]:
        return f"{_wrap(e.base, _POSTFIX, number)}[{_unparse(e.index, number)[0]}]", _POSTFIX

    def visit_tuple_lit(self, e: n.TupleLit, number: NumberFormat, /) -> tuple[str, int]:
        inner = ", ".join(_unparse(i, number)[0] for i in e.items)
        return f"({inner}{',' if len(e.items) == 1 else ''})", _POSTFIX

    def visit_list_lit(self, e: n.ListLit, number: NumberFormat, /) -> tuple[str, int]:
        return "[" + ", ".join(_unparse(i, number)[0] for i in e.items) + "]", _POSTFIX


_UNPARSER = _Unparser()


# ------------------------------------------------------------------------------------------ whole files

_INDENT = "  "


def unparse_source(e: n.Expr) -> str:
    """An expression as it is written in a file that will be parsed again (exact literals)."""
    return _unparse(e, exact_number)[0]


def _bound(e: n.Expr) -> str:
    """An end of a `for` range: a sum-level expression, as the grammar's `expr .. expr` reads it unambiguously."""
    return _wrap(e, _SUM, exact_number)


def unparse_statements(body: tuple[n.Stmt, ...], depth: int = 1,
                       acceptances: tuple[n.Acceptance, ...] = ()) -> list[str]:
    """The lines of a statement block, indented `depth` levels (the braces belong to the caller). A line whose
    comparison or ranking one of `acceptances` marks (by its span) ends with that acceptance comment."""
    lines: list[str] = []
    pad = _INDENT * depth

    def block(statements: tuple[n.Stmt, ...]) -> list[str]:
        return unparse_statements(statements, depth + 1, acceptances)

    def accepted(*exprs: n.Expr) -> str:
        """The acceptance comment of a statement's line, at its end; one on a line of its own goes above."""
        found = next((a for e in exprs for x in _subexpressions(e) if isinstance(x, _ACCEPTED)
                      for a in acceptances if a.marks(x.span)), None)
        if found is None:
            return ""
        comment = f"# {n.Acceptance.DIRECTIVE}" + (f" {found.reason}" if found.reason else "")
        if found.alone:
            lines.append(pad + comment)
            return ""
        return "  " + comment

    for s in body:
        if isinstance(s, n.Assign):
            target = s.target if s.index is None else f"{s.target}[{unparse_source(s.index)}]"
            extra = accepted(s.value) if s.index is None else accepted(s.index, s.value)
            lines.append(f"{pad}{target} = {unparse_source(s.value)}{extra}")
        elif isinstance(s, n.Sample):
            extra = accepted(*s.args)
            lines.append(f"{pad}{s.var} ~ {s.dist}({', '.join(unparse_source(a) for a in s.args)}){extra}")
        elif isinstance(s, n.If):
            extra = accepted(s.condition)
            lines.append(f"{pad}if {unparse_source(s.condition)} {{{extra}")
            lines += block(s.then)
            branch = s
            # `else if` chains print flat, as they are usually written (the parser builds the same tree).
            while len(branch.orelse) == 1 and isinstance(branch.orelse[0], n.If):
                branch = branch.orelse[0]
                extra = accepted(branch.condition)
                lines.append(f"{pad}}} else if {unparse_source(branch.condition)} {{{extra}")
                lines += block(branch.then)
            if branch.orelse:
                lines.append(f"{pad}}} else {{")
                lines += block(branch.orelse)
            lines.append(f"{pad}}}")
        elif isinstance(s, n.For):
            extra = accepted(s.lo, s.hi)
            lines.append(f"{pad}for {s.var} in {_bound(s.lo)} .. {_bound(s.hi)} {{{extra}")
            lines += block(s.body)
            lines.append(f"{pad}}}")
        elif isinstance(s, n.While):
            lines.append(f"{pad}while {unparse_source(s.condition)} {{")
            lines += block(s.body)
            lines.append(f"{pad}}}")
        elif isinstance(s, n.Break):
            lines.append(f"{pad}break")
        elif isinstance(s, n.Output):
            extra = accepted(s.value)
            lines.append(f"{pad}output {unparse_source(s.value)}{extra}")
        else:
            raise TypeError(f"unparse: unexpected statement {type(s).__name__} (this is probably a bug in align)")
    return lines


_ACCEPTED = (n.Compare, n.Call, n.Comprehension)
"""The nodes an acceptance comment marks (a comparison, a ranking: align/floats.py)."""


def _subexpressions(e: n.Expr) -> list[n.Expr]:
    """e and every expression inside it."""
    found = [e]
    for name in getattr(e, "__dataclass_fields__", {}):
        value = getattr(e, name)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, _EXPRESSIONS):
                found += _subexpressions(item)
    return found


_EXPRESSIONS = tuple(n.Expr.__args__)


def unparse_adjacency(a: n.Adjacency) -> str:
    """One clause of an `adjacent` line, as written (resolution reports a clause whose two sides differ)."""
    bound = unparse_source(a.bound) if a.bound is not None else ""
    i, j = (index or "i" for index in a.index_vars)
    return a.rule.text(a.var, bound, primed=a.primed_var, indices=(i, j))


def clause_text(a: n.Adjacency) -> str:
    """A clause in its canonical form (index `i`, the bound as resolved), as reports and diagnostics show it;
    `unparse_adjacency` gives it as written."""
    return a.rule.text(a.var, unparse(a.bound) if a.bound is not None else "")


def unparse_mechanism(m: n.Mechanism) -> str:
    """A `mechanism` block: header, clauses and body."""
    params = ", ".join(f"{p.name}: {p.type}" + (f" in {unparse_domain(p.domain)}" if p.domain else "")
                       for p in m.params)
    lines = [f"mechanism {m.name}({params})"]
    if m.adjacency:
        lines.append(f"{_INDENT}adjacent " + ", ".join(unparse_adjacency(a) for a in m.adjacency))
    if m.requires:
        lines.append(f"{_INDENT}requires " + ", ".join(unparse_source(r) for r in m.requires))
    lines += [f"{_INDENT}privacy {unparse_source(p)}" for p in m.privacy]
    if m.examples:
        lines.append(f"{_INDENT}example " + ", ".join(unparse_example(x) for x in m.examples))
    lines.append("{")
    lines += unparse_statements(m.body, acceptances=m.acceptances)
    lines.append("}")
    return "\n".join(lines)


def unparse_domain(d: n.Domain, source: bool = True) -> str:
    """A parameter's domain, `0 .. k`: as written in a file (`source`), or as reports show it."""
    number = exact_number if source else format_number
    return f"{_wrap(d.lo, _SUM, number)} .. {_wrap(d.hi, _SUM, number)}"


def unparse_example(x: n.Example) -> str:
    """One item of the `example` clause: `eps = 1` or `len(q) = 5`."""
    return f"{x.label} = {unparse_source(x.value)}"


def unparse_alignment(a: n.Alignment) -> str:
    """An `alignment` block."""
    lines = [f"alignment {a.name} {{"]
    for item in a.items:
        if isinstance(item, n.Let):
            lines.append(f"{_INDENT}let {item.name} = {unparse_source(item.value)}")
        elif isinstance(item, n.Shift):
            lhs = f"{item.var}'" if item.index_var is None else f"{item.var}[{item.index_var}]'"
            lines.append(f"{_INDENT}{lhs} = {unparse_source(item.rhs)}")
        elif isinstance(item, n.Invariant):
            lines.append(f"{_INDENT}invariant {unparse_source(item.condition)}")
        else:
            raise TypeError(f"unparse: unexpected alignment item {type(item).__name__} "
                            "(this is probably a bug in align)")
    lines.append("}")
    return "\n".join(lines)


def unparse_release(r: n.Release) -> str:
    """A `release` block."""
    return "\n".join([f"release {r.name} {{", *unparse_statements(r.body), "}"])


def unparse_spec(spec: n.SpecFile, header: str = "") -> str:
    """A whole `.dp` file: every mechanism, then every release block, then every alignment block, in their order in
    `spec`.

    Comments are not part of the tree, so they are lost, but for the acceptances of float-sensitive comparisons
    (`# align: accept-float-sensitive`, kept with the mechanism and written at the end of the line of what they
    accept); `header` (lines without their `# `) is written at the top as comments, e.g. a spec's `# expect:`
    lines or what a mutation changed.
    """
    parts = ["\n".join(f"# {line}".rstrip() for line in header.splitlines())] if header else []
    parts += [unparse_mechanism(m) for m in spec.mechanisms]
    parts += [unparse_release(r) for r in spec.releases]
    parts += [unparse_alignment(a) for a in spec.alignments]
    return "\n\n".join(parts) + "\n"
