"""The syntax tree of a specification file and the typed IR of a resolved one, as frozen dataclasses.

Every node carries the `Span` of the text it came from. The parser's nodes say only what was written
(`type` None, names as `Name`). Resolution (`resolve/`) returns the same node classes as the typed IR: every
expression with its `type`, and every `Name` replaced by a reference (`ParamRef`, `NoiseRef`, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar, TypeVar

from .adjacency import ADJACENCY, AdjacencyKind, AdjacencyRule
from .span import Source, Span
from .types import Type

if TYPE_CHECKING:
    from .visitor import ExprVisitor, StmtVisitor

T = TypeVar("T")
C = TypeVar("C")

# ----------------------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Number:
    """A numeric literal, kept exact."""

    value: Fraction
    """The exact value of the literal (`0.1` is 1/10, never a float)."""
    is_integer: bool
    """True for literals written without a fraction or exponent part (`3`), which have type int."""
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_number(self, ctx)


@dataclass(frozen=True)
class BoolLit:
    """`true` or `false`."""

    value: bool
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_bool_lit(self, ctx)


@dataclass(frozen=True)
class Name:
    """A use of a name, as written: only in the parser's tree. Resolution replaces each by the reference
    that says what it names (`ParamRef`, `VarRef`, `NoiseRef`, `MemberRef`, `LetRef`, `LocalRef`, `OutRef`,
    `AlignedCostRef`, `TagLit`)."""

    id: str
    """The name without its prime."""
    primed: bool
    """True for `q'`: the neighbour's value of parameter q (or a let binding named with a prime)."""
    span: Span

    @property
    def text(self) -> str:
        return self.id + ("'" if self.primed else "")

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_name(self, ctx)


@dataclass(frozen=True)
class Call:
    """A call of a builtin function, a tag with a payload (`TOP(g)`), or a mechanism (rejected)."""

    func: str
    args: tuple[Expr, ...]
    span: Span
    func_span: Span
    """The span of the function name alone."""
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_call(self, ctx)


@dataclass(frozen=True)
class Range:
    """The half-open integer interval `lo .. hi`."""

    lo: Expr
    hi: Expr
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_range(self, ctx)


@dataclass(frozen=True)
class Comprehension:
    """`f(v in D: body)` or `f(v not in S if cond: body)` for f in max, min, argmax, argmin, sum, count, all, any."""

    func: str
    var: str
    """The bound index variable."""
    var_span: Span
    domain: Expr | None
    """A `Range`, an index set, or None when the universe is inferred from what `body` indexes with `var`."""
    excluded: Expr | None
    """For `v not in S`: the index set S removed from the universe."""
    condition: Expr | None
    """An optional filter, written `if cond` before the colon."""
    body: Expr
    span: Span
    func_span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_comprehension(self, ctx)


@dataclass(frozen=True)
class Binary:
    """Arithmetic: `+ - * / ^`."""

    op: str
    left: Expr
    right: Expr
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_binary(self, ctx)


@dataclass(frozen=True)
class Unary:
    """`-e` or `not e`."""

    op: str
    operand: Expr
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_unary(self, ctx)


@dataclass(frozen=True)
class Compare:
    """A comparison chain `a < b <= c`; it means `a < b and b <= c`."""

    ops: tuple[str, ...]
    operands: tuple[Expr, ...]
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_compare(self, ctx)


@dataclass(frozen=True)
class BoolOp:
    """`a and b`, `a or b`."""

    op: str
    left: Expr
    right: Expr
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_bool_op(self, ctx)


@dataclass(frozen=True)
class Member:
    """`i in S`, `i not in S`, `i in a .. b`."""

    element: Expr
    collection: Expr
    negated: bool
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_member(self, ctx)


@dataclass(frozen=True)
class TagTest:
    """`v is TAG`: whether the tagged value v carries the tag TAG."""

    value: Expr
    tag: str
    tag_span: Span
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_tag_test(self, ctx)


@dataclass(frozen=True)
class Conditional:
    """`c ? a : b`."""

    condition: Expr
    then: Expr
    orelse: Expr
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_conditional(self, ctx)


