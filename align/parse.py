"""Stage 1 (text -> nodes): parse a `.dp` file with lark and build the frozen nodes of `nodes.py`.

Syntax errors never escape as lark exceptions: `parse_source` turns them into located diagnostics,
naming common mistakes (Python-style blocks, `=` in a condition, `range(...)`, `elif`, an unprimed
shift) from example programs, as lark's `match_examples` does (see `_SIGNATURES` for why we match on the
parser state and token alone).
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from . import nodes as n
from .diagnostics import Diagnostic, SpecError, diag
from .span import Source, Span


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark.open("grammar.lark", rel_to=__file__, parser="lalr", propagate_positions=True,
                     maybe_placeholders=True, start=["start", "expr"])


_COMPREHENSIONS = frozenset({"max", "min", "argmax", "argmin", "sum", "count", "all", "any"})


class _Build(Transformer):
    """Lark tree -> nodes. Each method receives the rule's children and its position (`meta`)."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path

    # -- helpers -------------------------------------------------------------------------------------
    def _span(self, meta) -> Span:
        return Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok(self, token: Token) -> Span:
        return Span(self.path, token.line, token.column, token.end_line, token.end_column)

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
        body: tuple = ()
        for c in rest:
            if isinstance(c, tuple) and c and c[0] == "adjacent":
                adjacency.extend(c[1])
            elif isinstance(c, tuple) and c and c[0] == "requires":
                requires.extend(c[1])
            elif isinstance(c, tuple) and c and c[0] == "privacy":
                privacy.append(c[1])
            elif isinstance(c, list):
                body = tuple(c)
        return n.Mechanism(str(name), self._tok(name), params, tuple(adjacency), tuple(requires),
                           tuple(privacy), body, self._span(meta))

    @v_args(meta=True)
    def param(self, meta, children):
        name, type_ = children
        return n.Param(str(name), type_, self._span(meta))

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

    @v_args(meta=True)
    def adj_pointwise(self, meta, children):
        var, i, primed, j, bound = children
        return n.Adjacency("pointwise", str(var), self._tok(var), bound, self._span(meta),
                           primed_var=str(primed)[:-1], index_vars=(str(i), str(j)))

    @v_args(meta=True)
    def adj_l1(self, meta, children):
        var, i, primed, j, bound = children
        return n.Adjacency("l1", str(var), self._tok(var), bound, self._span(meta),
                           primed_var=str(primed)[:-1], index_vars=(str(i), str(j)))

    @v_args(meta=True)
    def adj_scalar(self, meta, children):
        var, primed, bound = children
        return n.Adjacency("scalar", str(var), self._tok(var), bound, self._span(meta),
                           primed_var=str(primed)[:-1])

    @v_args(meta=True)
    def adj_monotone(self, meta, children):
        (var,) = children
        return n.Adjacency("monotone", str(var), self._tok(var), None, self._span(meta), primed_var=str(var))

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
        return n.Number(Fraction(text), re.fullmatch(r"[0-9]+", text) is not None, self._span(meta))

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
        return n.Conditional(*children, self._span(meta))

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
        return n.Binary(str(op), left, right, self._span(meta))

    @v_args(meta=True)
    def power(self, meta, children):
        return n.Binary("^", children[0], children[1], self._span(meta))

    @v_args(meta=True)
    def negate(self, meta, children):
        operand = children[0]
        if isinstance(operand, n.Number):
            # Fold `-3` into a literal so that spans and printed formulas stay simple.
            return n.Number(-operand.value, operand.is_integer, self._span(meta))
        return n.Unary("-", operand, self._span(meta))

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
            return n.Call(str(func), args[1], span, func_span)
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
        return f"name `{token}`"
    if token.type == "NUMBER":
        return f"number `{token}`"
    return f"`{token}`"


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
        return diag("unexpected-character", span, char=repr(source.text[error.pos_in_stream]))
    token = getattr(error, "token", None)
    if isinstance(error, UnexpectedEOF) or (token is not None and token.type == "$END"):
        last_line = max(1, len(source.text.splitlines()))
        col = len(source.line(last_line)) + 1
        span = Span(path, last_line, col, last_line, col + 1)
        expected = getattr(error, "expected", None) or getattr(error, "accepts", set())
        return diag("unexpected-end", span, expected=_describe_expected(set(expected)))
    assert isinstance(error, UnexpectedToken)
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
    """Parse one file. Raises `SpecError` with located diagnostics on any syntax problem."""
    try:
        tree = _parser().parse(source.text, start="start")
    except UnexpectedInput as error:
        raise SpecError([_syntax_diagnostic(error, source)]) from None
    try:
        items = _Build(source.path).transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, _SyntaxProblem):
            raise SpecError([error.orig_exc.diagnostic]) from None
        raise
    mechanisms = tuple(i for i in items if isinstance(i, n.Mechanism))
    alignments = tuple(i for i in items if isinstance(i, n.Alignment))
    if not mechanisms:
        raise SpecError([diag("no-mechanism", Span(source.path, 1, 1, 1, 2))])
    return n.SpecFile(source, mechanisms, alignments)


def read_source(path: str) -> Source:
    """Read a file as UTF-8; raise `SpecError(io-error)` rather than an OSError."""
    try:
        with open(path, encoding="utf-8") as handle:
            return Source(path, handle.read())
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise SpecError([diag("io-error", None, path=path, reason=reason)]) from None


def parse_expression(text: str, path: str = "<expression>", line: int = 1, column: int = 1) -> n.Expr:
    """Parse a lone expression (used for `# expect: mixture-rule <expr>` headers and `--arg` values).

    `line` and `column` place the text inside a larger file so that spans point at the right place.
    """
    source = Source(path, "\n" * (line - 1) + " " * (column - 1) + text)
    try:
        tree = _parser().parse(source.text, start="expr")
    except UnexpectedInput as error:
        raise SpecError([_syntax_diagnostic(error, source)]) from None
    try:
        return _Build(path).transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, _SyntaxProblem):
            raise SpecError([error.orig_exc.diagnostic]) from None
        raise
