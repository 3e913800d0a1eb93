"""The typed visitors over the syntax tree: one abstract method per node class, so that a back end that
leaves a node out is a type error (mypy refuses to instantiate the subclass) and a runtime `TypeError` at
construction, never an `AttributeError` in the middle of a run. Each node's `accept(visitor, ctx)` calls the
visitor's method for its class (mypy's `ExpressionVisitor[T]` is the model).

`ctx` is what a back end threads through the walk: nothing for the scalar interpreter, the lane mask for the
vectorised one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Generic, TypeVar

from .diagnostics import InternalError

if TYPE_CHECKING:
    from . import nodes as n

T = TypeVar("T")
C = TypeVar("C")


class ExprVisitor(ABC, Generic[T, C]):
    """A walk over expressions, giving a T for each, with a context C."""

    @abstractmethod
    def visit_number(self, e: n.Number, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_bool_lit(self, e: n.BoolLit, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_name(self, e: n.Name, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_call(self, e: n.Call, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_range(self, e: n.Range, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_comprehension(self, e: n.Comprehension, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_binary(self, e: n.Binary, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_unary(self, e: n.Unary, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_compare(self, e: n.Compare, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_bool_op(self, e: n.BoolOp, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_member(self, e: n.Member, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_tag_test(self, e: n.TagTest, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_conditional(self, e: n.Conditional, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_index(self, e: n.Index, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_tuple_lit(self, e: n.TupleLit, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_list_lit(self, e: n.ListLit, ctx: C, /) -> T: ...

    # The references of the resolved program (the parser's `Name` becomes one of them).
    @abstractmethod
    def visit_param_ref(self, e: n.ParamRef, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_var_ref(self, e: n.VarRef, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_noise_ref(self, e: n.NoiseRef, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_member_ref(self, e: n.MemberRef, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_let_ref(self, e: n.LetRef, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_local_ref(self, e: n.LocalRef, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_out_ref(self, e: n.OutRef, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_aligned_cost_ref(self, e: n.AlignedCostRef, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_tag_lit(self, e: n.TagLit, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_tag_call(self, e: n.TagCall, ctx: C, /) -> T: ...


class IRVisitor(ExprVisitor[T, C]):
    """A walk over the resolved program's expressions, where no `Name` is left (resolution replaced each by
    its reference): a back end implements the references and never looks a name up to find what it is."""

    def visit_name(self, e: n.Name, ctx: C, /) -> T:
        raise InternalError(f"unresolved name `{e.text}` at {e.span}: back ends read the resolved program")


class SyntaxVisitor(ExprVisitor[T, C]):
    """A walk over the parser's tree, where names are still `Name` (resolution): the references of the
    resolved program do not occur in it."""

    def _resolved(self, e: n.Expr, ctx: C, /) -> T:
        raise InternalError(f"a resolved {type(e).__name__} at {e.span} in the parser's tree")

    visit_param_ref = visit_var_ref = visit_noise_ref = visit_member_ref = visit_let_ref = _resolved
    visit_local_ref = visit_out_ref = visit_aligned_cost_ref = visit_tag_lit = visit_tag_call = _resolved


class StmtVisitor(ABC, Generic[T, C]):
    """A walk over statements, with a context C."""

    @abstractmethod
    def visit_assign(self, s: n.Assign, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_sample(self, s: n.Sample, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_if(self, s: n.If, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_for(self, s: n.For, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_while(self, s: n.While, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_break(self, s: n.Break, ctx: C, /) -> T: ...

    @abstractmethod
    def visit_output(self, s: n.Output, ctx: C, /) -> T: ...