@dataclass(frozen=True)
class Index:
    """`base[index]` for lists, tuples and the output sequence."""

    base: Expr
    index: Expr
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_index(self, ctx)


@dataclass(frozen=True)
class TupleLit:
    """`(a, b, ...)`."""

    items: tuple[Expr, ...]
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_tuple_lit(self, ctx)


@dataclass(frozen=True)
class ListLit:
    """`[a, b, ...]`."""

    items: tuple[Expr, ...]
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)
    """Set on the resolved program (never None there); None in the parser's tree."""

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_list_lit(self, ctx)


# ------------------------------------------------------------------ references (the resolved program only)
#
# Resolution replaces every `Name` by one of these, so that no later stage looks a name up to find out what
# it is; tags get one code per mechanism (`ResolvedMechanism.tags`). Each carries its type.


@dataclass(frozen=True)
class ParamRef:
    """A parameter: `q` (this run's value) or, in an alignment or invariant, `q'` (the neighbour's)."""

    id: str
    primed: bool
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        return self.id + ("'" if self.primed else "")

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_param_ref(self, ctx)


@dataclass(frozen=True)
class VarRef:
    """A program variable (in an invariant, `x'` is its value in the aligned run)."""

    id: str
    primed: bool
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        return self.id + ("'" if self.primed else "")

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_var_ref(self, ctx)


@dataclass(frozen=True)
class NoiseRef:
    """A scalar noise variable; in the program, inside its loop, also the current member of a family."""

    id: str
    primed: ClassVar[bool] = False
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        return self.id

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_noise_ref(self, ctx)


@dataclass(frozen=True)
class MemberRef:
    """`x[e]` in an alignment or invariant: member e of the noise family x."""

    id: str
    index: Expr
    span: Span
    id_span: Span
    """The span of the family's name."""
    type: Type | None = field(default=None, compare=False, repr=False)

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_member_ref(self, ctx)


@dataclass(frozen=True)
class LetRef:
    """A `let` binding of the alignment (its name may carry a prime: `m'`)."""

    id: str
    primed: bool
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        return self.id + ("'" if self.primed else "")

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_let_ref(self, ctx)


@dataclass(frozen=True)
class LocalRef:
    """An integer index bound by the enclosing construct: a loop, a comprehension or a family shift `x[i]'`."""

    id: str
    primed: ClassVar[bool] = False
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        return self.id

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_local_ref(self, ctx)


@dataclass(frozen=True)
class OutRef:
    """`out`, the output sequence (read by alignments, invariants and claims)."""

    primed: ClassVar[bool] = False
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)

    text = "out"

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_out_ref(self, ctx)


@dataclass(frozen=True)
class AlignedCostRef:
    """`aligned_cost` in a loop invariant: the cost the alignment has spent so far."""

    primed: ClassVar[bool] = False
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)

    text = "aligned_cost"

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_aligned_cost_ref(self, ctx)


@dataclass(frozen=True)
class TagLit:
    """A tag without payload (`BOT`), with its code: its position in `ResolvedMechanism.tags`."""

    tag: str
    code: int
    span: Span
    type: Type | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        return self.tag

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_tag_lit(self, ctx)


@dataclass(frozen=True)
class TagCall:
    """A tag with a payload (`TOP(g)`), with the tag's code (its position in `ResolvedMechanism.tags`)."""

    tag: str
    code: int
    args: tuple[Expr, ...]
    span: Span
    func_span: Span
    type: Type | None = field(default=None, compare=False, repr=False)

    def accept(self, visitor: ExprVisitor[T, C], ctx: C) -> T:
        return visitor.visit_tag_call(self, ctx)


Ref = ParamRef | VarRef | NoiseRef | LetRef | LocalRef | OutRef | AlignedCostRef
"""The references that stand for a name: `text` is the name as written, `primed` whether it is the
neighbour's (only parameters, variables and lets can be)."""



Expr = (
    Number | BoolLit | Name | Call | Range | Comprehension | Binary | Unary | Compare | BoolOp | Member | TagTest
    | Conditional | Index | TupleLit | ListLit
    | ParamRef | VarRef | NoiseRef | MemberRef | LetRef | LocalRef | OutRef | AlignedCostRef | TagLit | TagCall
)
"""An expression: of the parser's tree (with `Name`) or of the resolved program (with references, no `Name`)."""

