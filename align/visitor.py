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
