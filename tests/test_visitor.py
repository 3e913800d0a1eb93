"""The typed visitors (align/visitor.py): every node has `accept`, every visitor a method per node, and a
back end that leaves one out cannot be built."""

from __future__ import annotations

import re
import typing

import pytest

from align import nodes as n
from align.interp.scalar import Interpreter
from align.interp.vector import Machine
from align.visitor import ExprVisitor, StmtVisitor


@pytest.mark.parametrize("visitor, union", [(ExprVisitor, n.Expr), (StmtVisitor, n.Stmt)])
def test_one_abstract_method_per_node_and_one_accept_per_node(visitor, union):
    classes = typing.get_args(union)
    snake = {"visit_" + re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower() for cls in classes}
    assert set(visitor.__abstractmethods__) == snake
    for cls in classes:
        assert callable(getattr(cls, "accept", None)), cls.__name__


def test_a_back_end_that_leaves_a_node_out_cannot_be_built():
    class Partial(ExprVisitor[int, None]):
        def visit_number(self, e: n.Number, ctx: None, /) -> int:
            return 1

    with pytest.raises(TypeError, match="abstract"):
        Partial()  # type: ignore[abstract]


def test_the_interpreters_are_complete_visitors():
    for back_end in (Interpreter, Machine):
        assert not getattr(back_end, "__abstractmethods__", frozenset()), back_end.__name__