# ------------------------------------------------------------------------------------------ statements


@dataclass(frozen=True)
class Assign:
    """`x = e`, or `x[i] = e` when `index` is set (which makes x a list)."""

    target: str
    target_span: Span
    index: Expr | None
    value: Expr
    span: Span

    def accept(self, visitor: StmtVisitor[T, C], ctx: C) -> T:
        return visitor.visit_assign(self, ctx)


@dataclass(frozen=True)
class Sample:
    """`x ~ Dist(args)`: a sampling site. Inside a loop it draws the family member x[i] each iteration."""

    var: str
    var_span: Span
    dist: str
    dist_span: Span
    args: tuple[Expr, ...]
    span: Span

    def accept(self, visitor: StmtVisitor[T, C], ctx: C) -> T:
        return visitor.visit_sample(self, ctx)


@dataclass(frozen=True)
class If:
    condition: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]
    span: Span

    def accept(self, visitor: StmtVisitor[T, C], ctx: C) -> T:
        return visitor.visit_if(self, ctx)


@dataclass(frozen=True)
class For:
    """`for var in lo .. hi { body }`: var takes lo, lo+1, ..., hi-1."""

    var: str
    var_span: Span
    lo: Expr
    hi: Expr
    body: tuple[Stmt, ...]
    span: Span

    def accept(self, visitor: StmtVisitor[T, C], ctx: C) -> T:
        return visitor.visit_for(self, ctx)


@dataclass(frozen=True)
class While:
    """Parsed only so that it can be rejected with a located diagnostic."""

    condition: Expr
    body: tuple[Stmt, ...]
    span: Span

    def accept(self, visitor: StmtVisitor[T, C], ctx: C) -> T:
        return visitor.visit_while(self, ctx)


@dataclass(frozen=True)
class Break:
    span: Span

    def accept(self, visitor: StmtVisitor[T, C], ctx: C) -> T:
        return visitor.visit_break(self, ctx)


@dataclass(frozen=True)
class Output:
    """`output e`: appends e to the output sequence `out`."""

    value: Expr
    span: Span

    def accept(self, visitor: StmtVisitor[T, C], ctx: C) -> T:
        return visitor.visit_output(self, ctx)


Stmt = Assign | Sample | If | For | While | Break | Output

# ------------------------------------------------------------------------------------------- mechanism


@dataclass(frozen=True)
class TypeExpr:
    base: str
    """`real`, `int` or `bool`."""
    is_list: bool
    span: Span

    def __str__(self) -> str:
        return self.base + ("[]" if self.is_list else "")


@dataclass(frozen=True)
class Domain:
    """`in lo .. hi` after a parameter's type: the integers lo, lo + 1, ..., hi - 1 (half-open, as `for`)."""

    lo: Expr
    hi: Expr
    span: Span


@dataclass(frozen=True)
class Param:
    name: str
    type: TypeExpr
    span: Span
    domain: Domain | None = None
    """The values the parameter (each entry of a list) may take; None: every value of its type."""


@dataclass(frozen=True)
class Adjacency:
    """One clause of the neighbouring relation D ~ D'."""

    kind: AdjacencyKind
    """Which relation (align/adjacency.py has one record per kind)."""
    var: str
    var_span: Span
    bound: Expr | None
    """The bound c; None for the kinds without one (`monotone`, `q'[i] >= q[i]`)."""
    span: Span
    primed_var: str = ""
    """The name written on the primed side (must equal `var`)."""
    index_vars: tuple[str, str] = ("", "")
    """The index names written on both sides (the list clauses that name an index)."""

    @property
    def rule(self) -> AdjacencyRule:
        return ADJACENCY[self.kind]


@dataclass(frozen=True)
class Example:
    """One item of the `example` clause: `eps = 1` (a public parameter's value) or `len(q) = 5` (a private list's
    length, `length` True; `func` is the name written before the parenthesis, which resolution checks is `len`)."""

    name: str
    name_span: Span
    value: Expr
    span: Span
    length: bool = False
    func: str = ""

    @property
    def label(self) -> str:
        """The item's left side as written: `eps`, or `len(q)`."""
        return f"{self.func}({self.name})" if self.length else self.name


@dataclass(frozen=True)
class Acceptance:
    """A comment `# align: accept-float-sensitive [reason]`: the user accepts that the comparisons (and
    rankings) it marks are decided in exact arithmetic by the proof and in doubles by the interpreter
    (docs/language.md, "Exact and floating-point arithmetic"). It marks what starts on its own line, or, on a
    line of its own, what starts on the next line."""

    alone: bool
    """Whether the comment is the only thing on its line."""
    reason: str
    """The text after the directive ('' when none), shown where the acceptance is reported."""
    span: Span
    """The comment."""

    DIRECTIVE: ClassVar[str] = "align: accept-float-sensitive"

    @property
    def line(self) -> int:
        return self.span.line

    def marks(self, span: Span) -> bool:
        """Whether this comment accepts the comparison or ranking at `span`."""
        return span.line <= self.line <= span.end_line or (self.alone and self.line == span.line - 1)


@dataclass(frozen=True)
class Mechanism:
    name: str
    name_span: Span
    params: tuple[Param, ...]
    adjacency: tuple[Adjacency, ...]
    requires: tuple[Expr, ...]
    privacy: tuple[Expr, ...]
    """The claimed budget; more than one element is an error reported by resolution."""
    body: tuple[Stmt, ...]
    span: Span
    examples: tuple[Example, ...] = ()
    """The `example` clause: values of public parameters and lengths of private lists for `align run`/`test`."""
    acceptances: tuple[Acceptance, ...] = ()
    """The `# align: accept-float-sensitive` comments within the mechanism's lines (comments are not otherwise
    part of the tree: the parser reads these from the text)."""

    def acceptance(self, span: Span) -> Acceptance | None:
        """The comment that accepts the float-sensitive comparison or ranking at `span`, if any."""
        return next((a for a in self.acceptances if a.marks(span)), None)


# ------------------------------------------------------------------------------------------- alignment


@dataclass(frozen=True)
class Let:
    """`let name = e` (the name may carry a prime: `let m' = ...`)."""

    name: str
    value: Expr
    span: Span
    name_span: Span


@dataclass(frozen=True)
class Shift:
    """`x' = rhs` or `x[i]' = rhs`: the aligned value of a noise variable."""

    var: str
    index_var: str | None
    """The bound index of a family shift `x[i]'`, else None."""
    rhs: Expr
    span: Span
    lhs_span: Span
    rhs_index: str | None = None
    """For a family shift: the index written on the left, checked against `index_var`."""


@dataclass(frozen=True)
class Invariant:
    """`invariant e`: a loop invariant offered to the checker."""

    condition: Expr
    span: Span


AlignmentItem = Let | Shift | Invariant


@dataclass(frozen=True)
class Alignment:
    name: str
    name_span: Span
    items: tuple[AlignmentItem, ...]
    span: Span
    auto: bool = False
    """`alignment NAME auto`: no items; `align verify` synthesises one (checker/synthesis.py), as for a mechanism
    without an alignment block."""


@dataclass(frozen=True)
class Release:
    """`release NAME { ... }`: what mechanism NAME publishes, computed from its output `out` and its public
    parameters only (no noise, no private value, no variable of the mechanism): a post-processing of `out`."""

    name: str
    name_span: Span
    body: tuple[Stmt, ...]
    span: Span


def literal_number(e: Expr) -> Fraction | None:
    """The value of a number literal, possibly negated (`-1`); None for any other expression."""
    if isinstance(e, Number):
        return e.value
    if isinstance(e, Unary) and e.op == "-":
        inner = literal_number(e.operand)
        return None if inner is None else -inner
    return None


@dataclass(frozen=True)
class SpecFile:
    """Everything in one `.dp` file."""

    source: Source
    mechanisms: tuple[Mechanism, ...]
    alignments: tuple[Alignment, ...]
    releases: tuple[Release, ...] = ()
